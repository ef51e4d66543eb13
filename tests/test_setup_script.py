"""scripts/setup.sh installs per command what that command uses: nothing from apt for the tool
alone, the fixture toolchain for the demo, everything for the tests; and only what is missing.
The script runs for real (bash) on a machine where nothing is found: a PATH of a few base
programs, and an apt-get, sudo, dpkg-query and Python that only record what they were asked."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO = ["gcc", "g++", "binutils", "clang", "lld", "llvm"]
TEST = DEMO + ["mingw-w64", "cmake", "make", "pkg-config", "chromium", "fonts-dejavu-core", "graphviz"]


def _fake(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    path.chmod(0o755)


def setup(tmp_path: Path, command: str, present: tuple[str, ...] = ()) -> tuple[int, list[str], str]:
    """Run ``scripts/setup.sh COMMAND``; (status, the apt-get install arguments asked for, stderr)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    for tool in ("bash", "dirname", "readlink", "id", "grep", "cat", "sh"):
        target = bin_ / tool
        if not target.exists():
            target.symlink_to(shutil.which(tool))
    log = tmp_path / "apt.log"
    _fake(bin_ / "apt-get", f'echo "$*" >> "{log}"')
    _fake(bin_ / "sudo", '"$@"')
    _fake(bin_ / "dpkg-query", "exit 1")
    for tool in present:  # (programs this machine already has)
        _fake(bin_ / tool, "exit 0")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    _fake(venv / "bin" / "python", "exit 0")  # (pip and the import check: recorded nowhere, succeed)
    env = {"PATH": str(bin_), "HOME": str(tmp_path), "WHEELAUDIT_VENV": str(venv),
           "PYTHON": str(venv / "bin" / "python")}
    p = subprocess.run([str(bin_ / "bash"), str(ROOT / "scripts" / "setup.sh"), command], env=env,
                       capture_output=True, text=True, timeout=60)
    asked = [line.split("--no-install-recommends", 1)[1].split() for line in
             (log.read_text().splitlines() if log.exists() else []) if line.startswith("install ")]
    return p.returncode, [pkg for line in asked for pkg in line], p.stderr


@pytest.mark.parametrize("command, packages", [("tool", []), ("demo", DEMO), ("test", TEST)])
def test_each_command_installs_what_it_uses(tmp_path, command, packages):
    code, asked, err = setup(tmp_path, command)
    assert code == 0, err
    assert asked == packages


def test_only_what_is_missing(tmp_path):
    code, asked, err = setup(tmp_path, "demo", present=("gcc", "g++", "ar", "strip"))
    assert code == 0, err
    assert asked == ["clang", "lld", "llvm"]


def test_an_unknown_command_is_refused(tmp_path):
    code, asked, err = setup(tmp_path, "everything")
    assert code == 2 and asked == [] and "tool, demo or test" in err
