"""An audit hook that watches what the code under test does to the world.

While a :class:`Guard` is active (``with guard.watch(): ...``), every Python audit event
(:pep:`578`) that writes a file, runs a program, loads a shared library, opens a socket, or
imports, compiles or executes code from one of the *foreign* directories (where the wheel
under test lives) is recorded as a :class:`Violation`. Writes inside ``allowed`` directories
are recorded separately (as ``writes_inside``): the audit path writes nothing at all, except
anonymous spool files for native members over 64 MiB (``tempfile.TemporaryFile``, already
unlinked), which go to the system temporary directory.

Audit hooks cannot be removed, so one hook is installed per process, the first time a Guard
watches; when no Guard is watching it returns at once.

Used by the fuzz harness (``fuzz/run.py``) and by the tests (``tests/test_no_execution.py``,
``tests/test_hostile_zip.py``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
#: events that change the file system, with the position of their path argument(s)
_FS_EVENTS = {
    "os.remove": (0,), "os.rename": (0, 1), "os.replace": (0, 1), "os.rmdir": (0,),
    "os.mkdir": (0,), "os.symlink": (0, 1), "os.link": (0, 1), "os.truncate": (0,),
    "os.chmod": (0,), "os.chown": (0,), "os.utime": (0,), "os.setxattr": (0,),
    "os.removexattr": (0,), "shutil.rmtree": (0,), "shutil.copyfile": (1,), "shutil.move": (1,),
    "shutil.copytree": (1,), "shutil.make_archive": (0,), "shutil.unpack_archive": (1,),
}
#: events that start a process (see Guard.allow_worker_processes)
_PROCESS = ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.fork")
#: events that run a program, load native code or talk to the network: never allowed
_FORBIDDEN = (
    "os.system", "os.spawn", "os.forkpty", "os.startfile", "pty.spawn", "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata",
    "_ctypes.dlopen", "socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo",
    "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect", "webbrowser.open",
    "sqlite3.connect", "sqlite3.enable_load_extension", "zipimport.zipimporter",
)


@dataclass(frozen=True)
class Violation:
    event: str
    detail: str

    def __str__(self) -> str:
        return f"{self.event}: {self.detail}"


def _as_path(value: object) -> Path | None:
    if isinstance(value, int) or value is None:
        return None  # a file descriptor already open
    try:
        return Path(os.fsdecode(value)).absolute()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _is_self(exe: object, argv: object) -> bool:
    """This interpreter, started by :mod:`multiprocessing` (spawn or forkserver)."""
    try:
        same = exe is not None and os.path.realpath(os.fsdecode(exe)) == os.path.realpath(sys.executable)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    words = [os.fsdecode(a) for a in argv] if isinstance(argv, (list, tuple)) else []
    return same and any("multiprocessing" in w for w in words)


def _under(path: Path, roots: Iterable[Path]) -> bool:
    for root in roots:
        if path == root or root in path.parents:
            return True
    return False


@dataclass
class Guard:
    """Records forbidden events while watching.

    ``allowed``: directories where writing is expected (the temporary directory); ``foreign``:
    directories holding the input (the wheel and its unpacked tree), from which nothing may be
    imported, compiled or executed.
    """

    allowed: list[Path] = field(default_factory=list)
    foreign: list[Path] = field(default_factory=list)
    #: wheelaudit's worker pool: a fork of this process, or this interpreter started again by
    #: multiprocessing to run wheelaudit's own code. Recorded in ``processes``; anything else
    #: that starts a program is a violation.
    allow_worker_processes: bool = True
    violations: list[Violation] = field(default_factory=list)
    writes_inside: list[str] = field(default_factory=list)
    processes: list[str] = field(default_factory=list)
    events_seen: int = 0

    def __post_init__(self) -> None:
        self.allowed = [Path(os.path.realpath(p)) for p in self.allowed] + [Path(p).absolute() for p in self.allowed]
        self.foreign = [Path(os.path.realpath(p)) for p in self.foreign] + [Path(p).absolute() for p in self.foreign]
        self._pid = os.getpid()
        self._pipe: tuple[int, int] | None = None

    @contextlib.contextmanager
    def watch(self) -> Iterator[Guard]:
        """Watch this thread (and forked children: they report through a pipe)."""
        _install()
        # an import's bytecode cache (__pycache__/*.pyc, pytest's rewritten *-pytest-*.pyc) is the
        # interpreter writing, not the code under test: no cache is written while watching
        saved_dont_write_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
        r, w = os.pipe()
        os.set_blocking(r, False)
        self._pipe, self._pid = (r, w), os.getpid()
        _ACTIVE.append((threading.get_ident(), self))
        try:
            yield self
        finally:
            sys.dont_write_bytecode = saved_dont_write_bytecode
            _ACTIVE.remove((threading.get_ident(), self))
            self._pipe = None
            os.close(w)
            chunks = []
            while True:
                try:
                    chunk = os.read(r, 1 << 16)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            os.close(r)
            for line in b"".join(chunks).decode("utf-8", "replace").splitlines():
                kind, _, rest = line.partition("\t")
                event, _, detail = rest.partition("\t")
                if kind == "V":
                    self.violations.append(Violation(event, detail))
                elif kind == "W":
                    self.writes_inside.append(f"{event} {detail}")

    def _violation(self, event: str, detail: str) -> None:
        if os.getpid() != self._pid:  # a forked child: tell the parent (os.write audits nothing)
            detail = f"(in child process {os.getpid()}) {detail}"
            self._tell("V", event, detail)
        self.violations.append(Violation(event, detail))

    def _tell(self, kind: str, event: str, detail: str) -> None:
        if self._pipe is not None:
            line = f"{kind}\t{event}\t{detail}".replace("\n", " ") + "\n"
            try:
                os.write(self._pipe[1], line.encode("utf-8", "replace"))
            except OSError:
                pass

    def _process(self, event: str, args: tuple) -> None:
        detail = ", ".join(repr(a)[:300] for a in args)
        if self.allow_worker_processes:
            if event == "os.fork":
                self.processes.append("fork")
                return
            exe = args[0] if args else None
            argv = args[1] if len(args) > 1 else None
            if event in ("subprocess.Popen", "os.posix_spawn", "os.exec") and _is_self(exe, argv):
                self.processes.append(f"{event} {detail}")
                return
        self._violation(event, detail)


    # -- the hook ---------------------------------------------------------------------------
    def _write(self, event: str, raw: object) -> None:
        path = _as_path(raw)
        if path is None:
            return
        real = Path(os.path.realpath(path))
        if _under(path, self.allowed) or _under(real, self.allowed):
            if os.getpid() != self._pid:
                self._tell("W", event, str(path))
            self.writes_inside.append(f"{event} {path}")
        else:
            where = ", ".join(dict.fromkeys(map(str, self.allowed))) or "any allowed directory"
            self._violation(event, f"writes {path} (outside {where})")

    def _foreign_code(self, event: str, filename: object) -> None:
        path = _as_path(filename)
        if path is not None and self.foreign and _under(path, self.foreign):
            self._violation(event, f"code from the input: {path}")

    def __call__(self, event: str, args: tuple) -> None:
        self.events_seen += 1
        if event == "open":
            target, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(ch in mode for ch in "wax+")) or (
                isinstance(flags, int) and bool(flags & _WRITE_FLAGS))
            if writing:
                self._write(event, target)
        elif event in _FS_EVENTS:
            for i in _FS_EVENTS[event]:
                if i < len(args):
                    self._write(event, args[i])
        elif event.startswith(_PROCESS):
            self._process(event, args)
        elif event.startswith(_FORBIDDEN):
            self._violation(event, ", ".join(repr(a)[:200] for a in args))
        elif event == "import":
            # (module, filename, sys.path, sys.meta_path, sys.path_hooks)
            self._foreign_code(event, args[1] if len(args) > 1 else None)
        elif event in ("exec", "compile"):
            code = args[0] if args else None
            filename = getattr(code, "co_filename", None) if event == "exec" else (args[1] if len(args) > 1 else None)
            self._foreign_code(event, filename)
        elif event == "mmap.__new__":
            # (fileno, length, access, offset): a writable mapping of a file is a write
            fileno, _length, access = (tuple(args) + (None, None, None))[:3]
            if isinstance(fileno, int) and fileno >= 0 and access not in (None, 1):  # 1: ACCESS_READ
                import mmap

                if access in (mmap.ACCESS_WRITE, mmap.ACCESS_DEFAULT):
                    self._violation(event, f"writable mapping of fd {fileno} (access {access})")


_ACTIVE: list[tuple[int, Guard]] = []
_INSTALLED = False


def _hook(event: str, args: tuple) -> None:
    if not _ACTIVE:
        return
    # the guard of this thread, else the most recent one (worker threads of the code under test)
    tid = threading.get_ident()
    guard = next((g for owner, g in reversed(_ACTIVE) if owner == tid), _ACTIVE[-1][1])
    guard(event, args)


def _install() -> None:
    global _INSTALLED
    if not _INSTALLED:
        sys.addaudithook(_hook)
        _INSTALLED = True


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No guard watches inside (the harness writing its own input files)."""
    saved = list(_ACTIVE)
    del _ACTIVE[:]
    try:
        yield
    finally:
        _ACTIVE[:] = saved
