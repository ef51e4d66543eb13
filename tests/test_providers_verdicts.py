"""Dependencies that other distributions provide (issue #26), judged from the provider table:
a required provider is no finding, an unrequired one is one WA505 naming every library, a GPU
driver library is an allowed external, and nobody known is WA501."""
from __future__ import annotations

from pathlib import Path

from packaging.tags import parse_tag

from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.model.binary import Binary, Dependency, Rpath, Slice, Symbol
from wheelaudit.checks.linkage import check_linkage
from wheelaudit.checks.resolution import resolution_table
from wheelaudit.scanner import Wheel

LINUX = "cp311-cp311-manylinux_2_28_x86_64"


def ext(needed) -> Binary:
    return Binary(path="ext/_C.so", format="elf", size=1, slices=[Slice(  # (a module: it exports PyInit__C)
        arch="x86_64", dependencies=[Dependency(n) for n in needed], rpaths=[Rpath("$ORIGIN", "runpath")],
        exports=[Symbol("PyInit__C")])])


def wheel(needed, requires=()) -> Wheel:
    tags = sorted(parse_tag(LINUX), key=str)
    b = ext(needed)
    return Wheel(path=Path(f"ext-1.0-{LINUX}.whl"), name="ext", version="1.0", tags=[str(t) for t in tags],
                 traits=traits_from_tags(tags, "1.0"), files=[b.path], libraries=[b], requires_dist=list(requires))


def codes(fs):
    return sorted((f.code, f.severity) for f in fs)


TORCH_LIBS = ["libtorch.so", "libc10.so", "libtorch_python.so"]


def test_a_required_provider_is_no_finding_and_inspect_says_who():
    w = wheel(TORCH_LIBS, requires=["torch>=2.8"])
    assert check_linkage(w) == []
    where = resolution_table(w)["ext/_C.so"]["x86_64"]["libc10.so"]
    assert where.startswith("provided by torch") and "Requires-Dist: torch>=2.8" in where


def test_an_unrequired_provider_is_one_wa505_naming_every_library():
    fs = check_linkage(wheel(TORCH_LIBS))
    assert codes(fs) == [("WA505", "error")]
    f = fs[0]
    assert f.subject == "torch" and all(lib in f.message for lib in TORCH_LIBS)
    assert "Requires-Dist: torch" in f.hint


def test_markers_and_extras_are_evaluated_for_the_wheel():
    # a requirement behind a marker that does not hold on Linux does not provide
    assert codes(check_linkage(wheel(TORCH_LIBS, requires=['torch; sys_platform == "darwin"']))) == [("WA505", "error")]
    assert check_linkage(wheel(TORCH_LIBS, requires=['torch; sys_platform == "linux"'])) == []
    # one behind the wheel's own extra: `pip install ext` alone does not bring it
    [f] = check_linkage(wheel(TORCH_LIBS, requires=['torch; extra == "gpu"']))
    assert (f.code, f.severity) == ("WA505", "error")
    assert "requires only with its extra gpu" in f.message and "`pip install ext[gpu]` brings them" in f.message


def test_cuda_libraries_through_a_meta_distribution_and_the_driver():
    w = wheel(["libcudart.so.13", "libcublas.so.13", "libcuda.so.1"],
              requires=["cuda-toolkit[cudart,cublas]==13.0.2"])
    assert check_linkage(w) == []
    table = resolution_table(w)["ext/_C.so"]["x86_64"]
    assert "GPU driver" in table["libcuda.so.1"]
    # torch brings them along for a torch extension (torch's own requirements are followed)
    assert check_linkage(wheel(["libcudart.so.13", "libtorch.so"], requires=["torch==2.14.1"])) == []


def test_nobody_known_is_still_wa501():
    assert codes(check_linkage(wheel(["libnobody.so.3"], requires=["torch"]))) == [("WA501", "error")]


