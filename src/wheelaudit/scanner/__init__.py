"""Scanning a wheel: every member read once (hashed against RECORD), every native binary read
into facts, in worker processes (``jobs``) or in this one. ``scan(path) -> Wheel``."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from wheelaudit.archive import MemberData, MemberReader, WheelSource, open_wheel
from wheelaudit.binary.budget import Budget
from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.model.binary import Binary
from wheelaudit.model.defects import Defect
from wheelaudit.model.interest import Interest
from wheelaudit.model.wheel import Wheel
from wheelaudit.scanner.plan import plan
from wheelaudit.scanner.pool import Outcome, Pool, ScanFailed, can_fork, default_jobs
from wheelaudit.settings import flag
from wheelaudit.scanner.read import binary_timeout, read_member

if TYPE_CHECKING:
    from wheelaudit.archive.dll_directories import ImportTimeLoads
    from wheelaudit.archive.load_order import ImportEvents
    from wheelaudit.surface import Surface

__all__ = ["scan", "Wheel", "ScanFailed", "binary_timeout", "default_jobs", "PARALLEL_MIN_BYTES", "FORCE_WORKERS_ENV"]

#: with the default ``jobs``, wheels inflating to less than this are read in-process (starting
#: worker processes costs more than it saves)
PARALLEL_MIN_BYTES = 32 << 20
#: set to 1 to read every wheel with worker processes under the default ``jobs`` (a small wheel
#: too); ``--jobs N`` with N > 1 always does
FORCE_WORKERS_ENV = "WHEELAUDIT_FORCE_WORKERS"


def scan(path: str | os.PathLike[str], *, strings: Iterable[bytes] = (), interest: Interest | None = None,
         jobs: int | None = None, timeout: float | None = None, progress: bool | None = None,
         source: WheelSource | None = None, only: Callable[[str], bool] | None = None,
         budget: Budget | None = None) -> Wheel:
    """Scan a ``.whl`` or an unpacked/installed tree.

    ``strings`` are byte strings to look for in every binary (the `strings` evidence of the
    rules). ``interest`` (:meth:`Ruleset.interest() <wheelaudit.ruleset.model.Ruleset.interest>`): each
    binary's local symbols are narrowed to those the rules can look at (the result answers those
    rules only; default: every symbol kept). ``jobs`` worker processes read the members (default:
    one per core, and in-process for a small wheel; 1: in-process; where ``os.fork`` is missing,
    always in-process). ``timeout`` bounds the reading of one binary, in seconds (default:
    $WHEELAUDIT_BINARY_TIMEOUT, else 120); a binary that takes longer is reported as WA001.
    ``progress``: a bar on standard error (default: when it is a terminal and not a CI run's,
    see :mod:`wheelaudit.scanner.progress`). ``source``: the wheel already opened (an installed
    distribution, :mod:`wheelaudit.archive.installed`), whose ``members`` are what is read and
    ``files()`` what the wheel holds; it is closed here. ``only``: read just the members whose
    path it accepts (RECORD is then not checked: :mod:`wheelaudit.scanner.baseline`). ``budget``: the
    run's (:mod:`wheelaudit.binary.budget`; a fresh one when None), which the readers, the
    demangling of names that could explode and the CMake reader draw on.

    Raises :class:`wheelaudit.archive.NotAWheel` when ``path`` is not a wheel and
    :class:`ScanFailed` when a worker process dies; every other problem (an unreadable binary,
    a RECORD mismatch) is recorded on the wheel (``Wheel.defects``), a finding once evaluated.
    """
    from wheelaudit.scanner.progress import Progress, trace, trace_read

    needles: tuple[bytes, ...] = tuple(dict.fromkeys(s for s in strings if s))
    bound = binary_timeout(timeout)
    budget = budget if budget is not None else Budget()
    p = Path(path)
    with open_wheel(p) if source is None else source as source:
        files = source.files()
        if only is not None:  # (the workers read source.members by index)
            source.members = [m for m in source.members if only(m.path)]
        members = source.members
        total = sum(m.size for m in members)
        if jobs is None:
            force = flag(FORCE_WORKERS_ENV, False)
            njobs = default_jobs() if force or total >= PARALLEL_MIN_BYTES else 1
        else:
            njobs = max(1, jobs)
        trace(f"reading {p}: {len(members)} members")
        bar = Progress(total, f"scanning {p.name}", enabled=progress)
        texts: _Texts | None = None
        prepared: set[int] = set()  # (ids of the binaries whose names are demangled already)
        with bar:
            if njobs > 1 and len(members) > 1 and can_fork():
                with Pool(source, needles, interest, bound, njobs, bar.advance, budget,
                          on_binary=lambda b: _prepare_demangling([b], budget, prepared)) as pool:
                    pool.start(plan(members))
                    # (read while the workers read: WHEEL, METADATA, RECORD, and the text files the
                    # checks need, so that the work after the pool is only what needs its facts)
                    info = source.info
                    record = source.record_checker()
                    texts = _read_texts(source, info, files, pe=_names_pe(members), native=_names_native(members), budget=budget)
                    outcome = pool.run()
            else:
                info = source.info
                record = source.record_checker()
                outcome = _read_inline(source.reader, members, needles, interest, bound, bar.advance, budget)
        libraries: list[Binary] = []
        for i, m in enumerate(members):
            read, binary = outcome[i]
            record.check(MemberData(m, read.format, None, read.digest, read.size, read.error))
            if binary is not None:
                libraries.append(binary)
        defects = list(info.problems) + (record.finish() if only is None else [])
        if texts is None:
            texts = _read_texts(source, info, files, pe=_names_pe(members), native=_names_native(members), budget=budget)
        sizes = {m.path: (m.compressed, m.size) for m in members}
        archive_size = os.stat(p).st_size if source.is_zip else None
        surface = texts.surface
        dll_dirs = texts.loads.folders if texts.loads is not None else []
        preloaded = texts.loads.preloaded if texts.loads is not None else []
        events = texts.events if libraries else {}
    for b in libraries:
        if b.error:
            defects.append(Defect("WA001", f"{b.path}: {b.error}", subject=b.path, paths=[b.path]))
    _prepare_demangling(libraries, budget, prepared)
    wheel = Wheel(
        path=p,
        name=info.name,
        version=info.version,
        tags=list(info.tags),
        traits=traits_from_tags(info.tags, info.version, name=info.name),
        files=files,
        libraries=sorted(libraries, key=lambda b: b.path),
        requires_dist=info.requires_dist,
        defects=defects,
        strings=needles,
        interest=interest,
        surface=surface,
        dll_directories=dll_dirs,
        preloaded_dlls=preloaded,
        import_events=events,
        sizes=sizes,
        archive_size=archive_size,
    )
    trace_read(wheel)  # (--verbose)
    return wheel


@dataclass
class _Texts:
    surface: Surface | None  # the C++ consumer surface (issue #24), when the wheel has such files
    loads: ImportTimeLoads | None  # what the packages do to the DLL search when imported (PE only)
    events: ImportEvents | dict  # what each module imports and loads at import time (load model; native wheels)


def _names_pe(members) -> bool:
    """Whether the wheel has a member named as Windows loads it (``.dll``, ``.pyd``, ``.exe``):
    the loader finds a DLL by such a name only, so without one the folders a package adds to
    the DLL search cannot matter."""
    return any(m.path.lower().endswith((".dll", ".pyd", ".exe")) for m in members)


def _prepare_demangling(libraries: list[Binary], budget: Budget, done: set[int]) -> None:
    """The names of the wheel's symbol tables that could explode when demangled, demangled now
    within the run's budget (:func:`wheelaudit.binary.demangle.prepare`): every later read of
    them, a lazy one included, finds the answer or the name left mangled. Invariant: each binary
    once (``done``: the ids of those already done, as each arrived from a worker while the others
    were still reading), and all of them before the scan returns its wheel."""
    from wheelaudit.binary.demangle import prepare_binary

    for b in libraries:
        if id(b) in done:
            continue
        done.add(id(b))
        prepare_binary(b, budget)


def _names_native(members) -> bool:
    """Whether a member is named as a native library or module (``.so``, ``.so.N``, ``.dylib``,
    ``.pyd``, ``.dll``): only then can the import order matter."""
    return any(m.path.lower().endswith((".so", ".dylib", ".pyd", ".dll")) or ".so." in m.path for m in members)


def _read_texts(source: WheelSource, info, files: list[str], pe: bool, native: bool = True,
                budget: Budget | None = None) -> _Texts:
    """The facts the wheel's text files (of ``files``) give: its consumer surface, for a wheel
    with PE binaries (``pe``) its import-time DLL folders and preloads, and for a wheel with
    native members (``native``) what its modules import and load at import time."""

    def text_of(member: str) -> str | None:
        return source.read_text(member)[0]

    surface = None
    if any(f.endswith((".cmake", ".pc")) for f in files):
        from wheelaudit.surface import read_surface

        oses = traits_from_tags(info.tags, info.version, name=info.name).os
        surface = read_surface(files, text_of, platform=next(iter(oses)) if len(oses) == 1 else None, budget=budget)
    loads = None
    if pe:
        from wheelaudit.archive.dll_directories import import_time_loads

        loads = import_time_loads(files, text_of)
    return _Texts(surface, loads, _import_events(source, files) if native else {})


def _import_events(source: WheelSource, files: list[str]) -> ImportEvents:
    """What the wheel's Python modules import and load at import time
    (:class:`wheelaudit.archive.load_order.ImportEvents`), for a wheel with native members, the
    only thing the load model orders: read when a verdict first asks (most wheels: never), which
    may be after this scan closed the wheel, so each module's text is read from the file again
    (a member changed since fails its CRC check and reads as no text: fewer events, never a
    finding lost). ``--verbose`` says when they are read, and how many modules."""
    from wheelaudit.archive.load_order import MAX_BYTES, ImportEvents
    from wheelaudit.archive.members import MemberError, MemberReader
    from wheelaudit.scanner.progress import trace

    by_path, path, root = source.by_path, source.path, source.root

    def text(member: str) -> str | None:
        m = by_path.get(member)
        if m is None:
            return None
        try:
            with MemberReader(path, root) as reader:
                return reader.read_whole(m, MAX_BYTES + 1).decode("utf-8", "replace")
        except (MemberError, OSError):
            return None

    def told(n: int) -> None:
        trace(f"  {path.name}: import-time events read from {n} Python module{'' if n == 1 else 's'} "
              "(a verdict depends on the import order)")

    return ImportEvents.of_wheel(files, text, told)


def _read_inline(reader: MemberReader, members, needles, interest, timeout, progress, budget=None) -> Outcome:
    out: Outcome = {}
    for batch in plan(members):
        for i in batch:
            out[i] = read_member(reader, members[i], needles, interest, timeout, progress, budget=budget)
    return out
