"""The load model: who loads each binary, when, and what is already loaded then (issue #30).

Every pattern is a wheel of binaries built here from C by gcc (ELF), clang + ld64.lld (Mach-O)
and MinGW-w64 (PE), with Python sources that say the import order; the command line judges it:

* a plugin its host loads after the core library finds that library already loaded (SONAME);
* a package that imports a support package first serves the support's library to its own module;
* a plugin loaded by path that needs a library installed outside Python is a warning, not an error;
* a launcher template (pip's distlib ``t64.exe``, setuptools' ``cli-64.exe``) gets no loader verdict,
  and ``check --env`` of a fresh virtual environment passes;
* a tool run by a launcher that sets ``LD_LIBRARY_PATH`` (Linux) or ``PATH`` (Windows: ``tool.exe``
  and its ``helper.dll``) to a folder of the package finds its library there, and only there;
* severities: an older VC++ runtime is an error like msvcp140.dll; a wheel with no binary for its
  tag's architecture fails whoever loads it; a Mach-O ``LC_RPATH $ORIGIN`` is a WA502 error.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wheelaudit.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SDK = FIXTURES / "sdk"
LINUX = "cp311-cp311-manylinux_2_28_x86_64"
EXT = ".cpython-311-x86_64-linux-gnu.so"


def _write_wheel(path: Path, members: dict[str, bytes], tag: str, dist: str, requires: tuple[str, ...] = ()) -> Path:
    sys.path.insert(0, str(FIXTURES))
    try:
        from make_wheels import write_dist_wheel
    finally:
        sys.path.remove(str(FIXTURES))
    meta = f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    return write_dist_wheel(path / f"{dist}-1.0-{tag}.whl", members, tag, dist, "1.0", (meta + "\n").encode())


def wheelaudit(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def findings(*argv) -> tuple[int, list[dict]]:
    code, out, err = wheelaudit("check", *argv, "--format", "json")
    assert code in (0, 1), err
    return code, [f for w in json.loads(out)["wheels"] for f in w["findings"]]


def _run(cmd: list[str], cwd: Path) -> None:
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="session")
def elf(tmp_path_factory) -> dict[str, bytes]:
    """ELF libraries, each a real gcc build."""
    if shutil.which("gcc") is None:
        pytest.fail("gcc is needed (scripts/setup.sh installs it)", pytrace=False)
    d = tmp_path_factory.mktemp("load_elf")
    src = {
        "core.c": "int core_fn(void) { return 1; }\nvoid *PyInit_libcore(void) { return 0; }\n",
        "plug.c": "int core_fn(void);\nint plugin_init(void) { return core_fn(); }\n",
        "support.c": "int support_fn(void) { return 2; }\n",
        "hmod.c": "int support_fn(void);\nvoid *PyInit__support(void) { return (void *)(long)support_fn(); }\n",
        "amod.c": "int support_fn(void);\nvoid *PyInit__app(void) { return (void *)(long)support_fn(); }\n",
        "mosek.c": "int mosek_optimize(void) { return 0; }\n",
        "solver.c": "int mosek_optimize(void);\nint casadi_register_conic_mosek(void) { return mosek_optimize(); }\n",
        "pcore.c": "void *PyInit__core(void) { return 0; }\n",
    }
    for name, text in src.items():
        (d / name).write_text(text)
    gcc = ["gcc", "-shared", "-fPIC", "-O1"]
    _run(gcc + ["-Wl,-soname,libcore.so", "-o", "libcore.so", "core.c"], d)
    _run(gcc + ["-o", "libplug.so", "plug.c", "-L.", "-lcore"], d)  # NEEDED libcore.so, no rpath
    _run(gcc + ["-Wl,-soname,libsupport.so.1", "-o", "libsupport.so.1", "support.c"], d)
    (d / "libsupport.so").symlink_to("libsupport.so.1")
    _run(gcc + ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/lib", "-o", "_support.so", "hmod.c", "-L.", "-lsupport"], d)
    _run(gcc + ["-o", "_app.so", "amod.c", "-L.", "-lsupport"], d)  # NEEDED libsupport.so.1, no rpath
    _run(gcc + ["-Wl,-soname,libmosek64.so.10", "-o", "libmosek64.so.10", "mosek.c"], d)
    (d / "libmosek64.so").symlink_to("libmosek64.so.10")
    _run(gcc + ["-o", "libcasadi_conic_mosek.so", "solver.c", "-L.", "-lmosek64"], d)
    _run(gcc + ["-o", "_core.so", "pcore.c"], d)
    _run(["clang", "--target=aarch64-linux-gnu", "-fPIC", "-shared", "-nostdlib", "-fuse-ld=lld", "-O1",
          "-Wl,-soname,libbase.so", "-o", "libbase.aarch64.so", "support.c"], d)
    return {p.name: p.read_bytes() for p in d.iterdir() if p.is_file() and not p.is_symlink() and ".so" in p.name}


# --------------------------------------------------------------------------------------------
# item 2: already loaded


def _core_wheel(tmp_path: Path, elf: dict[str, bytes], init: str) -> Path:
    return _write_wheel(tmp_path, {
        "core/__init__.py": init.encode(),
        "core/_C/__init__.py": b"",
        "core/_C/libcore.so": elf["libcore.so"],  # an extension module (PyInit_libcore), as triton's libtriton
        "core/plugins/libplug.so": elf["libplug.so"],  # NEEDED libcore.so, no rpath: opened by path
    }, LINUX, "core")


def test_a_plugin_loaded_after_its_core_library_finds_it_by_soname(tmp_path, elf):
    code, found = findings(_core_wheel(tmp_path, elf, "from ._C import libcore\n"), "--select", "WA501")
    assert (code, found) == (0, [])
    code, out, _ = wheelaudit("inspect", _core_wheel(tmp_path, elf, "from ._C import libcore\n"), "--format", "json")
    assert code == 0
    assert "imported as core._C.libcore by core/__init__.py:1" in out and "reuses by SONAME" in out


def test_a_plugin_whose_core_is_not_imported_first_gets_no_reuse(tmp_path, elf):
    """Without the import, nothing says libcore.so is loaded before the plugin: the verdict is
    the one of a plugin loaded by path (a warning naming the shipped library)."""
    code, found = findings(_core_wheel(tmp_path, elf, "VERSION = 1\n"), "--select", "WA501")
    assert code == 0
    [f] = found
    assert f["severity"] == "warning" and f["subject"] == "libcore.so"


def _support_wheels(tmp_path: Path, elf: dict[str, bytes], app_init: str) -> tuple[Path, Path]:
    support = _write_wheel(tmp_path, {
        "support/__init__.py": b"from . import _support\n",
        f"support/_support{EXT}": elf["_support.so"],  # RUNPATH $ORIGIN/lib
        "support/lib/libsupport.so.1": elf["libsupport.so.1"],
    }, LINUX, "support")
    app = _write_wheel(tmp_path, {
        "app/__init__.py": app_init.encode(),
        f"app/_app{EXT}": elf["_app.so"],  # NEEDED libsupport.so.1, no rpath
    }, LINUX, "app", requires=("support",))
    return support, app


def test_a_package_that_imports_a_support_package_first_is_served_its_library(tmp_path, elf):
    support, app = _support_wheels(tmp_path, elf, "import support\nfrom . import _app\n")
    code, found = findings(support, app, "--together", "--select", "WA501")
    assert (code, found) == (0, [])


def test_the_import_order_decides(tmp_path, elf):
    """The module imported before the support package: nothing has loaded libsupport.so.1 yet."""
    support, app = _support_wheels(tmp_path, elf, "from . import _app\nimport support\n")
    code, found = findings(support, app, "--together", "--select", "WA501")
    assert code == 1
    [f] = found
    assert (f["severity"], f["subject"]) == ("error", "libsupport.so.1")


def test_the_sources_are_read_only_when_a_verdict_depends_on_the_import_order(tmp_path, elf):
    """The import-time events are read when a verdict first asks for them, never up front: a wheel
    whose every dependency resolves alone is audited without reading its Python modules (``-v``
    says when they are read, and how many: the work counter); the plugin's lookup that fails
    alone reads them, and its verdict is the one the import order gives."""
    support, _app = _support_wheels(tmp_path, elf, "import support\nfrom . import _app\n")
    code, _out, err = wheelaudit("check", support, "-v")
    assert code == 0 and "_support" in err, err
    assert "import-time events" not in err, err
    plain = _write_wheel(tmp_path, {"plain/__init__.py": b"import support\n"}, "py3-none-any", "plain")
    code, _out, err = wheelaudit("check", support, plain, "--together", "-v")  # (merging reads nothing either)
    assert code == 0 and "import-time events" not in err, err
    code, _out, err = wheelaudit("check", _core_wheel(tmp_path, elf, "from ._C import libcore\n"), "-v")
    assert code == 0
    assert "import-time events read from 2 Python modules (a verdict depends on the import order)" in err, err


# --------------------------------------------------------------------------------------------
# item 1: an importable name is not an extension module


def test_a_solver_plugin_loaded_by_path_that_needs_a_commercial_library_is_a_warning(tmp_path, elf):
    w = _write_wheel(tmp_path, {
        "solver/__init__.py": b"from . import _core\n",
        f"solver/_core{EXT}": elf["_core.so"],
        # an importable name (libcasadi_conic_mosek.so), but no PyInit_libcasadi_conic_mosek: a plugin
        "solver/libcasadi_conic_mosek.so": elf["libcasadi_conic_mosek.so"],
    }, LINUX, "solver")
    code, found = findings(w, "--select", "WA501")
    assert code == 0
    [f] = found
    assert (f["severity"], f["subject"]) == ("warning", "libmosek64.so.10")
    assert "loaded by path" in f["message"]
    # the message names the route: who opens the plugin, after what
    assert "opened by path by code of the package solver, once solver/__init__.py has run" in f["message"]
    assert "loaded after _core" in f["message"]


def test_the_only_library_of_a_wheel_without_modules_is_loaded_whenever_the_package_is_used(tmp_path, elf):
    # (mediapipe's libmediapipe.so, XGBoost's libxgboost.so: the package's code opens it by path,
    # and no host chooses whether to: what it needs, every machine that uses the package needs)
    engine = _write_wheel(tmp_path, {
        "engine/__init__.py": b"import ctypes, os\n"
                              b"_lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'lib' + 'engine.so'))\n",
        "engine/libengine.so": elf["libcasadi_conic_mosek.so"],
    }, LINUX, "engine")
    code, found = findings(engine, "--select", "WA501")
    assert code == 1
    [f] = found
    assert (f["severity"], f["subject"]) == ("error", "libmosek64.so.10")
    assert "the wheel's only native library" in f["message"]
    # two such libraries: the code chooses one (a backend per machine): each a plugin, a warning
    two = tmp_path / "two"
    two.mkdir()
    plugins = _write_wheel(two, {
        "engine/__init__.py": b"",
        "engine/libengine_a.so": elf["libcasadi_conic_mosek.so"],
        "engine/libengine_b.so": elf["libcasadi_conic_mosek.so"],
    }, LINUX, "engine")
    code, found = findings(plugins, "--select", "WA501")
    assert code == 0 and {f["severity"] for f in found} == {"warning"}


# --------------------------------------------------------------------------------------------
# item 3: never loaded


@pytest.fixture(scope="session")
def launcher(tmp_path_factory) -> bytes:
    """A Windows console program, as the launcher templates are (MinGW-w64)."""
    if shutil.which("x86_64-w64-mingw32-gcc") is None:
        pytest.fail("x86_64-w64-mingw32-gcc is needed (scripts/setup.sh installs it)", pytrace=False)
    d = tmp_path_factory.mktemp("load_pe")
    (d / "t.c").write_text("int main(void) { return 0; }\n")
    _run(["x86_64-w64-mingw32-gcc", "-O1", "-o", "t64.exe", "t.c"], d)
    return (d / "t64.exe").read_bytes()


def test_launcher_templates_get_no_loader_verdict(tmp_path, launcher):
    w = _write_wheel(tmp_path, {
        "tool/__init__.py": b"",
        "tool/_vendor/distlib/t64.exe": launcher,
        "tool/_vendor/distlib/w64-arm.exe": launcher,
        "setuptools/cli-64.exe": launcher,
        "tool/support.exe": launcher,  # not a template: a Windows program in a pure wheel
    }, "py3-none-any", "tool")
    code, found = findings(w)
    assert sorted((f["code"], f["subject"]) for f in found) == [("WA503", "tool/support.exe")]
    code, out, _ = wheelaudit("inspect", w, "--format", "json")
    assert code == 0 and "tool/_vendor/distlib/t64.exe" in out  # (the facts are still shown)


@pytest.fixture(scope="session")
def macho_program(tmp_path_factory) -> bytes:
    """A macOS program (clang + ld64.lld), as py2app's prebuilt application templates are."""
    ld = shutil.which("ld64.lld") or next((str(p) for p in Path("/usr/lib").glob("llvm-*/bin/ld64.lld")), None)
    if shutil.which("clang") is None or ld is None:
        pytest.fail("clang and ld64.lld are needed (scripts/setup.sh installs them)", pytrace=False)
    d = tmp_path_factory.mktemp("load_freezer")
    (d / "main.c").write_text("int main(void) { return 0; }\n")
    _run(["clang", "-target", "arm64-apple-macos11", "-O1", "-c", "main.c", "-o", "main.o"], d)
    _run([ld, "-execute", "-arch", "arm64", "-platform_version", "macos", "11.0", "11.0", f"-L{SDK}", "-lSystem",
          "-o", "main", "main.o"], d)
    return (d / "main").read_bytes()


