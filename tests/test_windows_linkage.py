"""Windows DLL resolution (WA501 for PE, WA507), as the loader resolves an extension module's
imports: its own folder, the folders its package adds at import time, System32 and the API sets,
and what CPython ships beside python.exe."""
from __future__ import annotations

from pathlib import Path

import pytest

from packaging.tags import parse_tag

from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.archive.dll_directories import dll_directories, folders_in, import_time_loads
from wheelaudit.model.binary import Binary, Dependency, Slice, Symbol
from wheelaudit.checks.linkage import check_linkage
from wheelaudit.checks.resolution import resolution_table
from wheelaudit.scanner import Wheel

WIN = "cp311-cp311-win_amd64"


def pe(path: str, imports=(), delay=(), machine="x86_64", linker=None, version=None) -> Binary:
    deps = [Dependency(n, "import") for n in imports] + [Dependency(n, "delay") for n in delay]
    name = path.rsplit("/", 1)[-1]
    # (a module built by a real toolchain exports its init function)
    exports = [Symbol(f"PyInit_{name.split('.', 1)[0]}")] if name.lower().endswith(".pyd") else []
    return Binary(path=path, format="pe", size=100, slices=[Slice(
        arch=machine, dependencies=deps, linker_version=linker, file_version=version, exports=exports)])


def wheel(libs, dll_dirs=(), tag=WIN) -> Wheel:
    tags = sorted(parse_tag(tag), key=str)
    return Wheel(path=Path(f"demo-1.0-{tag}.whl"), name="demo", version="1.0", tags=[str(t) for t in tags],
                 traits=traits_from_tags(tags, "1.0"), files=[b.path for b in libs], libraries=libs,
                 dll_directories=list(dll_dirs))


def codes(fs):
    return sorted(f.code for f in fs)


def test_system_api_sets_ucrt_and_python_runtime_are_external():
    w = wheel([pe("pkg/_ext.cp311-win_amd64.pyd", ["python311.dll", "KERNEL32.dll", "VCRUNTIME140.dll",
                                                    "VCRUNTIME140_1.dll", "api-ms-win-crt-runtime-l1-1-0.dll",
                                                    "ucrtbase.dll", "ADVAPI32.dll", "python3.dll"])])
    assert check_linkage(w) == []
    table = resolution_table(w)["pkg/_ext.cp311-win_amd64.pyd"]["x86_64"]
    assert table["KERNEL32.dll"].startswith("external: KERNEL32.dll (a system DLL")
    assert "CPython" in table["python311.dll"]


def test_another_cpythons_dll_is_unresolved():
    """A cp311 module that imports python310.dll does not load on 3.11 (that DLL is not there);
    python3.dll and the wheel's own python311.dll are; a py3-none or abi3 wheel names no version
    here (WA601 judges a versioned DLL in an abi3 module)."""
    (f,) = check_linkage(wheel([pe("pkg/_ext.pyd", ["python310.dll"])]))
    assert f.code == "WA501" and "another CPython's DLL" in f.message and "python311.dll" in f.message
    assert check_linkage(wheel([pe("pkg/_ext.pyd", ["python311.dll", "python3.dll"])])) == []
    assert codes(check_linkage(wheel([pe("pkg/_ext.pyd", ["python313.dll"])], tag="cp313-cp313t-win_amd64"))) == ["WA501"]
    assert check_linkage(wheel([pe("pkg/_ext.pyd", ["python313t.dll"])], tag="cp313-cp313t-win_amd64")) == []
    assert check_linkage(wheel([pe("pkg/_ext.pyd", ["python310.dll"])], tag="py3-none-win_amd64")) == []
    assert check_linkage(wheel([pe("pkg/_ext.pyd", ["python310.dll"])], tag="cp310-abi3-win_amd64")) == []


@pytest.mark.parametrize("tag,found", [
    ("cp311-cp311-win_amd64", True), ("cp39-abi3-win_amd64", True), ("pp310-pypy310_pp73-win_amd64", True),
    ("cp38-cp38-win_amd64", False),  # (CPython 3.8 still runs on Windows 7)
    ("py3-none-win_amd64", False),   # (any Python 3: perhaps one on Windows 7)
])
def test_a_dll_in_box_since_windows_8_1_is_there_for_cpython_3_9_and_later(tag, found):
    """D3DCompiler_47.dll, combase.dll, GdiPlus.dll ship with Windows 8.1 and later, the Windows
    that CPython 3.9+ needs (PySide6's vendored vcamp140.dll, ruff.exe, wxPython import them);
    for an interpreter that runs on Windows 7 they are missing there: a warning, not an error."""
    fs = check_linkage(wheel([pe("pkg/vcamp140.dll", ["D3DCOMPILER_47.dll", "combase.dll", "GdiPlus.dll",
                                                      "KERNEL32.dll"])], tag=tag))
    assert (fs == []) is found
    if not found:
        assert [(f.code, f.severity) for f in fs] == [("WA501", "warning")] * 3
        assert "in-box on Windows 8.1 and later only" in fs[0].message and "Windows 7" in fs[0].message


