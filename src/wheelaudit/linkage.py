"""Linkage: will the libraries find each other once installed? (WA501, WA502, WA505)

Dependencies are resolved the way the loaders resolve them, inside the wheel's tree as it will
be installed (every path relative to site-packages, the wheel's root; ``*.data/purelib`` and
``*.data/platlib`` land in the root, the other ``*.data`` schemes outside it):

ELF (glibc's ld.so)
    A NEEDED with a ``/`` is a path, opened relative to the process's current directory:
    unknowable, so unresolved. Otherwise the directories of DT_RUNPATH are searched, or, when
    the binary has no DT_RUNPATH, those of its DT_RPATH and then of the DT_RPATH of each binary
    that loads it (transitively, skipping loaders that have a DT_RUNPATH), as ld.so does.
    ``$ORIGIN`` / ``${ORIGIN}`` is the directory of the binary that carries the entry,
    ``$LIB`` is tried as ``lib`` and ``lib64``, ``$PLATFORM`` as the slice's architecture. A
    shipped binary matches by file name, or by SONAME when its file has another name.
Mach-O (dyld)
    ``@loader_path/`` is the loading binary's directory; ``@rpath/`` is tried against the
    LC_RPATH entries of the loading image and then of the images that load it, transitively
    (an ``@loader_path`` inside an LC_RPATH is the directory of the image that carries it);
    ``@executable_path`` is the python executable's directory, unknowable for an extension,
    so unresolved with that reason; absolute paths must be allowed externals. A weak
    dependency (LC_LOAD_WEAK_DYLIB) that is absent is not an error. LC_ID_DYLIB is not a
    dependency.

A dependency found nowhere inside the wheel may still be an allowed external library: by
default, with no configuration, the system-library allowlist of the wheel's manylinux policy
(lowest tag; ``policies/manylinux.json``) plus the dynamic loader, musllinux's likewise, and
``/usr/lib/*`` and ``/System/Library/*`` for Mach-O; ``[linkage] allow-external`` globs
extend these (each matched against the dependency's full name and its file name). A
dependency whose file name matches ``provided-by`` is satisfied by that distribution, which
the wheel must then require (else WA505).

WA502 checks every rpath entry: empty, absolute (unless ``allow-rpath``), ``forbid-rpath``,
and the build-machine shapes seen in released wheels (:data:`BUILD_MACHINE_SHAPES`).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from . import platforms
from .facts import Binary, Dependency, Slice
from .findings import Finding, examples
from .globs import Glob

__all__ = [
    "check_linkage",
    "resolution_table",
    "resolve_wheel",
    "Resolution",
    "BUILD_MACHINE_SHAPES",
    "MACOS_SYSTEM_GLOBS",
]

RULE = "linkage"

#: rpath shapes that name a build machine's tree (CI runners, build dirs, conda build envs)
BUILD_MACHINE_SHAPES: tuple[str, ...] = (
    "/__w/*",
    "/Users/runner/*",
    "*/_temp/*",
    "*/cmake-out/*",
    "*/cmake-out",
    "*/pip-out/*",
    "*/pip-out",
    "/home/*/*",
    "*conda_environment_*",
)

#: external libraries a Mach-O may always load (the OS's own)
MACOS_SYSTEM_GLOBS: tuple[str, ...] = ("/usr/lib/*", "/System/Library/*")

#: absolute LC_RPATH entries that are the OS's own (e.g. /usr/lib/swift): not WA502
_MACOS_SYSTEM_RPATHS: tuple[str, ...] = ("/usr/lib", "/usr/lib/*", "/System/Library/*")

#: ``$LIB`` expansions tried
_LIB_VALUES = ("lib", "lib64")

#: installed layout: site-packages is lib/pythonX.Y/site-packages below the prefix
_PREFIX_UP = ("..", "..", "..")

_OUTSIDE = "outside the wheel"

#: candidates named in a WA501 message (the rest are counted)
MAX_TRIED = 8


def _glob(p: str | Glob) -> Glob:
    return p if isinstance(p, Glob) else Glob(p, cross_slash=True)


def _basename(name: str) -> str:
    return name.rsplit("/", 1)[-1]


# --------------------------------------------------------------------------------------------
# The rules in force (defaults + [linkage])


@dataclass
class _Rules:
    allow_external: list[Glob] = field(default_factory=list)
    provided_by: dict[str, list[Glob]] = field(default_factory=dict)
    forbid_rpath: list[Glob] = field(default_factory=list)
    allow_rpath: list[Glob] = field(default_factory=list)
    # the ELF allowlist, made when an ELF binary first asks (a macOS wheel's check never does:
    # the newest manylinux policy's globs, 3-4 ms after the last worker)
    _elf: tuple[list[Glob], str] | None = field(default=None, repr=False, compare=False)
    _wheel: object = field(default=None, repr=False, compare=False)
    macho_defaults: list[Glob] = field(default_factory=lambda: [_glob(g) for g in MACOS_SYSTEM_GLOBS])
    shapes: list[Glob] = field(default_factory=lambda: [_glob(g) for g in BUILD_MACHINE_SHAPES])
    # answers already given (torch: 136 binaries, the same few dependencies and rpaths again and again)
    _external: dict[tuple[str, str], bool] = field(default_factory=dict, repr=False, compare=False)
    _rpath: dict[tuple[str, str], str | None] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, wheel, rule) -> _Rules:
        r = cls()
        if rule is not None:
            r.allow_external = [_glob(g) for g in getattr(rule, "allow_external", []) or []]
            r.provided_by = {d: [_glob(g) for g in gs] for d, gs in (getattr(rule, "provided_by", {}) or {}).items()}
            r.forbid_rpath = [_glob(g) for g in getattr(rule, "forbid_rpath", []) or []]
            r.allow_rpath = [_glob(g) for g in getattr(rule, "allow_rpath", []) or []]
        r._wheel = wheel
        return r

    @property
    def elf_defaults(self) -> list[Glob]:
        return self._elf_policy()[0]

    @property
    def elf_defaults_desc(self) -> str:
        return self._elf_policy()[1]

    def _elf_policy(self) -> tuple[list[Glob], str]:
        if self._elf is None:
            self._elf = _elf_defaults(self._wheel)
        return self._elf

    def external(self, b: Binary, name: str) -> bool:
        """Whether ``name`` (a dependency or a candidate path) is an allowed external library."""
        key = (b.format, name)
        known = self._external.get(key)
        if known is None:
            known = self._external[key] = self._is_external(b.format, name)
        return known

    def _is_external(self, fmt: str, name: str) -> bool:
        base = _basename(name)
        if any(g.match(name) or g.match(base) for g in self.allow_external):
            return True
        if fmt == "elf":
            return any(g.match(base) for g in self.elf_defaults)
        if fmt == "macho":
            return any(g.match(name) for g in self.macho_defaults)
        return False

    def provider(self, name: str) -> str | None:
        base = _basename(name)
        for dist, globs in self.provided_by.items():
            if any(g.match(base) for g in globs):
                return dist
        return None

    def externals_desc(self, b: Binary) -> str:
        parts = []
        if b.format == "elf":
            parts.append(self.elf_defaults_desc)
        elif b.format == "macho":
            parts.append("/usr/lib/*, /System/Library/*")
        parts.append("[linkage] allow-external" + (f" ({examples([g.pattern for g in self.allow_external])})"
                                                   if self.allow_external else ": none given"))
        return "; ".join(parts)


def _elf_defaults(wheel) -> tuple[list[Glob], str]:
    """The default allowlist for ELF: the lowest manylinux tag's policy (+ the loader), musllinux's
    and android's likewise (android: also the interpreter's ``libpython3.X.so``, which an Android
    extension module links); the newest manylinux policy's for a wheel without such tags
    (linux_*, any)."""
    # (every tag of the tree, a --together tree's members' too: not wheel_platforms, which holds
    # a tree's binaries to no tag)
    plats = [platforms.parse_platform(p) for p in platforms.platform_strings(wheel.tags)]
    many = [p for p in plats if p.family == "manylinux"]
    musl = [p for p in plats if p.family == "musllinux"]
    droid = [p for p in plats if p.family == "android"]
    names: list[str] = []
    desc: list[str] = []
    if droid:
        lowest = min(droid, key=lambda p: p.version)
        pol = platforms.android_policy(lowest.version[0])
        names += list(pol.libs) + platforms.loader_globs("android") + ["libpython3.*.so"]
        desc.append(f"the {pol.name} policy's system libraries (for {lowest.tag}), the interpreter's"
                    " libpython3.X.so and the Android linker")
    if many:
        lowest = min(many, key=lambda p: p.version)
        pol = platforms.manylinux_policy(lowest.version)
        names += list(pol.libs) + platforms.loader_globs("manylinux")
        desc.append(f"the {pol.name} policy's system libraries (for {lowest.tag}) and the dynamic loader")
    if musl:
        lowest = min(musl, key=lambda p: p.version)
        pol = platforms.musllinux_policy(lowest.version)
        names += list(pol.libs) + platforms.loader_globs("musllinux")
        desc.append(f"the {pol.name} policy's system libraries (for {lowest.tag}) and the musl loader")
    if not many and not musl and not droid:
        pol = platforms.latest_manylinux_policy()
        names += list(pol.libs) + platforms.loader_globs("manylinux")
        desc.append(f"no manylinux tag: the {pol.name} policy's system libraries and the dynamic loader")
    return [_glob(n) for n in dict.fromkeys(names)], "; ".join(desc)


# --------------------------------------------------------------------------------------------
# The installed layout


def _normalize(path: str) -> str | None:
    """Collapse ``.`` and ``..`` of a relative path; leading ``..`` stay (outside the root).
    Returns None for an absolute path."""
    if path.startswith("/"):
        return None
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if out and out[-1] != "..":
                out.pop()
            else:
                out.append("..")
        else:
            out.append(part)
    return "/".join(out)


def _installed(path: str) -> str:
    """Where a wheel member lands, relative to site-packages."""
    top, _, rest = path.partition("/")
    if top.endswith(".data") and rest:
        scheme, _, sub = rest.partition("/")
        if scheme in ("purelib", "platlib"):
            return sub
        if scheme == "scripts":
            return "/".join(_PREFIX_UP + ("bin", sub))
        if scheme == "data":
            return "/".join(_PREFIX_UP + (sub,))
        return "/".join(_PREFIX_UP + ("include", sub))
    return path


def _dirname(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _join(directory: str, rest: str) -> str:
    return f"{directory}/{rest}" if directory else rest


def _show(installed: str) -> str:
    return installed if installed else "."


class _Layout:
    """The wheel's binaries by installed path, by directory and file name / identity, and who loads whom."""

    def __init__(self, wheel) -> None:
        self.binaries = list(wheel.libraries)
        self.at: dict[str, Binary] = {}  # installed path -> binary
        self.where: dict[str, str] = {}  # archive path -> installed path
        self.by_soname: dict[str, dict[str, Binary]] = {}  # installed dir -> SONAME -> binary
        for b in self.binaries:
            inst = _installed(b.path)
            self.at[inst] = b
            self.where[b.path] = inst
            d = _dirname(inst)
            for s in b.slices:
                if b.format == "elf" and s.identity and "/" not in s.identity:
                    self.by_soname.setdefault(d, {}).setdefault(s.identity, b)
        # loaders: binary path -> binaries that depend on it (by file name or identity file name)
        names: dict[tuple[str, str], list[Binary]] = {}
        for b in self.binaries:
            keys = {b.name}
            if b.identity:
                keys.add(_basename(b.identity))
            for k in keys:
                names.setdefault((b.format, k), []).append(b)
        self.loaded_by: dict[str, list[Binary]] = {}
        for b in self.binaries:
            if not b.ok:
                continue
            for dep in b.dependencies:
                for target in names.get((b.format, _basename(dep)), []):
                    if target is not b:
                        lst = self.loaded_by.setdefault(target.path, [])
                        if not any(x is b for x in lst):  # (identity: a dataclass == compares every field)
                            lst.append(b)

    def directory(self, b: Binary) -> str:
        return _dirname(self.where[b.path])

    def lookup(self, installed: str, elf: bool) -> Binary | None:
        """The shipped binary at an installed path (ELF: also by SONAME within its directory)."""
        hit = self.at.get(installed)
        if hit is not None or not elf:
            return hit
        return self.by_soname.get(_dirname(installed), {}).get(_basename(installed))

    def loaders(self, b: Binary, arch: str) -> list[tuple[Binary, Slice]]:
        """Binaries that load ``b`` (transitively, nearest first) with their slice of ``arch``."""
        out: list[tuple[Binary, Slice]] = []
        seen = {b.path}
        queue = deque(self.loaded_by.get(b.path, []))
        while queue:
            lb = queue.popleft()
            if lb.path in seen:
                continue
            seen.add(lb.path)
            sl = _slice_for(lb, arch)
            if sl is None:
                continue
            out.append((lb, sl))
            queue.extend(self.loaded_by.get(lb.path, []))
        return out


