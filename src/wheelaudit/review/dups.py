"""Symbols defined by more than one library, grouped into candidate components.

A release engineer writing ``[[component]]`` rows wants to know which code ships twice. This
module finds every exported definition (demangled) that more than one library of a wheel defines,
and groups them by namespace or prefix (:func:`namespace_key`): for C++ the first two ``::``
levels (``mlx::core``), for C the prefix up to the first ``_`` (``xnn_``, ``pthreadpool_``), the
first word of a camelCase name (``deflateInit_`` -> ``deflate*``, ``SharpYuvConvert`` ->
``Sharp*``), and Fortran names (lower case, one trailing ``_``: ``dgemm_``) together. Names every
binary of its kind carries by construction (:func:`is_boilerplate`: ``_init``, ``_edata``,
``__bss_start``, ELF version nodes, ``PyInit_<module>``) are never duplicates.

Strong and weak duplicates are kept apart. A symbol defined *strongly* by two or more libraries is
a second copy of code (two registries, two thread pools); a symbol that all but at most one of its
definers define *weakly* is usually an inline function or a template instantiation, which matters
less. :func:`find_duplicates` returns the strong groups first, each list sorted by how much is
duplicated.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from wheelaudit.model.binary import Binary
from wheelaudit.model.wheel import Wheel

Strength = Literal["strong", "weak"]

#: key used for names that have no namespace and no ``_`` prefix (``main``, ``environ``)
NO_PREFIX = "(no prefix)"


# --------------------------------------------------------------------------------------------
# Namespace keys


def qualified_parts(name: str, limit: int) -> list[str]:
    """The leading ``::`` components of a demangled C++ name, at most ``limit`` + 1 of them.

    Return types (``int mlx::core::f<float>()``) and special-name prefixes (``vtable for X``,
    ``non-virtual thunk to X``) are skipped: the first component starts after the last space at
    template depth 0 before the first ``::``. Template arguments and parameter lists never split.
    The last element is the rest of the name (possibly empty when the name has no ``::``).
    """
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    n = len(name)
    while i < n:
        c = name[i]
        if c == "<":
            # "operator<" / "operator<<" / "operator<=" are names, not template brackets
            if name.endswith("operator", 0, i) or name.endswith("operator<", 0, i):
                i += 1
                continue
            depth += 1
        elif c == ">":
            if name.endswith("operator", 0, i) or name.endswith("operator-", 0, i) or name.endswith("operator>", 0, i):
                i += 1
                continue
            depth = max(0, depth - 1)
        elif c == "(" and depth == 0:
            if name.startswith("(anonymous namespace)", i):
                i += len("(anonymous namespace)")
                continue
            if not name.endswith("operator", 0, i):
                break  # the parameter list: the qualified name ends here
        elif c == " " and depth == 0 and not parts:
            if not name.endswith("operator", 0, i):
                start = i + 1  # a return type or "vtable for": the name starts after it
        elif c == ":" and depth == 0 and name.startswith("::", i):
            parts.append(name[start:i])
            if len(parts) > limit:
                return parts
            i += 2
            start = i
            continue
        i += 1
    parts.append(name[start:i])
    return parts


#: key for Fortran names: lower case and digits with one trailing ``_`` (``sgemm_``, ``caxpy_``)
FORTRAN = "*_ (Fortran)"

# --------------------------------------------------------------------------------------------
# Boilerplate: names a binary carries because a linker or an interpreter put them there

#: symbols the static linker or the C runtime's start files define in every image that has them
#: (``_init``/``_fini`` in every manylinux2014 and musllinux library, ``_edata``/``_end``/
#: ``__bss_start`` where GNU ld exports them, Mach-O's ``__mh_*_header`` less its underscore).
#: The ``_ITM_*``, ``__gmon_start__`` and ``__cxa_finalize`` of crtstuff are weak *imports* in
#: real wheels; they are listed so that a binary that does define them is no exception.
LINKER_SYMBOLS = frozenset({
    "_init", "_fini", "_edata", "_end", "__bss_start", "__dso_handle", "_GLOBAL_OFFSET_TABLE_",
    "_DYNAMIC", "__data_start", "data_start", "_IO_stdin_used", "__TMC_END__", "__gmon_start__",
    "__cxa_finalize", "_PROCEDURE_LINKAGE_TABLE_", "__ehdr_start", "__executable_start",
    "__init_array_start", "__init_array_end", "__fini_array_start", "__fini_array_end",
    "__preinit_array_start", "__preinit_array_end", "__GNU_EH_FRAME_HDR",
    "_mh_dylib_header", "_mh_bundle_header", "_mh_execute_header", "_dyld_private",
})
LINKER_PREFIXES = ("__libc_csu_", "_ITM_", "__x86.get_pc_thunk.")


def is_boilerplate(name: str, version: str | None = None) -> bool:
    """Whether a defined symbol says nothing about which code a binary carries: linker and C
    runtime symbols (:data:`LINKER_SYMBOLS`), an ELF version node (a symbol named after the
    version that defines it: ``GFORTRAN_8``, ``LIBTIFF_4.0``, ``QUADMATH_1.0``), or an extension
    module's init function (``PyInit_<module>``: each module exports its own, and two modules of
    one name in different packages are not one copy of code twice)."""
    return (name in LINKER_SYMBOLS or name.startswith(LINKER_PREFIXES) or name.startswith("PyInit_")
            or (version is not None and name == version))


def _is_fortran(name: str) -> bool:
    """``dgemm_``, ``sgesv_``, ``fpback_``: lower case letters and digits, one trailing ``_``."""
    body = name[:-1]
    return name.endswith("_") and body[:1].isalpha() and body.isascii() and body.isalnum() and body == body.lower()


def _camel_word(name: str) -> str | None:
    """The first word of a camelCase or PascalCase C name (no ``_`` but a trailing one):
    ``deflateInit_`` → ``deflate``, ``ImagingSectionEnter`` → ``Imaging``, ``XMLParseFile`` →
    ``XML``; None for a name without a lower-to-upper case step (``MODES``, ``deflate``)."""
    body = name[:-1] if name.endswith("_") else name
    if not body.isascii() or not body.isalnum() or not body[:1].isalpha():
        return None
    for i in range(1, len(body)):
        if body[i].isupper() and body[i - 1].islower():
            return body[:i]  # deflate|Init, Imaging|Section
        if body[i].islower() and body[i - 1].isupper() and i >= 2 and body[i - 2].isupper():
            return body[:i - 1]  # XML|Parse
    return None


def c_prefix(name: str, words: bool = True) -> str:
    """The group of a C name: ``xnn_create_runtime_v4`` → ``xnn_``; ``__cxa_throw`` → ``__cxa_``;
    ``sgemm_`` (Fortran: lower case, its only ``_`` ends it) → ``*_ (Fortran)``; a camelCase name
    → its first word and ``*`` (``deflateInit_`` → ``deflate*``, ``SharpYuvConvert`` → ``Sharp*``);
    ``main``, ``MODES`` → ``(no prefix)``. Without ``words`` (the leaf of a C++ name) only a
    ``_`` prefix counts."""
    lead = len(name) - len(name.lstrip("_"))
    cut = name.find("_", lead)
    if 0 < cut - lead and cut < len(name) - 1:
        return name[: cut + 1]
    if not words:
        return NO_PREFIX
    if lead == 0 and _is_fortran(name):
        return FORTRAN
    word = _camel_word(name[lead:])
    if word is not None:
        return name[:lead] + word + "*"
    return NO_PREFIX


def strip_templates(text: str) -> str:
    """``selfadjoint_rank1_update<double, int>`` → ``selfadjoint_rank1_update``."""
    if "<" not in text or text.startswith("operator"):
        return text
    out = []
    depth = 0
    for c in text:
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def _mangled_scopes(name: str, limit: int) -> list[str] | None:
    """The leading scopes of an Itanium-mangled name the demangler gave up on
    (``_ZGVZN10executorch7cpublas4gemm...`` → ``["executorch", "cpublas", "gemm"]``), or None."""
    i = 2
    n = len(name)
    while i < n and name[i] in "GTZ":  # guard variables, thunks/vtables, local entities
        if name[i] in "GT" and i + 1 < n and name[i + 1].isalpha():
            i += 2
        else:
            i += 1
    if i < n and name[i] == "N":
        i += 1
        while i < n and name[i] in "rVKRO":  # cv- and ref-qualifiers
            i += 1
    out: list[str] = []
    if name.startswith("St", i):
        out.append("std")
        i += 2
    while i < n and name[i].isdigit() and len(out) <= limit:
        j = i
        while j < n and name[j].isdigit():
            j += 1
        length = int(name[i:j])
        if length <= 0 or j + length > n:
            break
        out.append(name[j:j + length])
        i = j + length
    return out or None


def namespace_key(name: str, depth: int = 2) -> str:
    """The group of a demangled symbol name: its first ``depth`` namespace levels, or a C prefix.

    ``mlx::core::add(...)`` → ``mlx::core``; ``executorch::runtime::Result<int>::get()`` →
    ``executorch::runtime``; ``foo::bar()`` → ``foo``; ``vtable for mlx::core::array`` →
    ``mlx::core``; ``pthreadpool_create`` → ``pthreadpool_``; ``cblas_sgemm`` → ``cblas_``.
    """
    if name.startswith("{") and "(" in name and name.endswith(")}"):
        name = name[name.index("(") + 1:-2]  # "{vtable(std::bad_optional_access)}"
    if name.startswith("_Z"):  # the demangler could not read it: read the scopes from the mangling
        mangled = _mangled_scopes(name, depth)
        if mangled:
            scopes = mangled[:-1] if len(mangled) > 1 else mangled
            return "::".join(scopes[:depth])
    parts = qualified_parts(name, depth)
    scopes = parts[:-1]  # every component but the leaf is a scope (namespace or class)
    if scopes:
        return "::".join(strip_templates(p) for p in scopes[:depth])
    leaf = parts[-1] if parts else name
    # camelCase and Fortran readings hold for a plain C identifier, not for the leaf of a C++
    # name (``getMachineByteOrder()::endian_check``, ``foo(int)``)
    return c_prefix(leaf or name, words=leaf == name)


def common_scope(names: Iterable[str]) -> str | None:
    """The deepest ``::`` scope all ``names`` share (``executorch::backends::mlx::MLXBackend``),
    or None when they share none (C names, or different top-level namespaces)."""
    common: list[str] | None = None
    names = list(names)
    readable = [n for n in names if not n.startswith("_Z")]  # skip names the demangler gave up on
    for name in readable or names:
        scopes = qualified_parts(name, 64)[:-1]
        if common is None:
            common = scopes
        else:
            k = 0
            while k < len(common) and k < len(scopes) and common[k] == scopes[k]:
                k += 1
            common = common[:k]
        if not common:
            return None
    return "::".join(common) if common else None


def word_prefix(names: Sequence[str]) -> str:
    """The longest common prefix of ``names`` that does not end inside a word: ``SharpYuvConvert``
    and ``SharpYuvComputeConversionMatrix`` → ``SharpYuv`` (not ``SharpYuvCo``)."""
    import os.path

    p = os.path.commonprefix(list(names))
    while p and not all(len(n) == len(p) or not n[len(p)].islower() for n in names):
        p = p[:-1]
    return p


def sentinel_pattern(names: Sequence[str], key: str) -> str:
    """A ``symbols`` entry covering ``names``: ``<deepest common scope>::*``, else ``<prefix>*`` for
    a C prefix, ``<common words>*`` for camelCase names (``ImagingSection*``), else the first
    name itself (names without a common prefix)."""
    scope = common_scope(names)
    if scope:
        return f"{scope}::*"
    if key not in (NO_PREFIX, FORTRAN) and any("::" in n or n.startswith("_Z") for n in names):
        return f"{key}::*"
    if key.endswith("_") and key not in (NO_PREFIX, FORTRAN):
        return f"{key}*"
    if len(names) > 1:
        common = word_prefix(names)
        if len(common) >= 3 and common.strip("_"):
            return f"{common}*"
    return min(names) if names else key


# --------------------------------------------------------------------------------------------
# Who defines what


@dataclass(frozen=True)
class Definition:
    """One library's definition of a symbol: strong unless every slice defines it weakly."""

    path: str
    weak: bool


