"""A short fuzz run in the default suite: every harness of ``fuzz/`` for a few seconds.

Hypothesis drives mutations of the fixture binaries, wheels and rulesets into each target of
``fuzz/targets.py`` (the binary readers, the wheel reader end to end, the rules loader, patterns,
symbol names), under the audit hook of ``fuzz/guard.py``. A crash (any exception but the
target's expected one), a slow input or a forbidden event (a write, a program run, a library
loaded, code from the input executed) fails the test. ``scripts/fuzz.sh`` runs the same
harnesses at length (see SECURITY.md).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bounds import no_hang  # noqa: E402
from fuzz import targets as T  # noqa: E402
from fuzz.guard import Guard  # noqa: E402
from fuzz.mutate import (  # noqa: E402
    GLOB_TOKENS,
    INTERESTING,
    TOML_FRAGMENTS,
    Corpus,
    generate,
    load_corpus,
)

SMOKE = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def corpus(fixture_libs, fixture_wheels) -> Corpus:
    wheel_dir = next(iter(fixture_wheels.values())).parent.parent
    c = load_corpus([fixture_libs, wheel_dir], [])
    assert c.binaries["elf"] and c.binaries["macho"] and c.binaries["pe"] and c.wheels and c.rules
    return c


@pytest.fixture(scope="module")
def workspace(corpus):
    ws = T.Workspace(corpus.wheel_paths)
    ws.wheel()
    ws.rules()
    yield ws
    T.cleanup(ws)


def run(target: str, data: bytes, ws: T.Workspace) -> str:
    guard = Guard(allowed=[Path(tempfile.gettempdir())], foreign=[ws.dir])
    with no_hang(), guard.watch():
        outcome = T.TARGETS[target](data, ws)  # anything but the expected exception fails here
    assert guard.violations == [], guard.violations
    assert guard.writes_inside == [], guard.writes_inside
    return outcome


def mutated(seed: bytes, edits: list[tuple[int, int, int]], cut: int | None) -> bytes:
    """Apply (offset, kind, value) edits: a byte, or an interesting 32-bit integer."""
    buf = bytearray(seed)
    for off, kind, value in edits:
        if not buf:
            break
        off %= len(buf)
        if kind == 0:
            buf[off] = value & 0xFF
        else:
            word = INTERESTING[value % len(INTERESTING)] & 0xFFFFFFFF
            buf[off:off + 4] = word.to_bytes(4, "little" if kind == 1 else "big")[: len(buf) - off]
    if cut is not None and buf:
        del buf[cut % len(buf):]
    return bytes(buf)


EDITS = st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 2), st.integers(0, 255)), max_size=8)


@pytest.mark.parametrize("fmt", ["elf", "macho", "pe"])
def test_binary_readers(corpus, workspace, fmt):
    seeds = corpus.binaries[fmt]

    @SMOKE
    @given(st.integers(0, len(seeds) - 1), st.sampled_from([0, 64, 256, 4096]), EDITS, st.none() | st.integers(0, 1 << 20))
    def fuzz(i, window, edits, cut):
        seed = seeds[i]
        # aim most edits at the headers, where the structures are
        edits = [(off % window if window else off, kind, v) for off, kind, v in edits]
        run(fmt, mutated(seed, edits, cut), workspace)

    fuzz()


def test_wheel_reader(corpus, workspace):
    @SMOKE
    @given(st.integers(0, 1 << 30))
    def fuzz(index):
        run("wheel", generate("wheel", corpus, 7, index), workspace)

    fuzz()


def test_wheel_reader_raw_mutations(corpus, workspace):
    small = [w for w in corpus.wheels if len(w) < 64 * 1024]

    @SMOKE
    @given(st.sampled_from(small), EDITS, st.none() | st.integers(0, 1 << 20))
    def fuzz(seed, edits, cut):
        # the central directory and end records sit at the end of the file
        edits = [(len(seed) - 1 - off % 512, kind, v) for off, kind, v in edits]
        run("wheel", mutated(seed, edits, cut), workspace)

    fuzz()


def test_rules_loader(corpus, workspace):
    lines = sorted({ln for r in corpus.rules for ln in r.decode("utf-8", "replace").splitlines()})

    @SMOKE
    @given(st.lists(st.sampled_from(lines + TOML_FRAGMENTS), max_size=30), st.booleans())
    def fuzz(pieces, versioned):
        text = ("version = 1\n" if versioned else "") + "\n".join(pieces)
        run("rules", text.encode("utf-8", "surrogatepass"), workspace)

    fuzz()


def test_rules_loader_bytes(workspace):
    @SMOKE
    @given(st.binary(max_size=2048))
    def fuzz(data):
        run("rules", data, workspace)

    fuzz()


def test_patterns(workspace):
    @SMOKE
    @given(st.lists(st.sampled_from(GLOB_TOKENS), max_size=40), st.text(alphabet="ab/.:(<*é", max_size=300))
    def fuzz(tokens, text):
        run("glob", ("".join(tokens) + "\n" + text).encode("utf-8"), workspace)

    fuzz()


def test_symbol_names(corpus, workspace):
    @SMOKE
    @given(st.integers(0, 1 << 30))
    def fuzz(index):
        run("names", generate("names", corpus, 7, index), workspace)

    fuzz()


def test_consumer_surface(corpus, workspace):
    @SMOKE
    @given(st.integers(0, 1 << 30))
    def fuzz(index):
        run("surface", generate("surface", corpus, 7, index), workspace)

    fuzz()


@pytest.mark.parametrize("target", ["fat", "smuggle", "control", "cmake"])
def test_second_round_shapes(corpus, workspace, target):
    """The shapes of the second hostile round (fuzz/shapes.py) go through without a crash, a slow
    input or a forbidden event. (What the gate lets through, the ``hole:`` outcomes, is what the
    campaigns of ``python -m fuzz.run`` count.)"""
    @settings(SMOKE, max_examples=40)
    @given(st.integers(0, 1 << 30))
    def fuzz(index):
        run(target, generate(target, corpus, 7, index), workspace)

    fuzz()
