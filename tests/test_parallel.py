"""The scan's speed machinery must not change a result: worker processes (``--jobs``), the per-
binary time bound, the progress bar (a TTY only), compact symbol tables, the mangled-name
prefilter of the symbol index, and the one-pass `strings` search."""

from __future__ import annotations

import io
import os
import pickle
import signal
import time
from bisect import bisect_left
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelaudit import audit, load_rules, scan
from wheelaudit import pipeline
from wheelaudit.facts import Symbol
from wheelaudit.globs import SymbolPattern
from wheelaudit.index import Interest, SymbolIndex, hints_of, narrow
from wheelaudit.progress import Progress
from wheelaudit.strings import NeedleSearch, StreamSearch, can_overlap
from wheelaudit.symbols import SymbolTable, qualified_name, symbol_code

ROOT = Path(__file__).resolve().parent.parent
EXECUTORCH = ROOT / "rules" / "executorch.toml"


def _facts(wheel):
    """Everything a scan established, in comparable form."""
    libs = []
    for b in wheel.libraries:
        slices = []
        for s in b.slices:
            slices.append((s.arch, s.kind, s.identity, s.dependencies, s.rpaths, s.min_os, s.sdk,
                           s.needs_versions, s.stripped, s.imports, s.strings, s.notes,
                           s.exec_stack, s.textrel, s.debug_bytes, s.signature, s.signature_detail,
                           s.signature_page,
                           [(x.name, x.demangled, x.binding, x.type, x.version) for x in s.exports],
                           [(x.name, x.demangled, x.binding, x.type) for x in s.locals]))
        libs.append((b.path, b.format, b.size, b.kind, b.error, slices))
    return (wheel.name, wheel.version, wheel.tags, wheel.files, libs,
            [(f.code, f.message, f.subject, f.paths) for f in wheel.findings])


# --------------------------------------------------------------------------------------------
# --jobs 1 and --jobs 2 give the same wheel and the same report


def test_jobs_give_equal_results(fixture_wheels):
    rules = load_rules(EXECUTORCH)
    for name, path in sorted(fixture_wheels.items()):
        one = scan(path, strings=rules.strings(), jobs=1)
        two = scan(path, strings=rules.strings(), jobs=2)
        assert _facts(one) == _facts(two), name
        r1 = audit(path, rules, jobs=1).to_json()
        r2 = audit(path, rules, jobs=2).to_json()
        assert r1 == r2, name


def test_meanwhile_runs_while_workers_read_and_the_command_keeps_what_a_scan_leaves(fixture_wheels, monkeypatch):
    """``scan(meanwhile=...)`` is called once when the scan uses worker processes, and while the
    largest member's worker reads when it starts early (the command line imports the evaluation
    there), not at all in one process; ``scan.RETAIN`` (set by ``cli.console``) holds the last
    scan's working structures, one scan's at a time, and only then are objects frozen out of
    the cyclic collector's way."""
    import importlib
    import multiprocessing

    scan_module = importlib.import_module("wheelaudit.scan")
    assert scan_module.RETAIN is None  # (a library call frees what it made)
    path = fixture_wheels["macos_clean"]
    calls: list[tuple[str, int]] = []
    scan(path, jobs=1, meanwhile=lambda: calls.append(("one", 0)))
    assert calls == []
    scan(path, jobs=2, meanwhile=lambda: calls.append(("two", len(multiprocessing.active_children()))))
    assert [c[0] for c in calls] == ["two"]
    real = pipeline.quick_largest
    monkeypatch.setattr(pipeline, "quick_largest", lambda p, min_size=0: real(p, 0))  # (any member starts early)
    scan(path, jobs=2, meanwhile=lambda: calls.append(("early", len(multiprocessing.active_children()))))
    assert calls[1][0] == "early" and calls[1][1] >= 1
    monkeypatch.setattr(pipeline, "quick_largest", real)
    import gc

    frozen = gc.get_freeze_count()  # (whatever the session froze before: none, as a rule)
    scan(path, jobs=2)
    assert gc.get_freeze_count() == frozen  # a library call leaves the collector alone
    monkeypatch.setattr(scan_module, "RETAIN", [])
    try:
        first = scan(path, jobs=2)
        assert gc.get_freeze_count() > frozen  # the command's process: out of the collector's way
        (kept,) = scan_module.RETAIN
        source, work, outcome, checked, record = kept
        assert len(work) == len(outcome) == len(checked) == len(first.files)
        scan(fixture_wheels["linux_clean"], jobs=2)
        (again,) = scan_module.RETAIN
        assert again is not kept and again[0].path != source.path
    finally:
        gc.unfreeze()


def test_jobs_on_an_unpacked_tree(fixture_wheels, tmp_path):
    import zipfile

    path = fixture_wheels["macos_clean"]
    tree = tmp_path / "tree"
    with zipfile.ZipFile(path) as zf:
        zf.extractall(tree)
    one, two = scan(tree, jobs=1), scan(tree, jobs=2)
    assert _facts(one)[1:] == _facts(two)[1:]
    assert _facts(scan(path, jobs=1))[4] == _facts(one)[4]  # the same facts as from the .whl


