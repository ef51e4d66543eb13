"""Trees (unpacked wheels) and environments that cannot be fully listed or read: what cannot be
audited is a finding (exit 1), never a silent pass, a crash or a hang."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz.mutate import tiny_wheel  # noqa: E402
from wheelaudit.cli.main import main  # noqa: E402

TAG = "cp311-cp311-manylinux_2_28_x86_64"


def unpacked(tmp_path: Path, members=(("pkg/__init__.py", b""),)) -> Path:
    """An unpacked wheel (what ``wheel unpack`` leaves)."""
    whl = tmp_path / f"fuzz-1.0-{TAG}.whl"
    whl.write_bytes(tiny_wheel(list(members), tag=TAG))
    tree = tmp_path / "fuzz-1.0"
    with zipfile.ZipFile(whl) as zf:
        zf.extractall(tree)
    whl.unlink()
    return tree


def nest(base: Path, depth: int, name: str = "d") -> None:
    """``depth`` nested folders under ``base``, made relative to each other (any total length)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        with open(os.open("leaf.so", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as fh:
            fh.write(b"\x7fELF" + bytes(60))
    finally:
        os.close(fd)


def unnest(base: Path, name: str = "d") -> None:
    """Remove what :func:`nest` made, without recursion (pytest's own clean-up recurses)."""
    fds = [os.open(base, os.O_RDONLY | os.O_DIRECTORY)]
    while True:
        try:
            fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    try:
        os.unlink("leaf.so", dir_fd=fds[-1])
    except FileNotFoundError:
        pass
    while len(fds) > 1:
        os.close(fds.pop())
        os.rmdir(name, dir_fd=fds[-1])
    os.close(fds[0])


@pytest.fixture
def deep():
    """A folder of its own for deep trees, removed without recursion (pytest's clean-up of its
    temporary folders recurses and would fail on them)."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="wheelaudit-deep-"))
    try:
        yield base
    finally:
        pkg = base / "fuzz-1.0" / "pkg"
        if pkg.exists():
            unnest(pkg)
        shutil.rmtree(base)


def test_a_tree_1200_folders_deep_is_walked(capsys, deep):
    tree = unpacked(deep)
    nest(tree / "pkg", 1200)
    rc = main(["check", str(tree), "--format", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "RecursionError" not in err + out, err
    assert rc == 1, err  # the leaf is read (a truncated ELF: WA001) and RECORD does not list it
    assert "leaf.so" in out


def test_a_folder_past_the_path_length_limit_is_a_finding(capsys, deep):
    tree = unpacked(deep)
    nest(tree / "pkg", 2200)  # 4,400 characters: past PATH_MAX (4,096)
    rc = main(["check", str(tree), "--select", "WA002"])
    out, err = capsys.readouterr()
    assert rc == 1, err
    assert "(File name too long); what it holds was not audited" in out, out[-300:]


def test_a_stray_dist_info_does_not_hide_the_wheels_beside_it(tmp_path, capsys):
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / f"fuzz-1.0-{TAG}.whl").write_bytes(tiny_wheel([("pkg/__init__.py", b"")], tag=TAG))
    (dist / "x.dist-info").mkdir()
    (dist / "x.dist-info" / "RECORD").write_text("")
    rc = main(["check", str(dist)])
    out, err = capsys.readouterr()
    assert rc == 2, out + err  # never "dist: OK" from the stray folder alone
    assert "both a folder of wheels and an unpacked wheel" in err, err


# ---- wheels pip refuses to install do not pass ------------------------------------------------


def _wheel_without(tmp_path: Path, drop: str = "", dist: str = "fuzz-1.0", wheel_text: bytes | None = None) -> Path:
    from fuzz.mutate import record_hash, wheel_entries, zip_bytes

    entries = [e for e in wheel_entries([("pkg/__init__.py", b"")], dist=dist, tag=TAG)
               if not (drop and e.name.endswith(drop.encode()))]
    if wheel_text is not None:
        for e in entries:
            if e.name.endswith(b"/WHEEL"):
                e.data = wheel_text
    rows = "".join(f"{e.name.decode()},{record_hash(e.data)},{len(e.data)}\n" for e in entries
                   if not e.name.endswith(b"/RECORD"))
    for e in entries:
        if e.name.endswith(b"/RECORD"):
            e.data = (rows + f"{dist}.dist-info/RECORD,,\n").encode()
    p = tmp_path / f"fuzz-1.0-{TAG}.whl"
    p.write_bytes(zip_bytes(entries))
    return p


@pytest.mark.parametrize("case, expect", [
    ("no WHEEL", "WHEEL is missing"),
    ("no METADATA", "METADATA is missing"),
    ("another project's dist-info", "is for 'other'"),
    ("WHEEL without Wheel-Version", "has no Wheel-Version"),
    ("Wheel-Version 2.0", "says Wheel-Version 2.0"),
])
def test_a_wheel_pip_refuses_is_wa002(tmp_path, capsys, case, expect):
    if case == "no WHEEL":
        whl = _wheel_without(tmp_path, "/WHEEL")
    elif case == "no METADATA":
        whl = _wheel_without(tmp_path, "/METADATA")
    elif case == "another project's dist-info":
        whl = _wheel_without(tmp_path, dist="other-1.0")
    elif case == "WHEEL without Wheel-Version":
        whl = _wheel_without(tmp_path, wheel_text=f"Root-Is-Purelib: false\nTag: {TAG}\n".encode())
    else:
        whl = _wheel_without(tmp_path, wheel_text=f"Wheel-Version: 2.0\nRoot-Is-Purelib: false\nTag: {TAG}\n".encode())
    rc = main(["check", str(whl), "--select", "WA002"])
    out, err = capsys.readouterr()
    assert rc == 1, out + err
    assert expect in out and "pip refuses" in out, out


def test_a_good_wheel_is_not_refused(tmp_path, capsys):
    rc = main(["check", str(_wheel_without(tmp_path)), "--select", "WA002"])
    out, err = capsys.readouterr()
    assert rc == 0, out + err


def test_a_large_sparse_binary_in_a_tree_is_mapped_not_copied(tmp_path):
    """A tree's native file over the in-memory limit (64 MiB; here a sparse 96 MiB ELF) is
    mapped from its own file: no temporary copy (it was spooled whole: 4 GiB of temporary disk
    for a sparse 4 GiB file). Run with a file-size limit of 1 MiB, which a copy would exceed."""
    import resource
    import subprocess

    tree = unpacked(tmp_path)
    big = tree / "pkg" / "libbig.so"
    with open(big, "wb") as fh:
        fh.write(b"\x7fELF\x02\x01\x01" + bytes(57))
        fh.truncate(96 << 20)

    def one_mib() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    p = subprocess.run([sys.executable, "-m", "wheelaudit", "check", str(tree), "--jobs", "1", "--select", "WA001"],
                       capture_output=True, text=True, timeout=300, preexec_fn=one_mib)
    assert p.returncode == 1, (p.returncode, p.stderr[-500:])  # (the truncated ELF: WA001)
    assert "pkg/libbig.so" in p.stdout and "Traceback" not in p.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists a folder whatever its mode")
def test_an_unreadable_folder_is_a_finding(tmp_path, capsys):
    tree = unpacked(tmp_path, members=(("pkg/__init__.py", b""), ("pkg/sub/lib.so", b"\x7fELF" + bytes(60))))
    (tree / "pkg" / "sub").chmod(0)
    try:
        rc = main(["check", str(tree), "--select", "WA002"])
    finally:
        (tree / "pkg" / "sub").chmod(0o755)
    out, err = capsys.readouterr()
    assert rc == 1, err
    assert "pkg/sub: cannot list this folder" in out, out


def test_an_environment_folder_that_cannot_be_listed_is_a_finding(capsys, deep):
    """--env looks for native binaries no RECORD lists; a folder it cannot list (here past
    PATH_MAX) is said, never skipped in silence."""
    site = deep / "fuzz-1.0"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("")
    di = site / "pkg-1.0.dist-info"
    di.mkdir()
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (di / "RECORD").write_text("pkg/__init__.py,,\npkg-1.0.dist-info/METADATA,,\npkg-1.0.dist-info/RECORD,,\n")
    nest(site / "pkg", 2200)
    rc = main(["check", "--env", str(site), "-q"])
    out, err = capsys.readouterr()
    assert rc == 1, err
    assert "cannot be listed, so what it holds is not audited" in out, out[-500:]
