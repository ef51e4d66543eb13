"""What a person sees on standard error while wheels are read: a progress bar at a terminal and,
with ``--verbose``, a line for each wheel and each native binary read.

The bar is drawn only when every one of these holds (the judgement cargo makes; pip and uv too
draw only on a terminal):

* standard error is a terminal: never into a CI log, a pipe or a redirected file;
* ``WHEELAUDIT_PROGRESS`` is not 0, and unless it is 1, ``CI`` is unset (a CI runner that gives
  its job a pseudo-terminal still gets a plain log) and ``TERM`` is not ``dumb``;
* the run is not quiet (``-q``: :func:`showing` with ``bar=False``);
* the run has gone on for ``WHEELAUDIT_PROGRESS_DELAY`` seconds (default 1): a small wheel shows
  nothing.

The ``--format`` does not matter: the report goes to standard output or ``--output``, the bar to
standard error, and the bar is erased (``\\r`` and erase-to-end-of-line) when its wheel has been
read, before a byte of the report is written, and on the way out of a run stopped by a signal.
There is one bar per wheel, labelled with its name; the delay counts from the start of the run,
so a folder of many small wheels shows its bars too.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from wheelaudit.model.messages import human_size, shorten_middle

if TYPE_CHECKING:
    from wheelaudit.model.wheel import Wheel

INTERVAL = 0.1


@dataclass
class Display:
    """How a run shows its reading: set once for a command by :func:`showing`."""

    #: False: never a bar (``-q``); None: as the stream and the environment say
    bar: bool | None = None
    #: ``--verbose``: where the lines saying what was read go (None: nowhere)
    trace: Callable[[str], None] | None = None
    #: when the run started (the bar's delay counts from it); None: from each bar's own start
    since: float | None = None
    #: the bar on the screen now: erased before a trace line is written, and at the end
    shown: Progress | None = None


_DISPLAY: ContextVar[Display] = ContextVar("wheelaudit_display")


def _display() -> Display:
    """The display of the current command, else a fresh one (never a shared default: a bar
    records itself on its display)."""
    return _DISPLAY.get(None) or Display()


@contextlib.contextmanager
def showing(*, bar: bool | None = None, trace: Callable[[str], None] | None = None) -> Iterator[Display]:
    """Within the block, scans show their reading so: ``bar=False`` never draws one, ``trace``
    receives the lines of ``--verbose``. The bar's delay counts from the block's start."""
    display = Display(bar=bar, trace=trace, since=time.monotonic())
    token = _DISPLAY.set(display)
    try:
        yield display
    finally:
        if display.shown is not None:  # (a signal's exception that came while a bar was closing)
            display.shown.erase()
        _DISPLAY.reset(token)


def trace(line: str) -> None:
    """One line of ``--verbose`` (nothing without it), on a line of its own: a bar on the
    screen is erased first (and drawn again as the work goes on)."""
    display = _display()
    if display.trace is None:
        return
    if display.shown is not None:
        display.shown.erase()
    display.trace(line)


def tracing() -> bool:
    """Whether :func:`trace` lines go anywhere (to spare composing them)."""
    return _display().trace is not None


def trace_read(wheel: Wheel) -> None:
    """``--verbose``: the wheel read, and each native binary in it with its format, kind,
    architectures and size (or why it could not be read)."""
    if not tracing():
        return
    n = len(wheel.libraries)
    inflated = sum(size for _compressed, size in (wheel.sizes or {}).values())
    trace(f"  {wheel.name} {wheel.version}, {human_size(inflated, binary=True, trim=False)} inflated: "
          f"{n} native binar{'y' if n == 1 else 'ies'}")
    for b in wheel.libraries:
        what = f"{_FORMATS.get(b.format, b.format)} {_KINDS.get(b.kind, b.kind)}"
        if b.error:
            trace(f"    {b.path}: {what}, unreadable ({b.error})")
        else:
            trace(f"    {b.path}: {what} ({', '.join(b.archs)}), {human_size(b.size, binary=True, trim=False)}")


_FORMATS = {"elf": "ELF", "macho": "Mach-O", "pe": "PE"}
_KINDS = {"shared": "shared library", "bundle": "bundle", "executable": "executable", "object": "object file",
          "dsym": "debug companion (dSYM)"}


def _environment_allows() -> bool:
    from wheelaudit.settings import SettingError, progress

    try:
        setting = progress()
    except SettingError:
        return False
    if setting is not None:
        return setting
    return not os.environ.get("CI") and os.environ.get("TERM") != "dumb"


def wanted(stream: TextIO | None = None) -> bool:
    """Whether a bar may be drawn on ``stream`` (standard error by default): see the module."""
    stream = sys.stderr if stream is None else stream
    if _display().bar is False or not _environment_allows():
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _delay() -> float:
    from wheelaudit.settings import SettingError, progress_delay

    try:
        return progress_delay()
    except SettingError:  # (reported as a usage error before any scan starts)
        from wheelaudit.settings import DEFAULT_PROGRESS_DELAY

        return DEFAULT_PROGRESS_DELAY


def _cut(text: str, room: int) -> str:
    """``text`` in at most ``room`` characters, its middle replaced by "…" where it is longer."""
    return text[:max(room, 0)] if room < 3 else shorten_middle(text, room)


class Progress:
    """Bytes done out of ``total``; :meth:`advance` as work finishes, :meth:`close` at the end."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, enabled: bool | None = None,
                 delay: float | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.display = _display()
        self.enabled = wanted(self.stream) if enabled is None else enabled
        self.total = max(total, 1)
        self.label = label
        self.done = 0
        self.start = time.monotonic() if self.display.since is None else self.display.since
        self.delay = _delay() if delay is None and self.enabled else (delay or 0.0)
        self.last = float("-inf")  # (when last drawn: the first draw waits only for the delay)
        self.drawn = False

    def advance(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay or now - self.last < INTERVAL:
            return
        self.last = now
        self.draw(now)

    def draw(self, now: float) -> None:
        frac = min(1.0, self.done / self.total)
        digits = 1 if self.total < 100e6 else 0
        tail = (f" {frac * 100:3.0f}%  {self.done / 1e6:,.{digits}f}/{self.total / 1e6:,.{digits}f} MB"
                f"  {now - self.start:.1f} s")
        # one line narrower than the terminal (a line that wraps cannot be taken back by \r): the
        # bar between 10 and 30 wide, the label cut in its middle (a wheel's name and its tags)
        room = self.columns() - 1
        width = max(10, min(30, room - len(self.label) - len(tail) - 4))
        full = int(frac * width)
        bar = f"  [{'#' * full}{'.' * (width - full)}]"
        if room - len(bar) - len(tail) < 20:  # (a narrow terminal: the percentage alone)
            bar, tail = "", f"  {frac * 100:3.0f}%"
        line = f"\r{_cut(self.label, room - len(bar) - len(tail))}{bar}{tail}\x1b[K"
        # (drawn before the write: a signal's exception raised within it leaves part of the line
        # on the screen, which :meth:`close` must still erase)
        self.drawn = True
        if self.display.since is not None:  # (a display of :func:`showing`, never the default one)
            self.display.shown = self
        try:
            self.stream.write(line)
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False

    def columns(self) -> int:
        """The width of the terminal the bar is drawn on (else $COLUMNS, else 80)."""
        try:
            cols = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            cols = 0
        if cols <= 0:
            try:
                cols = int(os.environ.get("COLUMNS", ""))
            except ValueError:
                cols = 0
        return cols if cols > 0 else 80

    def erase(self) -> None:
        """Take the bar off the screen (the cursor back at the start of its line, now empty)."""
        if self.drawn:
            try:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass
            # (only once it is written: a signal's exception raised within the write leaves the
            # bar marked, and :func:`showing` erases it on the way out)
            self.drawn = False
            if self.display.shown is self:
                self.display.shown = None

    def close(self) -> None:
        self.erase()
        self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
