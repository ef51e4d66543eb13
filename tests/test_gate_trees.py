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