def _slice_for(b: Binary, arch: str) -> Slice | None:
    """The slice of ``b`` that would load a library of ``arch`` (none: it cannot load it)."""
    return next((s for s in b.slices if s.arch == arch), None)


# --------------------------------------------------------------------------------------------
# Resolution


@dataclass
class Resolution:
    """Where one dependency of one slice resolves.

    ``status`` is "inside", "external", "provided", "weak-absent" or "unresolved"; ``path`` the
    archive path of the binary it resolves to (inside); ``tried`` the candidates looked at, each
    with the search entry that produced it; ``reason`` why it cannot be known, when it cannot.
    """

    dependency: Dependency
    status: str
    path: str | None = None
    external: str | None = None
    dist: str | None = None
    tried: list[str] = field(default_factory=list)
    reason: str | None = None
    hint: str | None = None

    @property
    def where(self) -> str | None:
        """The value shown by ``inspect``: a path inside the wheel, ``"external: <name>"``,
        ``"provided-by: <dist>"``, ``"weak, absent"`` or None."""
        if self.status == "inside":
            return self.path
        if self.status == "external":
            return f"external: {self.external}"
        if self.status == "provided":
            return f"provided-by: {self.dist}"
        if self.status == "weak-absent":
            return "weak, absent"
        return None


@dataclass
class _Search:
    """One directory to look in, with the entry that produced it."""

    directory: str | None  # installed dir (may start with ..), absolute dir, or None (unknowable)
    absolute: bool
    label: str  # e.g. "DT_RUNPATH $ORIGIN/../lib of x.so"
    note: str | None = None  # why it is unknowable


