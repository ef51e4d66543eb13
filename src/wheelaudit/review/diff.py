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

import textwrap
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from wheelaudit.review.dups import DupGroup, find_duplicates, is_boilerplate, namespace_key, wheel_dict
from wheelaudit.checks.release.abi import FolderMove, folder_moves, pair_libraries
from wheelaudit.checks.release.names import (ELF_VERSION as _ELF_VERSION, MACHO_VERSION as _MACHO_VERSION,  # noqa: F401
                                             _AUDITWHEEL, _DELVEWHEEL, library_stem, unhashed)  # (re-exported)
from wheelaudit.model.binary import Binary
from wheelaudit.model.finding import Finding
from wheelaudit.model import messages
from wheelaudit.model.messages import human_size, plural
from wheelaudit.model.wheel import Wheel

#: file suffixes that are source or metadata, not data that travels with code (diff, init)
NOT_DATA_SUFFIXES = (".py", ".pyi", ".pyc", ".pyx", ".pxd", ".typed", ".h", ".hpp", ".hh", ".c", ".cc", ".cpp",
             ".txt", ".md", ".rst", ".cfg", ".toml", ".yaml", ".yml", ".json", ".ini")


# --------------------------------------------------------------------------------------------
# Model


# --------------------------------------------------------------------------------------------
# Names that repair tools give the libraries they vendor: the release engine's
# (wheelaudit.checks.release.names), which pairs libraries for ``check --baseline`` too


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
    #: folders whose libraries moved together, file names kept (numpy's core → _core): each one
    #: line of the text report; their libraries are in ``renamed`` too
    folders: list[FolderMove] = field(default_factory=list)
    #: what ``check --baseline`` reports for NEW against OLD (WA801-WA803, default policy)
    abi: list[Finding] = field(default_factory=list)
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
        return not (self.abi or self.added or self.removed or self.renamed or self.changed or self.moves or self.new_dups
                    or self.resolved_dups or self.files_added or self.files_removed)

    def owners_moved(self, key: str) -> OwnerMove | None:
        return next((m for m in self.moves if m.key == key), None)


# --------------------------------------------------------------------------------------------
# Computing it


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
    from wheelaudit.checks.release.baseline import compare

    d.abi = compare(old, new)
    # (one pairing with check --baseline: wheelaudit.checks.release.abi.pair_libraries)
    pairing = pair_libraries(old.libraries, new.libraries)
    d.renamed = [Rename(m.old, m.new, m.why) for _o, _n, m in pairing.moved]
    d.folders, _rest = folder_moves(m for _o, _n, m in pairing.moved)
    d.removed = sorted(pairing.removed, key=lambda b: b.path)
    d.added = sorted(pairing.added, key=lambda b: b.path)
    pairs = sorted(pairing.same, key=lambda t: t[0].path) + [(o, n) for o, n, _m in pairing.moved]
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
    return human_size(abs(n), binary=True, trim=False)


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
            "moved_folders": [{"old": f.old, "new": f.new, "count": len(f.paths)} for f in d.folders],
            "changed": [c.to_dict() for c in d.changed],
        },
        "owners": [m.to_dict() for m in d.moves],
        "duplicates": {"new": [g.to_dict() for g in d.new_dups], "resolved": [g.to_dict() for g in d.resolved_dups]},
        "files": {"added": d.files_added, "removed": d.files_removed},
    }


def whole_paths(paths: list[str], width: int) -> str:
    """Paths joined by ", " within ``width`` where they fit, and "(+N more)" for the rest: a
    path is shown whole or not at all (the first one always, whatever its length)."""
    shown: list[str] = []
    used = 0
    for i, p in enumerate(paths):
        rest = len(paths) - i - 1
        tail = len(messages.more(rest))
        need = len(p) + (2 if shown else 0)
        if shown and used + need + tail > width:
            break
        shown.append(p)
        used += need
    return ", ".join(shown) + messages.more(len(paths) - len(shown))