def test_a_freezers_application_templates_get_no_loader_verdict(tmp_path, macho_program):
    """py2app (a pure wheel) ships the stub executables it copies into the applications it builds:
    data to the wheel, never run from it (py2app 0.28.10: 27 false WA503 errors before)."""
    w = _write_wheel(tmp_path, {
        "py2app/__init__.py": b"",
        "py2app/apptemplate/prebuilt/main-arm64": macho_program,
        "py2app/bundletemplate/prebuilt/main-arm64": macho_program,
        "py2app/tools/helper": macho_program,  # not a template: a macOS program in a pure wheel
    }, "py3-none-any", "py2app")
    code, found = findings(w)
    assert [(f["code"], f["severity"], f["subject"]) for f in found] == [("WA503", "error", "py2app/tools/helper")]
    code, out, _ = wheelaudit("inspect", w, "--format", "json")
    assert code == 0 and "py2app/apptemplate/prebuilt/main-arm64" in out  # (the facts are still shown)


def test_check_env_of_a_fresh_virtual_environment_passes(tmp_path):
    """``python -m venv`` (pip and setuptools from the interpreter's bundled wheels: no network)."""
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True,
                   env={**os.environ, "PIP_NO_INDEX": "1"})
    site = next(venv.glob("lib/python3*/site-packages"))
    if not list(site.glob("pip/_vendor/distlib/*.exe")) and not list(site.glob("setuptools/*.exe")):
        pytest.skip("this interpreter's bundled pip and setuptools ship no launcher templates")
    code, out, err = wheelaudit("check", "--env", venv / "bin" / "python", "--format", "json")
    assert code == 0, out + err
    assert [f for w in json.loads(out)["wheels"] for f in w["findings"]] == []


