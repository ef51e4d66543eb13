"""A starter ruleset from a known-good wheel (``wheelaudit init``).

:func:`starter_ruleset` looks at one wheel that is assembled as intended and writes the rules
that hold of it, each with a ``#`` comment saying how it was inferred:

``[libraries]``
    ``scope``: the directories that ship native code; ``expected``: the file names there, less
    what the next build changes: a repair tool's hash and a version suffix become globs
    (``libXau-154567c4.so.6.0.0`` → ``libXau-*.so*``, ``libfoo.so.1.2.3`` → ``libfoo.so*``,
    :func:`wheelaudit.review.diff.name_glob_parts`), unversioned shared libraries ``{so,dylib}``
    alternatives, so one entry serves Linux and macOS;
    ``identity = "filename"`` when every shared library's SONAME / install name already equals
    its file name, else ``"off"`` with the ones that differ named.
``[[component]]``
    one per namespace or prefix (:func:`wheelaudit.review.dups.namespace_key`, refined a level where
    several libraries share a namespace) that exactly one library defines with strong exports
    and that looks like a component: a C++ namespace (``mlx::core``,
    ``executorch::backends::xnnpack``), or a C prefix of a few letters that many exports share
    (``pthreadpool_``, ``raqm_``), never a short word (``abs_``, ``div_``, ``uv_``) or a private
    ``_`` name. A few of those exports, unique to that library, are the sentinels
    (``strong-only``), the library is the owner. A shared library none of whose namespaces
    qualifies gets one component named after it (hash and version left out). Strong
    duplicates (``wheelaudit dups``) are not proposed; they are listed in comments to decide on.
``[[file]]``
    data files that sit beside native libraries (``mlx.metallib``), counted; ``beside`` the
    component whose namespace names the file, when exactly one does.
``[linkage]``
    ``allow-external`` for every dependency found outside the wheel, ``provided-by`` for one
    another distribution the wheel requires ships (``libtorch*`` with ``Requires-Dist: torch``).

The text loads with :func:`wheelaudit.ruleset.load.parse_rules`, and ``wheelaudit check`` passes on
the wheel it came from.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable

from wheelaudit import __version__
from wheelaudit.review.diff import NOT_DATA_SUFFIXES, glob_escape, library_stem, name_glob_parts
from wheelaudit.review.dups import FORTRAN, NO_PREFIX, _qualified_parts, find_duplicates, library_definitions, namespace_key
from wheelaudit.model.binary import Binary
from wheelaudit.ruleset.globs import SymbolPattern
from wheelaudit.model.wheel import Wheel

#: sentinels per component
SENTINELS = 3
#: strong exports a C prefix (``pthreadpool_``) or camelCase word needs before it is proposed
#: as a component, and the letters it needs (``abs_``, ``div_``, ``uv_``, ``hb_`` are too short to
#: tell a component from a word)
MIN_C_PREFIX = 8
MIN_C_PREFIX_LETTERS = 4
#: components proposed per library, and in all
PER_LIBRARY = 3
MAX_COMPONENTS = 40
#: keys never proposed as components: the C++ runtime, compiler support, Python's module init
_NEVER = ("std", "__gnu_cxx", "__cxxabiv1", "__cxx", "PyInit_", "__gxx_", "__cxa_", "_", NO_PREFIX, FORTRAN)
#: shared libraries another distribution provides, by file-name glob
KNOWN_PROVIDERS = {"torch": ("libtorch*", "libc10*", "libshm*")}


def _q(s: str) -> str:
    """A TOML basic string."""
    return json.dumps(s, ensure_ascii=False)


_esc = glob_escape


def _dir(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _is_shlib(name: str) -> bool:
    """``libfoo.so`` / ``libfoo.dylib`` (not an extension module, not a versioned SONAME)."""
    return name.startswith("lib") and (name.endswith(".so") or name.endswith(".dylib")) and name.count(".") == 1


def _owner_glob(b: Binary) -> str:
    d = _dir(b.path)
    prefix = f"{_esc(d)}/" if d else ""
    parts = name_glob_parts(b.name)
    if parts is not None:  # libXau-*.so*: the next build's hash and version match too
        return prefix + parts[0] + parts[1]
    if _is_shlib(b.name):
        return f"{prefix}{_esc(b.name.rsplit('.', 1)[0])}.*"
    return prefix + _esc(b.name)


def _chunks(items: list[str], n: int) -> Iterable[list[str]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def _alternatives(items: list[str]) -> str:
    return items[0] if len(items) == 1 else "{" + ",".join(items) + "}"


def _identity_problem(b: Binary) -> str | None:
    """Why ``identity = "filename"`` would fail for ``b``, or None (mirrors the check)."""
    from wheelaudit.checks.extension import is_extension_module

    if not b.ok or b.kind != "shared" or is_extension_module(b):
        return None
    for sl in b.slices:
        ident = sl.identity
        if not ident:
            return "has no " + ("install name" if b.format == "macho" else "SONAME")
        if ident.startswith("/"):
            return f"has an absolute identity {ident}"
        if ident.rsplit("/", 1)[-1] != b.name:
            return f"has identity {ident}"
    return None


def _os_condition(wheel: Wheel) -> str | None:
    oses = sorted(getattr(wheel.traits, "os", ()) or ())
    return f"{{ os = {_q(oses[0])} }}" if len(oses) == 1 else None


# --------------------------------------------------------------------------------------------
# Components


def _entry(demangled: str) -> str | None:
    """A sentinel entry for a demangled name: the qualified name without its parameters, when
    that is a plain prefix of the name (no return type, no ``vtable for``, no ``*``)."""
    if demangled.startswith(("vtable for", "typeinfo", "VTT for", "guard variable", "non-virtual thunk",
                             "virtual thunk", "covariant return", "construction vtable", "TLS ", "{", "_Z")):
        return None
    parts = _qualified_parts(demangled, 64)
    entry = "::".join(parts)
    if not entry or not demangled.startswith(entry) or "*" in entry or "\\" in entry or " " in entry.split("<")[0]:
        return None
    return entry


def _strong_names(b: Binary) -> list[str]:
    return sorted(n for n, weak in library_definitions(b).items() if not weak)


def _component_keys(wheel: Wheel) -> dict[str, dict[str, list[str]]]:
    """key → {library path: strong exported names in it}, keys refined one level where several
    libraries define a namespace strongly."""
    strong = {b.path: _strong_names(b) for b in wheel.libraries if b.ok}
    owners2: dict[str, set[str]] = {}
    for path, names in strong.items():
        for n in names:
            owners2.setdefault(namespace_key(n, 2), set()).add(path)
    shared = {k for k, libs in owners2.items() if len(libs) > 1}
    out: dict[str, dict[str, list[str]]] = {}
    for path, names in strong.items():
        for n in names:
            k = namespace_key(n, 2)
            if k in shared:
                k = namespace_key(n, 3)
            out.setdefault(k, {}).setdefault(path, []).append(n)
    return out


def _never(key: str) -> bool:
    top = key.split("::", 1)[0]
    return key in _NEVER or top in _NEVER or key.startswith("__") or top.startswith("__")


def _component_like(key: str, names: list[str]) -> bool:
    """Whether a namespace or prefix names a component rather than a word: a C++ namespace,
    or a C prefix / camelCase word of :data:`MIN_C_PREFIX_LETTERS` letters or more that
    :data:`MIN_C_PREFIX` exports share and that is not private (``_decoder_``)."""
    if _never(key):
        return False
    if "::" in key or any("::" in n for n in names):
        return True
    if key.startswith("_") or not key.endswith(("_", "*")):
        return False
    word = key.rstrip("_*")
    return len(word) >= MIN_C_PREFIX_LETTERS and len(names) >= MIN_C_PREFIX


class _Others:
    """Every definition (strong exports and local symbols) of the libraries other than one."""

    def __init__(self, wheel: Wheel):
        self.names: dict[str, list[str]] = {}
        for b in wheel.libraries:
            if not b.ok:
                continue
            strong = {n for n, weak in library_definitions(b).items() if not weak}
            local = {s.demangled for sl in b.slices for s in sl.locals}
            self.names[b.path] = sorted(strong | local)

    def defined_elsewhere(self, pattern: SymbolPattern, owner: str) -> bool:
        prefix = pattern.literal_prefix
        for path, names in self.names.items():
            if path == owner:
                continue
            # names are sorted: only those starting with the literal prefix can match
            i = bisect.bisect_left(names, prefix)
            while i < len(names) and names[i].startswith(prefix):
                if pattern.matches(names[i]):
                    return True
                i += 1
        return False


def _sentinels(names: list[str], owner: str, others: _Others) -> list[str]:
    entries: dict[str, None] = {}
    for n in sorted(names, key=lambda x: (len(x), x)):
        e = _entry(n)
        if e is None or e in entries:
            continue
        try:
            pat = SymbolPattern(e)
        except ValueError:
            continue
        if not pat.matches(n) or others.defined_elsewhere(pat, owner):
            continue
        entries[e] = None
        if len(entries) >= SENTINELS:
            break
    return list(entries)


def _component_name(key: str, taken: set[str]) -> str:
    base = "".join(c if c.isalnum() else "_" for c in key.replace("::", "_")).strip("_").lower() or "component"
    while "__" in base:
        base = base.replace("__", "_")
    name, i = base, 2
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name


# --------------------------------------------------------------------------------------------
# The ruleset


def starter_ruleset(wheel: Wheel) -> str:
    """TOML text of a starter ruleset that holds of ``wheel`` (see the module docstring)."""
    libs = [b for b in wheel.libraries]
    lines: list[str] = []
    w = lines.append
    w(f"# Starter rules for {wheel.name} {wheel.version}, inferred by wheelaudit {__version__} from")
    w(f"#   {wheel.path.name}  ({', '.join(wheel.tags) or 'no tags'})")
    w("# as a known-good wheel. Every entry says how it was inferred: read them, keep what is intended,")
    w("# widen what must also hold on other platforms, and add the reasons. SPEC §3 has the format.")
    w("")
    w("version = 1")
    w(f"name = {_q(wheel.name)}")
    os_cond = _os_condition(wheel)

    # ---- [libraries]
    w("")
    if libs:
        by_dir: dict[str, list[Binary]] = {}
        for b in libs:
            by_dir.setdefault(_dir(b.path), []).append(b)
        w("# Names: every native binary of these directories must have one of the names it ships with now")
        w("# (less a repair tool's hash and the version suffix, which the next build changes).")
        w("[libraries]")
        scope = [f"{_esc(d)}/*" if d else "*" for d in sorted(by_dir)]
        w(f"# inferred: the {len(by_dir)} director{'y' if len(by_dir) == 1 else 'ies'} holding the wheel's "
          f"{len(libs)} native binar{'y' if len(libs) == 1 else 'ies'}")
        w("scope = [" + ", ".join(_q(s) for s in scope) + "]")
        w("# inferred: the file names shipped; lib*.so / lib*.dylib as {so,dylib} so that one entry serves")
        w("# Linux and macOS; libfoo-<hash>.so.1.2 as libfoo-*.so*, libfoo.so.1.2 as libfoo.so*")
        w("expected = [")
        for d in sorted(by_dir):
            prefix = f"{_esc(d)}/" if d else ""
            # names by their tail: "" (exact), ".{so,dylib}", "-*.so*", ".so*", "{,.*}.dylib", "-*.dll"
            by_tail: dict[str, set[str]] = {}
            for b in by_dir[d]:
                parts = name_glob_parts(b.name)
                if parts is not None:
                    by_tail.setdefault(parts[1], set()).add(parts[0])
                elif _is_shlib(b.name):
                    by_tail.setdefault(".{so,dylib}", set()).add(_esc(b.name.rsplit(".", 1)[0]))
                else:
                    by_tail.setdefault("", set()).add(_esc(b.name))
            for tail in sorted(by_tail, key=lambda t: (t == "", t)):
                for chunk in _chunks(sorted(by_tail[tail]), 40):
                    w(f"    {_q(prefix + _alternatives(chunk) + tail)},")
        w("]")
        problems = [(b.path, p) for b in libs if (p := _identity_problem(b))]
        shared = sum(1 for b in libs if b.ok and b.kind == "shared")
        if not problems:
            w(f"# inferred: all {shared} shared libraries' SONAME / install name already equals the file name")
            w('identity = "filename"')
        else:
            w(f"# inferred: {len(problems)} of {shared} shared libraries' identity differs from the file name, e.g.")
            for path, p in problems[:3]:
                w(f"#   {path} {p}")
            if all(".cpython-" in path or ".abi3." in path for path, _ in problems):
                w("# (all of them Python extension modules: loaded by path, and on Linux usually built without")
                w("# a SONAME, so the identity check cannot hold for them)")
            else:
                w('# (fix them and switch to "filename": a consumer links against the identity)')
            w('identity = "off"')
    else:
        w("# no native binaries in this wheel: no [libraries] table")

    # ---- [[component]]
    keys = _component_keys(wheel)
    others = _Others(wheel)
    by_path = {b.path: b for b in libs}
    candidates: list[tuple[str, str, list[str]]] = []
    for key, per in keys.items():
        if len(per) != 1:
            continue
        (path, names), = per.items()
        if not _component_like(key, names):
            continue  # a word a few C functions share (abs_F, abs_I) is not a component
        candidates.append((path, key, names))
    per_lib: dict[str, list[tuple[str, list[str]]]] = {}
    for path, key, names in sorted(candidates, key=lambda c: (c[0], -len(c[2]), c[1])):
        per_lib.setdefault(path, []).append((key, names))
    taken: set[str] = set()
    components: list[tuple[str, str, str]] = []  # (name, key, owner path)
    skipped = 0
    w("")
    w("# Components: code that exactly one library must carry. Each was inferred from a namespace or prefix")
    w("# whose strong exports only that library has; the sentinels are a few of those exports. `required`")
    w("# holds on this wheel's OS; elsewhere, where the component ships, it must still come from its owner.")
    for path in sorted(per_lib):
        shown = 0
        for key, names in per_lib[path]:
            if shown >= PER_LIBRARY or len(components) >= MAX_COMPONENTS:
                skipped += 1
                continue
            sentinels = _sentinels(names, path, others)
            if not sentinels:
                skipped += 1
                continue
            name = _component_name(key, taken)
            components.append((name, key, path))
            shown += 1
            w("")
            w("[[component]]")
            shown_key = key + ("*" if key.endswith("_") else "" if key.endswith("*") else "::*")
            w(f"# inferred: {len(names)} strong export{'s' if len(names) != 1 else ''} in {shown_key}"
              f" defined only by {path}")
            w(f"name = {_q(name)}")
            w("symbols = [" + ", ".join(_q(s) for s in sentinels) + "]")
            w("strong-only = true")
            w(f"owner = {_q(_owner_glob(by_path[path]))}")
            if os_cond:
                w(f"required = {os_cond}")
            else:
                w("required = true")
    # libraries whose namespaces are all shared (kernels registering into one namespace): a
    # component named after the library, with exports only it defines
    # (not for a Python extension module: it is imported by path, and what it exports beyond
    # PyInit_ is an accident of its build, not a component)
    from wheelaudit.checks.extension import is_extension_module

    owning = {c[2] for c in components}
    for b in libs:
        if b.path in owning or not b.ok or len(components) >= MAX_COMPONENTS or is_extension_module(b):
            continue
        names = [n for n in _strong_names(b) if not _never(namespace_key(n, 2))]
        sentinels = _sentinels(names, b.path, others)
        if not sentinels:
            continue
        stem = library_stem(b.name)  # libharfbuzz, not libharfbuzz-fb49c9fc
        name = _component_name(stem, taken)
        components.append((name, stem, b.path))
        w("")
        w("[[component]]")
        w(f"# inferred: exports only {b.path} defines (none of its namespaces or prefixes was proposed above)")
        w(f"name = {_q(name)}")
        w("symbols = [" + ", ".join(_q(s) for s in sentinels) + "]")
        w("strong-only = true")
        w(f"owner = {_q(_owner_glob(b))}")
        w(f"required = {os_cond}" if os_cond else "required = true")
    if skipped:
        w("")
        w(f"# {skipped} more namespace{'s' if skipped != 1 else ''} defined by a single library "
          f"{'were' if skipped != 1 else 'was'} not proposed (at most {PER_LIBRARY} per")
        w(f"# library, {MAX_COMPONENTS} in all, each with sentinels no other library defines); "
          "`wheelaudit owners` tells who defines one.")
    dups = [g for g in find_duplicates(wheel) if g.strength == "strong"]
    if dups:
        w("")
        w(f"# Not proposed: {len(dups)} namespace{'s' if len(dups) != 1 else ''} that several libraries define "
          "strongly (`wheelaudit dups`). If one")
        w("# copy is intended, add a [[component]] with that owner and `exempt` the others; if not, fix the build.")
        for g in dups[:10]:
            w(f"#   {g.key}: {g.count} symbol{'s' if g.count != 1 else ''} in {', '.join(g.paths[:4])}"
              + (f" (+{len(g.paths) - 4} more)" if len(g.paths) > 4 else ""))
        if len(dups) > 10:
            w(f"#   … (+{len(dups) - 10} more)")

    # ---- [[file]]
    native = {b.path for b in libs}
    lib_dirs = {_dir(b.path) for b in libs}
    data: dict[str, list[str]] = {}
    for f in wheel.files:
        if f in native or ".dist-info/" in f or f.endswith(NOT_DATA_SUFFIXES) or "/__pycache__/" in f:
            continue
        if _dir(f) in lib_dirs:
            data.setdefault(f.rsplit("/", 1)[-1], []).append(f)
    if data:
        w("")
        w("# Data files that travel with native code: they ship beside the libraries now.")
        file_names: set[str] = set()
        for base in sorted(data):
            paths = sorted(data[base])
            w("")
            w("[[file]]")
            w(f"# inferred: {', '.join(paths[:3])}{' …' if len(paths) > 3 else ''} beside native libraries")
            name = _component_name(base, file_names | taken)
            file_names.add(name)
            w(f"name = {_q(name)}")
            w(f"glob = {_q('**/' + _esc(base))}")
            w(f"count = {len(paths)}")
            stem = base.split(".", 1)[0].lower()
            dirs = {_dir(p) for p in paths}
            near = [c for c in components if _dir(c[2]) in dirs and stem and stem in c[1].lower()]
            if len(near) == 1 and len(paths) == 1:
                w(f"beside = {_q(near[0][0])}   # its namespace {near[0][1]} names the file; it sits beside {near[0][2]}")
            elif os_cond:
                w(f"when = {os_cond}")

    # ---- [linkage]
    allow, provided = _linkage(wheel)
    w("")
    w("# Linkage: what the libraries need from outside the wheel.")
    w("[linkage]")
    if allow:
        w("# inferred: dependencies found outside the wheel: system libraries, and those the wheel does not ship")
        w("# (if another distribution ships one, require it and list it in provided-by instead)")
        w("allow-external = [")
        for name, note in allow:
            w(f"    {_q(name)},{'  # ' + note if note else ''}")
        w("]")
    else:
        w("allow-external = []   # inferred: every dependency resolves inside the wheel")
    if provided:
        w("# inferred: shipped by a distribution the wheel requires (Requires-Dist)")
        w("provided-by = { " + ", ".join(f"{_q(d) if not d.replace('-', '').replace('_', '').isalnum() else d} = ["
                                         + ", ".join(_q(g) for g in globs) + "]" for d, globs in sorted(provided.items()))
          + " }")
    w("")
    return "\n".join(lines)


def _linkage(wheel: Wheel) -> tuple[list[tuple[str, str]], dict[str, list[str]]]:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    from wheelaudit.ruleset.globs import Glob
    from wheelaudit.checks.linkage import resolve_wheel

    required: set[str] = set()
    for r in wheel.requires_dist:
        try:
            req = Requirement(r)
        except InvalidRequirement:
            continue
        if req.marker is not None and "extra" in str(req.marker):
            continue
        required.add(canonicalize_name(req.name))
    allow: dict[str, str] = {}
    provided: dict[str, list[str]] = {}
    for per_arch in resolve_wheel(wheel).values():
        for rs in per_arch.values():
            for r in rs:
                name = r.dependency.name
                if r.status == "external":
                    allow.setdefault(_esc(name), "")
                elif r.status == "unresolved":
                    base = name.rsplit("/", 1)[-1]
                    dist = next((d for d, globs in KNOWN_PROVIDERS.items()
                                 if d in required and any(Glob(g).match(base) for g in globs)), None)
                    if dist is not None:
                        g = next(g for g in KNOWN_PROVIDERS[dist] if Glob(g).match(base))
                        if g not in provided.setdefault(dist, []):
                            provided[dist].append(g)
                    else:
                        known = next((d for d, globs in KNOWN_PROVIDERS.items()
                                      if any(Glob(g).match(base) for g in globs)), None)
                        note = f"{name}: not in the wheel"
                        if known:
                            note += f" ({known} ships it: require {known} and use provided-by)"
                        allow.setdefault(_esc(base), note)
    return sorted(allow.items()), provided
