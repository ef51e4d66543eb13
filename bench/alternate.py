#!/usr/bin/env python3
"""Checkouts against each other and against the inflate baseline, in alternation. Not a test.

    python bench/alternate.py WHEEL ROUNDS NAME=CHECKOUT [NAME=CHECKOUT ...] [--rules FILE]

Each round runs, one after the other: the inflate baseline of ``bench.py`` (zlib, one thread, the
wheel's native members), then ``python -m wheelaudit check WHEEL --rules FILE --format json`` with
``PYTHONPATH=CHECKOUT/src`` for each checkout (``git worktree add /tmp/x COMMIT`` makes one).
Prints, per command, the fastest and median run and the fastest run's ratio to the fastest
inflate: runs that alternate saw the same machine, so the ratios compare code, not load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402  (the inflate child and the native-member finder)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheel", type=Path)
    ap.add_argument("rounds", type=int)
    ap.add_argument("checkouts", nargs="+", metavar="NAME=CHECKOUT")
    ap.add_argument("--rules", type=Path, default=HERE / "torch.toml")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump([m for m, _ in bench.native_members(args.wheel)], fh)
    cmds = [("inflate", [py, "-c", bench.INFLATE, "zlib", str(args.wheel), fh.name], None)]
    for item in args.checkouts:
        name, _, checkout = item.partition("=")
        env = dict(os.environ, PYTHONPATH=str(Path(checkout) / "src"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # (an installed package has its .pyc files)
        subprocess.run([py, "-m", "compileall", "-q", str(Path(checkout) / "src")], check=True)
        cmds.append((name, [py, "-m", "wheelaudit", "check", str(args.wheel), "--rules", str(args.rules),
                            "--format", "json"], env))
    runs: dict[str, list[float]] = {name: [] for name, _, _ in cmds}
    for _ in range(args.rounds):
        for name, cmd, env in cmds:
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, env=env)
            runs[name].append(time.perf_counter() - start)
    base = min(runs["inflate"])
    for name, times in runs.items():
        print(f"{name:12s} fastest {min(times):.3f} s  median {statistics.median(times):.3f} s  "
              f"{min(times) / base:.2f}x  ({' '.join(f'{t:.2f}' for t in times)})")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    os.unlink(fh.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
