"""Resolution: where each dependency of each binary resolves once the wheel is installed, the way
each platform's loader looks for it. A resolver judges nothing and raises no finding: the
``[linkage]`` checks (:mod:`wheelaudit.checks.linkage`, :mod:`wheelaudit.checks.rpaths`,
:mod:`wheelaudit.checks.symbols`, :mod:`wheelaudit.checks.platform`) read its answers, shared as
:class:`wheelaudit.checks.links.Links`; ``inspect`` shows them (:func:`resolution_table`).

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
(lowest tag; ``platforms/data/manylinux.json``) plus the dynamic loader, musllinux's likewise, and
``/usr/lib/*`` and ``/System/Library/*`` for Mach-O; ``[linkage] allow-external`` globs
extend these (each matched against the dependency's full name and its file name). A
dependency whose file name matches ``provided-by`` is satisfied by that distribution, which
the wheel must then require (else WA505, :mod:`wheelaudit.checks.linkage`). A Windows DLL is
looked for as CPython 3.8+ loads an extension module's imports: a DLL of that name already loaded,
the importing file's folder, the folders the package adds at import time, then the system's DLLs.
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from packaging.utils import canonicalize_name

from wheelaudit.platforms import tags as platforms

from wheelaudit.platforms import policydata, providers
from wheelaudit.platforms.requirements import marker_extras
from wheelaudit.model.binary import Binary, Dependency, Slice
from wheelaudit.load import LoadModel, load_model
from wheelaudit.model.messages import examples
from wheelaudit.model.globs import Glob
from wheelaudit.model.wheel import Wheel

if TYPE_CHECKING:
    from wheelaudit.ruleset.model import LinkageRule

__all__ = [
    "MACOS_SYSTEM_GLOBS",
    "Consulted",
    "Resolution",
    "Rules",
    "SearchList",
    "cross_wheel_links",
    "installed_path",
    "required_dists",
    "resolution_table",
    "resolve_wheel",
]

#: external libraries a Mach-O may always load (the OS's own)
MACOS_SYSTEM_GLOBS: tuple[str, ...] = ("/usr/lib/*", "/System/Library/*")

#: ``$LIB`` expansions tried
_LIB_VALUES = ("lib", "lib64")

#: installed layout: site-packages is lib/pythonX.Y/site-packages below the prefix
_PREFIX_UP = ("..", "..", "..")

_OUTSIDE = "outside the wheel"

#: the interpreters that run on a Windows older than a DLL needs (by the wheel's oldest Windows)
_OLDER_WINDOWS = {"7": "Python 3.8 and older, which runs on Windows 7",
                  "8.1": "CPython 3.9 to 3.12, which runs on Windows 8.1"}

_PE_ORIGINS = {
    "python": "shipped with CPython beside python.exe",
    "api-set": "a Windows API set",
    "ucrt": "the Universal CRT, part of Windows 10+ and installed with CPython",
    "system": "a system DLL of every Windows",
}


def _glob(p: str | Glob) -> Glob:
    return p if isinstance(p, Glob) else Glob(p, cross_slash=True)


def _basename(name: str) -> str:
    return name.rsplit("/", 1)[-1]


# --------------------------------------------------------------------------------------------
# The rules in force (defaults + [linkage])


@dataclass
class Rules:
    """The rules in force for one wheel: the ``[linkage]`` table's globs (none without a table)
    and the defaults no configuration needs (the platforms' system libraries, the provider
    table), with the answers already given."""

    allow_external: list[Glob] = field(default_factory=list)
    provided_by: dict[str, list[Glob]] = field(default_factory=dict)
    forbid_rpath: list[Glob] = field(default_factory=list)
    allow_rpath: list[Glob] = field(default_factory=list)
    optional: list[Glob] = field(default_factory=list)
    # the ELF allowlist, made when an ELF binary first asks (a macOS wheel's check never does,
    # so it never builds the newest manylinux policy's globs)
    _elf: tuple[list[Glob], str] | None = field(default=None, repr=False, compare=False)
    _wheel: Any = field(default=None, repr=False, compare=False)
    macho_defaults: list[Glob] = field(default_factory=lambda: [_glob(g) for g in MACOS_SYSTEM_GLOBS])
    # answers already given (a big wheel asks about the same few dependencies again and again)
    _external: dict[tuple[str, str], bool] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, wheel: Wheel, rule: LinkageRule | None) -> Rules:
        r = cls()
        if rule is not None:
            r.allow_external = [_glob(g) for g in getattr(rule, "allow_external", []) or []]
            r.provided_by = {d: [_glob(g) for g in gs] for d, gs in (getattr(rule, "provided_by", {}) or {}).items()}
            r.forbid_rpath = [_glob(g) for g in getattr(rule, "forbid_rpath", []) or []]
            r.allow_rpath = [_glob(g) for g in getattr(rule, "allow_rpath", []) or []]
            r.optional = [_glob(g) for g in getattr(rule, "optional", []) or []]
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
        if fmt == "pe":  # (Windows names compare case-insensitively)
            low = base.lower()
            return any(g.match(low) or g.match(base) for g in self.allow_external)
        return False

    def table_provider(self, name: str) -> Resolution | None:
        """What the provider table (:func:`wheelaudit.platforms.providers.required_provider`) says of a
        dependency found nowhere else: a GPU driver library (external), provided by a
        distribution the wheel requires, or by one it does not require (``required=False``:
        WA505); None when no distribution known ships it."""
        wheel = self._wheel
        plats = platforms.platform_strings(getattr(wheel, "tags", []) or [])
        if not plats or name.startswith("/"):  # (an absolute install name loads that path, no other copy)
            return None
        dep = Dependency(name)
        if any(providers.driver_library(name, p) for p in plats):
            return Resolution(dep, "external", external=f"{name} (a GPU driver library, installed outside Python)")
        python = _python_version(wheel)
        got = providers.required_provider(name, getattr(wheel, "requirements", []), wheel.tags, python,
                                           transitive=True)
        if got:
            p = got[0]
            via = f" through {p.requirement}" if p.transitive or p.entry.extras_path else ""
            note = f"{p.entry.shipped_by or p.entry.distribution}{via}"
            if name.startswith("@rpath/"):  # (the mechanism, so that a reader can judge it)
                note += ("; dyld reuses the image the provider loaded with this install name when the "
                         "provider is imported first")
            return Resolution(dep, "provided", dist=p.entry.distribution, required=True,
                              external=f"provided by {note} (Requires-Dist: {p.requirement})")
        own = canonicalize_name(getattr(wheel, "name", "") or "")
        if _basename(name).lower() in self._shipped_names:
            return None  # the wheel ships a library of that name itself (elsewhere): never another's copy
        # (the wheel's own distribution ships it, elsewhere than this lookup reaches: unresolved)
        # (nor a distribution that ships what the wheel ships itself: a second build of the same
        # libraries, as PyQt6-Qt6's Qt is to PySide6's, is no requirement to add)
        entries = [e for plat in plats for e in providers.providers_of(name, plat) if e.distribution != own
                   and not providers.ships_any(e.shipped_by or e.distribution, self._shipped_names, plat)]
        if entries:
            extra_only = self._extra_only
            # (a distribution the wheel requires with one of its extras first: the project chose that)
            e = next((e for e in entries if e.distribution in extra_only), entries[0])
            extras = sorted(set(extra_only.get(e.distribution, ())))
            if extras:
                return Resolution(dep, "provided", dist=e.distribution, required=False, extras=extras,
                                  external=f"provided by {e.distribution} ({e.distribution}{e.versions}), which the "
                                           f"wheel requires only with its extra{'s' if len(extras) > 1 else ''} "
                                           f"{', '.join(extras)}")
            return Resolution(dep, "provided", dist=e.distribution, required=False,
                              external=f"provided by {e.distribution} ({e.distribution}{e.versions}), "
                                       "which the wheel does not require")
        return None

    @property
    def _extra_only(self) -> dict[str, list[str]]:
        """The distributions the wheel requires only with one of its extras (read once per check)."""
        if not hasattr(self, "_extras_of"):
            self._extras_of = required_dists(self._wheel)[1]
        return self._extras_of

    @property
    def _shipped_names(self) -> frozenset[str]:
        """The file names (lowercase) of the wheel's readable binaries."""
        if not hasattr(self, "_shipped"):
            self._shipped = frozenset(b.name.lower() for b in getattr(self._wheel, "libraries", ()) if b.ok)
        return self._shipped

    def declared_optional(self, name: str) -> bool:
        """Whether ``[linkage] optional`` names the dependency ``name`` (or its file name)."""
        return any(g.match(name) or g.match(_basename(name)) for g in self.optional)

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
        else:
            parts.append("the system DLLs of every Windows, the API sets, the Universal CRT and the DLLs "
                         "CPython ships beside python.exe")
        parts.append("[linkage] allow-external" + (f" ({examples([g.pattern for g in self.allow_external])})"
                                                   if self.allow_external else ": none given"))
        return "; ".join(parts)


