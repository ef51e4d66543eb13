"""The scanned wheel: what rules are evaluated over and what ``inspect``, ``owners``, ``dups`` and
``diff`` show."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from wheelaudit.model.binary import Binary
from wheelaudit.model.defects import Defect
from wheelaudit.model.interest import Interest
from wheelaudit.model.traits import WheelTraits

if TYPE_CHECKING:
    from packaging.requirements import Requirement
    from packaging.tags import Tag

    from wheelaudit.model.surface import Surface


#: ``Wheel.owners`` and ``Wheel.importers``, answered by the checks' symbol index
#: (:mod:`wheelaudit.checks.index`), which hands them in when it is imported (the API, the checks
#: and the commands that look symbols up import it); the model itself matches no symbol
_owners: Callable[..., list[str]] | None = None
_importers: Callable[..., list[str]] | None = None


def use_symbol_lookups(owners: Callable[..., list[str]], importers: Callable[..., list[str]]) -> None:
    """Install the functions ``Wheel.owners`` and ``Wheel.importers`` answer with."""
    global _owners, _importers
    _owners, _importers = owners, importers


@dataclass(frozen=True)
class Requirements:
    """A wheel's ``Requires-Dist``, parsed once (:class:`packaging.requirements.Requirement`):
    each line that parses, with its text as written, in order, and the lines that do not."""

    parsed: tuple[tuple[str, Requirement], ...] = ()
    invalid: tuple[str, ...] = ()

    @classmethod
    def of(cls, lines: list[str]) -> Requirements:
        from packaging.requirements import InvalidRequirement, Requirement

        parsed: list[tuple[str, Requirement]] = []
        invalid: list[str] = []
        for text in lines:
            try:
                parsed.append((text, Requirement(text)))
            except InvalidRequirement:
                invalid.append(text)
        return cls(tuple(parsed), tuple(invalid))


@dataclass
class Wheel:
    """A scanned wheel: its identity, its files and the facts of every native binary."""

    path: Path
    name: str
    version: str
    #: the wheel's tags (``packaging.tags.Tag``, compressed sets expanded), read once from its file
    #: name or WHEEL; a hand-built Wheel may give strings, read here with ``packaging.tags.parse_tag``
    tags: list[Tag]
    traits: WheelTraits
    files: list[str]
    libraries: list[Binary]
    requires_dist: list[str] = field(default_factory=list)
    #: damage found while reading (WA001 / WA002), made findings by :mod:`wheelaudit.checks.integrity`
    defects: list[Defect] = field(default_factory=list)
    strings: tuple[bytes, ...] = ()  # the byte strings searched for
    #: the interest the local symbols were narrowed to (None: every symbol kept)
    interest: Interest | None = None
    #: wheels audited together (wheelaudit.scanner.together): path inside the tree -> the wheel file it
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
    #: source facts (:mod:`wheelaudit.load`); read only for a wheel that ships native binaries, and
    #: then only when a verdict first asks (:class:`wheelaudit.archive.load_order.ImportEvents`)
    import_events: Mapping[str, list] = field(default_factory=dict)
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

    def __post_init__(self) -> None:
        if any(isinstance(t, str) for t in self.tags):
            from packaging.tags import parse_tag

            self.tags = [one for t in self.tags for one in (sorted(parse_tag(t), key=str) if isinstance(t, str) else [t])]

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
        if _owners is None:
            raise RuntimeError("Wheel.owners needs wheelaudit.checks.index (import wheelaudit.api)")
        return _owners(self, pattern, strong_only=strong_only)

    def importers(self, pattern: str) -> list[str]:
        """Paths of the libraries that import (reference, undefined) a symbol matching ``pattern``."""
        if _importers is None:
            raise RuntimeError("Wheel.importers needs wheelaudit.checks.index (import wheelaudit.api)")
        return _importers(self, pattern)

    @property
    def requirements(self) -> Requirements:
        """``requires_dist`` parsed, once for as long as it holds the same lines."""
        key = tuple(self.requires_dist)
        known = self.__dict__.get("_requirements")
        if known is None or known[0] != key:
            known = self.__dict__["_requirements"] = (key, Requirements.of(self.requires_dist))
        return known[1]

    @property
    def binary_tags(self) -> list[Tag]:
        """The tags the wheel's binaries are held to (WA601, WA602): its own."""
        return self.tags

    @property
    def platform_tags(self) -> list[str]:
        """The platform parts of the wheel's tags (``macosx_14_0_arm64``)."""
        return sorted({t.platform for t in self.tags})