# --------------------------------------------------------------------------------------------
# item 6: severities that agree with each other


@pytest.fixture(scope="session")
def old_crt(tmp_path_factory) -> bytes:
    """A DLL that imports MSVCR120.dll (the VC++ 2013 runtime), MinGW-w64's import library."""
    if shutil.which("x86_64-w64-mingw32-gcc") is None:
        pytest.fail("x86_64-w64-mingw32-gcc is needed (scripts/setup.sh installs it)", pytrace=False)
    d = tmp_path_factory.mktemp("load_crt")
    (d / "p.c").write_text("#include <stdio.h>\nint plugin_run(void) { return puts(\"x\"); }\n")
    _run(["x86_64-w64-mingw32-gcc", "-shared", "-O1", "-nostdlib", "-Wl,--entry,0", "-o", "plugin.dll", "p.c",
          "-lmsvcr120"], d)
    return (d / "plugin.dll").read_bytes()


def test_an_older_vc_runtime_is_an_error_like_msvcp140(tmp_path, old_crt):
    w = _write_wheel(tmp_path, {"pkg/__init__.py": b"", "pkg/bin/plugin.dll": old_crt}, "cp311-cp311-win_amd64", "pkg")
    code, found = findings(w, "--select", "WA501")
    assert code == 1
    [f] = found
    assert (f["severity"], f["subject"]) == ("error", "MSVCR120.dll")
    assert "Visual C++ redistributable" in f["message"]


