#!/bin/sh
# Run wheelaudit's fuzz harnesses at length (see SECURITY.md and fuzz/run.py).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [JOBS] [OUT]
#
# 1. builds the seeds once (the fixture libraries and wheels) into OUT/seeds;
# 2. runs every target of fuzz/targets.py (elf, macho, pe, wheel, rules, glob, names) for
#    SECONDS_PER_TARGET seconds (default 300), JOBS at a time (default 2), with the per-input time
#    bound, the address-space limit and the audit hook of fuzz/run.py; small binaries of the
#    wheels in $REAL_WHEELS (default /tmp/realwheels, when present) seed too;
# 3. when atheris is installed and ATHERIS_SECONDS > 0, runs the coverage-guided harness
#    (fuzz/atheris_main.py) on the elf, macho, wheel and rules targets for that long each.
#
# Prints the table of SECURITY.md (inputs, crashes, hangs, forbidden events, peak memory) and
# writes OUT/report.json; crashing and hanging inputs land in OUT/crashes. Exit 1 when anything
# was found. Replay one input with: python -m fuzz.run TARGET --replay INDEX --seeds OUT/seeds
set -u
cd "$(dirname "$0")/.."
PER_TARGET=${1:-300}
JOBS=${2:-2}
OUT=${3:-${TMPDIR:-/tmp}/wheelaudit-fuzz}
REAL_WHEELS=${REAL_WHEELS:-/tmp/realwheels}
ATHERIS_SECONDS=${ATHERIS_SECONDS:-0}
SEEDS="$OUT/seeds"
PY=${PYTHON:-python}

mkdir -p "$OUT"
if [ ! -d "$SEEDS/libs" ]; then
    echo "building seeds in $SEEDS"
    "$PY" fixtures/make_wheels.py "$SEEDS" >/dev/null || exit 2
    sh fixtures/build_fixtures.sh "$SEEDS/libs" >/dev/null || exit 2
fi
rm -rf "$OUT/crashes"

status=0
"$PY" -m fuzz.run --seconds "$PER_TARGET" --jobs "$JOBS" --seeds "$SEEDS" --real-wheels "$REAL_WHEELS" \
    --out "$OUT" || status=$?

if [ "$ATHERIS_SECONDS" -gt 0 ] && "$PY" -c "import atheris" 2>/dev/null; then
    for target in elf macho wheel rules; do
        log="$OUT/atheris-$target.log"
        "$PY" fuzz/atheris_main.py "$target" --seeds "$SEEDS" --real-wheels "$REAL_WHEELS" -- \
            -max_total_time="$ATHERIS_SECONDS" -timeout=10 -rss_limit_mb=3072 -print_final_stats=1 \
            -artifact_prefix="$OUT/atheris-$target-" >"$log" 2>&1 || status=1
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
        crashes=$(ls "$OUT"/atheris-"$target"-crash-* "$OUT"/atheris-"$target"-timeout-* \
                     "$OUT"/atheris-"$target"-oom-* 2>/dev/null | wc -l)
        echo "atheris $target: ${runs:-?} inputs, $crashes crashes/timeouts/ooms, peak RSS ${rss:-?} MB ($log)"
    done
fi
exit $status
