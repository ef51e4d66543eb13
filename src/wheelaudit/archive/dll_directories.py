"""What a package does to the Windows DLL search when it is imported, read statically.

Windows searches an extension module's own folder, System32 and the folders the process added
with ``os.add_dll_directory`` — not PATH (CPython 3.8+). Packages that keep their DLLs elsewhere
say so at import time, in two ways this module reads:

* **folders**: ``os.add_dll_directory(folder)`` (delvewheel's patch between ``# start delvewheel
  patch`` and ``# end delvewheel patch`` adds ``<dist>.libs`` beside the package; torch adds
  ``torch/lib``), or ``LoadLibraryExW(<folder>/<name>)`` (delvewheel's older patch, which loads
  every DLL of its folder);
* **preloads**: a DLL loaded by its full path (``ctypes.WinDLL``, ``CDLL``, ``LoadLibraryW``),
  as scikit-learn's ``_distributor_init.py`` loads ``.libs/vcomp140.dll``: once loaded, that DLL
  serves every later import of its name in the process.

The sources are read as text, never run: the ``__init__.py`` files and the modules directly in a
top-level package (``pkg/_distributor_init.py``). A path counts when it is built from the
package's own folder — ``os.path.join(os.path.dirname(__file__), <literal parts>)`` (or
``os.path.split(__file__)[0]``) or
``pathlib.Path(__file__).parent / <literal part>``, with ``os.pardir``, ``".."`` and ``.parent``
climbing one folder, through any alias of ``os.path`` and through
names it is assigned to, lists and comprehensions it is put in (or appended to) and loops over them — and reaches one of those calls.
A path built another way is not seen; its DLLs are then unresolved (WA501), and a rules file can
allow them (``[linkage] allow-external``).
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from wheelaudit.archive.pysource import last_name, parse

#: at most this many files are read, each at most this many bytes
MAX_FILES = 200
MAX_BYTES = 1 << 20

_MARKERS = ("add_dll_directory", "LoadLibrary", "WinDLL", "CDLL", "delvewheel patch")
#: calls that add their argument (a folder) to the DLL search
_ADD_FOLDER = ("add_dll_directory",)
#: calls that load their first argument (a DLL's path) now
_LOAD_FILE = ("LoadLibraryExW", "LoadLibraryEx", "LoadLibraryW", "LoadLibraryA", "LoadLibrary", "WinDLL",
              "CDLL", "PyDLL", "OleDLL")
#: calls that pass a path through unchanged (``abspath``, ``c_wchar_p``, ``str``)
_THROUGH = ("abspath", "normpath", "realpath", "c_wchar_p", "str", "fspath", "list", "tuple", "sorted")


@dataclass
class ImportTimeLoads:
    """``folders``: added to the DLL search; ``preloaded``: DLL files loaded by full path (paths
    inside the wheel, normalised, in the order found)."""

    folders: list[str] = field(default_factory=list)
    preloaded: list[str] = field(default_factory=list)


#: the last part of a path that is the module's own file (``__file__``), not a folder
FILE_PART = "<__file__>"


def _parent(parts: tuple[str, ...]) -> tuple[str, ...]:
    """``dirname`` / ``.parent``: the module's folder for its file, else one folder up."""
    return parts[:-1] if parts and parts[-1] == FILE_PART else parts + ("..",)