def test_a_wheel_with_no_binary_for_its_architecture_fails_even_by_path(tmp_path, elf):
    # (two x86-64 libraries loaded by path: a wheel's only library would be loaded whenever it is used)
    w = _write_wheel(tmp_path, {"pkg/__init__.py": b"", "pkg/libmosek64.so.10": elf["libmosek64.so.10"],
                                "pkg/libx.so": elf["_core.so"]},
                     "py3-none-manylinux_2_28_aarch64", "pkg")
    code, found = findings(w, "--select", "WA503")
    assert code == 1
    assert {f["severity"] for f in found} == {"error"}
    assert all("ships no binary at all for manylinux_2_28_aarch64" in f["message"] for f in found), found
    # beside a binary that serves the tag, the by-path one stays a warning (a per-platform pick)
    both = _write_wheel(tmp_path / "both" if (tmp_path / "both").mkdir() is None else tmp_path, {
        "pkg/__init__.py": b"", "pkg/libmosek64.so.10": elf["libmosek64.so.10"],
        "pkg/arm/libbase.so": elf["libbase.aarch64.so"]}, "py3-none-manylinux_2_28_aarch64", "pkg")
    code, found = findings(both, "--select", "WA503")
    assert code == 0
    [f] = found
    assert f["severity"] == "warning" and f["subject"] == "pkg/libmosek64.so.10"


