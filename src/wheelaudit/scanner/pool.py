"""A plain pool of forked worker processes reading the members of one wheel.

Each worker is forked once the wheel's directory is read (it has the member list), opens the
wheel itself, and is given batches of member indices through a pipe of its own; it sends back
each member's record and facts through another. Process hygiene: workers are
started by :func:`wheelaudit.children.spawn` (they end with the parent whatever its way out, hold
no other child's pipe ends and never the command's standard streams; see there), and:

* Workers ignore SIGINT, SIGTERM and SIGHUP: the parent decides. Leaving the pool (normally, on
  an error or on a signal's exception) kills and reaps every worker.
* A worker that fails sends its error through its result pipe before it ends; the parent names
  it with the member.
* Each worker writes the member it is reading, and since when, to its slot of a shared page: a
  worker that dies (killed, out of memory, a crash) is named with that member, and the scan ends
  with :class:`ScanFailed` (never a result made up for the part not read); a worker that overruns
  the time bound by KILL_GRACE is killed and its member reported as too slow (WA001).
* Temporary files are anonymous (unlinked at creation): nothing is left behind by a killed worker.
"""

from __future__ import annotations

import mmap
import os
import pickle
import select
import struct
import time
from collections import deque
from collections.abc import Callable, Sequence

from wheelaudit import children
from wheelaudit.archive import MemberReader, WheelSource
from wheelaudit.children import ForkFailed, can_fork  # noqa: F401 - re-exported
from wheelaudit.model.binary import Binary
from wheelaudit.model.interest import Interest
from wheelaudit.scanner.read import Read, read_member, timed_out

#: a worker still on one member this long after the bound is killed (stuck where the timer cannot reach)
KILL_GRACE = 5.0
#: a worker's slot: (sequence, member index or -1, since: time.monotonic()). The worker makes the
#: sequence odd, writes the other two fields, then makes it even; the parent trusts a slot only
#: when two reads agree on an even sequence (a read while the worker writes is no measurement)
_SLOT = struct.Struct("<qqd")
Outcome = dict[int, tuple[Read, "Binary | None"]]


class ScanFailed(Exception):
    """The scan could not read the whole wheel (a worker died): a run error, exit 2."""


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class _Worker:
    def __init__(self, child: children.Child, slot: int, task_w: int, res_r: int) -> None:
        self.child, self.slot, self.task_w, self.res_r = child, slot, task_w, res_r
        self.batch: list[int] = []
        self.error = ""  # what the worker said before it ended, if it failed

    def close_fds(self) -> None:
        children.close(self.task_w)
        children.close(self.res_r)
        self.task_w = self.res_r = -1

    def kill(self) -> None:
        self.child.kill()
        self.close_fds()


