"""The scan's speed machinery must not change a result: worker processes (``--jobs``), the per-
binary time bound, the progress bar (a TTY only), compact symbol tables, the mangled-name
prefilter of the symbol index, and the one-pass `strings` search."""

from __future__ import annotations

import io
import pickle
import signal
import time
from bisect import bisect_left
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelaudit import audit, load_rules, scan
from wheelaudit.archive import members as archive_members
from wheelaudit.scanner import pool as scan_pool
from wheelaudit.scanner import read as scan_read
from wheelaudit.model.binary import Symbol
from wheelaudit.model.globs import SymbolPattern
from wheelaudit.binary.narrow import narrow
from wheelaudit.checks.index import SymbolIndex
from wheelaudit.model.interest import Interest, pattern_hints
from wheelaudit.scanner.progress import Progress
from wheelaudit.binary.strings import NeedleSearch, StreamSearch, can_overlap
from wheelaudit.binary.symbols import SymbolTable, qualified_name, symbol_code

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
            [(f.code, f.message, f.subject, f.paths) for f in wheel.defects])


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
    """A member over the memory limit is inflated to an anonymous temporary file, with the
    strings found while it goes by: the facts are those of the in-memory path."""
    rules = load_rules(EXECUTORCH)
    for name in ("macos_universal2", "linux_clean"):
        path = fixture_wheels[name]
        base = scan(path, strings=rules.strings(), jobs=1)
        with monkeypatch.context() as m:
            m.setattr(archive_members, "MEMORY_LIMIT", 1024)
            for jobs in (1, 2):
                assert _facts(scan(path, strings=rules.strings(), jobs=jobs)) == _facts(base), name


def test_a_corrupt_member_is_wa002_in_workers_too(fixture_wheels, tmp_path):
    """A member whose compressed data is damaged: the same WA002 in one process and in workers."""
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
    assert any(f.code == "WA002" and info.filename in f.message for f in one.defects)


# --------------------------------------------------------------------------------------------
# The per-binary time bound


def _slow_reader(path_part: str, block_alarm: bool = False):
    real = scan_read.read_binary

    def slow(data, path, needles=(), budget=None):
        if path_part in path:
            if block_alarm:  # a reader stuck where the timer cannot reach it (C code)
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            time.sleep(60)
        return real(data, path, needles, budget)

    return slow


@pytest.mark.parametrize("jobs", [1, 2])
def test_time_bound_reports_wa001(fixture_wheels, monkeypatch, jobs):
    path = fixture_wheels["macos_clean"]
    base = scan(path, jobs=1)
    victim = base.libraries[0].path
    monkeypatch.setattr(scan_read, "read_binary", _slow_reader(victim))
    wheel = scan(path, jobs=jobs, timeout=1.0)  # (without the bound: 60 s, and no WA001)
    hit = [f for f in wheel.defects if f.code == "WA001"]
    assert [f.subject for f in hit] == [victim]
    assert "reading took longer than 1 s" in hit[0].message
    # every other binary was read as usual
    assert [b.path for b in wheel.libraries] == [b.path for b in base.libraries]
    assert all(b.ok for b in wheel.libraries if b.path != victim)


def test_time_bound_kills_a_stuck_worker(fixture_wheels, monkeypatch):
    path = fixture_wheels["macos_clean"]
    base = scan(path, jobs=1)
    victim = base.libraries[-1].path
    monkeypatch.setattr(scan_read, "read_binary", _slow_reader(victim, block_alarm=True))
    monkeypatch.setattr(scan_pool, "KILL_GRACE", 0.5)
    wheel = scan(path, jobs=2, timeout=0.5)  # (without the kill: 60 s, and no WA001)
    assert [f.subject for f in wheel.defects if f.code == "WA001"] == [victim]
    assert [b.path for b in wheel.libraries] == [b.path for b in base.libraries]


