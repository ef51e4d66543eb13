"""What changed between two wheels: libraries, sizes, owners of namespaces, duplicates, linkage.

:func:`diff_wheels` compares two scanned wheels (two releases, or two builds of one release):

* libraries added, removed and renamed: a rename is a library gone from one path and another
  come at a new path with the same identity (SONAME / install name), the same name but for the
  hash or version a repair tool put in it (:func:`library_stem`: auditwheel's
  ``libXau-154567c4.so.6.0.0``, delvewheel's ``geos-<32 hex>.dll``, delocate's
  ``.dylibs/libXau.6.0.0.dylib``), or the same export set. An identity or a dependency that only
  follows such a rename (``libXau-154567c4.so.6.0.0`` → ``libXau-9a8b7c6d.so.6.0.0``) is not
  listed as a change of its own;
* for each library in both (renames followed): size (absolute and %), identity, architectures,
  export count, dependencies and rpaths added or removed;
* owners that moved: for each namespace / prefix (:func:`wheelaudit.review.dups.namespace_key`, refined
  one level where several libraries share a namespace, so that ``executorch::backends::mlx`` and
  ``executorch::backends::xnnpack`` are told apart) the libraries that carry it (strong exports or
  local symbols; weak-only carriers are inline copies and are left out), and for each duplicate
  group its libraries, when they differ between the wheels;
* duplicate groups that are new in NEW, and those that NEW resolved;
* data files (not Python sources) added or removed.

:func:`render_text` and :func:`diff_dict` draw it for ``wheelaudit diff``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from wheelaudit.review.dups import DupGroup, find_duplicates, is_boilerplate, namespace_key, wheel_dict
from wheelaudit.model.binary import Binary
from wheelaudit.model.wheel import Wheel

#: file suffixes that are source or metadata, not data that travels with code (diff, init)
NOT_DATA_SUFFIXES = (".py", ".pyi", ".pyc", ".pyx", ".pxd", ".typed", ".h", ".hpp", ".hh", ".c", ".cc", ".cpp",
             ".txt", ".md", ".rst", ".cfg", ".toml", ".yaml", ".yml", ".json", ".ini")


# --------------------------------------------------------------------------------------------
# Model


# --------------------------------------------------------------------------------------------
# Names that repair tools give the libraries they vendor

#: auditwheel: ``<name>-<8 hex>.so[.<version>]``, the hash repeated when a vendored library was
#: itself vendored before (``libgfortran-040039e1-0352e75f.so.5.0.0``)
_AUDITWHEEL = re.compile(r"^(?P<stem>.+?)(?P<hash>(?:-[0-9a-f]{8})+)(?P<rest>\.so(?:\.[0-9][0-9.]*)?)$")
#: delvewheel: ``<name>-<32 hex>.dll``
_DELVEWHEEL = re.compile(r"^(?P<stem>.+?)(?P<hash>-[0-9a-f]{32})(?P<rest>\.(?:dll|pyd))$", re.IGNORECASE)
#: a versioned ELF name ``libfoo.so.1.2.3`` and a versioned Mach-O name ``libfoo.1.2.3.dylib``
_ELF_VERSION = re.compile(r"^(?P<stem>[^/]+?\.so)\.[0-9][0-9.]*$")
_MACHO_VERSION = re.compile(r"^(?P<stem>[^./]+)\.[0-9][0-9.]*\.dylib$")


def unhashed(name: str) -> tuple[str, str | None]:
    """A library file name without the hash a repair tool put in it, and that tool:
    ``libXau-154567c4.so.6.0.0`` → (``libXau.so.6.0.0``, ``"auditwheel"``);
    ``geos-bf067cd6ff74ee0ad5f3ff52c7ef08c9.dll`` → (``geos.dll``, ``"delvewheel"``);
    any other name → (the name, None)."""
    for tool, rx in (("auditwheel", _AUDITWHEEL), ("delvewheel", _DELVEWHEEL)):
        m = rx.match(name)
        if m:
            return m["stem"] + m["rest"], tool
    return name, None


def library_stem(name: str) -> str:
    """The name of a library less repair hash, version and suffix, for pairing the same
    library across two builds: ``libXau-154567c4.so.6.0.0``, ``libXau.so.6`` and
    ``libXau.6.0.0.dylib`` → ``libXau``; ``geos-<32 hex>.dll`` → ``geos``;
    ``_imaging.cpython-311-darwin.so`` → ``_imaging``."""
    return unhashed(name)[0].split(".", 1)[0]


def glob_escape(text: str) -> str:
    """A literal file name inside a glob (``[``, ``{``, ``*``, ... escaped)."""
    return "".join("\\" + c if c in "\\*?[]{}," else c for c in text)


def name_glob_parts(name: str) -> tuple[str, str] | None:
    """A file-name glob that keeps matching ``name`` when it is rebuilt with a new repair hash
    or version, as (escaped library name, the rest), or None when ``name`` carries neither:
    ``libXau-154567c4.so.6.0.0`` → (``libXau``, ``-*.so*``); ``libfoo.so.1.2.3`` →
    (``libfoo``, ``.so*``); ``libXau.6.0.0.dylib`` → (``libXau``, ``{,.*}.dylib``);
    ``geos-<32 hex>.dll`` → (``geos``, ``-*.dll``). Glob characters in the name are escaped."""
    esc = glob_escape
    m = _AUDITWHEEL.match(name)
    if m:
        return esc(m["stem"]), "-*.so*"
    m = _DELVEWHEEL.match(name)
    if m:
        return esc(m["stem"]), "-*" + esc(m["rest"])
    m = _ELF_VERSION.match(name)
    if m:
        return esc(m["stem"][:-3]), ".so*"
    m = _MACHO_VERSION.match(name)
    if m:
        return esc(m["stem"]), "{,.*}.dylib"
    return None


def name_glob(name: str) -> str | None:
    """:func:`name_glob_parts` as one glob: ``libXau-154567c4.so.6.0.0`` → ``libXau-*.so*``."""
    parts = name_glob_parts(name)
    return None if parts is None else parts[0] + parts[1]


def _repair_tool(old: Binary, new: Binary) -> str | None:
    """Which repair tool's naming explains the rename (None: neither name carries a hash)."""
    tools = {unhashed(old.name)[1], unhashed(new.name)[1]} - {None}
    if tools:
        return sorted(t for t in tools if t)[0]
    if "/.dylibs/" in f"/{old.path}" and "/.dylibs/" in f"/{new.path}":
        return "delocate"
    return None


def _why_same_library(old: Binary, new: Binary) -> str:
    """Why two file names are one library: a repair tool's new hash, a new version, or the same
    extension module under another platform's suffix."""
    tool = _repair_tool(old, new)
    if tool in ("auditwheel", "delvewheel"):
        same_rest = unhashed(old.name)[0] == unhashed(new.name)[0]
        return f"new {tool} hash" + ("" if same_rest else " and version")
    if tool == "delocate":
        return "new version (delocate)"
    kinds = {"macho" if n.endswith(".dylib") else "elf" if ".so" in n else "other" for n in (old.name, new.name)}
    if len(kinds) == 1 and any(_ELF_VERSION.match(n) or _MACHO_VERSION.match(n) for n in (old.name, new.name)):
        return "new version"  # libfoo.so.1 / libfoo.so.2
    return "same module name"  # _x.cpython-311-darwin.so / _x.cpython-311-x86_64-linux-gnu.so, libfoo.so / libfoo.dylib


@dataclass
class Rename:
    old: str
    new: str
    why: str  # "same identity @rpath/libfoo.dylib" / "new auditwheel hash" / "same exports (12)"


@dataclass
class LibraryChange:
    """A library present in both wheels (at the same path, or renamed) and what changed in it."""

    path: str  # in NEW
    old_path: str
    size_old: int
    size_new: int
    identity: tuple[str | None, str | None] | None = None
    archs: tuple[list[str], list[str]] | None = None
    exports: tuple[int, int] = (0, 0)
    deps_added: list[str] = field(default_factory=list)
    deps_removed: list[str] = field(default_factory=list)
    rpaths_added: list[str] = field(default_factory=list)
    rpaths_removed: list[str] = field(default_factory=list)

    @property
    def size_delta(self) -> int:
        return self.size_new - self.size_old

    @property
    def size_percent(self) -> float | None:
        return None if not self.size_old else 100.0 * self.size_delta / self.size_old

    @property
    def linkage_changed(self) -> bool:
        return bool(self.deps_added or self.deps_removed or self.rpaths_added or self.rpaths_removed)

    @property
    def changed(self) -> bool:
        return bool(self.size_delta or self.identity or self.archs or self.exports[0] != self.exports[1]
                     or self.linkage_changed or self.path != self.old_path)

    def to_dict(self) -> dict[str, Any]:
        pct = self.size_percent
        return {
            "path": self.path,
            "old_path": self.old_path,
            "size": {"old": self.size_old, "new": self.size_new, "delta": self.size_delta,
                     "percent": None if pct is None else round(pct, 2)},
            "identity": None if self.identity is None else {"old": self.identity[0], "new": self.identity[1]},
            "archs": None if self.archs is None else {"old": self.archs[0], "new": self.archs[1]},
            "exports": {"old": self.exports[0], "new": self.exports[1]},
            "dependencies": {"added": self.deps_added, "removed": self.deps_removed},
            "rpaths": {"added": self.rpaths_added, "removed": self.rpaths_removed},
        }


Change = Literal["moved", "gained", "lost", "changed", "new", "gone"]


def _change(old: list[str], new: list[str]) -> Change:
    """moved: other libraries now; gained / lost: a library more / fewer; new / gone: none before / after."""
    o, n = set(old), set(new)
    if not o:
        return "new"
    if not n:
        return "gone"
    if not (o & n):
        return "moved"
    if o < n:
        return "gained"
    if n < o:
        return "lost"
    return "changed"


@dataclass
class OwnerMove:
    """A namespace or duplicate group whose carrying libraries differ between the wheels."""

    key: str
    kind: Literal["namespace", "duplicate group"]
    old: list[str]  # owners in OLD, as paths in NEW where the library was renamed
    new: list[str]
    change: Change
    evidence: str = ""  # "strong exports", "local symbols", ...

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "change": self.change, "old": self.old, "new": self.new,
                "evidence": self.evidence}


@dataclass
class WheelDiff:
    old: Wheel
    new: Wheel
    added: list[Binary] = field(default_factory=list)
    removed: list[Binary] = field(default_factory=list)
    renamed: list[Rename] = field(default_factory=list)
    changed: list[LibraryChange] = field(default_factory=list)  # only libraries where something changed
    unchanged: int = 0
    moves: list[OwnerMove] = field(default_factory=list)
    new_dups: list[DupGroup] = field(default_factory=list)
    resolved_dups: list[DupGroup] = field(default_factory=list)
    files_added: list[str] = field(default_factory=list)
    files_removed: list[str] = field(default_factory=list)
    implied: int = 0  # namespaces new / gone only with a library added / removed (not listed)

    @property
    def size_old(self) -> int:
        return sum(b.size for b in self.old.libraries)

    @property
    def size_new(self) -> int:
        return sum(b.size for b in self.new.libraries)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.renamed or self.changed or self.moves or self.new_dups
                    or self.resolved_dups or self.files_added or self.files_removed)

    def owners_moved(self, key: str) -> OwnerMove | None:
        return next((m for m in self.moves if m.key == key), None)


