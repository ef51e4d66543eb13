"""The C++ consumer surface (issue #24): CMake and pkg-config files read as text, WA701-WA705.

Fixture wheels are built by real CMake (fixtures/build_cmake.sh, fixtures/make_surface_wheels.py).
For each doctored wheel the test also runs what a consumer runs, REAL cmake (``find_package(X CONFIG
REQUIRED)`` + ``target_link_libraries``) against the unpacked tree and real ``pkg-config``, and
asserts that the verdict matches the consequence.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from wheelaudit.checks.consumer import CMakeComponent, Declaration, check_surface, undeclared_targets
from wheelaudit.surface import Layout, read_surface
from wheelaudit.surface.cmake_language import tokenize
from wheelaudit.surface.declarations import read_declarations
from wheelaudit.surface.errors import SurfaceError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CONSUMER = FIXTURES / "src" / "cmake_demo" / "consumer"
ABSOLUTE = "/usr/local/cuda/lib64/libculibos.a"  # what torch's Caffe2Targets.cmake names
ET_DECLARES = r"_executorch_define_component\(\s*(?P<name>\w+)\s+(?P<library>\w+)"


def _wheel_view(whl: Path):
    z = zipfile.ZipFile(whl)
    files = [i.filename for i in z.infolist() if not i.is_dir()]
    return files, (lambda p: z.read(p).decode("utf-8", "replace"))


def _audit(whl: Path, components=(), declarations=None):
    """The surface and WA7xx findings of a wheel, identities from wheelaudit's own scan."""
    from wheelaudit import scan

    files, read = _wheel_view(whl)
    surface = read_surface(files, read)
    ids = {b.path: b.identity for b in scan(whl, jobs=1).libraries}
    return surface, check_surface(surface, files, ids, components=components, declarations=declarations)


def _codes(findings) -> list[tuple[str, str]]:
    return sorted((f.code, f.severity) for f in findings)


def _unpack(whl: Path, dest: Path) -> Path:
    with zipfile.ZipFile(whl) as z:
        z.extractall(dest)
    return dest


def _cmake(tree: Path, pkg: str, target: str, build: Path, *, compile_: bool = False) -> subprocess.CompletedProcess:
    """Configure (and generate) the consumer project against an unpacked wheel; optionally build."""
    env = {**os.environ, "CMAKE_PREFIX_PATH": str(tree)}
    p = subprocess.run(["cmake", "-S", str(CONSUMER), "-B", str(build), f"-DPKG={pkg}", f"-DTGT={target}",
                        "-DCMAKE_BUILD_TYPE=Release"], env=env, capture_output=True, text=True)
    if p.returncode == 0 and compile_:
        p = subprocess.run(["cmake", "--build", str(build)], env=env, capture_output=True, text=True)
    return p


