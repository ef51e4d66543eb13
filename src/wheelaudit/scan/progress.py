"""A progress bar on standard error, for long scans at a terminal only.

Drawn only when the stream is a TTY (never into a CI log, a pipe or a redirected file), not
switched off by ``WHEELAUDIT_PROGRESS=0``, and only once the work has taken more than a second
(a small wheel shows nothing). It redraws one line in place at most ten times a second and
erases it when the work ends, so the report that follows starts on a clean line.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

#: the bar appears only after this many seconds of work
DELAY = 1.0
INTERVAL = 0.1


def wanted(stream: TextIO | None = None) -> bool:
    """Whether a bar may be drawn on ``stream`` (standard error by default)."""
    stream = sys.stderr if stream is None else stream
    from wheelaudit.settings import SettingError, flag

    try:
        if not flag("WHEELAUDIT_PROGRESS", True):
            return False
    except SettingError:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Progress:
    """Bytes done out of ``total``; :meth:`advance` as work finishes, :meth:`close` at the end."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, enabled: bool | None = None,
                 delay: float = DELAY) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = wanted(self.stream) if enabled is None else enabled
        self.total = max(total, 1)
        self.label = label
        self.done = 0
        self.start = time.monotonic()
        self.delay = delay
        self.last = 0.0
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
        width = 30
        full = int(frac * width)
        bar = "#" * full + "." * (width - full)
        label = self.label if len(self.label) <= 40 else "…" + self.label[-39:]
        line = (f"\r{label}  [{bar}] {frac * 100:3.0f}%  {self.done / 1e6:,.0f}/{self.total / 1e6:,.0f} MB"
                f"  {now - self.start:.1f} s\x1b[K")
        try:
            self.stream.write(line)
            self.stream.flush()
            self.drawn = True
        except (OSError, ValueError):
            self.enabled = False

    def close(self) -> None:
        if self.drawn:
            try:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass
            self.drawn = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
