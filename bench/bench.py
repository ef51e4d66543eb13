#!/usr/bin/env python3
"""wheelaudit against today's practice, on real wheels, in one run (issue 6). Not a test.

    python bench/bench.py [--cache DIR] [--repeat N] [--only NAME,...] [--json FILE] [--no-auditwheel]
                          [--skip isal,nm,jobs1]

Fetches the corpus with ``pip download --no-deps --only-binary=:all: --platform ... --python-version
3.11`` into the cache or a folder of it (copies already in /tmp/realwheels seed it), then, for
each wheel and in the same run, times as child processes:

* ``inflate``: inflating every native member (found beforehand by magic bytes) with the stdlib's
  ``zlib``, one thread: the limit the issue sets (``inflate-isal``: the same with ISA-L, the
  inflater wheelaudit uses, for reference);
* ``unpack+nm``: extracting the native members to a temporary directory, then ``nm -DC`` on each
  ELF file and ``llvm-nm -gC`` on each Mach-O one, one after the other (today's release checks);
* ``auditwheel``: ``auditwheel show`` (manylinux wheels only; run once, it takes long);
* ``check``: ``wheelaudit check WHEEL --rules bench/torch.toml --format json`` (15 components with
  symbols and strings, names, linkage), default ``--jobs`` (every core); its runs alternate with
  the ``inflate`` runs, so that both see the same load of the machine.

Each is the fastest of N runs (default 3) of a fresh process (the machine is shared: the
fastest run is the one least disturbed; every run is printed, for the spread); peak RSS is the child's
``ru_maxrss`` (the largest process of its tree, as ``/usr/bin/time -v`` reports it) and, for
``check``, also the sums over its process tree (parent and workers) sampled every 20 ms: of RSS
(pages shared by the forked workers counted in each) and of PSS (shared pages divided among
their sharers: the memory the tree really holds). Prints a table with the ratios the issue asks
for, the targets met or not, and the cost-versus-size curve over the corpus.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RULES = HERE / "torch.toml"
SEED = Path("/tmp/realwheels")

#: name -> (requirement, platform tag for pip, glob of the file pip saves)
CORPUS = {
    "torch-linux": ("torch==2.13.0", "manylinux_2_28_x86_64", "torch-2.13.0*manylinux*x86_64.whl"),
    "torch-cuda": ("torch==2.14.1", "manylinux_2_28_x86_64", "torch-2.14.1*manylinux*x86_64.whl"),
    "torch-macos": ("torch==2.14.1", "macosx_14_0_arm64", "torch-2.14.1*macosx_14_0_arm64.whl"),
    "numpy-linux": ("numpy==2.4.6", "manylinux_2_28_x86_64", "numpy-2.4.6*manylinux*x86_64.whl"),
    "numpy-macos": ("numpy==2.4.6", "macosx_14_0_arm64", "numpy-2.4.6*macosx_14_0_arm64.whl"),
    "executorch-linux": ("executorch==1.5.1", "manylinux_2_28_x86_64", "executorch-1.5.1*manylinux*x86_64.whl"),
    "executorch-macos": ("executorch==1.5.1", "macosx_14_0_arm64", "executorch-1.5.1*macosx_14_0_arm64.whl"),
    "torch-windows": ("torch==2.14.1", "win_amd64", "torch-2.14.1*win_amd64.whl"),
}
#: the wheels the issues' targets are about
TORCH = ("torch-linux", "torch-cuda", "torch-macos", "torch-windows")
LLVM_NM = next((p for p in ("/usr/lib/llvm-14/bin/llvm-nm", shutil.which("llvm-nm") or "") if p and Path(p).exists()), None)


# --------------------------------------------------------------------------------------------
# Fetching


def fetch(name: str, cache: Path) -> Path:
    req, plat, pattern = CORPUS[name]
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.rglob(pattern))  # (the cache or a folder of it, such as pe/)
    if found:
        return found[0]
    seeded = sorted(SEED.glob(pattern)) if SEED.is_dir() else []
    if seeded:
        shutil.copy2(seeded[0], cache / seeded[0].name)
        return cache / seeded[0].name
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--platform", plat,
           "--python-version", "3.11", "-d", str(cache), req]
    print("  " + " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    found = sorted(cache.glob(pattern))
    if not found:
        raise SystemExit(f"pip saved no file matching {pattern} in {cache}")
    return found[0]


def native_members(wheel: Path) -> list[tuple[str, str]]:
    """(member, format) of the native binaries, by magic bytes (as wheelaudit finds them)."""
    sys.path.insert(0, str(ROOT / "src"))
    from wheelaudit.binary import detect

    out = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            with zf.open(info) as fh:
                fmt = detect(fh.read(8))
            if fmt:
                out.append((info.filename, fmt))
    return out


# --------------------------------------------------------------------------------------------
# Child processes, timed


INFLATE = r"""
import sys, zipfile, json
mod = sys.argv[1]
if mod == "isal":
    from isal import isal_zlib as z
