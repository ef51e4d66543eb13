"""What a package imports and loads when it is imported, in order: read from its Python sources
as text, never run.

Importing ``pkg.mod`` runs ``pkg/__init__.py`` first, then ``pkg/mod``; each module runs its
statements in order, and what those import and load is in the process before the next
statement. The load model (:mod:`wheelaudit.load`) replays these events to know which images are
already loaded when a binary is loaded (the loaders reuse a loaded image instead of searching).

Each module's events, in source order:

* ``import``: a module imported at import time (``import a.b``, ``from . import x``,
  ``importlib.import_module("a.b")``); for ``from p import a`` both ``p`` and ``p.a`` (either may
  be the module);
* ``load``: a file loaded by path at import time (``ctypes.CDLL``, ``cdll.LoadLibrary``,
  ``ctypes.WinDLL``, ``ffi.dlopen``, ``torch.ops.load_library``, ``LoadLibraryExW``), its path built
  from the module's own folder as :mod:`wheelaudit.archive.dll_directories` reads paths;
* ``load-later``: the same call inside a function or class body: the file is loaded by path when
  that code runs, after the module was imported;
* ``env``: a folder of the package put in ``LD_LIBRARY_PATH`` / ``DYLD_LIBRARY_PATH`` / ``PATH`` (a
  launcher that sets it before it runs a tool of the wheel), anywhere in the module. ``PATH`` is
  common in Python code: like the others it is recorded only where the value it is set to holds a
  folder of the package (``os.path.join(os.path.dirname(__file__), "bin") + os.pathsep + ...``),
  never for a value read from elsewhere.

Statements inside ``if``, ``try`` and ``with`` count as run (both branches: a reader cannot know
which runs, and the load model only ever uses an event to say an image *may* be served, in every
context, never to hide a dependency). Modules are followed from every top-level package's
``__init__.py`` through the imports found (breadth first), at most :data:`MAX_MODULES` files of
at most :data:`MAX_BYTES` each and :data:`MAX_TOTAL_BYTES` in all; what lies past the bound is not read (fewer events: fewer images known
to be loaded, never a finding lost).
"""

from __future__ import annotations

import ast
import posixpath
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from wheelaudit.archive.dll_directories import FILE_PART, PathValues
from wheelaudit.archive.import_guards import imported_names
from wheelaudit.archive.pysource import last_name, parse

__all__ = ["LoadEvent", "ImportEvents", "import_events", "module_files", "MAX_MODULES", "MAX_BYTES"]

#: at most this many modules are read, each at most this many bytes, and this many bytes in all
MAX_MODULES = 200
MAX_BYTES = 1 << 20
MAX_TOTAL_BYTES = 4 << 20

#: calls that load their first argument, a library's path, now (last name of the callee)
LOAD_CALLS = {
    "CDLL": "ctypes.CDLL", "PyDLL": "ctypes.PyDLL", "WinDLL": "ctypes.WinDLL", "OleDLL": "ctypes.OleDLL",
    "LoadLibrary": "LoadLibrary", "LoadLibraryW": "LoadLibrary", "LoadLibraryA": "LoadLibrary",
    "LoadLibraryExW": "LoadLibraryEx", "LoadLibraryEx": "LoadLibraryEx", "dlopen": "dlopen",
    "load_library": "torch.ops.load_library",
}


#: the variables with which a launcher points a tool's loader at a folder before it runs the tool
#: (``PATH``: the Windows loader searches it for a DLL an executable imports)
ENV_VARS = ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH", "PATH")

#: text a module must contain for its calls to be looked at (else only its statements are);
#: ``PATH`` only as a key or a keyword (a bare ``PATH`` is part of many other names)
_CALL_MARKERS = ("import_module", "__import__", *sorted({k for k in LOAD_CALLS}), *ENV_VARS[:-1],
                 '"PATH"', "'PATH'", "PATH=")


def _env_values(value: ast.AST) -> list[ast.AST]:
    """The parts of a search-path value that may name a folder: the value, either side of
    ``folder + os.pathsep + ...`` (a folder appended is searched too, after the others), the
    first field of an f-string, the items of ``os.pathsep.join([...])`` / ``";".join([...])``."""
    out = [value]
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        out += _env_values(value.left) + _env_values(value.right)
    elif isinstance(value, ast.JoinedStr) and value.values and isinstance(value.values[0], ast.FormattedValue):
        out += _env_values(value.values[0].value)
    elif (isinstance(value, ast.Call) and last_name(value.func) == "join" and isinstance(value.func, ast.Attribute)
          and (last_name(value.func.value) == "pathsep"
               or (isinstance(value.func.value, ast.Constant) and value.func.value.value in (";", ":")))
          and value.args):
        out += _env_values(value.args[0])  # (its items, or the lists added: ``dirs + [old]``)
    return out


