"""WA506: an imported symbol is defined by no library it can bind to.

Each binary's undefined, non-weak imports are looked up where its loader binds them, over the
dependencies as :mod:`wheelaudit.checks.resolution` resolved them (``Resolution``):

ELF (glibc's ld.so: one scope, no library named per symbol)
    The load closure: the binary's NEEDED libraries as resolved, theirs transitively, and for
    every binary but an executable the interpreter (Python's C API: ``Py*`` / ``_Py*`` names
    are never reported; and the libc / libm python itself needs). A library inside the wheel
    answers with its exports and their version nodes: an import ``foo@VERS_1`` binds to a
    definition ``foo`` of version ``VERS_1``, or to an unversioned one (as ld.so accepts it).
    An unversioned definition in a library without symbol versions satisfies the import only
    when the version requirement names another library (ld.so asserts otherwise).
    glibc's libraries, libstdc++, libgcc_s, libatomic and zlib answer with
    :func:`wheelaudit.platforms.policydata.elf_external_exports` for the wheel's lowest manylinux policy;
    an import whose glibc-style version node that policy does not allow is WA504's, not ours.
    Any other member (an allowed external without export data, a provided or unresolved
    dependency, a musllinux or android wheel's libc) could define anything: then nothing of
    that binary is reported.
Mach-O (dyld, two-level namespace)
    Each import names its library (``Slice.imports_from``: the install name its library ordinal
    names). A library resolved inside the wheel answers with its exports and those of the
    libraries it re-exports; an image whose trie has re-export entries, or whose re-exported
    library does not resolve inside, answers nothing. System libraries (``/usr/lib``,
    ``/System``) have no data: not reported. Flat lookups (``-flat_namespace``,
    ``-undefined dynamic_lookup``: how an extension module imports Python's C API) and
    main-executable imports bind to whatever is loaded: the closure and the interpreter, which
    always holds libSystem, whose exports are not data: not reported.
PE (the Windows loader)
    Each import names its DLL (``Slice.imports_from``). A DLL resolved inside the wheel answers
    with its exports by name (forwarded exports count); ordinal imports (``#12``) are not
    checked (the reader keeps no ordinal of named exports). System and CPython DLLs: no data.
    A delay-loaded DLL's missing symbol fails at its first call instead of at load.

Weak imports (ELF ``STB_WEAK`` undefined, Mach-O ``N_WEAK_REF``) are exempt: the loader leaves
them null. One finding per (binary, library the symbols were looked for in), every missing
symbol in ``symbols``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from functools import lru_cache

from wheelaudit.platforms import tags as platforms

from wheelaudit.platforms import policydata
from wheelaudit.model.binary import MACHO_EXECUTABLE, MACHO_FLAT, Binary, Slice, Symbol
from wheelaudit.model.finding import Finding, examples
from wheelaudit.model.wheel import Wheel
from wheelaudit.checks.base import Family
from wheelaudit.checks.links import Links, on_links
from wheelaudit.checks.resolution import Resolution

__all__ = ["FAMILY", "check_unbound", "interpreter_symbol", "unbound_symbols"]

RULE = "linkage"

#: missing symbols named in a message (all are in ``symbols``)
SHOWN = 4

#: ELF libraries of glibc's family whose own NEEDED lie outside the wheel: what they load too
_IMPLIED: dict[str, tuple[str, ...]] = {
    "libstdc++.so.6": ("libm.so.6", "libgcc_s.so.1"),
}
#: the dynamic loader, in every ELF process, per architecture (the data's sonames)
_LOADER = {"x86_64": "ld-linux-x86-64.so.2", "aarch64": "ld-linux-aarch64.so.1"}
#: what python itself needs, in the global scope of every library it loads
_INTERPRETER_LIBS = ("libc.so.6", "libm.so.6")


def interpreter_symbol(name: str) -> bool:
    """A name of Python's C API, which the interpreter defines (``Py*``, ``_Py*``)."""
    return name.startswith(("Py", "_Py"))


def _is_executable(b: Binary, s: Slice) -> bool:
    return s.kind == "executable" or b.kind == "executable"


def _names(exports) -> frozenset[str]:
    names = getattr(exports, "names", None)
    return frozenset(names() if callable(names) else (x.name for x in exports))