def _expand_elf(entry: str, kind: str, owner_dir: str, owner: str, own: bool, arch: str) -> list[_Search]:
    label = f"DT_{kind.upper()} {entry or '(empty)'}" + ("" if own else f" of {owner}")
    if entry == "":
        return [_Search(None, False, label, "an empty entry is the current directory, which is unknowable")]
    values = [entry.replace("${ORIGIN}", "$ORIGIN")]
    out_vals: list[tuple[str, str]] = []
    for v in values:
        v = v.replace("${PLATFORM}", "$PLATFORM").replace("${LIB}", "$LIB")
        v = v.replace("$PLATFORM", arch)
        if "$LIB" in v:
            for lib in _LIB_VALUES:
                out_vals.append((v.replace("$LIB", lib), f" ($LIB as {lib})"))
        else:
            out_vals.append((v, ""))
    res = []
    for v, extra in out_vals:
        if "$ORIGIN" in v:
            v = v.replace("$ORIGIN", owner_dir if owner_dir else ".")
            res.append(_Search(_normalize(v), False, label + extra))
        elif v.startswith("/"):
            res.append(_Search(v.rstrip("/") or "/", True, label + extra))
        else:
            res.append(_Search(None, False, label + extra,
                               "a relative entry without $ORIGIN is relative to the current directory, which is unknowable"))
    return res


