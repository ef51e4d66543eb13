"""The stage order of docs/architecture.md holds: a stage imports only the stages below it, lazy
imports (inside functions, under TYPE_CHECKING) included. The contract is pyproject.toml's
``[tool.importlinter]``, checked here with import-linter's own command; the package graph is also
computed from the sources (``ast``, scripts/package_graph.py) so that a cycle shows even where
import-linter is missing."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "wheelaudit"

_spec = importlib.util.spec_from_file_location("package_graph", ROOT / "scripts" / "package_graph.py")
assert _spec is not None and _spec.loader is not None
package_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(package_graph)


def _lint_imports() -> str:
    exe = Path(sys.executable).with_name("lint-imports")
    found = str(exe) if exe.exists() else shutil.which("lint-imports")
    if found is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return found


def _run_contract(src: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(src))  # (before the checkout's editable install)
    return subprocess.run([_lint_imports(), "--no-cache", str(config)], cwd=src, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_stages_keep_their_order():
    run = _run_contract(ROOT / "src", ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Contracts: 3 kept, 0 broken." in run.stdout


def _with_planted_import(tmp_path: Path, module: str, statement: str) -> subprocess.CompletedProcess[str]:
    """The contracts run over a copy of the package where ``module`` (a path below
    ``wheelaudit/``) gains a function that imports lazily, as a shortcut would: ``statement``."""
    copy = tmp_path / "src"
    shutil.copytree(PACKAGE, copy / "wheelaudit", ignore=shutil.ignore_patterns("__pycache__", "data", "rulesets"))
    target = copy / "wheelaudit" / module
    name = statement.rsplit(" ", 1)[-1]
    target.write_text(target.read_text() + f"\n\ndef _shortcut():\n    {statement}\n\n    return {name}\n")
    return _run_contract(copy, ROOT / "pyproject.toml")


def test_a_lower_stage_importing_a_higher_one_breaks_the_contract(tmp_path: Path):
    # the model imports a check, as a convenience would
    run = _with_planted_import(tmp_path, "model/wheel.py", "from wheelaudit.checks.index import SymbolIndex")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "wheelaudit.model is not allowed to import wheelaudit.checks" in run.stdout
    assert "wheelaudit.model.wheel -> wheelaudit.checks.index" in run.stdout


def test_a_resolution_that_raises_a_finding_breaks_the_contract(tmp_path: Path):
    # the resolver reports a finding itself
    run = _with_planted_import(tmp_path, "checks/resolution.py", "from wheelaudit.model.finding import Finding")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the resolution raises no finding BROKEN" in run.stdout
    assert "wheelaudit.checks.resolution -> wheelaudit.model.finding" in run.stdout


def _package_graph() -> dict[str, set[str]]:
    """Stage -> the stages it imports, every import statement counted (scripts/package_graph.py)."""
    return package_graph.package_graph()[0]


def test_the_package_graph_has_no_cycle():
    graph = _package_graph()
    assert {"model", "binary", "checks", "scanner"} <= set(graph) | {b for bs in graph.values() for b in bs}  # (the walk found the stages)
    assert package_graph.cycles(graph) == []
    assert not graph.get("model"), "the model imports no stage"


def test_the_cycle_finder_finds_one():
    assert package_graph.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]
    assert package_graph.cycles({"a": {"b"}, "b": set()}) == []


def test_the_scan_function_and_the_scanning_stage_are_apart():
    """``wheelaudit.scan`` is the API's function whatever was imported before, and the stage that
    reads the members is a package of its own name, an ordinary module."""
    code = ("import sys, types, wheelaudit.scanner.pool, wheelaudit.scanner.together, wheelaudit\n"
            "import wheelaudit.scanner as stage\n"
            "from wheelaudit import scan\n"
            "from wheelaudit.api import scan as api_scan\n"
            "print(scan is api_scan is wheelaudit.scan, stage.pool.__name__, type(sys.modules['wheelaudit']) is types.ModuleType)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.stdout.split() == ["True", "wheelaudit.scanner.pool", "True"], run.stderr