@pytest.fixture(scope="session")
def origin_module(tmp_path_factory) -> dict[str, bytes]:
    """Mach-O (clang + ld64.lld): an extension module whose LC_RPATH is ``$ORIGIN/lib``, an ELF
    spelling dyld does not expand, and the library it needs by ``@rpath/``."""
    ld = shutil.which("ld64.lld") or next((str(p) for p in Path("/usr/lib").glob("llvm-*/bin/ld64.lld")), None)
    if shutil.which("clang") is None or ld is None:
        pytest.fail("clang and ld64.lld are needed (scripts/setup.sh installs them)", pytrace=False)
    d = tmp_path_factory.mktemp("load_macho")
    (d / "dep.c").write_text("int dep_fn(void) { return 1; }\n")
    (d / "ext.c").write_text("int dep_fn(void);\nvoid *PyInit__ext(void) { return (void *)(long)dep_fn(); }\n")
    cc = ["clang", "-target", "arm64-apple-macos11", "-O1", "-c"]
    link = [ld, "-dylib", "-arch", "arm64", "-platform_version", "macos", "11.0", "11.0", f"-L{SDK}", "-lSystem"]
    _run(cc + ["dep.c", "-o", "dep.o"], d)
    _run(cc + ["ext.c", "-o", "ext.o"], d)
    _run(link + ["-install_name", "@rpath/libdep.dylib", "-o", "libdep.dylib", "dep.o"], d)
    _run(link + ["-rpath", "$ORIGIN/lib", "-o", "_ext.so", "ext.o", "libdep.dylib"], d)
    return {"_ext.so": (d / "_ext.so").read_bytes(), "libdep.dylib": (d / "libdep.dylib").read_bytes()}


