"""Which extension modules a package imports only where a failed import is caught: the
optional ones, read statically from the wheel's Python sources.

A package often ships a native module it can do without: numba's ``tbbpool`` and ``omppool``
threading layers need TBB and OpenMP, which the wheel does not ship, and numba imports them as::

    try:
        from numba.np.ufunc import tbbpool as lib
    except ImportError:
        pass

Where such a module cannot load (its library is missing), the package goes on without it. So an
unresolved dependency of an **optional** module is a warning, not an error (WA501, WA505).

A module is optional when the wheel's ``.py`` files import it at least once and every import
of it is *guarded*: inside the body of a ``try`` with a handler that catches the failure
(``except ImportError``, ``Exception``, ``BaseException`` or a bare ``except``; not
``ModuleNotFoundError``, which a library that fails to load does not raise) and does not
raise again, or within ``with contextlib.suppress(ImportError)``. An import is ``import m``,
``from p import m``, ``from m import x`` (relative ones resolved) or ``importlib.import_module``
/ ``__import__`` of a string literal. A module no ``.py`` file imports (one that users or native
code import) is not optional, nor is one imported anywhere without a guard.

The sources are read as text, never run, at most :data:`MAX_SOURCES` files and
:data:`MAX_PARSED` parsed (past that nothing counts as optional). Every ``.py`` file of the wheel that mentions the
module's name is looked at, until an unguarded import settles it; a line that starts with
``import`` or ``from`` in its first column and names the module is unguarded without parsing.
"""

from __future__ import annotations

import ast
import posixpath
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from wheelaudit.archive.pysource import last_name, parse

#: ``try`` and, from Python 3.11, ``try`` with ``except*``
if sys.version_info >= (3, 11):
    _TRY_NODES: tuple[type[ast.Try | ast.TryStar], ...] = (ast.Try, ast.TryStar)
else:
    _TRY_NODES = (ast.Try,)

#: at most this many bytes of a source are read; a larger file is not looked at (its imports
#: count as unguarded: never a reason to soften a finding)
MAX_BYTES = 4 << 20
#: at most this many ``.py`` files are read, and this many parsed, per call: past either, the
#: modules still undecided count as not optional (a hostile wheel cannot make the audit slow)
MAX_SOURCES = 10_000
MAX_PARSED = 1_000
#: handler types that catch an import that fails because a library does not load
_CATCHING = {"ImportError", "Exception", "BaseException"}


@dataclass(frozen=True)
class Guard:
    """Where an optional module is imported (the first guarded import found)."""

    source: str  # the .py file
    line: int

    def __str__(self) -> str:
        return f"{self.source}:{self.line}"


def module_name(path: str) -> str | None:
    """The dotted name a Python importer finds the extension module at ``path`` by
    (``numba/np/ufunc/tbbpool.cpython-311-x86_64-linux-gnu.so`` -> ``numba.np.ufunc.tbbpool``);
    None for a path no import reaches (a ``.data`` or ``.dist-info`` folder, a folder whose name
    is not an identifier)."""
    folder, base = posixpath.split(path)
    parts = [p for p in folder.split("/") if p] + [base.split(".", 1)[0]]
    if not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def optional_modules(modules: Iterable[str], sources: Iterable[str],
                     read_text: Callable[[str], str | None]) -> dict[str, Guard]:
    """Of the extension modules at ``modules`` (paths in the wheel), those every import of which
    in the ``.py`` files ``sources`` is guarded, each with the first guarded import."""
    open_ = {m: n for m in modules if (n := module_name(m)) is not None}  # path -> name, undecided
    guarded: dict[str, Guard] = {}
    # a package's own __init__ files first: they settle the modules a package needs, early
    ordered = sorted(sources, key=lambda s: (not s.endswith("/__init__.py"), s.count("/"), s))
    if len(ordered) > MAX_SOURCES:
        return {}
    parsed = 0
    for src in ordered:
        if not open_:
            break
        text = read_text(src)
        if not text:
            continue
        mentioned = {m: n for m, n in open_.items() if n.rpartition(".")[2] in text}
        if not mentioned:
            continue
        settled = [m for m, n in mentioned.items() if len(text) > MAX_BYTES or _unguarded_at_top(text, n)]
        wanted = {n for m, n in mentioned.items() if m not in settled}
        if wanted:
            parsed += 1
            if parsed > MAX_PARSED:
                return {}
        sites = _sites(text, src, wanted)
        for m, n in mentioned.items():
            for line, safe in sites.get(n, ()):
                if not safe:
                    settled.append(m)
                    break
                guarded.setdefault(m, Guard(src, line))
        for m in settled:
            open_.pop(m, None)
            guarded.pop(m, None)
    return {m: g for m, g in guarded.items() if m in open_}