def library_definitions(b: Binary) -> dict[str, bool]:
    """Demangled exported names of ``b`` → weak (True only when every definition is weak),
    boilerplate (:func:`is_boilerplate`) left out."""
    out: dict[str, bool] = {}
    for sl in b.slices:
        for s in sl.exports:
            if is_boilerplate(s.name, s.version):
                continue
            prev = out.get(s.demangled)
            out[s.demangled] = s.weak if prev is None else (prev and s.weak)
    return out


def definitions(wheels: Sequence[Wheel]) -> dict[str, list[Definition]]:
    """Every exported name (demangled) → the libraries that define it, across ``wheels``."""
    out: dict[str, list[Definition]] = {}
    for w in wheels:
        for b in w.libraries:
            if not b.ok:
                continue
            for name, weak in library_definitions(b).items():
                out.setdefault(name, []).append(Definition(b.path, weak))
    return out


# --------------------------------------------------------------------------------------------
# Duplicate groups


@dataclass
class DupSymbol:
    name: str
    definers: list[Definition]

    @property
    def strong_definers(self) -> list[str]:
        return [d.path for d in self.definers if not d.weak]

    @property
    def strength(self) -> Strength:
        return "strong" if len(self.strong_definers) >= 2 else "weak"

    @property
    def copies(self) -> int:
        """Extra copies: definers beyond the first."""
        return len(self.definers) - 1