def test_a_macho_origin_rpath_that_a_lookup_passes_through_is_a_wa502_error(tmp_path, origin_module):
    w = _write_wheel(tmp_path, {"pkg/__init__.py": b"from . import _ext\n",
                                "pkg/_ext.cpython-311-darwin.so": origin_module["_ext.so"],
                                "pkg/lib/libdep.dylib": origin_module["libdep.dylib"]},
                     "cp311-cp311-macosx_11_0_arm64", "pkg")
    code, found = findings(w)
    assert code == 1
    wa502 = [f for f in found if f["code"] == "WA502"]
    assert [(f["severity"], f["subject"]) for f in wa502] == [("error", "$ORIGIN/lib")]
    assert "dyld does not expand $ORIGIN" in wa502[0]["message"]
    [wa501] = [f for f in found if f["code"] == "WA501"]
    assert "dyld does not expand $ORIGIN" in wa501["message"]


# --------------------------------------------------------------------------------------------
# resolution is linear in the input (hostile shapes: model objects, as a reader would give them)


def _model_wheel(libs, tag):
    from packaging.tags import parse_tag

    from wheelaudit.platforms.traits import traits_from_tags
    from wheelaudit.scanner import Wheel

    tags = sorted(parse_tag(tag), key=str)
    return Wheel(path=Path(f"h-1.0-{tag}.whl"), name="h", version="1.0", tags=[str(t) for t in tags],
                 traits=traits_from_tags(tags, "1.0"), files=[b.path for b in libs], libraries=libs)


def _peak_mb(wheel) -> tuple[list, float]:
    import tracemalloc

    from wheelaudit.checks.linkage import check_linkage

    tracemalloc.start()
    try:
        found = check_linkage(wheel)
        return found, tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def _module(path, fmt, arch, deps, rpaths, **kw):
    from wheelaudit.model.binary import Binary, Slice, Symbol

    name = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return Binary(path, fmt, 1, slices=[Slice(arch, dependencies=deps, rpaths=rpaths,
                                              exports=[Symbol(f"PyInit_{name}")], **kw)])


def test_macho_thousands_of_dependencies_times_thousands_of_rpaths_stay_small():
    """3,000 ``@rpath/`` dependencies through 3,000 LC_RPATH entries: each lookup used to keep
    what it tried (9 million strings, gigabytes at 6,000 x 6,000)."""
    from wheelaudit.model.binary import Dependency, Rpath

    n = 3000
    w = _model_wheel([_module("pkg/_ext.cpython-311-darwin.so", "macho", "arm64",
                              [Dependency(f"@rpath/libd{i}.dylib", "load") for i in range(n)],
                              [Rpath(f"@loader_path/r{i}", "lc_rpath") for i in range(n)])],
                     "cp311-cp311-macosx_11_0_arm64")
    found, peak = _peak_mb(w)
    assert len([f for f in found if f.code == "WA501"]) == n
    assert "(+2992 more)" in next(f.message for f in found if f.code == "WA501")
    assert peak < 50, peak


def test_elf_a_huge_runpath_times_missing_dependencies_stays_small():
    from wheelaudit.model.binary import Dependency, Rpath

    w = _model_wheel([_module("pkg/_ext.cpython-311-x86_64-linux-gnu.so", "elf", "x86_64",
                              [Dependency(f"libmissing{i}.so") for i in range(100)],
                              [Rpath(f"$ORIGIN/r{i}", "runpath") for i in range(30_000)])],
                     "cp311-cp311-manylinux_2_28_x86_64")
    found, peak = _peak_mb(w)
    assert len([f for f in found if f.code == "WA501"]) == 100
    assert peak < 50, peak


