"""Scan a wheel: every native binary into facts, plus the wheel's integrity findings.

``open wheel → scan each binary into facts`` — the second stage of the data flow. The result,
:class:`Wheel`, is what rules are evaluated over and what ``inspect``, ``owners``, ``dups`` and
``diff`` show.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .conditions import WheelTraits, traits_from_tags
from .facts import Binary
from .findings import Finding
from .index import Interest
from .wheelfile import MemberData, RecordChecker, open_wheel

if TYPE_CHECKING:
    from .surface import Surface

#: with the default ``jobs``, wheels inflating to less than this are read in-process (starting
#: worker processes costs more than it saves)
PARALLEL_MIN_BYTES = 32 << 20


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
    #: the interest the local symbols were narrowed to (None: every symbol kept)
    interest: Interest | None = None
    #: wheels audited together (wheelaudit.together): path inside the tree -> the wheel file it
    #: came from; empty for a single wheel
    origins: dict[str, str] = field(default_factory=dict)
    #: folders the wheel's packages add to the Windows DLL search when imported
    #: (:mod:`wheelaudit.dll_directories`); read only for a wheel that ships PE binaries
    dll_directories: list[str] = field(default_factory=list)
    #: the C++ consumer surface (CMake / pkg-config files, wheelaudit.surface); None when the wheel
    #: ships none of those files
    surface: Surface | None = None

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

        from .index import SymbolIndex

        pat = SymbolPattern(pattern)
        out = []
        for b in self.libraries:
            if any(SymbolIndex(sl.exports).any(pat, strong_only=strong_only) for sl in b.slices):
                out.append(b.path)
        return sorted(out)

    def importers(self, pattern: str) -> list[str]:
        """Paths of the libraries that import (reference, undefined) a symbol matching ``pattern``."""
        from .globs import SymbolPattern
        from .index import NameIndex

        pat = SymbolPattern(pattern)
        return sorted(b.path for b in self.libraries if NameIndex(n for sl in b.slices for n in sl.imports).any(pat))

    @property
    def platform_tags(self) -> list[str]:
        """The platform parts of the wheel's tags (``macosx_14_0_arm64``)."""
        from .platforms import platform_strings

        return platform_strings(self.tags)


#: Set to a list by the command line (:func:`wheelaudit.cli.console`, which ends the process
#: with ``os._exit``): the last scan's working structures (the members' directory entries,
#: jobs, records and RECORD's rows: some ten objects a member, 13,691 members on torch's macOS
#: wheel) are left here instead of being freed one by one as :func:`scan` returns, 10 ms with
#: a core idle. It holds one scan's at a time, so a check of many wheels does not grow with
#: them. And what the process has made is moved out of the cyclic collector's way
#: (:func:`gc.freeze`) once the zip directory and RECORD are read, and again at the end: the one
#: collection of a check's young objects (30-60 ms for about 100,000 of them) came on the
#: single-core tail more often than not.
RETAIN: list | None = None


def _settle() -> None:
    """In the command line's process (see :data:`RETAIN`): everything made so far out of the
    cyclic collector's way. Nothing in a library call."""
    if RETAIN is not None:
        import gc

        gc.freeze()

#: what RECORD says of a member that agrees with it (one shared empty tuple: 13,000 members a torch wheel)
_AGREES: tuple[Finding, ...] = ()


