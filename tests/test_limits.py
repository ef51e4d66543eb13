"""WA605: the size budgets of ``[limits]`` (rules parsing, the check, the command line)."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from wheel.wheelfile import WheelFile

from wheelaudit.checks.limits import human_size
from wheelaudit.cli.main import main
from wheelaudit.model.codes import CODES
from wheelaudit.ruleset.errors import RulesError
from wheelaudit.ruleset.load import parse_rules
from wheelaudit.ruleset.tables import parse_size

BIG = "pkg/big.bin"  # 5000 incompressible bytes
LIB = "pkg/_native.so"  # 3000 zero bytes (not a real binary: no native code needed)
INIT = "pkg/__init__.py"


@pytest.fixture
def wheel_path(tmp_path: Path) -> Path:
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    info = "pkg-1.0.dist-info"
    with WheelFile(path, "w") as wf:
        wf.writestr(INIT, b"")
        wf.writestr(BIG, os.urandom(5000))
        wf.writestr(LIB, b"\0" * 3000)
        wf.writestr(f"{info}/METADATA", b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\n")
        wf.writestr(f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n\n")
    return path


def _rules(tmp_path: Path, limits: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text("version = 1\n\n" + limits)
    return path


def _check(capsys, *argv) -> tuple[int, list[dict], str]:
    code = main(["check", *[str(a) for a in argv], "--format", "json"])
    cap = capsys.readouterr()
    if code == 2:
        return code, [], cap.err
    data = json.loads(cap.out)
    return code, [f for w in data["wheels"] for f in w["findings"] if f["code"] == "WA605"], cap.err


OVER = """
[limits]
wheel-compressed = 100
wheel-uncompressed = "5 KB"
file = "4 KB"
files = 3

[[limits.file-glob]]
glob = "**/*.so"
max = "1 KiB"
"""


def test_registry():
    c = CODES["WA605"]
    assert (c.name, c.severity, c.summary) == ("size-budget", "warning", "a size budget of the rules file is exceeded")
    assert c.fix


def test_every_budget_exceeded(capsys, tmp_path, wheel_path):
    code, found, _ = _check(capsys, wheel_path, "--rules", _rules(tmp_path, OVER))
    assert code == 0  # warnings only
    by = {f["subject"]: f for f in found}
    assert sorted(by) == ["file", "file-glob **/*.so", "files", "wheel-compressed", "wheel-uncompressed"]
    assert {f["severity"] for f in found} == {"warning"}
    assert by["file"]["paths"] == [BIG]
    assert by["file"]["message"] == "file: pkg/big.bin (5 KB) exceeds the budget of 4 KB"
    assert by["file-glob **/*.so"]["paths"] == [LIB]
    assert "2.9 KiB" in by["file-glob **/*.so"]["message"] and "1 KiB" in by["file-glob **/*.so"]["message"]
    assert "over the budget of 5 KB" in by["wheel-uncompressed"]["message"]
    assert "over the budget of 3" in by["files"]["message"]
    assert f"{wheel_path.stat().st_size / 1000:.1f}".removesuffix(".0") + " KB" in by["wheel-compressed"]["message"]

    code, found, _ = _check(capsys, wheel_path, "--rules", _rules(tmp_path, OVER), "--fail-on", "warning")
    assert code == 1 and len(found) == 5


def test_offenders_largest_first(capsys, tmp_path, wheel_path):
    code, found, _ = _check(capsys, wheel_path, "--rules", _rules(tmp_path, "[limits]\nfile = 2000\n"))
    assert code == 0
    [f] = found
    assert f["paths"] == [BIG, LIB]
    assert f["message"].index(BIG) < f["message"].index(LIB)
    assert f["message"] == f"file: 2 members exceed the budget of 2 KB each; the largest: {BIG} (5 KB), {LIB} (3 KB)"


def test_sizes_that_read_as_the_budget_are_exact(capsys, tmp_path, wheel_path):
    code, found, _ = _check(capsys, wheel_path, "--rules", _rules(tmp_path, "[limits]\nfile = 4990\n"))
    [f] = found
    assert f["message"] == f"file: {BIG} (5000 bytes) exceeds the budget of 5 KB (4990 bytes)"


def test_under_budget(capsys, tmp_path, wheel_path):
    limits = """
[limits]
wheel-compressed = "1 MB"
wheel-uncompressed = "1 MiB"
file = 5000
files = 20000
[[limits.file-glob]]
glob = "**/*.so"
max = "3 KB"
"""
    code, found, _ = _check(capsys, wheel_path, "--rules", _rules(tmp_path, limits), "--fail-on", "warning")
    assert (code, found) == (0, [])


def test_no_limits_no_finding(capsys, tmp_path, wheel_path):
    code, found, _ = _check(capsys, wheel_path, "--rules", _rules(tmp_path, ""), "--fail-on", "warning")
    assert (code, found) == (0, [])
    code, found, _ = _check(capsys, wheel_path, "--fail-on", "warning")
    assert (code, found) == (0, [])


def test_tree_skips_wheel_compressed(capsys, tmp_path, wheel_path):
    tree = tmp_path / "tree"
    with zipfile.ZipFile(wheel_path) as zf:
        zf.extractall(tree)
    code, found, _ = _check(capsys, tree, "--rules", _rules(tmp_path, OVER))
    assert code == 0
    assert "wheel-compressed" not in {f["subject"] for f in found}
    assert {"file", "wheel-uncompressed", "file-glob **/*.so"} <= {f["subject"] for f in found}


def test_bad_sizes_are_rules_errors(capsys, tmp_path, wheel_path):
    limits = """
[limits]
wheel-compressed = "200 megs"
wheel-uncompressed = -1
file = 1.5
files = "20"
frobs = 1

[[limits.file-glob]]
glob = "**/*.so"
max = "5 Mb"
"""
    rules = _rules(tmp_path, limits)
    code, _, err = _check(capsys, wheel_path, "--rules", rules)
    assert code == 2
    for line, key in ((5, "wheel-compressed"), (6, "wheel-uncompressed"), (7, "file"), (8, "files"),
                      (9, "frobs"), (13, "file-glob[1].max")):
        assert f"{rules}:{line}: limits: key \"{key}\"" in err, (key, err)


def test_parse_errors_collected():
    with pytest.raises(RulesError) as exc:
        parse_rules('version = 1\n[limits]\nfile = "x"\n[[limits.file-glob]]\nglob = "*.so"\n[[waive]]\ncode = "WA9"\nreason = "r"\n')
    text = str(exc.value)
    assert 'key "file"' in text and 'key "file-glob[1].max": missing' in text and "WA9" in text


@pytest.mark.parametrize("value, expected", [
    (0, 0), (1234, 1234), ("1 B", 1), ("200 MB", 200_000_000), ("1GB", 10**9), ("1 KiB", 1024),
    ("1.5 MiB", 3 << 19), ("2 GiB", 2 << 30), (" 7 KB ", 7000),
    (-1, None), (True, None), (1.5, None), ("", None), ("5", None), ("5 Mb", None), ("5 mb", None),
    ("MB", None), ("-5 MB", None), ("1e3 KB", None), ([], None),
])
def test_parse_size(value, expected):
    assert parse_size(value) == expected


def test_human_size():
    assert human_size(999) == "999 B"
    assert human_size(212_400_000) == "212.4 MB"
    assert human_size(1 << 30, binary=True) == "1 GiB"
