"""The ABI of a wheel, as the release checks compare it, and the one pairing of libraries.

What a program or a dependent wheel binds to (SPEC §4, the release checks): each shared
library's identity (ELF ``DT_SONAME``, Mach-O install name, a PE's DLL name) and exports (with
their ELF symbol versions), and each extension module's import name. An extension module's
other exports and the libraries a repair tool vendored are nobody's to link: they are left out
(:func:`wheel_abi`).

:func:`pair_libraries` pairs the libraries of two builds: same path, else the same library
found elsewhere or renamed (same identity, same file name in another folder, the same name but
for a repair hash or a version, the same exports). ``check --baseline`` and ``diff`` both use it,
so a library that moved is one fact in both: the exports it keeps are compared under its new
path, and a folder that moved as a whole (numpy's ``core`` → ``_core``) is one move
(:func:`folder_moves`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from wheelaudit.checks.extension import is_extension_module
from wheelaudit.binary.symbols import SymbolTable
from wheelaudit.checks.release.names import ELF_VERSION, MACHO_VERSION, library_stem, unhashed, vendored_by
from wheelaudit.model.binary import Binary

#: defined symbols every library of a kind has, or that name no code (linker and C runtime
#: symbols); a symbol named after its own version node is the node itself (see :func:`exports_of`)
_LINKER = frozenset({
    "_init", "_fini", "_edata", "_end", "__bss_start", "__dso_handle", "_GLOBAL_OFFSET_TABLE_",
    "_DYNAMIC", "__data_start", "data_start", "_IO_stdin_used", "__TMC_END__", "__gmon_start__",
    "_PROCEDURE_LINKAGE_TABLE_", "__ehdr_start", "__executable_start", "_mh_dylib_header",
    "_mh_bundle_header", "_mh_execute_header", "_dyld_private",
})
_LINKER_PREFIXES = ("__libc_csu_", "_ITM_", "__x86.get_pc_thunk.")
_UNVERSIONED: frozenset[str | None] = frozenset((None,))

#: the suffix of an extension module's file name: ``.cpython-311-x86_64-linux-gnu.so``,
#: ``.abi3.so``, ``.cp311-win_amd64.pyd``, ``.so``, ``.pyd``
_MODULE_SUFFIX = re.compile(r"(\.(?:cpython|pypy|cp|abi3|graalpy)[^./]*(?:-[^./]*)*)?\.(?:so|pyd)$")


def exports_of(b: Binary) -> dict[str, frozenset[str | None]]:
    """A library's exports as a consumer binds them: name → the ELF version nodes it is defined
    in (``{None}`` when unversioned), over every slice; linker symbols and version-node
    symbols left out."""
    out: dict[str, frozenset[str | None]] = {}
    for sl in b.slices:
        exports = sl.exports
        if isinstance(exports, SymbolTable) and not any(exports.versions):
            # (no version anywhere: the names alone, without a Symbol made for each)
            for name in exports.names():
                if name not in _LINKER and not name.startswith(_LINKER_PREFIXES):
                    out[name] = _UNVERSIONED if name not in out else out[name] | _UNVERSIONED
            continue
        for sym in exports:
            name, version = sym.name, sym.version
            if name in _LINKER or name.startswith(_LINKER_PREFIXES) or (version is not None and name == version):
                continue
            had = out.get(name)
            out[name] = frozenset((version,)) if had is None else had | {version}
    return out


def import_name(path: str) -> str | None:
    """The name ``import`` finds an extension module by, from its path in the wheel:
    ``executorch/extension/pybindings/_portable_lib.cpython-311-darwin.so`` →
    ``executorch.extension.pybindings._portable_lib`` (a ``*.data/platlib/`` or
    ``*.data/purelib/`` prefix dropped); None for a name ``import`` cannot take."""
    parts = path.split("/")
    if len(parts) > 2 and parts[0].endswith(".data") and parts[1] in ("platlib", "purelib"):
        parts = parts[2:]
    m = _MODULE_SUFFIX.search(parts[-1])
    if m is None:
        return None
    parts[-1] = parts[-1][: m.start()]
    if not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def is_private_module(name: str) -> bool:
    """A module nobody outside its package imports: a leading underscore in any part of its name."""
    return any(p.startswith("_") for p in name.split("."))


@dataclass
class LibraryAbi:
    """One shared library of the ABI."""

    binary: Binary
    exports: dict[str, frozenset[str | None]] | None = None  # made on first use

    @property
    def path(self) -> str:
        return self.binary.path

    @property
    def identity(self) -> str | None:
        return self.binary.identity

    def symbols(self) -> dict[str, frozenset[str | None]]:
        if self.exports is None:
            self.exports = exports_of(self.binary)
        return self.exports


@dataclass
class WheelAbi:
    """The ABI of one wheel: its own shared libraries by path, its extension modules by import
    name (→ path), and the vendored libraries left out (path → the repair tool)."""

    libraries: dict[str, LibraryAbi] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)
    vendored: dict[str, str] = field(default_factory=dict)


def wheel_abi(libraries: Iterable[Binary]) -> WheelAbi:
    """The ABI of a wheel's binaries (see the module docstring). Unreadable binaries, executables
    and object files are no one's to bind to and are left out."""
    abi = WheelAbi()
    for b in libraries:
        if not b.ok or b.kind in ("executable", "object"):
            continue
        tool = vendored_by(b)
        if tool is not None:
            abi.vendored[b.path] = tool
            continue
        if is_extension_module(b):
            name = import_name(b.path)
            if name is not None:
                abi.modules[name] = b.path
            continue
        abi.libraries[b.path] = LibraryAbi(b)
    return abi


