"""Coverage-guided fuzzing of one target with atheris (libFuzzer), when atheris is installed.

    python fuzz/atheris_main.py TARGET [--seeds DIR ...] [--real-wheels DIR] -- [libFuzzer options]
    e.g. python fuzz/atheris_main.py macho -- -max_total_time=300 -timeout=10 -rss_limit_mb=3072

The seed corpus (the same seeds as ``fuzz/run.py``) is written to a temporary directory and
given to libFuzzer; wheelaudit is instrumented for coverage. An input fails (libFuzzer saves it
as ``crash-*``) when the target raises anything but its expected exception, or when the audit
hook of ``fuzz/guard.py`` saw a forbidden event (a write outside the temporary directory, a
program run, a library loaded, code from the input executed). libFuzzer's own ``-timeout`` and
``-rss_limit_mb`` catch hangs and memory bombs; ``-print_final_stats=1`` prints the number of
inputs run (``stat::number_of_executed_units``) and the peak memory (``scripts/fuzz.sh`` reads them).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def main() -> None:
    try:
        import atheris
    except ImportError:
        print("atheris is not installed (pip install atheris); use python -m fuzz.run instead", file=sys.stderr)
        raise SystemExit(2) from None
    argv = sys.argv[1:]
    ours, libfuzzer = (argv[: argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    p = argparse.ArgumentParser(prog="fuzz/atheris_main.py")
    p.add_argument("target")
    p.add_argument("--seeds", nargs="*", default=[str(HERE.parent / "fixtures" / "out")])
    p.add_argument("--real-wheels", default="/tmp/realwheels")
    p.add_argument("--corpus-inputs", type=int, default=300, help="generated inputs added to the seed corpus")
    p.add_argument("--max-seed", type=int, default=64 * 1024, help="larger seeds are left out (speed)")
    args = p.parse_args(ours)

    with atheris.instrument_imports(include=["wheelaudit"]):
        import wheelaudit.binary.elf  # noqa: F401
        import wheelaudit.binary.macho  # noqa: F401
        import wheelaudit.binary.pe  # noqa: F401
        import wheelaudit.scanner  # noqa: F401
        import wheelaudit.ruleset.load  # noqa: F401
        import wheelaudit.model.globs  # noqa: F401
        import wheelaudit.api  # noqa: F401
        import wheelaudit.render.text  # noqa: F401
        import wheelaudit.render.json  # noqa: F401
    from fuzz import targets as T
    from fuzz.guard import Guard
    from fuzz.mutate import generate, load_corpus

    real = sorted(Path(args.real_wheels).glob("*.whl")) if Path(args.real_wheels).is_dir() else []
    corpus = load_corpus([Path(d) for d in args.seeds], real)
    seed_dir = Path(tempfile.mkdtemp(prefix=f"wheelaudit-atheris-{args.target}-"))
    seeds: list[bytes] = [generate(args.target, corpus, 1, i) for i in range(args.corpus_inputs)]
    if args.target in ("elf", "macho", "pe"):
        seeds += corpus.binaries[args.target]
    elif args.target == "wheel":
        seeds += corpus.wheels
    elif args.target == "rules":
        seeds += corpus.rules
    for i, data in enumerate(d for d in seeds if len(d) <= args.max_seed):
        (seed_dir / f"s{i}").write_bytes(data)
    ws = T.Workspace(corpus.wheel_paths)
    if args.target == "rules":
        ws.wheel()
    ws.rules()
    fn = T.load_target(args.target)
    guard = Guard(allowed=[Path(tempfile.gettempdir())], foreign=[ws.dir])
    def one(data: bytes) -> None:
        before = len(guard.violations)
        with guard.watch():
            fn(data, ws)
        del guard.writes_inside[:]
        if len(guard.violations) > before:
            raise RuntimeError(f"forbidden event: {guard.violations[-1]}")

    if not any(a.startswith("-max_len=") for a in libfuzzer):
        libfuzzer.append(f"-max_len={args.max_seed}")
    atheris.Setup([sys.argv[0], str(seed_dir), *libfuzzer], one)
    os.chdir(tempfile.mkdtemp(prefix="wheelaudit-atheris-cwd-"))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
