"""The one way wheelaudit starts a child process: a fork that can never outlive its parent.

Both forks (the scan pool's workers, ``scanner/pool.py``; the guarded demangler's worker,
``binary/demangle_guard.py``, which may itself run inside a pool worker) go through
:func:`spawn`. Invariants, whatever the parent's way out (a normal end, a signal, SIGKILL, a
worker's ``os._exit``):

* A child ends with its parent. A child that leaves (its work done, or failed) first kills and
  reaps its own children. Each child gets a life pipe whose only write end the parent
  holds; a thread of the child waits on the read end and ends the child when it reads
  end-of-file (the parent is gone, however it went). No exit handler, no signal and no process
  table scan is needed, so this also holds through a chain (a child's child ends with the child).
* A child holds no descriptor of another child's plumbing: every descriptor a process holds for
  its children (the life pipes' write ends, the parent's ends of their pipes) is registered with
  :func:`hold` and closed first thing in every new child, so a pipe's reader sees end-of-file when
  its one writer goes, and two children never keep each other alive.
* A child never keeps the command's standard streams: 0, 1 and 2 are pointed at ``/dev/null``
  (read-only: a stray write fails instead of reaching the terminal), so a pipeline reading the
  command's output (``wheelaudit check ... | wc -l``) ends when the command ends. A child
  reports through its own pipe.
* The stop signals (SIGINT, SIGTERM, SIGHUP) are ignored in a child (the parent decides, and
  ends its children) and wait while the child is forked and registered.
* A failed ``fork()`` (a process limit, no memory) is :class:`ForkFailed`: a run error (exit 2
  with a message), never a traceback.

The child runs only wheelaudit's own code: nothing is executed, imported or loaded.
"""

from __future__ import annotations

import os
import signal
import struct
import threading
from collections.abc import Callable, Iterable

#: the signals that stop a run (the command line handles them in the parent)
STOP_SIGNALS = {getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)} \
    if hasattr(signal, "pthread_sigmask") else set()

#: descriptors this process holds for its children (closed in every new child)
_held: set[int] = set()
#: this process's children not yet reaped (a child ends its own before it leaves)
_live: list[Child] = []


class ForkFailed(Exception):
    """``fork()`` failed (a process limit, no memory): the run cannot go on (exit 2)."""


def can_fork() -> bool:
    return hasattr(os, "fork")


def hold(*fds: int) -> None:
    """Register descriptors that belong to this process's side of its children's plumbing."""
    _held.update(fd for fd in fds if fd >= 0)


def close(fd: int) -> None:
    """Close a descriptor (registered or not); an already closed one is no error."""
    _held.discard(fd)
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass


class Child:
    """A forked child as its parent sees it."""

    def __init__(self, pid: int, life_w: int) -> None:
        self.pid, self.life_w = pid, life_w
        self.status: int | None = None  # os.waitpid's, once reaped

    def kill(self) -> None:
        """Kill and reap the child (if it still runs); close its life pipe."""
        if self in _live:
            _live.remove(self)
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.reap()
        close(self.life_w)
        self.life_w = -1

    def reap(self) -> None:
        """Wait for the child's end (it must be ending: killed, or its work pipe closed)."""
        if self in _live:
            _live.remove(self)
        if self.status is None:
            try:
                self.status = os.waitpid(self.pid, 0)[1]
            except ChildProcessError:
                self.status = 0
            close(self.life_w)
            self.life_w = -1

    def alive(self) -> bool:
        if self.status is not None:
            return False
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, 0
        if pid:
            self.status = status
            if self in _live:
                _live.remove(self)
            close(self.life_w)
            self.life_w = -1
        return self.status is None

    def how(self) -> str:
        status = self.status or 0
        return (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                else f"exit status {os.WEXITSTATUS(status)}")


def spawn(target: Callable[[], None], keep: Iterable[int] = ()) -> Child:
    """Fork a child that runs ``target()`` and ends (``os._exit``: 0 on return, 1 on an exception).

    ``keep``: the descriptors the child uses (the ends of its own pipes; the parent closes its
    copies). Every descriptor registered with :func:`hold` is closed in the child.
    """
    keep = set(keep)
    life_r, life_w = os.pipe()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if STOP_SIGNALS else None
    try:
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(life_r)
            os.close(life_w)
            raise ForkFailed(f"cannot start a worker process: fork() failed: {exc.strerror or exc} "
                             "(a limit on processes or on memory)") from None
        if pid == 0:  # pragma: no cover - the child (its work is checked through the parent)
            code = 1
            try:
                for sig in STOP_SIGNALS:
                    signal.signal(sig, signal.SIG_IGN)
                if blocked is not None:
                    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                for fd in _held - keep:
                    close(fd)
                os.close(life_w)
                _live.clear()  # (the parent's children are not this one's)
                _held.clear()  # (this child's own children are to close what it keeps)
                hold(life_r, *keep)
                _quiet()
                threading.Thread(target=_watch, args=(life_r,), daemon=True, name="wheelaudit-life").start()
                target()
                code = 0
            except BaseException:  # noqa: BLE001 - the parent sees the exit status
                pass
            finally:
                for c in list(_live):  # (its own children end and are reaped first: no orphan)
                    try:
                        c.kill()
                    except BaseException:  # noqa: BLE001 - leaving anyway; they end by their life pipe
                        pass
                os._exit(code)  # (a forked child never runs the parent's exit handlers)
        os.close(life_r)
        hold(life_w)
        child = Child(pid, life_w)
        _live.append(child)
        return child
    finally:
        if blocked is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _quiet() -> None:  # pragma: no cover - runs in the child
    null = os.open(os.devnull, os.O_RDONLY)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if null > 2:
        os.close(null)


def _watch(life_r: int) -> None:  # pragma: no cover - runs in the child
    """The parent's end of the life pipe closed: the parent is gone, so is this child."""
    try:
        while os.read(life_r, 1):
            pass
    finally:
        os._exit(1)


# ---- messages: a 4-byte length, then the bytes ---------------------------------------------


def send_bytes(fd: int, payload: bytes) -> None:
    view = memoryview(struct.pack("<I", len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, n: int) -> bytes:
    parts, left = [], n
    while left:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def recv_bytes(fd: int) -> bytes | None:
    """The next message, or None at end-of-file (the writer closed). EOFError mid-message."""
    head = os.read(fd, 4)
    if not head:
        return None
    if len(head) < 4:
        head += _read_exactly(fd, 4 - len(head))
    (n,) = struct.unpack("<I", head)
    return _read_exactly(fd, n)