# --------------------------------------------------------------------------------------------
# Pairing the libraries of two builds


@dataclass(frozen=True)
class Move:
    """A library of OLD found in NEW under another path, and why it is the same library."""

    old: str
    new: str
    why: str  # "same identity @rpath/libfoo.dylib" / "same file name" / "new auditwheel hash" / "same exports (12)"


@dataclass
class Pairing:
    """The libraries of two builds paired: ``same`` (old, new) at one path, ``moved``, and the
    ``removed`` (old) and ``added`` (new) that nothing pairs."""

    same: list[tuple[Binary, Binary]] = field(default_factory=list)
    moved: list[tuple[Binary, Binary, Move]] = field(default_factory=list)
    removed: list[Binary] = field(default_factory=list)
    added: list[Binary] = field(default_factory=list)

    @property
    def pairs(self) -> list[tuple[Binary, Binary]]:
        """Every (old, new) pair, moves included."""
        return self.same + [(o, n) for o, n, _ in self.moved]


def identity_base(b: Binary) -> str | None:
    ident = b.identity
    return ident.replace("\\", "/").rsplit("/", 1)[-1] if ident else None


def _export_key(b: Binary) -> frozenset[str] | None:
    names = frozenset(n for sl in b.slices for n in _names(sl.exports)
                      if n not in _LINKER and not n.startswith(_LINKER_PREFIXES))
    return names or None


def _names(exports) -> Iterable[str]:
    names = getattr(exports, "names", None)
    return names() if callable(names) else (s.name for s in exports)


def _why_same_name(old: Binary, new: Binary) -> str:
    """Why two file names in one folder are one library: a repair tool's new hash, a new
    version, or the same extension module under another platform's suffix."""
    tools = sorted(t for t in (unhashed(old.name)[1], unhashed(new.name)[1]) if t)
    if tools:
        same_rest = unhashed(old.name)[0] == unhashed(new.name)[0]
        return f"new {tools[0]} hash" + ("" if same_rest else " and version")
    if "/.dylibs/" in f"/{old.path}" and "/.dylibs/" in f"/{new.path}":
        return "new version (delocate)"
    kinds = {"macho" if n.endswith(".dylib") else "elf" if ".so" in n else "other" for n in (old.name, new.name)}
    if len(kinds) == 1 and any(ELF_VERSION.match(n) or MACHO_VERSION.match(n) for n in (old.name, new.name)):
        return "new version"
    return "same module name"


def pair_libraries(old: Sequence[Binary], new: Sequence[Binary]) -> Pairing:
    """Pair two builds' binaries (see the module docstring). Evidence, strongest first: the same
    path; the same identity; the same file name in another folder; the same name but for a repair
    hash or a version, in the same folder; the same set of exports. Each step pairs only where
    exactly one candidate is left on each side."""
    out = Pairing()
    new_by_path = {b.path: b for b in new}
    old_paths = {b.path for b in old}
    left = [b for b in old if b.path not in new_by_path]
    right = [b for b in new if b.path not in old_paths]
    out.same = [(b, new_by_path[b.path]) for b in old if b.path in new_by_path]

    def pair(key: Callable[[Binary], object], why: Callable[[Binary, Binary], str]) -> None:
        keys_left: dict[object, list[Binary]] = {}
        for b in left:
            k = key(b)
            if k:
                keys_left.setdefault(k, []).append(b)
        keys_right: dict[object, list[Binary]] = {}
        for b in right:
            k = key(b)
            if k:
                keys_right.setdefault(k, []).append(b)
        for k, olds in keys_left.items():
            news = keys_right.get(k, [])
            if len(olds) == 1 and len(news) == 1 and olds[0].format == news[0].format:
                o, n = olds[0], news[0]
                out.moved.append((o, n, Move(o.path, n.path, why(o, n))))
                left.remove(o)
                right.remove(n)

    pair(identity_base, lambda b, _n: f"same identity {b.identity}")
    pair(lambda b: b.name, lambda _o, _n: "same file name")
    pair(lambda b: (b.directory, library_stem(b.name)), _why_same_name)
    pair(_export_key, lambda b, _n: f"same exports ({len(_export_key(b) or ())})")
    out.removed = left
    out.added = right
    out.moved.sort(key=lambda t: t[0].path)
    return out


@dataclass(frozen=True)
class FolderMove:
    """A folder whose libraries moved together to another folder (``numpy/core`` →
    ``numpy/_core``), the file names kept: one move, with the libraries it carried."""

    old: str
    new: str
    paths: tuple[tuple[str, str], ...]  # (old path, new path)


def folder_moves(moves: Iterable[Move], min_count: int = 2) -> tuple[list[FolderMove], list[Move]]:
    """Moves grouped by (old folder, new folder) where the file name is kept and at least
    ``min_count`` libraries went the same way; the moves left over."""
    groups: dict[tuple[str, str], list[Move]] = {}
    rest: list[Move] = []
    for m in moves:
        if posixpath.basename(m.old) == posixpath.basename(m.new):
            groups.setdefault((posixpath.dirname(m.old), posixpath.dirname(m.new)), []).append(m)
        else:
            rest.append(m)
    folders = []
    for (od, nd), ms in sorted(groups.items()):
        if len(ms) >= min_count:
            folders.append(FolderMove(od, nd, tuple((m.old, m.new) for m in ms)))
        else:
            rest.extend(ms)
    rest.sort(key=lambda m: m.old)
    return folders, rest