def _unguarded_at_top(text: str, dotted: str) -> bool:
    """A statement in the first column that imports ``dotted`` (or from it, or it from its
    package): at module level, so never guarded."""
    pkg, _, name = dotted.rpartition(".")
    pattern = (rf"^(?:import[ \t]+{re.escape(dotted)}\b|from[ \t]+{re.escape(dotted)}[ \t]+import\b"
               + (rf"|from[ \t]+{re.escape(pkg)}[ \t]+import\b[^\n]*\b{re.escape(name)}\b" if pkg else "") + ")")
    return re.search(pattern, text, re.M) is not None


def _sites(text: str, src: str, wanted: set[str]) -> dict[str, list[tuple[int, bool]]]:
    """Each import of a module in ``wanted`` in ``text``: (line, guarded)."""
    if not wanted:
        return {}
    tree = parse(text)
    if tree is None:
        return {n: [(0, False)] for n in wanted}  # (unreadable: its imports cannot be judged)
    package = posixpath.dirname(src).replace("/", ".")  # (an __init__.py's package is its folder too)
    found: dict[str, list[tuple[int, bool]]] = {}

    def visit(node: ast.AST, safe: bool) -> None:
        child: ast.AST
        for imported in imported_names(node, package):
            for n in wanted:
                if imported == n or imported.startswith(n + "."):
                    found.setdefault(n, []).append((getattr(node, "lineno", 0), safe))
        if isinstance(node, _TRY_NODES):
            body_safe = safe or any(_catches(h) for h in node.handlers)
            for child in node.body:
                visit(child, body_safe)
            for part in (node.handlers, node.orelse, node.finalbody):
                for child in part:
                    visit(child, safe)
            return
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(_suppresses(i.context_expr) for i in node.items):
            for child in node.body:
                visit(child, True)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, safe)

    try:
        visit(tree, False)
    except RecursionError:
        return {n: [(0, False)] for n in wanted}
    return found


def imported_names(node: ast.AST, package: str) -> list[str]:
    """The modules ``node`` imports (absolute dotted names): for ``from p import a, b`` both
    ``p`` and ``p.a``, ``p.b`` (either may be the module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = package.split(".") if package else []
            up = parts[:len(parts) - (node.level - 1)] if node.level - 1 <= len(parts) else []
            base = ".".join(up + ([base] if base else []))
        return [base] + [f"{base}.{a.name}" if base else a.name for a in node.names if a.name != "*"]
    if isinstance(node, ast.Call) and node.args:
        callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        arg = node.args[0]
        if callee in ("import_module", "__import__") and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            name = arg.value
            if name.startswith(".") and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                anchor = str(node.args[1].value)
                dots = len(name) - len(name.lstrip("."))
                parts = anchor.split(".")
                name = ".".join(parts[:len(parts) - (dots - 1)] + [name.lstrip(".")])
            return [name]
    return []


def _catches(handler: ast.ExceptHandler) -> bool:
    """Whether ``handler`` catches a failed import and does not raise again."""
    if handler.type is None:
        names = {"BaseException"}
    elif isinstance(handler.type, ast.Tuple):
        names = {last_name(e) for e in handler.type.elts}
    else:
        names = {last_name(handler.type)}
    if not names & _CATCHING:
        return False
    return not any(isinstance(n, ast.Raise) for stmt in handler.body for n in ast.walk(stmt))


def _suppresses(expr: ast.AST) -> bool:
    """``contextlib.suppress(ImportError)`` (or a catching base) as a ``with`` item."""
    return (isinstance(expr, ast.Call) and last_name(expr.func) == "suppress"
            and any(last_name(a) in _CATCHING for a in expr.args))

