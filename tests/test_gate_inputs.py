"""Inputs as users pass them, through the installed ``wheelaudit`` script (subprocess, real exit
codes): a folder of wheels (``check dist/``), several wheels for ``inspect``, ``owners`` and
``dups``, and what is refused: an sdist (``.tar.gz``, or a ``.zip`` with ``PKG-INFO`` at its
top) and a zip without exactly one ``.dist-info`` directory."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz.mutate import tiny_wheel  # noqa: E402

RULES = ROOT / "rules" / "executorch.toml"


def wheelaudit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    here = Path(sys.executable).parent / "wheelaudit"
    script = str(here) if here.exists() else shutil.which("wheelaudit")
    assert script, "the wheelaudit console script is not installed"
    return subprocess.run([script, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture()
def dist(fixture_wheels, tmp_path) -> Path:
    """A dist/ folder as a build leaves it: two wheels (and a stray file)."""
    d = tmp_path / "dist"
    d.mkdir()
    for name in ("linux_clean", "macos_clean"):
        shutil.copy2(fixture_wheels[name], d / fixture_wheels[name].name)
    (d / "build.log").write_text("built\n")
    return d


def test_check_a_folder_of_wheels_checks_each(dist):
    wheels = sorted(p.name for p in dist.glob("*.whl"))
    assert len(set(wheels)) == 2
    folder = wheelaudit("check", str(dist), "--rules", str(RULES), "--format", "json")
    each = wheelaudit("check", *(str(dist / w) for w in wheels), "--rules", str(RULES), "--format", "json")
    assert folder.returncode == each.returncode and folder.returncode in (0, 1), folder.stderr
    got = json.loads(folder.stdout)
    assert [Path(w["path"]).name for w in got["wheels"]] == wheels
    assert got["summary"] == json.loads(each.stdout)["summary"]


def test_inspect_owners_and_dups_take_several_wheels(dist, fixture_wheels):
    wheels = sorted(str(p) for p in dist.glob("*.whl"))
    names = [Path(w).name for w in wheels]
    run = wheelaudit("inspect", *wheels, "--format", "json")
    assert run.returncode == 0, run.stderr
    assert [Path(w["path"]).name for w in json.loads(run.stdout)["wheels"]] == names
    run = wheelaudit("inspect", str(dist))
    assert run.returncode == 0 and all(n in run.stdout for n in names), run.stderr
    run = wheelaudit("owners", *wheels, "executorch::*", "--format", "json")
    assert run.returncode in (0, 1), run.stderr
    docs = json.loads(run.stdout)
    assert isinstance(docs, list) and len(docs) == 2
    run = wheelaudit("owners", str(dist), "executorch::*")
    assert run.returncode in (0, 1) and all(n in run.stdout for n in names), run.stderr
    run = wheelaudit("dups", *wheels)
    assert run.returncode == 0 and all(n in run.stdout for n in names), run.stderr


def test_owners_needs_wheels_before_patterns(dist, tmp_path):
    wheel = str(next(dist.glob("*.whl")))
    run = wheelaudit("owners", "executorch::*", wheel, cwd=tmp_path)
    assert run.returncode == 2 and "before the patterns" in run.stderr
    run = wheelaudit("owners", wheel, cwd=tmp_path)
    assert run.returncode == 2 and "PATTERN" in run.stderr


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


SDIST = {"pkg-1.0/PKG-INFO": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n", "pkg-1.0/setup.py": b"",
         "pkg-1.0/pkg/__init__.py": b""}


@pytest.mark.parametrize("name, data", [
    ("pkg-1.0.tar.gz", _tar_gz(SDIST)),
    ("pkg-1.0.zip", _zip(SDIST)),
    ("pkg-1.0-py3-none-any.whl", _zip(SDIST)),  # (named like a wheel, built like an sdist)
])
def test_an_sdist_is_refused_as_an_sdist(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    for command in ("check", "inspect"):
        run = wheelaudit(command, str(p))
        assert run.returncode == 2 and run.stdout == ""
        assert "a source distribution (sdist), not a wheel" in run.stderr or "(sdist, PKG-INFO at its top)" in run.stderr, \
            run.stderr


@pytest.mark.parametrize("dist_infos", [[], ["a-1.0.dist-info", "b-1.0.dist-info"]])
def test_a_zip_without_exactly_one_dist_info_is_not_a_wheel(tmp_path, dist_infos):
    members = {"pkg/__init__.py": b""}
    for d in dist_infos:
        members[f"{d}/METADATA"] = b"Metadata-Version: 2.1\nName: a\nVersion: 1.0\n"
    p = tmp_path / "a-1.0-py3-none-any.whl"
    p.write_bytes(_zip(members))
    run = wheelaudit("check", str(p))
    assert run.returncode == 2 and run.stdout == ""
    assert "a wheel has exactly one *.dist-info directory, this zip has" in run.stderr, run.stderr


def test_a_folder_without_wheels_or_dist_info_is_still_not_a_wheel(tmp_path):
    empty = tmp_path / "dist"
    empty.mkdir()
    (empty / "notes.txt").write_text("nothing built\n")
    run = wheelaudit("check", str(empty))
    assert run.returncode == 2 and "not a wheel" in run.stderr


def test_an_unpacked_tree_beside_wheels_is_the_tree(tmp_path):
    """A folder with a *.dist-info is an unpacked wheel, even when .whl files lie in it, as long
    as its RECORD lists them (its own files); otherwise it is ambiguous (a stray .dist-info in a
    dist/ folder must not hide the wheels): exit 2."""
    tree = tmp_path / "tree"
    with zipfile.ZipFile(io.BytesIO(tiny_wheel([("pkg/__init__.py", b""), ("other-1.0-py3-none-any.whl", b"not read")]))) as zf:
        zf.extractall(tree)
    run = wheelaudit("inspect", str(tree), "--format", "json")
    assert run.returncode == 0, run.stderr
    assert [Path(w["path"]).name for w in json.loads(run.stdout)["wheels"]] == ["tree"]
    (tree / "another-1.0-py3-none-any.whl").write_bytes(b"not listed")
    run = wheelaudit("inspect", str(tree), "--format", "json")
    assert run.returncode == 2 and "both a folder of wheels and an unpacked wheel" in run.stderr, run.stderr