def _expand_macho(entry: str, owner_dir: str, owner: str, own: bool) -> _Search:
    label = f"LC_RPATH {entry or '(empty)'}" + ("" if own else f" of {owner}")
    if entry.startswith("@loader_path"):
        rest = entry[len("@loader_path"):].lstrip("/")
        return _Search(_normalize(_join(owner_dir, rest)), False, label)
    if entry.startswith("@executable_path"):
        return _Search(None, False, label,
                       "@executable_path is the python executable's directory, unknowable for an extension module")
    if entry.startswith("/"):
        return _Search(entry.rstrip("/") or "/", True, label)
    return _Search(None, False, label,
                   "a relative LC_RPATH is relative to the current directory, which is unknowable")


class _Resolver:
    def __init__(self, wheel, rules: _Rules) -> None:
        self.wheel = wheel
        self.rules = rules
        self.layout = _Layout(wheel)
        self._elf_dirs: dict[tuple[str, str], tuple[list[_Search], str | None]] = {}
        self._macho_dirs: dict[tuple[str, str], list[_Search]] = {}

    # -- search directories ---------------------------------------------------------------

    def elf_dirs(self, b: Binary, s: Slice) -> tuple[list[_Search], str | None]:
        """Directories to search for a NEEDED of ``b``, and a note on an ignored DT_RPATH."""
        key = (b.path, s.arch)
        if key not in self._elf_dirs:
            self._elf_dirs[key] = self._compute_elf_dirs(b, s)
        return self._elf_dirs[key]

    def _compute_elf_dirs(self, b: Binary, s: Slice) -> tuple[list[_Search], str | None]:
        lay = self.layout
        runpath = [r for r in s.rpaths if r.kind == "runpath"]
        rpath = [r for r in s.rpaths if r.kind == "rpath"]
        own_dir = lay.directory(b)
        out: list[_Search] = []
        if runpath:
            for r in runpath:
                out += _expand_elf(r.path, "runpath", own_dir, b.path, True, s.arch)
            return out, ("DT_RPATH " + ":".join(r.path for r in rpath)) if rpath else None
        for r in rpath:
            out += _expand_elf(r.path, "rpath", own_dir, b.path, True, s.arch)
        for lb, ls in lay.loaders(b, s.arch):
            if any(r.kind == "runpath" for r in ls.rpaths):
                continue  # a loader's DT_RPATH is ignored when it has a DT_RUNPATH
            for r in ls.rpaths:
                out += _expand_elf(r.path, "rpath", lay.directory(lb), lb.path, False, s.arch)
        return out, None

    def macho_rpaths(self, b: Binary, s: Slice) -> list[_Search]:
        """LC_RPATH entries for an ``@rpath/`` of ``b``: its own, then its loaders' (nearest first)."""
        key = (b.path, s.arch)
        if key in self._macho_dirs:
            return self._macho_dirs[key]
        lay = self.layout
        out = [_expand_macho(r.path, lay.directory(b), b.path, True) for r in s.rpaths]
        for lb, ls in lay.loaders(b, s.arch):
            out += [_expand_macho(r.path, lay.directory(lb), lb.path, False) for r in ls.rpaths]
        self._macho_dirs[key] = out
        return out

    # -- one dependency ---------------------------------------------------------------------

    def _finish(self, b: Binary, dep: Dependency, tried: list[str], reason: str | None = None,
                hint: str | None = None) -> Resolution:
        """After looking inside the wheel in vain: provided-by, allowed externals, weak."""
        dist = self.rules.provider(dep.name)
        if dist is not None:
            return Resolution(dep, "provided", dist=dist, tried=tried)
        if self.rules.external(b, dep.name):
            return Resolution(dep, "external", external=dep.name, tried=tried)
        if dep.optional:
            return Resolution(dep, "weak-absent", tried=tried, reason=reason)
        return Resolution(dep, "unresolved", tried=tried, reason=reason, hint=hint)

    def _look(self, b: Binary, dep: Dependency, search: _Search, rest: str, elf: bool,
              tried: list[str]) -> Resolution | None:
        """Try ``search.directory/rest``; a Resolution when it is found (inside or external)."""
        if search.directory is None:
            tried.append(f"{search.label}: {search.note}")
            return None
        if search.absolute:
            cand = f"{search.directory.rstrip('/')}/{rest}"
            if self.rules.external(b, cand):
                return Resolution(dep, "external", external=cand)
            tried.append(f"{cand} ({search.label}: an absolute path, not inside the wheel)")
            return None
        cand = _normalize(_join(search.directory, rest))
        assert cand is not None
        hit = self.layout.lookup(cand, elf)
        if hit is not None:
            return Resolution(dep, "inside", path=hit.path)
        if cand.startswith(".."):
            tried.append(f"{cand} ({search.label}: {_OUTSIDE})")
        else:
            tried.append(f"{_show(cand)} ({search.label})")
        return None

    def resolve_elf(self, b: Binary, s: Slice, dep: Dependency) -> Resolution:
        name = dep.name
        if "/" in name:
            if name.startswith("/") and self.rules.external(b, name):
                return Resolution(dep, "external", external=name)
            reason = ("an absolute path, outside the wheel" if name.startswith("/") else
                      "a NEEDED that contains '/' is opened relative to the current directory, which is unknowable")
            return self._finish(b, dep, [], reason)
        tried: list[str] = []
        dirs, ignored = self.elf_dirs(b, s)
        for search in dirs:
            hit = self._look(b, dep, search, name, True, tried)
            if hit is not None:
                hit.tried = tried
                return hit
        hint = None
        if ignored:
            # would the ignored DT_RPATH have found it? Say so: the classic shadowing mistake.
            shadow: list[str] = []
            rp = [r for r in s.rpaths if r.kind == "rpath"]
            for r in rp:
                for search in _expand_elf(r.path, "rpath", self.layout.directory(b), b.path, True, s.arch):
                    found = self._look(b, dep, search, name, True, shadow)
                    if found is not None and found.status == "inside":
                        hint = (f"its {ignored} would find {found.path}, but DT_RPATH is ignored because the binary"
                                " has a DT_RUNPATH")
                        break
                if hint:
                    break
        if not dirs:
            tried.append("no DT_RUNPATH or DT_RPATH (nor a loader's DT_RPATH) to search")
        return self._finish(b, dep, tried, None, hint)

    def resolve_macho(self, b: Binary, s: Slice, dep: Dependency) -> Resolution:
        name = dep.name
        lay = self.layout
        tried: list[str] = []
        if name.startswith("@rpath/"):
            rest = name[len("@rpath/"):]
            searches = self.macho_rpaths(b, s)
            for search in searches:
                hit = self._look(b, dep, search, rest, False, tried)
                if hit is not None:
                    hit.tried = tried
                    return hit
            if not searches:
                tried.append("no LC_RPATH in the binary or in any binary of the wheel that loads it")
            return self._finish(b, dep, tried)
        if name.startswith("@loader_path/"):
            rest = name[len("@loader_path/"):]
            search = _Search(lay.directory(b), False, "@loader_path")
            hit = self._look(b, dep, search, rest, False, tried)
            if hit is not None:
                hit.tried = tried
                return hit
            return self._finish(b, dep, tried)
        if name.startswith("@executable_path/"):
            return self._finish(b, dep, [], "@executable_path is the python executable's directory, unknowable for"
                                            " an extension module loaded by python")
        if name.startswith("/"):
            if self.rules.external(b, name):
                return Resolution(dep, "external", external=name)
            return self._finish(b, dep, [], "an absolute path, outside the wheel, that is not an allowed external library")
        return self._finish(b, dep, [], "a relative install name: dyld looks for it relative to the current directory"
                                        " (and in the fallback paths), which is unknowable")

    def resolve(self, b: Binary, s: Slice, dep: Dependency) -> Resolution:
        if b.format == "elf":
            return self.resolve_elf(b, s, dep)
        if b.format == "macho":
            return self.resolve_macho(b, s, dep)
        # PE imports are not read yet; nothing to resolve
        return self._finish(b, dep, [], "PE imports are not resolved")