def _elf_defaults(wheel: Wheel) -> tuple[list[Glob], str]:
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


def installed_path(path: str) -> str:
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

    def __init__(self, wheel: Wheel) -> None:
        self.binaries = list(wheel.libraries)
        self.at: dict[str, Binary] = {}  # installed path -> binary
        self.where: dict[str, str] = {}  # archive path -> installed path
        self.at_nocase: dict[str, Binary] = {}  # lower-cased installed path -> binary (Windows names)
        for b in self.binaries:
            inst = installed_path(b.path)
            self.at[inst] = b
            self.where[b.path] = inst
            self.at_nocase.setdefault(inst.lower(), b)
        # loaders: binary path -> binaries that depend on it (by file name or identity file name)
        names: dict[tuple[str, str], list[Binary]] = {}
        for b in self.binaries:
            keys = {b.name.lower() if b.format == "pe" else b.name}
            if b.identity and b.format == "macho":  # (ELF and PE: loaded by file name only)
                keys.add(_basename(b.identity))
            for k in keys:
                names.setdefault((b.format, k), []).append(b)
        self.loaded_by: dict[str, list[Binary]] = {}
        for b in self.binaries:
            if not b.ok:
                continue
            for dep in b.dependencies:
                key = _basename(dep).lower() if b.format == "pe" else _basename(dep)
                for target in names.get((b.format, key), []):
                    if target is not b:
                        lst = self.loaded_by.setdefault(target.path, [])
                        if not any(x is b for x in lst):  # (identity: a dataclass == compares every field)
                            lst.append(b)

    def directory(self, b: Binary) -> str:
        return _dirname(self.where[b.path])

    def has_name(self, name: str) -> bool:
        """Whether a binary of the wheel has the file name ``name``."""
        if not hasattr(self, "_names"):
            self._names = frozenset(inst.rsplit("/", 1)[-1] for inst in self.at)
        return name in self._names

    def files_in(self, directory: str) -> dict[str, Binary]:
        """The binaries installed directly in ``directory``, by file name."""
        if not hasattr(self, "_dirs"):
            self._dirs: dict[str, dict[str, Binary]] = {}
            for inst, b in self.at.items():
                self._dirs.setdefault(_dirname(inst), {})[inst.rsplit("/", 1)[-1]] = b
        return self._dirs.get(directory, {})

    def lookup(self, installed: str, elf: bool) -> Binary | None:
        """The shipped binary at an installed path. By file name only, as the loaders open
        files: a library renamed with its SONAME kept is not found under the SONAME."""
        return self.at.get(installed)

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
    tried: Sequence[str] = field(default_factory=list)
    reason: str | None = None
    hint: str | None = None
    #: the rpath entries this lookup consulted, in order: (binary, kind, entry)
    consulted: Iterable[tuple[str, str, str]] = field(default_factory=list)
    #: an absolute (build-machine) directory the loader tries before the system's copy
    build_path: str | None = None
    #: a system DLL in-box only from this Windows on, newer than the oldest the wheel runs on
    since_windows: str | None = None
    #: the wheel's extras that require the provider (``required=False``: not without one)
    extras: list[str] = field(default_factory=list)
    #: a provider from the provider table: whether the wheel requires it (None: the rules'
    #: provided-by, whose requirement WA505 checks itself)
    required: bool | None = None
    #: found already loaded (the load model): how it came to be loaded and why the loader
    #: reuses it ("imported as triton._C.libtriton by triton/__init__.py:8, which the loader
    #: reuses by SONAME")
    route: str | None = None

    @property
    def where(self) -> str | None:
        """The value shown by ``inspect``: a path inside the wheel, ``"external: <name>"``,
        ``"provided-by: <dist>"``, ``"weak, absent"`` or None."""
        if self.status == "inside":
            return f"{self.path} (already loaded: {self.route})" if self.route else self.path
        if self.status == "external":
            if self.build_path:
                return f"external: {self.external} (outside the wheel; the build path {self.build_path} is tried first)"
            return f"external: {self.external}"
        if self.status == "provided":
            return self.external or f"provided-by: {self.dist}"
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
    #: the rpath entry it comes from: (archive path of the binary that carries it, kind, entry)
    origin: tuple[str, str, str] | None = None