def render_text(d: WheelDiff, out: TextIO, color: bool = False, limit: int | None = 20) -> None:
    from wheelaudit.review.dups import term_width
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
            out.write("  " + paint("…" + messages.more(n, what, note="--all or --format json shows them"), "dim", color) + "\n")

    so, sn = d.size_old, d.size_new
    for label, w in (("old", d.old), ("new", d.new)):
        path = str(w.path)
        if len(path) > width - 5 and w.path.parent != w.path:  # the file name, then its folder: both whole
            out.write(paint(label, "dim", color) + f"  {w.path.name}\n     in {w.path.parent}\n")
        else:
            out.write(paint(label, "dim", color) + f"  {path}\n")
    if d.old.tags != d.new.tags:
        out.write(f"tags: {', '.join(map(str, d.old.tags)) or '-'} → {', '.join(map(str, d.new.tags)) or '-'}\n")
    if d.old.version != d.new.version:
        out.write(f"version: {d.old.version} → {d.new.version}\n")
    pct = 100.0 * (sn - so) / so if so else None
    out.write(f"native binaries: {len(d.old.libraries)} → {len(d.new.libraries)}, "
              f"{_size(so)} → {_size(sn)} ({_delta(sn - so, pct)})\n")
    if d.empty:
        aside(out, paint("no change in libraries, owners, duplicates or data files", "ok", color) + "\n")
        return

    if d.abi:
        section("Breaks a consumer sees (as check --baseline reports them)")
        shown, rest = cut(d.abi)
        for f in shown:
            style = "error" if f.severity == "error" else "warning"
            # (wrapped between words: a path is never cut)
            lines = textwrap.wrap(f"{f.code} {f.severity}  {f.message}", width=width - 2, subsequent_indent="    ",
                                  break_long_words=False, break_on_hyphens=False)
            lines[0] = lines[0].replace(f.severity, paint(f.severity, style, color), 1)
            out.write("".join(f"  {line}\n" for line in lines))
        more(rest, "breaks")

    if d.added or d.removed or d.renamed:
        section("Libraries")
        lines = [f"  removed  {b.path}  ({_size(b.size)})" for b in d.removed]
        lines += [f"  added    {b.path}  ({_size(b.size)})" for b in d.added]
        in_folders = {old for f in d.folders for old, _new in f.paths}
        for f in d.folders:
            lines.append(f"  moved    {f.old or '.'}/ → {f.new or '.'}/  ({len(f.paths)} libraries, file names kept)")
        for r in (r for r in d.renamed if r.old not in in_folders):
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
                out.write(f"      identity  {c.identity[0] or '-'} → {c.identity[1] or '-'}\n")  # (never cut: paths)
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
                out.write("      was  " + whole_paths(m.old, width - 11) + "\n")
            if m.new:
                out.write("      now  " + whole_paths(m.new, width - 11) + "\n")
        more(rest, "owners")
    if d.implied:
        out.write("  " + paint(f"({plural(d.implied, 'namespace')} of the libraries added or removed "
                               "not listed)", "dim", color) + "\n")

    if d.new_dups or d.resolved_dups:
        section("Duplicates")
        for title, groups, style in (("new", d.new_dups, "error"), ("resolved", d.resolved_dups, "ok")):
            shown, rest = cut(groups)
            for g in shown:
                head = f"{plural(g.count, 'symbol')} in "
                rest_text = head + whole_paths(g.paths, max(20, width - 6 - len(title) - len(g.strength)
                                                            - len(g.key) - len(head)))
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
        file_lines = [f"  − {f}" for f in d.files_removed] + [f"  + {f}" for f in d.files_added]
        shown, rest = cut(file_lines)
        for line in shown:
            out.write(line + "\n")
        more(rest, "files")

    aside(out, f"\n{len(d.added)} added, {len(d.removed)} removed, {len(d.renamed)} renamed, "
              f"{len(d.changed)} changed, {d.unchanged} unchanged; {len(d.moves)} owner change"
              f"{'s' if len(d.moves) != 1 else ''}, {len(d.new_dups)} new duplicate group"
              f"{'s' if len(d.new_dups) != 1 else ''}\n")