# --------------------------------------------------------------------------------------------
# Computing it


def _identity_base(b: Binary) -> str | None:
    ident = b.identity
    return ident.rsplit("/", 1)[-1] if ident else None


def _export_set(b: Binary) -> frozenset[str]:
    return frozenset(x.demangled for s in b.slices for x in s.exports)


def _match_renames(removed: list[Binary], added: list[Binary]) -> list[Rename]:
    out: list[Rename] = []
    left = list(removed)
    right = list(added)

    def pair(key, why, unique_left: bool = False) -> None:
        """Pair each library left with the one library right of the same (non-empty) ``key``."""
        for b in list(left):
            k = key(b)
            if not k:
                continue
            same = [a for a in right if key(a) == k]
            if len(same) == 1 and (not unique_left or sum(key(x) == k for x in left) == 1):
                out.append(Rename(b.path, same[0].path, why(b, same[0])))
                left.remove(b)
                right.remove(same[0])

    # same identity first (the strongest evidence), then the same name but for a repair hash or a
    # version in the same directory, then the same export set
    pair(_identity_base, lambda b, _a: f"same identity {b.identity}")
    pair(lambda b: (b.directory, library_stem(b.name)), _why_same_library, unique_left=True)
    pair(_export_set, lambda b, _a: f"same exports ({len(_export_set(b))})")
    return out


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _follows(old_ref: str, new_ref: str, renamed: dict[str, str]) -> bool:
    """Whether ``new_ref`` (an identity or a dependency) is ``old_ref`` with the file name of a
    renamed library swapped for its new one (``libXau-154567c4.so.6.0.0`` →
    ``libXau-9a8b7c6d.so.6.0.0``, ``@loader_path/libz.1.3.1.dylib`` → ``…/libz.1.3.1.zlib-ng.dylib``)."""
    base = _base(old_ref)
    new_base = renamed.get(base)
    return new_base is not None and old_ref[: len(old_ref) - len(base)] + new_base == new_ref