class SearchList:
    """One binary's search directories in order (its own entries, then those it inherits), shared
    by every lookup of the binary; the entries themselves are shared with every list that
    inherits them."""

    __slots__ = ("searches", "own", "_first", "_system")

    def __init__(self, searches: list[_Search], own: int | None = None) -> None:
        self.searches = searches
        self.own = len(searches) if own is None else own  # (the binary's own entries come first)
        self._first: dict[tuple[str, bool], dict[str, tuple[int, Binary]]] = {}  # subfolder -> name -> first hit
        self._system: list[int] | None = None

    def first_inside(self, layout: _Layout, rest: str) -> tuple[int, Binary] | None:
        """The first search that finds ``rest`` (a file name, or a path below the searched
        folder) inside the wheel: (its index, the binary). A name no binary of the wheel has is
        found nowhere, without a look; the binary's own entries are looked at before the
        inherited ones are indexed."""
        sub, _, name = rest.rpartition("/")
        if not layout.has_name(name):
            return None
        return self._index(layout, sub, True).get(name) or self._index(layout, sub, False).get(name)

    def _index(self, layout: _Layout, sub: str, own: bool) -> dict[str, tuple[int, Binary]]:
        index = self._first.get((sub, own))
        if index is None:
            index = self._first[(sub, own)] = {}
            seen: set[str] = set()
            for i, sr in enumerate(self.searches[:self.own] if own else self.searches):
                if sr.directory is None or sr.absolute:
                    continue
                d = _normalize(_join(sr.directory, sub)) if sub else sr.directory
                if d is None or d in seen:
                    continue
                seen.add(d)
                for fname, b in layout.files_in(d).items():
                    index.setdefault(fname, (i, b))
        return index

    def first_external(self, rules: Rules, b: Binary, rest: str, limit: int) -> tuple[int, str] | None:
        """Mach-O: the first absolute search before ``limit`` at which ``rest`` is an allowed
        external path ((index, path)); the OS's own folders are found once per list, the
        project's ``allow-external`` globs (configuration, not input) per lookup."""
        if self._system is None:
            self._system = [i for i, sr in enumerate(self.searches) if sr.absolute and sr.directory is not None
                            and rules.external(b, f"{sr.directory.rstrip('/')}/-")]
        first = next((i for i in self._system if i < limit), None)
        if rules.allow_external:
            for i, sr in enumerate(self.searches[:limit if first is None else first]):
                if sr.absolute and sr.directory is not None and rules.external(b, f"{sr.directory.rstrip('/')}/{rest}"):
                    first = i
                    break
        if first is None:
            return None
        return first, f"{self.searches[first].directory.rstrip('/')}/{rest}"  # type: ignore[union-attr]


