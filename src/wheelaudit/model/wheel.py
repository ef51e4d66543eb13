"""The scanned wheel: what rules are evaluated over and what ``inspect``, ``owners``, ``dups`` and
``diff`` show."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from wheelaudit.model.binary import Binary
from wheelaudit.model.defects import Defect
from wheelaudit.model.interest import Interest
from wheelaudit.model.traits import WheelTraits

if TYPE_CHECKING:
    from wheelaudit.surface import Surface


@dataclass
class Wheel:
    """A scanned wheel: its identity, its files and the facts of every native binary."""

    path: Path
    name: str
    version: str
    tags: list[str]
    traits: WheelTraits
    files: list[str]
    libraries: list[Binary]
    requires_dist: list[str] = field(default_factory=list)
    #: damage found while reading (WA001 / WA002), made findings by :mod:`wheelaudit.checks.integrity`
    defects: list[Defect] = field(default_factory=list)
    strings: tuple[bytes, ...] = ()  # the byte strings searched for
    #: the interest the local symbols were narrowed to (None: every symbol kept)
    interest: Interest | None = None
    #: wheels audited together (wheelaudit.scan.together): path inside the tree -> the wheel file it
    #: came from; empty for a single wheel
    origins: dict[str, str] = field(default_factory=dict)
    #: folders the wheel's packages add to the Windows DLL search when imported
    #: (:mod:`wheelaudit.archive.dll_directories`); read only for a wheel that ships PE binaries
    dll_directories: list[str] = field(default_factory=list)
    #: DLL files the wheel's packages load by full path when imported (``ctypes.WinDLL``): each
    #: then serves every import of its name (same module)
    preloaded_dlls: list[str] = field(default_factory=list)
    #: what each Python module of the wheel imports and loads at import time, in order
    #: (``.py`` member -> :class:`wheelaudit.archive.load_order.LoadEvent` list): the load model's
    #: source facts (:mod:`wheelaudit.load`); read only for a wheel that ships native binaries
    import_events: dict[str, list] = field(default_factory=dict)
    #: extension modules the wheel's Python code imports only where a failed import is caught
    #: (:mod:`wheelaudit.archive.import_guards`): path -> where (``pkg/mod.py:12``). None: not
    #: looked at (it is looked at only for a module a load error names, see ``api.audit_wheels``)
    optional_modules: dict[str, str] | None = None
    #: the C++ consumer surface (CMake / pkg-config files, wheelaudit.surface); None when the wheel
    #: ships none of those files
    surface: Surface | None = None
    #: each member's (compressed, uncompressed) size in bytes; for a tree both are its size on disk
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: the size of the .whl file in bytes; None for an unpacked tree or wheels audited together
    archive_size: int | None = None

    def library(self, path: str) -> Binary:
        """The binary at ``path`` inside the wheel (exact path, or a unique file name)."""
        for b in self.libraries:
            if b.path == path:
                return b
        named = [b for b in self.libraries if b.name == path]
        if len(named) == 1:
            return named[0]
        raise KeyError(f"{path}: no such native binary in {self.path.name}"
                       + (f" (ambiguous: {', '.join(b.path for b in named)})" if named else ""))

    def owners(self, pattern: str, *, strong_only: bool = False) -> list[str]:
        """Paths of the libraries that define a symbol matching ``pattern`` (SPEC §3 matching)."""
        from wheelaudit.ruleset.globs import SymbolPattern
        from wheelaudit.checks.index import SymbolIndex

        pat = SymbolPattern(pattern)
        return sorted(b.path for b in self.libraries
                      if any(SymbolIndex(sl.exports).any(pat, strong_only=strong_only) for sl in b.slices))

    def importers(self, pattern: str) -> list[str]:
        """Paths of the libraries that import (reference, undefined) a symbol matching ``pattern``."""
        from wheelaudit.ruleset.globs import SymbolPattern
        from wheelaudit.checks.index import NameIndex

        pat = SymbolPattern(pattern)
        return sorted(b.path for b in self.libraries if NameIndex(n for sl in b.slices for n in sl.imports).any(pat))

    @property
    def binary_tags(self) -> list[str]:
        """The tags the wheel's binaries are held to (WA601, WA602): its own."""
        return self.tags

    @property
    def platform_tags(self) -> list[str]:
        """The platform parts of the wheel's tags (``macosx_14_0_arm64``)."""
        from packaging.tags import parse_tag

        return sorted({t.platform for s in self.tags for t in parse_tag(s)})