def _library_change(old: Binary, new: Binary, renamed: dict[str, str] | None = None) -> LibraryChange:
    """What changed in one library; ``renamed`` (old file name → new, of every renamed library)
    keeps an identity or a dependency that only follows a rename out of the changes."""
    renamed = renamed or {}
    ch = LibraryChange(path=new.path, old_path=old.path, size_old=old.size, size_new=new.size)
    if old.identity != new.identity and not (old.identity and new.identity
                                             and _follows(old.identity, new.identity, renamed)):
        ch.identity = (old.identity, new.identity)
    if old.archs != new.archs:
        ch.archs = (list(old.archs), list(new.archs))
    ch.exports = (sum(s.exports_count for s in old.slices), sum(s.exports_count for s in new.slices))
    od, nd = old.dependencies, new.dependencies
    ch.deps_added = [d for d in nd if d not in od]
    ch.deps_removed = [d for d in od if d not in nd]
    followed = [(o, n) for o in ch.deps_removed for n in ch.deps_added if _follows(o, n, renamed)]
    for o, n in followed:
        if o in ch.deps_removed and n in ch.deps_added:
            ch.deps_removed.remove(o)
            ch.deps_added.remove(n)
    orp, nrp = old.rpaths, new.rpaths
    ch.rpaths_added = [r for r in nrp if r not in orp]
    ch.rpaths_removed = [r for r in orp if r not in nrp]
    return ch