class _Exports:
    """What the wheel's binaries define, per (path, arch), read once per check."""

    def __init__(self, by_path: dict[str, Binary]) -> None:
        self.by_path = by_path
        self._names: dict[tuple[str, str], frozenset[str]] = {}
        self._versions: dict[tuple[str, str], dict[str, set[str | None]]] = {}
        self._nodes: dict[tuple[str, str], frozenset[str]] = {}

    def slice(self, path: str, arch: str) -> Slice | None:
        """The slice of ``arch`` of a readable binary; None: its exports are unknown."""
        b = self.by_path.get(path)
        return next((s for s in b.slices if s.arch == arch), None) if b is not None and b.ok else None

    def names(self, path: str, arch: str) -> frozenset[str]:
        key = (path, arch)
        if key not in self._names:
            s = self.slice(path, arch)
            names = _names(s.exports) if s is not None else frozenset()
            if s is not None and s.forwarders:  # (PE: defined elsewhere, but bound through this DLL)
                names = names | frozenset(s.forwarders)
            self._names[key] = names
        return self._names[key]

    def nodes(self, path: str, arch: str) -> frozenset[str]:
        """The version nodes that ``path`` defines symbols at (empty: a library without symbol
        versions)."""
        self.versions(path, arch, "")
        return self._nodes[(path, arch)]

    def versions(self, path: str, arch: str, name: str) -> set[str | None]:
        """The version nodes ``name`` is defined with (None: unversioned)."""
        key = (path, arch)
        if key not in self._versions:
            table: dict[str, set[str | None]] = {}
            s = self.slice(path, arch)
            for sym in (s.exports if s is not None else ()):
                table.setdefault(sym.name, set()).add(sym.version)
            self._versions[key] = table
            self._nodes[key] = frozenset(v for vs in table.values() for v in vs if v)
        return self._versions[key].get(name, set())


# ---- ELF --------------------------------------------------------------------------------------


def _elf_policy(wheel) -> str | None:
    """The manylinux policy whose export data applies (the lowest manylinux tag's; the newest
    policy for a wheel with no Linux tag); None when a musllinux / android tag says the
    binaries bind to another libc."""
    plats = [platforms.parse_platform(p) for p in platforms.platform_strings(wheel.tags)]
    if any(p.family in ("musllinux", "android") for p in plats):
        return None
    many = [p for p in plats if p.family == "manylinux"]
    if many:
        return platforms.manylinux_policy(min(many, key=lambda p: p.version).version).name
    return platforms.latest_manylinux_policy().name


@lru_cache(maxsize=4096)
def _wa504_node(node: str, policy: str, arch: str) -> bool:
    """A version node of a library the policy versions (GLIBC_, GLIBCXX_, ...) that the policy
    does not allow: WA504 reports that import."""
    entry = policydata.linux_policy(policy)
    prefix = node.partition("_")[0]
    if entry is None or prefix not in entry.get("symbol_versions", {}).get(arch, {}):
        return False
    return policydata.policy_allows_version(policy, arch, node) is False


class _ElfScope:
    """The load closure of one ELF slice: inside libraries (path) and external sonames with
    their export data; ``unknown`` names a member that could define anything."""

    def __init__(self) -> None:
        self.inside: list[str] = []
        self.external: dict[str, frozenset[str]] = {}
        self.unknown: str | None = None


def _elf_scope(b: Binary, s: Slice, resolved, policy: str | None, exports: _Exports) -> _ElfScope:
    scope = _ElfScope()
    seen_paths: set[str] = {b.path}
    ext_queue: deque[str] = deque()
    queue: deque[str] = deque([b.path])
    if not _is_executable(b, s):
        ext_queue.extend(_INTERPRETER_LIBS)
    ext_queue.append("libc.so.6")
    loader = _LOADER.get(s.arch)
    if loader is None:
        scope.unknown = f"the dynamic loader of {s.arch} (no export data for this architecture)"
        return scope
    ext_queue.append(loader)
    while queue:
        path = queue.popleft()
        for r in resolved.get(path, {}).get(s.arch, []):
            if r.status == "inside" and r.path and exports.slice(r.path, s.arch) is None:
                scope.unknown = f"{r.path} (unreadable, or without a {s.arch} slice)"
                return scope
            if r.status == "inside" and r.path:
                if r.path not in seen_paths:
                    seen_paths.add(r.path)
                    scope.inside.append(r.path)
                    queue.append(r.path)
            elif r.status == "external":
                ext_queue.append(r.dependency.name.rsplit("/", 1)[-1])
            else:
                scope.unknown = f"{r.dependency.name} ({r.where or 'unresolved'})"
                return scope
    while ext_queue:
        soname = ext_queue.popleft()
        if soname in scope.external:
            continue
        data = policydata.elf_external_exports(soname, policy, s.arch) if policy else None
        if data is None:
            scope.unknown = f"{soname} (no export data" + (f" for {policy} {s.arch})" if policy else ")")
            return scope
        scope.external[soname] = data
        ext_queue.extend(_IMPLIED.get(soname, ()))
    return scope


@lru_cache(maxsize=64)
def _external_names(sonames: tuple[str, ...], policy: str, arch: str) -> frozenset[str]:
    """What the external members of a closure export together (every one has data)."""
    return frozenset().union(*(policydata.elf_external_exports(n, policy, arch) or () for n in sonames))


