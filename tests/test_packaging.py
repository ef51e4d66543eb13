"""wheelaudit as a package: ``python -m build`` of the checkout's sources (copied without build
artefacts) makes an sdist and a wheel (the wheel from the sdist), the wheel carries the shipped
rulesets and passes its own ``check``, and installed into a fresh virtual environment it checks a
wheel with a shipped ruleset by name and explains a code.

Offline: the build runs without isolation (setuptools and ``build`` are test dependencies), and
the fresh environment gets the built wheel with ``pip install --no-deps``; its dependencies are
made importable by a ``.pth`` line naming this test environment's site-packages (which comes after
the fresh environment's own, so the installed wheelaudit is the one imported, as the test checks)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_REQUIRE"))}
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, env=env, **kw)


#: what a checkout holds that a fresh clone does not: build artefacts (a stale ``*.egg-info``
#: would hand setuptools the files of an earlier build) and local folders
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "*.egg-info", "build", "dist", "__pycache__", "out", "cache",
                                     ".pytest_cache")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(sdist, wheel) built by ``python -m build`` from a copy of this checkout's sources."""
    pytest.importorskip("build")
    source = tmp_path_factory.mktemp("source") / "wheelaudit"
    shutil.copytree(ROOT, source, symlinks=True, ignore=_NOT_SOURCE)
    out = tmp_path_factory.mktemp("dist")
    p = _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (sdist,) = out.glob("wheelaudit-*.tar.gz")
    (wheel,) = out.glob("wheelaudit-*.whl")
    return sdist, wheel


def test_the_wheel_carries_the_rulesets_and_passes_its_own_check(built):
    _, wheel = built
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for ruleset in sorted((ROOT / "rules").glob("*.toml")):
            member = f"wheelaudit/rulesets/{ruleset.name}"
            assert member in names
            assert z.read(member) == ruleset.read_bytes()  # the files themselves, not links
        assert "wheelaudit/schemas/rules.schema.json" in names and "wheelaudit/cli/explain.py" in names
    p = _run(Path(sys.executable).parent / "wheelaudit", "check", wheel)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "passed: 0 errors, 0 warnings in 1 wheel" in p.stdout


def test_a_fresh_environment_installs_the_wheel_and_audits(built, fixture_wheels, tmp_path):
    _, wheel = built
    venv = tmp_path / "fresh"
    assert _run(sys.executable, "-m", "venv", "--without-pip", venv).returncode == 0
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = next(bindir.glob("python*"))
    purelib = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    p = _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
             "--disable-pip-version-check", wheel)
    assert p.returncode == 0, p.stdout + p.stderr
    (purelib / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    where = _run(python, "-c", "import wheelaudit; print(wheelaudit.__file__)", cwd=tmp_path).stdout.strip()
    assert Path(where).is_relative_to(purelib), where  # the installed wheel, not this checkout

    wheelaudit = bindir / "wheelaudit"
    p = _run(wheelaudit, "check", fixture_wheels["macos_fused"], "--rules", "executorch", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "WA401 error" in p.stdout and str(purelib / "wheelaudit" / "rulesets" / "executorch.toml") in p.stdout
    p = _run(wheelaudit, "check", fixture_wheels["macos_clean"], "--rules", "executorch", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    p = _run(wheelaudit, "explain", "WA501", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.startswith("WA501 unresolved-dependency"), p.stderr
    assert "How to fix it:" in p.stdout


def test_the_sdist_builds_the_same_package(built):
    sdist, _ = built
    import tarfile

    with tarfile.open(sdist) as t:
        members = {m.name.split("/", 1)[1]: m for m in t.getmembers() if "/" in m.name}
    for ruleset in sorted((ROOT / "rules").glob("*.toml")):
        m = members[f"src/wheelaudit/rulesets/{ruleset.name}"]
        assert m.isfile(), "a shipped ruleset is a file in the sdist, not a link"
    assert "LICENSE" in members and "README.md" in members