@pytest.mark.parametrize("tag,severity", [
    ("cp313-cp313-win_amd64", None), ("cp314-cp314t-win_amd64", None),
    ("cp310-abi3-win_amd64", "warning"),  # (CPython 3.10 to 3.12 run on Windows 8.1)
    ("py3-none-win_amd64", "warning"),
])
def test_a_dll_in_box_since_windows_10_is_there_for_cpython_3_13_and_later(tag, severity):
    """Qt 6's D3D12.dll and the system ICU (icuuc.dll): in-box on Windows 10, which CPython 3.13+
    needs; a wheel that older interpreters install is told they are missing on Windows 8.1."""
    fs = check_linkage(wheel([pe("pkg/Qt6Gui.dll", ["d3d12.dll", "icuuc.dll", "KERNEL32.dll"])], tag=tag))
    assert [f.severity for f in fs] == ([] if severity is None else [severity, severity])
    if fs:
        assert "in-box on Windows 10 and later only" in fs[0].message and "Windows 10 and later only" in fs[0].hint


def test_the_msvc_redistributable_must_ship():
    w = wheel([pe("pkg/_ext.pyd", ["MSVCP140.dll", "VCOMP140.DLL"])])
    fs = check_linkage(w)
    assert codes(fs) == ["WA501", "WA501"]
    assert all("Visual C++ redistributable" in f.message for f in fs)
    assert all("delvewheel repair" in f.hint and "allow-external" in f.hint for f in fs)
    # shipped beside the module: found, whatever the case of its name
    w = wheel([pe("pkg/_ext.pyd", ["MSVCP140.dll"]), pe("pkg/msvcp140.dll")])
    assert check_linkage(w) == []


def test_import_time_folders_are_searched():
    libs = [pe("pkg/_ext.pyd", ["libopenblas-abc.dll"]), pe("pkg.libs/libopenblas-abc.dll")]
    assert codes(check_linkage(wheel(libs))) == ["WA501"]
    assert check_linkage(wheel(libs, dll_dirs=["pkg.libs"])) == []


def test_delay_loads_missing_are_not_errors():
    w = wheel([pe("pkg/_ext.pyd", delay=["helper_gpu.dll"])])
    assert check_linkage(w) == []
    assert resolution_table(w)["pkg/_ext.pyd"]["x86_64"]["helper_gpu.dll"] == "weak, absent"


def test_stale_vendored_runtime():
    new = pe("pkg/_ext.pyd", ["msvcp140.dll"], linker="14.42")
    old = pe("pkg/msvcp140.dll", version="14.29.30133.0")
    f = [f for f in check_linkage(wheel([new, old])) if f.code == "WA507"]
    assert len(f) == 1 and f[0].severity == "error" and "std::mutex" in f[0].message
    mid = pe("pkg/_ext.pyd", ["msvcp140.dll"], linker="14.36")
    f = [f for f in check_linkage(wheel([mid, old])) if f.code == "WA507"]
    assert len(f) == 1 and f[0].severity == "warning"
    ok = pe("pkg/msvcp140.dll", version="14.42.34433.0")
    assert [f for f in check_linkage(wheel([new, ok])) if f.code == "WA507"] == []


DELVEWHEEL = '''"""numpy"""

# start delvewheel patch
def _delvewheel_patch_1_11_2():
    import os
    if os.path.isdir(libs_dir := os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, 'numpy.libs'))):
        os.add_dll_directory(libs_dir)


_delvewheel_patch_1_11_2()
del _delvewheel_patch_1_11_2
# end delvewheel patch
'''

TORCH = '''
def _load_dll_libraries() -> None:
    py_dll_path = os.path.join(sys.exec_prefix, "Library", "bin")
    th_dll_path = os.path.join(os.path.dirname(__file__), "lib")
    dll_paths = [
        p
        for p in (
            th_dll_path,
            py_dll_path,
        )
        if os.path.exists(p)
    ]
    for dll_path in dll_paths:
        os.add_dll_directory(dll_path)
'''


def test_folders_from_init_files():
    assert folders_in(DELVEWHEEL, "numpy/__init__.py") == ["numpy.libs"]
    assert folders_in(TORCH, "torch/__init__.py") == ["torch/lib"]
    assert folders_in("import os\nos.path.join(os.path.dirname(__file__), 'lib')\n", "x/__init__.py") == []
    assert folders_in("def f(:\n  os.add_dll_directory(x)\n", "x/__init__.py") == []  # not Python: nothing
    texts = {"numpy/__init__.py": DELVEWHEEL, "torch/__init__.py": TORCH, "a/b/__init__.py": "x = 1\n"}
    assert dll_directories(texts, texts.get) == ["numpy.libs", "torch/lib"]