def _elf_unbound(b: Binary, s: Slice, resolved, exports: _Exports, policy: str | None
                 ) -> tuple[list[str], _ElfScope] | None:
    """The missing imports of one ELF slice (``name`` or ``name@VERSION``), or None when the
    closure has a member without data."""
    weak = set(s.weak_imports)
    interp = not _is_executable(b, s)
    todo = [n for n in s.imports if n not in weak and not (interp and interpreter_symbol(n))]
    if not todo:
        return [], _ElfScope()
    scope = _elf_scope(b, s, resolved, policy, exports)
    if scope.unknown is not None:
        return None
    ext_names = _external_names(tuple(sorted(scope.external)), policy or "", s.arch)
    inside = [(p, exports.names(p, s.arch)) for p in scope.inside]
    missing: list[str] = []
    for name in todo:
        node = s.import_versions.get(name)
        if node is not None and policy and _wa504_node(node, policy, s.arch):
            continue  # a glibc/libstdc++ node newer than the tag: WA504 says it
        if name in ext_names:
            continue
        holders = [p for p, names in inside if name in names]
        if node is None:
            if holders:
                continue
        elif any(_binds_versioned(p, s.arch, name, node, scope, exports) for p in holders):
            continue
        missing.append(name if node is None else f"{name}@{node}")
    return missing, scope


def _binds_versioned(path: str, arch: str, name: str, node: str, scope: _ElfScope, exports: _Exports) -> bool:
    """Whether ld.so binds ``name@node`` to the definition of ``name`` in ``path`` (glibc's
    ``check_match``): one of that version, or an unversioned one of a library with symbol
    versions (its base version); in a library without symbol versions, only when that library
    is not the one the import's version requirement names -- approximated as: some other
    member of the closure defines the node (else the requirement names this library, and
    ld.so aborts: "Inconsistency detected by ld.so ... check_match: Assertion")."""
    have = exports.versions(path, arch, name)
    if node in have:
        return True
    if exports.nodes(path, arch):
        return None in have
    return any(node in exports.nodes(p, arch) for p in scope.inside if p != path)


def _elf_findings(wheel, resolved, exports: _Exports) -> list[Finding]:
    policy = _elf_policy(wheel)
    out: list[Finding] = []
    for b in wheel.libraries:
        if not b.ok or b.format != "elf" or b.path not in resolved:
            continue
        for s in b.slices:
            got = _elf_unbound(b, s, resolved, exports, policy)
            if not got or not got[0]:
                continue
            missing, scope = got
            # the library a version node belongs to is where the symbol was expected
            expected = _expected_elf(missing, scope, s.arch, exports)
            for lib, syms in expected.items():
                where = [*scope.inside, *(f"{n} ({policy} data)" for n in scope.external)]
                other = _other_versions(syms, scope, s.arch, exports)
                fails = ("ld.so aborts the process that loads it" if "without symbol versions" in other
                         else "the load fails with 'undefined symbol'")
                whom = (f"{lib}, which defines the other symbols of its version node, does not define"
                        if lib else "no library of its load closure defines")
                interp = "" if _is_executable(b, s) else ", and the interpreter"
                out.append(Finding(
                    "WA506",
                    f"{b.path} imports {len(syms)} symbol{'s' if len(syms) > 1 else ''} that {whom}"
                    f" ({examples(syms, SHOWN)}){other}: {fails}. Looked in its"
                    f" load closure: {examples(where, 6)}{interp}",
                    subject=b.path, paths=[b.path] + ([lib] if lib else []), symbols=sorted(syms), rule=RULE))
    return out


def _exports_of(sl: Slice | None) -> Sequence[Symbol]:
    """A slice's exports; a slice the scope holds is always readable (``_Exports.slice``)."""
    assert sl is not None
    return sl.exports


def _other_versions(syms: list[str], scope: _ElfScope, arch: str, exports: _Exports) -> str:
    """``; defined only as prov_b@PROV_2`` for versioned imports whose name the closure defines
    at other version nodes, or without versions ('' when neither)."""
    seen: list[str] = []
    unversioned: list[str] = []
    for item in syms:
        name, _, node = item.partition("@")
        if not node:
            continue
        for p in scope.inside:
            have = exports.versions(p, arch, name)
            if have and not exports.nodes(p, arch):
                unversioned.append(p)
            seen += [f"{name}@{v}" for v in sorted(v for v in have if v)]
    out = f"; defined only as {examples(list(dict.fromkeys(seen)), SHOWN)}" if seen else ""
    if unversioned:
        out += (f"; {examples(list(dict.fromkeys(unversioned)), 2)} defines them without symbol versions, where"
                " ld.so warns 'no version information available', then fails an assertion in check_match")
    return out