class _Tried(Sequence[str]):
    """What a lookup tried: the first ``n`` searches of a list, each rendered when read (a
    lookup through a hundred thousand entries keeps no hundred thousand strings)."""

    __slots__ = ("_list", "_n", "_rest")

    def __init__(self, sl: SearchList, n: int, rest: str) -> None:
        self._list, self._n, self._rest = sl, n, rest

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        sr = self._list.searches[i]
        if sr.directory is None:
            return f"{sr.label}: {sr.note}"
        if sr.absolute:
            return f"{sr.directory.rstrip('/')}/{self._rest} ({sr.label}: an absolute path, not inside the wheel)"
        cand = _normalize(_join(sr.directory, self._rest)) or ""
        return f"{cand} ({sr.label}: {_OUTSIDE})" if cand.startswith("..") else f"{_show(cand)} ({sr.label})"

    def __eq__(self, other: object) -> bool:
        return list(self) == (list(other) if isinstance(other, (list, tuple, _Tried)) else other)


class Consulted:
    """The rpath entries a lookup consulted: the first ``n`` searches of a shared list."""

    __slots__ = ("list", "n")

    def __init__(self, sl: SearchList, n: int) -> None:
        self.list, self.n = sl, n

    def __iter__(self):
        return (sr.origin for sr in self.list.searches[:self.n] if sr.origin is not None)


def _expand_elf(entry: str, kind: str, owner_dir: str, owner: str, own: bool, arch: str) -> list[_Search]:
    searches = _expand_elf_entry(entry, kind, owner_dir, owner, own, arch)
    for sr in searches:
        sr.origin = (owner, kind, entry)
    return searches


def _expand_elf_entry(entry: str, kind: str, owner_dir: str, owner: str, own: bool, arch: str) -> list[_Search]:
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
    search = _expand_macho_entry(entry, owner_dir, owner, own)
    search.origin = (owner, "lc_rpath", entry)
    return search


def _expand_macho_entry(entry: str, owner_dir: str, owner: str, own: bool) -> _Search:
    label = f"LC_RPATH {entry or '(empty)'}" + ("" if own else f" of {owner}")
    if entry.startswith("@loader_path"):
        rest = entry[len("@loader_path"):].lstrip("/")
        return _Search(_normalize(_join(owner_dir, rest)), False, label)
    if entry.startswith("@executable_path"):
        return _Search(None, False, label,
                       "@executable_path is the python executable's directory, unknowable for an extension module")
    if entry.startswith("/"):
        return _Search(entry.rstrip("/") or "/", True, label)
    if entry.startswith(("$ORIGIN", "${ORIGIN}")):
        return _Search(None, False, label, "dyld does not expand $ORIGIN (its spelling is @loader_path): a relative "
                                           "LC_RPATH, relative to the current directory, which is unknowable")
    return _Search(None, False, label,
                   "a relative LC_RPATH is relative to the current directory, which is unknowable")


