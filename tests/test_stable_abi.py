"""WA601: an abi3 wheel's extension modules use only the Stable ABI of the wheel's minimum
Python. Modules built here with gcc from a C file that declares the C-API functions it calls
(no CPython headers needed), packed into cp39-abi3 wheels."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from wheel.wheelfile import WheelFile

from wheelaudit.cli.main import main

SRC = Path(__file__).resolve().parent.parent / "fixtures" / "src" / "abi3" / "ext.c"


def _module(tmp_path: Path, bad: bool) -> Path:
    if shutil.which("gcc") is None:
        pytest.fail("gcc is missing: apt-get install gcc", pytrace=False)
    out = tmp_path / ("bad.so" if bad else "good.so")
    subprocess.run(["gcc", "-O1", "-fPIC", "-shared", "-fvisibility=hidden", *(["-DBAD"] if bad else []),
                    "-o", str(out), str(SRC)], check=True)
    return out


def _wheel(tmp_path: Path, module: Path, tag: str) -> Path:
    whl = tmp_path / module.stem / f"demo-1.0-{tag}.whl"
    whl.parent.mkdir()
    with WheelFile(whl, "w") as wf:
        wf.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        wf.writestr("demo-1.0.dist-info/WHEEL", f"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: {tag}\n")
        wf.write(str(module), "demo/_ext.abi3.so")
    return whl


def _codes(capsys, whl: Path) -> tuple[int, list[dict]]:
    rc = main(["check", str(whl), "--select", "WA6", "--format", "json"])
    return rc, json.loads(capsys.readouterr().out)["wheels"][0]["findings"]


def test_an_abi3_module_outside_the_stable_abi(tmp_path, capsys):
    rc, fs = _codes(capsys, _wheel(tmp_path, _module(tmp_path, bad=True), "cp39-abi3-manylinux_2_17_x86_64"))
    assert rc == 1 and [f["code"] for f in fs] == ["WA601"]
    f = fs[0]
    assert f["symbols"] == ["PyType_GetName", "_PyObject_GetMethod"]
    assert "PyType_GetName (3.11)" in f["message"] and "not in the Stable ABI: _PyObject_GetMethod" in f["message"]


def test_a_clean_abi3_module_and_a_version_specific_wheel_pass(tmp_path, capsys):
    rc, fs = _codes(capsys, _wheel(tmp_path, _module(tmp_path, bad=False), "cp39-abi3-manylinux_2_17_x86_64"))
    assert rc == 0 and fs == []
    # the same bad module in a wheel that does not promise abi3 is no WA601 (but WA602: its suffix)
    bad = _module(tmp_path, bad=True)
    rc, fs = _codes(capsys, _wheel(tmp_path, bad, "cp311-cp311-manylinux_2_17_x86_64"))
    assert "WA601" not in [f["code"] for f in fs]


def test_a_newer_floor_allows_the_newer_function(tmp_path, capsys):
    rc, fs = _codes(capsys, _wheel(tmp_path, _module(tmp_path, bad=True), "cp311-abi3-manylinux_2_17_x86_64"))
    assert [f["symbols"] for f in fs if f["code"] == "WA601"] == [["_PyObject_GetMethod"]]
