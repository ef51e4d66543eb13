#!/usr/bin/env python3
"""Regenerate ``src/wheelaudit/platforms/data/windows.json``: which DLLs a clean Windows provides.

Source: delvewheel's ``delvewheel/_dll_list.py`` (generated upstream from its ``dll_lists/``:
every DLL with exports found on the installation media of Windows 7 SP1, 8, 8.1, 10 and 11, per
architecture). The file is read as text and its literal sets evaluated with ``ast.literal_eval``;
nothing downloaded is imported or run.

Written per machine (the PE reader's names: x86, x86_64, arm64): the lowercase system DLL names;
then the API-set prefixes, the DLLs that CPython's Windows installer puts beside python.exe, the
Universal CRT, and the MSVC redistributable DLLs that a wheel must ship itself.

Usage: python scripts/regen_windows_dlls.py [--wheel delvewheel-X.whl] [--version X.Y.Z]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _regen_util import POLICYDATA, header, pip_download, read_member, wheel_version, write_json  # noqa: E402

COMMAND = "python scripts/regen_windows_dlls.py"

# delvewheel's variable per machine -> our PE reader's machine name
MACHINES = {"ignore_names_x86": "x86", "ignore_names_x64": "x86_64", "ignore_names_arm64": "arm64"}

# Resolved by the loader through the API-set schema, never looked up as files.
API_SET_PREFIXES = ["api-ms-win-", "ext-ms-"]

# What CPython's Windows installer (python.org, and the nuget / embeddable packages) puts beside
# python.exe, so an extension module may import them without shipping them. x86 builds have no
# vcruntime140_1.dll (it holds the x64/arm64 exception-handling entry points, __CxxFrameHandler4).
# python3X.dll (python313.dll, python313t.dll for the free-threaded build) is a pattern.
PYTHON_RUNTIME = {
    "x86": ["python3.dll", "vcruntime140.dll"],
    "x86_64": ["python3.dll", "vcruntime140.dll", "vcruntime140_1.dll"],
    "arm64": ["python3.dll", "vcruntime140.dll", "vcruntime140_1.dll"],
}
PYTHON_DLL_PATTERN = r"python3[0-9]+t?\.dll"

# The Universal CRT: part of Windows 10 and later; on 7 / 8.1 it comes with Windows Update
# (KB2999226), which CPython's installer requires (CPython 3.5+ links it through api-ms-win-crt-*).
UNIVERSAL_CRT = ["ucrtbase.dll"]

# In-box since Windows 8.1 (CPython 3.9 to 3.12 need Windows 8.1 or newer, PEP 11), though not on
# the Windows 7 SP1 that delvewheel's ignore lists also cover: D3DCompiler_47.dll (Microsoft:
# "part of Windows 8.1 and later"; KB4019990 brings it to Windows 7); combase.dll (COM's base,
# Windows 8), GdiPlus.dll (in System32 since Windows 8; Windows 7 keeps it in WinSxS only) and
# SHCore.dll (Windows 8.1): each in delvewheel's dll_lists/8.1/System32.txt and absent from
# dll_lists/7 SP1/System32.txt (github.com/adang1345/delvewheel, commit 95932c4, not shipped in its
# wheel or sdist). A wheel whose interpreters all need CPython 3.9+ finds them; another one is
# told that they are missing on Windows 7 (a warning).
SINCE_WINDOWS_8_1 = ["combase.dll", "d3dcompiler_47.dll", "gdiplus.dll", "shcore.dll"]

# In-box since Windows 10 (CPython 3.13+ needs Windows 10 or newer: "Python 3.13 supports
# Windows 10 and newer. If you require Windows 8.1 support, please install Python 3.12",
# Doc/using/windows.rst, python/cpython#124822): D3D12.dll (Direct3D 12, a Windows 10 component)
# and the system ICU, icuuc.dll / icuin.dll (Windows 10 version 1703 and later; earlier Windows 10
# versions are out of support). Qt 6 needs them (and Windows 10 itself).
SINCE_WINDOWS_10 = ["d3d12.dll", "icuin.dll", "icuuc.dll"]

# MSVC redistributable DLLs (Visual C++ 2015-2022, v14.x) that are not part of Windows: a wheel
# whose binaries import them must ship them (delvewheel vendors them; the "VC++ redistributable"
# is not on a clean machine). vcruntime140*.dll is the exception above: CPython ships it.
MSVC_REDISTRIBUTABLE = [
    "concrt140.dll",
    "mfc140.dll", "mfc140u.dll", "mfcm140.dll", "mfcm140u.dll",
    "msvcp140.dll", "msvcp140_1.dll", "msvcp140_2.dll", "msvcp140_atomic_wait.dll",
    "msvcp140_codecvt_ids.dll",
    "vcamp140.dll", "vccorlib140.dll", "vcomp140.dll", "vcruntime140_threads.dll",
]


# The debug build of the Visual C++ runtime (Debug configurations link it): only Visual Studio
# installs it, and Microsoft does not allow redistributing it ("Debug versions of an application
# are not redistributable", learn.microsoft.com/cpp/windows/determining-which-dlls-to-redistribute):
# a binary that imports one loads on no user's machine.
DEBUG_RUNTIME = ["concrt140d.dll", "mfc140d.dll", "mfc140ud.dll", "msvcp140_1d.dll", "msvcp140_2d.dll",
                 "msvcp140d.dll", "msvcp140d_atomic_wait.dll", "ucrtbased.dll", "vccorlib140d.dll",
                 "vcomp140d.dll", "vcruntime140_1d.dll", "vcruntime140d.dll"]


def _literal_assignments(source: str) -> dict[str, object]:
    """Top-level ``NAME = <literal>`` of a module, evaluated without running it; for a set of
    ``re.compile(<str>)`` calls, the pattern strings."""
    out: dict[str, object] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        try:
            out[name] = ast.literal_eval(node.value)
            continue
        except ValueError:
            pass
        calls = []
        values = node.value.elts if isinstance(node.value, (ast.Set, ast.List, ast.Tuple)) else [node.value]
        for v in values:
            if isinstance(v, ast.Call) and v.args and isinstance(v.args[0], ast.Constant) and isinstance(v.args[0].value, str):
                calls.append(v.args[0].value)
        if calls:
            out[name] = calls
    return out


def build(wheel: Path) -> dict:
    version = wheel_version(wheel)
    found = read_member(wheel, "delvewheel/_dll_list.py")
    if found is None:
        raise SystemExit(f"delvewheel {version}: _dll_list.py not found in {wheel.name}")
    member, data = found
    lits = _literal_assignments(data.decode("utf-8"))
    system: dict[str, list[str]] = {}
    for var, machine in MACHINES.items():
        names = lits.get(var)
        if not isinstance(names, (set, frozenset)):
            raise SystemExit(f"delvewheel {version}: {var} is not a literal set in {member}")
        system[machine] = sorted({n.lower() for n in names})
    vc_redist = lits.get("vc_redist")
    vc_pattern = vc_redist[0] if isinstance(vc_redist, list) else None
    # Invariant the data relies on: none of the DLLs we say must ship is on a clean Windows.
    for machine, names in system.items():
        clash = sorted(set(names) & (set(MSVC_REDISTRIBUTABLE) | set(PYTHON_RUNTIME[machine])))
        if clash:
            raise SystemExit(f"delvewheel {version} lists {clash} as present on a clean {machine} Windows")
    redist_on_clean = {m: sorted(n for n in names if vc_pattern and re.fullmatch(vc_pattern, n))
                       for m, names in system.items()}
    return {
        "header": header(f"adang1345/delvewheel (MIT licence): {member}", version, COMMAND),
        "comment": ("system: per machine, the lowercase names of the DLLs present on every clean Windows "
                    "7 SP1 to 11 installation of that architecture (arm64: 10 and 11), from delvewheel's "
                    "ignore_names_* lists. api_set_prefixes: names the loader resolves through the API-set "
                    "schema. python_runtime: what CPython's Windows installer ships beside python.exe "
                    "(plus python_dll_pattern, python3X.dll). universal_crt: part of Windows 10+, and of "
                    "every Windows that CPython 3.5+ installs on. since_windows_8_1: in-box on Windows "
                    "8.1 and later, so present wherever CPython 3.9+ runs; since_windows_10: in-box on "
                    "Windows 10 and later, where CPython 3.13+ runs. msvc_redistributable: Visual C++ "
                    "runtime DLLs that are NOT on a clean Windows: a wheel that imports them must ship "
                    "them. debug_runtime: the debug build of that runtime, on no user's machine and not "
                    "redistributable. redistributable_on_clean_windows: the old system CRTs (msvcrt.dll, "
                    "msvcp60.dll, mfc42.dll...) that delvewheel's vc_redist pattern matches but Windows "
                    "itself carries."),
        "api_set_prefixes": API_SET_PREFIXES,
        "python_runtime": PYTHON_RUNTIME,
        "python_dll_pattern": PYTHON_DLL_PATTERN,
        "universal_crt": UNIVERSAL_CRT,
        "since_windows_8_1": SINCE_WINDOWS_8_1,
        "since_windows_10": SINCE_WINDOWS_10,
        "msvc_redistributable": MSVC_REDISTRIBUTABLE,
        "debug_runtime": DEBUG_RUNTIME,
        "delvewheel_vc_redist_pattern": vc_pattern,
        "delvewheel_ignore_regexes": sorted(lits.get("ignore_regexes", [])),
        "redistributable_on_clean_windows": redist_on_clean,
        "system": system,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", type=Path, help="a delvewheel wheel already downloaded")
    ap.add_argument("--version", help="delvewheel version to download (default: the latest)")
    ap.add_argument("--out", type=Path, default=POLICYDATA / "windows.json")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or pip_download("delvewheel" + (f"=={args.version}" if args.version else ""), Path(tmp))
        doc = build(wheel)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, doc)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes; "
          + ", ".join(f"{m} {len(v)}" for m, v in doc["system"].items()) + " system DLLs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