def test_pe_fixture_wheel_clean_and_broken(pe_libs, tmp_path):
    """The fixture .pyd imports a fake python311.dll and KERNEL32.dll: packed as a wheel with its
    import libraries' DLLs absent, it resolves only what Windows provides."""
    import wheelaudit
    from wheel.wheelfile import WheelFile

    pyd = next(Path(pe_libs).rglob("x.pyd"))
    whl = tmp_path / "demo-1.0-cp311-cp311-win_amd64.whl"
    with WheelFile(whl, "w") as wf:
        wf.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        wf.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: cp311-cp311-win_amd64\n")
        wf.write(str(pyd), "demo/x.cp311-win_amd64.pyd")
    report = wheelaudit.audit(whl, select=["WA5"])
    lib = wheelaudit.scan(whl).library("demo/x.cp311-win_amd64.pyd")
    delayed = {d.name for s in lib.slices for d in s.dependencies if d.kind == "delay"}
    assert delayed == {"DELAYED.dll"}
    unresolved = {f.subject for f in report.findings}
    expected = {d for d in lib.dependencies if d.lower() not in ("kernel32.dll", "python311.dll")
                and not d.lower().startswith(("api-ms-win-", "vcruntime140")) and d not in delayed}
    assert unresolved == expected == {"MSVCP140.dll", "ORDLIB.dll"}


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("module", ["demo/x.cp311-win_amd64.pyd", "demo/x.bin"])
def test_a_folder_the_package_adds_serves_its_dlls(pe_libs, tmp_path, jobs, module):
    """``os.add_dll_directory`` in ``__init__.py`` read whether the wheel is read in-process or by
    workers, and whether or not a PE binary's name says it is one (``x.bin``)."""
    import wheelaudit
    from wheel.wheelfile import WheelFile

    pyd = next(Path(pe_libs).rglob("x.pyd"))
    dll = next(Path(pe_libs).rglob("copy.dll"))
    whl = tmp_path / "demo-1.0-cp311-cp311-win_amd64.whl"
    with WheelFile(whl, "w") as wf:
        wf.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        wf.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: cp311-cp311-win_amd64\n")
        wf.writestr("demo/__init__.py", "import os\nos.add_dll_directory(os.path.join(os.path.dirname(__file__), 'libs'))\n")
        wf.write(str(pyd), module)
        wf.write(str(dll), "demo/libs/ORDLIB.dll")
    unresolved = {f.subject for f in wheelaudit.audit(whl, select=["WA501"], jobs=jobs).findings}
    assert unresolved == {"MSVCP140.dll"}  # (ORDLIB.dll found in demo/libs)


def test_import_time_folders_serve_the_install_the_wheels_make_together():
    """Wheels installed together (--together, --env, --find-links): a folder a package adds at
    import time is searched for every binary, as one process imports them (torchvision loads
    torch_cpu.dll from torch/lib after importing torch)."""
    from wheelaudit.scanner.together import merge_wheels

    lib = wheel([pe("lib/_core.pyd", ["libcore-ab12.dll"]), pe("lib.libs/libcore-ab12.dll")], dll_dirs=["lib.libs"])
    lib.name, lib.path = "lib", Path(f"lib-1.0-{WIN}.whl")
    user = wheel([pe("user/_ext.pyd", ["libcore-ab12.dll"])])
    assert check_linkage(merge_wheels([lib])) == []
    assert check_linkage(merge_wheels([lib, user])) == []
    assert codes(check_linkage(user)) == ["WA501"]  # alone it finds nothing


SKLEARN = """
import os
import os.path as op
from ctypes import WinDLL

if os.name == "nt":
    libs_path = op.join(op.dirname(__file__), ".libs")
    vcomp140_dll_filename = op.join(libs_path, "vcomp140.dll")
    msvcp140_dll_filename = op.join(libs_path, "msvcp140.dll")
    WinDLL(op.abspath(vcomp140_dll_filename))
    WinDLL(op.abspath(msvcp140_dll_filename))
"""