@dataclass
class LibraryShare:
    """One library's part in a duplicate group."""

    path: str
    symbols: int = 0  # duplicated symbols of the group this library defines
    strong: int = 0  # ... of which strongly
    examples: list[str] = field(default_factory=list)


@dataclass
class DupGroup:
    """Duplicated symbols sharing a namespace or prefix, defined by the same kind of copies."""

    key: str  # "mlx::core", "xnn_"
    strength: Strength
    symbols: list[DupSymbol]
    libraries: list[LibraryShare]
    pattern: str = ""  # a `symbols` entry covering the group, for a [[component]] row

    @property
    def count(self) -> int:
        return len(self.symbols)

    @property
    def copies(self) -> int:
        return sum(s.copies for s in self.symbols)

    @property
    def paths(self) -> list[str]:
        return [lib.path for lib in self.libraries]

    def to_dict(self, examples: int = 5) -> dict[str, Any]:
        return {
            "key": self.key,
            "strength": self.strength,
            "pattern": self.pattern,
            "symbols_count": self.count,
            "copies": self.copies,
            "libraries": [{"path": lib.path, "symbols": lib.symbols, "strong": lib.strong,
                           "examples": lib.examples[:examples]} for lib in self.libraries],
            "symbols": [{"name": s.name, "definers": [{"path": d.path, "weak": d.weak} for d in s.definers]}
                        for s in self.symbols],
        }


