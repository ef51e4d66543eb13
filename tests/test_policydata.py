"""The policy data shipped as JSON (``wheelaudit.platforms.policydata``, ``policies/*.json``) and the
``scripts/regen_*.py`` that regenerate it.

The shipped files are checked for shape and against facts known from their upstreams; each
script is run as a maintainer runs it, on a small wheel built here in its upstream's layout (the
real downloads are ``network`` tests).
"""
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from wheelaudit.platforms import policydata
from wheelaudit.platforms.tags import manylinux_policy, policy_data
from wheelaudit.platforms.policydata import (
    elf_external_exports,
    linux_policy,
    policy_allows_version,
    stable_abi_entry,
    stable_abi_symbol,
    windows_dll_origin,
    windows_system_dlls,
)
from wheelaudit.binary.elf import parse

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
DATA_FILES = ["manylinux", "musllinux", "android", "windows", "stable_abi", "elf_exports", "providers"]


def _vt(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


# --------------------------------------------------------------------------------------------
# every file


@pytest.mark.parametrize("name", DATA_FILES)
def test_each_data_file_has_a_header_naming_its_source_and_command(name):
    header = policydata.load(name)["header"]
    assert set(header) >= {"source", "upstream_version", "generated", "command"}
    assert header["source"] and header["upstream_version"]
    datetime.date.fromisoformat(header["generated"])
    script = header["command"].split()[1]
    assert script.startswith("scripts/regen_") and (ROOT / script).is_file()


def test_the_data_files_are_package_data():
    text = (ROOT / "pyproject.toml").read_text()
    assert '"platforms/data/*.json"' in text


# --------------------------------------------------------------------------------------------
# manylinux / musllinux / android policies


def test_manylinux_2_17_allows_glibc_2_17_and_not_2_18_except_on_aarch64():
    assert policy_allows_version("manylinux_2_17", "x86_64", "GLIBC_2.17") is True
    assert policy_allows_version("manylinux2014", "x86_64", "GLIBC_2.18") is False
    # auditwheel's manylinux2014 aarch64 policy: glibc 2.17 there carries GLIBC_2.18 nodes
    assert policy_allows_version("manylinux2014", "aarch64", "GLIBC_2.18") is True
    assert policy_allows_version("manylinux_2_17", "x86_64", "GLIBCXX_3.4.19") is True
    assert policy_allows_version("manylinux_2_17", "x86_64", "GLIBCXX_3.4.20") is False
    assert policy_allows_version("manylinux_2_17", "x86_64", "CXXABI_TM_1") is True
    assert policy_allows_version("manylinux_2_28", "x86_64", "ZLIB_1.2.9") is True
    assert policy_allows_version("manylinux_2_99", "x86_64", "GLIBC_2.17") is None
    assert policy_allows_version("manylinux_2_17", "sparc", "GLIBC_2.17") is None


def test_policy_names_and_aliases():
    assert linux_policy("manylinux1")["name"] == "manylinux_2_5"
    assert linux_policy("manylinux2010")["name"] == "manylinux_2_12"
    assert linux_policy("musllinux_1_2")["lib_whitelist"] == ["libc.so", "libz.so.1"]
    assert linux_policy("linux") is None  # auditwheel's catch-all is not a policy
    android = linux_policy("android_24")
    assert "libc.so" in android["lib_whitelist"] and "libvulkan.so" in android["lib_whitelist"]


def test_ceilings_are_the_highest_of_each_prefix_in_the_version_lists():
    many, _musl = policy_data()
    for entry in many["manylinux"]:
        for arch, prefixes in entry["symbol_versions"].items():
            for prefix, versions in prefixes.items():
                numeric = [v for v in versions if v.replace(".", "").isdigit()]
                if numeric:
                    assert entry["ceilings"][arch][prefix] == max(numeric, key=_vt), (entry["name"], arch, prefix)
        # glibc 2.37 defined no new version node, so manylinux_2_37's GLIBC ceiling is 2.36
        glibc = _vt(entry["name"].split("_", 1)[1].replace("_", "."))
        assert (2, 5) <= _vt(entry["ceilings"]["x86_64"]["GLIBC"]) <= glibc


def test_the_policy_model_reads_the_regenerated_files():
    pol = manylinux_policy((2, 28))
    assert pol.name == "manylinux_2_28" and "libstdc++.so.6" in pol.libs
    assert pol.ceiling("x86_64", "GLIBCXX") == "3.4.24"
    assert pol.ceiling("x86_64", "ZLIB") and pol.ceiling("x86_64", "GCC")


def test_blacklists_keep_auditwheels_forbidden_imports():
    assert "__cxa_thread_atexit_impl" in linux_policy("manylinux_2_17")["blacklist"]["libc.so.6"]
    assert "_tr_init" in linux_policy("manylinux_2_28")["blacklist"]["libz.so.1"]


# --------------------------------------------------------------------------------------------
# Windows


@pytest.mark.parametrize("machine", ["x86", "x86_64", "arm64"])
def test_windows_system_dlls_per_machine(machine):
    system = windows_system_dlls(machine)
    assert len(system) > 1000
    assert {"kernel32.dll", "user32.dll", "advapi32.dll", "ws2_32.dll", "msvcrt.dll"} <= system
    assert all(name == name.lower() for name in system)
    assert not system & set(policydata.load("windows")["msvc_redistributable"])
    assert "vcruntime140.dll" not in system and "msvcp140.dll" not in system


def test_windows_dll_origins():
    assert windows_dll_origin("vcruntime140.dll", "x86_64") == "python"
    assert windows_dll_origin("VCRUNTIME140_1.dll", "x86_64") == "python"
    assert windows_dll_origin("vcruntime140_1.dll", "x86") is None  # 32-bit CPython has none
    assert windows_dll_origin("python3.dll", "arm64") == "python"
    assert windows_dll_origin("python313t.dll", "x86_64") == "python"
    assert windows_dll_origin("api-ms-win-crt-runtime-l1-1-0.dll", "x86_64") == "api-set"
    assert windows_dll_origin("ext-ms-win-ntuser-window-l1-1-0.dll", "x86") == "api-set"
    assert windows_dll_origin("ucrtbase.dll", "x86_64") == "ucrt"
    assert windows_dll_origin("KERNEL32.dll", "x86") == "system"
    for redist in ("msvcp140.dll", "msvcp140_1.dll", "msvcp140_2.dll", "msvcp140_atomic_wait.dll",
                   "msvcp140_codecvt_ids.dll", "vcomp140.dll", "concrt140.dll", "vccorlib140.dll"):
        assert windows_dll_origin(redist, "x86_64") == "redistributable", redist
    assert windows_dll_origin("libopenblas.dll", "x86_64") is None
    # in-box from a later Windows on: there for a wheel whose interpreters need that Windows
    assert windows_dll_origin("GdiPlus.dll", "x86_64") == "windows-8.1"
    assert windows_dll_origin("GdiPlus.dll", "x86_64", "8.1") == "system"
    assert windows_dll_origin("d3d12.dll", "x86_64", "8.1") == "windows-10"
    assert windows_dll_origin("D3D12.dll", "x86_64", "10") == "system"
    assert windows_dll_origin("VCRUNTIME140D.dll", "x86_64") == "debug-runtime"
    assert windows_dll_origin("ucrtbased.dll", "x86") == "debug-runtime"
    assert windows_system_dlls("armv7") == frozenset()


# --------------------------------------------------------------------------------------------
# Stable ABI


def test_stable_abi_known_symbols():
    assert stable_abi_symbol("PyList_New") == "3.2"
    assert stable_abi_entry("PyList_New") == {"kind": "function", "added": "3.2", "abi_only": False}
    assert stable_abi_entry("PyExc_TypeError")["kind"] == "data"
    assert stable_abi_symbol("PyUnicode_AsUTF8AndSize") == "3.10"
    assert stable_abi_symbol("PyType_FromModuleAndSpec") == "3.10"
    assert stable_abi_symbol("Py_IncRef") == "3.2"
    assert stable_abi_entry("_Py_Dealloc")["abi_only"] is True  # called by Py_DECREF
    assert stable_abi_entry("PyErr_SetFromWindowsErr")["ifdef"] == "MS_WINDOWS"
    assert stable_abi_symbol("PyUnicode_AsUTF8") is None  # not in the Stable ABI
    assert stable_abi_symbol("_PyObject_GetDictPtr") is None
    assert stable_abi_symbol("PyInit_foo") is None


def test_stable_abi_is_well_formed():
    symbols = policydata.load("stable_abi")["symbols"]
    assert len(symbols) > 900
    for name, e in symbols.items():
        assert e["kind"] in ("function", "data"), name
        assert _vt(e["added"]) >= (3, 2), name
        assert isinstance(e["abi_only"], bool)


# --------------------------------------------------------------------------------------------
# External libraries' exports (WA506)


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_glibc_exports_grow_with_the_policy(arch):
    old = elf_external_exports("libc.so.6", "manylinux_2_17", arch)
    new = elf_external_exports("libc.so.6", "manylinux_2_28", arch)
    assert {"memcpy", "malloc", "printf", "dlopen", "pthread_create"} <= old
    assert "reallocarray" not in old and "reallocarray" in new  # GLIBC_2.26
    assert old < new
    assert "arc4random" not in new and "arc4random" in elf_external_exports("libc.so.6", "manylinux_2_36", arch)


def test_libstdcxx_and_libgcc_exports_follow_the_policy():
    create = "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm"  # GLIBCXX_3.4.21
    assert create not in elf_external_exports("libstdc++.so.6", "manylinux2014", "x86_64")
    assert create in elf_external_exports("libstdc++.so.6", "manylinux_2_28", "x86_64")
    assert "__cxa_throw" in elf_external_exports("libstdc++.so.6", "manylinux1", "x86_64")
    assert "_Unwind_Resume" in elf_external_exports("libgcc_s.so.1", "manylinux1", "x86_64")
    assert "cos" in elf_external_exports("libm.so.6", "manylinux_2_17", "aarch64")


def test_policy_blacklist_is_left_out():
    zlib = elf_external_exports("libz.so.1", "manylinux_2_28", "x86_64")
    assert "inflate" in zlib and "deflateInit2_" in zlib
    assert "_tr_init" not in zlib
    assert "__cxa_thread_atexit_impl" not in elf_external_exports("libc.so.6", "manylinux_2_17", "x86_64")


def test_no_data_is_none():
    assert elf_external_exports("libX11.so.6", "manylinux_2_28", "x86_64") is None
    assert elf_external_exports("libc.so.6", "musllinux_1_2", "x86_64") is None
    assert elf_external_exports("libc.so.6", "manylinux_2_28", "ppc64le") is None
    assert elf_external_exports("libc.so.6", "manylinux_2_30", "x86_64") is None  # not a policy
    assert elf_external_exports("libc.so.6", "no-such-policy", "x86_64") is None


def test_the_data_covers_every_manylinux_policy():
    """A new manylinux policy above the data's glibc / GCC makes the loader answer None: this
    fails first, asking for scripts/regen_external_exports.py against a newer Debian."""
    for entry in policy_data()[0]["manylinux"]:
        for arch in ("x86_64", "aarch64"):
            if arch not in entry["symbol_versions"]:
                continue
            for soname in ("libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"):
                assert elf_external_exports(soname, entry["name"], arch) is not None, (entry["name"], arch, soname)


def test_the_data_agrees_with_this_hosts_glibc():
    """Cross-check with a glibc that did not come from the data's source: every public export
    of this host's libc / libstdc++ is in the export set of the policy of its glibc."""
    libc = Path("/lib/x86_64-linux-gnu/libc.so.6")
    if not libc.is_file():
        pytest.skip("not an x86_64 Debian-style host")
    host = parse(libc.read_bytes())[0]
    versions = [_vt(x.version.split("_")[1]) for x in host.exports
                if x.version and x.version.startswith("GLIBC_2") and x.name != x.version]
    top = max(versions)
    policy = f"manylinux_{top[0]}_{top[1]}"
    if linux_policy(policy) is None:
        pytest.skip(f"no policy {policy} for this host's glibc")
    for soname in ("libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"):
        path = Path("/lib/x86_64-linux-gnu") / soname
        if not path.is_file():
            continue
        names = {x.name for x in parse(path.read_bytes())[0].exports
                 if x.version and x.version != "GLIBC_PRIVATE" and x.name != x.version}
        ours = elf_external_exports(soname, policy, "x86_64")
        if ours is None:
            continue  # the host's libstdc++ is newer than the policy allows
        blacklist = set(linux_policy(policy)["blacklist"].get(soname, ()))
        assert names - ours - blacklist == set(), soname


def test_elf_exports_stays_small():
    path = ROOT / "src" / "wheelaudit" / "platforms" / "data" / "elf_exports.json"
    assert path.stat().st_size < 2_000_000


# --------------------------------------------------------------------------------------------
# the scripts, run as a maintainer runs them, on wheels in their upstreams' layout


def _wheel(tmp_path: Path, name: str, members: dict[str, str]) -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        for member, text in members.items():
            z.writestr(member, text)
    return path


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PIP_NO_INDEX": "1"}  # never the network here
    proc = subprocess.run([sys.executable, str(SCRIPTS / script), *args], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_regen_policies_from_an_auditwheel_wheel(tmp_path):
    policy = [
        {"name": "linux", "aliases": [], "priority": 0, "symbol_versions": {}, "lib_whitelist": [], "blacklist": {}},
        {"name": "manylinux_2_17", "aliases": ["manylinux2014"], "priority": 80,
         "symbol_versions": {"x86_64": {"GLIBC": ["2.2.5", "2.17", "2.3"], "CXXABI": ["1.3", "TM_1", "FLOAT128"],
                                        "GLIBCXX": ["3.4", "3.4.19"], "ZLIB": ["1.2.0"]}},
         "lib_whitelist": ["libc.so.6", "libz.so.1"], "blacklist": {"libz.so.1": ["_tr_init"]}},
    ]
    musl = [{"name": "musllinux_1_2", "aliases": [], "priority": 90, "symbol_versions": {"x86_64": {}},
             "lib_whitelist": ["libc.so"], "blacklist": {}}]
    wheel = _wheel(tmp_path, "auditwheel-9.8.7-py3-none-any.whl", {
        "auditwheel/policy/manylinux-policy.json": json.dumps(policy),
        "auditwheel/policy/musllinux-policy.json": json.dumps(musl),
    })
    out = tmp_path / "out"
    proc = _run("regen_policies.py", "--wheel", str(wheel), "--out", str(out))
    assert "no android policy" in proc.stderr
    many = json.loads((out / "manylinux.json").read_text())
    assert many["header"]["upstream_version"] == "9.8.7"
    assert many["header"]["command"] == "python scripts/regen_policies.py"
    (entry,) = many["manylinux"]
    assert entry["lib_whitelist"] == "set1" and many["lib_sets"]["set1"] == ["libc.so.6", "libz.so.1"]
    assert entry["ceilings"] == {"x86_64": {"CXXABI": "1.3", "CXXABI_TM": "1", "GLIBC": "2.17",
                                            "GLIBCXX": "3.4.19", "ZLIB": "1.2.0"}}
    assert entry["symbol_versions"]["x86_64"]["CXXABI"] == ["1.3", "TM_1", "FLOAT128"]
    assert entry["blacklist"] == {"libz.so.1": ["_tr_init"]}
    assert json.loads((out / "musllinux.json").read_text())["musllinux"][0]["name"] == "musllinux_1_2"
    assert not (out / "android.json").exists()


def test_regen_windows_dlls_from_a_delvewheel_wheel(tmp_path):
    source = '''
import re
ignore_regexes = {re.compile(r'python[0-9]+t?(_d)?\\.dll'), re.compile('api-.*')}
vc_redist = re.compile(r'((vcruntime\\d.*)|(msvcp[\\d_].*)|(msvcr(t|\\d.*)))\\.dll')
ignore_names_x86 = {'KERNEL32.dll', 'msvcrt.dll'}
ignore_names_x64 = {'kernel32.dll', 'user32.dll'}
ignore_names_arm64 = {'kernel32.dll', 'ucrtbase.dll'}
ignore_names = {1: ignore_names_x86}
'''
    wheel = _wheel(tmp_path, "delvewheel-1.2.3-py3-none-any.whl", {"delvewheel/_dll_list.py": source})
    out = tmp_path / "windows.json"
    _run("regen_windows_dlls.py", "--wheel", str(wheel), "--out", str(out))
    doc = json.loads(out.read_text())
    assert doc["header"]["upstream_version"] == "1.2.3"
    assert doc["system"] == {"x86": ["kernel32.dll", "msvcrt.dll"], "x86_64": ["kernel32.dll", "user32.dll"],
                             "arm64": ["kernel32.dll", "ucrtbase.dll"]}
    assert doc["redistributable_on_clean_windows"]["x86"] == ["msvcrt.dll"]
    assert "api-.*" in doc["delvewheel_ignore_regexes"]


def test_regen_windows_dlls_refuses_a_list_that_has_a_redistributable(tmp_path):
    source = "ignore_names_x86 = {'msvcp140.dll'}\nignore_names_x64 = set()\nignore_names_arm64 = set()\n"
    wheel = _wheel(tmp_path, "delvewheel-1.2.3-py3-none-any.whl", {"delvewheel/_dll_list.py": source})
    proc = subprocess.run([sys.executable, str(SCRIPTS / "regen_windows_dlls.py"), "--wheel", str(wheel),
                           "--out", str(tmp_path / "w.json")], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "msvcp140.dll" in proc.stderr
    assert not (tmp_path / "w.json").exists()


def test_regen_stable_abi_from_an_abi3info_wheel(tmp_path):
    source = '''
_FUNCTIONS: Final[dict[Symbol, Function]] = {
    Symbol(name="PyList_New", visibility=None): Function(
        symbol=Symbol(name="PyList_New", visibility=None),
        added=PyVersion(major=3, minor=2), ifdef=None, abi_only=False),
    Symbol(name="PyErr_SetFromWindowsErr", visibility=None): Function(
        symbol=Symbol(name="PyErr_SetFromWindowsErr", visibility=None),
        added=PyVersion(major=3, minor=7),
        ifdef=FeatureMacro(name="MS_WINDOWS", doc="on Windows", windows=True), abi_only=False),
}
_DATAS: Final[dict[Symbol, Data]] = {
    Symbol(name="_Py_NoneStruct", visibility=None): Data(
        symbol=Symbol(name="_Py_NoneStruct", visibility=None),
        added=PyVersion(major=3, minor=2), ifdef=None, abi_only=True),
}
_MACROS: Final[dict[str, Macro]] = {"Py_T_INT": Macro(name="Py_T_INT", added=PyVersion(major=3, minor=12))}
'''
    wheel = _wheel(tmp_path, "abi3info-2030.1.1-py3-none-any.whl", {"abi3info/_internal.py": source})
    out = tmp_path / "stable_abi.json"
    _run("regen_stable_abi.py", "--wheel", str(wheel), "--out", str(out))
    doc = json.loads(out.read_text())
    assert doc["header"]["upstream_version"] == "2030.1.1" and doc["header"]["newest_added"] == "3.7"
    assert doc["symbols"] == {
        "PyErr_SetFromWindowsErr": {"kind": "function", "added": "3.7", "abi_only": False, "ifdef": "MS_WINDOWS"},
        "PyList_New": {"kind": "function", "added": "3.2", "abi_only": False},
        "_Py_NoneStruct": {"kind": "data", "added": "3.2", "abi_only": True},
    }


# --------------------------------------------------------------------------------------------
# against the real upstreams (downloads; not in the default run)


def _same_but_date(a: dict, b: dict) -> bool:
    a, b = dict(a), dict(b)
    a["header"] = {k: v for k, v in a["header"].items() if k != "generated"}
    b["header"] = {k: v for k, v in b["header"].items() if k != "generated"}
    return a == b


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("script, outputs", [
    ("regen_policies.py", ["manylinux.json", "musllinux.json", "android.json"]),
    ("regen_windows_dlls.py", ["windows.json"]),
    ("regen_stable_abi.py", ["stable_abi.json"]),
])
def test_shipped_data_is_what_the_latest_upstream_gives(tmp_path, script, outputs):
    """Fails when upstream moved on: regenerate and commit (the header says with what)."""
    args = ["--out", str(tmp_path if script == "regen_policies.py" else tmp_path / outputs[0])]
    subprocess.run([sys.executable, str(SCRIPTS / script), *args], check=True, timeout=600)
    for out in outputs:
        name = out.removesuffix(".json")
        assert _same_but_date(json.loads((tmp_path / out).read_text()), policydata.load(name)), out