_JUNK_LOCALS = ("_", "ltmp", "l_", ".L", "GCC_except_table", "OUTLINED_FUNCTION", "$")


def _meaningful_local(name: str) -> bool:
    """A local symbol that names code (``mlx::core::add``, ``helper``), not a linker or compiler
    artefact (``_GLOBAL__sub_I_x``, ``__mh_dylib_header``, ``_dyld_private``, ``ltmp0``)."""
    return not name.startswith(_JUNK_LOCALS)


def _carried(wheel: Wheel) -> dict[str, dict[str, str]]:
    """library path → {name: "strong" | "weak" | "local"} (strong wins over local over weak)."""
    rank = {"weak": 0, "local": 1, "strong": 2}
    out: dict[str, dict[str, str]] = {}
    for b in wheel.libraries:
        if not b.ok:
            continue
        names: dict[str, str] = {}
        for sl in b.slices:
            for s in sl.exports:
                if is_boilerplate(s.name, s.version):
                    continue  # _init, _edata, version nodes: every library of a kind has them
                k = "weak" if s.weak else "strong"
                prev = names.get(s.demangled)
                if prev is None or rank[k] > rank[prev]:
                    names[s.demangled] = k
            for s in sl.locals:
                # local C names (static functions) are file-level detail; a local C++ name in a
                # namespace is code of that namespace compiled with hidden visibility
                if "::" not in s.demangled or not _meaningful_local(s.demangled):
                    continue
                prev = names.get(s.demangled)
                if prev is None or rank["local"] > rank[prev]:
                    names[s.demangled] = "local"
        out[b.path] = names
    return out