EXAMPLES = 3


def find_duplicates(wheels: Wheel | Sequence[Wheel], *, min_count: int = 1, depth: int = 2) -> list[DupGroup]:
    """Symbols defined by more than one library, grouped by namespace / prefix.

    ``wheels`` is one wheel, or several taken as one install. Groups under one top-level C++
    namespace that are duplicated between the very same libraries are merged (``inmemoryfs::A``
    and ``inmemoryfs::B`` → ``inmemoryfs``): one static archive linked twice, one candidate
    component. So are C names without a ``_`` prefix (camelCase words, single words)
    duplicated between the very same libraries (``MODES``, ``findModeID`` and
    ``getModeData`` of one object file linked into four modules). Strong groups come first,
    then weak ones; within each, the groups with the most extra copies first. ``min_count``
    drops groups with fewer duplicated symbols.
    """
    ws = [wheels] if isinstance(wheels, Wheel) else list(wheels)
    buckets: dict[tuple[str, Strength], list[DupSymbol]] = {}
    for name, defs in definitions(ws).items():
        if len(defs) < 2:
            continue
        sym = DupSymbol(name, sorted(defs, key=lambda d: d.path))
        buckets.setdefault((namespace_key(name, depth), sym.strength), []).append(sym)
    buckets = _merge_same_libraries(buckets)
    groups: list[DupGroup] = []
    for (key, strength), syms in buckets.items():
        if len(syms) < min_count:
            continue
        syms.sort(key=lambda s: s.name)
        shares: dict[str, LibraryShare] = {}
        for s in syms:
            for d in s.definers:
                sh = shares.setdefault(d.path, LibraryShare(d.path))
                sh.symbols += 1
                if not d.weak:
                    sh.strong += 1
                if len(sh.examples) < EXAMPLES * 2:
                    sh.examples.append(s.name)
        libs = sorted(shares.values(), key=lambda x: (-x.symbols, x.path))
        groups.append(DupGroup(key, strength, syms, libs, sentinel_pattern([s.name for s in syms], key)))
    groups.sort(key=lambda g: (g.strength != "strong", -g.copies, -len(g.libraries), g.key))
    return groups


