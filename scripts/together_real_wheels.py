#!/usr/bin/env python3
"""Real wheels installed together (network; not part of the default tests).

    python scripts/together_real_wheels.py [--cache DIR] [--full]

Downloads (once, into a cache) the wheels below for macOS arm64 / CPython 3.11 with
``pip download --no-deps --only-binary=:all:`` and audits each set as one install
(``wheelaudit check --together``), after auditing each wheel alone with the same rules:

- ``executorch==1.5.1`` with ``mlx-metal==0.32.4``: ExecuTorch's MLX delegate bundles MLX, and
  mlx-metal ships ``libmlx.dylib`` — expected: WA201 for the MLX runtime (rules/runtimes.toml,
  and rules/executorch.toml's ``mlx_runtime``), naming both wheels.
- ``torch==2.14.1`` with ``scikit-learn``: each vendors ``libomp.dylib`` — expected: WA201 for
  ``openmp`` (the "OMP: Error #15" pair).
- ``executorch==1.5.1`` with ``torch==2.14.1``: both carry cpuinfo (executorch#14838's family).

Each wheel is scanned once (with the strings of every ruleset used) and the sets are merged
with :func:`wheelaudit.scanner.together.merge_wheels`, so torch's 386 MB ``libtorch_cpu`` is read once.
Prints, per run, the findings by code, the component carriers and the times. Exit 1 when an
expected WA201 is missing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from wheelaudit import audit_wheels, load_rules, scan
from wheelaudit.checks.context import Context, component_definers
from wheelaudit.scanner.together import merge_wheels

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = "macosx_14_0_arm64"
PYTHON = "3.11"
DEFAULT_CACHE = Path(os.environ.get("WHEELAUDIT_WHEEL_CACHE", Path.home() / ".cache" / "wheelaudit-wheels"))

#: (requirements, rules files, expected (code, subject) pairs in the together report)
RUNS = [
    (["executorch==1.5.1", "mlx-metal==0.32.4"], ["runtimes.toml", "executorch.toml"],
     {"runtimes.toml": [("WA201", "mlx")], "executorch.toml": [("WA201", "mlx_runtime")]}),
    (["torch==2.14.1", "scikit-learn"], ["runtimes.toml"], {"runtimes.toml": [("WA201", "openmp")]}),
    (["executorch==1.5.1", "torch==2.14.1"], ["runtimes.toml"], {"runtimes.toml": [("WA201", "cpuinfo")]}),
]

#: codes whose findings are printed in full (the rest are counted, with one example each)
SHOWN = ("WA2", "WA3", "WA4", "WA002", "WA503", "WA505")


def fetch(req: str, cache: Path) -> Path:
    """The cached wheel for ``req`` (``name==version`` or ``name``), downloaded with pip when missing."""
    dist, _, version = req.partition("==")
    stem = dist.replace("-", "_")
    dirs = [cache / PLATFORM, cache]

    def found() -> list[Path]:
        hits = [p for d in dirs if d.is_dir() for p in d.glob(f"{stem}-{version or '*'}-*.whl")]
        return sorted(p for p in hits if "macosx" in p.name and ("arm64" in p.name or "universal2" in p.name))

    if not found():
        dest = cache / PLATFORM
        dest.mkdir(parents=True, exist_ok=True)
        print(f"downloading {req} ({PLATFORM}, python {PYTHON}) into {dest} ...", flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                               "--platform", PLATFORM, "--python-version", PYTHON, "-d", str(dest), req],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"pip refused to download {req}:\n{proc.stdout}\n{proc.stderr}")
        print(f"  done in {time.perf_counter() - t0:.1f} s", flush=True)
    hits = found()
    if not hits:
        raise SystemExit(f"pip downloaded nothing for {req} ({PLATFORM})")
    return hits[-1]  # the newest version when unpinned


def show_report(title: str, wheel, rules, report, full: bool) -> None:
    s = report.summary()
    counts = Counter(f.code for wr in report.wheels for f in wr.findings if not f.waived)
    print(f"  {title}: {'PASS' if report.ok else 'FAIL'} ({s['errors']} errors, {s['warnings']} warnings,"
          f" {s['waived']} waived) {dict(sorted(counts.items()))}")
    example: dict[str, bool] = {}
    for wr in report.wheels:
        for f in wr.findings:
            state = f"waived: {f.waived_by}" if f.waived else f.severity
            if full or f.code.startswith(SHOWN):
                print(f"    {f.code} [{state}] {f.subject}: {f.message if full else f.message[:600]}")
            elif not example.get(f.code):
                example[f.code] = True
                print(f"    {f.code} [{state}] e.g. {f.subject}: {f.message[:200]}"
                      + (f" (+{counts[f.code] - 1} more {f.code})" if counts[f.code] > 1 else ""))


def carriers(wheel, rules) -> None:
    ctx = Context(wheel, rules)
    for comp in rules.components:
        if not ctx.applies(comp.when):
            continue
        d = component_definers(ctx, comp)
        if not d:
            continue
        origins = getattr(wheel, "origins", {}) or {}
        desc = ", ".join(f"{p} <{origins.get(p, '?').split('-')[0]}> [{'+'.join(sorted(e.kinds))}]"
                         for p, e in sorted(d.items()))
        print(f"    component {comp.name:16} {desc}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                    help=f"download cache (default: $WHEELAUDIT_WHEEL_CACHE or {DEFAULT_CACHE})")
    ap.add_argument("--full", action="store_true", help="print every finding in full")
    args = ap.parse_args()

    rulesets = {name: load_rules(ROOT / "rules" / name) for run in RUNS for name in run[1]}
    strings = list(dict.fromkeys(s for r in rulesets.values() for s in r.strings()))
    paths = {req: fetch(req, args.cache) for run in RUNS for req in run[0]}
    scanned = {}
    for req, path in paths.items():
        t0 = time.perf_counter()
        scanned[req] = scan(path, strings=strings)
        w = scanned[req]
        print(f"scanned {path.name}: {len(w.libraries)} native binaries, {len(w.files)} files,"
              f" {path.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - t0:.1f} s", flush=True)

    missing: list[str] = []
    for reqs, rule_names, expected in RUNS:
        print(f"\n== {' + '.join(reqs)}")
        t0 = time.perf_counter()
        merged = merge_wheels([scanned[r] for r in reqs])
        t_merge = time.perf_counter() - t0
        print(f"  merged: {merged.name} {merged.version}, {len(merged.libraries)} native binaries,"
              f" {len(merged.files)} files ({t_merge:.2f} s)")
        for name in rule_names:
            rules = rulesets[name]
            print(f"  -- rules/{name}")
            for r in reqs:
                w = scanned[r]
                show_report(f"{w.path.name} alone", w, rules, audit_wheels([w], rules), args.full)
            t0 = time.perf_counter()
            report = audit_wheels([merged], rules)
            t_eval = time.perf_counter() - t0
            show_report(f"together ({t_eval:.2f} s to evaluate)", merged, rules, report, args.full)
            carriers(merged, rules)
            got = {(f.code, f.subject) for f in report.findings}
            for want in expected.get(name, []):
                if want not in got:
                    missing.append(f"{' + '.join(reqs)} with rules/{name}: {want[0]} for {want[1]}")
    if missing:
        print("\nMISSING expected findings:\n  " + "\n  ".join(missing))
        return 1
    print("\nevery expected finding is there")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
