"""``wheelaudit owners`` and ``wheelaudit dups`` (and the grouping logic in wheelaudit.review.dups)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wheelaudit.cli.main import main
from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.review.dups import (FORTRAN, NO_PREFIX, c_prefix, common_scope, find_duplicates, is_boilerplate,
                             namespace_key, sentinel_pattern)
from wheelaudit.model.binary import Binary, Slice, Symbol
from wheelaudit.model.wheel import Wheel

ANSI = re.compile(r"\x1b\[[0-9;]*m")
MLX = "executorch/lib/libexecutorch_backend_mlx.dylib"
MLX_COPY = "executorch/backends/mlx/libexecutorch_backend_mlx.dylib"
C_MACOS = "executorch/extension/pybindings/_C.cpython-311-darwin.so"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "100")


# --------------------------------------------------------------------------------------------
# owners


def test_owners_registry_defined_by_libexecutorch_imported_by_c(capsys, fixture_wheels):
    code, out, _ = _run(capsys, "owners", fixture_wheels["macos_clean"],
                        "executorch::runtime::get_num_registered_backends", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["mode"] == "symbols" and data["matched"] is True
    (p,) = data["patterns"]
    assert [d["path"] for d in p["definers"]] == ["executorch/lib/libexecutorch.dylib"]
    d = p["definers"][0]
    assert (d["strong"], d["weak"], d["local"]) == (1, 0, 0)
    assert d["examples"]["strong"] == ["executorch::runtime::get_num_registered_backends()"]
    assert [i["path"] for i in p["importers"]] == [C_MACOS]


def test_owners_wildcards_strong_weak_local_apart(capsys, fixture_wheels):
    code, out, _ = _run(capsys, "owners", fixture_wheels["macos_fused"], "mlx::core::*",
                        "executorch::backends::mlx::*", "--format", "json")
    assert code == 0
    core, delegate = json.loads(out)["patterns"]
    (c,) = core["definers"]  # fused: only _C carries MLX
    assert c["path"] == C_MACOS
    assert c["strong"] == 0 and c["weak"] >= 1 and c["local"] >= 1
    assert "mlx::core::default_device_index()" in c["examples"]["weak"]
    (d,) = delegate["definers"]
    assert d["path"] == C_MACOS and d["strong"] == 2


def test_owners_text_table(capsys, fixture_wheels):
    code, out, _ = _run(capsys, "owners", fixture_wheels["macos_dup_delegate"],
                        "executorch::backends::mlx::MLXBackend::init", "executorch::runtime::register_backend")
    assert code == 0
    assert "\x1b[" not in out  # not a TTY: no colour
    lines = out.splitlines()
    i = lines.index("executorch::backends::mlx::MLXBackend::init")
    assert lines[i + 1] == "  defined by 2 libraries (2 strongly):"
    header = lines[i + 2]
    assert header.split() == ["library", "strong", "weak", "local"]
    rows = [ln for ln in lines[i + 3:i + 8] if ln.startswith("    executorch/")]
    assert [r.split()[0] for r in rows] == [MLX_COPY, MLX]
    # aligned: the counts start in the header's "strong" column
    col = header.index("strong")
    assert all(r[col] == "1" for r in rows)
    assert "imported by 3 libraries:" in out  # both MLX copies and the XNNPACK delegate register
    assert out.rstrip().endswith("2 of 2 patterns matched")
    assert all(len(ln) <= 100 for ln in lines)


def test_owners_nothing_matched_exits_1(capsys, fixture_wheels):
    code, out, _ = _run(capsys, "owners", fixture_wheels["macos_clean"], "no_such_symbol_anywhere")
    assert code == 1
    assert "no library defines or imports a matching symbol" in out


def test_owners_invalid_pattern_is_a_usage_error(capsys, fixture_wheels):
    code, _, err = _run(capsys, "owners", fixture_wheels["macos_clean"], "*")
    assert code == 2 and "bare '*'" in err


def test_owners_strings(capsys, fixture_wheels):
    needle = "Failed to load the default metallib"
    code, out, _ = _run(capsys, "owners", fixture_wheels["macos_clean"], "--strings", needle, "--format", "json")
    assert code == 0
    (p,) = json.loads(out)["patterns"]
    assert p["binaries"] == [{"path": MLX, "archs": ["arm64"]}]
    code, out, _ = _run(capsys, "owners", fixture_wheels["macos_fused"], "--strings", needle)
    assert code == 0 and f"    {C_MACOS}" in out.splitlines()
    code, out, _ = _run(capsys, "owners", fixture_wheels["linux_clean"], "--strings", needle)
    assert code == 1 and "no binary contains it" in out


# --------------------------------------------------------------------------------------------
# dups


def test_dups_lists_the_delegate_namespace_with_both_paths(capsys, fixture_wheels):
    code, out, _ = _run(capsys, "dups", fixture_wheels["macos_dup_delegate"], "--format", "json")
    assert code == 0
    data = json.loads(out)
    groups = data["groups"]
    assert [g["strength"] for g in groups] == ["strong", "weak"]
    strong, weak = groups
    assert strong["key"] == "executorch::backends"
    assert strong["pattern"] == "executorch::backends::mlx::MLXBackend::*"
    assert sorted(lib["path"] for lib in strong["libraries"]) == [MLX_COPY, MLX]
    assert all(lib["strong"] == 2 for lib in strong["libraries"])
    assert {s["name"] for s in strong["symbols"]} == {
        "executorch::backends::mlx::MLXBackend::init(char const*, unsigned long) const",
        "executorch::backends::mlx::MLXBackend::is_available() const"}
    assert weak["key"] == "mlx::core" and all(lib["strong"] == 0 for lib in weak["libraries"])
    assert data["summary"] == {"symbols": 4, "strong_symbols": 2, "groups": 2, "strong_groups": 1, "weak_groups": 1}


def test_dups_text_strong_before_weak_labelled(capsys, fixture_wheels):
    code, out, _ = _run(capsys, "dups", fixture_wheels["macos_dup_delegate"])
    assert code == 0
    s, w = out.index("Strong duplicates"), out.index("Weak-only duplicates")
    assert s < w
    strong_part = out[s:w]
    assert MLX in strong_part and MLX_COPY in strong_part
    assert "sentinel: executorch::backends::mlx::MLXBackend::*" in strong_part
    assert "inline functions" in out[w:]
    assert out.rstrip().endswith("4 symbols defined by more than one library: 1 strong group (2 symbols), "
                                 "1 weak-only group (2 symbols)")


def test_dups_clean_wheel_and_min_count(capsys, fixture_wheels):
    code, out, _ = _run(capsys, "dups", fixture_wheels["macos_clean"])
    assert code == 0 and "no symbol is defined by more than one library" in out
    code, out, _ = _run(capsys, "dups", fixture_wheels["macos_dup_delegate"], "--min-count", "3", "--format", "json")
    assert code == 0 and json.loads(out)["groups"] == []
    code, _, err = _run(capsys, "dups", fixture_wheels["macos_dup_delegate"], "--min-count", "0")
    assert code == 2


def test_colour_only_when_asked_and_never_with_no_color(capsys, fixture_wheels, monkeypatch):
    wheel = fixture_wheels["macos_dup_delegate"]
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out, _ = _run(capsys, "dups", wheel)
    assert "\x1b[" in out
    _, out_nc, _ = _run(capsys, "dups", wheel, "--no-color")
    assert "\x1b[" not in out_nc and out_nc == ANSI.sub("", out)
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = _run(capsys, "owners", wheel, "mlx::core::*")
    assert "\x1b[" not in out


# --------------------------------------------------------------------------------------------
# grouping logic


@pytest.mark.parametrize("name,key", [
    ("mlx::core::add(mlx::core::array const&, mlx::core::array const&)", "mlx::core"),
    ("int mlx::core::size_of_dtype<float>()", "mlx::core"),
    ("vtable for mlx::core::array", "mlx::core"),
    ("executorch::runtime::Result<int>::get() const", "executorch::runtime"),
    ("Eigen::selfadjoint_rank1_update<double, int, 0, 1, false, false>::run(int, double*)",
     "Eigen::selfadjoint_rank1_update"),
    ("mlx::core::operator<(mlx::core::array const&, float)", "mlx::core"),
    ("foo::bar()", "foo"),
    ("xnn_create_runtime_v4", "xnn_"),
    ("pthreadpool_create", "pthreadpool_"),
    ("__cxa_throw", "__cxa_"),
    ("sgemm_", FORTRAN),
    ("dgemm_", FORTRAN),
    ("sgesv_", FORTRAN),
    ("fpback_", FORTRAN),
    ("deflateInit_", "deflate*"),  # zlib: a capital, so not Fortran
    ("deflateInit2_", "deflate*"),
    ("ImagingSectionEnter", "Imaging*"),
    ("SharpYuvConvert", "Sharp*"),
    ("TIFFOpen", "TIFF*"),
    ("Foo_", NO_PREFIX),
    ("MODES", NO_PREFIX),
    ("getMachineByteOrder()::endian_check", NO_PREFIX),  # a C++ local static, not camelCase C
    ("main", NO_PREFIX),
    ("_ZGVZN10executorch7cpublas13gemm_transa_IdEEvNS0_13TransposeTypeEll", "executorch::cpublas"),
    ("{vtable(std::bad_optional_access)}", "std"),
])
def test_namespace_key(name, key):
    assert namespace_key(name) == key


def test_c_prefix_and_common_scope():
    assert c_prefix("cpuinfo_initialize") == "cpuinfo_"
    assert common_scope(["a::b::C::f()", "a::b::C::g(int) const"]) == "a::b::C"
    assert common_scope(["a::f()", "b::g()"]) is None


def _lib(path: str, strong: list[str] = (), weak: list[str] = ()) -> Binary:
    exports = [Symbol(n, n, "global", "func") for n in strong] + [Symbol(n, n, "weak", "func") for n in weak]
    return Binary(path=path, format="elf", size=100, slices=[Slice(arch="x86_64", exports=exports)])


def _wheel(*libs: Binary) -> Wheel:
    return Wheel(path=Path("demo-1.0-py3-none-any.whl"), name="demo", version="1.0", tags=[],
                 traits=traits_from_tags([], "1.0"), files=[b.path for b in libs], libraries=list(libs))


def test_find_duplicates_strength_merge_and_order():
    a = _lib("pkg/liba.so", strong=["xnn_a", "xnn_b", "inmemoryfs::A::f()", "inmemoryfs::B::g()", "solo_x"],
             weak=["std::vector<int>::size() const"])
    b = _lib("pkg/libb.so", strong=["xnn_a", "xnn_b", "inmemoryfs::A::f()", "inmemoryfs::B::g()"],
             weak=["std::vector<int>::size() const"])
    c = _lib("pkg/libc.so", strong=["xnn_a", "mixed_f"], weak=[])
    d = _lib("pkg/libd.so", weak=["mixed_f"])
    groups = find_duplicates(_wheel(a, b, c, d))
    got = [(g.key, g.strength, g.count, g.copies, g.paths) for g in groups]
    assert got == [
        # xnn_a has three strong definers (2 extra copies), xnn_b two (1): 3 copies
        ("xnn_", "strong", 2, 3, ["pkg/liba.so", "pkg/libb.so", "pkg/libc.so"]),
        # inmemoryfs::A and inmemoryfs::B between the same libraries merge into inmemoryfs
        ("inmemoryfs", "strong", 2, 2, ["pkg/liba.so", "pkg/libb.so"]),
        # strong in one library with weak copies elsewhere, and weak-only: after the strong ones
        # (equal copies: by key)
        ("mixed_", "weak", 1, 1, ["pkg/libc.so", "pkg/libd.so"]),
        ("std::vector", "weak", 1, 1, ["pkg/liba.so", "pkg/libb.so"]),
    ]
    xnn = groups[0]
    assert xnn.pattern == "xnn_*"
    assert [(lib.path, lib.symbols, lib.strong) for lib in xnn.libraries] == [
        ("pkg/liba.so", 2, 2), ("pkg/libb.so", 2, 2), ("pkg/libc.so", 1, 1)]
    assert groups[1].pattern == "inmemoryfs::*"
    assert find_duplicates(_wheel(a, b, c, d), min_count=2)[0].key == "xnn_"
    assert [g.key for g in find_duplicates(_wheel(a, b, c, d), min_count=2)] == ["xnn_", "inmemoryfs"]


@pytest.mark.parametrize("name, version", [
    ("_init", None), ("_fini", None), ("_edata", None), ("_end", None), ("__bss_start", None),
    ("__dso_handle", None), ("_GLOBAL_OFFSET_TABLE_", None), ("_DYNAMIC", None), ("__data_start", None),
    ("data_start", None), ("_IO_stdin_used", None), ("__libc_csu_init", None), ("__TMC_END__", None),
    ("_ITM_registerTMCloneTable", None), ("__gmon_start__", None), ("__cxa_finalize", None),
    ("_mh_dylib_header", None), ("PyInit__zeros", None),
    ("GFORTRAN_8", "GFORTRAN_8"), ("LIBTIFF_4.0", "LIBTIFF_4.0"),  # ELF version nodes
])
def test_boilerplate(name, version):
    assert is_boilerplate(name, version)


@pytest.mark.parametrize("name, version", [("init", None), ("deflate", None), ("end", None),
                                           ("TIFFOpen", "LIBTIFF_4.0"), ("__cxa_throw", None)])
def test_not_boilerplate(name, version):
    assert not is_boilerplate(name, version)


def test_boilerplate_is_never_a_duplicate_and_c_words_group():
    boiler = ["_init", "_fini", "_edata", "_end", "__bss_start", "PyInit__zeros"]
    zlib = ["deflate", "deflateEnd", "deflateInit_"]
    mode = ["MODES", "findModeID", "getModeData"]  # one object file linked into both modules
    a = _lib("pkg/liba.so", strong=boiler + zlib + ["dgemm_", "sgesv_"])
    b = _lib("pkg/libb.so", strong=boiler + zlib + ["dgemm_", "sgesv_"])
    c = _lib("pkg/_c.so", strong=boiler + mode)
    d = _lib("pkg/_d.so", strong=boiler + mode)
    groups = find_duplicates(_wheel(a, b, c, d))
    got = sorted((g.key, g.pattern, sorted(s.name for s in g.symbols)) for g in groups)
    assert got == sorted([("deflate*", "deflate*", zlib), (FORTRAN, "dgemm_", ["dgemm_", "sgesv_"]),
                          (NO_PREFIX, "MODES", sorted(mode))])


def test_sentinel_pattern_of_camel_case_names_ends_at_a_word():
    names = ["SharpYuvComputeConversionMatrix", "SharpYuvConvert", "SharpYuvInit"]
    assert sentinel_pattern(names, "Sharp*") == "SharpYuv*"
    assert sentinel_pattern(["ImagingSectionEnter", "ImagingSectionLeave"], "Imaging*") == "ImagingSection*"
    assert sentinel_pattern(["deflateInit_"], "deflate*") == "deflateInit_"
