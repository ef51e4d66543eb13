"""Work counters and a hang safety net for the tests that guard against runaway work.

A test states the work an input may cost, never the seconds it takes: :class:`CountingText` counts
what a matcher reads of a text (characters, searches), so "linear" is "reads each character once",
whatever the machine's speed; :func:`lines_executed` counts the Python lines a call runs (its
growth between two sizes of an input tells linear from quadratic); :func:`read_by` counts what a
run reads. :func:`no_hang` only turns a hang into a failure: its bound is
minutes, far past any run that works, and asserts nothing about speed.
"""
from __future__ import annotations

import faulthandler
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, SupportsIndex, TypeVar

if TYPE_CHECKING:
    from _typeshed import TraceFunction

T = TypeVar("T")


class WorkExceeded(AssertionError):
    """More work was done on a :class:`CountingText` than its ``limit`` allows."""


class CountingText(str):
    """A ``str`` that counts the work done on it through Python: ``reads`` (characters taken by
    iteration or indexing, a slice counting its length) and ``searches`` (calls of ``find``,
    ``index``, ``startswith``, ``endswith``, ``count``, each a scan of up to the whole text).

    ``limit``: reads past it raise :class:`WorkExceeded` at once, so that a runaway matcher fails
    the test where it goes wrong instead of running for hours."""

    reads: int
    searches: int
    limit: int | None

    def __new__(cls, text: str, limit: int | None = None) -> CountingText:
        self = super().__new__(cls, text)
        self.reads = self.searches = 0
        self.limit = limit
        return self

    def _read(self, n: int) -> None:
        self.reads += n
        if self.limit is not None and self.reads > self.limit:
            raise WorkExceeded(f"more than {self.limit} characters read from a text of {len(self)}")

    def __iter__(self) -> Iterator[str]:
        for c in super().__iter__():
            self._read(1)
            yield c

    def __getitem__(self, key: SupportsIndex | slice) -> str:
        part = super().__getitem__(key)
        self._read(len(part))
        return part

    def find(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None, /) -> int:
        self.searches += 1
        return super().find(sub, start, end)

    def index(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None, /) -> int:
        self.searches += 1
        return super().index(sub, start, end)

    def startswith(self, prefix: str | tuple[str, ...], start: SupportsIndex | None = None,
                   end: SupportsIndex | None = None, /) -> bool:
        self.searches += 1
        return super().startswith(prefix, start, end)

    def endswith(self, suffix: str | tuple[str, ...], start: SupportsIndex | None = None,
                 end: SupportsIndex | None = None, /) -> bool:
        self.searches += 1
        return super().endswith(suffix, start, end)

    def count(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None, /) -> int:
        self.searches += 1
        return super().count(sub, start, end)


#: seconds after which a run that should end is taken for a hang (a safety net, not a speed bound)
HANG = 300.0


@contextmanager
def no_hang(seconds: float = HANG) -> Iterator[None]:
    """Run the block under a watchdog: past ``seconds`` the tracebacks of every thread are written
    to stderr and the test process exits (status 1), a failure where a hang would stall the run."""
    faulthandler.dump_traceback_later(seconds, exit=True, file=sys.__stderr__ or sys.stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def lines_executed(fn: Callable[[], T]) -> tuple[T, int]:
    """``fn()`` and the number of Python lines it executed (in this thread): a count of work that
    does not depend on the machine. Two sizes of one input show how the work grows with it."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> TraceFunction:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        result = fn()
    finally:
        sys.settrace(previous)
    return result, count


def bytes_read() -> int:
    """Bytes this process has read through read(2) and friends so far (Linux ``/proc/self/io``
    ``rchar``): the difference around a run is what it read, files and pipes alike, modules it
    imports included (see :func:`read_by`)."""
    with open("/proc/self/io", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise RuntimeError("/proc/self/io has no rchar line")


def read_by(fn: Callable[[], T]) -> tuple[T, int]:
    """``fn()`` run twice, and the bytes the second run read (:func:`bytes_read`): the first one
    also reads the modules it imports lazily, which the second finds loaded."""
    fn()
    before = bytes_read()
    result = fn()
    return result, bytes_read() - before
