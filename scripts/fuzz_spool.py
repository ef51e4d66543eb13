"""Differential fuzz of the sparse spool (readers.spool_ranges, readers.Unspooled) and of the
forked export-trie reading (pipeline._ExportsHelper): binaries mutated in their hot regions
(fuzz.mutate), each in a tiny wheel, scanned with the spool and fork thresholds forced low
against the plain in-memory path; every difference in facts or findings is printed and its wheel
kept.

    python scripts/fuzz_spool.py DIR [SEED] [SECONDS] [JOBS]

DIR: binaries to start from (e.g. fixtures/out/_build after the tests built it); JOBS 2 goes
through worker processes (the forked trie reader runs there), 1 in-process (default)."""
import random, sys, time, tempfile
from pathlib import Path
sys.path.insert(0, ".")
from fuzz.mutate import mutate_bytes, hot_regions, tiny_wheel
from wheelaudit import scan, pipeline
from wheelaudit.readers import elf, detect
if len(sys.argv) < 2 or not Path(sys.argv[1]).is_dir():
    sys.exit(__doc__.split("\n\n", 1)[1])  # (the usage lines)
root = Path(sys.argv[1])
files = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and p.stat().st_size > 64]
bins = []
for p in files:
    d = p.read_bytes()
    f = detect(d[:8])
    if f in ("elf", "macho"):
        bins.append((p.name, d, f))
print(len(bins), "binaries")
def facts(w):
    return [(b.path, b.error, [(s.arch, s.identity, s.dependencies, s.rpaths, s.imports, s.notes, s.strings,
             sorted((x.name, x.weak, x.type) for x in s.exports), sorted(x.name for x in s.locals)) for s in b.slices])
            for b in w.libraries], [(f.code, f.message) for f in w.findings]
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
tmp = Path(tempfile.mkdtemp())
n = diff = 0
t0 = time.time()
while time.time() - t0 < float(sys.argv[3] if len(sys.argv) > 3 else 120):
    name, data, fmt = rng.choice(bins)
    bad = mutate_bytes(data, rng, hot_regions(data, fmt))
    whl = tmp / "fz-1.0-py3-none-any.whl"
    whl.write_bytes(tiny_wheel([(f"fz/{name}", bad)]))
    pipeline.MEMORY_LIMIT, pipeline.SMALL, pipeline.SPLIT_TRIE = 64 << 20, 1 << 20, 512 << 10
    a = facts(scan(whl, strings=[b"XNNPACK", b"ONEDNN"], jobs=1))
    pipeline.MEMORY_LIMIT, pipeline.SMALL, pipeline.SPLIT_TRIE = 16, 0, 0
    elf.SPOOL_KEEP_PREFIX, elf.SPOOL_MIN_HOLE = 0, 16
    # (jobs=1 uses no fork; a worker reader is made directly to exercise the fork too)
    b = facts(scan(whl, strings=[b"XNNPACK", b"ONEDNN"], jobs=int(sys.argv[4]) if len(sys.argv) > 4 else 1))
    elf.SPOOL_KEEP_PREFIX, elf.SPOOL_MIN_HOLE = 32 << 20, 16 << 20
    n += 1
    if a != b:
        diff += 1
        print("DIFF", name); (tmp / f"diff{diff}.whl").write_bytes(whl.read_bytes())
print(n, "inputs,", diff, "differences")
