"""Which binaries a loader opens, and how: extension modules, commands, files never loaded.

**Extension module.** CPython's path finder takes ``<name><suffix>`` for ``import name`` when
``<suffix>`` is one of ``importlib.machinery.EXTENSION_SUFFIXES`` (``.cpython-311-x86_64-linux-gnu.so``,
``.abi3.so``, ``.so`` on Linux and macOS; ``.cp311-win_amd64.pyd``, ``.pyd`` on Windows; PyPy's
``.pypy310-pp73-*``), loads the file, then calls ``PyInit_<name>`` (``PyInitU_<punycode>`` for a
non-ASCII name, PEP 489); a file without that export fails to import, whatever its name. So an
extension module is a file whose name the importer takes **and** that exports its init function,
on ELF, Mach-O and PE alike: ``libcasadi_conic_mosek.so`` (a solver plugin), a Qt plugin
``libqxcb.so`` and MLIR plugins are importable names but no modules: their host loads them by
path. The interpreter part of the suffix (``cpython-311``) is not compared with the wheel's tags
here: that an interpreter of the tags takes the file is WA602's question.

**Never loaded by the platform's loader.** pip's and setuptools' launcher templates
(``pip/_vendor/distlib/t64.exe``, ``setuptools/cli-64.exe``, ...) are data: the installer copies
one, with a script appended, into each console script's launcher on Windows; the file itself is
never loaded, on Windows or elsewhere.
"""

from __future__ import annotations

import re

from wheelaudit.binary.symbols import SymbolTable
from wheelaudit.model.binary import Binary, Slice

__all__ = ["importable_name", "is_extension_module", "never_loaded", "is_command"]

#: a file name an importer takes: ``<name><interpreter part>.so`` (ELF, Mach-O) or ``.pyd`` (PE)
_SO_NAME = re.compile(r"^(?P<name>[^.]+)(?P<tag>\.(?:cpython-\d+[a-z]*(?:-[^.]+)?|abi3|pypy\d+-pp\d+(?:-[^.]+)?))?\.so$")
_PYD_NAME = re.compile(r"^(?P<name>[^.]+)(?P<tag>\.(?:cp\d+t?(?:-win[_a-z0-9]*)?|pypy\d+-pp\d+(?:-win[_a-z0-9]*)?))?\.pyd$",
                       re.IGNORECASE)

#: launcher templates: copied into launchers by pip (distlib) and setuptools, never loaded
_LAUNCHER_TEMPLATE = re.compile(r"(?:^|/)(?:distlib/[tw](?:32|64|64-arm|arm64)?|setuptools/(?:cli|gui)(?:-32|-64|-arm64)?)"
                                r"\.exe$", re.IGNORECASE)
#: the stub executables a freezer copies into the applications it builds (py2app's
#: ``apptemplate/prebuilt/main-arm64``, ``bundletemplate/prebuilt/main-universal2``, ...): data to
#: the wheel, run only as the executable of the bundle they are copied into
_FREEZER_TEMPLATE = re.compile(r"(?:^|/)py2app/(?:app|bundle)template/prebuilt/[^/]+$")


def importable_name(b: Binary) -> str | None:
    """The module name an importer takes the file for (``_C`` for ``_C.cpython-311-x86_64-linux-gnu.so``),
    or None when no interpreter imports a file of that name."""
    m = (_PYD_NAME if b.format == "pe" else _SO_NAME).match(b.name)
    if m is None or not m.group("name").isidentifier():
        return None
    return m.group("name")


def _exports(sl: Slice, name: str) -> bool:
    """Whether ``sl`` exports ``name`` exactly (a SymbolTable answers from its string table
    without making a Symbol of each export)."""
    exports = sl.exports
    if isinstance(exports, SymbolTable):
        raw = name.encode("utf-8", "surrogatepass")
        if raw not in exports.blob:
            return False
        return any(n == name for n in exports.names())
    return any(s.name == name for s in exports)


def _exports_prefix(sl: Slice, prefix: str) -> bool:
    exports = sl.exports
    if isinstance(exports, SymbolTable):
        return exports.any_name_startswith(prefix)
    return any(s.name.startswith(prefix) for s in exports)


def is_extension_module(b: Binary) -> bool:
    """A CPython/PyPy extension module: an importable file name (:func:`importable_name`) whose
    file exports ``PyInit_<name>`` (``PyInitU_`` for a non-ASCII name). A file named with an
    interpreter's suffix (``.cpython-311-*.so``, ``.abi3.so``, ``.cp311-win_amd64.pyd``) with no
    export read at all counts as one (a module always exports its init function: no export means
    none could be read, and what cannot be read never turns an import into a plugin)."""
    name = importable_name(b)
    if name is None:
        return False
    init = f"PyInit_{name}" if name.isascii() else None
    if any((_exports(sl, init) if init else _exports_prefix(sl, "PyInitU_")) for sl in b.slices):
        return True
    tagged = (_PYD_NAME if b.format == "pe" else _SO_NAME).match(b.name).group("tag")  # type: ignore[union-attr]
    return bool(tagged) and bool(b.slices) and all(len(sl.exports) == 0 for sl in b.slices)


def never_loaded(b: Binary) -> str | None:
    """How a binary that no platform loader ever loads is used (the words a report shows), or
    None for every other binary."""
    if b.format == "pe" and _LAUNCHER_TEMPLATE.search(b.path):
        return ("a launcher template: pip and setuptools copy it, with a script appended, into a console script's "
                "launcher on Windows; the file itself is never loaded")
    if b.format == "macho" and _FREEZER_TEMPLATE.search(b.path):
        return ("an application template: py2app copies it into the .app bundle or plug-in it builds, as that "
                "bundle's executable; the file itself is never run from here")
    return None


def is_command(b: Binary) -> bool:
    """An executable, or a file the wheel installs as a command (``NAME.data/scripts/``; in an
    installed environment, its path above site-packages): run directly."""
    return b.kind == "executable" or ".data/scripts/" in b.path or b.path.startswith("../")