def resolve_wheel(wheel, rule=None) -> dict[str, dict[str, list[Resolution]]]:
    """Every dependency of every ok binary, resolved: path -> arch -> [Resolution, ...]."""
    rules = _Rules.build(wheel, rule)
    res = _Resolver(wheel, rules)
    out: dict[str, dict[str, list[Resolution]]] = {}
    for b in wheel.libraries:
        if not b.ok or b.format not in ("elf", "macho"):
            continue
        per_arch: dict[str, list[Resolution]] = {}
        for s in b.slices:
            per_arch[s.arch] = [res.resolve(b, s, d) for d in s.dependencies]
        out[b.path] = per_arch
    return out


def resolution_table(wheel, rule=None) -> dict[str, dict[str, dict[str, str | None]]]:
    """binary path -> arch -> dependency name -> where it resolves: a path inside the wheel,
    ``"external: <name>"``, ``"provided-by: <dist>"``, ``"weak, absent"`` or None (unresolved).

    With ``rule`` (a ``[linkage]`` table) its ``allow-external`` and ``provided-by`` count too;
    without it, the defaults that need no configuration."""
    return {
        path: {arch: {r.dependency.name: r.where for r in rs} for arch, rs in per_arch.items()}
        for path, per_arch in resolve_wheel(wheel, rule).items()
    }