class _Resolver:
    def __init__(self, wheel: Wheel, rules: Rules) -> None:
        self.wheel = wheel
        self.rules = rules
        self.layout = _Layout(wheel)
        self.load: LoadModel = load_model(wheel)
        self._elf_dirs: dict[tuple[str, str], tuple[SearchList, str | None]] = {}
        self._macho_dirs: dict[tuple[str, str], SearchList] = {}
        self._expansions: dict[tuple[str, str, str, bool], list[_Search]] = {}
        self._shadow: dict[tuple[str, str], SearchList] = {}
        self._inh: dict[tuple[str, str, str], list[_Search]] = {}

    # -- search directories ---------------------------------------------------------------

    def elf_dirs(self, b: Binary, s: Slice) -> tuple[SearchList, str | None]:
        """Directories to search for a NEEDED of ``b``, and a note on an ignored DT_RPATH."""
        key = (b.path, s.arch)
        if key not in self._elf_dirs:
            self._elf_dirs[key] = self._compute_elf_dirs(b, s)
        return self._elf_dirs[key]

    def _expanded(self, b: Binary, s: Slice, kind: str, own: bool) -> list[_Search]:
        """The searches of ``b``'s entries of ``kind`` (its own, or as a loader's), expanded once
        and shared by every list that inherits them."""
        key = (b.path, s.arch, kind, own)
        got = self._expansions.get(key)
        if got is None:
            d = self.layout.directory(b)
            if kind == "lc_rpath":
                got = [_expand_macho(r.path, d, b.path, own) for r in s.rpaths]
            else:
                got = [x for r in s.rpaths if r.kind == kind for x in _expand_elf(r.path, kind, d, b.path, own, s.arch)]
            self._expansions[key] = got
        return got

    def _compute_elf_dirs(self, b: Binary, s: Slice) -> tuple[SearchList, str | None]:
        runpath = [r for r in s.rpaths if r.kind == "runpath"]
        rpath = [r for r in s.rpaths if r.kind == "rpath"]
        if runpath:
            return (SearchList(self._expanded(b, s, "runpath", True)),
                    ("DT_RPATH " + ":".join(r.path for r in rpath)) if rpath else None)
        own = self._expanded(b, s, "rpath", True)
        return SearchList(own + self._inherited(b, s.arch, "rpath"), len(own)), None

    def _inherited(self, b: Binary, arch: str, kind: str) -> list[_Search]:
        """The entries ``b`` inherits from the binaries that load it, transitively (direct loaders
        first, then theirs; each entry once): computed once per binary from its loaders' own
        lists, which it shares. ELF: a loader's DT_RPATH is ignored when it has a DT_RUNPATH."""
        key = (b.path, arch, kind)
        got = self._inh.get(key)
        if got is not None:
            return got
        busy: set[str] = set()
        stack: list[tuple[Binary, bool]] = [(b, False)]
        while stack:  # (iterative: a chain of thousands of loaders is no recursion)
            x, done = stack.pop()
            k = (x.path, arch, kind)
            if done:
                parts: list[list[_Search]] = []
                for lb in self.layout.loaded_by.get(x.path, []):
                    ls = _slice_for(lb, arch)
                    if ls is None:
                        continue
                    if not (kind == "rpath" and any(r.kind == "runpath" for r in ls.rpaths)):
                        parts.append(self._expanded(lb, ls, kind, False))
                    parts.append(self._inh.get((lb.path, arch, kind), []))  # (a cycle: what is known)
                if len(parts) <= 2:  # one loader: its entries and its own inheritance are distinct
                    self._inh[k] = [e for part in parts for e in part] if len(parts) == 2 else (parts[0] if parts else [])
                else:
                    self._inh[k] = list({id(e): e for part in parts for e in part}.values())
                continue
            if k in self._inh or x.path in busy:
                continue
            busy.add(x.path)
            stack.append((x, True))
            for lb in self.layout.loaded_by.get(x.path, []):
                if (lb.path, arch, kind) not in self._inh and lb.path not in busy and _slice_for(lb, arch) is not None:
                    stack.append((lb, False))
        return self._inh[key]

    def macho_rpaths(self, b: Binary, s: Slice) -> SearchList:
        """LC_RPATH entries for an ``@rpath/`` of ``b``: its own, then its loaders' (nearest first)."""
        key = (b.path, s.arch)
        got = self._macho_dirs.get(key)
        if got is None:
            own = self._expanded(b, s, "lc_rpath", True)
            got = self._macho_dirs[key] = SearchList(own + self._inherited(b, s.arch, "lc_rpath"), len(own))
        return got

    def _search(self, b: Binary, dep: Dependency, sl: SearchList, rest: str, elf: bool) -> Resolution | None:
        """The lookup of ``rest`` through ``sl``: found inside the wheel (or, Mach-O, at an allowed
        external path), with what it tried and consulted; None when nothing is found (the
        caller finishes, :meth:`_finish`). Linear in the input: the list is indexed once per
        distinct subfolder asked for, each lookup then costs a dictionary access; what a lookup
        tried and consulted are views of the shared list, rendered only when shown."""
        hit = sl.first_inside(self.layout, rest)
        limit = hit[0] if hit is not None else len(sl.searches)
        if not elf:
            ext = sl.first_external(self.rules, b, rest, limit)
            if ext is not None:
                i, cand = ext
                r = Resolution(dep, "external", external=cand)
                r.tried, r.consulted = _Tried(sl, i, rest), Consulted(sl, i + 1)
                return r
        if hit is None:
            return None
        i, target = hit
        r = Resolution(dep, "inside", path=target.path)
        r.tried, r.consulted = _Tried(sl, i, rest), Consulted(sl, i + 1)
        return r

    # -- one dependency ---------------------------------------------------------------------

    def _finish(self, b: Binary, dep: Dependency, tried: Sequence[str], reason: str | None = None,
                hint: str | None = None) -> Resolution:
        """After looking inside the wheel in vain: an image already loaded in every context
        ``b`` is loaded in (the load model), a folder the package's launcher puts in the loader's
        search path before it runs a tool, provided-by, allowed externals, weak."""
        reuse = self.load.reused(b, dep.name) if not dep.name.startswith("/") else None
        if reuse is not None:
            image, how = reuse
            return Resolution(dep, "inside", path=image.path, tried=tried, route=f"{image.route}, {how}")
        launched = self.load.launcher_folder(b, dep.name)
        if launched is not None:
            return Resolution(dep, "inside", path=launched[0], tried=tried, route=launched[1])
        dist = self.rules.provider(dep.name)
        if dist is not None:  # the rules' provided-by decides first (project-specific providers)
            return Resolution(dep, "provided", dist=dist, tried=tried)
        if self.rules.external(b, dep.name):
            return Resolution(dep, "external", external=dep.name, tried=tried)
        found = getattr(self.rules._wheel, "found_providers", None) or {}
        known = self.rules.table_provider(dep.name)
        if known is not None and not (known.status == "provided" and known.dist
                                      and canonicalize_name(known.dist) in found):
            known.tried = tried
            known.dependency = dep
            return known
        if found:  # check --find-links: the providers' real wheels decide, and they do not ship it
            shown = _basename(dep.name)
            lacking = "; ".join(f"{desc} does not ship {shown}" for desc in found.values())
            hint = f"{hint}; {lacking}" if hint else lacking
        if dep.optional:
            return Resolution(dep, "weak-absent", tried=tried, reason=reason)
        return Resolution(dep, "unresolved", tried=tried, reason=reason, hint=hint)

    def _look(self, b: Binary, dep: Dependency, search: _Search, rest: str, elf: bool,
              tried: list[str], consulted: list[tuple[str, str, str]] | None = None) -> Resolution | None:
        """Try ``search.directory/rest``; a Resolution when it is found (inside or external).

        An absolute directory is a directory of the build machine, not of the wheel: on a user's
        machine it normally does not exist, so an ELF lookup goes on past it (a Mach-O one stops
        only at the OS's own directories, which exist everywhere)."""
        if consulted is not None and search.origin is not None:
            consulted.append(search.origin)
        if search.directory is None:
            tried.append(f"{search.label}: {search.note}")
            return None
        if search.absolute:
            cand = f"{search.directory.rstrip('/')}/{rest}"
            if not elf and self.rules.external(b, cand):
                return Resolution(dep, "external", external=cand)
            tried.append(f"{cand} ({search.label}: an absolute path, not inside the wheel)")
            return None
        inside = _normalize(_join(search.directory, rest))
        assert inside is not None
        hit = self.layout.lookup(inside, elf)
        if hit is not None:
            return Resolution(dep, "inside", path=hit.path)
        if inside.startswith(".."):
            tried.append(f"{inside} ({search.label}: {_OUTSIDE})")
        else:
            tried.append(f"{_show(inside)} ({search.label})")
        return None

    def resolve_elf(self, b: Binary, s: Slice, dep: Dependency) -> Resolution:
        name = dep.name
        if "/" in name:
            if name.startswith("/") and self.rules.external(b, name):
                return Resolution(dep, "external", external=name)
            reason = ("an absolute path, outside the wheel" if name.startswith("/") else
                      "a NEEDED that contains '/' is opened relative to the current directory, which is unknowable")
            return self._finish(b, dep, [], reason)
        sl, ignored = self.elf_dirs(b, s)
        dirs = sl.searches
        hit = self._search(b, dep, sl, name, True)
        if hit is not None:
            return hit
        tried: list[str] | _Tried = _Tried(sl, len(dirs), name)
        consulted = Consulted(sl, len(dirs))
        hint = None
        if ignored:
            # would the ignored DT_RPATH have found it? Say so: the classic shadowing mistake.
            key = (b.path, s.arch)
            shadow = self._shadow.get(key)
            if shadow is None:
                shadow = self._shadow[key] = SearchList(self._expanded(b, s, "rpath", True))
            found = shadow.first_inside(self.layout, name)
            if found is not None:
                hint = (f"its {ignored} would find {found[1].path}, but DT_RPATH is ignored because the binary"
                        " has a DT_RUNPATH")
        if not dirs:
            tried = ["no DT_RUNPATH or DT_RPATH (nor a loader's DT_RPATH) to search"]
        res = self._finish(b, dep, tried, None, hint)
        res.consulted = consulted
        if res.status == "external":
            res.build_path = next((sr.directory for sr in dirs if sr.absolute), None)
        return res

    def resolve_macho(self, b: Binary, s: Slice, dep: Dependency) -> Resolution:
        name = dep.name
        lay = self.layout
        tried: list[str] = []
        if name.startswith("@rpath/"):
            rest = name[len("@rpath/"):]
            sl = self.macho_rpaths(b, s)
            hit = self._search(b, dep, sl, rest, False)
            if hit is not None:
                return hit
            if not sl.searches:
                tried.append("no LC_RPATH in the binary or in any binary of the wheel that loads it")
            res = self._finish(b, dep, tried if not sl.searches else _Tried(sl, len(sl.searches), rest))
            res.consulted = Consulted(sl, len(sl.searches))
            return res
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

    def resolve_pe(self, b: Binary, s: Slice, dep: Dependency) -> Resolution:
        """As Windows loads an extension module's imports (CPython 3.8+: LoadLibraryExW with
        the default directories and the DLL's own folder): a DLL of that name already loaded by
        python.exe (python3X.dll, vcruntime140.dll) or by the package by its full path
        (``ctypes.WinDLL``), the importing file's folder, the folders the
        package adds at import time (``os.add_dll_directory``, delvewheel's ``<dist>.libs``),
        then System32 and the API sets. PATH is not searched, except for a tool that the package's
        launcher runs with a folder of the wheel in its PATH (:meth:`_finish`, the load model's
        ``launcher_folder``). Names compare case-insensitively."""
        name = dep.name
        origin = policydata.windows_dll_origin(name, s.arch, self._oldest_windows)
        if origin == "python" and not self._python_dll_fits(name):
            wanted = ", ".join(sorted(self._python_dlls))
            return self._finish(b, dep, [], f"{name} is another CPython's DLL: the wheel's tags load {wanted}")
        if origin in ("python", "api-set", "ucrt"):
            return Resolution(dep, "external", external=f"{name} ({_PE_ORIGINS[origin]})")
        for pre in getattr(self.wheel, "preloaded_dlls", ()):  # a DLL of that name already loaded
            hit = self.layout.at_nocase.get(pre.lower()) if _basename(pre).lower() == name.lower() else None
            if hit is not None:
                return Resolution(dep, "inside", path=hit.path)
        tried: list[str] = []
        folders = [(self.layout.directory(b), "the importing file's folder")]
        folders += [(d, "added at import time (os.add_dll_directory)") for d in self._dll_directories(b)]
        for folder, why in folders:
            cand = _join(folder, name)
            hit = self.layout.at_nocase.get(cand.lower())
            if hit is not None:
                return Resolution(dep, "inside", path=hit.path)
            tried.append(f"{_show(cand)} ({why})")
        if origin == "system":
            return Resolution(dep, "external", external=f"{name} ({_PE_ORIGINS[origin]})")
        if origin is not None and origin.startswith("windows-"):
            since = origin.removeprefix("windows-")
            r = self._finish(b, dep, tried, f"in-box on Windows {since} and later only; the wheel's tags admit "
                                            f"{_OLDER_WINDOWS[self._oldest_windows]}, where it is missing")
            if r.status == "unresolved":
                r.since_windows = since
            return r
        reason = None
        if origin == "redistributable":
            reason = ("part of the Visual C++ redistributable, which a clean Windows does not have: the wheel "
                      "must ship it (delvewheel repair vendors it)")
        elif origin == "debug-runtime":
            reason = ("the debug build of the Visual C++ runtime, which only Visual Studio installs and which may "
                      "not be redistributed: the binary was built in a Debug configuration")
        if dep.kind == "delay":
            reason = "delay-loaded: a call into it fails at run time" + (f"; {reason}" if reason else "")
        return self._finish(b, dep, tried, reason)

    def _dll_directories(self, b: Binary) -> list[str]:
        """The folders added at import time, those of ``b``'s own wheel first (wheels installed
        together: its package is imported before the module loads, another only perhaps)."""
        dirs = list(getattr(self.wheel, "dll_directories", ()))
        origins = getattr(self.wheel, "origins", None) or {}
        own = origins.get(b.path)
        if own is None or len(dirs) < 2:
            return dirs
        if not hasattr(self, "_folder_origin"):
            self._folder_origin: dict[str, str] = {}
            for path, origin in origins.items():
                self._folder_origin.setdefault(posixpath.dirname(path), origin)
        return sorted(dirs, key=lambda d: self._folder_origin.get(d) != own)

    @property
    def _python_dlls(self) -> frozenset[str]:
        """The versioned CPython DLLs (``python311.dll``, ``python313t.dll``) that the wheel's
        version-specific tags load; empty when no tag names one (``py3-none``, ``abi3``: there
        ``python3.dll`` is the one to import, and WA601 judges a versioned one)."""
        if not hasattr(self, "_python_dll_names"):
            names = set()
            for t in getattr(self.wheel, "tags", ()):
                if t.interpreter.startswith("cp3") and t.interpreter[2:].isdigit() and t.abi.startswith("cp3"):
                    names.add(f"python{t.interpreter[2:]}{'t' if t.abi.endswith('t') else ''}.dll")
            self._python_dll_names = frozenset(names)
        return self._python_dll_names

    @property
    def _oldest_windows(self) -> str:
        """The oldest Windows the wheel's interpreters run on (PEP 11): ``"10"`` when every one its
        tags name is CPython or PyPy 3.13 or later, ``"8.1"`` when 3.9 or later, else ``"7"``
        (a ``py3`` tag may mean an older one)."""
        pythons = self.wheel.traits.pythons
        oldest = min(((_python_version_of(p) or (0, 0)) for p in pythons), default=(0, 0))
        return "10" if oldest >= (3, 13) else "8.1" if oldest >= (3, 9) else "7"

    def _python_dll_fits(self, name: str) -> bool:
        """Whether a CPython DLL an extension imports is one the interpreter of the wheel's tags
        has loaded: ``python3.dll`` always, a versioned one only for its own version."""
        low = name.lower()
        if low == "python3.dll" or not low.startswith("python3") or not self._python_dlls:
            return True
        return low in self._python_dlls

    def resolve(self, b: Binary, s: Slice, dep: Dependency) -> Resolution:
        if b.format == "elf":
            return self.resolve_elf(b, s, dep)
        if b.format == "macho":
            return self.resolve_macho(b, s, dep)
        return self.resolve_pe(b, s, dep)


