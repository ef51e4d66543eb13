"""What makes a binary a Python extension module: the one definition every check and review uses."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from wheelaudit.binary.symbols import SymbolTable
from wheelaudit.model.binary import Binary, Slice


def is_extension_module(b: Binary) -> bool:
    """A CPython/PyPy extension module (``*.cpython-311-*.so``, ``*.abi3.so``, ``*.pyd``, or a
    binary exporting ``PyInit_*``)."""
    name = b.name
    if name.endswith(".pyd") or (b.format != "pe" and name.endswith(".so")
                                 and (".cpython-" in name or ".abi3." in name or ".pypy" in name)):
        return True
    # (an importer takes a module from a .pyd on Windows, from a .so elsewhere: shiboken6.abi3.dll
    # and libshiboken6.abi3.so.6.12 are libraries; a binary that exports PyInit_* is a module)
    return any(_exports_name_prefix(sl, "PyInit_") for sl in b.slices)


def _exports_name_prefix(sl: Slice, prefix: str) -> bool:
    """Whether an export's name starts with ``prefix`` (a SymbolTable answers without making
    a Symbol of each of its tens of thousands of exports)."""
    exports = sl.exports
    if isinstance(exports, SymbolTable):
        return exports.any_name_startswith(prefix)
    return any(s.name.startswith(prefix) for s in exports)


def loaded_binaries(libraries: Iterable[Binary], also: Iterable[Binary] = ()) -> set[str]:
    """The paths of the binaries that running the wheel loads through the system's loader: its
    extension modules (and any file an importer could take for one: ``name.so``, ``name.pyd``)
    and executables (and the wheel's scripts, which are run: ``*.data/scripts/``, installed
    above site-packages), and every binary of the wheel whose file name a loaded
    one's dependency names, transitively (by file name, case-insensitively for PE: what a
    loader could bind). Any other native file is loaded only by code that opens it by path
    (ctypes, cffi, a host's plugin loader), which may well pick another file per platform;
    ``also``: binaries known to be loaded that way at every import (a package's preloads)."""
    libs = [b for b in libraries if b.ok]
    by_name: dict[str, list[Binary]] = {}
    for b in libs:
        by_name.setdefault(b.name.lower() if b.format == "pe" else b.name, []).append(b)
    todo = [b for b in libs if b.kind == "executable" or _script(b) or is_extension_module(b) or _importable(b)]
    seen = {b.path for b in todo}
    todo += [b for b in also if b.ok and b.path not in seen]
    seen.update(b.path for b in todo)
    while todo:
        b = todo.pop()
        for s in b.slices:
            for dep in s.dependencies:
                base = posixpath.basename(dep.name.replace("\\", "/"))
                for hit in by_name.get(base.lower() if b.format == "pe" else base, ()):
                    if hit.path not in seen:
                        seen.add(hit.path)
                        todo.append(hit)
    return seen


def _importable(b: Binary) -> bool:
    """A file name an importer accepts as a module's (``_plat.so``, ``x.pyd``): importing that
    name loads it, whatever it exports."""
    name = b.name
    return name.endswith((".so", ".pyd")) and name.split(".", 1)[0].isidentifier()


def _script(b: Binary) -> bool:
    """A file the wheel installs as a command (``NAME.data/scripts/``; in an installed
    environment, its path above site-packages): run directly."""
    return ".data/scripts/" in b.path or b.path.startswith("../")