def test_big_members_are_spooled_with_the_same_facts(fixture_wheels, monkeypatch):
    """A member over the memory limit is inflated to a spool file on a helper thread, with the
    strings found while it goes by: the facts are those of the in-memory path."""
    rules = load_rules(EXECUTORCH)
    path = fixture_wheels["macos_universal2"]
    base = scan(path, strings=rules.strings(), jobs=1)
    monkeypatch.setattr(pipeline, "MEMORY_LIMIT", 1024)
    monkeypatch.setattr(pipeline, "SMALL", 0)  # (members up to SMALL are read whole, never spooled)
    spooled: list[str] = []
    real = pipeline.MemberReader._spool

    def spool(self, job, *args):
        spooled.append(job.path)
        return real(self, job, *args)

    monkeypatch.setattr(pipeline.MemberReader, "_spool", spool)
    for jobs in (1, 2):
        assert _facts(scan(path, strings=rules.strings(), jobs=jobs)) == _facts(base)
    assert any(p.endswith(".dylib") for p in spooled)


@pytest.mark.parametrize("signed", [False, True], ids=["unsigned-x86_64", "signed-arm64"])
def test_a_thin_macho_is_spooled_sparse_with_the_same_facts(fixture_wheels, fixture_build_dir, monkeypatch,
                                                            tmp_path, signed):
    """A large thin Mach-O member is written to its spool file only where the reader reads
    (readers.spool_ranges): the facts, RECORD's word and the strings found are those of the
    in-memory path, and most of each such member was never written. A signed one (ld64.lld signs
    arm64 ad hoc) is written whole: checking its code signature (WA607) hashes every page."""
    import sys

    rules = load_rules(EXECUTORCH)
    if signed:
        path = fixture_wheels["macos_clean"]
    else:
        mw = sys.modules["make_wheels"]  # (loaded by the fixture_wheels fixture)
        tag = "cp311-cp311-macosx_10_13_x86_64"
        path = mw.write_wheel(tmp_path / mw.wheel_name(tag), mw._macos_layout(fixture_build_dir, arch="x86_64"), tag)
    base = scan(path, strings=rules.strings(), jobs=1)
    assert {s.signature for b in base.libraries for s in b.slices} == ({"valid"} if signed else {"absent"})
    monkeypatch.setattr(pipeline, "MEMORY_LIMIT", 1024)
    monkeypatch.setattr(pipeline, "SMALL", 0)
    written: list[tuple[int, int]] = []  # (bytes of the piece, bytes written) per piece
    real = pipeline._write_kept

    def counting(fd, piece, at, keep):
        before = os.fstat(fd).st_blocks
        n = real(fd, piece, at, keep)
        kept = len(piece) if keep is None else sum(max(0, min(hi, at + n) - max(lo, at)) for lo, hi in keep)
        written.append((n, kept))
        assert os.fstat(fd).st_blocks >= before
        return n

    monkeypatch.setattr(pipeline, "_write_kept", counting)
    for jobs in (1, 2):
        assert _facts(scan(path, strings=rules.strings(), jobs=jobs)) == _facts(base)
    total, kept = sum(n for n, _ in written), sum(k for _, k in written)
    if signed:
        assert written and kept == total, (kept, total)
    else:
        assert written and kept < total / 2, (kept, total)


def _read_with(reader, name, data, split):
    """``reader.parse`` of one in-memory member, its export trie read by a forked process or not."""
    job = pipeline.Job(0, name, len(data))
    record = pipeline.Record("macho", "", len(data))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline, "SPLIT_TRIE", 0 if split else 1 << 62)
        return reader.parse(job, record, bytes(data))