def _pkg_config(tree: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PKG_CONFIG_PATH": str(tree / "demo" / "lib" / "pkgconfig")}
    return subprocess.run(["pkg-config", *args, "demo"], env=env, capture_output=True, text=True)


def _link_with_pkg_config(tree: Path, tmp: Path) -> subprocess.CompletedProcess:
    flags = _pkg_config(tree, "--cflags", "--libs").stdout.split()
    return subprocess.run(["gcc", str(CONSUMER / "main.c"), "-DUSE_DEMO", "-o", str(tmp / "app_pc"), *flags],
                          capture_output=True, text=True)


# -- the fixtures against real cmake / pkg-config ----------------------------------------------

def test_good_wheel_has_no_findings_and_consumers_build(surface_wheels, tmp_path):
    surface, findings = _audit(surface_wheels["demo_good"])
    assert findings == []
    t = surface.target("demo::demo")
    assert (t.type, t.live, t.files["RELEASE"].member, t.sonames) == (
        "SHARED", True, "demo/lib/libdemo.so", {"RELEASE": "libdemo.so"})
    assert [r.member for r in t.include_dirs] == ["demo/include"] and t.link_libraries == ["m"]
    assert surface.export_files == {"demo/lib/cmake/Demo/DemoTargets.cmake": True}
    assert surface.configs[0].includes == ["demo/lib/cmake/Demo/DemoTargets.cmake",
                                           "demo/lib/cmake/Demo/DemoTargets-release.cmake"]
    pc = surface.pkgconfig[0]
    assert (pc.name, pc.libraries, [r.member for r in pc.lib_dirs]) == ("demo", ["demo"], ["demo/lib"])

    tree = _unpack(surface_wheels["demo_good"], tmp_path / "site")
    p = _cmake(tree / "demo", "Demo", "demo::demo", tmp_path / "b", compile_=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert _link_with_pkg_config(tree, tmp_path).returncode == 0


def test_renamed_library_is_wa701_error_and_find_package_stops(surface_wheels, tmp_path):
    _, findings = _audit(surface_wheels["demo_renamed"])
    assert _codes(findings) == [("WA701", "error"), ("WA701", "error")]  # the target's and the .pc's -ldemo
    assert any("libdemo.so.1" in f.message and f.subject.endswith("demo.pc") for f in findings)

    tree = _unpack(surface_wheels["demo_renamed"], tmp_path / "site")
    p = _cmake(tree / "demo", "Demo", "demo::demo", tmp_path / "b")
    assert p.returncode != 0 and "references the file" in p.stderr and "does not exist" in p.stderr
    link = _link_with_pkg_config(tree, tmp_path)
    assert link.returncode != 0 and "-ldemo" in link.stderr  # "cannot find -ldemo"


def test_absolute_link_path_is_wa702_error_and_the_build_fails(surface_wheels, tmp_path):
    _, findings = _audit(surface_wheels["demo_absolute"])
    assert _codes(findings) == [("WA702", "error")]
    assert findings[0].subject == ABSOLUTE

    tree = _unpack(surface_wheels["demo_absolute"], tmp_path / "site")
    p = _cmake(tree / "demo", "Demo", "demo::demo", tmp_path / "b", compile_=True)
    # the consumer's link line names the build machine's file; where this machine has no such file
    # the build stops ("No rule to make target"), where it has one the consumer silently links
    # this machine's copy instead of anything the wheel ships
    assert ABSOLUTE in (tmp_path / "b" / "CMakeFiles" / "app.dir" / "link.txt").read_text()
    if os.path.exists(ABSOLUTE):
        assert p.returncode == 0, p.stdout + p.stderr
    else:
        assert p.returncode != 0 and ABSOLUTE in p.stdout + p.stderr


def test_soname_disagreement_is_wa703_and_the_consumer_does_not_load(surface_wheels, tmp_path):
    from wheelaudit.binary import read_binary

    _, findings = _audit(surface_wheels["demo_soname"])
    assert _codes(findings) == [("WA703", "error")]
    assert "libdemo.so.1" in findings[0].message

    tree = _unpack(surface_wheels["demo_soname"], tmp_path / "site")
    p = _cmake(tree / "demo", "Demo", "demo::demo", tmp_path / "b", compile_=True)
    assert p.returncode == 0, p.stdout + p.stderr
    app = tmp_path / "b" / "app"
    # the consumer records the library's own SONAME, not IMPORTED_SONAME: a name no file has
    consumer = read_binary(app.read_bytes(), "app")
    assert consumer is not None and "libdemo.so.1" in consumer.dependencies
    run = subprocess.run([str(app)], capture_output=True, text=True,
                         env={**os.environ, "LD_LIBRARY_PATH": str(tree / "demo" / "lib")})
    assert run.returncode != 0 and "libdemo.so.1" in run.stderr


def test_missing_include_dir_is_wa704_and_cmake_stops(surface_wheels, tmp_path):
    _, findings = _audit(surface_wheels["demo_no_include"])
    assert _codes(findings) == [("WA704", "error"), ("WA704", "error"), ("WA704", "warning")]
    by_subject = {f.subject: f.severity for f in findings}
    assert by_subject == {"demo::demo": "error", "Demo_INCLUDE_DIR": "error", "demo/lib/pkgconfig/demo.pc": "warning"}

    tree = _unpack(surface_wheels["demo_no_include"], tmp_path / "site")
    p = _cmake(tree / "demo", "Demo", "demo::demo", tmp_path / "b")
    assert p.returncode != 0 and "Demo_INCLUDE_DIR does not exist" in p.stderr  # set_and_check
    # without the config's set_and_check, CMake still refuses to generate the consumer
    config = tree / "demo/lib/cmake/Demo/DemoConfig.cmake"
    config.write_text(config.read_text().replace("set_and_check(Demo_INCLUDE_DIR", "set(Demo_INCLUDE_DIR"))
    p = _cmake(tree / "demo", "Demo", "demo::demo", tmp_path / "b2")
    assert p.returncode != 0 and "non-existent path" in p.stderr
    # a missing -I is no error to the compiler
    assert _pkg_config(tree, "--cflags").returncode == 0


def test_orphan_export_file_is_a_warning_and_nothing_loads_it(surface_wheels, tmp_path):
    surface, findings = _audit(surface_wheels["demo_orphan"])
    assert _codes(findings) == [("WA701", "warning")]
    assert surface.orphans == ["demo/lib/cmake/Legacy/LegacyTargets.cmake"]
    assert not surface.target("legacy::demo").live

    tree = _unpack(surface_wheels["demo_orphan"], tmp_path / "site")
    p = _cmake(tree / "demo", "Demo", "demo::demo", tmp_path / "b")
    assert p.returncode == 0, p.stdout + p.stderr


def _et_components():
    return [CMakeComponent("backend_mlx", "executorch::backend_mlx", "executorch/lib/libexecutorch_backend_mlx.*"),
            CMakeComponent("backend_xnnpack", "executorch::backend_xnnpack",
                           "executorch/lib/libexecutorch_backend_xnnpack.*")]


def _et_declarations(whl: Path):
    files, read = _wheel_view(whl)
    return read_declarations(files, read, ["executorch/**/executorch-config.cmake"], ET_DECLARES, "executorch::")


def test_forgotten_component_is_wa705_and_the_consumer_stops(surface_wheels, tmp_path):
    whl = surface_wheels["et_forgets_mlx"]
    _, findings = _audit(whl, _et_components(), _et_declarations(whl))
    assert _codes(findings) == [("WA705", "error")] and findings[0].subject == "backend_mlx"

    tree = _unpack(whl, tmp_path / "site")
    p = _cmake(tree / "executorch", "executorch", "executorch::backend_mlx", tmp_path / "b")
    assert p.returncode != 0 and "executorch::backend_mlx" in p.stderr and "not found" in p.stderr


def test_declared_component_passes_and_the_consumer_configures(surface_wheels, tmp_path):
    whl = surface_wheels["et_good"]
    _, findings = _audit(whl, _et_components(), _et_declarations(whl))
    assert findings == []
    tree = _unpack(whl, tmp_path / "site")
    p = _cmake(tree / "executorch", "executorch", "executorch::backend_mlx", tmp_path / "b")
    assert p.returncode == 0, p.stdout + p.stderr


# -- reading, without cmake ----------------------------------------------------------------------

def _surface(texts: dict[str, str], extra: tuple[str, ...] = ()):
    files = list(texts) + list(extra)
    return read_surface(files, texts.get), files


EXPORT = """\
get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_FILE}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
if(_IMPORT_PREFIX STREQUAL "/")
  set(_IMPORT_PREFIX "")
endif()
add_library(ob::openblas SHARED IMPORTED)
set_target_properties(ob::openblas PROPERTIES
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libopenblas.so"
  INTERFACE_INCLUDE_DIRECTORIES "${_IMPORT_PREFIX}/include;$<BUILD_INTERFACE:/build/include>"
  INTERFACE_LINK_LIBRARIES "$<LINK_ONLY:Threads::Threads>;/usr/lib/x86_64-linux-gnu/libgfortran.so.5"
  INTERFACE_COMPILE_OPTIONS "/EHsc;/bigobj;-I/opt/build/include")
"""


def test_variables_the_config_sets_are_resolved_before_include():
    texts = {
        "ob/lib/cmake/OpenBLASConfig.cmake": 'set(PN OpenBLAS)\ninclude("${CMAKE_CURRENT_LIST_DIR}/${PN}Targets.cmake")\n',
        "ob/lib/cmake/OpenBLASTargets.cmake": EXPORT,
    }
    surface, files = _surface(texts, ("ob/lib/libopenblas.so", "ob/include/cblas.h"))
    t = surface.target("ob::openblas")
    assert t.live and t.files["RELEASE"].member == "ob/lib/libopenblas.so" and t.files["RELEASE"].exists
    assert [r.member for r in t.include_dirs] == ["ob/include"]  # BUILD_INTERFACE dropped
    assert t.link_libraries[0] == "Threads::Threads"
    # MSVC options are not paths; -I/opt/build/include is
    assert [r.text for r in t.other_paths] == ["/opt/build/include"]
    findings = check_surface(surface, files, {})
    assert _codes(findings) == [("WA702", "error"), ("WA702", "warning")]


def test_import_prefix_is_computed_as_the_file_computes_it():
    # the same export file one directory deeper: with one more climbing step it finds the library,
    # with the generated file's three it does not (the reader never assumes a depth)
    step = 'get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)\n'
    deeper = EXPORT.replace(step, step + step, 1)
    for text, member, exists in ((deeper, "ob/lib/libopenblas.so", True),
                                 (EXPORT, "ob/lib/lib/libopenblas.so", False)):
        texts = {"ob/lib/cmake/x/OpenBLASConfig.cmake": 'include("${CMAKE_CURRENT_LIST_DIR}/T.cmake")\n',
                 "ob/lib/cmake/x/T.cmake": text}
        surface, _ = _surface(texts, ("ob/lib/libopenblas.so",))
        ref = surface.target("ob::openblas").files["RELEASE"]
        assert (ref.member, ref.exists) == (member, exists)


def test_orphans_and_glob_foreach_includes():
    texts = {
        "p/share/FooConfig.cmake": ('file(GLOB _files "${CMAKE_CURRENT_LIST_DIR}/FooTargets-*.cmake")\n'
                                    "foreach(f ${_files})\n  include(${f})\nendforeach()\n"),
        "p/share/FooTargets-a.cmake": "add_library(foo::a STATIC IMPORTED)\n",
        "p/share/FooTargets-b.cmake": "add_library(foo::b STATIC IMPORTED)\n",
        "p/other/BarTargets.cmake": "add_library(bar::x SHARED IMPORTED)\n",
    }
    surface, _ = _surface(texts)
    assert {t.name: t.live for t in surface.targets} == {"foo::a": True, "foo::b": True, "bar::x": False}
    assert surface.orphans == ["p/other/BarTargets.cmake"]


def test_data_scheme_members_land_in_the_prefix():
    layout = Layout(["x-1.data/data/share/cmake/X/XConfig.cmake", "x-1.data/data/lib/libx.so", "x/__init__.py"])
    r = layout.ref("/<prefix>/lib/libx.so")
    assert (r.kind, r.member, r.exists) == ("wheel", "x-1.data/data/lib/libx.so", True)
    assert layout.ref("/<prefix>/lib/python3/site-packages/x").is_dir
    assert layout.ref("C:/build/x.lib").kind == "absolute"
    assert layout.ref("${UNKNOWN}/x").kind == "unresolved"


def test_pkgconfig_variables_pcfiledir_and_requires():
    pc = ("prefix=${pcfiledir}/../..\nlibdir=${prefix}/lib  # a comment\nincludedir=/usr/local/include\n"
          "Name: q\nRequires: zlib >= 1.2, openssl\nLibs: -L${libdir} -lq ${libdir}/libq_extra.a\n"
          "Cflags: -I${includedir} -I${prefix}/include/q\n")
    surface, files = _surface({"q/lib/pkgconfig/q.pc": pc}, ("q/lib/libq.so",))
    p = surface.pkgconfig[0]
    assert p.requires == ["zlib", "openssl"]
    assert p.libs[0] == "-L<site-packages>/q/lib/pkgconfig/../../lib"
    assert [r.member for r in p.files] == ["q/lib/libq_extra.a"]
    findings = check_surface(surface, files, {})
    assert _codes(findings) == [("WA701", "error"), ("WA702", "warning"), ("WA704", "warning")]


def test_unknown_conditions_take_both_branches_and_known_ones_one():
    texts = {"a/AConfig.cmake": ('set(K ON)\nif(K)\n  set(D "${CMAKE_CURRENT_LIST_DIR}/x")\nelse()\n'
                                 '  set(D "/nowhere")\nendif()\n'
                                 'if(WIN32)\n  add_library(a::w SHARED IMPORTED)\nelse()\n'
                                 '  add_library(a::u SHARED IMPORTED)\nendif()\n'
                                 'set_target_properties(a::u PROPERTIES IMPORTED_LOCATION "${D}/liba.so")\n')}
    surface, _ = _surface(texts)
    assert {t.name for t in surface.targets} == {"a::w", "a::u"}
    assert surface.target("a::u").files[""].member == "a/x/liba.so"


def test_the_wheels_platform_decides_platform_branches():
    texts = {"a/AConfig.cmake": ('if(WIN32 AND NOT TARGET a::blas)\n  add_library(a::blas UNKNOWN IMPORTED)\n'
                                 '  set_target_properties(a::blas PROPERTIES IMPORTED_LOCATION "${CMAKE_CURRENT_LIST_DIR}/.lib")\n'
                                 'endif()\n'
                                 'if(310 GREATER_EQUAL 310)\n  set(A_INCLUDE_DIRS "${CMAKE_CURRENT_LIST_DIR}/inc/metal_3_1")\n'
                                 'else()\n  set(A_INCLUDE_DIRS "${CMAKE_CURRENT_LIST_DIR}/inc/metal_3_0")\nendif()\n')}
    files = list(texts) + ["a/inc/metal_3_1/x.h"]
    on_linux = read_surface(files, texts.get, platform="linux")
    assert on_linux.targets == [] and check_surface(on_linux, files, {}) == []
    # unknown platform (a pure wheel): both ways are read
    assert [t.name for t in read_surface(files, texts.get).targets] == ["a::blas"]


def test_wa705_declared_for_another_library():
    files = ["e/lib/libexecutorch_backend_mlx.so", "e/lib/cmake/e/executorch-config.cmake"]
    decl = [Declaration("executorch::backend_mlx", "executorch_backend_xnnpack", files[1])]
    comps = [CMakeComponent("backend_mlx", "executorch::backend_mlx", "e/lib/libexecutorch_backend_mlx.*")]
    findings = undeclared_targets(comps, files, read_surface([], lambda p: None), decl)
    assert _codes(findings) == [("WA705", "error")] and "another library" in findings[0].message
    # an owner that does not ship: nothing to declare
    assert undeclared_targets(comps, files[1:], read_surface([], lambda p: None), []) == []


def test_declarations_ignore_commented_out_lines():
    text = "# _executorch_define_component(backend_mlx executorch_backend_mlx)\n" \
           "_executorch_define_component(backend_xnnpack executorch_backend_xnnpack)\n"
    decl = read_declarations(["c.cmake"], {"c.cmake": text}.get, ["c.cmake"], ET_DECLARES, "executorch::")
    assert [d.target for d in decl] == ["executorch::backend_xnnpack"]


# -- hostile text --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "add_library(", 'set(x "unterminated', "set(x [[never closed", "#[[ open comment", "(((", "\\", "a b c",
    "set(x)" * 10, "\0\0\0(", "foreach(x IN LISTS)\n", "if(x)\n", "function(f)\n",
])
def test_malformed_cmake_is_a_problem_not_a_crash(text):
    surface, _ = _surface({"a/AConfig.cmake": text})
    assert all(isinstance(why, str) for _, why in surface.problems)


