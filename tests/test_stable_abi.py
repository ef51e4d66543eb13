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


# ---- Windows: an import is bound to a DLL; only the interpreter's DLL speaks for CPython -------

_SHIM_C = """
__declspec(dllexport) void *PyRun_String(const char *s, int start, void *g, void *l) { return 0; }
"""
_EXT_C = """
typedef struct _object PyObject;
__declspec(dllimport) PyObject *PyList_New(long);
__declspec(dllimport) void *PyRun_String(const char *, int, void *, void *);
__declspec(dllexport) PyObject *PyInit__ext(void) { PyRun_String("", 0, 0, 0); return PyList_New(0); }
"""


def _pe_module(tmp_path: Path, shim_exports_it: bool) -> Path:
    """``_ext.pyd`` importing PyList_New from python3.dll and PyRun_String from shim.dll (as
    PySide6 imports ``PyRun_String`` from shiboken6.abi3.dll), or both from python3.dll."""
    gcc, dlltool = "x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-dlltool"
    if shutil.which(gcc) is None or shutil.which(dlltool) is None:
        pytest.fail("MinGW-w64 is missing: apt-get install -y gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64",
                    pytrace=False)
    (tmp_path / "python3.def").write_text("LIBRARY python3.dll\nEXPORTS\nPyList_New\n"
                                          + ("" if shim_exports_it else "PyRun_String\n"))
    subprocess.run([dlltool, "-d", str(tmp_path / "python3.def"), "-l", str(tmp_path / "libpython3.a")], check=True)
    libs = [str(tmp_path / "libpython3.a")]
    if shim_exports_it:
        (tmp_path / "shim.c").write_text(_SHIM_C)
        subprocess.run([gcc, "-shared", "-o", str(tmp_path / "shim.dll"), str(tmp_path / "shim.c"),
                        f"-Wl,--out-implib,{tmp_path / 'libshim.a'}"], check=True)
        libs.append(str(tmp_path / "libshim.a"))
    (tmp_path / "ext.c").write_text(_EXT_C)
    out = tmp_path / "_ext.pyd"
    subprocess.run([gcc, "-shared", "-o", str(out), str(tmp_path / "ext.c"), *libs], check=True)
    return out


def _win_wheel(whl: Path, members: dict[str, Path]) -> Path:
    with WheelFile(whl, "w") as wf:
        wf.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        wf.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\n"
                                                "Tag: cp39-abi3-win_amd64\n")
        for arcname, path in members.items():
            wf.write(str(path), arcname)
    return whl


def test_windows_a_python_named_import_from_another_dll_is_that_dlls(tmp_path, capsys):
    shimmed, direct = tmp_path / "shimmed", tmp_path / "direct"
    shimmed.mkdir()
    direct.mkdir()
    whl = _win_wheel(shimmed / "demo-1.0-cp39-abi3-win_amd64.whl",
                     {"demo/_ext.pyd": _pe_module(shimmed, shim_exports_it=True), "demo/shim.dll": shimmed / "shim.dll"})
    rc, fs = _codes(capsys, whl)
    assert [f for f in fs if f["code"] == "WA601"] == []
    # the same name imported from python3.dll is CPython's, outside the Stable ABI
    whl2 = _win_wheel(direct / "demo-1.0-cp39-abi3-win_amd64.whl",
                      {"demo/_ext.pyd": _pe_module(direct, shim_exports_it=False)})
    rc, fs = _codes(capsys, whl2)
    assert [f["symbols"] for f in fs if f["code"] == "WA601"] == [["PyRun_String"]]
