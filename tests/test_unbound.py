"""WA506, an imported symbol that no library it can bind to defines, on real binaries
(fixtures/build_unbound.sh): ``wheelaudit check`` in a subprocess, its exit status and its
JSON findings. An extension module ``_unb`` imports prov_a, prov_b, prov_opt (weakly) and
Python's PyLong_FromLong; each wheel ships it beside the provider it was linked against or a
doctored later build (prov_b renamed, or moved from version node PROV_1 to PROV_2).

ELF verdicts are checked against the loader itself: ``ldd -r`` on the unpacked wheel (glibc's
ld.so resolving every relocation) must name exactly the symbols WA506 names, less Python's C
API (which only the interpreter defines).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

WHEELAUDIT = shutil.which("wheelaudit", path=str(Path(sys.executable).parent)) or shutil.which("wheelaudit")

ELF_CLEAN = ["elf_plain", "elf_ver", "elf_plain_on_ver"]
#: scenario -> the symbols WA506 must name
ELF_BROKEN = {
    "elf_plain_renamed": ["prov_b"],
    "elf_ver_renamed": ["prov_b@PROV_1"],
    "elf_ver_node": ["prov_b@PROV_1"],
    "elf_ver_on_plain": ["prov_a@PROV_1", "prov_b@PROV_1"],
}


def check(wheel: Path, *args: str) -> subprocess.CompletedProcess:
    assert WHEELAUDIT, "the wheelaudit command is not installed beside this Python"
    return subprocess.run([WHEELAUDIT, "check", str(wheel), *args], capture_output=True, text=True, timeout=120)


def findings(wheel: Path, *args: str) -> list[dict]:
    p = check(wheel, "--format", "json", *args)
    assert p.returncode in (0, 1), p.stderr
    return [f for w in json.loads(p.stdout)["wheels"] for f in w["findings"]]


def wa506(wheel: Path) -> list[dict]:
    return [f for f in findings(wheel) if f["code"] == "WA506"]


def ldd_verdict(wheel: Path, tmp_path: Path) -> tuple[list[str], str]:
    """What glibc's loader says of the wheel's extension module: the symbols ``ldd -r``
    reports undefined (``name`` or ``name@VERSION``; Python's C API left out), and its output."""
    if shutil.which("ldd") is None:
        pytest.skip("ldd (glibc) is not available")
    tree = tmp_path / wheel.stem
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tree)
    module = next(tree.glob("unb/_unb*.so"))
    p = subprocess.run(["ldd", "-r", str(module)], capture_output=True, text=True, timeout=60)
    text = p.stdout + p.stderr
    out = []
    for name, version in re.findall(r"undefined symbol: ([^\s,]+)(?:, version (\S+))?", text):
        if not name.startswith(("Py", "_Py")):
            out.append(f"{name}@{version}" if version else name)
    return sorted(out), text


# --------------------------------------------------------------------------------------------
# ELF, against the loader


@pytest.mark.parametrize("name", ELF_CLEAN)
def test_elf_imports_that_bind_pass_as_ldd_says(unbound_wheels, name, tmp_path):
    p = check(unbound_wheels[name])
    assert p.returncode == 0, p.stdout + p.stderr
    assert wa506(unbound_wheels[name]) == []
    undefined, text = ldd_verdict(unbound_wheels[name], tmp_path)
    assert undefined == [] and "Inconsistency" not in text, text


@pytest.mark.parametrize("name", sorted(set(ELF_BROKEN) - {"elf_ver_on_plain"}))
def test_elf_unbound_imports_are_wa506_as_ldd_says(unbound_wheels, name, tmp_path):
    wheel = unbound_wheels[name]
    p = check(wheel)
    assert p.returncode == 1 and "WA506" in p.stdout, p.stdout + p.stderr
    [f] = wa506(wheel)
    assert f["severity"] == "error"
    assert f["symbols"] == ELF_BROKEN[name]
    assert f["subject"] == "unb/_unb.cpython-312-x86_64-linux-gnu.so"
    assert "prov_b" in f["message"] and "libc.so.6" in f["message"]  # where it looked
    assert f["hint"]
    assert "PyLong_FromLong" not in f["message"] and "prov_opt" not in f["message"]  # interpreter, weak
    undefined, text = ldd_verdict(wheel, tmp_path)
    assert undefined == f["symbols"], text