def test_self_including_config_and_exponential_variables_are_bounded():
    loop = 'include("${CMAKE_CURRENT_LIST_FILE}")\n'
    bomb = "set(a x)\n" + "".join('set(a "${a}${a}")\n' for _ in range(40))
    surface, _ = _surface({"a/AConfig.cmake": loop, "b/BConfig.cmake": bomb})
    assert {p for p, _ in surface.problems} == {"a/AConfig.cmake", "b/BConfig.cmake"}


def test_tokenizer_raises_only_its_own_error_under_mutation():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    alphabet = st.sampled_from(list('()"#[]=;\\${}<>@ \n\tabcIMPORTED_PREFIX/') + ["${", "[[", "]]", "#[[", "$<"])

    @settings(max_examples=300, deadline=None, database=None)
    @given(st.lists(alphabet, max_size=200).map("".join), st.integers(0, len(EXPORT)))
    def run(noise: str, at: int) -> None:
        text = EXPORT[:at] + noise + EXPORT[at:]
        try:
            tokenize(text)
        except SurfaceError:
            pass
        texts = {"o/cmake/OConfig.cmake": 'include("${CMAKE_CURRENT_LIST_DIR}/T.cmake")\n' + noise,
                 "o/cmake/T.cmake": text, "o/lib/pkgconfig/o.pc": "prefix=${pcfiledir}\n" + noise}
        read_surface(list(texts), texts.get)  # never raises

    run()