def test_libraries_that_inherit_each_others_search_paths_share_them():
    """1,000 libraries, each loading the next, each with a DT_RPATH its loaded ones inherit and a
    dependency found nowhere: each list used to be a copy of every loader's entries."""
    from wheelaudit.model.binary import Binary, Dependency, Rpath, Slice

    n = 1000
    libs = [_module("pkg/l0/_ext.cpython-311-x86_64-linux-gnu.so", "elf", "x86_64",
                    [Dependency("libc1.so"), Dependency("libgone0.so")], [Rpath("$ORIGIN/../l1", "rpath")])]
    for i in range(1, n):
        deps = ([Dependency(f"libc{i + 1}.so")] if i + 1 < n else []) + [Dependency(f"libgone{i}.so")]
        libs.append(Binary(f"pkg/l{i}/libc{i}.so", "elf", 1, slices=[Slice(
            "x86_64", identity=f"libc{i}.so", dependencies=deps, rpaths=[Rpath(f"$ORIGIN/../l{i + 1}", "rpath")])]))
    found, peak = _peak_mb(_model_wheel(libs, "cp311-cp311-manylinux_2_28_x86_64"))
    assert sorted(f.subject for f in found if f.code == "WA501") == sorted(f"libgone{i}.so" for i in range(n))
    assert peak < 50, peak