else:
    import zlib as z
members = json.load(open(sys.argv[3]))
zf = zipfile.ZipFile(sys.argv[2])
fh = open(sys.argv[2], "rb")
import struct
total = 0
for name in members:
    info = zf.getinfo(name)
    fh.seek(info.header_offset)
    head = fh.read(30)
    n, m = struct.unpack("<HH", head[26:30])
    fh.seek(info.header_offset + 30 + n + m)
    left = info.compress_size
    d = z.decompressobj(-15) if info.compress_type == 8 else None
    while left:
        raw = fh.read(min(left, 1 << 16))
        left -= len(raw)
        total += len(d.decompress(raw)) if d else len(raw)
print(total)
"""

UNPACK_NM = r"""
import sys, zipfile, json, subprocess, tempfile, os
members = json.load(open(sys.argv[2]))
llvm_nm = sys.argv[3]
with tempfile.TemporaryDirectory() as tmp:
    with zipfile.ZipFile(sys.argv[1]) as zf:
        for name, _fmt in members:
            zf.extract(name, tmp)
    lines = 0
    for name, fmt in members:
        path = os.path.join(tmp, name)
        cmd = ["nm", "-DC", path] if fmt == "elf" else [llvm_nm, "-gC", path]
        out = subprocess.run(cmd, capture_output=True).stdout
        lines += out.count(b"\n")