# --------------------------------------------------------------------------------------------
# Findings


def _wa501(wheel, rules: _Rules, resolved: dict[str, dict[str, list[Resolution]]]) -> list[Finding]:
    out: list[Finding] = []
    by_path = {b.path: b for b in wheel.libraries}
    for path, per_arch in resolved.items():
        b = by_path[path]
        failing: dict[str, tuple[Resolution, list[str]]] = {}
        for arch, rs in per_arch.items():
            for r in rs:
                if r.status != "unresolved":
                    continue
                if r.dependency.name in failing:
                    failing[r.dependency.name][1].append(arch)
                else:
                    failing[r.dependency.name] = (r, [arch])
        for name, (r, archs) in failing.items():
            where = f" ({'/'.join(archs)} slice{'s' if len(archs) > 1 else ''})" if b.universal else ""
            msg = f"{path}{where} needs {name}, which resolves neither inside the wheel nor to an allowed external library"
            if r.reason:
                msg += f": {r.reason}"
            if r.tried:
                shown = r.tried[:MAX_TRIED]
                more = len(r.tried) - len(shown)
                msg += "; tried " + "; ".join(shown) + (f" (+{more} more)" if more > 0 else "")
            if r.hint:
                msg += f"; {r.hint}"
            msg += f". Allowed externals: {rules.externals_desc(b)}"
            out.append(Finding("WA501", msg, subject=path, paths=[path], rule=RULE))
    return out


