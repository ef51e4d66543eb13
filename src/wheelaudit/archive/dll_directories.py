"""The folders a package adds to the Windows DLL search when it is imported, read statically.

Windows searches an extension module's own folder, System32 and the folders the process added
with ``os.add_dll_directory`` — not PATH (CPython 3.8+). Packages that keep their DLLs elsewhere
add that folder in their ``__init__.py``: delvewheel's patch (between ``# start delvewheel
patch`` and ``# end delvewheel patch``) adds ``<dist>.libs`` beside the package, torch adds
``torch/lib``. The source is read as text, never run: a folder counts when an ``__init__.py``
that calls ``os.add_dll_directory`` (or preloads with ``LoadLibraryExW``, delvewheel's older
patch) builds it as ``os.path.join(os.path.dirname(__file__), <literal parts>)``, ``os.pardir``
and ``".."`` climbing one folder. A folder built another way is not seen; its DLLs are then
reported as unresolved (WA501), and a rules file can allow them (``[linkage] allow-external``).
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterable

#: at most this many ``__init__.py`` files are read, each at most this many bytes
MAX_FILES = 200
MAX_BYTES = 1 << 20

_MARKERS = ("add_dll_directory", "LoadLibraryEx", "delvewheel patch")


def _parts(node: ast.AST) -> list[str] | None:
    """The literal parts of ``os.path.join(os.path.dirname(__file__), ...)`` (``os.pardir`` as
    ``..``), or None when ``node`` is not such a call."""
    if not (isinstance(node, ast.Call) and _dotted(node.func) in ("os.path.join", "path.join", "join")):
        return None
    if not node.args or not _is_file_dir(node.args[0]):
        return None
    out: list[str] = []
    for arg in node.args[1:]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            out.append(arg.value)
        elif _dotted(arg) in ("os.pardir", "pardir"):
            out.append("..")
        else:
            return None
    return out


def _is_file_dir(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and _dotted(node.func) in ("os.path.dirname", "path.dirname", "dirname")
            and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id == "__file__")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def folders_in(source: str, init_path: str) -> list[str]:
    """The folders (paths inside the wheel, normalised) that the ``__init__.py`` at
    ``init_path`` adds to the DLL search, from its text ``source``."""
    if not any(m in source for m in _MARKERS):
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    here = posixpath.dirname(init_path)
    out: list[str] = []
    for node in ast.walk(tree):
        parts = _parts(node)
        if parts:
            path = posixpath.normpath(posixpath.join(here, *parts))
            if not path.startswith("..") and path not in out and path != ".":
                out.append(path)
    return out


def dll_directories(files: Iterable[str], read_text: Callable[[str], str | None]) -> list[str]:
    """The folders every package of the wheel adds to the DLL search at import time."""
    inits = sorted(f for f in files if f.endswith("/__init__.py") and ".dist-info/" not in f)[:MAX_FILES]
    out: list[str] = []
    for init in inits:
        text = read_text(init)
        if not text or len(text) > MAX_BYTES:
            continue
        for folder in folders_in(text, init):
            if folder not in out:
                out.append(folder)
    return out
