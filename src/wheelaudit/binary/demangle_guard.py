"""Demangle names that could explode in a memory- and time-capped worker process.

``cpp_demangle`` has no bound on its output: a short crafted name whose template arguments
repeat earlier ones through substitutions (``S_``, ``S0_``, ...) doubles its demangled size at
every level, so a few more bytes can take seconds or exhaust memory. Such a name cannot be told
from a real one by a cheap rule — a real libc++ variant dispatcher in libmlx has 285
back-references and demangles 3 kB into 66 kB — so names with many back-references are
demangled by a forked worker with an address-space limit, a deadline and an output cap. If the
worker fails, the name stays mangled (it still matches mangled rule entries).

The worker only calls ``cpp_demangle.demangle`` on a string: nothing from a wheel is executed.
It is started by :func:`wheelaudit.children.spawn` (also when this runs inside a scan worker), so
it ends with the process that started it, whatever that process's way out, and never holds the
command's standard streams.
"""

from __future__ import annotations

import os
import re
import select

from wheelaudit import children

#: names at least this long with at least this many back-references take the guarded path
GUARD_LENGTH = 128
GUARD_REFS = 16
#: the worker's budget per name
TIMEOUT = 2.0
MAX_OUTPUT = 1 << 20
EXTRA_MEMORY = 512 << 20
#: a batch's names and answers at most this many bytes (a larger answer: the names one by one)
MAX_BATCH = 256 << 10
MAX_BATCH_OUTPUT = 4 * MAX_OUTPUT

_REFS = re.compile(r"S[0-9A-Z]*_|T[0-9]*_")


def suspicious(name: str) -> bool:
    return len(name) >= GUARD_LENGTH and len(_REFS.findall(name)) >= GUARD_REFS


def _vm_size() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _worker(task_r: int, res_w: int, limit: int) -> None:  # pragma: no cover - runs in the child
    import resource

    import cpp_demangle

    if limit:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):
            pass
    while True:
        try:
            raw = children.recv_bytes(task_r)
        except EOFError:
            return
        if raw is None:
            return
        # a task is a batch of names joined by NUL (a name from a string table holds none); the
        # answer, their demangled forms joined by NUL, an empty one where there is none
        outs: list[bytes] = []
        total = 0
        for name in raw.split(b"\0"):
            try:
                out = cpp_demangle.demangle(name.decode("utf-8", "surrogateescape"))
            except Exception:  # noqa: BLE001 - not valid Itanium: the caller keeps the name
                out = None
            if out is not None and len(out) > MAX_OUTPUT:
                out = None
            data = b"" if out is None else out.encode("utf-8", "surrogateescape")
            total += len(data)
            if total > MAX_BATCH_OUTPUT:
                outs = []  # (too much at once: the caller asks again one name at a time)
                break
            outs.append(data)
        children.send_bytes(res_w, b"\0".join(outs) if outs else b"\1")


class _Guard:
    def __init__(self) -> None:
        self.child: children.Child | None = None
        self.task_w = self.res_r = -1
        self.pid: int | None = None

    def _start(self) -> None:
        task_r, task_w = os.pipe()
        res_r, res_w = os.pipe()
        children.hold(task_w, res_r)
        vm = _vm_size()
        limit = vm + EXTRA_MEMORY if vm else 0
        try:
            child = children.spawn(lambda: _worker(task_r, res_w, limit), keep=(task_r, res_w))
        finally:
            os.close(task_r)
            os.close(res_w)
        self.child, self.task_w, self.res_r, self.pid = child, task_w, res_r, os.getpid()

    def _stop(self) -> None:
        if self.child is not None:
            self.child.kill()
        children.close(self.task_w)
        children.close(self.res_r)
        self.child, self.task_w, self.res_r = None, -1, -1

    def demangle(self, names: list[str], timeout: float = TIMEOUT) -> list[str | None] | None:
        """``names`` demangled by the worker within ``timeout`` seconds in all: each demangled
        form, or None where there is none; None for the whole batch when the worker was too slow,
        too big or died (then it is stopped, and a caller that wants each name's own verdict asks
        again one name at a time)."""
        if self.pid != os.getpid():  # (a fork's copy of its parent's guard: not this process's child)
            self.child, self.task_w, self.res_r, self.pid = None, -1, -1, os.getpid()
        if self.child is None or not self.child.alive():
            self._stop()
            self._start()
        try:
            children.send_bytes(self.task_w, b"\0".join(n.encode("utf-8", "surrogateescape") for n in names))
            if select.select([self.res_r], [], [], timeout)[0]:
                out = children.recv_bytes(self.res_r)
                if out == b"\1" and len(names) > 1:
                    return None  # (answers too large together: one at a time)
                if out is not None and out != b"\1":
                    parts = out.split(b"\0")
                    if len(parts) == len(names):
                        return [p.decode("utf-8", "surrogateescape") or None for p in parts]
        except (EOFError, OSError):
            pass
        self._stop()  # too slow, too big, or dead: the names stay mangled
        return None


_guard = _Guard()


def guarded_demangle(name: str, timeout: float = TIMEOUT) -> str | None:
    """The demangled name, or None when it cannot be demangled within ``timeout`` seconds (at
    most :data:`TIMEOUT`), :data:`MAX_OUTPUT` characters and the worker's memory."""
    got = _guard.demangle([name], min(timeout, TIMEOUT))
    return None if got is None else got[0]


def guarded_demangle_many(names: list[str], timeout: float = TIMEOUT) -> list[str | None] | None:
    """The demangled forms of ``names`` (None where a name has none) from one round trip to the
    worker, within ``timeout`` seconds in all (at most :data:`TIMEOUT`); None when the batch as a
    whole failed (too slow, too large, the worker died): each name must then be asked alone to
    get its own answer. A batch holds names of at most :data:`MAX_BATCH` bytes in all."""
    return _guard.demangle(names, min(timeout, TIMEOUT))
