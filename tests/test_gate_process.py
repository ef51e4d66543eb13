"""The gate as CI runs it: the installed ``wheelaudit`` script in a subprocess, real signals.

SIGTERM, SIGINT and SIGHUP end the run and every worker, leave no temporary file, and exit with
128 + the signal; a worker killed with SIGKILL ends the run with exit 2 and a message naming the
member (no report made up from what was not read); a parent killed with SIGKILL takes its
workers with it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz.mutate import Entry, wheel_entries, zip_bytes  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

#: members of the slow wheel, each MEMBER_MIB MiB inflated from a few hundred KiB (ratio ~340,
#: under the zip-bomb limits): reading them keeps two workers busy for a while
MEMBERS, MEMBER_MIB = 4, 250


def wheelaudit_script() -> str:
    """The console script installed beside this interpreter (the venv's), else on PATH."""
    here = Path(sys.executable).parent / "wheelaudit"
    if here.exists():
        return str(here)
    found = shutil.which("wheelaudit")
    assert found, "the wheelaudit console script is not installed"
    return found


@pytest.fixture(scope="module")
def slow_wheel(tmp_path_factory) -> Path:
    rng = bytearray(1 << 20)
    for i in range(0, len(rng), 2048):
        rng[i] = (i * 2654435761 >> 11) & 0xFF
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    block = co.compress(bytes(rng)) + co.flush(zlib.Z_FULL_FLUSH)
    stream = block * MEMBER_MIB + co.flush()
    crc = 0
    for _ in range(MEMBER_MIB):
        crc = zlib.crc32(rng, crc)
    entries = wheel_entries([("pkg/__init__.py", b"")])
    entries += [Entry(f"pkg/z{i}.bin".encode(), b"", raw=stream, lie_usize=MEMBER_MIB << 20, lie_crc=crc)
                for i in range(MEMBERS)]
    path = tmp_path_factory.mktemp("slow") / "fuzz-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    path.write_bytes(zip_bytes(entries))
    return path


def children(pid: int) -> set[int]:
    out: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for t in tasks:
        try:
            out |= {int(c) for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()}
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def start(wheel: Path, tmpdir: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, TMPDIR=str(tmpdir))
    env.pop("WHEELAUDIT_FORCE_WORKERS", None)
    return subprocess.Popen([wheelaudit_script(), "check", str(wheel), "--jobs", "2", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)


def wait_for_workers(proc: subprocess.Popen, n: int = 2, limit: float = 60.0) -> set[int]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        kids = children(proc.pid)
        if len(kids) >= n:
            return kids
        if proc.poll() is not None:
            pytest.fail(f"wheelaudit ended (exit {proc.returncode}) before its workers were seen")
        time.sleep(0.005)
    proc.kill()
    pytest.fail("no worker processes appeared")


def assert_gone(pids: set[int], within: float = 30.0) -> None:
    """The processes end: the wait returns as soon as they have; ``within`` only stops waiting for
    processes that outlive the run (a safety net, not a speed bound)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.01)
    assert not [p for p in pids if alive(p)], "worker processes outlived the run"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_ends_the_run_and_every_worker(slow_wheel, tmp_path, sig):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = start(slow_wheel, tmpdir)
    workers = wait_for_workers(proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    assert "Traceback" not in err and out == ""
    assert_gone(workers)
    assert list(tmpdir.iterdir()) == []


def test_a_killed_worker_ends_the_run_with_exit_2_naming_the_member(slow_wheel, tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = start(slow_wheel, tmpdir, "--format", "json")
    workers = wait_for_workers(proc)
    victim = min(workers)
    os.kill(victim, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, (proc.returncode, err)
    assert out == ""  # no report made up from what was not read
    assert "ended abruptly (killed by signal 9)" in err and "pkg/z" in err, err
    assert "Traceback" not in err
    assert_gone(workers)
    assert list(tmpdir.iterdir()) == []


def test_workers_do_not_outlive_a_killed_parent(slow_wheel, tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = start(slow_wheel, tmpdir)
    workers = wait_for_workers(proc)
    proc.kill()
    proc.communicate(timeout=30)
    assert_gone(workers)
    assert list(tmpdir.iterdir()) == []


def test_an_undisturbed_run_leaves_nothing_behind(slow_wheel, tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = start(slow_wheel, tmpdir)
    workers = wait_for_workers(proc)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err  # (RECORD lists the members' real bytes, not these)
    assert "WA002" in out and "Traceback" not in err
    assert_gone(workers)
    assert list(tmpdir.iterdir()) == []


def test_the_demangling_guard_ends_quietly_with_the_command(tmp_path):
    """A name with many back-references is demangled by a capped worker process; at exit that
    worker is ended, and ends without a word (it once took the command's SIGTERM handler along
    and printed a traceback)."""
    from fuzz.mutate import tiny_wheel

    name = "_Z4funcI" + "St6vectorIS_S0_E" * 12 + "EvT_" + "S1_" * 10  # long, many substitutions
    src = tmp_path / "x.c"
    src.write_text(f'int exploding(void) __asm__("{name}");\nint exploding(void) {{ return 1; }}\n')
    lib = tmp_path / "libx.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    wheel = tmp_path / "x-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    wheel.write_bytes(tiny_wheel([("x/libx.so", lib.read_bytes())], tag="cp311-cp311-manylinux_2_28_x86_64"))
    p = subprocess.run([wheelaudit_script(), "inspect", "--symbols", str(wheel)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "void func<std::vector<func, std::vector>" in p.stdout, p.stderr
    assert p.stderr == ""


# ---- no process of any kind outlives the command (its session is empty once it ends) ---------


def session_processes(sid: int) -> set[int]:
    """The live processes of session ``sid`` (zombies waiting to be reaped do not count)."""
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.add(int(entry))
    return out


def assert_session_empty(sid: int, within: float = 30.0) -> None:
    """Every process of the session ends (``within``: a safety net, as in :func:`assert_gone`)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and session_processes(sid):
        time.sleep(0.02)
    assert session_processes(sid) == set(), "a process of the run outlived the command"


def _bomb(levels: int, fn: str = "f") -> str:
    """A mangled name whose demangled form doubles with each level (substitutions S_, S0_, ...)."""
    def sub(i: int) -> str:
        if i == 0:
            return "S_"
        digits, out, i = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", "", i - 1
        while True:
            out, i = digits[i % 36] + out, i // 36
            if not i:
                return f"S{out}_"

    return f"_Z1{fn}I1xIiE" + "".join(f"S_I{sub(k + 1)}{sub(k + 1)}E" for k in range(levels)) + "Ev"


def guarded_wheel(tmp_path: Path, names: list[str]) -> Path:
    """A wheel of two libraries built by gcc; the first exports ``names`` (each demangled by the
    guarded demangler's worker process, forked inside a scan worker under ``--jobs 2``: the
    reader demangles versioned exports as it reads them, as in casadi's libraries)."""
    from fuzz.mutate import tiny_wheel

    script = tmp_path / "v.map"
    script.write_text("V1 { global: *; };\n")
    members = []
    # (a non-ASCII name takes the reader's general path, which demangles as it reads)
    for lib, syms in (("liba", ["caf\u00e9", *names]), ("libb", ["plain_function"])):
        src = tmp_path / f"{lib}.c"
        src.write_text(encoding="utf-8", data="".join(f'int f{i}(void) __asm__("{n}");\nint f{i}(void) {{ return {i}; }}\n'
                               for i, n in enumerate(syms)))
        so = tmp_path / f"{lib}.so"
        subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,--version-script={script}", "-o", str(so), str(src)],
                       check=True)
        members.append((f"x/{lib}.so", so.read_bytes()))
    wheel = tmp_path / "x-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    wheel.write_bytes(tiny_wheel(members, tag="cp311-cp311-manylinux_2_28_x86_64", dist="x-1.0"))
    return wheel


def start_session(*args: str) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("WHEELAUDIT_FORCE_WORKERS", None)
    return subprocess.Popen([wheelaudit_script(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, start_new_session=True)


def communicate_or_fail(proc: subprocess.Popen, timeout: float) -> tuple[bytes, bytes]:
    """Read the command's output to its end (as ``| wc -l`` does); end-of-file must arrive."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the output never reached end-of-file: a process of the run kept it open")


def test_no_process_outlives_a_run_whose_workers_leave_with_os_exit(tmp_path):
    """The casadi pipeline: a scan worker (which leaves with os._exit) starts the guarded
    demangler's worker; the command's stdout and stderr reach end-of-file when it ends, and its
    session is empty."""
    heavy = _bomb(14)  # long and reference-heavy (guarded), yet quick to demangle
    wheel = guarded_wheel(tmp_path, [heavy])
    proc = start_session("check", "--jobs", "2", str(wheel))
    out, err = communicate_or_fail(proc, 120)
    assert proc.returncode == 0, err
    assert b"OK" in out and err == b""
    assert_session_empty(proc.pid)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_no_process_outlives_a_run_ended_by_a_signal(tmp_path, sig):
    """Killed while the guarded demangler's worker (a scan worker's child) chews on bombs: every
    process of the run ends, the output reaches end-of-file."""
    wheel = guarded_wheel(tmp_path, [_bomb(46, fn) for fn in "ghijklmn"])  # each takes the guard's 2 s
    proc = start_session("check", "--jobs", "2", "--format", "json", str(wheel))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # a grandchild of the command: the guard's worker
        if any(Path(f"/proc/{p}/stat").exists() and p != proc.pid and p not in children(proc.pid)
               for p in session_processes(proc.pid)):
            break
        if proc.poll() is not None:
            pytest.fail(f"wheelaudit ended (exit {proc.returncode}) before the guard's worker was seen")
        time.sleep(0.005)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the guard's worker never appeared")
    proc.send_signal(sig)
    communicate_or_fail(proc, 60)
    assert proc.returncode in (128 + sig, -sig), proc.returncode
    assert_session_empty(proc.pid)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_failed_fork_is_exit_2_with_a_message(tmp_path, jobs):
    """fork() refused (RLIMIT_NPROC): the pool's fork (--jobs 2) and the guarded demangler's
    (--jobs 1) both end the run with exit 2 and one line, never a traceback or a finding."""
    import resource
    import tempfile

    wheel = guarded_wheel(tmp_path, [_bomb(14)])
    cmd = [wheelaudit_script(), "check", "--jobs", jobs]
    if os.geteuid() == 0:  # (root ignores RLIMIT_NPROC: run as another user)
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv")
        cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    shared = Path(tempfile.mkdtemp())
    opened: list[tuple[Path, int]] = []
    try:
        if os.geteuid() == 0:
            # the other user must reach the checkout (its venv, the package); a clone made in a
            # private folder (mktemp -d) is not: let it search the folders above, for this test only
            import wheelaudit

            folders = {*Path(sys.prefix).parents, *Path(wheelaudit.__file__).resolve().parents}
            for d in sorted(folders, key=lambda f: len(f.parts)):
                mode = d.stat().st_mode
                if d.stat().st_uid == 0 and not mode & 0o001:
                    opened.append((d, mode))
                    d.chmod(mode | 0o001)
        shared.chmod(0o755)
        (shared / wheel.name).write_bytes(wheel.read_bytes())
        (shared / wheel.name).chmod(0o644)

        def one_process() -> None:
            resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))

        p = subprocess.run([*cmd, str(shared / wheel.name)], capture_output=True, text=True, timeout=120,
                           preexec_fn=one_process, start_new_session=True)
    finally:
        shutil.rmtree(shared)
        for d, mode in reversed(opened):
            d.chmod(mode & 0o7777)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "fork() failed" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert p.stdout == ""
