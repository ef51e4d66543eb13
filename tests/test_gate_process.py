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


def assert_gone(pids: set[int], within: float = 1.0) -> None:
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