def test_time_bound_from_the_environment(monkeypatch):
    monkeypatch.setenv("WHEELAUDIT_BINARY_TIMEOUT", "7.5")
    assert scan_read.binary_timeout() == 7.5
    assert scan_read.binary_timeout(3) == 3.0
    monkeypatch.setenv("WHEELAUDIT_BINARY_TIMEOUT", "nonsense")
    from wheelaudit.settings import SettingError

    with pytest.raises(SettingError, match="WHEELAUDIT_BINARY_TIMEOUT"):  # never a silent fallback
        scan_read.binary_timeout()


# --------------------------------------------------------------------------------------------
# Progress bar: on a TTY only, after a delay, erased at the end


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.fixture
def bar_allowed(monkeypatch):
    """The environment of a person at a terminal, whatever the environment the suite runs in
    (a CI runner sets ``CI``, which keeps the bar off unless ``WHEELAUDIT_PROGRESS=1``)."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("WHEELAUDIT_PROGRESS", "1")
    monkeypatch.setenv("TERM", "xterm")


def test_progress_only_on_a_tty(bar_allowed):
    for tty in (False, True):
        out = _Stream(tty)
        with Progress(100, "scanning x.whl", stream=out, delay=0) as bar:
            bar.advance(50)
        text = out.getvalue()
        if tty:
            assert "scanning x.whl" in text and "50%" in text and text.endswith("\r\x1b[K")
        else:
            assert text == ""


def test_progress_waits_for_long_work(bar_allowed):
    out = _Stream(True)
    with Progress(100, "x", stream=out) as bar:  # the default delay: a second
        bar.advance(100)
    assert out.getvalue() == ""


def test_progress_is_off_where_ci_is_set(bar_allowed, monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("WHEELAUDIT_PROGRESS")
    out = _Stream(True)
    with Progress(100, "x", stream=out, delay=0) as bar:
        bar.advance(100)
    assert out.getvalue() == ""


def test_progress_can_be_switched_off(bar_allowed, monkeypatch):
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
    assert pattern_hints(SymbolPattern("*openblas_get_config*"))[1] == (b"openblas_get_config",)
    assert pattern_hints(SymbolPattern("*basic_string*"))[1] is None
    assert [s.name for s in SymbolIndex(table).find(SymbolPattern("*basic_string*"))] == ["_Z3bar12basic_string",
                                                                                           "_Z3bazSb"]


def test_locate_finds_names_that_share_a_tail():
    """Linkers merge "bar" into "foobar": an entry whose name starts inside another string
    contains a hit only if it starts at or before the hit."""
    from wheelaudit.binary.narrow import locate

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
    from wheelaudit.checks.evaluate import evaluate

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
    from wheelaudit.binary import strings

    blob = b"\0".join(names) + b"\0" if names else b""
    with pytest.MonkeyPatch.context() as mp:
        if not automaton:
            mp.setattr(strings, "_ac", None)
        assert strings.last_in_strings(needles, blob) == _last_in_strings_brute(needles, blob)
        assert strings.last_in_strings(needles, blob[:-1]) == _last_in_strings_brute(needles, blob[:-1])


def test_locate_sees_an_occurrence_hidden_behind_the_same_needle():
    """"aaa" holds "aa" at 0 and at 1: the tail entry at offset 1 ("aa") contains it too,
    although a non-overlapping search reports only the first occurrence."""
    from wheelaudit.binary.narrow import locate

    table = SymbolTable(b"aaa\0baba\0", [0, 1, 2, 4, 6], bytes(5), unique=False)
    assert locate(table, [b"aa", b"aba", b"ba"]) == {b"aa": {0, 1}, b"aba": {3}, b"ba": {3, 4}}


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

    from wheelaudit.binary.narrow import locate

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


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab_\x00é?Z"), max_size=6), max_size=12),
       st.lists(st.integers(min_value=0, max_value=80), max_size=12), st.booleans(), st.booleans())
def test_symbol_table_names_are_its_symbols_names(strings, offsets, underscore, unique):
    # any blob and any offsets (merged tails, repeats, past the end): names() is each entry's name
    blob = "\0".join(strings).encode()
    t = SymbolTable(blob, offsets, bytes(symbol_code("global", "func") for _ in offsets),
                    underscore=underscore, unique=unique)
    assert t.names() == [s.name for s in t]