def resolve_wheel(wheel: Wheel, rule: LinkageRule | None = None) -> dict[str, dict[str, list[Resolution]]]:
    """Every dependency of every ok binary, resolved: path -> arch -> [Resolution, ...]."""
    rules = Rules.build(wheel, rule)
    res = _Resolver(wheel, rules)
    out: dict[str, dict[str, list[Resolution]]] = {}
    for b in wheel.libraries:
        if not b.ok:
            continue
        per_arch: dict[str, list[Resolution]] = {}
        for s in b.slices:
            per_arch[s.arch] = [res.resolve(b, s, d) for d in s.dependencies]
        out[b.path] = per_arch
    return out


def resolution_table(wheel: Wheel, rule: LinkageRule | None = None) -> dict[str, dict[str, dict[str, str | None]]]:
    """binary path -> arch -> dependency name -> where it resolves: a path inside the wheel,
    ``"external: <name>"``, ``"provided-by: <dist>"``, ``"weak, absent"`` or None (unresolved).

    With ``rule`` (a ``[linkage]`` table) its ``allow-external`` and ``provided-by`` count too;
    without it, the defaults that need no configuration."""
    return {
        path: {arch: {r.dependency.name: r.where for r in rs} for arch, rs in per_arch.items()}
        for path, per_arch in resolve_wheel(wheel, rule).items()
    }


