"""Demangle names that could explode in a memory- and time-capped worker process.

``cpp_demangle`` has no bound on its output: a short crafted name whose template arguments
repeat earlier ones through substitutions (``S_``, ``S0_``, ...) doubles its demangled size at
every level, so a few more bytes can take seconds or exhaust memory. Such a name cannot be told
from a real one by a cheap rule — a real libc++ variant dispatcher in libmlx has 285
back-references and demangles 3 kB into 66 kB — so names with many back-references are
demangled by a forked worker with an address-space limit, a deadline and an output cap. If the
worker fails, the name stays mangled (it still matches mangled rule entries).

The worker only calls ``cpp_demangle.demangle`` on a string: nothing from a wheel is executed.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import re

#: names at least this long with at least this many back-references take the guarded path
GUARD_LENGTH = 128
GUARD_REFS = 16
#: the worker's budget per name
TIMEOUT = 2.0
MAX_OUTPUT = 1 << 20
EXTRA_MEMORY = 512 << 20

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


def _worker(conn, limit: int) -> None:  # pragma: no cover - runs in the child
    import resource
    import signal

    import cpp_demangle

    # the parent's stop handlers are the command's (an orderly stop with a message); this worker
    # is ended by the parent (or by multiprocessing at exit) and ends silently
    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    if limit:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):
            pass
    while True:
        try:
            name = conn.recv()
        except EOFError:
            return
        try:
            out = cpp_demangle.demangle(name)
        except Exception:  # noqa: BLE001 - not valid Itanium: the caller keeps the name
            out = None
        if out is not None and len(out) > MAX_OUTPUT:
            out = None
        conn.send(out)


class _Guard:
    def __init__(self) -> None:
        self.proc = None
        self.conn = None
        self.pid = None

    def _start(self) -> None:
        ctx = mp.get_context("fork")
        parent, child = ctx.Pipe()
        vm = _vm_size()
        proc = ctx.Process(target=_worker, args=(child, vm + EXTRA_MEMORY if vm else 0), daemon=True)
        proc.start()
        child.close()
        self.proc, self.conn, self.pid = proc, parent, os.getpid()

    def _stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join(1)
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None

    def demangle(self, name: str, timeout: float = TIMEOUT) -> str | None:
        if self.proc is None or self.pid != os.getpid() or not self.proc.is_alive():
            self._stop() if self.pid == os.getpid() else None
            self._start()
        try:
            self.conn.send(name)
            if self.conn.poll(timeout):
                return self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            pass
        self._stop()  # too slow, too big, or dead: the name stays mangled
        return None


_guard = _Guard()


def guarded_demangle(name: str, timeout: float = TIMEOUT) -> str | None:
    """The demangled name, or None when it cannot be demangled within ``timeout`` seconds (at
    most :data:`TIMEOUT`), :data:`MAX_OUTPUT` characters and the worker's memory."""
    return _guard.demangle(name, min(timeout, TIMEOUT))
