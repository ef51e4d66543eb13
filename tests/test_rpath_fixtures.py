"""WA502 by consequence on real binaries: libraries linked here with gcc, each with one kind of
rpath entry, packed into a wheel and checked through the CLI; the severities follow what glibc's
loader would do on a user's machine (the same cases as tests/test_linkage.py on built facts)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from wheel.wheelfile import WheelFile

from wheelaudit.cli.main import main

TAG = "cp311-cp311-manylinux_2_28_x86_64"


@pytest.fixture(scope="module")
def libs(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.fail("gcc is missing: apt-get install gcc", pytrace=False)
    out = tmp_path_factory.mktemp("rpath_libs")
    (out / "foo.c").write_text("int foo(void) { return 1; }\n")
    (out / "ext.c").write_text("int foo(void);\nint PyInit_ext(void) { return foo(); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libfoo.so.1", "-o", str(out / "libfoo.so.1"),
                    str(out / "foo.c")], check=True)
    return out


def _ext(libs: Path, name: str, runpath: list[str]) -> Path:
    out = libs / f"{name}.so"
    rp = ":".join(runpath)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(libs / "ext.c"), str(libs / "libfoo.so.1"),
                    "-Wl,--enable-new-dtags", f"-Wl,-rpath,{rp}"], check=True)
    return out


def _run(capsys, tmp_path, libs, runpath):
    capsys.readouterr()
    ext = _ext(libs, "ext_" + "_".join(p.strip("/$").replace("/", "_") or "empty" for p in runpath), runpath)
    whl = tmp_path / f"demo-1.0-{TAG}.whl"
    with WheelFile(whl, "w") as wf:
        wf.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        wf.writestr("demo-1.0.dist-info/WHEEL", f"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: {TAG}\n")
        wf.write(str(ext), "demo/ext.cpython-311-x86_64-linux-gnu.so")
        wf.write(str(libs / "libfoo.so.1"), "demo/libfoo.so.1")
    main(["check", str(whl), "--format", "json", "--select", "WA5"])
    report = json.loads(capsys.readouterr().out)
    return sorted((f["code"], f["severity"]) for f in report["wheels"][0]["findings"])


@pytest.mark.parametrize("runpath,expected", [
    (["$ORIGIN"], []),                                                     # clean
    (["/tmp/build/lib", "$ORIGIN"], [("WA502", "error")]),                 # searched first, writable by anyone
    (["/home/ci/build", "$ORIGIN"], [("WA502", "error")]),
    (["$ORIGIN", "/tmp/build/lib"], [("WA502", "warning")]),               # libfoo found before it: nothing reaches it
    (["/opt/_internal/lib", "$ORIGIN"], [("WA502", "warning")]),           # a build tree: harmless where it does not exist
    (["$ORIGIN/../cmake-out/lib", "$ORIGIN"], [("WA502", "warning")]),
])
def test_rpath_verdicts_on_linked_binaries(capsys, tmp_path, libs, runpath, expected):
    assert _run(capsys, tmp_path, libs, runpath) == expected
