"""Run the fuzz targets at length and report what happened.

    python -m fuzz.run [TARGET ...] (--inputs N | --seconds S) [--jobs J] [--seed N]
                       [--seeds DIR ...] [--real-wheels DIR] [--out DIR]
                       [--timeout SECONDS] [--memory-mb MB]
    python -m fuzz.run TARGET --replay INDEX [--seed N] [--seeds DIR ...]   # re-run one input

Targets: elf, macho, pe, wheel, rules, glob, names, surface, and the shapes of the second hostile
round: fat, smuggle, paths, cmake, control (``fuzz/targets.py``, ``fuzz/shapes.py``). Each target runs in its
own worker process (``--jobs`` at a time), so that its peak memory is its own. For every input a
worker checks:

* **crashes**: any exception other than the target's expected one (and a worker that dies, e.g.
  on a signal or an out-of-memory abort: the input it was on is the crash);
* **hangs**: an input that takes longer than ``--timeout`` (interrupted by a timer signal; a
  worker stuck in native code past 6x the timeout is killed by the runner);
* **writes and other forbidden events** through an audit hook (``fuzz/guard.py``): a file opened
  for writing, renamed, removed or created anywhere (outside the system temporary directory: a
  violation; inside it: counted), a program run, a shared library loaded, a socket opened, or
  code imported, compiled or executed from the input's directory. The worker also runs in an
  empty current directory and checks that it is still empty at the end.
* **gate holes**: an input that the gate would let through (a native member taken for a class
  file, a smuggled local header without WA002, a name that writes a workflow command or an escape
  into a report): the target returns an outcome ``hole:...``; counted, the first 20 saved;
* **peak memory**: the worker's maximum resident set size; its address space is limited to
  ``--memory-mb`` so that a memory bomb becomes a MemoryError (a crash) instead of taking the
  machine down.

The report (``--out``/report.json and a Markdown table on standard output) gives, per target:
inputs, crashes, hangs, forbidden events, writes inside the temporary directory, peak RSS, the
slowest input and the outcome counts. Crashing and hanging inputs are saved under ``--out``
(``crashes/<target>-<index>.bin`` with a ``.txt`` traceback); every input is a function of
``(seed, target, index)`` and ``--replay`` re-runs one.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SEEDS = [ROOT / "fixtures" / "out"]  # make_wheels.py / build_fixtures.sh output (scripts/fuzz.sh builds it)
DEFAULT_REAL_WHEELS = Path("/tmp/realwheels")


class Hang(BaseException):
    """Raised by the timer inside a target that runs too long (a BaseException, so that no
    ``except Exception`` in the code under test can swallow it)."""


def _alarm(signum, frame):  # noqa: ARG001
    raise Hang()


def _corpus(args):
    """The seeds, loaded once per run and cached (as a pickle in ``--out``) for the workers."""
    import pickle

    from .mutate import hot_regions, load_corpus

    cache = Path(args.out) / ".corpus.pickle"
    if cache.exists():
        c = pickle.loads(cache.read_bytes())
        c.regions = {id(s): hot_regions(s, fmt) for fmt, seeds in c.binaries.items() for s in seeds}
        return c
    real = sorted(Path(args.real_wheels).glob("*.whl")) if args.real_wheels and Path(args.real_wheels).is_dir() else []
    c = load_corpus([Path(d) for d in args.seeds], real)
    regions, c.regions = c.regions, {}
    tmp = cache.with_suffix(f".{os.getpid()}")
    tmp.write_bytes(pickle.dumps(c))
    os.replace(tmp, cache)
    c.regions = regions
    return c


def _save(out: Path, target: str, index: int, data: bytes, text: str) -> None:
    crashes = out / "crashes"
    crashes.mkdir(parents=True, exist_ok=True)
    (crashes / f"{target}-{index}.bin").write_bytes(data)
    (crashes / f"{target}-{index}.txt").write_text(text)


# =============================================================================================
# the worker
def worker(target: str, args: argparse.Namespace, start: int, current, result_path: str) -> None:
    from . import targets as T
    from .guard import Guard
    from .mutate import generate

    if args.memory_mb:
        limit = args.memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    corpus = _corpus(args)
    ws = T.Workspace(corpus.wheel_paths)
    fn = T.load_target(target)
    out = Path(args.out)
    cwd = Path(tempfile.mkdtemp(prefix="wheelaudit-fuzz-cwd-"))
    os.chdir(cwd)
    guard = Guard(allowed=[Path(tempfile.gettempdir())], foreign=[ws.dir])
    if target == "rules":
        ws.wheel()  # scanned once, outside the guard
    ws.rules()
    signal.signal(signal.SIGALRM, _alarm)
    stats = {"target": target, "inputs": 0, "crashes": 0, "hangs": 0, "violations": 0, "writes_inside": 0, "holes": 0,
             "hole_examples": [],
             "slowest": 0.0, "slowest_index": None, "outcomes": Counter(), "first": start,
             "corpus": corpus.summary(), "violation_examples": [], "crash_examples": []}
    deadline = time.monotonic() + args.seconds if args.seconds else None
    end = start + args.inputs if args.inputs else None
    i = start
    last_flush = time.monotonic()
    while (end is None or i < end) and (deadline is None or time.monotonic() < deadline):
        try:
            data = generate(target, corpus, args.seed, i)
        except Exception:  # noqa: BLE001 - a bug of the generator, not of wheelaudit
            stats["generator_errors"] = stats.get("generator_errors", 0) + 1
            if stats["generator_errors"] <= 3:
                traceback.print_exc()
            i += 1
            continue
        current.value = i
        before_v, before_w = len(guard.violations), len(guard.writes_inside)
        hung = False
        t0 = time.perf_counter()
        try:
            with guard.watch():
                signal.setitimer(signal.ITIMER_REAL, args.timeout)
                try:
                    outcome = fn(data, ws)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            if outcome.startswith("hole:"):  # the gate would have let this input through
                stats["holes"] += 1
                if stats["holes"] <= 20:
                    _save(out, target, i, data, outcome + "\n")
                if len(stats["hole_examples"]) < 5 and outcome not in stats["hole_examples"]:
                    stats["hole_examples"].append(outcome)
                outcome = "hole"
            stats["outcomes"][outcome] += 1
        except Hang:
            hung = True
            stats["hangs"] += 1
            if stats["hangs"] <= 200:
                _save(out, target, i, data, f"hang: more than {args.timeout}s\n")
        except Exception:  # noqa: BLE001 - every unexpected exception is a crash
            stats["crashes"] += 1
            tb = traceback.format_exc()
            if len(stats["crash_examples"]) < 5:
                stats["crash_examples"].append(tb.strip().splitlines()[-1])
            if stats["crashes"] <= 200:
                _save(out, target, i, data, tb)
        elapsed = time.perf_counter() - t0
        if elapsed > stats["slowest"]:
            stats["slowest"], stats["slowest_index"] = elapsed, i
        if elapsed > args.timeout and not hung:  # stuck in native code, came back late
            stats["hangs"] += 1
            if stats["hangs"] <= 200:
                _save(out, target, i, data, f"hang: {elapsed:.1f}s\n")
        new_v = guard.violations[before_v:]
        if new_v:
            stats["violations"] += len(new_v)
            for v in new_v[: 5 - len(stats["violation_examples"])]:
                stats["violation_examples"].append(f"input {i}: {v}")
        stats["writes_inside"] += len(guard.writes_inside) - before_w
        del guard.writes_inside[:]
        stats["inputs"] += 1
        i += 1
        if time.monotonic() - last_flush > 5:
            _flush(stats, cwd, result_path)
            last_flush = time.monotonic()
    _flush(stats, cwd, result_path, final=True)
    T.cleanup(ws)
    os.chdir(tempfile.gettempdir())
    try:
        cwd.rmdir()  # empty, as the report says (else it stays, for a look)
    except OSError:
        pass


def _flush(stats: dict, cwd: Path, result_path: str, final: bool = False) -> None:
    s = dict(stats)
    s["outcomes"] = dict(stats["outcomes"])
    s["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    s["cwd_left_empty"] = not any(cwd.iterdir())
    s["final"] = final
    tmp = result_path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(s, fh)
    os.replace(tmp, result_path)


# =============================================================================================
# the runner
def _merge(into: dict, part: dict) -> None:
    for k in ("inputs", "crashes", "hangs", "violations", "writes_inside", "holes", "generator_errors"):
        into[k] = into.get(k, 0) + part.get(k, 0)
    for k, v in part.get("outcomes", {}).items():
        into.setdefault("outcomes", {})[k] = into.get("outcomes", {}).get(k, 0) + v
    if part.get("slowest", 0) > into.get("slowest", 0):
        into["slowest"], into["slowest_index"] = part["slowest"], part.get("slowest_index")
    into["peak_rss_mb"] = max(into.get("peak_rss_mb", 0), part.get("peak_rss_mb", 0))
    into["cwd_left_empty"] = into.get("cwd_left_empty", True) and part.get("cwd_left_empty", True)
    into["corpus"] = part.get("corpus", into.get("corpus"))
    for k in ("violation_examples", "crash_examples", "hole_examples"):
        into.setdefault(k, []).extend(part.get(k, []))


def run_target(target: str, args: argparse.Namespace) -> dict:
    ctx = mp.get_context("spawn")
    total: dict = {"target": target, "restarts": 0, "killed": []}
    start = 0
    out = Path(args.out)
    t_begin = time.monotonic()
    remaining_inputs = args.inputs
    while True:
        current = ctx.Value("q", -1)
        result_path = str(out / f".{target}.{start}.json")
        sub = argparse.Namespace(**vars(args))
        sub.inputs = remaining_inputs
        if args.seconds:
            sub.seconds = max(1.0, args.seconds - (time.monotonic() - t_begin))
        proc = ctx.Process(target=worker, args=(target, sub, start, current, result_path), daemon=True)
        proc.start()
        last_index, last_change = -1, time.monotonic()
        while proc.is_alive():
            proc.join(1.0)
            if current.value != last_index:
                last_index, last_change = current.value, time.monotonic()
            elif last_index >= 0 and time.monotonic() - last_change > 6 * args.timeout:
                proc.kill()
                proc.join()
                total["killed"].append({"index": last_index, "why": "no progress (stuck in native code)"})
                break
        part = json.loads(Path(result_path).read_text()) if Path(result_path).exists() else {}
        _merge(total, part)
        if proc.exitcode == 0 and part.get("final"):
            break
        # the worker died (signal, abort, kill): the input it was on is a crash or a hang
        index = current.value
        from .mutate import generate

        if not total["killed"] or total["killed"][-1]["index"] != index:
            total["killed"].append({"index": index, "why": f"worker exited with {proc.exitcode}"})
            total["crashes"] = total.get("crashes", 0) + 1
        else:
            total["hangs"] = total.get("hangs", 0) + 1
        total["inputs"] = total.get("inputs", 0) + 1
        try:
            corpus = _corpus(args)
            _save(out, target, index, generate(target, corpus, args.seed, index), json.dumps(total["killed"][-1]))
        except Exception:  # noqa: BLE001
            pass
        total["restarts"] += 1
        done = index + 1 - start if index >= 0 else 0
        start = index + 1
        if remaining_inputs:
            remaining_inputs -= done
            if remaining_inputs <= 0:
                break
        if args.seconds and time.monotonic() - t_begin >= args.seconds:
            break
        if total["restarts"] > 50:
            break
    total["wall_seconds"] = round(time.monotonic() - t_begin, 1)
    for p in out.glob(f".{target}.*.json"):
        p.unlink()
    return total


def table(results: list[dict]) -> str:
    rows = ["| target | inputs | crashes | hangs | forbidden events (writes outside tmp, exec, dlopen, ...) "
            "| gate holes | writes inside tmp | cwd untouched | peak RSS (MB) | slowest input (s) | outcomes |",
            "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|"]
    tot = Counter()
    for r in results:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(r.get("outcomes", {}).items(), key=lambda kv: -kv[1]))
        rows.append(f"| {r['target']} | {r.get('inputs', 0):,} | {r.get('crashes', 0)} | {r.get('hangs', 0)} | "
                    f"{r.get('violations', 0)} | {r.get('holes', 0)} | {r.get('writes_inside', 0)} | "
                    f"{'yes' if r.get('cwd_left_empty', True) else 'NO'} | {r.get('peak_rss_mb', 0):.0f} | "
                    f"{r.get('slowest', 0):.2f} | {outcomes} |")
        for k in ("inputs", "crashes", "hangs", "violations", "holes", "writes_inside"):
            tot[k] += r.get(k, 0)
    rows.append(f"| **total** | **{tot['inputs']:,}** | {tot['crashes']} | {tot['hangs']} | {tot['violations']} | "
                f"{tot['holes']} | {tot['writes_inside']} | | | | |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    from .targets import TARGETS

    p = argparse.ArgumentParser(prog="python -m fuzz.run", description=__doc__.split("\n\n")[0])
    p.add_argument("targets", nargs="*", default=list(TARGETS), help=f"default: all ({', '.join(TARGETS)})")
    p.add_argument("--inputs", type=int, default=0, help="inputs per target")
    p.add_argument("--seconds", type=float, default=0, help="seconds per target")
    p.add_argument("--jobs", "-j", type=int, default=1, help="targets run at the same time")
    p.add_argument("--seed", type=int, default=1, help="run seed (inputs are a function of it)")
    p.add_argument("--seeds", nargs="*", default=[str(d) for d in DEFAULT_SEEDS],
                   help="directories of seed binaries and wheels (default: fixtures/out)")
    p.add_argument("--real-wheels", default=str(DEFAULT_REAL_WHEELS), help="wheels whose small binaries seed too")
    p.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "wheelaudit-fuzz"), help="report and crashes")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds one input may take (a hang beyond)")
    p.add_argument("--memory-mb", type=int, default=3072, help="address-space limit of a worker")
    p.add_argument("--replay", type=int, default=None, metavar="INDEX", help="re-run one input and show the result")
    args = p.parse_args(argv)
    for t in args.targets:
        if t not in TARGETS:
            p.error(f"unknown target {t!r}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.replay is not None:
        from . import targets as T
        from .mutate import generate

        corpus = _corpus(args)
        for t in args.targets:
            data = generate(t, corpus, args.seed, args.replay)
            ws = T.Workspace(corpus.wheel_paths)
            t0 = time.perf_counter()
            print(f"{t}[{args.replay}] ({len(data)} bytes): {T.load_target(t)(data, ws)} "
                  f"in {time.perf_counter() - t0:.3f}s")
            T.cleanup(ws)
        return 0
    if not args.inputs and not args.seconds:
        p.error("give --inputs or --seconds")
    cache = out / ".corpus.pickle"
    if cache.exists():
        cache.unlink()
    corpus = _corpus(args)
    print(f"seeds: {corpus.summary()}", flush=True)
    from concurrent.futures import ThreadPoolExecutor

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda t: run_target(t, args), args.targets))
    report = {"seed": args.seed, "timeout": args.timeout, "memory_mb": args.memory_mb,
              "wall_seconds": round(time.monotonic() - t0, 1), "results": results,
              "python": sys.version.split()[0]}
    (out / "report.json").write_text(json.dumps(report, indent=2))
    print(table(results))
    print(f"\nwall time {report['wall_seconds']}s; report: {out / 'report.json'}")
    bad = sum(r.get("crashes", 0) + r.get("hangs", 0) + r.get("violations", 0) + r.get("holes", 0) for r in results)
    bad += sum(0 if r.get("cwd_left_empty", True) else 1 for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