def test_an_optional_dependency_is_a_warning():
    from wheelaudit.model.globs import Glob
    from wheelaudit.ruleset.model import LinkageRule

    w = wheel(["libtbb.so.12", "libgomp.so.1.0.0"])
    rule = LinkageRule(optional=[Glob("libtbb.so.*", cross_slash=True), Glob("libgomp.so.*", cross_slash=True)])
    assert codes(check_linkage(w, rule)) == [("WA501", "warning"), ("WA505", "warning")]
    assert codes(check_linkage(w)) == [("WA501", "error"), ("WA505", "error")]


def test_a_macos_extension_of_torch_rests_on_dyld_reusing_the_loaded_image():
    mac = "cp311-cp311-macosx_11_0_arm64"
    tags = sorted(parse_tag(mac), key=str)
    b = Binary(path="ext/_C.so", format="macho", size=1, kind="bundle", slices=[Slice(
        arch="arm64", dependencies=[Dependency("@rpath/libc10.dylib", "load")], min_os="11.0")])
    w = Wheel(path=Path(f"ext-1.0-{mac}.whl"), name="ext", version="1.0", tags=[str(t) for t in tags],
              traits=traits_from_tags(tags, "1.0"), files=[b.path], libraries=[b], requires_dist=["torch"])
    assert check_linkage(w) == []
    where = resolution_table(w)["ext/_C.so"]["arm64"]["@rpath/libc10.dylib"]
    assert where.startswith("provided by torch") and "dyld reuses the image" in where


def test_a_compiler_runtime_a_provider_vendors_is_never_offered():
    """torch ships libgomp.so.1 (and libomp.dylib on macOS) for itself: a wheel that needs GCC's
    OpenMP runtime is told to ship it or to name the system package, never to require torch
    (LightGBM's lib_lightgbm.so); on macOS a library loaded by path (xgboost's libxgboost.dylib,
    through ctypes) that needs libomp.dylib fails at every load: an error, not a warning."""
    assert codes(check_linkage(wheel(["libgomp.so.1"]))) == [("WA501", "error")]
    assert check_linkage(wheel(["libgomp.so.1"], requires=["torch>=2.8"])) == []  # (a requirer gets it)
    tags = sorted(parse_tag("py3-none-macosx_12_0_arm64"), key=str)
    lib = Binary(path="xgboost/lib/libxgboost.dylib", format="macho", size=1, slices=[Slice(
        arch="arm64", dependencies=[Dependency("@rpath/libomp.dylib")], rpaths=[Rpath("@loader_path", "lc_rpath")])])
    mac = Wheel(path=Path("xgboost-3.2.0-py3-none-macosx_12_0_arm64.whl"), name="xgboost", version="3.2.0",
                tags=[str(t) for t in tags], traits=traits_from_tags(tags, "3.2.0"), files=[lib.path], libraries=[lib])
    assert [(f.code, f.severity) for f in check_linkage(mac)] == [("WA501", "error")]


def test_a_library_a_toolkit_vendors_for_itself_is_offered_to_no_other_wheel():
    """PyQt6-Qt6 bundles FFmpeg for Qt Multimedia: a wheel that needs libavformat is not told to
    require a GUI toolkit for it (WA501, not WA505); a wheel that requires PyQt6-Qt6 gets it."""
    assert codes(check_linkage(wheel(["libavformat.so.61"]))) == [("WA501", "error")]
    assert check_linkage(wheel(["libavformat.so.61"], requires=["PyQt6-Qt6==6.11.2"])) == []


def test_the_cmeel_family_provides_into_one_prefix():
    """eigenpy requires cmeel-boost: both install into cmeel.prefix/, whose Boost it links."""
    w = wheel(["libboost_python311.so.1.90.0", "libboost_filesystem.so.1.90.0"], requires=["cmeel-boost>=1.90"])
    assert check_linkage(w) == []
    assert [f.subject for f in check_linkage(wheel(["libboost_python311.so.1.90.0"]))] == ["cmeel-boost"]