def _expected_elf(missing: list[str], scope: _ElfScope, arch: str, exports: _Exports) -> dict[str, list[str]]:
    """Missing imports grouped by the inside library that defines their version node ('' when
    none does, or the import is unversioned)."""
    out: dict[str, list[str]] = {}
    owners: dict[str, str] = {}
    for item in missing:
        name, _, node = item.partition("@")
        lib = ""
        if node:
            if node not in owners:
                owners[node] = next((p for p in scope.inside
                                     if any(sym.version == node for sym in _exports_of(exports.slice(p, arch)))), "")
            lib = owners[node]
        out.setdefault(lib, []).append(item)
    return out


# ---- Mach-O and PE: the library is named per import ------------------------------------------


def _reexported(path: str, arch: str, resolved, exports: _Exports) -> list[str] | None:
    """``path`` and the inside libraries it re-exports (transitively), or None when one of them
    could define more than its exports say (a re-export entry in its trie, a re-exported
    library outside the wheel)."""
    out: list[str] = []
    queue = deque([path])
    while queue:
        p = queue.popleft()
        if p in out:
            continue
        s = exports.slice(p, arch)
        if s is None or any("re-exported symbol" in n for n in s.notes):
            return None
        out.append(p)
        for r in resolved.get(p, {}).get(arch, []):
            if r.dependency.kind == "reexport":
                if r.status != "inside" or not r.path:
                    return None
                queue.append(r.path)
    return out


def _named_findings(wheel, resolved, exports: _Exports, fmt: str) -> list[Finding]:
    out: list[Finding] = []
    for b in wheel.libraries:
        if not b.ok or b.format != fmt or b.path not in resolved:
            continue
        for s in b.slices:
            weak = set(s.weak_imports)
            by_dep: dict[str, Resolution] = {}
            for r in resolved[b.path].get(s.arch, []):
                key = r.dependency.name.lower() if fmt == "pe" else r.dependency.name
                by_dep.setdefault(key, r)
            for lib, names in s.imports_from.items():
                if lib in (MACHO_FLAT, MACHO_EXECUTABLE):
                    continue  # the closure and the interpreter: libSystem / python, no export data
                r = by_dep.get(lib.lower() if fmt == "pe" else lib)
                if r is None or r.status != "inside" or not r.path:
                    continue  # system, python, provided or unresolved (WA501): no data
                libs = (_reexported(r.path, s.arch, resolved, exports) if fmt == "macho"
                        else [r.path] if exports.slice(r.path, s.arch) is not None else None)
                if libs is None:
                    continue
                have = frozenset().union(*(exports.names(p, s.arch) for p in libs))
                missing = [n for n in names if n not in weak and not n.startswith("#") and n not in have]
                if not missing:
                    continue
                arch = f" ({s.arch} slice)" if b.universal else ""
                if fmt == "pe":
                    fails = ("the first call into it fails (delay-loaded)" if r.dependency.kind == "delay"
                             else "Windows refuses to load it (the specified procedure could not be found)")
                    bound = f"imports from {lib}"
                else:
                    fails = "dyld refuses to load it (Symbol not found)"
                    bound = f"binds to {lib} (two-level namespace)"
                shown = r.path + (f" and the libraries it re-exports ({', '.join(libs[1:])})" if len(libs) > 1 else "")
                out.append(Finding(
                    "WA506",
                    f"{b.path}{arch} {bound} {len(missing)} symbol{'s' if len(missing) > 1 else ''} that"
                    f" {shown} does not export ({examples(missing, SHOWN)}): {fails}",
                    subject=b.path, paths=[b.path, r.path], symbols=sorted(missing), rule=RULE))
    return out


def check_unbound(wheel: Wheel, resolved: dict[str, dict[str, list[Resolution]]], rule: object = None) -> list[Finding]:
    """WA506 over every binary of ``wheel``; ``resolved`` is
    :func:`wheelaudit.checks.resolution.resolve_wheel`'s answer (path -> arch -> [Resolution])."""
    if rule is not None and not getattr(rule, "check", True):
        return []
    exports = _Exports({b.path: b for b in wheel.libraries})
    return (_elf_findings(wheel, resolved, exports) + _named_findings(wheel, resolved, exports, "macho")
            + _named_findings(wheel, resolved, exports, "pe"))


def unbound_symbols(wheel: Wheel, links: Links) -> list[Finding]:
    """WA506: imported symbols no library they can bind to defines."""
    return check_unbound(wheel, links.resolved)


#: the checks of this family: (codes, judge), in the order of a report
JUDGES: tuple[tuple[tuple[str, ...], Callable[[Wheel, Links], list[Finding]]], ...] = (
    (("WA506",), unbound_symbols),
)
FAMILY = Family("symbols", checks=tuple(on_links(codes, judge) for codes, judge in JUDGES))
