"""Time wheelaudit's ELF reader against pyelftools and lief on one file. Not a test.

    python bench/elf_reader_speed.py PATH [--repeat N] [--readers wheelaudit,names-only,pyelftools,lief]

Each reader runs in its own child process (so imports and caches do not leak between them) and
does comparable work: the dynamic symbol table (name, binding, type, visibility, section), the
dynamic tags (NEEDED, SONAME, RPATH/RUNPATH), the version requirements, and ``.symtab`` when the
file has one. "wheelaudit" is the full reader (``readers.elf.parse`` on an mmap, with C++
demangling, the demangle cache cleared before every run); "names-only" is the same with
demangling switched off, to show what reading costs apart from demangling. pyelftools is not
asked for per-symbol versions (that would make it much slower still).

Reports the best and median wall time of N runs, each reader's ratio to wheelaudit, the child's
peak RSS above its post-import baseline, and symbol counts as a sanity check.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import resource
import statistics
import subprocess
import sys
import time

READERS = ("wheelaudit", "names-only", "pyelftools", "lief")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def run_wheelaudit(path: str, demangle: bool) -> dict:
    from wheelaudit.binary import demangle as demangling
    from wheelaudit.binary import elf

    if not demangle:
        demangling.demangle = lambda name: name
    demangling._demangle_cached.cache_clear()
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        (s,) = elf.parse(mm)
    return {"exports": len(s.exports), "imports": len(s.imports), "locals": len(s.locals),
            "needed": len(s.dependencies)}


def run_pyelftools(path: str) -> dict:
    from elftools.elf.elffile import ELFFile

    counts = {"dynsym": 0, "defined": 0, "symtab": 0, "needed": 0}
    with open(path, "rb") as fh:
        f = ELFFile(fh)
        for sec in f.iter_sections():
            t = sec["sh_type"]
            if t == "SHT_DYNSYM":
                for sym in sec.iter_symbols():
                    _ = (sym.name, sym["st_info"]["bind"], sym["st_info"]["type"], sym["st_other"]["visibility"])
                    counts["dynsym"] += 1
                    counts["defined"] += sym["st_shndx"] != "SHN_UNDEF"
            elif t == "SHT_SYMTAB":
                for sym in sec.iter_symbols():
                    _ = (sym.name, sym["st_info"]["bind"], sym["st_info"]["type"])
                    counts["symtab"] += 1
            elif t == "SHT_DYNAMIC":
                for tag in sec.iter_tags():
                    if tag.entry.d_tag == "DT_NEEDED":
                        counts["needed"] += 1
                    elif tag.entry.d_tag in ("DT_SONAME", "DT_RPATH", "DT_RUNPATH"):
                        _ = tag.entry.d_val
            elif t == "SHT_GNU_verneed":
                for _vn, auxs in sec.iter_versions():
                    _ = [a.name for a in auxs]
    return counts


def run_lief(path: str) -> dict:
    import lief

    lief.logging.disable()
    b = lief.ELF.parse(path)
    counts = {"dynsym": 0, "defined": 0, "symtab": 0, "needed": 0}
    for s in b.dynamic_symbols:
        _ = (s.name, s.binding, s.type, s.visibility)
        counts["dynsym"] += 1
        counts["defined"] += s.shndx != 0
    for s in b.symtab_symbols:
        _ = (s.name, s.binding, s.type)
        counts["symtab"] += 1
    counts["needed"] = len(b.libraries)
    _ = [e.tag for e in b.dynamic_entries]
    _ = [a.name for r in b.symbols_version_requirement for a in r.get_auxiliary_symbols()]
    return counts


def child(reader: str, path: str, repeat: int) -> None:
    # import what the reader needs before the baseline, so RSS growth is the reading itself
    if reader in ("wheelaudit", "names-only"):
        import wheelaudit.binary.elf  # noqa: F401
        fn = lambda: run_wheelaudit(path, demangle=reader == "wheelaudit")  # noqa: E731
    elif reader == "pyelftools":
        import elftools.elf.elffile  # noqa: F401
        fn = lambda: run_pyelftools(path)  # noqa: E731
    else:
        import lief  # noqa: F401
        fn = lambda: run_lief(path)  # noqa: E731
    baseline = _rss_mb()
    times, counts = [], {}
    for _ in range(repeat):
        t = time.perf_counter()
        counts = fn()
        times.append(time.perf_counter() - t)
    print(json.dumps({"times": times, "rss_mb": _rss_mb() - baseline, "counts": counts}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--readers", default=",".join(READERS))
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.path, args.repeat)
        return 0
    size = os.path.getsize(args.path)
    print(f"{args.path}: {size / 1e6:.1f} MB, best / median of {args.repeat} runs")
    results = {}
    for reader in args.readers.split(","):
        proc = subprocess.run([sys.executable, __file__, args.path, "--repeat", str(args.repeat), "--child", reader],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"  {reader:<11} failed: {proc.stderr.strip().splitlines()[-1:]}")
            continue
        results[reader] = json.loads(proc.stdout.strip().splitlines()[-1])
    base = min(results["wheelaudit"]["times"]) if "wheelaudit" in results else None
    for reader, r in results.items():
        best, median = min(r["times"]), statistics.median(r["times"])
        ratio = f"{best / base:6.1f}x" if base else ""
        print(f"  {reader:<11} {best:7.3f} s  {median:7.3f} s  {ratio}  +{r['rss_mb']:.0f} MB RSS  {r['counts']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
