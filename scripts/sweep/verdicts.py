#!/usr/bin/env python3
"""Record every verdict of the sweep corpus, and diff two records (not part of the default tests).

    python scripts/sweep/verdicts.py record OUT.jsonl [--wheelaudit CMD] [--only GLOB] [--jobs N]
                                                     [--timeout S] [--cache DIR] [-- EXTRA_ARGS...]
    python scripts/sweep/verdicts.py diff BEFORE.jsonl AFTER.jsonl [--all]

`record` runs `wheelaudit check WHEEL --format json --jobs 1` (no rules: what a new user sees) on each
wheel of `corpus.tsv` that `corpus.py fetch` has cached, N wheels at a time (default 2), and writes one
JSON line per wheel: the file, the exit status, the seconds it took, and every finding (code,
severity, subject, paths, message). `--wheelaudit` names the command to run (default: this
interpreter's `-m wheelaudit`), so that one checkout's record can be compared with another's:

    python scripts/sweep/verdicts.py record /tmp/before.jsonl --wheelaudit "/old/checkout/.venv/bin/wheelaudit"
    python scripts/sweep/verdicts.py record /tmp/after.jsonl
    python scripts/sweep/verdicts.py diff /tmp/before.jsonl /tmp/after.jsonl

`diff` lists, per wheel, each changed verdict (the exit status), each finding gone or new, and each
finding whose severity changed; a finding is identified by code, subject and paths (a reworded
message counts only with `--all`). It ends with the counts per code. Exit 0 when nothing changed, 1
otherwise.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import DEFAULT_CACHE, read_corpus  # noqa: E402


def _run(cmd: list[str], wheel: Path, timeout: float) -> dict:
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd + ["check", str(wheel), "--format", "json", "--jobs", "1"],
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"file": wheel.name, "exit": "timeout", "seconds": timeout, "findings": []}
    rec: dict = {"file": wheel.name, "exit": proc.returncode, "seconds": round(time.monotonic() - t0, 2)}
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        rec["findings"] = []
        rec["stderr"] = proc.stderr.strip()[-2000:]
        return rec
    rec["findings"] = [
        {k: f.get(k) for k in ("code", "severity", "subject", "paths", "message")}
        for w in report.get("wheels", []) for f in w.get("findings", [])
    ]
    if report.get("notes"):
        rec["notes"] = report["notes"]
    return rec


def record(out: Path, cmd: list[str], only: str | None, jobs: int, timeout: float, cache: Path) -> int:
    from corpus import _selected

    pins = _selected(read_corpus(), only)
    wheels = [p.path(cache) for p in pins if p.path(cache).exists()]
    missing = len(pins) - len(wheels)
    if missing:
        print(f"{missing} pinned wheels are not cached (run corpus.py fetch); recording the rest", file=sys.stderr)
    done = 0
    with out.open("w") as f, ThreadPoolExecutor(jobs) as ex:
        for rec in ex.map(lambda w: _run(cmd, w, timeout), wheels):
            f.write(json.dumps(rec, sort_keys=True) + "\n")
            f.flush()
            done += 1
            print(f"[{done}/{len(wheels)}] {rec['file']}: exit {rec['exit']} ({rec['seconds']} s, "
                  f"{len(rec['findings'])} findings)", file=sys.stderr)
    return 0


def _load(path: Path) -> dict[str, dict]:
    return {r["file"]: r for r in map(json.loads, path.read_text().splitlines()) if r}


def _key(f: dict) -> tuple:
    return (f["code"], f.get("subject") or "", tuple(f.get("paths") or ()))


def diff(before: Path, after: Path, show_all: bool) -> int:
    a, b = _load(before), _load(after)
    changed = 0
    gone_by_code: Counter[str] = Counter()
    new_by_code: Counter[str] = Counter()
    sev_by_code: Counter[str] = Counter()
    for name in sorted(set(a) | set(b)):
        ra, rb = a.get(name), b.get(name)
        if ra is None or rb is None:
            print(f"{name}: only in {'after' if ra is None else 'before'}")
            changed += 1
            continue
        lines = []
        if ra["exit"] != rb["exit"]:
            lines.append(f"  verdict: exit {ra['exit']} -> {rb['exit']}")
        fa = {_key(f): f for f in ra["findings"]}
        fb = {_key(f): f for f in rb["findings"]}
        for k in sorted(set(fa) - set(fb)):
            gone_by_code[k[0]] += 1
            lines.append(f"  - {fa[k]['code']} {fa[k]['severity']} [{k[1]}] {fa[k]['message']}")
        for k in sorted(set(fb) - set(fa)):
            new_by_code[k[0]] += 1
            lines.append(f"  + {fb[k]['code']} {fb[k]['severity']} [{k[1]}] {fb[k]['message']}")
        for k in sorted(set(fa) & set(fb)):
            if fa[k]["severity"] != fb[k]["severity"]:
                sev_by_code[k[0]] += 1
                lines.append(f"  ~ {k[0]} {fa[k]['severity']} -> {fb[k]['severity']} [{k[1]}] {fb[k]['message']}")
            elif show_all and fa[k]["message"] != fb[k]["message"]:
                lines.append(f"  ~ {k[0]} [{k[1]}] message: {fa[k]['message']!r} -> {fb[k]['message']!r}")
        if lines:
            changed += 1
            print(name)
            print("\n".join(lines))
    print(f"\n{changed} of {len(set(a) | set(b))} wheels changed")
    for title, counter in (("gone", gone_by_code), ("new", new_by_code), ("severity changed", sev_by_code)):
        if counter:
            print(f"{title}: " + ", ".join(f"{c} {n}" for c, n in sorted(counter.items())))
    return 1 if changed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--wheelaudit", default=f"{shlex.quote(sys.executable)} -m wheelaudit")
    rec.add_argument("--only")
    rec.add_argument("--jobs", type=int, default=2)
    rec.add_argument("--timeout", type=float, default=900)
    rec.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    d = sub.add_parser("diff")
    d.add_argument("before", type=Path)
    d.add_argument("after", type=Path)
    d.add_argument("--all", action="store_true", help="also list findings whose message alone changed")
    args = ap.parse_args(argv)
    if args.command == "record":
        return record(args.out, shlex.split(args.wheelaudit), args.only, args.jobs, args.timeout, args.cache)
    return diff(args.before, args.after, args.all)


if __name__ == "__main__":
    sys.exit(main())