def test_elf_a_moved_version_node_names_where_the_symbol_went(unbound_wheels):
    [f] = wa506(unbound_wheels["elf_ver_node"])
    assert "prov_b@PROV_2" in f["message"]
    assert f["paths"] == ["unb/_unb.cpython-312-x86_64-linux-gnu.so", "unb/libprov.so"]


def test_elf_versioned_imports_on_an_unversioned_provider_abort_the_loader(unbound_wheels, tmp_path):
    # glibc's ld.so warns "no version information available", then fails the assertion in
    # check_match when it binds a versioned import to the library its requirement names
    wheel = unbound_wheels["elf_ver_on_plain"]
    [f] = wa506(wheel)
    assert f["symbols"] == ELF_BROKEN["elf_ver_on_plain"]
    assert "without symbol versions" in f["message"]
    _undefined, text = ldd_verdict(wheel, tmp_path)
    assert "no version information available" in text and "Inconsistency detected by ld.so" in text, text


def test_a_closure_member_without_export_data_reports_nothing(unbound_wheels):
    # libprov.so is not shipped: WA501 names it, and any import could come from it
    got = sorted(f["code"] for f in findings(unbound_wheels["elf_no_provider"]))
    assert got == ["WA501"]


# --------------------------------------------------------------------------------------------
# Mach-O and PE: the library is named per import


def test_macho_two_level_import_missing_from_its_library(unbound_wheels):
    assert check(unbound_wheels["macho"]).returncode == 0
    assert wa506(unbound_wheels["macho"]) == []
    [f] = wa506(unbound_wheels["macho_renamed"])
    assert f["symbols"] == ["prov_b"]  # not prov_opt (weak import), not PyLong_FromLong (flat)
    assert "@rpath/libprov.dylib" in f["message"] and f["paths"][1] == "unb/libprov.dylib"


def test_pe_import_missing_from_its_dll(unbound_wheels):
    assert check(unbound_wheels["pe"]).returncode == 0
    assert wa506(unbound_wheels["pe"]) == []
    [f] = wa506(unbound_wheels["pe_renamed"])
    assert f["symbols"] == ["prov_b"]  # python312.dll's PyLong_FromLong: no data, not reported
    assert "prov.dll" in f["message"] and f["paths"] == ["unb/_unb.cp312-win_amd64.pyd", "unb/prov.dll"]


def test_wa506_can_be_ignored_like_any_code(unbound_wheels):
    wheel = unbound_wheels["elf_plain_renamed"]
    p = check(wheel, "--ignore", "WA506")
    assert p.returncode == 0, p.stdout + p.stderr


# --------------------------------------------------------------------------------------------
# the reader facts WA506 stands on


def test_readers_record_weak_imports_and_the_macho_library_of_each_import(unbound_libs):
    from wheelaudit.model.binary import MACHO_FLAT
    from wheelaudit.binary import read_binary

    elf = read_binary((unbound_libs / "elf" / "_unb_ver.so").read_bytes(), "_unb_ver.so").slices[0]
    assert "prov_opt" in elf.weak_imports and "prov_b" not in elf.weak_imports
    assert elf.import_versions["prov_b"] == "PROV_1"
    macho = read_binary((unbound_libs / "macho" / "_unb.so").read_bytes(), "_unb.so").slices[0]
    assert sorted(macho.imports_from["@rpath/libprov.dylib"]) == ["prov_a", "prov_b", "prov_opt"]
    assert macho.imports_from[MACHO_FLAT] == ["PyLong_FromLong"]  # -undefined dynamic_lookup
    assert macho.weak_imports == ["prov_opt"]
