"""Hostile and broken rules files, end to end through ``wheelaudit check --rules``, and the cost of
pathological globs and symbol patterns.

Every bad rules file is exit 2 with one line that names the file (and the line and key when
there is one) — never a traceback, never a hang. Patterns cannot backtrack by construction
(``wheelaudit.model.globs``: bit-parallel automata, and symbol patterns placed piece by piece with
``str.find``); the timing tests put the worst patterns the limits allow against the longest texts
a wheel can hold.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bounds import CountingText, lines_executed, no_hang, read_by  # noqa: E402
from fuzz.guard import Guard  # noqa: E402
from fuzz.mutate import tiny_wheel  # noqa: E402
from wheelaudit.cli.main import main  # noqa: E402
from wheelaudit.model.globs import MAX_PATTERN_LENGTH, MAX_STATES, Glob, GlobError, SymbolPattern  # noqa: E402
from wheelaudit.ruleset.errors import RulesError  # noqa: E402
from wheelaudit.ruleset.load import MAX_KEY_PARTS, MAX_RULES_SIZE, parse_rules  # noqa: E402


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("hostile_rules") / "fuzz-1.0-py3-none-any.whl"
    p.write_bytes(tiny_wheel([("pkg/__init__.py", b"")], tag="py3-none-any"))
    return p


def run_rules(wheel: Path, rules: Path, capsys) -> tuple[int, str]:
    """``check`` with these rules, watched (nothing written, nothing run); a hang fails the run
    (:func:`bounds.no_hang`). What bounds the work is the refusal each test asserts."""
    guard = Guard(allowed=[], foreign=[wheel.parent])
    with no_hang(), guard.watch():
        rc = main(["check", str(wheel), "--rules", str(rules)])
    out, err = capsys.readouterr()
    assert guard.violations == []
    assert "Traceback" not in out + err
    return rc, err


def refused(wheel: Path, tmp_path: Path, capsys, content: str | bytes) -> str:
    """Write ``content`` as a rules file, run check with it: exit 2, one line per problem naming the file."""
    rules = tmp_path / "rules.toml"
    if isinstance(content, str):
        rules.write_text(content, encoding="utf-8")
    else:
        rules.write_bytes(content)
    rc, err = run_rules(wheel, rules, capsys)
    assert rc == 2, err
    assert (err.startswith(f"wheelaudit: invalid rules: {rules}") or err.startswith("wheelaudit: error: ")
            or (err.startswith("wheelaudit: invalid rules (") and f"\n  {rules}:" in err)), err
    problems = err.count("\n  ")  # several problems: a heading, then one line each
    assert err.count("\n") == (1 if not problems else problems + 1), err
    return err.strip()


# =============================================================================================
# syntax, types, keys


@pytest.mark.parametrize("text, expect", [
    ("version = 1\n[libraries\n", ":2: TOML syntax error: "),
    ('version = 1\nname = "unterminated\n', ":2: TOML syntax error: "),
    ("version = 1\nversion = 1\n", ":2: TOML syntax error: "),
    ("version = 1\n[[component]]\nname = 'a'\n[component]\n", "TOML syntax error"),
    ("version = 1\nx = 1" + "0" * 5000 + "\n", "a TOML value cannot be read: Exceeds the limit (4300 digits)"),
    ("version = 1\nx = 1979-02-30\n", "TOML syntax error"),
])
def test_invalid_toml(wheel, tmp_path, capsys, text, expect):
    assert expect in refused(wheel, tmp_path, capsys, text)


@pytest.mark.parametrize("text, expect", [
    ('version = "1"\n', ':1: key "version": expected the integer 1, got string "1"'),
    ("version = 2\n", 'unsupported rules version 2'),
    ("version = 1\n[libraries]\nexpected = 3\n", ':3: libraries: key "expected": expected a string or a list of globs, got integer 3'),
    ("version = 1\ncomponent = 3\n", 'key "component": expected an array of tables ([[component]]), got integer 3'),
    ("version = 1\ncomponent = [1, 2]\n", "component[1]: expected a table, got integer 1"),
    ('version = 1\n[[file]]\nname = "x"\nglob = "a"\ncount = -1\n', 'key "count": expected a non-negative integer, got integer -1'),
    ('version = 1\n[[file]]\nname = "x"\nglob = "a"\ncount = nan\n', "got float nan"),
    ('version = 1\n[[waive]]\ncode = "WA201"\nreason = "r"\nuntil = 2026-01-01T00:00:00\n', 'expected a date like 2027-06-30'),
    ('version = 1\n[[component]]\nname = "a"\nsymbols = ["x"]\nrequired = "yes"\n', 'key "required"'),
    ('version = 1\n[[waive]]\ncode = "XX1"\nreason = "r"\n', 'key "code"'),
])
def test_wrong_types(wheel, tmp_path, capsys, text, expect):
    assert expect in refused(wheel, tmp_path, capsys, text)


@pytest.mark.parametrize("text, expect", [
    ("version = 1\nfoo = 1\n", ':2: key "foo": unknown key (known keys: version, name'),
    ('version = 1\n[[component]]\nname = "a"\nsymbols = ["x"]\nstrong_only = true\n',
     ':5: component[1] "a": key "strong_only": unknown key (did you mean "strong-only"?)'),
    ("version = 1\n[linkage]\nallow_rpath = []\nallow-external = []\n", 'key "allow_rpath": unknown key'),
])
def test_unknown_keys(wheel, tmp_path, capsys, text, expect):
    assert expect in refused(wheel, tmp_path, capsys, text)


# =============================================================================================
# size, depth, junk


def test_file_over_the_size_limit_is_not_read(wheel, tmp_path, capsys):
    rules = tmp_path / "rules.toml"
    with open(rules, "wb") as fh:  # sparse: 6 MB that cost nothing to write
        fh.truncate(MAX_RULES_SIZE + 1024 * 1024)
    rc, err = run_rules(wheel, rules, capsys)
    assert rc == 2 and f"at most {MAX_RULES_SIZE} bytes (5 MB) are read" in err
    _, read = read_by(lambda: main(["check", str(wheel), "--rules", str(rules)]))
    capsys.readouterr()
    assert read < MAX_RULES_SIZE // 10  # its size is checked, its bytes never read


def _components(n: int) -> str:
    return "".join(f'[[component]]\nname = "c{i}"\nsymbols = ["ns{i}::*", "f{i}"]\nrequired = false\n'
                   f'owner = "pkg/lib{i}.{{so,dylib}}"\n' for i in range(n))


def test_large_valid_file_is_bounded(wheel, tmp_path, capsys):
    """A legitimate but large rules file (1 MB, 4,000 components) loads and is checked."""
    comps = _components(4000)
    rules = tmp_path / "rules.toml"
    rules.write_text("version = 1\n" + comps + "#" * max(0, (1 << 20) - len(comps)) + "\n")
    rc, err = run_rules(wheel, rules, capsys)
    assert rc in (0, 1), err


def test_the_work_of_a_rules_file_grows_linearly(wheel, tmp_path, capsys):
    """Loading and checking 4 times the components runs about 4 times the Python lines beyond those
    of an empty rules file (a quadratic step among the components, 16 times: one of a few lines
    per pair of components shows at these sizes)."""
    work = {}
    for n in (0, 0, 100, 400):  # (the first run also pays for lazy imports and caches)
        rules = tmp_path / f"rules{n}.toml"
        rules.write_text("version = 1\n" + _components(n))
        rc, work[n] = lines_executed(lambda rules=rules: main(["check", str(wheel), "--rules", str(rules)]))
        capsys.readouterr()
        assert rc == 0
    assert work[400] - work[0] < 5 * (work[100] - work[0]), work


@pytest.mark.parametrize("text, expect", [
    ("version = 1\nx = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ("version = 1\nx = " + "{a = " * 20_000 + "1" + "}" * 20_000 + "\n", "nested too deeply"),
    # tomllib takes time quadratic in a dotted key's depth: refused before it starts
    ("version = 1\n" + ".".join(["a"] * 500_000) + " = 1\n", f"a key with more than {MAX_KEY_PARTS} dotted parts"),
    ("version = 1\n[" + ".".join(["a"] * 500_000) + "]\n", f"a key with more than {MAX_KEY_PARTS} dotted parts"),
    ("version = 1\n[[" + " . ".join(['"a"'] * 200_000) + "]]\n", f"a key with more than {MAX_KEY_PARTS} dotted parts"),
    ("version = 1\nx = {" + ".".join(["a"] * 500_000) + " = 1}\n", f"a key with more than {MAX_KEY_PARTS} dotted parts"),
])
def test_deep_nesting(wheel, tmp_path, capsys, text, expect):
    assert expect in refused(wheel, tmp_path, capsys, text)


def test_dots_in_values_are_not_keys():
    """Floats, versions and sentences in strings are not deep keys."""
    text = ('version = 1\nname = "' + "a. " * 1000 + '"\n[[component]]\nname = "x"\nrequired = false\n'
            'symbols = [' + ", ".join(f'"v1.2.3.{i}"' for i in range(300)) + "]\n")
    assert parse_rules(text).components[0].name == "x"


@pytest.mark.parametrize("content, expect", [
    (os.urandom(4096) + b"\xff", "not UTF-8 text: byte 0x"),
    ("version = 1\n".encode("utf-16"), "not UTF-8 text: byte 0xff"),
    (b"version = 1\x00\n", "TOML syntax error"),
    (b"\x7fELF\x02\x01\x01" + bytes(200), "TOML syntax error"),
    (b"PK\x03\x04" + bytes(200), "TOML syntax error"),
], ids=["random", "utf-16", "nul", "elf", "zip"])
def test_binary_junk(wheel, tmp_path, capsys, content, expect):
    assert expect in refused(wheel, tmp_path, capsys, content)


def test_long_names_are_clipped_in_messages(wheel, tmp_path, capsys):
    err = refused(wheel, tmp_path, capsys, "version = 1\n" + "k" * 1_000_000 + " = 1\n")
    assert "(1000000 characters)" in err and len(err) < 1000


def test_not_a_regular_file(wheel, tmp_path, capsys):
    d = tmp_path / "dir.toml"
    d.mkdir()
    rc, err = run_rules(wheel, d, capsys)
    assert rc == 2 and err.strip() == f"wheelaudit: error: rules file {d} is not a file"
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # reading it would block forever
    rc, err = run_rules(wheel, fifo, capsys)
    assert rc == 2 and "is not a file" in err
    rc, err = run_rules(wheel, tmp_path / "missing.toml", capsys)
    assert rc == 2 and "does not exist" in err


def test_hostile_pyproject_is_found_and_refused(wheel, tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()  # the discovery stops at the repository root
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.wheelaudit]\n" + ".".join(["a"] * 200_000) + " = 1\n")
    guard = Guard(allowed=[], foreign=[wheel.parent])
    with guard.watch():
        rc = main(["check", str(wheel)])
    err = capsys.readouterr().err
    assert rc == 2 and "pyproject.toml:2: a key with more than" in err and guard.violations == []
    (tmp_path / "pyproject.toml").write_text('[tool.wheelaudit]\nrules = "."\n')
    assert main(["check", str(wheel)]) == 2
    assert 'is not a file' in capsys.readouterr().err


# =============================================================================================
# pathological patterns: refused when too big, linear when accepted


@pytest.mark.parametrize("glob, expect", [
    ("{a,{b,{c,{d,{e,{f,{g,{h,{i,{j,{k,{l}}}}}}}}}}}", "braces nested deeper than 10 levels"),
    ("{a,b}" * 12, "braces expand to more than 1000 alternatives"),
    ("{a,b}" * 9 + "*a" * 1900, f"more than {MAX_STATES} characters and wildcards in all"),
    ("*a" * 3000, f"at most {MAX_PATTERN_LENGTH} are allowed"),
    ("[z-a]", "reversed range"),
    ("lib\\", "a trailing backslash escapes nothing"),
])
def test_glob_limits_in_a_rules_file(wheel, tmp_path, capsys, glob, expect):
    err = refused(wheel, tmp_path, capsys, f'version = 1\n[libraries]\nexpected = ["{glob}"]\n'.replace("\\", "\\\\"))
    assert ':3: libraries: key "expected": item 1: ' in err and expect in err


def _worst_globs() -> list[tuple[str, bool]]:
    n = MAX_PATTERN_LENGTH
    return [
        ("*a" * (n // 2 - 1) + "b", False),  # classic backtracking bait
        ("**a" * (n // 3 - 1) + "b", False),
        ("*a" + "?" * (n - 4) + "b", False),  # "the n-th character from the end": a 2^n-state DFA
        ("**/" * (n // 3), False),
        ("{a,b}{a,b}{a,b}{a,b}" + "*[ab]" * ((n - 20) // 5), True),  # 16 alternatives at full length
        ("[" + "a-b" * ((n - 4) // 3) + "]*", False),
    ]


@pytest.mark.parametrize("pattern, cross", _worst_globs(), ids=["star-a", "dstar-a", "nth-from-end", "dstar-slash",
                                                               "braces", "big-class"])
def test_worst_globs_against_the_longest_texts_are_linear(pattern, cross):
    """Patterns at the length limit against a 64 KiB text (the longest zip member name) of the
    worst shape for each: one pass over the text (each character read once), where a
    backtracking matcher would never end."""
    rng = random.Random(7)
    texts = ["a" * 65_535, "".join(rng.choice("ab") for _ in range(65_535)), "a/" * 32_767 + "x"]
    g = Glob(pattern, cross_slash=cross)
    for text in texts:
        counted = CountingText(text, limit=len(text))
        g.match(counted)
        assert counted.searches <= 1, (pattern[:40], text[:10], counted.searches)


def test_worst_symbol_patterns_against_long_names_are_linear():
    """Entries at the length limit against a name of 300,000 characters: a search per piece and
    one pass over the name at most, where placing the pieces by backtracking tries every split."""
    n = MAX_PATTERN_LENGTH
    for entry in ("a" + "*a" * (n // 2 - 1), "a*" + "a" * (n - 2), "x*" + "a" * (n - 2), "a*" + "ab" * (n // 2 - 1)):
        sp = SymbolPattern(entry)
        for name in ("a" * 300_000, "a" * 300_000 + "("):  # a symbol name can be as long as its string table
            counted = CountingText(name, limit=2 * len(name))
            sp.matches(counted)
            assert counted.searches <= entry.count("*") + 34, (entry[:20], counted.searches)


def test_pattern_errors_never_escape_as_other_exceptions():
    rng = random.Random(11)
    alphabet = "*?[]{},\\!^-/ab"
    for _ in range(3000):
        pattern = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        try:
            Glob(pattern).match("ab/ba")
        except GlobError:
            pass
        try:
            SymbolPattern(pattern).matches("ab::ba(")
        except GlobError:
            pass


def test_rules_error_is_the_only_exception_of_the_loader():
    """parse_rules raises RulesError (never ValueError, RecursionError, ...) on any text."""
    rng = random.Random(5)
    pieces = ["[", "]", "{", "}", "=", ".", ",", '"', "'", "\n", "a", "1", "version = 1\n", "[[component]]\n",
              "1e999", "0x", "-", "#", "\\u", "\x00", "é", "9" * 5000, "[" * 1000, "a." * 200]
    for _ in range(1500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 40)))
        try:
            parse_rules(text)
        except RulesError:
            pass