def test_pathlib_and_nested_dirname_spellings():
    pathlib_style = "from pathlib import Path\nimport os\nos.add_dll_directory(str(Path(__file__).parent / 'libs'))\n"
    assert folders_in(pathlib_style, "pkg/__init__.py") == ["pkg/libs"]
    resolved = "import os, pathlib\nhere = pathlib.Path(__file__).resolve().parent\nos.add_dll_directory(here.joinpath('bin'))\n"
    assert folders_in(resolved, "pkg/__init__.py") == ["pkg/bin"]
    up = "import os\nos.add_dll_directory(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'x.libs'))\n"
    split = "import os\nhere = os.path.split(__file__)[0]\nos.add_dll_directory(here)\nos.add_dll_directory(os.path.split(here)[0])\n"
    assert folders_in(split, "pkg/sub/__init__.py") == ["pkg/sub", "pkg"]  # (pygame's spelling)
    plus = ("import os, sys\ndll_dir = os.path.dirname(sys.executable)\nif not os.path.isfile(dll_dir + '\\\\Qt5Core.dll'):\n"
            "    dll_dir = os.path.dirname(__file__) + '\\\\Qt5\\\\bin'\nos.add_dll_directory(dll_dir)\n")
    assert folders_in(plus, "PyQt5/__init__.py") == ["PyQt5/Qt5/bin"]  # (PyQt5's spelling)
    assert folders_in("import os\nos.add_dll_directory(os.path.dirname(__file__) + 'bin')\n", "p/__init__.py") == []
    assert folders_in("import os\nos.add_dll_directory('a;b'.split(';')[0])\n", "pkg/__init__.py") == []
    assert folders_in(up, "pkg/sub/__init__.py") == ["pkg/x.libs"]
    loop = ("import os, ctypes\nfrom pathlib import Path\nlibs = Path(__file__).parent.parent / 'y.libs'\n"
            "for name in os.listdir(libs):\n    ctypes.windll.kernel32.LoadLibraryExW(str(libs / name), None, 8)\n")
    assert folders_in(loop, "y/__init__.py") == ["y.libs"]
    assert folders_in("import os\nos.add_dll_directory(__file__)\n", "pkg/__init__.py") == []
    # OpenVINO's spelling: a list appended to, then each entry joined to the package's folder
    # (joining an absolute path drops what came before it)
    appended = ("import os\nlibs = []\nif os.path.isdir(os.path.join(os.path.dirname(__file__), 'libs')):\n"
                "    libs.append(os.path.join(os.path.dirname(__file__), 'libs'))\nfor lib in libs:\n"
                "    lib_path = os.path.join(os.path.dirname(__file__), lib)\n"
                "    os.add_dll_directory(os.path.abspath(lib_path))\n")
    assert folders_in(appended, "openvino/package_utils.py") == ["openvino/libs"]
    assert folders_in("import os\nd = []\nd.append(os.getenv('X'))\nfor x in d:\n    os.add_dll_directory(x)\n",
                      "pkg/__init__.py") == []
    assert folders_in("import os\nos.add_dll_directory(os.path.join(os.path.dirname(__file__), os.getcwd()))\n",
                      "pkg/__init__.py") == []


def test_a_pth_files_startup_import_adds_its_folders():
    """pywin32: ``pywin32.pth`` puts ``win32\\lib`` on sys.path and runs ``import pywin32_bootstrap``
    at every start, which adds the folder of the package ``pywin32_system32`` (pythoncom311.dll,
    pywintypes311.dll) with ``os.add_dll_directory``."""
    from wheelaudit.archive.dll_directories import import_time_loads

    boot = ("try:\n    import pywin32_system32\nexcept ImportError:\n    pass\nelse:\n    import os\n"
            "    for path in pywin32_system32.__path__:\n        if os.path.isdir(path):\n"
            "            os.add_dll_directory(path)\n            break\n")
    texts = {"pywin32.pth": "# comment\nwin32\nwin32\\lib\npythonwin\nimport pywin32_bootstrap\n",
             "win32/lib/pywin32_bootstrap.py": boot, "pywin32_system32/pywintypes311.dll": ""}
    assert import_time_loads(texts, texts.get).folders == ["pywin32_system32"]
    # site runs only lines that start with "import": an indented one is a path, nothing runs
    texts["pywin32.pth"] = "win32\\lib\n import pywin32_bootstrap\n"
    assert import_time_loads(texts, texts.get).folders == []
    # a .pth file inside a package is never read by site
    moved = {"pkg/x.pth": "import boot\n", "boot.py": boot.replace("pywin32_system32", "dlls")}
    assert import_time_loads(moved, moved.get).folders == []


def test_only_what_reaches_the_loader_counts():
    # a folder built from __file__ but never handed to the loader adds nothing
    unrelated = ('import os\nos.add_dll_directory(os.environ.get("X", ""))\n'
                 'DATA_DIR = os.path.join(os.path.dirname(__file__), "data")\n')
    assert folders_in(unrelated, "demo/__init__.py") == []
    # scikit-learn preloads its OpenMP and C++ runtimes by full path in _distributor_init.py
    texts = {"sklearn/__init__.py": "from . import _distributor_init\n", "sklearn/_distributor_init.py": SKLEARN,
             "sklearn/deep/helper.py": SKLEARN}  # (deeper modules are not read)
    loads = import_time_loads(texts, texts.get)
    assert loads.folders == [] and loads.preloaded == ["sklearn/.libs/vcomp140.dll", "sklearn/.libs/msvcp140.dll"]


def test_a_preloaded_dll_serves_every_import_of_its_name():
    libs = [pe("sklearn/svm/_libsvm.pyd", ["VCOMP140.DLL", "MSVCP140.dll"]), pe("sklearn/.libs/vcomp140.dll"),
            pe("sklearn/.libs/msvcp140.dll")]
    w = wheel(libs)
    assert codes(check_linkage(w)) == ["WA501", "WA501"]
    w.preloaded_dlls = ["sklearn/.libs/vcomp140.dll", "sklearn/.libs/msvcp140.dll"]
    assert check_linkage(w) == []
    assert resolution_table(w)["sklearn/svm/_libsvm.pyd"]["x86_64"]["VCOMP140.DLL"] == "sklearn/.libs/vcomp140.dll"