def scan(path: str | os.PathLike[str], *, strings: Iterable[bytes] = (), interest: Interest | None = None,
         jobs: int | None = None, timeout: float | None = None, progress: bool | None = None,
         meanwhile: Callable[[], object] | None = None) -> Wheel:
    """Scan a ``.whl`` or an unpacked/installed tree.

    ``strings`` are byte strings to look for in every binary (the `strings` evidence of the
    rules). ``interest`` (:meth:`Ruleset.interest() <wheelaudit.ruleset.Ruleset.interest>`): each
    binary's local symbols are narrowed to those the rules can look at, and the rules' hints are
    located in its symbol tables, in the worker that read it (the result answers those rules only;
    default: every symbol kept). ``jobs`` worker processes read the members (default: one per core, and in-process
    for a small wheel; 1: in-process). ``timeout`` bounds the reading of one binary, in seconds
    (default: $WHEELAUDIT_BINARY_TIMEOUT, else 120); a binary that takes longer is reported as
    WA001. ``progress``: a bar on standard error (default: when it is a terminal). ``meanwhile``
    is called once, in this process, when the scan uses worker processes, before it waits for
    them (the worker of a large member, started early, is reading then): the command line
    imports what comes after the scan there, not with a core idle after it (15-25 ms). Raises
    :class:`wheelaudit.wheelfile.NotAWheel` when ``path`` is not a wheel; every other problem
    (an unreadable binary, a RECORD mismatch) becomes a finding.
    """
    from .pipeline import MemberReader, Pool, binary_timeout, default_jobs, make_jobs, quick_largest, run_inline
    from .progress import Progress
    from .wheelfile import DirWheel

    needles: tuple[bytes, ...] = tuple(dict.fromkeys(s for s in strings if s))
    bound = binary_timeout(timeout)
    pool = None
    p = Path(path)
    if jobs != 1 and p.is_file():
        # the largest member (the critical path) starts inflating while the directory is read
        early, quick_total = quick_largest(p)
        njobs = (default_jobs() if quick_total >= PARALLEL_MIN_BYTES else 1) if jobs is None else max(1, jobs)
        if early is not None and njobs > 1:
            pool = Pool(p, None, needles, njobs, bound, interest=interest)
            pool.start(early)
    try:
        source = open_wheel(path)
    except BaseException:
        if pool is not None:
            pool.close()
        raise
    with source:
        info = source.info
        work = make_jobs(source)
        total = sum(j.size for j in work)
        root = source.root if isinstance(source, DirWheel) else None
        if pool is not None:
            njobs = pool.njobs
        elif jobs is None:
            njobs = default_jobs() if total >= PARALLEL_MIN_BYTES else 1
        else:
            njobs = max(1, jobs)
        bar = Progress(total, f"scanning {p.name}", enabled=None if progress is None else progress)
        try:
            if pool is None and njobs > 1 and len(work) > 1:
                pool = Pool(p, root, needles, njobs, bound, interest=interest)
            checked: dict[int, Sequence[Finding]] = {}  # RECORD's word on each member, as it arrives
            if pool is not None:
                pool.progress = bar.advance
                record = RecordChecker(source)  # (the workers are busy meanwhile)
                members = source.members
                _settle()
                if meanwhile is not None:
                    meanwhile()

                def on_records(arrived) -> None:
                    agrees = record.agrees
                    for idx, rec in arrived:
                        m = members[idx]
                        if rec.error is None and agrees(m.path, m.size, rec.digest, rec.size):
                            checked[idx] = _AGREES
                        else:
                            checked[idx] = record.member_findings(MemberData(m, rec.format, None, rec.digest,
                                                                             rec.size, rec.error))

                with bar:
                    outcome = pool.run(work, on_records)
            else:
                record = RecordChecker(source)
                _settle()
                # (one process, as --jobs 1 says: no fork for a big export trie either)
                reader = MemberReader(p, root, needles, bound, source=source, interest=interest, fork_exports=False)
                try:
                    with bar:
                        outcome = run_inline(reader, work, bar.advance)
                finally:
                    reader.close()
        finally:
            if pool is not None:
                pool.close()
        libraries: list[Binary] = []
        for job, member in zip(work, source.members):
            rec, binary = outcome[job.index]
            done = checked.get(job.index)
            if done is None:
                record.check(MemberData(member, rec.format, None, rec.digest, rec.size, rec.error))
            else:
                record.findings.extend(done)
            if binary is not None:
                libraries.append(binary)
        findings = list(info.problems) + record.finish()
        files = source.files()
        surface = None
        if any(f.endswith((".cmake", ".pc")) for f in files):  # (surface.has_surface, without the import)
            from .surface import read_surface

            oses = traits_from_tags(info.tags, info.version, name=info.name).os
            surface = read_surface(files, source.read_text, platform=next(iter(oses)) if len(oses) == 1 else None)
        dll_dirs: list[str] = []
        if any(b.format == "pe" for b in libraries):
            from .dll_directories import dll_directories

            dll_dirs = dll_directories(files, source.read_text)
    for b in libraries:
        if b.error:
            findings.append(Finding("WA001", f"{b.path}: {b.error}", subject=b.path, paths=[b.path]))
    tags = [str(t) for t in info.tags]
    if RETAIN is not None:
        RETAIN[:] = [(source, work, outcome, checked, record)]
        _settle()
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
        interest=interest,
        surface=surface,
        dll_directories=dll_dirs,
    )
