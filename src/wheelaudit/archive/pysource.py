"""A wheel's Python sources, read as text and parsed, never run: what the readers of
import-time behaviour (:mod:`~wheelaudit.archive.dll_directories`,
:mod:`~wheelaudit.archive.import_guards`) share."""

from __future__ import annotations

import ast


def parse(text: str) -> ast.Module | None:
    """The module's syntax tree, or None for text that is not Python this interpreter reads
    (or nests too deep to parse)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def last_name(node: ast.AST) -> str:
    """The last name of a dotted name (``os.path.join`` -> ``join``, ``op.join`` -> ``join``,
    ``ImportError`` -> ``ImportError``); "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""