_EXTRA_RE = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


def _required_dists(wheel) -> tuple[set[str], dict[str, list[str]]]:
    """Canonical names the wheel requires unconditionally (markers other than ``extra`` count),
    and those required only with an extra (name -> extras)."""
    plain: set[str] = set()
    extra_only: dict[str, list[str]] = {}
    for text in getattr(wheel, "requires_dist", []) or []:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        marker = str(req.marker) if req.marker is not None else ""
        extras = _EXTRA_RE.findall(marker)
        if extras:
            extra_only.setdefault(name, []).extend(extras)
        else:
            plain.add(name)
    return plain, extra_only


def _wa505(wheel, resolved: dict[str, dict[str, list[Resolution]]]) -> list[Finding]:
    plain, extra_only = _required_dists(wheel)
    out: list[Finding] = []
    for path, per_arch in resolved.items():
        need: dict[str, list[str]] = {}
        for rs in per_arch.values():
            for r in rs:
                if r.status == "provided" and r.dist is not None:
                    lst = need.setdefault(r.dist, [])
                    if r.dependency.name not in lst:
                        lst.append(r.dependency.name)
        for dist, deps in need.items():
            cname = canonicalize_name(dist)
            if cname in plain:
                continue
            extra = extra_only.get(cname)
            why = (f"the wheel requires {dist} only with extra {', '.join(sorted(set(extra)))}" if extra
                   else f"the wheel's METADATA has no Requires-Dist: {dist}")
            out.append(Finding(
                "WA505",
                f"{path} needs {examples(deps, 4)}, provided by the distribution {dist} (provided-by), but {why};"
                f" add Requires-Dist: {dist}",
                subject=path, paths=[path], rule=RULE))
    return out