def _literal(node: ast.AST) -> str | None:
    """A path part written in the source: a string, or ``os.pardir``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if last_name(node) == "pardir":
        return ".."
    return None


class PathValues:
    """The paths (relative to the source's folder, as lists of parts) each expression of one
    module can hold, following assignments, lists and ``for`` loops (flow-insensitively)."""

    def __init__(self, tree: ast.AST, depth: int = 0) -> None:
        self.up = ("..",) * depth  # from the source's folder to the wheel's root
        self.bound: dict[str, set[tuple[str, ...]]] = {}
        nodes = list(ast.walk(tree))
        # ``import pkg`` at any level: ``pkg.__path__`` is the folder ``pkg`` at the wheel's root
        self.imported = {a.asname or a.name: a.name for n in nodes if isinstance(n, ast.Import)
                         for a in n.names if "." not in a.name}
        for _ in range(3):  # (names bound through names: a few rounds reach a fixed point)
            for node in nodes:
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if node.value is not None:
                        self._bind(targets, self.of(node.value))
                elif isinstance(node, (ast.For, ast.comprehension)):
                    self._bind([node.target], self.of(node.iter))
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                      and node.func.attr in ("append", "extend", "insert") and node.args
                      and isinstance(node.func.value, ast.Name)):  # libs.append(join(dirname(__file__), "libs"))
                    self._bind([node.func.value], self.of(node.args[-1]))

    def _bind(self, targets, paths: set[tuple[str, ...]]) -> None:
        if not paths:
            return
        for t in targets:
            if isinstance(t, ast.Name):
                self.bound.setdefault(t.id, set()).update(paths)

    def of(self, node: ast.AST) -> set[tuple[str, ...]]:
        """The paths ``node`` can hold: parts relative to the module's folder, the module file
        itself ending in :data:`FILE_PART` (``__file__``, ``Path(__file__)``)."""
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return {(FILE_PART,)}
            return set(self.bound.get(node.id, ()))
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return {p for e in node.elts for p in self.of(e)}
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.of(node.elt)  # (its loop variables are bound by the comprehension)
        if (isinstance(node, ast.Attribute) and node.attr == "__path__" and isinstance(node.value, ast.Name)
                and node.value.id in self.imported):  # for path in pkg.__path__ (pywin32's bootstrap)
            return {self.up + (self.imported[node.value.id],)}
        if isinstance(node, ast.Attribute) and node.attr == "parent":  # Path(...).parent
            return {_parent(p) for p in self.of(node.value)}
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call)  # os.path.split(...)[0]
                and last_name(node.value.func) == "split" and len(node.value.args) == 1
                and isinstance(node.slice, ast.Constant) and node.slice.value == 0):
            return {_parent(p) for p in self.of(node.value.args[0])}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path(...) / "lib"
            tail = _literal(node.right)
            return {h + (tail,) for h in self.of(node.left) if FILE_PART not in h} if tail is not None else set()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # dirname(__file__) + "\\Qt5\\bin"
            tail = _literal(node.right)
            if not tail or tail[0] not in "\\/":
                return set()
            parts = tuple(p for p in re.split(r"[\\/]+", tail) if p)
            return {h + parts for h in self.of(node.left) if FILE_PART not in h}
        if not isinstance(node, ast.Call):
            return set()
        name = last_name(node.func)
        if name == "filter" and len(node.args) == 2:
            return self.of(node.args[1])
        if name == "dirname" and len(node.args) == 1:
            return {_parent(p) for p in self.of(node.args[0])}
        if name in ("join", "joinpath"):
            if name == "join":
                if not node.args:
                    return set()
                heads, rest = self.of(node.args[0]), node.args[1:]
            else:  # Path(...).joinpath("lib", ...)
                if not isinstance(node.func, ast.Attribute):
                    return set()
                heads, rest = self.of(node.func.value), node.args
            paths = {h for h in heads if FILE_PART not in h}
            for arg in rest:
                part = _literal(arg)
                if part is not None:
                    paths = {p + (part,) for p in paths}
                elif (whole := {p for p in self.of(arg) if FILE_PART not in p}):
                    # a path built from __file__ is absolute, and joining an absolute path
                    # drops what came before it (openvino: join(dirname(__file__), lib))
                    paths = whole
                else:
                    return set()
            return paths
        if name in ("resolve", "absolute") and isinstance(node.func, ast.Attribute) and not node.args:
            return self.of(node.func.value)  # Path(__file__).resolve()
        if name in _THROUGH + ("Path", "PurePath", "WindowsPath", "PureWindowsPath") and len(node.args) == 1:
            return self.of(node.args[0])
        return set()

    def folder_of_file(self, node: ast.AST) -> set[tuple[str, ...]]:
        """The folders of ``join(<folder>, <any name>)`` or ``<folder> / <any name>``: a DLL path
        whose name is not a literal (delvewheel's loop over its folder's DLLs)."""
        while isinstance(node, ast.Call) and last_name(node.func) in _THROUGH and len(node.args) == 1:
            node = node.args[0]
        if isinstance(node, ast.Call) and last_name(node.func) == "join" and len(node.args) >= 2:
            return self.of(node.args[0])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # <folder> / name
            return self.of(node.left)
        return set()


def read_source(source: str, path: str) -> ImportTimeLoads:
    """What the module at ``path`` (inside the wheel) does to the DLL search, from its text."""
    out = ImportTimeLoads()
    if not any(m in source for m in _MARKERS):
        return out
    tree = parse(source)
    if tree is None:
        return out
    here = posixpath.dirname(path)
    paths = PathValues(tree, here.count("/") + 1 if here else 0)

    def add(into: list[str], parts: tuple[str, ...]) -> None:
        if FILE_PART in parts:
            return
        p = posixpath.normpath(posixpath.join(here, *parts))
        if not p.startswith("..") and p != "." and p not in into:
            into.append(p)

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        callee = last_name(node.func)
        if callee in _ADD_FOLDER:
            for parts in sorted(paths.of(node.args[0])):
                add(out.folders, parts)
        elif callee in _LOAD_FILE:
            for parts in sorted(paths.of(node.args[0])):
                if parts and parts[-1].lower().endswith(".dll"):
                    add(out.preloaded, parts)
            for parts in sorted(paths.folder_of_file(node.args[0])):
                if not (parts and parts[-1].lower().endswith(".dll")):
                    add(out.folders, parts)
    return out


def folders_in(source: str, path: str) -> list[str]:
    """The folders (paths inside the wheel, normalised) that the module at ``path`` adds to the
    DLL search, from its text ``source``."""
    return read_source(source, path).folders


def _sources(files: Iterable[str]) -> list[str]:
    """The modules read: every ``__init__.py``, and the modules directly in a top-level package."""
    out = []
    for f in files:
        if not f.endswith(".py") or ".dist-info/" in f or ".data/" in f:
            continue
        if f.endswith("/__init__.py") or f.count("/") == 1:
            out.append(f)
    return sorted(out)[:MAX_FILES]


def _startup_modules(files: list[str], read_text: Callable[[str], str | None]) -> list[str]:
    """The modules a ``.pth`` file at the wheel's root imports at every interpreter start (its
    ``import`` lines, as ``site`` runs them), found at the root or in the folders the same file
    puts on ``sys.path`` (pywin32's ``import pywin32_bootstrap`` from ``win32\\lib``)."""
    have = set(files)
    out: list[str] = []
    for pth in sorted(f for f in files if f.endswith(".pth") and "/" not in f):
        text = read_text(pth) or ""
        lines = [line.rstrip() for line in text[:MAX_BYTES].splitlines()]  # (as site reads them)
        folders = [""] + [posixpath.normpath(line.replace("\\", "/")) for line in lines
                          if line and not line.startswith(("#", "import ", "import\t"))]
        for line in lines:
            if not line.startswith(("import ", "import\t")):
                continue
            for name in line[len("import"):].split(";")[0].split(","):
                mod = name.strip().split(" ")[0].replace(".", "/")
                for folder in folders:
                    for cand in (f"{mod}.py", f"{mod}/__init__.py"):
                        found = posixpath.join(folder, cand) if folder not in ("", ".") else cand
                        if found in have and found not in out:
                            out.append(found)
    return out


def import_time_loads(files: Iterable[str], read_text: Callable[[str], str | None]) -> ImportTimeLoads:
    """What every package of the wheel does to the DLL search when imported, and what the
    modules its ``.pth`` files import do at every start."""
    out = ImportTimeLoads()
    files = list(files)
    for f in dict.fromkeys(_sources(files) + _startup_modules(files, read_text)):
        text = read_text(f)
        if not text or len(text) > MAX_BYTES:
            continue
        found = read_source(text, f)
        out.folders += [d for d in found.folders if d not in out.folders]
        out.preloaded += [d for d in found.preloaded if d not in out.preloaded]
    return out


def dll_directories(files: Iterable[str], read_text: Callable[[str], str | None]) -> list[str]:
    """The folders every package of the wheel adds to the DLL search at import time."""
    return import_time_loads(files, read_text).folders