def _merge_same_libraries(buckets: dict[tuple[str, Strength], list[DupSymbol]]) -> dict[tuple[str, Strength], list[DupSymbol]]:
    clusters: dict[tuple[str, Strength, frozenset[str]], list[str]] = {}
    for (key, strength), syms in buckets.items():
        if "::" not in key and not _is_cxx_key(key, syms):
            continue
        libs = frozenset(d.path for s in syms for d in s.definers)
        clusters.setdefault((key.split("::", 1)[0], strength, libs), []).append(key)
    out = dict(buckets)
    for (top, strength, _libs), keys in clusters.items():
        if len(keys) < 2:
            continue
        merged: list[DupSymbol] = []
        for k in keys:
            merged += out.pop((k, strength))
        out.setdefault((top, strength), []).extend(merged)
    # C names with no prefix of their own (camelCase words, single words) that are duplicated
    # between the very same libraries: one object file linked twice. Fortran names stay a
    # group of their own (another language's objects).
    loose: dict[tuple[Strength, frozenset[str]], list[tuple[str, DupSymbol]]] = {}
    for (key, strength) in [k for k in out if _is_loose(k[0])]:
        for sym in out.pop((key, strength)):
            libs = frozenset(d.path for d in sym.definers)
            loose.setdefault((strength, libs), []).append((key, sym))
    for (strength, _libs), members in loose.items():
        loose_keys = {k for k, _ in members}
        syms = [sym for _, sym in members]
        if len(loose_keys) == 1:
            (key,) = loose_keys
        else:
            common = word_prefix([sym.name for sym in syms])
            key = f"{common}*" if len(common) >= 3 and common.strip("_") else NO_PREFIX
        out.setdefault((key, strength), []).extend(syms)
    return out


def _is_loose(key: str) -> bool:
    """A C key that is no prefix a library chose (``xnn_``): a camelCase word, or none."""
    return key == NO_PREFIX or (key.endswith("*") and "::" not in key)


def _is_cxx_key(key: str, syms: list[DupSymbol]) -> bool:
    """A one-level C++ key (``inmemoryfs`` from ``typeinfo for inmemoryfs::Buffer``)."""
    return any("::" in s.name for s in syms[:1])


# --------------------------------------------------------------------------------------------
# Display helpers shared by the manual-audit commands (owners, dups, diff)


def term_width(default: int = 120) -> int:
    """Columns of the terminal, or ``default`` when the output is not one (``COLUMNS`` wins)."""
    import shutil

    return max(60, shutil.get_terminal_size((default, 24)).columns)


def wheel_dict(w: Wheel) -> dict[str, Any]:
    return {"path": str(w.path), "name": w.name, "version": w.version, "tags": [str(t) for t in w.tags]}
