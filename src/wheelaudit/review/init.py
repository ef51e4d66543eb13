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
from wheelaudit.review.dups import FORTRAN, NO_PREFIX, qualified_parts, find_duplicates, library_definitions, namespace_key
from wheelaudit.model.binary import Binary
from wheelaudit.model.messages import more, plural
from wheelaudit.model.globs import SymbolPattern
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
    parts = qualified_parts(demangled, 64)
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
    w(f"#   {wheel.path.name}  ({', '.join(map(str, wheel.tags)) or 'no tags'})")
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
            w(f"# inferred: {plural(len(names), 'strong export')} in {shown_key}"
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
        w(f"# {plural(skipped, 'more namespace')} defined by a single library "
          f"{'were' if skipped != 1 else 'was'} not proposed (at most {PER_LIBRARY} per")
        w(f"# library, {MAX_COMPONENTS} in all, each with sentinels no other library defines); "
          "`wheelaudit owners` tells who defines one.")
    dups = [g for g in find_duplicates(wheel) if g.strength == "strong"]
    if dups:
        w("")
        w(f"# Not proposed: {plural(len(dups), 'namespace')} that several libraries define "
          "strongly (`wheelaudit dups`). If one")
        w("# copy is intended, add a [[component]] with that owner and `exempt` the others; if not, fix the build.")
        for g in dups[:10]:
            w(f"#   {g.key}: {plural(g.count, 'symbol')} in {', '.join(g.paths[:4])}"
              + more(len(g.paths) - 4))
        if len(dups) > 10:
            w("#   …" + more(len(dups) - 10))

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
    from packaging.utils import canonicalize_name

    from wheelaudit.platforms.requirements import marker_extras

    from wheelaudit.model.globs import Glob
    from wheelaudit.checks.resolution import resolve_wheel

    required: set[str] = set()
    for _text, req in wheel.requirements.parsed:
        if marker_extras(req):
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


# --------------------------------------------------------------------------------------------
# Several wheels of one release


def _condition(having: list[Wheel], wheels: list[Wheel]) -> str:
    """A condition table that holds for exactly the wheels ``having`` among ``wheels``: by os
    when that tells them apart, else by their platform tags."""
    oses = sorted({o for w in having for o in w.traits.os})
    if oses and all(bool(set(w.traits.os) & set(oses)) == (w in having) for w in wheels):
        return "{ os = " + (_q(oses[0]) if len(oses) == 1 else "[" + ", ".join(_q(o) for o in oses) + "]") + " }"
    plats = sorted({p for w in having for p in w.platform_tags})
    return "{ platform = [" + ", ".join(_q(p) for p in plats) + "] }"


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return _q(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def _key(k: str) -> str:
    return k if k.replace("-", "").replace("_", "").isalnum() else _q(k)


def _main_platform(w: Wheel) -> str:
    """The platform tag a release engineer lists for a wheel: its newest policy / OS version."""
    from wheelaudit.platforms.tags import parse_platform

    plats = w.platform_tags
    return max(plats, key=lambda p: (parse_platform(p).version, p)) if plats else "any"


def release_ruleset(wheels: list[Wheel]) -> str:
    """TOML text of a starter ruleset that holds of every wheel of one release: each wheel's
    starter rules (:func:`starter_ruleset`) merged, what only some wheels have put under a
    ``when`` that selects them (their os, else their platform tags), the modules and libraries
    that ship on some platforms only in ``[release] only``, and ``[release] platforms``
    listing the wheels' platforms. ``check --release`` passes on those wheels with it."""
    from wheelaudit.checks.release.cohort import contents, wheel_label
    from wheelaudit.ruleset.load import parse_toml_text

    if len(wheels) == 1:
        return starter_ruleset(wheels[0])
    each = [parse_toml_text(starter_ruleset(w), str(w.path)) for w in wheels]
    lines: list[str] = []
    w_ = lines.append
    first = wheels[0]
    w_(f"# Starter rules for {first.name} {first.version}, inferred by wheelaudit {__version__} from the")
    w_(f"# {len(wheels)} wheels of one release, each as a known-good wheel:")
    for w in wheels:
        w_(f"#   {w.path.name}")
    w_("# What only some of them have is under a `when` that selects those (or in [release] only).")
    w_("")
    w_("version = 1")
    w_(f"name = {_q(first.name)}")

    # ---- [libraries]: the union of the names; identity "filename" only where every wheel has it
    libs = [d.get("libraries") for d in each]
    if any(libs):
        scope = sorted({s for t in libs if t for s in t.get("scope", [])})
        expected = list(dict.fromkeys(e for t in libs if t for e in t.get("expected", [])))
        identity = "filename" if all(t is None or t.get("identity") == "filename" for t in libs) else "off"
        w_("")
        w_("# inferred: every wheel's directories and names (a name of one platform's never matches another's)")
        w_("[libraries]")
        w_(f"scope = {_toml_value(scope)}")
        w_("expected = [")
        for e in expected:
            w_(f"    {_q(e)},")
        w_("]")
        w_(f'identity = "{identity}"' + ("" if identity == "filename" else
                                          "   # inferred: some shared library's identity differs from its file name"))

    # ---- [[component]]: one per (name, owner); the sentinels every wheel that has it agrees on
    comps: dict[tuple[str, str], list[tuple[int, dict]]] = {}
    for i, d in enumerate(each):
        for c in d.get("component", []):
            comps.setdefault((c["name"], c.get("owner", "")), []).append((i, c))
    names_taken: set[str] = set()
    for (name, owner), found in comps.items():
        having = [wheels[i] for i, _ in found]
        common = [s for s in found[0][1]["symbols"] if all(s in c["symbols"] for _, c in found)]
        groups = [found] if common else [[f] for f in found]  # no sentinel in common: one per wheel
        for group in groups:
            syms = common if common else group[0][1]["symbols"]
            gw = [wheels[i] for i, _ in group] if not common else having
            cname = _component_name(name, names_taken)
            w_("")
            w_("[[component]]")
            where = "every wheel" if len(gw) == len(wheels) else ", ".join(wheel_label(w) for w in gw)
            w_(f"# inferred: in {where}")
            w_(f"name = {_q(cname)}")
            w_(f"symbols = {_toml_value(syms)}")
            w_("strong-only = true")
            if owner:
                w_(f"owner = {_q(owner)}")
            if len(gw) == len(wheels):
                w_("required = true")
            else:
                w_(f"when = {_condition(gw, wheels)}")

    # ---- [[file]]: the same rule where every wheel that has it agrees
    files: dict[str, list[tuple[int, dict]]] = {}
    for i, d in enumerate(each):
        for f in d.get("file", []):
            f = {k: v for k, v in f.items() if k not in ("when", "beside")}
            files.setdefault(_toml_value(f), []).append((i, f))
    for _text, found in files.items():
        f = found[0][1]
        gw = [wheels[i] for i, _ in found]
        w_("")
        w_("[[file]]")
        w_(f"# inferred: in {'every wheel' if len(gw) == len(wheels) else ', '.join(wheel_label(w) for w in gw)}")
        name = _component_name(f.get("name", "file"), names_taken)
        f = {**f, "name": name}
        for k, v in f.items():
            w_(f"{_key(k)} = {_toml_value(v)}")
        if len(gw) != len(wheels):
            w_(f"when = {_condition(gw, wheels)}")

    # ---- [linkage]: every wheel's externals
    allow = list(dict.fromkeys(a for d in each for a in d.get("linkage", {}).get("allow-external", [])))
    provided: dict[str, list[str]] = {}
    for d in each:
        for dist, globs in d.get("linkage", {}).get("provided-by", {}).items():
            for g in globs:
                if g not in provided.setdefault(dist, []):
                    provided[dist].append(g)
    w_("")
    w_("# inferred: what the libraries of every wheel need from outside it")
    w_("[linkage]")
    w_("allow-external = [")
    for a in allow:
        w_(f"    {_q(a)},")
    w_("]")
    if provided:
        w_(f"provided-by = {_toml_value(provided)}")

    # ---- [release]
    per = [contents(w) for w in wheels]
    only: dict[str, str] = {}
    for key in sorted(set().union(*per)):
        having = [w for w, c in zip(wheels, per, strict=True) if key in c]
        if len(having) == len(wheels):
            continue
        kind, path = next(c[key] for c in per if key in c)
        glob = _esc(path) if kind == "Python module" else _only_glob(path)
        only[glob] = _condition(having, wheels)
    w_("")
    w_("# inferred: the platforms of the wheels given; modules and libraries that only some of them ship")
    w_("[release]")
    w_(f"platforms = {_toml_value(sorted({_main_platform(w) for w in wheels}))}")
    if only:
        w_("only = { " + ", ".join(f"{_q(g)} = {c}" for g, c in only.items()) + " }")
    w_("")
    return "\n".join(lines)


def _only_glob(path: str) -> str:
    """A glob over a library or extension module's path that any platform's spelling matches:
    ``pkg/_ext.cpython-311-x86_64-linux-gnu.so`` → ``pkg/_ext.*``; ``pkg/lib/libfoo.so.1`` →
    ``pkg/lib/*foo.*`` (``foo.dll`` on Windows too)."""
    d, _, name = path.rpartition("/")
    stem = library_stem(name)
    core = stem[3:] if stem.startswith("lib") else stem
    glob = f"{_esc(core)}.*" if not stem.startswith("lib") else f"*{_esc(core)}.*"
    return f"{_esc(d)}/{glob}" if d else glob