@dataclass(frozen=True)
class LoadEvent:
    """One thing a module does that brings code into the process. ``kind``: ``import``,
    ``load`` or ``load-later``; ``target``: the dotted module name (import) or the path inside
    the wheel (load); ``source``/``line``: where; ``how``: the call (``ctypes.CDLL``)."""

    kind: str
    target: str
    source: str
    line: int
    how: str = "import"

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def _strip_scheme(path: str) -> str | None:
    """Where a ``.py`` member lands below site-packages (``x.data/purelib/a.py`` -> ``a.py``);
    None for a member installed elsewhere or metadata."""
    top, _, rest = path.partition("/")
    if top.endswith(".dist-info"):
        return None
    if top.endswith(".data"):
        scheme, _, sub = rest.partition("/")
        return sub if scheme in ("purelib", "platlib") and sub else None
    return path


def module_files(files: Iterable[str]) -> dict[str, str]:
    """Dotted module name -> the ``.py`` member an importer runs for it (``a/b/__init__.py`` for
    the package ``a.b``, ``a/c.py`` for ``a.c``)."""
    out: dict[str, str] = {}
    for f in files:
        if not f.endswith(".py"):
            continue
        inst = _strip_scheme(f)
        if inst is None:
            continue
        parts = inst[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(p.isidentifier() for p in parts):
            out.setdefault(".".join(parts), f)
    return out


def _events_of(text: str, path: str) -> list[LoadEvent]:
    """The events of one module, in source order."""
    tree = parse(text)
    if tree is None:
        return []
    inst = _strip_scheme(path) or path
    here = posixpath.dirname(inst)
    package = here.replace("/", ".")
    paths: PathValues | None = None
    out: list[LoadEvent] = []

    def loads(node: ast.Call, later: bool) -> None:
        nonlocal paths
        how = LOAD_CALLS.get(last_name(node.func))
        if how is None or not node.args:
            return
        if paths is None:
            paths = PathValues(tree, here.count("/") + 1 if here else 0)
        for parts in sorted(paths.of(node.args[0])):
            if FILE_PART in parts:
                continue
            p = posixpath.normpath(posixpath.join(here, *parts))
            if not p.startswith("..") and p != ".":
                out.append(LoadEvent("load-later" if later else "load", p, path, node.lineno, how))

    def env(node: ast.Call | ast.Dict | ast.Assign) -> None:
        """``LD_LIBRARY_PATH`` (dyld's, Windows' ``PATH``) set to a folder of the package: in a dict, a keyword,
        ``os.environ[...] = ``, ``os.environ.setdefault(...)`` / ``os.putenv(...)``."""
        nonlocal paths
        pairs: list[tuple[str, ast.AST]] = []
        if isinstance(node, ast.Call):
            pairs += [(kw.arg, kw.value) for kw in node.keywords if kw.arg in ENV_VARS]
            if (len(node.args) >= 2 and isinstance(node.args[0], ast.Constant) and node.args[0].value in ENV_VARS
                    and last_name(node.func) in ("setdefault", "putenv", "__setitem__")):
                pairs.append((node.args[0].value, node.args[1]))
        elif isinstance(node, ast.Dict):
            pairs += [(k.value, v) for k, v in zip(node.keys, node.values, strict=True)
                      if isinstance(k, ast.Constant) and k.value in ENV_VARS]
        elif isinstance(node, ast.Assign):
            pairs += [(t.slice.value, node.value) for t in node.targets if isinstance(t, ast.Subscript)
                      and isinstance(t.slice, ast.Constant) and t.slice.value in ENV_VARS]
        seen: set[tuple[str, str]] = set()  # (a folder named by the value and by one of its parts: once)
        for var, value in pairs:
            if paths is None:
                paths = PathValues(tree, here.count("/") + 1 if here else 0)
            for part in _env_values(value):
                for parts in sorted(paths.of(part)):
                    if FILE_PART in parts:
                        continue
                    p = posixpath.normpath(posixpath.join(here, *parts))
                    if not p.startswith("..") and p != "." and (var, p) not in seen:
                        seen.add((var, p))
                        out.append(LoadEvent("env", p, path, node.lineno, var))

    def statements(body: list, later: bool) -> None:
        """Statements only (no expression holds an import statement): the fast walk for a
        module whose text names no call this reader follows."""
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if not later:
                    for name in imported_names(node, package):
                        if name:
                            out.append(LoadEvent("import", name, path, node.lineno))
                continue
            inner = later or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            if inner and later:
                continue  # (nothing in a function body runs at import, and no call is looked for)
            for field in ("body", "orelse", "finalbody"):
                part = getattr(node, field, None)
                if isinstance(part, list):
                    statements(part, inner)
            for handler in getattr(node, "handlers", ()) or ():
                statements(handler.body, inner)
            for case in getattr(node, "cases", ()) or ():
                statements(case.body, inner)

    def visit(node: ast.AST, later: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            later = True
        if isinstance(node, (ast.Call, ast.Dict, ast.Assign)):
            env(node)
        if not later and isinstance(node, (ast.Import, ast.ImportFrom)):
            for name in imported_names(node, package):
                if name:
                    out.append(LoadEvent("import", name, path, node.lineno))
            return
        if isinstance(node, ast.Call):
            if not later:
                for name in imported_names(node, package):  # importlib.import_module("a.b")
                    out.append(LoadEvent("import", name, path, node.lineno))
            for child in ast.iter_child_nodes(node):  # (arguments run first)
                visit(child, later)
            loads(node, later)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, later)

    try:
        if any(m in text for m in _CALL_MARKERS):
            visit(tree, False)
        else:
            statements(tree.body, False)
    except RecursionError:
        return []
    return out


def import_events(files: Iterable[str], read_text: Callable[[str], str | None],
                  on_read: Callable[[int], None] | None = None) -> dict[str, list[LoadEvent]]:
    """Each module's events (``.py`` member -> events in source order), for the modules reached
    from the wheel's top-level packages through their imports (at most :data:`MAX_MODULES`).
    ``on_read(n)``: told, once at the end, how many modules were read."""
    modules = module_files(files)
    queue: deque[str] = deque(sorted(n for n in modules if "." not in n))
    seen = set(queue)
    out: dict[str, list[LoadEvent]] = {}
    total = 0
    while queue and len(out) < MAX_MODULES and total < MAX_TOTAL_BYTES:
        name = queue.popleft()
        path = modules[name]
        text = read_text(path)
        if not text or len(text) > MAX_BYTES:
            out[path] = []
            continue
        total += len(text)
        events = _events_of(text, path)
        out[path] = events
        for e in events:
            if e.kind != "import":
                continue
            parts = e.target.split(".")
            for k in range(1, len(parts) + 1):  # (importing a.b.c runs a, a.b, a.b.c)
                n = ".".join(parts[:k])
                if n in modules and n not in seen:
                    seen.add(n)
                    queue.append(n)
    if on_read is not None:
        on_read(len(out))
    return out


class ImportEvents(Mapping[str, list[LoadEvent]]):
    """A wheel's import-time events (the mapping :func:`import_events` gives), read on first use.

    Invariant: the mapping is exactly what its reader returns (for one wheel, :func:`import_events`
    of its files), computed at most once, and only when a question is asked of it (a key, its length, its items); until then no module is read. Only
    some verdicts depend on the import order (a dependency found nowhere but in an image loaded
    before, a folder a launcher sets, the route a message names), so a wheel whose binaries need
    none of them is audited without parsing a line of its Python code. ``modules_read`` counts the
    modules read so far."""

    def __init__(self, read: Callable[[Callable[[int], None]], Mapping[str, list[LoadEvent]]],
                 on_read: Callable[[int], None] | None = None) -> None:
        """``read(count)``: the mapping, telling ``count`` how many modules it read."""
        self._read = read
        self._on_read = on_read
        self._events: dict[str, list[LoadEvent]] | None = None
        self.modules_read = 0

    @classmethod
    def of_wheel(cls, files: Iterable[str], read_text: Callable[[str], str | None],
                 on_read: Callable[[int], None] | None = None) -> ImportEvents:
        """The events of one wheel's modules (``read_text``: a member's text, or None), read by
        :func:`import_events` when first asked for; ``on_read(n)`` is told the count then."""
        files = list(files)
        return cls(lambda count: import_events(files, read_text, count), on_read)

    @classmethod
    def merged(cls, parts: Iterable[Mapping[str, list[LoadEvent]]]) -> ImportEvents:
        """The events of several wheels installed together (a later wheel's module wins a path
        two ship), each read only when the merged mapping is first asked a question."""
        parts = list(parts)

        def read(count: Callable[[int], None]) -> dict[str, list[LoadEvent]]:
            out = {k: v for part in parts for k, v in part.items()}
            count(sum(getattr(part, "modules_read", 0) for part in parts))
            return out

        return cls(read)

    @property
    def was_read(self) -> bool:
        """Whether the events were read (a question was asked)."""
        return self._events is not None

    def _count(self, n: int) -> None:
        self.modules_read = n
        if self._on_read is not None:
            self._on_read(n)

    def _all(self) -> dict[str, list[LoadEvent]]:
        if self._events is None:
            self._events = dict(self._read(self._count))
        return self._events

    def __getitem__(self, path: str) -> list[LoadEvent]:
        return self._all()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
