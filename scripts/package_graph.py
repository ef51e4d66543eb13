"""Print the package graph of src/wheelaudit: which stage imports which, counting every import
statement (lazy ones inside functions and `if TYPE_CHECKING:` blocks included), and the cycles.

    python scripts/package_graph.py [--modules]

A stage is a folder of src/wheelaudit/ (`checks`, `model`, ...) or a top-level module (`api`,
`children`, ...). Exit status 1 when the stages form a cycle. The contract that CI enforces is
`[tool.importlinter]` in pyproject.toml; this script shows the whole graph behind it.
"""
from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "src" / "wheelaudit"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def stage(module: str) -> str:
    """The folder or top-level module of ``module``; "wheelaudit" for the package itself (and for a
    name imported from it that is no module, such as ``__version__``)."""
    parts = module.split(".")
    if len(parts) > 1 and ((ROOT / parts[1]).is_dir() or (ROOT / f"{parts[1]}.py").is_file()):
        return parts[1]
    return "wheelaudit"


def imported(path: Path, module: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, lazy) for every import of a wheelaudit module in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.If))
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, lazy) for a in child.names if a.name.startswith("wheelaudit"))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target == "wheelaudit":
                    found.extend((f"wheelaudit.{a.name}", child.lineno, lazy) for a in child.names)
                elif target.startswith("wheelaudit."):
                    found.append((target, child.lineno, lazy))
            visit(child, inner)

    visit(tree, False)
    return found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            strong(v)
    return out


def package_graph() -> tuple[dict[str, set[str]], dict[tuple[str, str], set[str]]]:
    """(stage -> the stages it imports, (stage, stage) -> where: ``module:line``, ``(lazy)`` for an
    import inside a function or an ``if`` block). The root package, the public facade above every
    stage, is left out."""
    edges: dict[str, set[str]] = defaultdict(set)
    why: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in sorted(ROOT.rglob("*.py")):
        mod = module_name(path)
        for target, line, lazy in imported(path, mod):
            a, b = stage(mod), stage(target)
            if a != b and "wheelaudit" not in (a, b):
                edges[a].add(b)
                why[a, b].add(f"{mod.removeprefix('wheelaudit.')}:{line}{' (lazy)' if lazy else ''}")
    return edges, why


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--modules", action="store_true", help="name the importing modules of each arrow")
    args = ap.parse_args(argv)
    edges, why = package_graph()
    for a in sorted(edges):
        for b in sorted(edges[a]):
            line = f"{a:>14} -> {b}"
            if args.modules:
                line += "   " + ", ".join(sorted(why[a, b]))
            print(line)
    found = cycles(edges)
    for comp in found:
        print(f"cycle: {' <-> '.join(comp)}")
    if not found:
        print("no cycle between stages (lazy imports included)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
