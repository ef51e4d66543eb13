"""What makes a binary a Python extension module: the one definition every check and review uses."""

from __future__ import annotations

from wheelaudit.binary.symbols import SymbolTable
from wheelaudit.model.binary import Binary, Slice


def is_extension_module(b: Binary) -> bool:
    """A CPython/PyPy extension module (``*.cpython-311-*.so``, ``*.abi3.so``, ``*.pyd``, or a
    binary exporting ``PyInit_*``)."""
    name = b.name
    if ".cpython-" in name or ".abi3." in name or ".pypy" in name or name.endswith(".pyd"):
        return True
    return any(_exports_name_prefix(sl, "PyInit_") for sl in b.slices)


def _exports_name_prefix(sl: Slice, prefix: str) -> bool:
    """Whether an export's name starts with ``prefix`` (a SymbolTable answers without making
    a Symbol of each of its tens of thousands of exports)."""
    exports = sl.exports
    if isinstance(exports, SymbolTable):
        return exports.any_name_startswith(prefix)
    return any(s.name.startswith(prefix) for s in exports)