class Pool:
    """``njobs`` workers reading the members of ``source``."""

    def __init__(self, source: WheelSource, needles: tuple[bytes, ...], interest: Interest | None,
                 timeout: float, njobs: int, progress: Callable[[int], None] | None = None, budget=None,
                 on_binary: Callable[[Binary], None] | None = None) -> None:
        self.source, self.needles, self.interest, self.timeout = source, needles, interest, timeout
        self.budget = budget  # the run's: each worker spends a copy (the deadline is shared)
        self.njobs, self.progress = njobs, progress
        #: told of each binary as it arrives, while the workers read the others (the parent would
        #: otherwise wait): the parent's own work on one binary's facts
        self.on_binary = on_binary
        self.workers: list[_Worker] = []
        self.pending: deque[list[int]] = deque()
        self.out: Outcome = {}
        self.slots = mmap.mmap(-1, _SLOT.size * njobs)

    # ---- the parent's side -------------------------------------------------------------------
    def start(self, batches: Sequence[list[int]]) -> None:
        """Fork the workers and give each its first batch (the largest members come first)."""
        self.pending.extend(batches)
        for slot in range(min(self.njobs, len(self.pending))):
            self._spawn(slot)

    def run(self) -> Outcome:
        """Every member's (record, facts), once all are read. Raises :class:`ScanFailed`."""
        while self.workers:
            by_fd = {w.res_r: w for w in self.workers}
            ready, _, _ = select.select(list(by_fd), [], [], 0.25)
            for fd in ready:
                w = by_fd[fd]
                try:
                    msg = _recv(fd)
                except EOFError:
                    msg = None
                if msg is None:
                    self._died(w)
                self._take(w, msg)
            self._enforce_bound()
        return self.out

    def close(self) -> None:
        """Kill and reap every worker; close every descriptor. Safe to call more than once."""
        for w in self.workers:
            w.kill()
        self.workers = []
        if not self.slots.closed:
            self.slots.close()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take(self, w: _Worker, msg: tuple) -> None:
        kind = msg[0]
        if kind == "err":  # the worker failed; its end follows
            w.error = msg[1]
        elif kind == "rec":  # a native member read; its parsing starts
            idx, read = msg[1], Read(*msg[2])
            self.out[idx] = (read, Binary(path=self.source.members[idx].path, format=read.format or "elf",
                                          size=read.size, error="not parsed"))
        elif kind == "bin":
            idx, binary = msg[1], msg[2]
            self.out[idx] = (self.out[idx][0], binary)
            if self.progress is not None:
                self.progress(self.out[idx][0].size)
            if self.on_binary is not None:
                self.on_binary(binary)
        elif kind == "done":  # the batch's other members' records
            size = 0
            for idx, fields in msg[1]:
                read = Read(*fields)
                self.out[idx] = (read, None)
                size += read.size
            if self.progress is not None and size:
                self.progress(size)
            if self.pending:
                self._give(w, self.pending.popleft())
            else:
                self._retire(w)

    def _give(self, w: _Worker, batch: list[int]) -> None:
        w.batch = batch
        try:
            _send(w.task_w, batch)
        except OSError:  # (its pipe's reader is gone: the worker died)
            self._died(w)

    def _retire(self, w: _Worker) -> None:
        children.close(w.task_w)  # (end-of-file: the worker ends)
        w.task_w = -1
        w.child.reap()
        w.close_fds()
        self.workers.remove(w)

    def _current(self, w: _Worker) -> tuple[int, float]:
        """The member ``w`` is reading and since when; ``(-1, 0.0)`` while it is between members
        or writing its slot."""
        at = w.slot * _SLOT.size
        first = _SLOT.unpack_from(self.slots, at)
        if first[0] % 2 or _SLOT.unpack_from(self.slots, at) != first:
            return -1, 0.0
        return first[1], first[2]

    def _died(self, w: _Worker) -> None:
        idx, _since = self._current(w)  # (a dead worker writes no more: its slot is settled)
        if idx < 0:  # (killed before it began: its batch's first member not read)
            idx = next((i for i in w.batch if i not in self.out), -1)
        w.kill()
        self.workers.remove(w)
        how = w.child.how() + (f": {w.error}" if w.error else "")
        where = self.source.members[idx].path if idx >= 0 else "a member"
        raise ScanFailed(f"{self.source.path}: the worker process reading {where} ended abruptly ({how}); "
                         "the wheel was not fully read, so it is not judged")

    def _enforce_bound(self) -> None:
        now = time.monotonic()
        for w in list(self.workers):
            idx, since = self._current(w)
            if idx < 0 or now - since <= self.timeout + KILL_GRACE:
                continue
            m = self.source.members[idx]
            read = self.out.get(idx, (Read(None, "", 0, None), None))[0]
            if read.format is None:
                read = Read(None, "", 0, f"cannot read: reading took longer than {self.timeout:g} s")
                self.out[idx] = (read, None)
            else:
                self.out[idx] = (read, timed_out(m.path, read.format, read.size, self.timeout))
            w.kill()
            self.workers.remove(w)
            rest = [i for i in w.batch if i not in self.out]
            if rest:
                self.pending.appendleft(rest)
            if self.pending:
                self._spawn(w.slot)

    def _spawn(self, slot: int) -> None:
        _SLOT.pack_into(self.slots, slot * _SLOT.size, 0, -1, 0.0)
        task_r, task_w = os.pipe()
        res_r, res_w = os.pipe()
        children.hold(task_w, res_r)
        try:
            child = children.spawn(lambda: _worker(self, slot, task_r, res_w), keep=(task_r, res_w))
        except ForkFailed:
            for fd in (task_r, res_w, task_w, res_r):
                children.close(fd)
            raise
        os.close(task_r)
        os.close(res_w)
        w = _Worker(child, slot, task_w, res_r)
        self.workers.append(w)
        self._give(w, self.pending.popleft())


# ---- the worker's side ---------------------------------------------------------------------


def _worker(pool: Pool, slot: int, task_r: int, res_w: int) -> None:
    try:
        _work(pool, slot, task_r, res_w)
    except BaseException as exc:  # noqa: BLE001 - said to the parent, which names the member
        try:
            _send(res_w, ("err", f"{type(exc).__name__}: {exc}"[:2000]))
        except OSError:
            pass
        raise


def _work(pool: Pool, slot: int, task_r: int, res_w: int) -> None:
    source = pool.source
    members = source.members
    at = slot * _SLOT.size
    with MemberReader(source.path, source.root) as reader:
        while True:
            batch = _recv(task_r)
            if batch is None:
                return
            plain: list[tuple[int, tuple]] = []
            for idx in batch:
                _mark(pool.slots, at, idx, time.monotonic())
                m = members[idx]
                md_read, binary = _read_sending(reader, m, idx, pool, res_w)
                if binary is None:
                    plain.append((idx, tuple(md_read)))
            _mark(pool.slots, at, -1, 0.0)
            _send(res_w, ("done", plain))


def _mark(slots: mmap.mmap, at: int, idx: int, since: float) -> None:
    """Write a worker's slot as the parent reads it (see ``_SLOT``)."""
    (seq,) = struct.unpack_from("<q", slots, at)
    struct.pack_into("<q", slots, at, seq + 1)
    struct.pack_into("<qd", slots, at + 8, idx, since)
    struct.pack_into("<q", slots, at, seq + 2)


def _read_sending(reader: MemberReader, m, idx: int, pool: Pool, res_w: int) -> tuple[Read, Binary | None]:
    """Read one member; a native one's record is sent before its parsing starts, then its facts."""
    def on_native(read: Read) -> None:
        _send(res_w, ("rec", idx, tuple(read)))

    read, binary = read_member(reader, m, pool.needles, pool.interest, pool.timeout, on_native=on_native,
                               budget=pool.budget)
    if binary is not None:
        _send(res_w, ("bin", idx, binary))
    return read, binary


# ---- messages: a 4-byte length, then a pickle ------------------------------------------------


def _send(fd: int, obj) -> None:
    children.send_bytes(fd, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def _recv(fd: int):
    """The next message, or None at end-of-file (the writer closed). EOFError mid-message."""
    payload = children.recv_bytes(fd)
    return None if payload is None else pickle.loads(payload)