def test_the_model_imports_no_stage_above_it():
    """``model/`` is plain data: at load time its modules import only each other (a lower stage
    never imports a higher one)."""
    import ast

    for path in sorted((ROOT / "src" / "wheelaudit" / "model").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:  # (module level: what importing the module runs)
            if isinstance(node, ast.If):  # if TYPE_CHECKING: annotations only
                continue
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("wheelaudit."):
                assert node.module.startswith("wheelaudit.model"), f"{path.name} imports {node.module}"


@pytest.fixture(scope="session")
def tool(tmp_path_factory) -> bytes:
    """An executable that needs libcore.so and has no rpath (gcc)."""
    d = tmp_path_factory.mktemp("load_tool")
    (d / "core.c").write_text("int core_fn(void) { return 1; }\n")
    (d / "tool.c").write_text("int core_fn(void);\nint main(void) { return core_fn() - 1; }\n")
    _run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libcore.so", "-o", "libcore.so", "core.c"], d)
    _run(["gcc", "-o", "tool", "tool.c", "-L.", "-lcore"], d)
    return (d / "tool").read_bytes()


LAUNCHER = """\
import os, subprocess

HERE = os.path.dirname(__file__)


def run(*args):
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(HERE, "lib") + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    return subprocess.run([os.path.join(HERE, "bin", "tool"), *args], env=env)
"""


def test_a_tool_run_by_a_launcher_that_sets_ld_library_path_finds_its_library(tmp_path, elf, tool):
    def build(init: str) -> Path:
        d = tmp_path / str(len(list(tmp_path.iterdir())))
        d.mkdir()
        return _write_wheel(d, {"pkg/__init__.py": init.encode(), "pkg/bin/tool": tool,
                                "pkg/lib/libcore.so": elf["libcore.so"]}, LINUX, "pkg")

    code, found = findings(build(LAUNCHER), "--select", "WA501")
    assert (code, found) == (0, [])
    code, out, _ = wheelaudit("inspect", build(LAUNCHER), "--format", "json")
    assert "LD_LIBRARY_PATH holds pkg/lib, which pkg/__init__.py:7 sets before it runs the tool" in out
    # a folder appended after the others is searched too
    appended = LAUNCHER.replace('os.path.join(HERE, "lib") + os.pathsep + os.environ.get("LD_LIBRARY_PATH", "")',
                                'os.environ.get("LD_LIBRARY_PATH", "") + os.pathsep + os.path.join(HERE, "lib")')
    assert appended != LAUNCHER
    code, found = findings(build(appended), "--select", "WA501")
    assert (code, found) == (0, [])
    # run without the launcher's environment, the tool does not find it
    code, found = findings(build("VERSION = 1\n"), "--select", "WA501")
    assert code == 1 and [f["subject"] for f in found] == ["libcore.so"]


@pytest.fixture(scope="session")
def win_tool(tmp_path_factory) -> dict[str, bytes]:
    """``tool.exe`` that imports ``helper.dll`` (its import library from the same build), and an
    extension module ``_ext.pyd`` that imports it too (MinGW-w64)."""
    if shutil.which("x86_64-w64-mingw32-gcc") is None:
        pytest.fail("x86_64-w64-mingw32-gcc is needed (scripts/setup.sh installs it)", pytrace=False)
    d = tmp_path_factory.mktemp("load_win_tool")
    (d / "helper.c").write_text("__declspec(dllexport) int helper_fn(void) { return 1; }\n")
    (d / "tool.c").write_text("int helper_fn(void);\nint main(void) { return helper_fn() - 1; }\n")
    (d / "ext.c").write_text("int helper_fn(void);\n__declspec(dllexport) void *PyInit__ext(void) "
                             "{ return (void *)(long long)helper_fn(); }\n")
    gcc = ["x86_64-w64-mingw32-gcc", "-O1", "-static-libgcc"]
    _run([*gcc, "-shared", "-o", "helper.dll", "helper.c", "-Wl,--out-implib,libhelper.a"], d)
    _run([*gcc, "-o", "tool.exe", "tool.c", "-L.", "-lhelper"], d)
    _run([*gcc, "-shared", "-o", "_ext.pyd", "ext.c", "-L.", "-lhelper"], d)
    return {n: (d / n).read_bytes() for n in ("helper.dll", "tool.exe", "_ext.pyd")}


WIN_LAUNCHER = """\
import os, subprocess

HERE = os.path.dirname(__file__)


def run(*args):
    env = dict(os.environ, PATH=os.path.join(HERE, "lib") + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run([os.path.join(HERE, "bin", "tool.exe"), *args], env=env)
"""


def test_a_windows_tool_run_by_a_launcher_that_sets_path_finds_its_dll(tmp_path, win_tool):
    """Windows searches the process's PATH for a DLL an exe imports (after its own folder and the
    system's); a launcher that puts a folder of the package there serves the tool's DLL."""
    def build(init: str, extra: dict[str, bytes] | None = None) -> Path:
        d = tmp_path / str(len(list(tmp_path.iterdir())))
        d.mkdir()
        return _write_wheel(d, {"pkg/__init__.py": init.encode(), "pkg/bin/tool.exe": win_tool["tool.exe"],
                                "pkg/lib/helper.dll": win_tool["helper.dll"], **(extra or {})},
                            "cp311-cp311-win_amd64", "pkg")

    code, found = findings(build(WIN_LAUNCHER), "--select", "WA501")
    assert (code, found) == (0, [])
    code, out, _ = wheelaudit("inspect", build(WIN_LAUNCHER), "--format", "json")
    assert "PATH holds pkg/lib, which pkg/__init__.py:7 sets before it runs the tool" in out
    # os.environ["PATH"] = ... at import time serves it too
    assigned = 'import os\nos.environ["PATH"] = os.path.join(os.path.dirname(__file__), "lib") + os.pathsep + os.environ["PATH"]\n'
    # so does a folder appended after the others, joined with ";" (searched last, but searched)
    appended = ('import os\nHERE = os.path.dirname(__file__)\n'
                'os.environ["PATH"] = ";".join([os.environ["PATH"]] + [os.path.join(HERE, "lib")])\n')
    for init in (assigned, appended):
        code, found = findings(build(init), "--select", "WA501")
        assert (code, found) == (0, []), init
    # run without the launcher's PATH, or with a PATH that holds no folder of the package: not found
    for init in ("VERSION = 1\n",
                 'import os\nos.environ["PATH"] = r"C:\\tools" + os.pathsep + os.environ["PATH"]\n',
                 WIN_LAUNCHER.replace("PATH=", "PYTHONPATH=")):
        code, found = findings(build(init), "--select", "WA501")
        assert code == 1 and [f["subject"] for f in found] == ["helper.dll"], init
    # an extension module's imports never search PATH (CPython 3.8+): the launcher's PATH does not serve it
    code, found = findings(build(WIN_LAUNCHER, {"pkg/_ext.cp311-win_amd64.pyd": win_tool["_ext.pyd"]}),
                           "--select", "WA501")
    assert code == 1 and [(f["subject"], f["paths"]) for f in found] == [("helper.dll", ["pkg/_ext.cp311-win_amd64.pyd"])]