def namespace_carriers(old: Wheel, new: Wheel, rename: dict[str, str]) -> tuple[dict[str, dict[str, set[str]]], dict[str, dict[str, set[str]]]]:
    """Namespace key → {library path: evidence kinds} for OLD (paths mapped through ``rename``)
    and NEW, with the keys refined one level where several libraries carry a namespace."""
    sides = []
    for w, mapping in ((old, rename), (new, {})):
        carried = {mapping.get(p, p): names for p, names in _carried(w).items()}
        sides.append(carried)
    # a library stripped on one side and not on the other: its local symbols would read as a
    # namespace come or gone; count them only where both sides can show them
    unstripped = [{rename.get(b.path, b.path) for b in old.libraries if any(not s.stripped for s in b.slices)},
                  {b.path for b in new.libraries if any(not s.stripped for s in b.slices)}]
    paired = set(sides[0]) & set(sides[1])
    lopsided = {p for p in paired if (p in unstripped[0]) != (p in unstripped[1])}
    for carried in sides:
        for p in lopsided:
            carried[p] = {n: k for n, k in carried[p].items() if k != "local"}
    # which depth-2 keys several libraries of one wheel carry (strongly or locally)
    shared: set[str] = set()
    for carried in sides:
        owners2: dict[str, set[str]] = {}
        for path, names in carried.items():
            for n, kind in names.items():
                if kind != "weak":
                    owners2.setdefault(namespace_key(n, 2), set()).add(path)
        shared |= {k for k, libs in owners2.items() if len(libs) > 1}
    out = []
    for carried in sides:
        per: dict[str, dict[str, set[str]]] = {}
        for path, names in carried.items():
            for n, kind in names.items():
                k = namespace_key(n, 2)
                if k in shared:
                    k = namespace_key(n, 3)
                per.setdefault(k, {}).setdefault(path, set()).add(kind)
        out.append(per)
    return out[0], out[1]


def _owners(carriers: dict[str, set[str]]) -> tuple[list[str], str]:
    strong = sorted(p for p, kinds in carriers.items() if kinds - {"weak"})
    if not strong:
        return [], ""
    kinds = set().union(*(carriers[p] for p in strong)) - {"weak"}
    evidence = " and ".join(sorted({"strong": "strong exports", "local": "local symbols"}[k] for k in kinds))
    return strong, evidence


def _data_files(w: Wheel) -> set[str]:
    native = {b.path for b in w.libraries}
    return {f for f in w.files
            if f not in native and ".dist-info/" not in f and not f.endswith(NOT_DATA_SUFFIXES) and "/__pycache__/" not in f}


def diff_wheels(old: Wheel, new: Wheel) -> WheelDiff:
    """What changed from ``old`` to ``new`` (see the module docstring)."""
    d = WheelDiff(old, new)
    old_libs = {b.path: b for b in old.libraries}
    new_libs = {b.path: b for b in new.libraries}
    removed = [b for p, b in old_libs.items() if p not in new_libs]
    added = [b for p, b in new_libs.items() if p not in old_libs]
    d.renamed = _match_renames(removed, added)
    gone = {r.old for r in d.renamed}
    came = {r.new for r in d.renamed}
    d.removed = [b for b in removed if b.path not in gone]
    d.added = [b for b in added if b.path not in came]
    pairs = [(old_libs[p], new_libs[p]) for p in sorted(old_libs) if p in new_libs]
    pairs += [(old_libs[r.old], new_libs[r.new]) for r in d.renamed]
    renamed_names = {_base(r.old): _base(r.new) for r in d.renamed}
    for o, n in pairs:
        ch = _library_change(o, n, renamed_names)
        if ch.changed:
            d.changed.append(ch)
        else:
            d.unchanged += 1
    d.changed.sort(key=lambda c: c.path)
    rename = {r.old: r.new for r in d.renamed}

    # namespaces whose owners moved
    oc, nc = namespace_carriers(old, new, rename)
    added_paths = {b.path for b in d.added}
    removed_paths = {b.path for b in d.removed}
    for key in sorted(set(oc) | set(nc)):
        o_owners, o_ev = _owners(oc.get(key, {}))
        n_owners, n_ev = _owners(nc.get(key, {}))
        if o_owners == n_owners or (not o_owners and not n_owners):
            continue
        change = _change(o_owners, n_owners)
        if (change == "new" and set(n_owners) <= added_paths) or (change == "gone" and set(o_owners) <= removed_paths):
            d.implied += 1  # a namespace of a library added or removed: said by "added" / "removed"
            continue
        d.moves.append(OwnerMove(key, "namespace", o_owners, n_owners, change, n_ev or o_ev))

    # duplicate groups: new, resolved, and those whose libraries changed
    od = {(g.key, g.strength): g for g in find_duplicates(old)}
    nd = {(g.key, g.strength): g for g in find_duplicates(new)}
    for k, g in nd.items():
        if k not in od:
            d.new_dups.append(g)
            continue
        before = sorted(rename.get(p, p) for p in od[k].paths)
        after = sorted(g.paths)
        if before != after:
            d.moves.append(OwnerMove(g.key, "duplicate group", before, after, _change(before, after),
                                     f"{g.strength} duplicates"))
    d.resolved_dups = [g for k, g in od.items() if k not in nd]

    of, nf = _data_files(old), _data_files(new)
    d.files_added = sorted(nf - of)
    d.files_removed = sorted(of - nf)
    return d


