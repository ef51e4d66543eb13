#!/usr/bin/env python3
"""Our ELF and Mach-O readers against pyelftools, macholib and LIEF on real wheels (network; not in
the default tests).

    python scripts/compare_readers_real.py [--cache DIR] [--max-diffs N] [--cap N] [NAME ...]

NAME is any of the wheels of ``scripts/real_wheels.py`` (default: executorch-macos,
executorch-linux, mlx-metal, numpy-linux, numpy-macos); its ``fetch()`` downloads them
(``pip download --no-deps --only-binary=:all: --platform ... --python-version 3.11``) into the
cache, ``DIR/<platform tag>/<wheel>`` (default ``$WHEELAUDIT_WHEEL_CACHE`` or
``~/.cache/wheelaudit-wheels``). A flat directory of wheels downloaded by hand works too
(``--cache /tmp/realwheels``): a wheel lying directly in DIR whose file name carries the right
distribution, version and platform tag is symlinked into ``DIR/<platform tag>/`` first, where
``fetch()`` finds it, so nothing is downloaded again.

Every native member of each wheel (found by its magic bytes, not its name) is extracted into a
temporary directory and read by our reader and by the references, per slice, with the functions
the differential tests use, imported from ``tests/test_elf_reader.py`` and
``tests/test_macho_reader.py`` (so with their normalizations, and no others):

* ELF: ``ours`` / ``pyelftools_facts`` / ``lief_facts``, fields ``ALL_FIELDS``: arch, kind,
  identity (DT_SONAME), dependencies (name, kind), rpaths (path, DT_RPATH/DT_RUNPATH),
  needs_versions, exports (name, binding, type, version), imports, locals (name, type), stripped.
* Mach-O: ``our_view`` / ``macholib_view`` / ``lief_view`` per slice: arch, kind, offset, identity
  (LC_ID_DYLIB), dependencies (name, kind), rpaths, min_os, exports (name, weak), imports,
  locals; and, as ``check_file`` does, the func/data type of each export against
  ``lief_export_types``. The tests compare Mach-O rpaths by path; here our (path, kind) pairs are
  compared with each reference's LC_RPATH paths paired with ``lc_rpath``, their only possible kind.

Also, per wheel: ``wheelaudit.scan()`` of the wheel in place must find the same binaries and give
slice for slice the same facts as the reader gave on the extracted files; and a self-check plants
differences in our facts of one binary (an export dropped, an import added, the identity
changed) and requires the comparison to report each against both references.

The reference quirks the test modules document (``QUIRKS``) are normalized inside their
functions; this script only counts, with small re-derivations of the same conditions
(``quirks_elf``, ``quirks_macho``), how often real binaries meet them. A difference that remains
is therefore not one of them and is listed as such.

Prints, per wheel, a table of how many binaries agree with each reference on each field (and in
how many our value is non-empty, so that agreement on nothing shows), every difference (capped),
the quirks met, and totals with the number of symbols compared. Exit 0 when everything agrees,
1 otherwise. Needs the test extra (``pip install -e '.[test]'``: pytest and lief; pyelftools and
macholib are dependencies of wheelaudit). Results: docs/real-wheel-comparison.md.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
import warnings
import zipfile
from dataclasses import dataclass, field
from importlib.metadata import version as dist_version
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

from packaging.utils import canonicalize_name, parse_wheel_filename  # noqa: E402
from real_wheels import DEFAULT_CACHE, WHEELS, fetch  # noqa: E402

import test_elf_reader as E  # noqa: E402  (the ELF differential: ours, pyelftools_facts, lief_facts)
import test_macho_reader as M  # noqa: E402  (the Mach-O differential: our_view, macholib_view, ...)
from wheelaudit import scan  # noqa: E402
from wheelaudit.binary import macho, read_binary  # noqa: E402

# lief's CPU_TYPE enum has no arm64_32: it warns and hands back the raw number (as in the tests)
warnings.filterwarnings("ignore", message=".*is not a valid CPU_TYPE", category=RuntimeWarning)

#: the wheels compared, by their names in scripts/real_wheels.py
NAMES = ["executorch-macos", "executorch-linux", "mlx-metal", "numpy-linux", "numpy-macos"]

ELF_MAGIC = b"\x7fELF"
MACHO_MAGICS = M.MACHO_MAGICS  # thin 32/64-bit both byte orders, fat and fat64
FAT_MAGICS = {b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf"}

ELF_FIELDS = E.ALL_FIELDS
MACHO_FIELDS = ("arch", "kind", "offset", "identity", "dependencies", "rpaths", "min_os",
                "exports", "imports", "locals")
#: every row of the table, in order; a field a format lacks shows "-"
ROWS = ("arch", "kind", "offset", "identity", "dependencies", "rpaths", "min_os", "needs_versions",
        "exports", "export_types", "imports", "locals", "stripped")


# ---------------------------------------------------------------------------------------------
# the wheels
# ---------------------------------------------------------------------------------------------


def adopt_flat(name: str, cache: Path) -> None:
    """Link a wheel lying directly in ``cache`` into ``cache/<platform>/``, where fetch() looks."""
    req, platform = WHEELS[name]
    dist, version = req.split("==")
    dest = cache / platform
    stem = dist.replace("-", "_")
    if dest.is_dir() and any(dest.glob(f"{stem}-{version}-*.whl")):
        return
    for p in sorted(cache.glob("*.whl")):
        try:
            wdist, wver, _build, tags = parse_wheel_filename(p.name)
        except ValueError:
            continue
        if wdist == canonicalize_name(dist) and str(wver) == version and platform in {t.platform for t in tags}:
            dest.mkdir(parents=True, exist_ok=True)
            (dest / p.name).symlink_to(os.path.relpath(p, dest))
            return


def locate(name: str, cache: Path) -> Path:
    adopt_flat(name, cache)
    path = fetch(name, cache)
    _req, platform = WHEELS[name]
    tags = parse_wheel_filename(path.name)[3]
    if platform not in {t.platform for t in tags}:
        raise SystemExit(f"{path} is not a {platform} wheel")
    return path


def native_members(wheel: Path) -> list[tuple[str, str]]:
    """(member name, "elf" | "macho") for every wheel member whose first bytes are a native magic."""
    out = []
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.is_dir():
                continue
            with z.open(info) as fh:
                head = fh.read(8)
            if head[:4] == ELF_MAGIC:
                out.append((info.filename, "elf"))
            elif head[:4] in FAT_MAGICS:  # CAFEBABE is also Java's: a fat header has few architectures
                if len(head) == 8 and 0 < int.from_bytes(head[4:8], "big") < 45:
                    out.append((info.filename, "macho"))
            elif head[:4] in MACHO_MAGICS:
                out.append((info.filename, "macho"))
    return out


# ---------------------------------------------------------------------------------------------
# one binary
# ---------------------------------------------------------------------------------------------


@dataclass
class Result:
    member: str
    fmt: str
    refs: tuple[str, ...]
    archs: list[str] = field(default_factory=list)
    #: (field, reference) -> equal on every slice
    equal: dict[tuple[str, str], bool] = field(default_factory=dict)
    diffs: list[str] = field(default_factory=list)
    symbols: collections.Counter = field(default_factory=collections.Counter)
    #: fields whose value is non-empty (truthy) in our facts of some slice: agreement is not on nothing
    nonempty: set[str] = field(default_factory=set)
    #: how often each known reference quirk (QUIRKS) was met, and normalized, in this binary
    quirks: collections.Counter = field(default_factory=collections.Counter)


#: The quirks of the references that the test modules document and normalize away, as they do.
#: They are applied inside the test modules' reference functions; here they are only counted, so
#: that the report says which of them real binaries actually exercise. A difference left after
#: them is, by construction, not one of them.
QUIRKS = {
    "lief_stab_imports": "lief 1.0 lists debug stabs (N_GSYM, value 0) among a Mach-O's imported_symbols: "
                         "left out (test_macho_reader.lief_view)",
    "lief_reexports": "lief lists re-exported symbols among exported_symbols: not exports of this image "
                      "(test_macho_reader._lief_reexport)",
    "lief_no_trie": "Mach-O image without an export trie: lief lists no exported_symbols, so its nlist "
                    "external definitions are taken (test_macho_reader.lief_view)",
    "lief_fat64": "lief 1.0 cannot open FAT_MAGIC_64 files: each slice is handed to it separately "
                  "(test_macho_reader.lief_binaries)",
    "macholib_padding": "macholib hands load-command strings with their NUL padding: cut at the first NUL "
                        "(test_macho_reader._cstr)",
    "macholib_common": "macholib lists common symbols (N_UNDF with a size) among undefsyms: not imports "
                       "(test_macho_reader.macholib_view)",
    "macholib_pext": "macholib lists private-extern definitions (N_PEXT) among extdefsyms: locals, not "
                     "exports (test_macho_reader.macholib_view)",
    "elf_lief_paths": "lief's DynamicEntryRpath.paths drops a trailing empty entry: .rpath/.runpath are "
                      "split instead (test_elf_reader.lief_facts)",
    "elf_at_names": "a reference gives a name with its @version suffix (GNU ld's .symtab): cut at '@' "
                    "(test_elf_reader.classify / local_of)",
}


def quirks_elf(path: Path) -> collections.Counter:
    import lief

    q: collections.Counter = collections.Counter()
    b = lief.ELF.parse(str(path))
    if b is None:
        return q
    TAG = lief.ELF.DynamicEntry.TAG
    for entry in b.dynamic_entries:
        if entry.tag == TAG.RPATH:
            q["elf_lief_paths"] += entry.rpath.split(":") != list(entry.paths)
        elif entry.tag == TAG.RUNPATH:
            q["elf_lief_paths"] += entry.runpath.split(":") != list(entry.paths)
    for s in b.symtab_symbols:
        if "@" in s.name and E.local_of(s.name, int(s.binding.value), int(s.type.value),
                                        int(s.visibility.value), s.shndx == 0):
            q["elf_at_names"] += 1
    for i, s in enumerate(b.dynamic_symbols):
        if i and "@" in s.name and E.classify(s.name, int(s.binding.value), int(s.type.value),
                                              int(s.visibility.value), s.shndx == 0, None):
            q["elf_at_names"] += 1
    return q


def quirks_macho(path: Path) -> collections.Counter:
    from macholib.MachO import MachO
    from macholib.SymbolTable import SymbolTable

    q: collections.Counter = collections.Counter()
    with open(path, "rb") as fh:
        q["lief_fat64"] += fh.read(4) == b"\xca\xfe\xba\xbf"
    for b, _offset in M.lief_binaries(path):
        q["lief_stab_imports"] += sum(1 for s in b.imported_symbols if s.raw_type & M.N_STAB)
        if b.has_dyld_info or b.has_dyld_exports_trie:
            q["lief_reexports"] += sum(1 for s in b.exported_symbols if M._lief_reexport(s))
        else:
            q["lief_no_trie"] += 1
    m = MachO(str(path))
    strings = {M.LC_ID_DYLIB, M.LC_RPATH, *M.REF_DEPS}
    defined = (M.N_SECT, M.N_ABS)
    for h in m.headers:
        for lc, _cmd, data in h.commands:
            if lc.cmd in strings and len(data) > len(data.split(b"\0", 1)[0]) + 1:
                q["macholib_padding"] += 1
        st = SymbolTable(m, h)
        q["macholib_common"] += sum(1 for nl, _ in st.undefsyms if nl.n_value != 0)
        q["macholib_pext"] += sum(1 for nl, _ in st.extdefsyms if nl.n_type & M.N_PEXT
                                  and not nl.n_type & M.N_STAB and nl.n_type & M.N_TYPE in defined)
    return q


def describe(label: str, key: str, ref: str, a, b, cap: int) -> str:
    if isinstance(a, (set, list)) and isinstance(b, (set, list)):
        ca, cb = collections.Counter(a), collections.Counter(b)
        only_a = sorted((ca - cb).elements(), key=repr)
        only_b = sorted((cb - ca).elements(), key=repr)
        if not only_a and not only_b:  # same elements, other order
            return f"{label}: {key}: same entries, other order: ours {a!r:.300}, {ref} {b!r:.300}"
        more_a = f" (+{len(only_a) - cap} more)" if len(only_a) > cap else ""
        more_b = f" (+{len(only_b) - cap} more)" if len(only_b) > cap else ""
        return (f"{label}: {key}: {len(only_a)} only ours {only_a[:cap]}{more_a}; "
                f"{len(only_b)} only {ref} {only_b[:cap]}{more_b}")
    return f"{label}: {key}: ours {a!r}, {ref} {b!r}"


def record(res: Result, key: str, ref: str, a, b, label: str, cap: int) -> None:
    ok = a == b
    res.equal[(key, ref)] = res.equal.get((key, ref), True) and ok
    if not ok:
        line = describe(label, key, ref, a, b, cap)
        # the documented quirks are normalized before this point (see QUIRKS): what is left is not one
        res.diffs.append(f"{line}  [not a known quirk of {ref}]")


def guarded(fn, *args):
    try:
        return fn(*args), None
    except Exception as exc:  # noqa: BLE001 - a reference that cannot read a file is a result too
        return None, f"{type(exc).__name__}: {exc}"


def plant(view: dict) -> None:
    """Plant differences in our facts of one slice (the self-check: the comparison must see them)."""
    if view["exports"]:
        view["exports"].pop()
    view["imports"].add("planted_import_that_no_reader_sees")
    view["identity"] = "planted.identity"


PLANTED = ("exports", "imports", "identity")


def _failed(res: Result, ref: str, keys, why: str) -> None:
    res.diffs.append(f"{res.member}: {ref}: {why}")
    for key in keys:
        res.equal[(key, ref)] = False


def check_elf(path: Path, member: str, cap: int, planted: bool = False) -> Result:
    res = Result(member, "elf", ("pyelftools", "lief"))
    data = path.read_bytes()
    binary = read_binary(data, member)
    if binary is None or binary.error or len(binary.slices) != 1:
        for ref in res.refs:
            _failed(res, ref, ELF_FIELDS, f"read_binary: {binary and (binary.error or binary.archs)}")
        return res
    o = E.ours(path)
    res.archs = [o["arch"]]
    res.nonempty = {k for k in ELF_FIELDS if o[k]}
    res.symbols.update(exported=len(o["exports"]), imported=len(o["imports"]), local=len(o["locals"]),
                       weak=sum(x[1] == "weak" for x in o["exports"]),
                       versioned=sum(x[3] is not None for x in o["exports"]))
    if planted:
        plant(o)
    for ref, fn in (("pyelftools", E.pyelftools_facts), ("lief", E.lief_facts)):
        theirs, err = guarded(fn, path)
        if err:
            _failed(res, ref, ELF_FIELDS, f"failed: {err}")
            continue
        for key in ELF_FIELDS:
            record(res, key, ref, o[key], theirs[key], member, cap)
    if not planted:
        res.quirks, err = guarded(quirks_elf, path)
        if err:
            res.diffs.append(f"{member}: counting reference quirks failed: {err}")
    return res


def _macho_rpaths(view: dict, slice_rpaths=None) -> list[tuple[str, str]]:
    if slice_rpaths is not None:  # ours: the kind as the reader gives it
        return [(r.path, r.kind) for r in slice_rpaths]
    return [(p, "lc_rpath") for p in view["rpaths"]]  # a reference's LC_RPATH entries


def check_macho(path: Path, member: str, cap: int, planted: bool = False) -> Result:
    res = Result(member, "macho", ("macholib", "lief"))
    data = path.read_bytes()
    binary = read_binary(data, member)
    if binary is None or binary.error:
        for ref in res.refs:
            _failed(res, ref, MACHO_FIELDS, f"read_binary: {binary and binary.error}")
        res.equal[("export_types", "lief")] = False
        return res
    slices = macho.parse(data)
    ours = [M.our_view(s) for s in slices]
    for s, v in zip(slices, ours, strict=True):
        v["rpaths"] = _macho_rpaths(v, s.rpaths)
        res.nonempty |= {k for k in MACHO_FIELDS if v[k]}
        res.symbols.update(exported=len(v["exports"]), imported=len(v["imports"]), local=len(v["locals"]),
                           weak=sum(w for _n, w in v["exports"]))
    res.archs = [v["arch"] for v in ours]
    if planted:
        plant(ours[-1])
    for ref, fn in (("macholib", M.macholib_view), ("lief", M.lief_view)):
        views, err = guarded(fn, path)
        if err is None and len(views) != len(ours):
            err = f"{len(views)} slices, ours {len(ours)}"
        if err:
            _failed(res, ref, MACHO_FIELDS, err)
            continue
        for a, b in zip(ours, views, strict=True):
            b = dict(b, rpaths=_macho_rpaths(b))
            label = f"{member} [{a['arch']}]" if len(ours) > 1 else member
            for key in MACHO_FIELDS:
                record(res, key, ref, a[key], b[key], label, cap)
    types, err = guarded(M.lief_export_types, path)
    if err or len(types) != len(slices):
        _failed(res, "lief", ["export_types"], f"export types: {err or f'{len(types)} slices'}")
    else:
        for s, t in zip(slices, types, strict=True):
            # as test_macho_reader.check_file: the type of each export both readers list
            mine = {x.name: x.type for x in s.exports}
            a = {(n, mine[n]) for n in t if n in mine}
            b = {(n, k) for n, k in t.items() if n in mine}
            label = f"{member} [{s.arch}]" if len(slices) > 1 else member
            record(res, "export_types", "lief", a, b, label, cap)
            res.symbols.update(typed=len(a))
            if a:
                res.nonempty.add("export_types")
    if not planted:
        res.quirks, err = guarded(quirks_macho, path)
        if err:
            res.diffs.append(f"{member}: counting reference quirks failed: {err}")
    return res


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------


def self_check(results: list[Result], paths: dict[str, Path], cap: int) -> str | None:
    """Re-run the comparison on the smallest binary with differences planted in our facts.

    Returns a failure message when a planted difference goes unnoticed, else None."""
    r = min(results, key=lambda r: paths[r.member].stat().st_size)
    check = check_elf if r.fmt == "elf" else check_macho
    got = check(paths[r.member], r.member, cap, planted=True)
    missed = [f"{key} vs {ref}" for key in PLANTED for ref in got.refs
              if got.equal.get((key, ref), True) and (key != "exports" or key in r.nonempty)]
    if missed:
        return f"self-check: differences planted in {r.member} went unnoticed: {', '.join(missed)}"
    print(f"   self-check: differences planted in our facts of {r.member} (an export dropped, an import "
          f"added, the identity changed) are all reported against {' and '.join(got.refs)}")
    return None


def scan_check(wheel: Path, paths: dict[str, Path]) -> str | None:
    """The scanner itself (``wheelaudit.scan``, reading the wheel in place through its zip directory)
    must find the same binaries and give the same facts as the reader did on the extracted files."""
    scanned = {b.path: b for b in scan(wheel).libraries}
    if set(scanned) != set(paths):
        return (f"scan(): binaries differ from the magic-byte search: only scan {sorted(set(scanned) - set(paths))}, "
                f"only here {sorted(set(paths) - set(scanned))}")
    differ = [m for m, p in paths.items() if scanned[m].slices != read_binary(p.read_bytes(), m).slices]
    if differ:
        return f"scan(): facts differ from the extracted files' for {len(differ)} binaries: {differ[:5]}"
    print(f"   scan() of the wheel in place: the same {len(paths)} binaries, every slice's facts identical "
          f"to those of the extracted files")
    return None


def report_wheel(name: str, wheel: Path, results: list[Result], seconds: float, max_diffs: int) -> int:
    fmts = collections.Counter(r.fmt for r in results)
    archs = collections.Counter(a for r in results for a in r.archs)
    nslices = sum(archs.values())
    sym = sum((r.symbols for r in results), collections.Counter())
    print(f"== {name}: {wheel.name}")
    print(f"   {len(results)} native binaries ({', '.join(f'{n} {f}' for f, n in sorted(fmts.items()))}), "
          f"{nslices} slices ({', '.join(f'{a} x{n}' for a, n in sorted(archs.items()))}); {seconds:.1f} s")
    extra = f", {sym['versioned']} with a symbol version" if fmts["elf"] else ""
    print(f"   symbols compared: {sym['exported']} exported ({sym['weak']} weak{extra}), {sym['imported']} imported, "
          f"{sym['local']} local ({sym['exported'] + sym['imported'] + sym['local']} in all)")
    refs = list(dict.fromkeys(ref for r in results for ref in r.refs))
    print("   (ours non-empty: binaries where our value is non-empty; for stripped: true)")
    print(f"   {'field':16}{'ours non-empty':>16}" + "".join(f"{'ours == ' + ref:>22}" for ref in refs))
    for key in ROWS:
        cells = []
        for ref in refs:
            applicable = [r for r in results if (key, ref) in r.equal]
            if not applicable:
                cells.append(f"{'-':>22}")
                continue
            n = sum(r.equal[(key, ref)] for r in applicable)
            mark = "" if n == len(applicable) else "  !"
            cells.append(f"{f'{n}/{len(applicable)}{mark}':>22}")
        if any(c.strip() != "-" for c in cells):
            nonempty = sum(key in r.nonempty for r in results)
            print(f"   {key:16}{nonempty:>16}" + "".join(cells))
    quirks = sum((r.quirks for r in results), collections.Counter())
    met = [(k, n) for k, n in quirks.items() if n]
    if met:
        print("   known reference quirks met, normalized as the tests do:")
        for k, n in sorted(met):
            print(f"     {n:6} x {QUIRKS[k]}")
    else:
        print("   known reference quirks met: none")
    diffs = [d for r in results for d in r.diffs]
    if diffs:
        print(f"   {len(diffs)} differences:")
        for d in diffs[:max_diffs]:
            print(f"     - {d}")
        if len(diffs) > max_diffs:
            print(f"     ... and {len(diffs) - max_diffs} more")
    else:
        print("   no differences: every field of every slice equal to both references")
    return len(diffs)


def main() -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("names", nargs="*", default=NAMES, help=f"any of {', '.join(WHEELS)} (default: {', '.join(NAMES)})")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                    help=f"wheel cache (default: $WHEELAUDIT_WHEEL_CACHE or {DEFAULT_CACHE})")
    ap.add_argument("--max-diffs", type=int, default=40, help="differences listed per wheel (default 40)")
    ap.add_argument("--cap", type=int, default=6, help="entries listed per side of a difference (default 6)")
    args = ap.parse_args()
    for n in args.names:
        if n not in WHEELS:
            ap.error(f"unknown wheel {n!r}; known: {', '.join(WHEELS)}")

    import lief

    lief.logging.disable()
    print(f"wheelaudit {dist_version('wheelaudit')} against pyelftools {dist_version('pyelftools')}, "
          f"macholib {dist_version('macholib')}, lief {lief.__version__} (python {sys.version.split()[0]})")
    print()
    failures, totals, quirks = 0, collections.Counter(), collections.Counter()
    t_all = time.perf_counter()
    for name in args.names:
        wheel = locate(name, args.cache)
        t0 = time.perf_counter()
        results: list[Result] = []
        with tempfile.TemporaryDirectory(prefix="wa-compare-") as tmp, zipfile.ZipFile(wheel) as z:
            paths = {}
            for member, fmt in native_members(wheel):
                dest = Path(tmp) / member
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(z.read(member))
                paths[member] = dest
                results.append((check_elf if fmt == "elf" else check_macho)(dest, member, args.cap))
            seconds = time.perf_counter() - t0
            if not results:
                print(f"== {name}: {wheel.name}: no native binaries found\n")
                failures += 1
                continue
            failures += report_wheel(name, wheel, results, seconds, args.max_diffs)
            problem = scan_check(wheel, paths)
            if problem:
                print(f"   {problem}")
                failures += 1
            problem = self_check(results, paths, args.cap)
            if problem:
                print(f"   {problem}")
                failures += 1
        print()
        totals.update(wheels=1, binaries=len(results), slices=sum(len(r.archs) for r in results),
                      agreeing=sum(all(r.equal.values()) and not r.diffs for r in results))
        for r in results:
            totals.update(r.symbols)
            quirks.update(r.quirks)
    sym = totals["exported"] + totals["imported"] + totals["local"]
    print(f"== total: {totals['wheels']} wheels, {totals['binaries']} binaries, {totals['slices']} slices; "
          f"{totals['agreeing']}/{totals['binaries']} binaries equal to both references on every field")
    print(f"   symbols compared (ours, summed over slices): {sym} = {totals['exported']} exported + "
          f"{totals['imported']} imported + {totals['local']} local, each against two references; "
          f"{totals['typed']} Mach-O export types against lief")
    print("   known reference quirks normalized: "
          + (", ".join(f"{k} {n}" for k, n in sorted(quirks.items()) if n) or "none"))
    print(f"   {failures} differences or failures; {time.perf_counter() - t_all:.1f} s")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