def test_together_a_module_finds_its_own_wheels_copy_first():
    """numpy and pandas both ship msvcp140-<hash>.dll in their own .libs: installed together,
    each module resolves to its own wheel's copy, not to the first wheel's."""
    from wheelaudit.scanner.together import merge_wheels

    def one(name):
        w = wheel([pe(f"{name}/_ext.pyd", ["msvcp140-ab12.dll"]), pe(f"{name}.libs/msvcp140-ab12.dll")],
                  dll_dirs=[f"{name}.libs"])
        w.name, w.path = name, Path(f"{name}-1.0-{WIN}.whl")
        return w

    merged = merge_wheels([one("pandas"), one("numpy")])
    table = resolution_table(merged)
    assert table["numpy/_ext.pyd"]["x86_64"]["msvcp140-ab12.dll"] == "numpy.libs/msvcp140-ab12.dll"
    assert table["pandas/_ext.pyd"]["x86_64"]["msvcp140-ab12.dll"] == "pandas.libs/msvcp140-ab12.dll"
    assert check_linkage(merged) == []


def test_hostile_sources_are_read_without_failing():
    """The import-time analysis reads text from the wheel: whatever it is, it answers (nothing,
    when it cannot tell) and never raises or runs it."""
    from hypothesis import given, settings, strategies as st

    from wheelaudit.archive.dll_directories import read_source

    deep = "import os\nos.add_dll_directory(" + "[" * 180 + "x" + "]" * 180 + ")\n"
    chain = "import os\n" + "".join(f"a{i + 1} = a{i}\n" for i in range(20000)) + "os.add_dll_directory(a20000)\n"
    loop = "import os\na = b\nb = a\nfor a in b:\n    os.add_dll_directory(a)\n"
    for text in (deep, chain, loop, "add_dll_directory(" * 5000, "\x00add_dll_directory", "WinDLL(__file__)"):
        assert read_source(text, "pkg/__init__.py").folders == []

    @settings(max_examples=150, deadline=None)
    @given(st.text(alphabet="os.path(join)dirname__file__,'\"lib/..\n add_dll_directory WinDLL=[]forin:x", max_size=300))
    def anything(text):
        loads = read_source(text, "pkg/__init__.py")
        assert all(not p.startswith("..") for p in loads.folders + loads.preloaded)

    anything()


# ---- WA503: what the loader loads, and .NET assemblies -----------------------------------------

def _with_cor20(dll: bytes, flags: int) -> bytes:
    """The fixture DLL with a CLR data directory whose COR20 header (in the DOS stub's bytes,
    which the headers' RVAs cover) says ``flags``: what a .NET assembly carries."""
    import struct

    d = bytearray(dll)
    lfanew = struct.unpack_from("<I", d, 0x3C)[0]
    dirs = lfanew + 24 + 112  # PE32+: the data directories
    struct.pack_into("<II", d, dirs + 14 * 8, 0x40, 72)
    struct.pack_into("<IHH", d, 0x40, 72, 2, 5)
    struct.pack_into("<I", d, 0x40 + 16, flags)
    return bytes(d)


def test_an_anycpu_dotnet_assembly_runs_anywhere(pe_libs):
    """pythonnet's Python.Runtime.dll: IL only, not 32-bit-only, in a pure wheel: the CLR runs it
    on every platform (its COFF machine is x86 for any CPU); one that requires 32 bits does not."""
    from wheelaudit.binary import read_binary

    dll = next(Path(pe_libs).rglob("copy.dll")).read_bytes()
    anycpu = read_binary(_with_cor20(dll, 0x1), "pkg/runtime/Managed.dll", ())
    x86only = read_binary(_with_cor20(dll, 0x1 | 0x2), "pkg/runtime/Managed.dll", ())
    native = read_binary(dll, "pkg/runtime/Managed.dll", ())
    assert [s.managed for s in anycpu.slices] == [True] and "AnyCPU" in " ".join(anycpu.slices[0].notes)
    assert [s.managed for s in x86only.slices] == [False] and [s.managed for s in native.slices] == [False]
    pure = "py3-none-any"
    assert [f for f in check_linkage(wheel([anycpu], tag=pure)) if f.code == "WA503"] == []
    assert [f.code for f in check_linkage(wheel([x86only], tag=pure)) if f.code == "WA503"] == ["WA503"]