print(lines)
"""


class TreeSampler:
    """Sums of the RSS and of the PSS of a process and its descendants, sampled (Linux /proc;
    PSS from ``smaps_rollup``, where the kernel has it)."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        self.pid, self.interval, self.peak, self.peak_pss = pid, interval, 0, 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _tree(self) -> list[int]:
        kids: dict[int, list[int]] = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as fh:
                        ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
                    kids.setdefault(ppid, []).append(int(d))
                except (OSError, ValueError, IndexError):
                    pass
        out, todo = [], [self.pid]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(kids.get(p, []))
        return out

    def _run(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.is_set():
            total = pss = 0
            for p in self._tree():
                try:
                    with open(f"/proc/{p}/statm") as fh:
                        total += int(fh.read().split()[1]) * page
                    with open(f"/proc/{p}/smaps_rollup") as fh:
                        pss += next((int(line.split()[1]) * 1024 for line in fh if line.startswith("Pss:")), 0)
                except (OSError, ValueError, IndexError):
                    pass
            self.peak = max(self.peak, total)
            self.peak_pss = max(self.peak_pss, pss)
            time.sleep(self.interval)

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        return self.peak


def timed(cmd: list[str], sample_tree: bool = False) -> tuple[float, float, float | None, float | None, int]:
    """(seconds, peak RSS MB of the largest process, sampled tree RSS and PSS MB or None, exit code)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sampler = TreeSampler(proc.pid) if sample_tree and Path("/proc").is_dir() else None
    _pid, status, ru = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    tree = pss = None
    if sampler:
        tree = sampler.stop() / 2**20
        pss = sampler.peak_pss / 2**20 or None
    proc.returncode = os.waitstatus_to_exitcode(status)
    return dt, ru.ru_maxrss / 1024, tree, pss, proc.returncode


def measure(cmd: list[str], repeat: int, sample_tree: bool = False, runs: list | None = None) -> dict:
    # the tree is sampled in runs of their own: the sampler's reads of /proc would slow the timed ones
    if runs is None:
        runs = [timed(cmd) for _ in range(repeat)]
    sampled = [timed(cmd, True) for _ in range(2)] if sample_tree else []
    return {
        "seconds": min(r[0] for r in runs),
        "median": statistics.median(r[0] for r in runs),
        "runs": [round(r[0], 3) for r in runs],
        "rss_mb": max(r[1] for r in runs + sampled),
        "tree_mb": max(r[2] for r in sampled) if sampled and sampled[0][2] is not None else None,
        "tree_pss_mb": max(r[3] for r in sampled) if sampled and sampled[0][3] is not None else None,
        "exit": runs[-1][4],
    }


# --------------------------------------------------------------------------------------------


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(next(x for x in open("/proc/meminfo") if x.startswith("MemTotal")).split()[1])
        mem = f", {kb / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = ", load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    return (f"{cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}{load}")


def targets(results: list[dict]) -> None:
    """The issue's targets on the torch wheels, met or not, from this run's figures."""
    rows = [r for r in results if r["name"] in TORCH]
    if not rows:
        return
    print("\nTargets (issue 6), this run:\n")
    print("| target | " + " | ".join(r["name"] for r in rows) + " |")
    print("|---|" + "---|" * len(rows))

    def line(label: str, cell) -> None:
        print(f"| {label} | " + " | ".join(cell(r) for r in rows) + " |")

    def verdict(ok: bool) -> str:
        return "met" if ok else "**not met**"

    def ratio_cell(num: str, den: str, limit: float, below: bool) -> object:
        def cell(r: dict) -> str:
            if num not in r or den not in r:
                return "–"
            v = r[num]["seconds"] / r[den]["seconds"]
            return f"{v:.2f}× ({r[num]['seconds']:.2f} s / {r[den]['seconds']:.2f} s): {verdict(v <= limit if below else v >= limit)}"
        return cell

    line("check ≤ 1.0× inflate-only (zlib, one thread)", ratio_cell("check", "inflate", 1.0, True))
    line("check ≥ 25× faster than auditwheel show", ratio_cell("auditwheel", "check", 25.0, False))
    line("check ≥ 3× faster than unpack + nm", ratio_cell("nm", "check", 3.0, False))

    def rss(r: dict) -> str:
        c = r["check"]
        worst = max(c["rss_mb"], c.get("tree_pss_mb") or 0)
        return (f"largest process {c['rss_mb']:.0f} MB, tree RSS {c['tree_mb'] or 0:.0f} MB, tree PSS "
                f"{c.get('tree_pss_mb') or 0:.0f} MB: {verdict(worst <= 256)} (tree RSS: {verdict((c['tree_mb'] or 0) <= 256)})")
    line("peak memory ≤ 256 MB", rss)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                    / "wheelaudit-bench")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help="comma-separated corpus names (" + ", ".join(CORPUS) + ")")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--no-auditwheel", action="store_true")
    ap.add_argument("--jobs", type=int, help="passed to wheelaudit check (default: its default, every core)")
    ap.add_argument("--skip", default="", help="comma-separated columns not measured: isal, nm, jobs1 "
                                               "(the target's columns, inflate and check, always are)")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(CORPUS)
    skip = set(filter(None, args.skip.split(",")))

    auditwheel = shutil.which("auditwheel")
    if auditwheel is None and not args.no_auditwheel:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "auditwheel"], check=False)
        auditwheel = shutil.which("auditwheel")

    # Measure the tools as installed: pip compiles a package's modules at install time, while this
    # checkout may run with PYTHONDONTWRITEBYTECODE set (every process would compile wheelaudit
    # anew, 0.15-0.3 s). Compile once here and let the child processes use the cache.
    import compileall

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(str(ROOT / "src" / "wheelaudit"), quiet=1)
    started = _dt.datetime.now().astimezone()
    print(f"# wheelaudit benchmark, {started:%Y-%m-%d %H:%M %Z}")
    print(f"# machine: {machine()}")
    print(f"# each figure: the fastest of {args.repeat} runs of a fresh process (auditwheel: 1 run)\n")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            wheel = fetch(name, args.cache)
            natives = native_members(wheel)
            with zipfile.ZipFile(wheel) as zf:
                infos = {i.filename: i for i in zf.infolist()}
            unpacked = sum(i.file_size for i in infos.values())
            native_bytes = sum(infos[n].file_size for n, _ in natives)
            mfile = Path(tmp) / f"{name}.members.json"
            mfile.write_text(json.dumps([n for n, _ in natives]))
            nfile = Path(tmp) / f"{name}.natives.json"
            nfile.write_text(json.dumps(natives))
            py = sys.executable
            row: dict = {"name": name, "wheel": wheel.name, "zip_mb": wheel.stat().st_size / 1e6,
                         "unpacked_mb": unpacked / 1e6, "native_mb": native_bytes / 1e6,
                         "members": len(infos), "natives": len(natives)}
            print(f"## {name}: {wheel.name} ({row['zip_mb']:.0f} MB, {len(infos)} members, "
                  f"{len(natives)} native, {row['native_mb']:.0f} MB of them)", flush=True)
            inflate = [py, "-c", INFLATE, "zlib", str(wheel), str(mfile)]
            check = [py, "-m", "wheelaudit", "check", str(wheel), "--rules", str(RULES), "--format", "json",
                     "--output", os.devnull]
            if args.jobs:
                check += ["--jobs", str(args.jobs)]
            # the target's two columns in alternation, so that both see the same load of the machine
            pairs = [(timed(inflate), timed(check)) for _ in range(args.repeat)]
            row["inflate"] = measure(inflate, args.repeat, runs=[p[0] for p in pairs])
            row["check"] = measure(check, args.repeat, sample_tree=True, runs=[p[1] for p in pairs])
            if "isal" not in skip:
                row["inflate_isal"] = measure([py, "-c", INFLATE, "isal", str(wheel), str(mfile)], args.repeat)
            if "nm" not in skip and (LLVM_NM or all(f == "elf" for _, f in natives)):
                row["nm"] = measure([py, "-c", UNPACK_NM, str(wheel), str(nfile), LLVM_NM or "llvm-nm"], args.repeat)
            if auditwheel and not args.no_auditwheel and "manylinux" in wheel.name:
                row["auditwheel"] = measure([auditwheel, "show", str(wheel)], 1)
            if "jobs1" not in skip:
                row["check_j1"] = measure(check + ["--jobs", "1"] if not args.jobs else check, args.repeat)
            for key in ("inflate", "inflate_isal", "nm", "auditwheel", "check", "check_j1"):
                if key in row:
                    m = row[key]
                    extra = f", tree RSS {m['tree_mb']:.0f} MB, PSS {m['tree_pss_mb'] or 0:.0f} MB" if m.get("tree_mb") else ""
                    print(f"   {key:11} {m['seconds']:7.2f} s  (runs {m['runs']})  peak RSS {m['rss_mb']:.0f} MB{extra}",
                          flush=True)
            results.append(row)

    print("\n| wheel | zip MB | inflate (zlib) s | inflate (isal) s | unpack+nm s | auditwheel s | check s "
          "| check --jobs 1 s | check / inflate | check / inflate-isal | nm / check | auditwheel / check "
          "| peak MB: largest process / tree RSS / tree PSS |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        c = r["check"]["seconds"]

        def s(key: str, r: dict = r) -> str:
            return f"{r[key]['seconds']:.2f}" if key in r else "–"

        def ratio(key: str, inverse: bool = False, r: dict = r, c: float = c) -> str:
            if key not in r:
                return "–"
            v = r[key]["seconds"]
            return f"{(v / c if inverse else c / v):.2f}×"

        print(f"| {r['name']} | {r['zip_mb']:.0f} | {s('inflate')} | {s('inflate_isal')} | {s('nm')} | {s('auditwheel')} "
              f"| {c:.2f} | {s('check_j1')} | {ratio('inflate')} | {ratio('inflate_isal')} | {ratio('nm', True)} "
              f"| {ratio('auditwheel', True)} | {r['check']['rss_mb']:.0f} / {r['check']['tree_mb'] or 0:.0f} "
              f"/ {r['check']['tree_pss_mb'] or 0:.0f} |")

    targets(results)

    print("\nCost against size (check, default jobs):\n")
    print("| wheel | unpacked MB | native MB | members | check s | MB unpacked / s | ms per member |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in sorted(results, key=lambda r: r["unpacked_mb"]):
        c = r["check"]["seconds"]
        print(f"| {r['name']} | {r['unpacked_mb']:.0f} | {r['native_mb']:.0f} | {r['members']} | {c:.2f} "
              f"| {r['unpacked_mb'] / c:.0f} | {1000 * c / r['members']:.2f} |")
    if args.json:
        args.json.write_text(json.dumps({"date": started.isoformat(), "machine": machine(), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