# -- the command line ----------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wheelaudit", *args], capture_output=True, text=True)


def test_check_reports_wa7xx_and_inspect_lists_the_surface(surface_wheels):
    p = _cli("check", str(surface_wheels["demo_renamed"]), "--select", "WA7")
    assert p.returncode == 1 and "WA701" in p.stdout, p.stdout + p.stderr
    p = _cli("check", str(surface_wheels["demo_orphan"]), "--select", "WA7")
    assert p.returncode == 0 and "WA701" in p.stdout  # a warning does not fail the default gate
    p = _cli("inspect", str(surface_wheels["demo_good"]), "--format", "json")
    assert p.returncode == 0, p.stderr
    surface = json.loads(p.stdout)["wheels"][0]["consumer_surface"]
    [t] = surface["targets"]
    assert (t["name"], t["type"], t["live"], t["files"]["RELEASE"]["path"], t["files"]["RELEASE"]["identity"]) == (
        "demo::demo", "SHARED", True, "demo/lib/libdemo.so", "libdemo.so")
    assert surface["pkgconfig"][0]["name"] == "demo"
    p = _cli("inspect", str(surface_wheels["demo_orphan"]))
    assert p.returncode == 0 and "legacy::demo" in p.stdout and "orphan" in p.stdout


def test_rules_cmake_target_runs_wa705_through_check(surface_wheels, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(f'''version = 1
[cmake]
config = "executorch/**/executorch-config.cmake"
declares = '{ET_DECLARES}'
namespace = "executorch::"

[[component]]
name = "backend_mlx"
strings = ["et_backend_mlx"]
owner = "executorch/lib/libexecutorch_backend_mlx.*"
cmake-target = "executorch::backend_mlx"
required = false
''')
    bad = _cli("check", str(surface_wheels["et_forgets_mlx"]), "--rules", str(rules), "--select", "WA705")
    assert bad.returncode == 1 and "WA705" in bad.stdout, bad.stdout + bad.stderr
    good = _cli("check", str(surface_wheels["et_good"]), "--rules", str(rules), "--select", "WA705")
    assert good.returncode == 0, good.stdout + good.stderr


def test_a_member_that_cannot_be_read_is_listed_not_raised():
    import zlib

    def read(path):
        raise zlib.error("invalid stored block lengths")

    surface = read_surface(["p/PConfig.cmake", "p/p.pc"], read)
    assert sorted(p for p, _ in surface.problems) == ["p/PConfig.cmake", "p/p.pc"]


def test_check_together_reports_each_members_surface(surface_wheels):
    p = _cli("check", "--together", str(surface_wheels["demo_renamed"]), str(surface_wheels["et_good"]),
             "--select", "WA7")
    assert p.returncode == 1 and p.stdout.count("WA701 error") == 2, p.stdout + p.stderr


@pytest.mark.parametrize("table, says", [
    ('[cmake]\nconfig = "x/*.cmake"\ndeclares = "define\\\\((\\\\w+)"\n', "(?P<name>...)"),
    ('[cmake]\nconfig = "x/*.cmake"\ndeclares = "define\\\\(("\n', "not a regular expression"),
    ('[cmake]\ndeclares = "(?P<name>x)"\n', "config"),
    ('[[cmake]]\nconfig = "x"\ndeclares = "(?P<name>x)"\n', "expected a table"),
])
def test_invalid_cmake_table_is_a_usage_error(tmp_path, table, says):
    rules = tmp_path / "rules.toml"
    rules.write_text("version = 1\n" + table)
    p = _cli("check", str(rules), "--rules", str(rules))  # (the wheel argument is never reached)
    assert p.returncode == 2 and says in p.stderr and "cmake" in p.stderr, p.stderr


def test_together_a_target_may_name_a_library_another_wheel_ships(tmp_path):
    """An export file in one wheel naming a library the other wheel ships (executorch's config
    naming torch's libc10): alone, WA701 (configure fails); installed together, resolved."""
    import json as _json

    from wheel.wheelfile import WheelFile

    from wheelaudit.cli.main import main as cli_main

    tag = "cp311-cp311-manylinux_2_28_x86_64"
    elf = Path("/lib/x86_64-linux-gnu/libz.so.1")
    if not elf.exists():
        elf = next(Path("/usr/lib").rglob("libz.so.1"))

    def wheel(name: str, members: dict[str, bytes]) -> Path:
        path = tmp_path / f"{name}-1.0-{tag}.whl"
        with WheelFile(path, "w") as wf:
            wf.writestr(f"{name}-1.0.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
            wf.writestr(f"{name}-1.0.dist-info/WHEEL",
                        f"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: {tag}\n")
            for arc, data in members.items():
                wf.writestr(arc, data)
        return path

    targets = (
        'get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_FILE}" PATH)\n'
        'get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)\n'
        'get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)\n'
        'get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)\n'
        'get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)\n'
        'add_library(user::core SHARED IMPORTED)\n'
        'set_target_properties(user::core PROPERTIES\n'
        '  IMPORTED_LOCATION "${_IMPORT_PREFIX}/dep/lib/libz.so.1"\n'
        '  IMPORTED_SONAME "libz.so.1")\n'
    )
    user = wheel("user", {"user/share/cmake/user/userTargets.cmake": targets.encode(),
                          "user/share/cmake/user/user-config.cmake":
                              b'include("${CMAKE_CURRENT_LIST_DIR}/userTargets.cmake")\n'})
    dep = wheel("dep", {"dep/lib/libz.so.1": elf.read_bytes()})

    def wa701(*args: str) -> list[str]:
        import io
        import contextlib

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            cli_main(["check", *args, "--select", "WA7", "--format", "json"])
        return [f["code"] for w in _json.loads(buf.getvalue())["wheels"] for f in w["findings"]]

    assert wa701(str(user)) == ["WA701"]
    assert wa701(str(user), str(dep), "--together") == []