# --------------------------------------------------------------------------------------------
# Rendering


def _size(n: int) -> str:
    from wheelaudit.render.text import human_size

    return human_size(abs(n))


def _delta(n: int, pct: float | None = None) -> str:
    sign = "+" if n > 0 else "−" if n < 0 else "±"
    text = f"{sign}{_size(n)}"
    if pct is not None:
        text += f" ({'+' if pct > 0 else '−' if pct < 0 else '±'}{abs(pct):.1f}%)"
    return text


def diff_dict(d: WheelDiff) -> dict[str, Any]:
    from wheelaudit import __version__
    from wheelaudit.model.report import SCHEMA_VERSION

    so, sn = d.size_old, d.size_new
    return {
        "schema": SCHEMA_VERSION,
        "tool": {"name": "wheelaudit", "version": __version__},
        "old": wheel_dict(d.old),
        "new": wheel_dict(d.new),
        "summary": {
            "libraries": {"old": len(d.old.libraries), "new": len(d.new.libraries)},
            "size": {"old": so, "new": sn, "delta": sn - so,
                     "percent": round(100.0 * (sn - so) / so, 2) if so else None},
            "added": len(d.added), "removed": len(d.removed), "renamed": len(d.renamed),
            "changed": len(d.changed), "unchanged": d.unchanged,
            "owners_moved": len(d.moves), "new_duplicates": len(d.new_dups),
            "resolved_duplicates": len(d.resolved_dups),
            "namespaces_of_added_or_removed_libraries": d.implied,
        },
        "libraries": {
            "added": [{"path": b.path, "size": b.size, "identity": b.identity} for b in d.added],
            "removed": [{"path": b.path, "size": b.size, "identity": b.identity} for b in d.removed],
            "renamed": [{"old": r.old, "new": r.new, "why": r.why} for r in d.renamed],
            "changed": [c.to_dict() for c in d.changed],
        },
        "owners": [m.to_dict() for m in d.moves],
        "duplicates": {"new": [g.to_dict() for g in d.new_dups], "resolved": [g.to_dict() for g in d.resolved_dups]},
        "files": {"added": d.files_added, "removed": d.files_removed},
    }