def test_wa503_is_an_error_for_what_the_loader_loads():
    """An x86 DLL in a win_amd64 wheel: an error when a module links it or it is a module; a
    warning when nothing links it (sounddevice ships 32-bit and arm64 portaudio DLLs and a .dylib
    beside the 64-bit one and loads the right one by path with ctypes)."""
    alone = [pe("pkg/_data/libportaudio32bit.dll", ["KERNEL32.dll"], machine="x86"),
             pe("pkg/_ext.cp311-win_amd64.pyd", ["KERNEL32.dll"])]
    [f] = [f for f in check_linkage(wheel(alone)) if f.code == "WA503"]
    assert f.severity == "warning" and "nothing in the wheel links it" in f.message
    linked = [pe("pkg/libportaudio32bit.dll", ["KERNEL32.dll"], machine="x86"),
              pe("pkg/_ext.cp311-win_amd64.pyd", ["libportaudio32bit.dll", "KERNEL32.dll"])]
    [f] = [f for f in check_linkage(wheel(linked)) if f.code == "WA503"]
    assert f.severity == "error"
    module = [pe("pkg/_ext.cp311-win_amd64.pyd", ["KERNEL32.dll"], machine="x86")]
    assert [f.severity for f in check_linkage(wheel(module)) if f.code == "WA503"] == ["error"]


def test_a_plugin_finds_what_its_wheel_ships_when_that_is_loaded_first():
    """PyQt5-Qt5's Qt plugins import Qt5Core.dll, which the wheel ships in Qt5/bin, off their
    route: Qt loads a plugin after Qt5Core.dll, and Windows reuses a loaded DLL of that name. A
    warning; a name the wheel ships nowhere is a warning too, saying the plugin fails to load
    where it is missing (Qt skips it: the PostgreSQL driver needs PostgreSQL's LIBPQ.dll). (The
    wheel is PyQt5-Qt5 itself, whose libraries the provider table knows: it is never told to
    require itself.)"""
    libs = [pe("PyQt5/Qt5/bin/Qt5Core.dll", ["KERNEL32.dll"]),
            pe("PyQt5/Qt5/plugins/sqldrivers/qsqlite.dll", ["Qt5Core.dll", "KERNEL32.dll"]),
            pe("PyQt5/Qt5/plugins/sqldrivers/qsqlpsql.dll", ["Qt5Core.dll", "LIBPQ.dll", "KERNEL32.dll"])]
    w = wheel(libs, tag="py3-none-win_amd64")
    w.name = "PyQt5-Qt5"
    found = {f.subject: f for f in check_linkage(w)}
    assert sorted(found) == ["LIBPQ.dll", "Qt5Core.dll"]
    assert (found["Qt5Core.dll"].code, found["Qt5Core.dll"].severity) == ("WA501", "warning")
    assert "already loaded" in found["Qt5Core.dll"].message
    assert (found["LIBPQ.dll"].code, found["LIBPQ.dll"].severity) == ("WA501", "warning")
    assert "no importer takes it: loaded by path" in found["LIBPQ.dll"].message
    # a module the wheel's own importer loads is no plugin: its missing route is an error
    module = [pe("pkg/bin/mycore.dll", ["KERNEL32.dll"]), pe("pkg/_qt.cp311-win_amd64.pyd", ["mycore.dll"])]
    [f] = check_linkage(wheel(module))
    assert (f.code, f.severity) == ("WA501", "error")
    assert "the wheel ships pkg/bin/mycore.dll: the loader reuses it only when" in f.message  # (jaxlib's jax_common.dll)


def test_qt_for_pyqt_is_provided_by_the_distribution_pyqt_requires():
    """PyQt5's modules link Qt5Core.dll, which PyQt5-Qt5 ships; PyQt5 requires it. Qt's wheels
    vendor msvcp140.dll too, beside Qt: it serves the wheels that require them (PyQt6's modules
    import MSVCP140_2.dll from PyQt6/Qt6/bin), but is never offered to a wheel that does not
    (every wheel ships its own VC++ runtime, or names the redistributable)."""
    libs = [pe("PyQt5/QtCore.pyd", ["Qt5Core.dll", "MSVCP140.dll", "KERNEL32.dll"])]
    w = wheel(libs, tag="cp38-abi3-win_amd64")
    w.requires_dist = ["PyQt5-Qt5<5.16.0,>=5.15.2"]
    assert check_linkage(w) == []
    w.requires_dist = []
    found = {(f.code, f.subject): f for f in check_linkage(w)}
    assert sorted(found) == [("WA501", "MSVCP140.dll"), ("WA505", "pyqt5-qt5")]
    assert "Visual C++ redistributable" in found[("WA501", "MSVCP140.dll")].message
    six = wheel([pe("PyQt6/QtGui.pyd", ["Qt6Gui.dll", "MSVCP140_2.dll", "KERNEL32.dll"])], tag="cp39-abi3-win_amd64")
    six.requires_dist = ["PyQt6-Qt6<6.13.0,>=6.12.0"]
    assert check_linkage(six) == []


