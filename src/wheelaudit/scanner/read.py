"""One member read into facts: its bytes hashed (for RECORD) and, when it is a native binary,
parsed by its format's reader within the time bound. The same in a worker and in-process."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple

from wheelaudit.archive import Member, MemberReader
from wheelaudit.model.binary import Binary, Format
from wheelaudit.model.interest import Interest
from wheelaudit.binary.narrow import narrow
from wheelaudit.binary import read_binary
from wheelaudit.binary.symbols import SymbolTable

#: default bound on reading one binary, seconds (WHEELAUDIT_BINARY_TIMEOUT changes it)


class Read(NamedTuple):
    """What RECORD needs of a member read (plain fields: it crosses the worker's pipe)."""

    format: Format | None
    digest: str
    size: int
    error: str | None


def binary_timeout(value: float | None = None) -> float:
    """The per-binary time bound (:func:`wheelaudit.settings.binary_timeout`)."""
    from wheelaudit.settings import binary_timeout as configured

    return configured(value)


def timed_out(path: str, fmt: Format, size: int, timeout: float) -> Binary:
    return Binary(path=path, format=fmt, size=size,
                  error=f"reading took longer than {timeout:g} s (the bound; WHEELAUDIT_BINARY_TIMEOUT changes it)")


def read_member(reader: MemberReader, m: Member, needles: tuple[bytes, ...], interest: Interest | None,
                timeout: float, progress: Callable[[int], None] | None = None,
                on_native: Callable[[Read], None] | None = None, budget=None) -> tuple[Read, Binary | None]:
    """Read ``m``: its record, and its facts when it is a native binary (else None).
    ``on_native(record)`` is called once a native member is read, before it is parsed.
    ``budget``: the run's (:mod:`wheelaudit.binary.budget`): the time bound is cut to what the
    run has left, and the reader demangles within it."""
    md = reader.read(m, needles, progress)
    read = Read(md.format, md.digest, md.size, md.error)
    if md.format is None:
        return read, None
    if on_native is not None:
        on_native(read)
    if md.error or md.data is None:
        return read, Binary(path=m.path, format=md.format, size=md.size,
                            error=md.error or "could not be read")
    data = md.data
    used: Sequence[bytes] = needles
    if md.search is not None:
        from wheelaudit.binary.strings import PrecomputedStrings

        used = PrecomputedStrings(needles, md.search)
    try:
        with _TimeBound(budget.bound(timeout) if budget is not None else timeout):
            if interest is None or interest.signatures:
                binary = read_binary(data, m.path, used, budget)
            else:  # (a baseline read for its ABI: wheelaudit.scanner.baseline)
                binary = read_binary(data, m.path, used, budget, signatures=False)
        return read, (refine(binary, interest) if binary is not None else None)
    except _ParseTimeout:
        return read, timed_out(m.path, md.format, md.size, timeout)
    finally:
        close = getattr(data, "close", None)
        if close is not None:
            try:
                close()
            except BufferError:  # a reader kept a view; the mapping goes with the last reference
                pass


def refine(binary: Binary, interest: Interest | None) -> Binary:
    """Work on a binary's symbol tables done where it was read: with an ``interest``, the local
    symbols narrowed to those the rules can match (:func:`wheelaudit.binary.narrow.narrow`) and its hints
    located; without one, the tables' tails index built."""
    for s in binary.slices:
        s.exports = _refined(s.exports, interest, keep_all=True)
        s.locals = _refined(s.locals, interest)
    return binary


def _refined(table, interest: Interest | None, keep_all: bool = False):
    if not isinstance(table, SymbolTable):
        return table
    if interest is None:
        table.tails()
        return table
    return narrow(table, interest, keep_all=keep_all)


class _ParseTimeout(BaseException):
    """Raised by the timer inside a reader (a BaseException: readers catch every Exception)."""


class _TimeBound:
    """SIGALRM after ``seconds`` raises :class:`_ParseTimeout` in the reader (the main thread of a
    POSIX process only; elsewhere no bound applies in-process)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.armed = False

    def __enter__(self) -> None:
        if (self.seconds > 0 and hasattr(signal, "setitimer")
                and threading.current_thread() is threading.main_thread()):
            def fire(_sig, _frame):
                raise _ParseTimeout

            self.old = signal.signal(signal.SIGALRM, fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)