def render_text(d: WheelDiff, out: TextIO, color: bool = False, limit: int | None = 20) -> None:
    from wheelaudit.review.dups import shorten, term_width
    from wheelaudit.render.escape import visible
    from wheelaudit.render.text import aside, paint, table

    width = term_width()

    def section(title: str) -> None:
        out.write("\n" + paint(title, "bold", color) + "\n")

    def cut(items: list[Any]) -> tuple[list[Any], int]:
        if limit is None or len(items) <= limit:
            return items, 0
        return items[:limit], len(items) - limit

    def more(n: int, what: str) -> None:
        if n:
            out.write("  " + paint(f"… (+{n} more {what}; --all or --format json shows them)", "dim", color) + "\n")

    so, sn = d.size_old, d.size_new
    for label, w in (("old", d.old), ("new", d.new)):
        path = str(w.path)
        room = width - 5
        if len(path) > room:  # keep the file name: cut the directories
            path = "…" + path[len(path) - room + 1:]
        out.write(paint(label, "dim", color) + f"  {path}\n")
    if d.old.tags != d.new.tags:
        out.write(f"tags: {', '.join(d.old.tags) or '-'} → {', '.join(d.new.tags) or '-'}\n")
    if d.old.version != d.new.version:
        out.write(f"version: {d.old.version} → {d.new.version}\n")
    pct = 100.0 * (sn - so) / so if so else None
    out.write(f"native binaries: {len(d.old.libraries)} → {len(d.new.libraries)}, "
              f"{_size(so)} → {_size(sn)} ({_delta(sn - so, pct)})\n")
    if d.empty:
        aside(out, paint("no change in libraries, owners, duplicates or data files", "ok", color) + "\n")
        return

    if d.added or d.removed or d.renamed:
        section("Libraries")
        lines = [f"  removed  {b.path}  ({_size(b.size)})" for b in d.removed]
        lines += [f"  added    {b.path}  ({_size(b.size)})" for b in d.added]
        for r in d.renamed:
            one = f"  renamed  {r.old} → {_base(r.new)}  ({r.why})"
            if r.old.rsplit("/", 1)[0] == r.new.rsplit("/", 1)[0] and "/" in r.old and len(one) <= width:
                lines.append(one)  # same directory: the new file name is enough
            else:
                lines.append(f"  renamed  {r.old}\n        →  {r.new}  ({r.why})")
        shown, rest = cut(lines)
        for line in shown:
            out.write(line + "\n")
        more(rest, "libraries")

    sized = sorted((c for c in d.changed if c.size_delta), key=lambda c: (-abs(c.size_delta), c.path))
    if sized:
        section("Sizes")
        shown, rest = cut(sized)
        rows = [[c.path, _size(c.size_old), _size(c.size_new), _delta(c.size_delta, c.size_percent)] for c in shown]
        for line in table(rows, ["library", "old", "new", "change"]):
            out.write("  " + line + "\n")
        more(rest, "libraries")

    other = [c for c in d.changed if c.identity or c.archs or c.exports[0] != c.exports[1]]
    if other:
        section("Identity, architectures, exports")
        shown, rest = cut(other)
        for c in shown:
            out.write(f"  {visible(c.path)}\n")
            if c.identity:
                out.write("      " + shorten(f"identity  {c.identity[0] or '-'} → {c.identity[1] or '-'}", width - 6) + "\n")
            if c.archs:
                out.write(f"      archs     {','.join(c.archs[0]) or '-'} → {','.join(c.archs[1]) or '-'}\n")
            if c.exports[0] != c.exports[1]:
                out.write(f"      exports   {c.exports[0]} → {c.exports[1]} ({c.exports[1] - c.exports[0]:+d})\n")
        more(rest, "libraries")

    if d.moves:
        section("Owners that changed")
        shown, rest = cut(d.moves)
        for m in shown:
            style = "dim" if m.change in ("new", "gone") else "warning"
            out.write(f"  {paint(m.change.ljust(7), style, color)}  {paint(m.key, 'bold', color)}  ({m.kind}"
                      + (f"; {m.evidence}" if m.evidence else "") + ")\n")
            if m.old:
                out.write("      was  " + shorten(", ".join(m.old), width - 11) + "\n")
            if m.new:
                out.write("      now  " + shorten(", ".join(m.new), width - 11) + "\n")
        more(rest, "owners")
    if d.implied:
        out.write("  " + paint(f"({d.implied} namespace{'s' if d.implied != 1 else ''} of the libraries added or removed "
                               "not listed)", "dim", color) + "\n")

    if d.new_dups or d.resolved_dups:
        section("Duplicates")
        for title, groups, style in (("new", d.new_dups, "error"), ("resolved", d.resolved_dups, "ok")):
            shown, rest = cut(groups)
            for g in shown:
                rest_text = shorten(f"{g.count} symbol{'s' if g.count != 1 else ''} in {', '.join(g.paths)}",
                                    max(20, width - 6 - len(title) - len(g.strength) - len(g.key)))
                out.write(f"  {paint(title, style, color)}  {g.strength} {paint(g.key, 'bold', color)}: {rest_text}\n")
            more(rest, f"{title} duplicate groups")

    linkage = [c for c in d.changed if c.linkage_changed]
    if linkage:
        section("Dependencies and rpaths")
        shown, rest = cut(linkage)
        for c in shown:
            out.write(f"  {visible(c.path)}\n")
            for dep in c.deps_removed:
                out.write(f"      − dep    {dep}\n")
            for dep in c.deps_added:
                out.write(f"      + dep    {dep}\n")
            for r in c.rpaths_removed:
                out.write(f"      − rpath  {r}\n")
            for r in c.rpaths_added:
                out.write(f"      + rpath  {r}\n")
        more(rest, "libraries")

    if d.files_added or d.files_removed:
        section("Data files")
        rows = [f"  − {f}" for f in d.files_removed] + [f"  + {f}" for f in d.files_added]
        shown, rest = cut(rows)
        for line in shown:
            out.write(line + "\n")
        more(rest, "files")

    aside(out, f"\n{len(d.added)} added, {len(d.removed)} removed, {len(d.renamed)} renamed, "
              f"{len(d.changed)} changed, {d.unchanged} unchanged; {len(d.moves)} owner change"
              f"{'s' if len(d.moves) != 1 else ''}, {len(d.new_dups)} new duplicate group"
              f"{'s' if len(d.new_dups) != 1 else ''}\n")