def test_a_wheel_that_ships_qt_is_never_told_to_require_another_qt():
    """PySide6's plugins import Qt6Pdf.dll, which PySide6-Addons ships and PyQt6-Qt6 too: a wheel
    that ships Qt's libraries itself (Qt6Core.dll) is not told to require PyQt6-Qt6's build of
    Qt; the missing library stays WA501."""
    libs = [pe("PySide6/Qt6Core.dll", ["KERNEL32.dll"]),
            pe("PySide6/plugins/imageformats/qpdf.dll", ["Qt6Core.dll", "Qt6Pdf.dll", "KERNEL32.dll"])]
    w = wheel(libs, tag="cp39-abi3-win_amd64")
    w.name = "PySide6-Essentials"
    assert [(f.code, f.subject) for f in check_linkage(w) if f.subject != "Qt6Core.dll"] == [("WA501", "Qt6Pdf.dll")]
    # without Qt of its own, the plugin's wheel is told who ships it
    alone = wheel([pe("pkg/qpdf_plugin.dll", ["Qt6Pdf.dll", "KERNEL32.dll"])], tag="cp39-abi3-win_amd64")
    assert [(f.code, f.subject) for f in check_linkage(alone)] == [("WA505", "pyqt6-qt6")]


def test_shiboken_is_provided_by_the_distribution_pyside_requires():
    """PySide6's modules link shiboken6.abi3.dll (a library: Windows imports modules from .pyd
    files only), which the shiboken6 distribution ships; PySide6-Essentials requires it."""
    w = wheel([pe("PySide6/QtCore.pyd", ["shiboken6.abi3.dll", "KERNEL32.dll"])], tag="cp39-abi3-win_amd64")
    w.requires_dist = ["shiboken6==6.12.0"]
    assert check_linkage(w) == []


@pytest.mark.parametrize("path,fmt,exports,module", [
    ("pkg/_ext.pyd", "pe", ["PyInit__ext"], True), ("pkg/_ext.cp311-win_amd64.pyd", "pe", ["PyInit__ext"], True),
    ("shiboken6/shiboken6.abi3.dll", "pe", ["PyInit_shiboken6"], False),  # a library: Windows imports .pyd files
    ("pkg/_ext.abi3.so", "elf", ["PyInit__ext"], True),
    ("pkg/_ext.cpython-311-x86_64-linux-gnu.so", "elf", ["PyInit__ext"], True),
    ("pkg/_ext.cpython-311-x86_64-linux-gnu.so", "elf", [], True),  # exports unread: the name decides
    ("shiboken6/libshiboken6.abi3.so.6.12", "elf", [], False),     # a versioned library: no importer takes it
    ("pkg/_ext.pypy310-pp73-x86_64-linux-gnu.so", "elf", ["PyInit__ext"], True), ("pkg/libfoo.so", "elf", [], False),
    # an importable name without its init function: a plugin its host loads by path
    ("casadi/libcasadi_conic_mosek.so", "elf", ["casadi_register_conic_mosek"], False),
    ("PyQt6/Qt6/plugins/platforms/libqxcb.so", "elf", ["qt_plugin_instance", "qt_plugin_query_metadata_v2"], False),
    ("pkg/_ext.so", "elf", ["PyInit_other"], False), ("pkg/_ext.pyd", "pe", ["DllMain"], False),
    ("pkg/_ext.so", "macho", ["PyInit__ext"], True),
])
def test_an_extension_module_is_what_an_importer_takes(path, fmt, exports, module):
    from wheelaudit.checks.extension import is_extension_module

    b = Binary(path=path, format=fmt, size=1, slices=[Slice(arch="x86_64", exports=[Symbol(n) for n in exports])])
    assert is_extension_module(b) is module


def test_kivys_sdl2_is_provided_by_the_kivy_deps_it_requires_on_windows():
    """Kivy's modules import SDL2.dll and glew32.dll, which kivy-deps.sdl2 / kivy-deps.glew install
    into <prefix>/share/*/bin and kivy adds to the DLL search at import; Kivy requires them on
    win32. GStreamer comes only with an extra: the message says which one brings it."""
    w = wheel([pe("kivy/core/window/_window_sdl2.cp311-win_amd64.pyd", ["SDL2.dll", "glew32.dll", "KERNEL32.dll"]),
               pe("kivy/lib/gstplayer/_gstplayer.cp311-win_amd64.pyd", ["gstreamer-1.0-0.dll", "KERNEL32.dll"])])
    w.name = "Kivy"
    w.requires_dist = ['kivy-deps.sdl2~=0.8.0; sys_platform == "win32"', 'kivy-deps.glew~=0.3.1; sys_platform == "win32"',
                       'kivy-deps.gstreamer~=0.3.3; sys_platform == "win32" and extra == "gstreamer"']
    [f] = check_linkage(w)
    assert (f.code, f.subject) == ("WA505", "kivy-deps-gstreamer") and "pip install Kivy[gstreamer]" in f.message


