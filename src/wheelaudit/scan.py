"""Scan a wheel: every native binary into facts, plus the wheel's integrity findings.

``open wheel → scan each binary into facts`` — the second stage of the data flow. The result,
:class:`Wheel`, is what rules are evaluated over and what ``inspect``, ``owners``, ``dups`` and
``diff`` show.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .conditions import WheelTraits, traits_from_tags
from .facts import Binary, Symbol
from .findings import Finding
from .readers import read_binary
from .wheelfile import MemberData, RecordChecker, open_wheel


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
    findings: list[Finding] = field(default_factory=list)  # WA001 / WA002 found while scanning
    strings: tuple[bytes, ...] = ()  # the byte strings searched for
    #: wheels audited together (wheelaudit.together): path inside the tree -> the wheel file it
    #: came from; empty for a single wheel
    origins: dict[str, str] = field(default_factory=dict)

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
        from .globs import SymbolPattern

        pat = SymbolPattern(pattern)
        out = []
        for b in self.libraries:
            if any(_defines(s, pat, strong_only) for sl in b.slices for s in sl.exports):
                out.append(b.path)
        return sorted(out)

    def importers(self, pattern: str) -> list[str]:
        """Paths of the libraries that import (reference, undefined) a symbol matching ``pattern``."""
        from .globs import SymbolPattern
        from .symbols import demangle

        pat = SymbolPattern(pattern)
        return sorted(b.path for b in self.libraries
                      if any(pat.matches(demangle(n)) or pat.matches(n) for sl in b.slices for n in sl.imports))

    @property
    def platform_tags(self) -> list[str]:
        """The platform parts of the wheel's tags (``macosx_14_0_arm64``)."""
        return sorted({t.split("-")[-1] for t in self.tags})


def _defines(sym: Symbol, pat, strong_only: bool) -> bool:
    if strong_only and sym.weak:
        return False
    return pat.matches(sym.demangled) or (sym.demangled != sym.name and pat.matches(sym.name))


def scan(path: str | os.PathLike[str], *, strings: Iterable[bytes] = (), jobs: int | None = None) -> Wheel:
    """Scan a ``.whl`` or an unpacked/installed tree.

    ``strings`` are byte strings to look for in every binary (the `strings` evidence of the
    rules). Raises :class:`wheelaudit.wheelfile.NotAWheel` when ``path`` is not a wheel; every
    other problem (an unreadable binary, a RECORD mismatch) becomes a finding.
    """
    needles: tuple[bytes, ...] = tuple(dict.fromkeys(s for s in strings if s))
    source = open_wheel(path)
    with source:
        info = source.info
        record = RecordChecker(source)
        libraries: list[Binary] = []
        for md in source.stream_all(keep_native=True):
            record.check(md)
            binary = _facts(md, needles)
            if binary is not None:
                libraries.append(binary)
        findings = list(info.problems) + record.finish()
        files = source.files()
    for b in libraries:
        if b.error:
            findings.append(Finding("WA001", f"{b.path}: {b.error}", subject=b.path, paths=[b.path]))
    tags = [str(t) for t in info.tags]
    return Wheel(
        path=Path(path),
        name=info.name,
        version=info.version,
        tags=tags,
        traits=traits_from_tags(info.tags, info.version, name=info.name),
        files=files,
        libraries=sorted(libraries, key=lambda b: b.path),
        requires_dist=info.requires_dist,
        findings=findings,
        strings=needles,
    )


def _facts(md: MemberData, needles: Sequence[bytes]) -> Binary | None:
    if md.format is None:
        return None
    if md.error or md.data is None:
        return Binary(path=md.member.path, format=md.format, size=md.size,  # type: ignore[arg-type]
                      error=md.error or "could not be read")
    try:
        return read_binary(md.data, md.member.path, needles)
    finally:
        close = getattr(md.data, "close", None)
        if close is not None:
            try:
                close()
            except BufferError:  # a reader kept a view; the mapping goes with the last reference
                pass