def required_dists(wheel: Wheel) -> tuple[set[str], dict[str, list[str]]]:
    """Canonical names the wheel requires unconditionally (markers other than ``extra`` count),
    and those required only with an extra (name -> extras)."""
    plain: set[str] = set()
    extra_only: dict[str, list[str]] = {}
    for _text, req in wheel.requirements.parsed:
        name = canonicalize_name(req.name)
        extras = marker_extras(req)
        if extras:
            extra_only.setdefault(name, []).extend(extras)
        else:
            plain.add(name)
    return plain, extra_only


def _python_version_of(python: str) -> tuple[int, int] | None:
    """The version a ``cpXY`` / ``ppXY`` python tag names (``cp311`` -> (3, 11)), else None."""
    digits = python[2:]
    return (int(digits[0]), int(digits[1:])) if python[:2] in ("cp", "pp") and digits.isdigit() and len(digits) >= 2 else None


def _python_version(wheel: Wheel) -> str:
    """The lowest CPython version the wheel's tags name (``cp311`` -> ``"3.11"``), else 3.11."""
    found = [v for p in wheel.traits.pythons if p.startswith("cp") and (v := _python_version_of(p)) is not None]
    major, minor = min(found) if found else (3, 11)
    return f"{major}.{minor}"


# --------------------------------------------------------------------------------------------
# A dependency satisfied by another wheel: the needing wheel must require the providing one


def cross_wheel_links(merged: Wheel) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """For wheels installed together (``merged``, whose ``origins`` name the wheel of every path):
    each binary that needs a library another wheel ships, as (binary, the shipping wheel's label)
    -> [(dependency, the path it resolves to)]. A fact of the tree as merged, recorded by
    :func:`wheelaudit.scanner.together.merge_wheels`; :func:`wheelaudit.checks.linkage.members_not_required` judges it."""
    needs: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for path, per_arch in resolve_wheel(merged).items():
        src = merged.origins.get(path)
        for rs in per_arch.values():
            for r in rs:
                if r.status != "inside" or r.path is None:
                    continue
                dst = merged.origins.get(r.path)
                if src is None or dst is None or dst == src:
                    continue
                lst = needs.setdefault((path, dst), [])
                if (r.dependency.name, r.path) not in lst:
                    lst.append((r.dependency.name, r.path))
    return needs
