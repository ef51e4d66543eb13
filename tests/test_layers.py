"""The stage order of docs/architecture.md holds: a stage imports only the stages below it, lazy
imports (inside functions, under TYPE_CHECKING) included. The contract is pyproject.toml's
``[tool.importlinter]``, checked here with import-linter's own command; the package graph is also
computed from the sources (``ast``) so that a cycle shows even where import-linter is missing."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "wheelaudit"


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
    assert "Contracts: 1 kept, 0 broken." in run.stdout


def test_a_lower_stage_importing_a_higher_one_breaks_the_contract(tmp_path: Path):
    # a copy of the package where the model imports a check, lazily, as a convenience would
    copy = tmp_path / "src"
    shutil.copytree(PACKAGE, copy / "wheelaudit", ignore=shutil.ignore_patterns("__pycache__", "data", "rulesets"))
    wheel = copy / "wheelaudit" / "model" / "wheel.py"
    wheel.write_text(wheel.read_text() + "\n\ndef _shortcut():\n    from wheelaudit.checks.index import SymbolIndex\n\n"
                     "    return SymbolIndex\n")
    run = _run_contract(copy, ROOT / "pyproject.toml")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "wheelaudit.model is not allowed to import wheelaudit.checks" in run.stdout
    assert "wheelaudit.model.wheel -> wheelaudit.checks.index" in run.stdout


def _package_graph() -> dict[str, set[str]]:
    """Subpackage (or top-level module) -> those it imports, every import statement counted."""
    tops = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
            if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    graph: dict[str, set[str]] = {t: set() for t in tops}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts == ("__init__",):
            continue  # (the root: the public facade, above every stage)
        top = parts[0]
        here = ["wheelaudit", *parts[:-1]]  # (the package a relative import starts from)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(here[: len(here) - node.level + 1]) if node.level else ""
                module = ".".join(p for p in (base, node.module or "") if p)
                names = [module] + [f"{module}.{a.name}" for a in node.names]
            for name in names:
                bits = name.split(".")
                if bits[0] == "wheelaudit" and len(bits) > 1 and bits[1] in tops and bits[1] != top:
                    graph[top].add(bits[1])
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_package_graph_has_no_cycle():
    graph = _package_graph()
    assert {"model", "binary", "checks", "scanner"} <= set(graph)  # (the walk found the stages)
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])
    assert graph["model"] == set(), "the model imports no stage"


def test_the_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


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
