"""Discovery of the rules from ``[tool.wheelaudit]`` in the nearest pyproject.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from wheelaudit.ruleset.config import find_pyproject, find_rules
from wheelaudit.model.globs import Glob
from wheelaudit.ruleset.errors import RulesError

RULES = """\
version = 1
name = "from-file"
select = ["WA2"]
fail-on = "error"

[[component]]
name = "backend_mlx"
symbols = ["executorch::backends::mlx::MLXBackend::init"]
"""


def _project(tmp_path: Path, pyproject: str) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / ".git").mkdir()  # the repository root: discovery stops here
    (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return root


def test_rules_file_reference(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        '[project]\nname = "pkg"\n\n[tool.wheelaudit]\nrules = "rules/x.toml"\n',
    )
    (root / "rules").mkdir()
    (root / "rules" / "x.toml").write_text(RULES, encoding="utf-8")
    rules, where = find_rules(root / "src" / "pkg")  # found by walking up
    assert rules is not None
    assert where == root / "rules" / "x.toml"  # resolved against the pyproject, not the cwd
    assert rules.name == "from-file" and rules.path == where
    assert rules.select == ["WA2"] and rules.ignore is None and rules.fail_on == "error"
    assert [c.name for c in rules.components] == ["backend_mlx"]


def test_rules_file_reference_with_overrides(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        "[tool.wheelaudit]\n"
        'rules = "x.toml"\n'
        'select = ["WA1", "WA3"]\n'
        'ignore = "WA003"\n'
        'fail-on = "warning"\n',
    )
    (root / "x.toml").write_text(RULES, encoding="utf-8")
    rules, _ = find_rules(root)
    assert rules is not None
    assert rules.select == ["WA1", "WA3"]  # the pyproject's values win
    assert rules.ignore == ["WA003"]
    assert rules.fail_on == "warning"


def test_inline_rules(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        '[project]\nname = "pkg"\n\n'
        "[tool.wheelaudit]\n"
        'name = "inline"\n'
        'ignore = ["WA003"]\n'
        "\n"
        "[tool.wheelaudit.libraries]\n"
        'expected = ["pkg/lib/*.{so,dylib}"]\n'
        "\n"
        "[[tool.wheelaudit.component]]\n"
        'name = "mlx_runtime"\n'
        'symbols = ["mlx::core::*"]\n'
        "required = false\n"
        "\n"
        "[[tool.wheelaudit.file]]\n"
        'glob = "**/mlx.metallib"\n'
        'beside = "mlx_runtime"\n',
    )
    rules, where = find_rules(root / "src")
    assert rules is not None
    assert where == root / "pyproject.toml"
    assert rules.version == 1  # optional inline
    assert rules.name == "inline" and rules.ignore == ["WA003"]
    assert rules.libraries is not None
    assert rules.libraries.expected == [Glob("pkg/lib/*.{so,dylib}")]
    assert rules.components[0].name == "mlx_runtime"
    assert rules.components[0].line == 11
    assert rules.files[0].beside == "mlx_runtime"
    assert rules.source == str(root / "pyproject.toml")


def test_no_pyproject(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".git").mkdir()
    assert find_rules(empty) == (None, None)


def test_pyproject_without_table(tmp_path: Path) -> None:
    root = _project(tmp_path, '[project]\nname = "pkg"\n\n[tool.ruff]\nline-length = 99\n')
    assert find_rules(root / "src" / "pkg") == (None, None)


def test_nearest_pyproject_wins(tmp_path: Path) -> None:
    root = _project(tmp_path, '[tool.wheelaudit]\nname = "outer"\n')
    inner = root / "src" / "pkg"
    (inner / "pyproject.toml").write_text('[tool.wheelaudit]\nname = "inner"\n', encoding="utf-8")
    rules, where = find_rules(inner)
    assert rules is not None and rules.name == "inner" and where == inner / "pyproject.toml"
    assert find_pyproject(inner / "pyproject.toml") == inner / "pyproject.toml"


def test_walk_stops_at_repository_root(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.wheelaudit]\nname = "stray"\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    assert find_rules(repo / "sub") == (None, None)


@pytest.mark.parametrize(
    "pyproject, line, key, words",
    [
        (
            '[tool.wheelaudit]\nrules = "x.toml"\n[[tool.wheelaudit.component]]\nname = "a"\n',
            3,
            "tool.wheelaudit.component",
            'only "select", "ignore", "fail-on" and "severity" may sit beside "rules"',
        ),
        (
            '[tool.wheelaudit]\nrules = "missing.toml"\n',
            2,
            "tool.wheelaudit.rules",
            "does not exist",
        ),
        ('[tool.wheelaudit]\nrules = 3\n', 2, "tool.wheelaudit.rules", "expected the path"),
        (
            '[tool.wheelaudit]\nrules = "x.toml"\nfail-on = "never"\n',
            3,
            "tool.wheelaudit.fail-on",
            'expected "error" or "warning"',
        ),
        (
            '[project]\nname = "pkg"\n\n[tool.wheelaudit]\nversion = 1\n\n'
            '[[tool.wheelaudit.component]]\nname = "a"\nsymbols = ["f"]\nstrong_only = true\n',
            10,
            "tool.wheelaudit.component[1].strong_only",
            'unknown key (did you mean "strong-only"?)',
        ),
        ('[tool.wheelaudit]\nversion = 3\n', 2, "tool.wheelaudit.version", "unsupported"),
        ('[project]\nname = "pkg"\n[tool.wheelaudit\n', 3, None, "TOML syntax error"),
        ("[tool]\nwheelaudit = 3\n", None, "tool.wheelaudit", "expected a table"),
    ],
)
def test_errors_name_the_pyproject(
    tmp_path: Path, pyproject: str, line: int | None, key: str | None, words: str
) -> None:
    root = _project(tmp_path, pyproject)
    (root / "x.toml").write_text(RULES, encoding="utf-8")
    with pytest.raises(RulesError) as info:
        find_rules(root)
    err = info.value
    assert err.source == str(root / "pyproject.toml")
    assert err.key == key
    if line is not None:
        assert err.line == line, str(err)
    assert words in err.message, str(err)
    assert str(err).startswith(str(root / "pyproject.toml"))


def test_error_in_referenced_file_names_that_file(tmp_path: Path) -> None:
    root = _project(tmp_path, '[tool.wheelaudit]\nrules = "x.toml"\n')
    (root / "x.toml").write_text(RULES.replace("symbols", "symbol"), encoding="utf-8")
    with pytest.raises(RulesError) as info:
        find_rules(root)
    assert info.value.source == str(root / "x.toml")
    problems = getattr(info.value, "problems", [info.value])
    assert any(p.line == 8 and p.key == "component[1].symbol" for p in problems), str(info.value)