def test_gpu_driver_dlls_are_allowed_externals():
    """OpenCL's ICD loader and Level Zero's loader come with the GPU driver (OpenVINO's GPU and NPU
    plugins import them), as nvcuda.dll does."""
    w = wheel([pe("openvino/libs/openvino_intel_gpu_plugin.dll", ["OpenCL.dll", "ze_loader.dll", "nvcuda.dll",
                                                                  "KERNEL32.dll"])])
    assert check_linkage(w) == []
    assert "GPU driver" in resolution_table(w)["openvino/libs/openvino_intel_gpu_plugin.dll"]["x86_64"]["OpenCL.dll"]


def test_qt_reached_through_the_bindings_a_wheel_requires():
    """PyQtWebEngine requires PyQt5 (which requires PyQt5-Qt5: Qt5Core.dll) and PyQtWebEngine-Qt5
    (Qt5WebEngine*.dll): both found through the table, the first through PyQt5's requirements."""
    w = wheel([pe("PyQt5/QtWebEngineCore.pyd", ["Qt5WebEngineCore.dll", "Qt5Core.dll", "KERNEL32.dll"])],
              tag="cp38-abi3-win_amd64")
    w.requires_dist = ["PyQt5-sip (>=12.13, <13)", "PyQtWebEngine-Qt5 (>=5.15.0, <5.16.0)", "PyQt5 (>=5.15.4)"]
    assert check_linkage(w) == []
    where = resolution_table(w)["PyQt5/QtWebEngineCore.pyd"]["x86_64"]["Qt5Core.dll"]
    assert "pyqt5-qt5" in where.lower() and "PyQt5 (>=5.15.4)" in where


def test_a_binary_loaded_by_path_only_fails_only_where_it_is_loaded():
    """bitsandbytes ships one backend DLL per accelerator and loads the one the machine has with
    ctypes: nothing links them and no importer takes them, so a missing dependency (CUDA, ROCm)
    is a warning, WA501 or WA505; the same dependency of an extension module is an error. The
    debug build of the VC++ runtime is an error whoever loads the binary (blosc2's tcc.dll)."""
    w = wheel([pe("pkg/libbackend_rocm.dll", ["amdhip64_7.dll", "KERNEL32.dll"]),
               pe("pkg/libbackend_cuda.dll", ["cudart64_12.dll", "KERNEL32.dll"])])
    assert sorted((f.code, f.severity) for f in check_linkage(w)) == [("WA501", "warning"), ("WA505", "warning")]
    runtime = wheel([pe("pkg/lib_lightgbm.dll", ["MSVCP140.dll", "KERNEL32.dll"])])  # (every load needs it)
    assert [(f.code, f.severity) for f in check_linkage(runtime)] == [("WA501", "error")]
    module = wheel([pe("pkg/_ext.pyd", ["amdhip64_7.dll", "KERNEL32.dll"])])
    assert [(f.code, f.severity) for f in check_linkage(module)] == [("WA501", "error")]
    debug = wheel([pe("pkg/lib/tcc.dll", ["VCRUNTIME140D.dll", "ucrtbased.dll", "KERNEL32.dll"])])
    fs = check_linkage(debug)
    assert [(f.code, f.severity) for f in fs] == [("WA501", "error")] * 2
    assert "Debug configuration" in fs[0].message and "Release configuration" in fs[0].hint


def test_a_dll_the_package_preloads_is_loaded_at_every_import():
    """A DLL that nothing links but the package loads by its full path at import (scikit-learn's
    ``_distributor_init.py`` and vcomp140.dll) is loaded at every import: its missing dependency
    is an error, not the warning of a binary loaded only by code that chooses when."""
    # (beside the package's extension module: a wheel's only library would be its engine, loaded
    # whenever the package is used)
    libs = [pe("pkg/.libs/helper.dll", ["libmissing.dll", "KERNEL32.dll"]), pe("pkg/_core.pyd", ["KERNEL32.dll"])]
    assert [f.severity for f in check_linkage(wheel(libs))] == ["warning"]
    w = wheel(libs)
    w.preloaded_dlls = ["pkg/.libs/helper.dll"]
    assert [f.severity for f in check_linkage(w)] == ["error"]


def test_a_backend_loaded_by_path_with_its_provider_behind_an_extra_is_a_warning():
    """onnxruntime-gpu's CUDA provider library, loaded by path, needs CUDA libraries that the
    wheel requires only with its `cuda` extra: a WA505 warning naming the extra; the same for an
    extension module stays an error."""
    extra = ['nvidia-cuda-runtime-cu12; extra == "cuda"']
    w = wheel([pe("pkg/capi/providers_cuda.dll", ["cudart64_12.dll", "KERNEL32.dll"]),
               pe("pkg/capi/_pybind_state.pyd", ["KERNEL32.dll"])])
    w.requires_dist = extra
    [f] = check_linkage(w)
    assert (f.code, f.severity) == ("WA505", "warning") and "only with its extra cuda" in f.message
    module = wheel([pe("pkg/_cuda.pyd", ["cudart64_12.dll", "KERNEL32.dll"])])
    module.requires_dist = extra
    assert [(f.code, f.severity) for f in check_linkage(module)] == [("WA505", "error")]