def _thin_machos(fixture_libs):
    from wheelaudit.readers import macho

    return [(p.name, p.read_bytes()) for p in sorted((fixture_libs / "macho").rglob("*.dylib"))
            if p.read_bytes()[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe") and macho.trie_size(p.read_bytes())]


def test_a_big_export_trie_read_by_a_forked_process_gives_the_same_binary(fixture_libs, fixture_wheels, monkeypatch,
                                                                          tmp_path):
    """A thin Mach-O file's export trie read in a forked process while the worker reads the rest
    (pipeline._ExportsHelper; forced here for every trie): the facts, the hints located and the
    notes are those of one process, with and without the rules' interest; also for tries made
    malformed (the same WA001 words), and when the child fails or dies."""
    import random

    from wheelaudit.readers import macho

    rules = load_rules(EXECUTORCH)
    files = _thin_machos(fixture_libs)
    assert len(files) >= 8
    started = []
    real_start = pipeline._ExportsHelper.start.__func__

    def start(cls, *args):
        helper = real_start(cls, *args)
        started.append(helper is not None)
        return helper

    monkeypatch.setattr(pipeline._ExportsHelper, "start", classmethod(start))

    def view(b):
        return (b.error, [(s.arch, s.identity, s.imports, s.notes, s.stripped, s.strings,
                           [(x.name, x.weak, x.type) for x in s.exports], [x.name for x in s.locals],
                           getattr(s.exports, "hits", None), getattr(s.locals, "hits", None)) for s in b.slices])

    rng = random.Random(7)
    for interest in (None, rules.interest()):
        reader = pipeline.MemberReader(tmp_path, tmp_path, tuple(rules.strings()), 60.0, interest=interest)
        for name, data in files:
            variants = [data]
            _lc_end, _ranges, (trie_off, trie_len) = macho._tables(data)
            for _ in range(6):
                bad = bytearray(data)
                for _ in range(rng.randint(1, 3)):
                    bad[trie_off + rng.randrange(trie_len)] = rng.choice((0, 0x7F, 0x80, 0xFF, rng.randrange(256)))
                variants.append(bytes(bad))
            for v in variants:
                assert view(_read_with(reader, name, v, True)) == view(_read_with(reader, name, v, False))
    assert sum(started) >= 2 * len(files) * 7, "the forked reading did not run"
    # a child that fails, or dies before it writes: the worker reads the trie itself
    name, data = files[0]
    reader = pipeline.MemberReader(tmp_path, tmp_path, (), 60.0)
    want = view(_read_with(reader, name, data, False))
    for broken in (lambda d: 1 / 0, lambda d: os._exit(3)):
        monkeypatch.setattr(pipeline, "exports_of", broken)
        assert view(_read_with(reader, name, data, True)) == want
    # --jobs 1 reads in one process, as it says: no fork, whatever the trie
    started.clear()
    monkeypatch.setattr(pipeline, "SPLIT_TRIE", 0)
    scan(fixture_wheels["macos_clean"], jobs=1)
    assert not any(started)
    # a child stuck past the bound: the binary is timed out (WA001) and the child killed, at once
    monkeypatch.setattr(pipeline, "exports_of", lambda d: time.sleep(60))
    reader = pipeline.MemberReader(tmp_path, tmp_path, (), 0.5)
    t0 = time.monotonic()
    got = _read_with(reader, name, data, True)
    assert "longer than 0.5 s" in (got.error or "") and time.monotonic() - t0 < 10
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # no child left behind


def test_an_elf_file_is_spooled_without_its_code_or_read_again_whole(fixture_wheels, monkeypatch):
    """A large ELF member is spooled without the inside of its executable segment (a guess,
    readers.spool_ranges): the facts are those of the in-memory path. When the guess leaves out
    a table the reader needs, the reader says so (Unspooled) and the member is read again whole,
    through the reference path: the same facts again."""
    from wheelaudit.readers import elf

    rules = load_rules(EXECUTORCH)
    path = fixture_wheels["linux_clean"]
    base = scan(path, strings=rules.strings(), jobs=1)
    monkeypatch.setattr(pipeline, "MEMORY_LIMIT", 1024)
    monkeypatch.setattr(pipeline, "SMALL", 0)
    monkeypatch.setattr(elf, "SPOOL_KEEP_PREFIX", 0)
    monkeypatch.setattr(elf, "SPOOL_MIN_HOLE", 64)
    # (the guess keeps the head it was made from, 64 KiB, all of a fixture: given its first KiB)
    real_ranges = pipeline.spool_ranges
    monkeypatch.setattr(pipeline, "spool_ranges", lambda fmt, head, size: real_ranges(fmt, head[:1024], size))
    again: list[str] = []
    real_reference = pipeline.MemberReader.reference

    def reference(self, job):
        again.append(job.path)
        return real_reference(self, job)

    monkeypatch.setattr(pipeline.MemberReader, "reference", reference)
    holes: list[bool] = []
    real_write = pipeline._write_kept

    def counting(fd, piece, at, keep):
        holes.append(keep is not None)
        return real_write(fd, piece, at, keep)

    monkeypatch.setattr(pipeline, "_write_kept", counting)
    assert _facts(scan(path, strings=rules.strings(), jobs=1)) == _facts(base)
    assert any(holes) and not again  # spooled sparse, and the guess held: nothing read twice
    holes.clear()
    # a guess that keeps nothing but the ELF header: every binary needs more, and is read again
    monkeypatch.setattr(pipeline, "spool_ranges", lambda fmt, head, size: [(0, 64)] if fmt == "elf" else None)
    for jobs in (1, 2):
        assert _facts(scan(path, strings=rules.strings(), jobs=jobs)) == _facts(base)
    assert any(holes) and any(p.endswith(".so") for p in again)


def test_a_corrupt_member_keeps_the_reference_message(fixture_wheels, tmp_path):
    """The fast member reader hands anything odd to the reference path: same WA002 words."""
    import zipfile

    src = fixture_wheels["macos_clean"]
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as zf:
        info = max(zf.infolist(), key=lambda i: i.compress_size)
    # flip a byte in the middle of the member's compressed data
    start = info.header_offset + 30 + len(info.orig_filename.encode()) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF
    bad = tmp_path / src.name
    bad.write_bytes(bytes(data))
    one, two = scan(bad, jobs=1), scan(bad, jobs=2)
    assert _facts(one) == _facts(two)
    assert any(f.code == "WA002" and info.filename in f.message for f in one.findings)


# --------------------------------------------------------------------------------------------
# The per-binary time bound


def _slow_reader(path_part: str, block_alarm: bool = False):
    real = pipeline.read_binary

    def slow(data, path, needles=(), defer_exports=False):
        if path_part in path:
            if block_alarm:  # a reader stuck where the timer cannot reach it (C code)
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            time.sleep(60)
        return real(data, path, needles, defer_exports)

    return slow


@pytest.mark.parametrize("jobs", [1, 2])
def test_time_bound_reports_wa001(fixture_wheels, monkeypatch, jobs):
    path = fixture_wheels["macos_clean"]
    base = scan(path, jobs=1)
    victim = base.libraries[0].path
    monkeypatch.setattr(pipeline, "read_binary", _slow_reader(victim))
    t0 = time.monotonic()
    wheel = scan(path, jobs=jobs, timeout=1.0)
    assert time.monotonic() - t0 < 30
    hit = [f for f in wheel.findings if f.code == "WA001"]
    assert [f.subject for f in hit] == [victim]
    assert "reading took longer than 1 s" in hit[0].message
    # every other binary was read as usual
    assert [b.path for b in wheel.libraries] == [b.path for b in base.libraries]
    assert all(b.ok for b in wheel.libraries if b.path != victim)


def test_time_bound_kills_a_stuck_worker(fixture_wheels, monkeypatch):
    if pipeline._context().get_start_method() != "fork":
        pytest.skip("the patched reader reaches worker processes only when they are forked")
    path = fixture_wheels["macos_clean"]
    base = scan(path, jobs=1)
    victim = base.libraries[-1].path
    monkeypatch.setattr(pipeline, "read_binary", _slow_reader(victim, block_alarm=True))
    monkeypatch.setattr(pipeline, "KILL_GRACE", 0.5)
    t0 = time.monotonic()
    wheel = scan(path, jobs=2, timeout=0.5)
    assert time.monotonic() - t0 < 30
    assert [f.subject for f in wheel.findings if f.code == "WA001"] == [victim]
    assert [b.path for b in wheel.libraries] == [b.path for b in base.libraries]


def test_time_bound_from_the_environment(monkeypatch):
    monkeypatch.setenv("WHEELAUDIT_BINARY_TIMEOUT", "7.5")
    assert pipeline.binary_timeout() == 7.5
    assert pipeline.binary_timeout(3) == 3.0
    monkeypatch.setenv("WHEELAUDIT_BINARY_TIMEOUT", "nonsense")
    from wheelaudit.settings import SettingError

    with pytest.raises(SettingError, match="WHEELAUDIT_BINARY_TIMEOUT"):  # never a silent fallback
        pipeline.binary_timeout()


# --------------------------------------------------------------------------------------------
# Progress bar: on a TTY only, after a delay, erased at the end


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_only_on_a_tty():
    for tty in (False, True):
        out = _Stream(tty)
        with Progress(100, "scanning x.whl", stream=out, delay=0) as bar:
            bar.last = -1.0
            bar.advance(50)
        text = out.getvalue()
        if tty:
            assert "scanning x.whl" in text and "50%" in text and text.endswith("\r\x1b[K")
        else:
            assert text == ""


def test_progress_waits_for_long_work():
    out = _Stream(True)
    with Progress(100, "x", stream=out) as bar:  # the default delay: a second
        bar.advance(100)
    assert out.getvalue() == ""


def test_progress_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("WHEELAUDIT_PROGRESS", "0")
    out = _Stream(True)
    with Progress(100, "x", stream=out, delay=0) as bar:
        bar.advance(100)
    assert out.getvalue() == ""


def test_scan_draws_nothing_when_stderr_is_not_a_tty(fixture_wheels, capsys):
    scan(fixture_wheels["macos_clean"], jobs=2)
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------------------------
# Compact symbol tables


def _table(names, codes=None, **kw):
    blob = b"\0".join(n.encode() for n in names) + b"\0"
    offs, at = [], 0
    for n in names:
        offs.append(at)
        at += len(n.encode()) + 1
    codes = codes or bytes(symbol_code("global", "func") for _ in names)
    return SymbolTable(blob, offs, codes, **kw)


def test_symbol_table_is_a_sequence_of_symbols():
    t = _table(["_ZN3mlx4core3addEv", "plain"])
    assert len(t) == 2 and bool(t)
    assert [s.name for s in t] == ["_ZN3mlx4core3addEv", "plain"]
    assert t[0].demangled == "mlx::core::add()" and t[1].demangled == "plain"
    assert t == [Symbol("_ZN3mlx4core3addEv", type="func"), Symbol("plain", type="func")]
    assert t + [] == list(t) and [] + t == list(t)
    assert t[-1:] == [Symbol("plain", type="func")]
    for proto in (2, 4, 5):
        assert pickle.loads(pickle.dumps(t, protocol=proto)) == t


def test_symbol_table_drops_repeats_lazily():
    local_func = symbol_code("local", "func")
    t = _table(["a", "b", "a"], bytes([local_func] * 3), unique=False)
    assert t.raw_count == 3 and [s.name for s in t] == ["a", "b"] and len(t) == 2


def test_symbol_table_macho_underscore():
    t = _table(["_foo", "__Z1fv"], underscore=True)
    assert [s.name for s in t] == ["foo", "_Z1fv"] and t[1].demangled == "f()"


def test_symbol_demangled_is_lazy_and_picklable():
    s = Symbol("_ZN3mlx4core3addEv", binding="weak")
    assert vars(s)["demangled"] is None
    assert s.demangled == "mlx::core::add()" and vars(s)["demangled"] == "mlx::core::add()"
    assert pickle.loads(pickle.dumps(s)) == s and s == Symbol("_ZN3mlx4core3addEv", "x", "weak")


# --------------------------------------------------------------------------------------------
# The prefiltered index finds what demangling everything finds, in the same order


class _BruteIndex:
    """The index as it was: every key of every symbol demangled and sorted."""

    def __init__(self, symbols):
        pairs = []
        for s in symbols:
            pairs.append((s.demangled, s))
            if s.name != s.demangled:
                pairs.append((s.name, s))
                q = qualified_name(s.demangled)
                if q != s.demangled:
                    pairs.append((q, s))
        pairs.sort(key=lambda p: p[0])
        self.keys = [p[0] for p in pairs]
        self.syms = [p[1] for p in pairs]

    def find(self, pattern, strong_only=False, limit=None):
        i = bisect_left(self.keys, pattern.literal_prefix)
        out, seen = [], set()
        while i < len(self.keys) and self.keys[i].startswith(pattern.literal_prefix):
            sym = self.syms[i]
            if (not strong_only or not sym.weak) and id(sym) not in seen and pattern.matches(self.keys[i]):
                seen.add(id(sym))
                out.append(sym)
                if limit is not None and len(out) >= limit:
                    break
            i += 1
        return out


def _patterns_for(symbols):
    pats = {"std::*", "operator new", "mlx::core::*", "executorch::*", "*init", "foo"}
    for s in symbols[:: max(1, len(symbols) // 40)]:
        parts = qualified_name(s.demangled).split("(")[0].split("::")
        for k in range(1, len(parts) + 1):
            pats.add("::".join(parts[:k]))
        if len(parts) > 1:
            pats.add("::".join(parts[:-1]) + "::*")
            pats.add("::".join(parts[:-1]) + "::" + parts[-1][:3] + "*")
        pats.add(s.name)
    out = []
    for e in sorted(pats):
        try:
            out.append(SymbolPattern(e))
        except Exception:  # noqa: BLE001 - a name that is not a valid entry
            pass
    return out


def test_prefiltered_index_equals_brute_force(fixture_wheels):
    checked = 0
    for name in ("macos_clean", "macos_universal2", "linux_clean"):
        if name not in fixture_wheels:
            continue
        for b in scan(fixture_wheels[name], jobs=1).libraries:
            for sl in b.slices:
                for table in (sl.exports, sl.locals):
                    syms = list(table)
                    if not syms:
                        continue
                    brute, fast = _BruteIndex(syms), SymbolIndex(table)
                    pats = _patterns_for(syms)
                    fast.prepare(pats)
                    for p in pats:
                        for strong in (False, True):
                            for limit in (3, None):
                                want = [(s.name, s.binding) for s in brute.find(p, strong, limit)]
                                got = [(s.name, s.binding) for s in fast.find(p, strong_only=strong, limit=limit)]
                                assert got == want, (b.path, p.entry, strong, limit)
                                checked += 1
    assert checked > 500


def test_narrowed_tables_answer_as_the_whole_ones(fixture_wheels):
    """A table narrowed to a ruleset's interest (in the worker) finds, for each of the rules'
    patterns, what the brute force finds over the whole table, in the same order."""
    checked = 0
    for name in ("macos_clean", "macos_universal2", "linux_clean"):
        for b in scan(fixture_wheels[name], jobs=1).libraries:
            for sl in b.slices:
                for table in (sl.exports, sl.locals):
                    syms = list(table)
                    if not isinstance(table, SymbolTable) or not syms:
                        continue
                    pats = _patterns_for(syms)
                    brute = _BruteIndex(syms)
                    # an interest from a part of the patterns: the table answers exactly those
                    for part in (pats[::2], [p for p in pats if "*" not in p.entry], pats):
                        interest = Interest.of(part)
                        narrowed = SymbolIndex(narrow(table, interest), part)
                        for p in part:
                            for strong, limit in ((False, None), (True, 3)):
                                want = [(s.name, s.binding) for s in brute.find(p, strong, limit)]
                                got = [(s.name, s.binding) for s in narrowed.find(p, strong_only=strong, limit=limit)]
                                assert got == want, (b.path, p.entry)
                                checked += 1
    assert checked > 500


def test_narrowing_keeps_names_whose_mangled_form_lacks_the_hint():
    """Operators (``_Znwm`` is ``operator new(unsigned long)``) and names that only a wildcard
    reaches carry no literal piece of the pattern: such patterns keep every mangled name."""
    names = [b"_Znwm", b"_ZdlPv", b"_ZN3foo3barEv", b"_ZNK3foo3bazEv", b"_ZplRK1AS1_", b"plain_c", b"foo_init",
             b"_ZN3qux4initEv", b"_ZN2ns27scipy_openblas_get_config64Ev", b"scipy_openblas_get_config64_",
             b"_Z3bazSb", b"_Z3bar12basic_string"]
    blob = b"\0".join(names) + b"\0"
    offsets, at = [], 0
    for n in names:
        offsets.append(at)
        at += len(n) + 1
    table = SymbolTable(blob, offsets, bytes([symbol_code("local", "func")] * len(names)))
    syms = list(table)
    brute = _BruteIndex(syms)
    entries = ["operator new", "operator+", "foo::*", "foo::bar", "*baz", "*init", "plain_c",
               "*openblas_get_config*", "*basic_string*"]
    pats = [SymbolPattern(e) for e in entries]
    for part in ([p] for p in pats):
        narrowed = narrow(table, Interest.of(part))
        got = [s.name for s in SymbolIndex(narrowed, part).find(part[0])]
        assert got == [s.name for s in brute.find(part[0])], part[0].entry
        assert got, part[0].entry  # each pattern matches something here
    assert len(narrow(table, Interest.of([SymbolPattern("plain_c")]))) == 1
    # a piece only an identifier can hold is required of mangled names too (a leading * leaves no
    # <length> to require); a word the demangler writes itself (Sb: std::basic_string) is not
    assert hints_of(SymbolPattern("*openblas_get_config*"))[1] == (b"openblas_get_config",)
    assert hints_of(SymbolPattern("*basic_string*"))[1] is None
    assert [s.name for s in SymbolIndex(table).find(SymbolPattern("*basic_string*"))] == ["_Z3bar12basic_string",
                                                                                           "_Z3bazSb"]


def test_locate_finds_names_that_share_a_tail():
    """Linkers merge "bar" into "foobar": an entry whose name starts inside another string
    contains a hit only if it starts at or before the hit."""
    from wheelaudit.index import locate

    blob = b"foobar\0xbarbar\0"
    # entries: foobar, bar (tail of foobar), xbarbar, barbar (tail), bar (tail), foobar again
    table = SymbolTable(blob, [0, 3, 7, 8, 11, 0], bytes(6), unique=False)
    got = locate(table, [b"bar", b"foo", b"oba", b"xb", b""])
    assert got == {b"bar": {0, 1, 2, 3, 4, 5}, b"foo": {0, 5}, b"oba": {0, 5}, b"xb": {2}, b"": set()}
    # hits far into very long names (a crafted table): the same answer by the linear way, in
    # bounded memory
    long_name = b"y" * (1 << 21) + b"bar"
    blob = long_name + b"\0" + b"foobar\0"
    at = len(long_name) + 1
    table = SymbolTable(blob, [0, len(long_name) - 3, at, at + 3], bytes(4), unique=False)
    assert locate(table, [b"bar", b"yyb", b"foo"]) == {b"bar": {0, 1, 2, 3}, b"yyb": {0}, b"foo": {2}}


def test_narrowing_keeps_the_report_and_drops_the_rest(fixture_wheels):
    """``check`` and ``audit`` scan with the rules' interest: every report is the one the whole
    tables give, while the local symbols kept are only those the rules can look at."""
    from wheelaudit.api import audit_wheels

    kept = total = 0
    for rules_file in sorted((ROOT / "rules").glob("*.toml")):
        rules = load_rules(rules_file)
        for name, path in sorted(fixture_wheels.items()):
            whole = scan(path, strings=rules.strings(), jobs=1)
            narrowed = scan(path, strings=rules.strings(), interest=rules.interest(), jobs=1)
            assert (audit_wheels([whole], rules).to_json() == audit_wheels([narrowed], rules).to_json()), (rules_file.name, name)
            total += sum(len(sl.locals) for b in whole.libraries for sl in b.slices)
            kept += sum(len(sl.locals) for b in narrowed.libraries for sl in b.slices)
    assert total > 1000 and kept < total * 0.6, (kept, total)  # (fixtures: the rules name most of them)


def test_a_scan_narrowed_for_other_rules_is_refused(fixture_wheels):
    """Evaluating rules the narrowed tables cannot answer would miss local evidence silently."""
    from wheelaudit.api import audit_wheels
    from wheelaudit.evaluate import evaluate

    mlx = load_rules(ROOT / "rules" / "mlx.toml")
    et = load_rules(EXECUTORCH)
    assert et.interest().covers(et.interest()) and not mlx.interest().covers(et.interest())
    wheel = scan(fixture_wheels["macos_clean"], strings=et.strings(), interest=mlx.interest(), jobs=1)
    with pytest.raises(ValueError, match="scanned for other rules"):
        audit_wheels([wheel], et)
    assert Interest(everything=True).covers(et.interest())
    assert (mlx.interest() | et.interest()).covers(et.interest())
    assert evaluate is not None


# --------------------------------------------------------------------------------------------
# One-pass strings search


def test_needles_that_overlap_are_all_found():
    hay = b"xxABCDyy" + b"\0" + b"zzCDEww"
    needles = [b"ABCD", b"CDE", b"BC", b"D", b"zz", b"none"]
    assert NeedleSearch(needles).found(hay) == frozenset({b"ABCD", b"CDE", b"BC", b"D", b"zz"})
    assert NeedleSearch(needles).found(hay, 0, 8) == frozenset({b"ABCD", b"BC", b"D"})
    assert can_overlap(b"ABCD", b"CDE") and can_overlap(b"ABCD", b"BC") and not can_overlap(b"AB", b"CD")


@settings(max_examples=500, deadline=None)
@given(a=st.binary(max_size=8) | st.text(alphabet="ab", max_size=8).map(str.encode),
       b=st.binary(max_size=8) | st.text(alphabet="ab", max_size=8).map(str.encode))
def test_can_overlap_equals_laying_one_over_the_other_everywhere(a, b):
    """Two different needles can overlap when one, laid over the other at some position of
    it, agrees with it where they meet (a prefix-suffix or containment); only the positions
    of the first byte are tried, and the answer is the one trying every position gives."""
    def everywhere(x, y):
        return any(x[k:k + min(len(x) - k, len(y))] == y[:min(len(x) - k, len(y))] for k in range(len(x)))

    assert can_overlap(a, b) == (a != b and (everywhere(a, b) or everywhere(b, a)))


def test_stream_search_across_chunk_boundaries():
    data = b"..Failed to load the default metallib.." + b"-" * 1000 + b"XNNPACK"
    needles = [b"Failed to load the default metallib", b"XNNPACK", b"absent"]
    for size in (1, 3, 7, 64, 4096):
        s = StreamSearch(needles, [(0, len(data)), (0, 500), (500, len(data))])
        for i in range(0, len(data), size):
            s.feed(data[i:i + size])
        assert s.result(0, len(data)) == frozenset(needles[:2])
        assert s.result(0, 500) == frozenset(needles[:1])
        assert s.result(500, len(data)) == frozenset(needles[1:2])


@settings(max_examples=300, deadline=None)
@given(hay=st.binary(max_size=300), needles=st.lists(st.binary(min_size=1, max_size=6), min_size=1, max_size=7),
       cuts=st.lists(st.integers(min_value=1, max_value=40), max_size=30), views=st.booleans())
def test_stream_search_equals_find(hay, needles, cuts, views):
    """Any chunking, one needle or several (searched singly or by one automaton), chunks as
    bytes or as memoryviews: the needles found per region are those ``bytes.find`` finds."""
    hay = hay + b"".join(needles[::2])  # some needles present for sure
    mid = len(hay) // 2
    regions = [(0, len(hay)), (0, mid), (mid, len(hay))]
    s = StreamSearch(needles, regions)
    pos = 0
    for n in cuts + [len(hay)]:
        piece = hay[pos:pos + n]
        s.feed(memoryview(piece) if views else piece)
        pos += n
        if pos >= len(hay):
            break
    for a, b in regions:
        assert s.result(a, b) == frozenset(x for x in needles if hay.find(x, a, b) != -1 and hay.find(x, a, b) + len(x) <= b)
    assert NeedleSearch(needles).found(hay) == frozenset(x for x in needles if x in hay)


def _last_in_strings_brute(needles, blob):
    out = {n: {} for n in needles if n and b"\0" not in n}
    start = 0
    for piece in blob.split(b"\0"):
        for n in out:
            p = piece.rfind(n)
            if p >= 0:
                out[n][start] = start + p
        start += len(piece) + 1
    return out


@settings(max_examples=400, deadline=None)
@given(names=st.lists(st.text(alphabet="abx", max_size=12).map(str.encode)
                     | st.binary(max_size=12).map(lambda b: b.replace(b"\0", b"")), max_size=12),
       needles=st.lists(st.sampled_from([b"a", b"aa", b"ab", b"ba", b"aba", b"b", b"bab", b"abab", b"x\0a"])
                        | st.binary(min_size=1, max_size=4), min_size=1, max_size=8),
       automaton=st.booleans())
def test_last_in_strings_equals_brute_force(names, needles, automaton):
    """Where each needle last occurs in each string of a string table: the one automaton pass
    (whose leftmost-first matches hide occurrences that overlap a reported one, of the same
    needle or another) and the plain ``find`` fallback both give what a per-string ``rfind``
    gives."""
    from wheelaudit import strings

    blob = b"\0".join(names) + b"\0" if names else b""
    with pytest.MonkeyPatch.context() as mp:
        if not automaton:
            mp.setattr(strings, "_ac", None)
        assert strings.last_in_strings(needles, blob) == _last_in_strings_brute(needles, blob)
        assert strings.last_in_strings(needles, blob[:-1]) == _last_in_strings_brute(needles, blob[:-1])


def test_locate_sees_an_occurrence_hidden_behind_the_same_needle():
    """"aaa" holds "aa" at 0 and at 1: the tail entry at offset 1 ("aa") contains it too,
    although a non-overlapping search reports only the first occurrence."""
    from wheelaudit.index import locate

    table = SymbolTable(b"aaa\0baba\0", [0, 1, 2, 4, 6], bytes(5), unique=False)
    assert locate(table, [b"aa", b"aba", b"ba"]) == {b"aa": {0, 1}, b"aba": {3}, b"ba": {3, 4}}


def test_largest_member_starts_early_with_the_same_results(fixture_wheels, monkeypatch):
    """The largest member is dispatched from a raw read of the central directory, before the
    member list exists; its result is matched to the real member afterwards."""
    import zipfile

    path = fixture_wheels["macos_universal2"]
    job, total = pipeline.quick_largest(path, min_size=0)
    with zipfile.ZipFile(path) as zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
    biggest = max(infos, key=lambda i: i.file_size)
    assert job is not None and job.path == biggest.filename and job.size == biggest.file_size
    assert total == sum(i.file_size for i in infos)
    base = scan(path, jobs=1)
    real = pipeline.quick_largest
    monkeypatch.setattr(pipeline, "quick_largest", lambda p, min_size=0: real(p, 0))
    assert _facts(scan(path, jobs=2)) == _facts(base)


def test_workers_forked_with_the_jobs_are_given_indices(fixture_wheels, monkeypatch):
    """A worker forked once the job list exists (all but the early one) is sent its batches as
    indices into the jobs it inherited ("picks"); the early worker, forked before the list
    existed, gets them whole ("batch"). The facts are those of one process either way, and of
    workers that are given every batch whole."""
    if pipeline._context().get_start_method() != "fork":
        pytest.skip("workers inherit the jobs only when forked")
    path = fixture_wheels["macos_fused"]
    base = _facts(scan(path, jobs=1))
    real_largest, real_send = pipeline.quick_largest, pipeline._send
    monkeypatch.setattr(pipeline, "quick_largest", lambda p, min_size=0: real_largest(p, 0))
    monkeypatch.setattr(pipeline, "plan", lambda jobs: [[j] for j in jobs])  # (a batch a member)
    sent: list[str] = []

    def spy(conn, obj):
        if obj[0] in ("batch", "picks"):
            sent.append(obj[0])
        real_send(conn, obj)

    monkeypatch.setattr(pipeline, "_send", spy)
    assert _facts(scan(path, jobs=2)) == base
    assert sent[0] == "batch" and "picks" in sent  # (the early job, then the others)
    sent.clear()
    real_init = pipeline._Worker.__init__
    monkeypatch.setattr(pipeline._Worker, "__init__", lambda self, *a, **k: real_init(self, *a[:7], known=None))
    assert _facts(scan(path, jobs=2)) == base
    assert sent and set(sent) == {"batch"}


def test_quick_largest_on_every_fixture_wheel(fixture_wheels):
    """The raw directory read picks what zipfile's list says is the largest member (the first
    of equal ones) and sums every member's size, on every fixture wheel."""
    import zipfile

    for name, path in sorted(fixture_wheels.items()):
        job, total = pipeline.quick_largest(path, min_size=0)
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
        files = [i for i in infos if not i.is_dir() and i.compress_type in (0, 8) and not i.flag_bits & 0x61]
        biggest = max(files, key=lambda i: i.file_size)  # (max keeps the first of equals)
        assert job is not None and (job.path, job.size, job.compressed) == \
            (biggest.filename, biggest.file_size, biggest.compress_size), name
        assert job.zip == (biggest.header_offset, biggest.compress_type, biggest.CRC,
                           biggest.orig_filename.encode()), name
        assert total == sum(i.file_size for i in infos), name


def test_quick_largest_gives_up_on_odd_archives(tmp_path):
    odd = tmp_path / "x.whl"
    odd.write_bytes(b"not a zip at all")
    assert pipeline.quick_largest(odd) == (None, 0)


@settings(max_examples=300, deadline=None)
@given(names=st.lists(st.text(alphabet="abx", min_size=1, max_size=10).map(str.encode), min_size=1, max_size=10),
       needles=st.lists(st.sampled_from([b"a", b"aa", b"ab", b"ba", b"aba", b"b", b"bab", b"x", b"xa"]),
                        min_size=1, max_size=6),
       picks=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=30),
       order=st.sampled_from(["ascending", "shuffled"]))
def test_locate_in_order_equals_brute_force(names, needles, picks, order):
    """``locate`` on a table whose name offsets ascend (bisection for each string's entries,
    as ld64's tables are read) and on the same entries out of order (one pass over the
    offsets): the entries whose names hold each hint, as checking every name gives. Entries
    start at a string's start or inside it (a shared tail)."""
    import random

    from wheelaudit.index import locate

    blob = b"\0".join(names) + b"\0"
    starts = [0]
    for n in names[:-1]:
        starts.append(starts[-1] + len(n) + 1)
    offsets = []
    for s, t in picks:
        k = s % len(names)
        offsets.append(starts[k] + t % len(names[k]))
    if order == "ascending":
        offsets.sort()
    else:
        random.Random(len(offsets)).shuffle(offsets)
    table = SymbolTable(blob, offsets, bytes(len(offsets)), unique=False)
    assert table.ascending() == (offsets == sorted(offsets))
    expected = {h: {i for i, o in enumerate(offsets) if h in blob[o:blob.index(b"\0", o)]} for h in needles}
    assert locate(table, needles) == expected
    # the same table told its offsets are out of order: the other way, the same answer
    unordered = SymbolTable(blob, offsets, bytes(len(offsets)), unique=False, ascending=False)
    assert locate(unordered, needles) == expected
