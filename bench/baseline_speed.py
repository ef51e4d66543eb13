#!/usr/bin/env python3
"""``check NEW --baseline OLD`` against ``check NEW`` alone, in alternation. Not a test.

    python bench/baseline_speed.py NEW_WHEEL OLD_WHEEL [ROUNDS] [--rules FILE]

Each round runs ``python -m wheelaudit check NEW --format json`` and then the same with
``--baseline OLD`` (the release gate's extra cost: the baseline read for its ABI only and the
comparison), as child processes of this checkout's interpreter. Prints each command's fastest and
median run, the ratio of the fastest runs and the median of the per-round ratios (rounds alternate,
so a round's two runs saw the same machine), the ratio of CPU time (user + system of the process
tree: what a busy machine cannot hide), and the children's peak RSS. The issue's bound:
the ratio within 2.0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """Wall time, CPU time (user + system, the child's workers included: it waits for them) and
    peak RSS of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)}: exit {proc.returncode}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("new", type=Path)
    ap.add_argument("old", type=Path)
    ap.add_argument("rounds", type=int, nargs="?", default=5)
    ap.add_argument("--rules", type=Path, default=None)
    args = ap.parse_args()
    base = [sys.executable, "-m", "wheelaudit", "check", str(args.new), "--format", "json"]
    if args.rules:
        base += ["--rules", str(args.rules)]
    cmds = {"check": base, "check --baseline": base + ["--baseline", str(args.old)]}
    runs: dict[str, list[float]] = {k: [] for k in cmds}
    cpu: dict[str, list[float]] = {k: [] for k in cmds}
    rss: dict[str, int] = {k: 0 for k in cmds}
    for _ in range(args.rounds):
        for name, cmd in cmds.items():
            t, c, m = timed(cmd)
            runs[name].append(t)
            cpu[name].append(c)
            rss[name] = max(rss[name], m)
    for name, times in runs.items():
        print(f"{name:18s} fastest {min(times):.2f} s  median {statistics.median(times):.2f} s  "
              f"CPU median {statistics.median(cpu[name]):.2f} s  peak RSS {rss[name] / 1024:.0f} MiB  "
              f"({' '.join(f'{t:.2f}' for t in times)})")
    ratios = [b / a for a, b in zip(runs["check"], runs["check --baseline"], strict=True)]
    print(f"ratio (fastest) {min(runs['check --baseline']) / min(runs['check']):.2f}x; "
          f"per-round median {statistics.median(ratios):.2f}x; CPU time (medians) "
          f"{statistics.median(cpu['check --baseline']) / statistics.median(cpu['check']):.2f}x; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
