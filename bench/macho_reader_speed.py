"""Time wheelaudit's Mach-O reader against macholib and lief on one file.

    python bench/macho_reader_speed.py PATH [--repeat N]
    python bench/macho_reader_speed.py --make-big OUT.dylib [--functions 100000] [--pad-mb 300]

Each reader runs in its own subprocess (so that peak RSS is its own), ``--repeat`` times; the best
wall time (with its CPU time: the box may be shared) and the peak RSS are reported, with ratios
to ours. What each one does:

* ours:     mmap the file, ``wheelaudit.binary.macho.parse`` (every slice: load commands, export
            trie, symbol table, strings search with no needles)
* ours-nodemangle: the same with C++ demangling stubbed out (``Symbol.demangled`` is computed
            eagerly for every export and local; cpp_demangle costs ~7-16 us a name)
* macholib: ``MachO(path)`` and ``SymbolTable(m, h)`` for every header
* lief:     ``lief.MachO.parse(path)`` and the exported / imported symbols of every slice

``--make-big`` builds a large arm64 dylib (clang + ld64.lld, the stub SDK of fixtures/sdk) with
many exported C++ functions and local helpers plus an initialised data blob, for when no real
big Mach-O (e.g. libtorch_cpu.dylib) is at hand. No speed assertions: this prints numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_ours(path: str) -> dict:
    import mmap

    from wheelaudit.binary import macho

    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        slices = macho.parse(mm)
        return {"slices": len(slices), "exports": sum(len(s.exports) for s in slices),
                "imports": sum(len(s.imports) for s in slices), "locals": sum(len(s.locals) for s in slices)}


def run_ours_no_demangle(path: str) -> dict:
    """Ours with C++ demangling stubbed out: what the parsing itself costs."""
    from wheelaudit.binary import macho

    try:
        from wheelaudit.binary.macho.image import Demangler
    except ImportError:  # (a checkout from before the reader was split by job)
        Demangler = macho._Demangler  # type: ignore[attr-defined]
    Demangler.__call__ = lambda self, name: name  # type: ignore[method-assign]
    return run_ours(path)


def run_macholib(path: str) -> dict:
    from macholib.MachO import MachO
    from macholib.SymbolTable import SymbolTable

    m = MachO(path)
    counts = {"slices": len(m.headers), "exports": 0, "imports": 0, "locals": 0}
    for h in m.headers:
        st = SymbolTable(m, h)
        counts["exports"] += len(st.extdefsyms)
        counts["imports"] += len(st.undefsyms)
        counts["locals"] += len(st.localsyms)
    return counts


def run_lief(path: str) -> dict:
    import lief

    lief.logging.disable()
    fat = lief.MachO.parse(path)
    if fat is None:
        return {"error": "lief could not parse the file"}
    counts = {"slices": fat.size, "exports": 0, "imports": 0}
    for i in range(fat.size):
        b = fat.at(i)
        counts["exports"] += sum(1 for _ in b.exported_symbols)
        counts["imports"] += sum(1 for _ in b.imported_symbols)
    return counts


READERS = {"ours": run_ours, "ours-nodemangle": run_ours_no_demangle, "macholib": run_macholib,
           "lief": run_lief}


PREIMPORTS = {"ours": ["wheelaudit.binary.macho"], "ours-nodemangle": ["wheelaudit.binary.macho"],
              "macholib": ["macholib.MachO", "macholib.SymbolTable"], "lief": ["lief"]}


def one(name: str, path: str) -> None:
    import importlib

    for module in PREIMPORTS[name]:  # imports are not what is timed
        importlib.import_module(module)
    start, cpu_start = time.perf_counter(), time.process_time()
    counts = READERS[name](path)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "cpu": cpu, "maxrss_mb": rss_kb / 1024, **counts}))


def measure(name: str, path: str, repeat: int) -> dict:
    best = None
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, __file__, "--one", name, path], capture_output=True, text=True)
        if proc.returncode:
            return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        if best is None or result.get("seconds", 1e9) < best.get("seconds", 1e9):
            best = result
    return best or {}


def baseline_rss() -> float:
    proc = subprocess.run([sys.executable, "-c", "import resource, wheelaudit.binary.macho; "
                           "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
                          capture_output=True, text=True)
    return int(proc.stdout.strip() or 0) / 1024


def report(path: str, repeat: int) -> None:
    size = os.path.getsize(path)
    print(f"{path}: {size / 1e6:.1f} MB, best of {repeat}")
    results = {name: measure(name, path, repeat) for name in READERS}
    ours = results["ours"]
    print(f"{'reader':16s} {'seconds':>9s} {'x ours':>8s} {'cpu s':>7s} {'max RSS MB':>11s} {'x ours':>8s}  counts")
    for name, r in results.items():
        if "error" in r:
            print(f"{name:16s} {r['error']}")
            continue
        t_ratio = r["seconds"] / ours["seconds"] if ours.get("seconds") else float("nan")
        m_ratio = r["maxrss_mb"] / ours["maxrss_mb"] if ours.get("maxrss_mb") else float("nan")
        counts = {k: v for k, v in r.items() if k not in ("seconds", "cpu", "maxrss_mb")}
        print(f"{name:16s} {r['seconds']:9.3f} {t_ratio:8.1f} {r['cpu']:7.3f} {r['maxrss_mb']:11.0f} "
              f"{m_ratio:8.1f}  {counts}")
    print(f"(a Python process that only imports the reader peaks at {baseline_rss():.0f} MB)")


# ---- a big test input -----------------------------------------------------------------------
PRELUDE = """
#define API __attribute__((visibility("default")))
namespace at { struct Tensor { long x; }; }
namespace c10 { template <class T> struct optional { T v; bool has; }; }
"""
UNIT = """
namespace torch {{ namespace autograd {{ namespace generated {{ namespace k{i} {{
static long helper_{i}(long v) {{ return v * {i} + 1; }}
API long compute(const at::Tensor& t, c10::optional<long> o, const char* name) {{
  return helper_{i}(t.x) + (o.has ? o.v : 0) + name[0];
}}
}} }} }} }}
"""


def make_big(out: Path, functions: int, pad_mb: int, units: int = 8) -> None:
    clang = shutil.which("clang")
    if clang is None:
        sys.exit("clang is missing (apt-get install clang lld llvm)")
    bindir = Path(os.path.realpath(clang)).parent
    ld = bindir / "ld64.lld"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sources = []
        per_unit = (functions + units - 1) // units
        for u in range(units):
            src = work / f"u{u}.cpp"
            body = "".join(UNIT.format(i=i) for i in range(u * per_unit, min(functions, (u + 1) * per_unit)))
            src.write_text(PRELUDE + body)
            sources.append(src)
        pad = work / "pad.c"
        pad.write_text(f"__attribute__((visibility(\"default\"))) char big_blob[{pad_mb} << 20] = {{1}};\n")
        sources.append(pad)

        def compile_one(src: Path) -> None:
            subprocess.run([str(bindir / "clang"), "-target", "arm64-apple-macos11", "-O0", "-nostdinc++",
                            "-c", str(src), "-o", str(src.with_suffix(".o"))], check=True)

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            list(pool.map(compile_one, sources))
        subprocess.run([str(ld), "-dylib", "-arch", "arm64", "-platform_version", "macos", "11.0", "11.0",
                        "-L", str(ROOT / "fixtures" / "sdk"), "-lSystem", "-install_name", "@rpath/libbig.dylib",
                        "-o", str(out), *[str(s.with_suffix(".o")) for s in sources]], check=True)
    print(f"built {out} ({out.stat().st_size / 1e6:.1f} MB, {functions} exported functions)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", choices=sorted(READERS), help=argparse.SUPPRESS)
    parser.add_argument("--make-big", type=Path, metavar="OUT")
    parser.add_argument("--functions", type=int, default=100_000)
    parser.add_argument("--pad-mb", type=int, default=300)
    args = parser.parse_args()
    if args.make_big:
        make_big(args.make_big, args.functions, args.pad_mb)
        return
    if not args.path:
        parser.error("PATH is required")
    if args.one:
        one(args.one, args.path)
    else:
        report(args.path, args.repeat)


if __name__ == "__main__":
    main()
