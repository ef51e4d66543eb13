#!/usr/bin/env python3
"""The shipped rulesets on the real wheels they were written for (network; not in the default tests).

    python scripts/check_real_wheels.py

Downloads (once, into a cache) executorch 1.5.1 for macOS arm64 and manylinux_2_28 x86_64 and
mlx / mlx-metal 0.32.4, runs ``rules/executorch.toml`` and ``rules/mlx.toml`` on them, and shows,
for each component, which library carries it — so a pass that examined nothing would show.
Exit 0 when every wheel passes.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real_wheels import fetch  # noqa: E402

from wheelaudit import audit_wheels, load_rules, scan  # noqa: E402
from wheelaudit.checks.context import Context, component_definers  # noqa: E402

ROOT = HERE.parent
RUNS = [
    ("executorch-macos", "executorch.toml"),
    ("executorch-linux", "executorch.toml"),
    ("mlx-metal", "mlx.toml"),
    ("mlx", "mlx.toml"),
]


def main() -> int:
    failed = 0
    for name, rules_file in RUNS:
        path = fetch(name)
        rules = load_rules(ROOT / "rules" / rules_file)
        t0 = time.perf_counter()
        wheel = scan(path, strings=rules.strings())
        report = audit_wheels([wheel], rules)
        dt = time.perf_counter() - t0
        s = report.summary()
        print(f"== {path.name} with rules/{rules_file}: {'PASS' if report.ok else 'FAIL'} "
              f"(exit {report.exit_code}; {s['errors']} errors, {s['warnings']} warnings, {s['waived']} waived; "
              f"{len(wheel.libraries)} binaries; {dt:.2f} s)")
        for wr in report.wheels:
            for f in wr.findings:
                state = f"waived: {f.waived_by}" if f.waived else f.severity
                print(f"   {f.code} [{state}] {f.subject}: {f.message[:160]}")
        ctx = Context(wheel, rules)
        for comp in rules.components:
            if not ctx.applies(comp.when):
                print(f"   component {comp.name:24} (does not apply: {comp.when.describe()})")
                continue
            d = component_definers(ctx, comp)
            carriers = ", ".join(f"{p.rsplit('/', 1)[-1]} [{'+'.join(sorted(e.kinds))}]" for p, e in sorted(d.items())) or "-"
            print(f"   component {comp.name:24} {carriers}")
        failed += not report.ok
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