def _is_relative_ok(entry: str, fmt: str) -> bool:
    if fmt == "elf":
        return entry.startswith(("$ORIGIN", "${ORIGIN}"))
    return entry.startswith(("@loader_path", "@executable_path", "@rpath"))


def _rpath_problem(entry: str, fmt: str, rules: _Rules) -> str | None:
    """Why an rpath entry is WA502 (the first reason), or None."""
    key = (entry, fmt)
    if key not in rules._rpath:  # noqa: SLF001 - the rules' own memo
        rules._rpath[key] = _rpath_reason(entry, fmt, rules)  # noqa: SLF001
    return rules._rpath[key]  # noqa: SLF001


def _rpath_reason(entry: str, fmt: str, rules: _Rules) -> str | None:
    shape = next((g.pattern for g in rules.shapes if g.match(entry)), None)
    if entry == "":
        return "an empty entry, which the loader takes as the current directory"
    allowed = any(g.match(entry) for g in rules.allow_rpath)
    forbid = next((g.pattern for g in rules.forbid_rpath if g.match(entry)), None)
    if entry.startswith("/") and not allowed:
        if fmt == "macho" and any(_glob(g).match(entry) for g in _MACOS_SYSTEM_RPATHS):
            pass  # /usr/lib/swift and the like: the OS's own directories
        else:
            extra = f", and it looks like a build machine's path ({shape})" if shape else ""
            extra += f" (also matches forbid-rpath {forbid})" if forbid else ""
            return f"absolute: it names a directory of the machine, not of the wheel{extra}"
    if forbid:
        return f"matches forbid-rpath {forbid}"
    if allowed:
        return None
    if shape:
        return f"looks like a build machine's path ({shape})"
    if not entry.startswith("/") and not _is_relative_ok(entry, fmt):
        anchor = "$ORIGIN" if fmt == "elf" else "@loader_path"
        return f"relative without {anchor}: it is taken relative to the current directory"
    return None


def _wa502(wheel, rules: _Rules) -> list[Finding]:
    out: list[Finding] = []
    for b in wheel.libraries:
        if not b.ok or b.format not in ("elf", "macho"):
            continue
        seen: dict[tuple[str, str], list[str]] = {}
        for s in b.slices:
            for r in s.rpaths:
                seen.setdefault((r.path, r.kind), []).append(s.arch)
        for (entry, kind), archs in seen.items():
            why = _rpath_problem(entry, b.format, rules)
            if why is None:
                continue
            label = {"rpath": "DT_RPATH", "runpath": "DT_RUNPATH", "lc_rpath": "LC_RPATH"}[kind]
            shown = f"'{entry}'" if entry else "''"
            out.append(Finding("WA502", f"{b.path} has {label} entry {shown}: {why}",
                               subject=b.path, paths=[b.path], symbols=[], rule=RULE))
    return out


def check_linkage(wheel, rule=None) -> list[Finding]:
    """WA501, WA502, WA505 and (from :func:`wheelaudit.platforms.check_platform`) WA503, WA504.

    ``rule`` is the ruleset's ``[linkage]`` table (:class:`wheelaudit.ruleset.LinkageRule`) or
    None for the defaults, which need no configuration. ``check = false`` turns all of it off.
    """
    if rule is not None and not getattr(rule, "check", True):
        return []
    rules = _Rules.build(wheel, rule)
    resolver = _Resolver(wheel, rules)
    resolved: dict[str, dict[str, list[Resolution]]] = {}
    for b in wheel.libraries:
        if not b.ok or b.format not in ("elf", "macho"):
            continue
        resolved[b.path] = {s.arch: [resolver.resolve(b, s, d) for d in s.dependencies] for s in b.slices}
    return _wa501(wheel, rules, resolved) + _wa502(wheel, rules) + _wa505(wheel, resolved) + platforms.check_platform(wheel)
