"""The message toolkit (wheelaudit.model.messages): the wording every finding, report and command
table draws on. The expected strings are those the reports printed before the toolkit existed."""

import pytest

from wheelaudit.model.finding import examples as finding_examples
from wheelaudit.model.messages import examples, human_size, more, plural, shorten, shorten_middle


@pytest.mark.parametrize("n, what, note, text", [
    (0, "", "", ""),
    (-2, "", "", ""),
    (1, "", "", " (+1 more)"),
    (12, "", "", " (+12 more)"),
    (3, "paths", "", " (+3 more paths)"),
    (0, "paths", "", ""),
    (4, "libraries", "--all shows them", " (+4 more libraries; --all shows them)"),
    (2, "", "--all shows them", " (+2 more; --all shows them)"),
])
def test_more(n, what, note, text):
    assert more(n, what, note=note) == text


def test_examples_sorted_by_default_and_counted():
    assert examples({"c", "a", "b"}) == "a, b, c"
    assert examples(["e", "d", "c", "b", "a"]) == "a, b, c (+2 more)"
    assert examples(["x"], 0) == " (+1 more)"
    assert examples([]) == ""


def test_examples_in_order_with_a_separator_and_a_gap():
    where = [f"f{i}.cmake:1" for i in range(7)]
    assert examples(where, 5, sort=False, sep="; ") == "f0.cmake:1; f1.cmake:1; f2.cmake:1; f3.cmake:1; f4.cmake:1 (+2 more)"
    # the text report's short lists: an ellipsis before the count
    assert examples(["b", "a", "c"], 2, sort=False, gap=", …") == "b, a, … (+1 more)"
    assert examples(["b", "a"], 2, sort=False, gap=", …") == "b, a"


def test_findings_keep_their_examples():
    """The checks import ``examples`` from the finding model: the same function."""
    assert finding_examples is examples


@pytest.mark.parametrize("n, word, words, text", [
    (0, "wheel", None, "0 wheels"),
    (1, "wheel", None, "1 wheel"),
    (2, "small file", None, "2 small files"),
    (1, "native library", "native libraries", "1 native library"),
    (3, "native library", "native libraries", "3 native libraries"),
])
def test_plural(n, word, words, text):
    assert plural(n, word, words) == text


@pytest.mark.parametrize("text, width, short", [
    ("abcdef", 6, "abcdef"),
    ("abcdefg", 6, "abcde…"),
    ("abcdefg", 1, "abcdefg"),  # (no room for anything but the ellipsis: whole)
    ("abcdefg", 0, "abcdefg"),
])
def test_shorten_keeps_the_start(text, width, short):
    assert shorten(text, width) == short


@pytest.mark.parametrize("text, width, short", [
    ("libtorch_cpu.so", 15, "libtorch_cpu.so"),
    ("libtorch_cpu.so", 9, "libt…u.so"),
    ("libtorch_cpu.so", 10, "libt…pu.so"),
    ("libtorch_cpu.so", 2, "…o"),
    ("libtorch_cpu.so", 1, "…"),
])
def test_shorten_middle_keeps_both_ends(text, width, short):
    assert shorten_middle(text, width) == short
    assert len(short) == min(width, len(text))


@pytest.mark.parametrize("n, binary, trim, text", [
    # budgets and their measures (WA605): decimal or binary units, a zero decimal dropped
    (999, False, True, "999 B"),
    (212_400_000, False, True, "212.4 MB"),
    (10**9, False, True, "1 GB"),
    (1 << 30, True, True, "1 GiB"),
    (1536, True, True, "1.5 KiB"),
    # sizes in reports and tables: binary units, always one decimal above a kilobyte
    (0, True, False, "0 B"),
    (1023, True, False, "1023 B"),
    (1024, True, False, "1.0 KiB"),
    (1536, True, False, "1.5 KiB"),
    ((1 << 20) - 1, True, False, "1024.0 KiB"),
    (5 << 30, True, False, "5.0 GiB"),
    (3 << 40, True, False, "3072.0 GiB"),
])
def test_human_size(n, binary, trim, text):
    assert human_size(n, binary, trim=trim) == text
