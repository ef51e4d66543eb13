"""Assert on what fixtures/ builds: each scenario's defining property holds.

These tests use independent readers (pyelftools, lief, llvm-nm / llvm-cxxfilt,
wheel.wheelfile), never wheelaudit itself, so a wheelaudit test that uses a fixture can
trust the fixture's shape.
"""
from __future__ import annotations

import csv
import hashlib
import io
import base64
import os
import posixpath
import shutil
import subprocess
import zipfile
from functools import cache
from pathlib import Path, PurePosixPath

import lief
import pytest
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from packaging.utils import parse_wheel_filename
from wheel.wheelfile import WheelError, WheelFile

lief.logging.disable()


def _load_make_wheels():
    import importlib.util
    import sys
    path = Path(__file__).resolve().parent.parent / "fixtures" / "make_wheels.py"
    if "make_wheels" in sys.modules:
        return sys.modules["make_wheels"]
    spec = importlib.util.spec_from_file_location("make_wheels", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_wheels"] = mod
    spec.loader.exec_module(mod)
    return mod


mw = _load_make_wheels()

LLVM_BIN = Path(os.path.realpath(shutil.which("clang") or "/usr/bin/clang")).parent
LIB = "executorch/lib"
EXT_LINUX = mw.EXT_LINUX
EXT_MACOS = mw.EXT_MACOS
LC = lief.MachO.LoadCommand.TYPE
WEAK_DEF = 0x4  # EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION

# component sentinels (executorch.md §3.1), demangled, whole-name
REGISTRY = ["executorch::runtime::register_backend", "executorch::runtime::get_num_registered_backends",
            "executorch::runtime::get_backend_class"]
PAL = ["executorch::runtime::register_pal", "executorch::runtime::get_pal_impl"]
OPS = ["executorch::runtime::register_kernels", "executorch::runtime::get_registered_kernels"]
SENTINELS = {
    "libexecutorch": REGISTRY + PAL + OPS,
    "libexecutorch_threadpool": ["executorch::extension::threadpool::get_threadpool", "cpuinfo_initialize"],
    "libexecutorch_etdump": ["executorch::etdump::ETDumpGen::ETDumpGen"],
    "libexecutorch_kernels_optimized": ["torch::executor::native::abs_out"],
    "libexecutorch_kernels_quantized": ["torch::executor::native::quantize_per_tensor_out",
                                        "torch::executor::native::dequantize_per_tensor_out"],
    "libexecutorch_backend_xnnpack": [
        "executorch::backends::xnnpack::XnnpackBackendOptions::workspace_manager",
        "xnn_create_runtime_v4"],
    "libexecutorch_backend_mlx": ["executorch::backends::mlx::MLXBackend::init"],
}
EXT_IMPORTS = ["executorch::runtime::get_num_registered_backends", "executorch::runtime::get_backend_class",
               "executorch::extension::threadpool::get_threadpool"]
MLX_STRING = b"Failed to load the default metallib"
BASE_LIBS = list(mw.BASE_LIBS)


# ------------------------------------------------------------------ helpers
def matches(name: str, sentinel: str) -> bool:
    return name == sentinel or name.startswith(tuple(sentinel + c for c in "(@:<"))


def defines(names, sentinel: str) -> bool:
    return any(matches(n, sentinel) for n in names)


@cache
def _demangle_many(names: tuple) -> tuple:
    if not names:
        return ()
    out = subprocess.run([str(LLVM_BIN / "llvm-cxxfilt")], input="\n".join(names) + "\n",
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(names)
    return tuple(out)


def demangle(names, macho: bool = False) -> list:
    raw = [n[1:] if macho and n.startswith("_") else n for n in names]
    return list(_demangle_many(tuple(raw)))


def members(whl: Path) -> dict:
    with zipfile.ZipFile(whl) as z:
        return {n: z.read(n) for n in z.namelist()}


def native(names) -> list:
    return sorted(n for n in names if n.endswith((".so", ".dylib")))


def elf(data: bytes) -> ELFFile:
    return ELFFile(io.BytesIO(data))


def elf_dyn(data: bytes) -> dict:
    out: dict = {"NEEDED": [], "SONAME": [], "RPATH": [], "RUNPATH": []}
    for t in elf(data).get_section_by_name(".dynamic").iter_tags():
        tag = t.entry.d_tag
        if tag == "DT_NEEDED":
            out["NEEDED"].append(t.needed)
        elif tag == "DT_SONAME":
            out["SONAME"].append(t.soname)
        elif tag == "DT_RPATH":
            out["RPATH"].append(t.rpath)
        elif tag == "DT_RUNPATH":
            out["RUNPATH"].append(t.runpath)
    return out


def elf_dynsym(data: bytes):
    """(defined [(demangled, bind)], undefined [demangled])"""
    syms = [s for s in elf(data).get_section_by_name(".dynsym").iter_symbols() if s.name]
    d = [s for s in syms if s.entry.st_shndx != "SHN_UNDEF"]
    u = [s for s in syms if s.entry.st_shndx == "SHN_UNDEF"]
    return (list(zip(demangle([s.name for s in d]), [s.entry.st_info.bind for s in d], strict=True)),
            demangle([s.name for s in u]))


def elf_locals(data: bytes) -> list:
    st = elf(data).get_section_by_name(".symtab")
    if st is None:
        return []
    loc = [s.name for s in st.iter_symbols() if s.name and s.entry.st_info.bind == "STB_LOCAL"]
    return demangle(loc)


def elf_glibc_needs(data: bytes) -> set:
    sec = elf(data).get_section_by_name(".gnu.version_r")
    if sec is None:
        return set()
    return {a.name for _, auxs in sec.iter_versions() for a in auxs}


def glibc_key(v: str):
    return tuple(int(x) for x in v.split("_", 1)[1].split("."))


def macho(data: bytes) -> list:
    fat = lief.MachO.parse(list(data))
    assert fat is not None, "lief could not parse Mach-O"
    return [fat.at(i) for i in range(fat.size)]


def mo_cmds(b, *types) -> list:
    return [c for c in b.commands if c.command in types]


def mo_id(b):
    ids = mo_cmds(b, LC.ID_DYLIB)
    return ids[0].name if ids else None


def mo_loads(b) -> list:
    return [c.name for c in mo_cmds(b, LC.LOAD_DYLIB)]


def mo_rpaths(b) -> list:
    return [c.path for c in mo_cmds(b, LC.RPATH)]


def mo_exports(b):
    """[(demangled, weak)] from the export trie"""
    ex = [s for s in b.exported_symbols]
    names = demangle([s.name for s in ex], macho=True)
    return [(n, bool(s.has_export_info and s.export_info.flags & WEAK_DEF)) for n, s in zip(names, ex, strict=True)]


def mo_imports(b) -> list:
    return demangle([s.name for s in b.imported_symbols], macho=True)


def mo_locals(b) -> list:
    # non-external symbol table entries (N_EXT clear, not stabs)
    loc = [s.name for s in b.symbols
           if s.category == lief.MachO.Symbol.CATEGORY.LOCAL and s.origin == lief.MachO.Symbol.ORIGIN.SYMTAB
           and s.name]
    return demangle(loc, macho=True)


def arch_name(b) -> str:
    return str(b.header.cpu_type).rsplit(".", 1)[-1].lower()


def minos(b) -> tuple:
    if b.has_build_version:
        return tuple(b.build_version.minos)
    return tuple(b.version_min.version)


def record_rows(m: dict) -> dict:
    rec = [n for n in m if n.endswith(".dist-info/RECORD")]
    assert len(rec) == 1
    return {r[0]: (r[1], r[2]) for r in csv.reader(io.StringIO(m[rec[0]].decode()))}


def record_problems(m: dict) -> list:
    rows = record_rows(m)
    bad = []
    for n, data in m.items():
        if n.endswith("/RECORD"):
            continue
        if n not in rows:
            bad.append((n, "not in RECORD"))
            continue
        h, size = rows[n]
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        if h != f"sha256={digest}":
            bad.append((n, "hash"))
        if int(size) != len(data):
            bad.append((n, "size"))
    return bad


def wheelfile_reads_all(whl: Path) -> None:
    with WheelFile(whl) as wf:
        for n in wf.namelist():
            wf.read(n)


@pytest.fixture(scope="module")
def W(fixture_wheels):
    return {k: members(v) for k, v in fixture_wheels.items()}


# ------------------------------------------------------------------ step 1 libraries
def test_step1_libraries(fixture_libs: Path):
    e = fixture_libs / "elf"
    foo = (e / "libfoo.so.2").read_bytes()
    assert "foo_hidden" in elf_locals(foo)                      # unstripped, local symbol table
    assert elf(foo).get_section_by_name(".symtab") is not None
    stripped = (e / "libfoo.stripped.so").read_bytes()
    assert elf(stripped).get_section_by_name(".symtab") is None  # stripped
    assert [n for n, _ in elf_dynsym(stripped)[0] if n.startswith("foo_")] == \
        [n for n, _ in elf_dynsym(foo)[0] if n.startswith("foo_")]
    assert elf_dyn(foo) == {"NEEDED": ["libbase.so.1"], "SONAME": ["libfoo.so.2"], "RPATH": [],
                            "RUNPATH": ["$ORIGIN/../lib"]}
    assert elf_dyn((e / "libbackend.so").read_bytes())["RPATH"] == ["$ORIGIN"]
    assert elf((e / "libbase.aarch64.so").read_bytes())["e_machine"] == "EM_AARCH64"
    i686 = elf((e / "libbase.i686.so").read_bytes())
    assert (i686.elfclass, i686["e_machine"], i686.little_endian) == (32, "EM_386", True)
    ppc = elf((e / "libbase.ppc64.so").read_bytes())
    assert (ppc.elfclass, ppc["e_machine"], ppc.little_endian) == (64, "EM_PPC64", False)
    assert "GLIBC_2.34" in elf_glibc_needs((e / "libthreads.so").read_bytes())
    assert (e / "libbase.so").is_symlink()
    for arch in ("arm64", "x86_64"):
        d = fixture_libs / "macho" / arch
        (b,) = macho((d / "libfoo.dylib").read_bytes())
        assert "foo_hidden" in mo_locals(b)
        (s,) = macho((d / "libfoo.stripped.dylib").read_bytes())
        assert "foo_hidden" not in mo_locals(s)
        assert sorted(n for n, _ in mo_exports(s)) == sorted(n for n, _ in mo_exports(b))
        assert mo_id(b) == "@rpath/libfoo.dylib"
        assert mo_rpaths(b) == ["@loader_path", "@loader_path/../lib"]
    for lib in ("base", "foo", "foo.stripped", "mlx", "backend"):
        slices = macho((fixture_libs / "macho" / "universal2" / f"lib{lib}.dylib").read_bytes())
        assert sorted(arch_name(b) for b in slices) == ["arm64", "x86_64"]


# ------------------------------------------------------------------ all wheels
def test_every_scenario_built(fixture_wheels, fixture_build_dir):
    assert (fixture_build_dir / "elf" / "lib" / "libexecutorch.so").is_file()
    assert set(fixture_wheels) == set(mw.SCENARIOS)
    for name, path in fixture_wheels.items():
        assert path.is_file() and path.parent.name == name
        dist, version, _, tags = parse_wheel_filename(path.name)
        assert (dist, str(version)) == ("executorch", "1.6.0")
        (tag,) = tags
        if name == "macos_universal2" or name == "macos_universal2_thin_one":
            assert tag.platform == "macosx_10_13_universal2"
        elif name.startswith("macos_"):
            assert tag.platform == "macosx_14_0_arm64"
        else:
            assert tag.platform == "manylinux_2_28_x86_64"
        assert (tag.interpreter, tag.abi) == ("cp311", "cp311")


def test_metadata_and_wheel_files(W, fixture_wheels):
    for name, m in W.items():
        meta = m["executorch-1.6.0.dist-info/METADATA"].decode()
        assert "Name: executorch\n" in meta and "Version: 1.6.0\n" in meta
        assert ("Requires-Dist: torch\n" in meta) == (name != "linux_no_torch_requirement")
        whl = m["executorch-1.6.0.dist-info/WHEEL"].decode()
        assert "Wheel-Version: 1.0\n" in whl and "Root-Is-Purelib: false\n" in whl
        assert "Generator: " in whl
        tag = fixture_wheels[name].name[len("executorch-1.6.0-"):-len(".whl")]
        assert f"Tag: {tag}\n" in whl
        assert "executorch/__init__.py" in m
        # torch's libraries are linked against but never shipped
        assert not [n for n in m if PurePosixPath(n).name.startswith(("libtorch", "libc10"))]


def test_record_verifies_except_broken_ones(W, fixture_wheels):
    for name, path in fixture_wheels.items():
        if name in ("linux_tampered", "linux_no_record"):
            continue
        assert record_problems(W[name]) == [], name
        wheelfile_reads_all(path)


def test_linux_tampered(W, fixture_wheels):
    assert record_problems(W["linux_tampered"]) == [
        (f"{LIB}/libexecutorch_etdump.so", "hash"), (f"{LIB}/libexecutorch_etdump.so", "size")]
    with pytest.raises(WheelError, match="Hash mismatch"):
        wheelfile_reads_all(fixture_wheels["linux_tampered"])
    # the library itself still parses
    assert elf_dyn(W["linux_tampered"][f"{LIB}/libexecutorch_etdump.so"])["SONAME"] == [
        "libexecutorch_etdump.so"]


def test_linux_no_record(W, fixture_wheels):
    assert not [n for n in W["linux_no_record"] if n.endswith("RECORD")]
    assert set(W["linux_no_record"]) == set(W["linux_clean"]) - {"executorch-1.6.0.dist-info/RECORD"}
    with pytest.raises(WheelError, match="Missing"):
        WheelFile(fixture_wheels["linux_no_record"])


# ------------------------------------------------------------------ clean layouts
def test_linux_clean_layout(W):
    m = W["linux_clean"]
    assert native(m) == sorted([f"{LIB}/{b}.so" for b in BASE_LIBS + list(mw.LINUX_ONLY_LIBS)] + [EXT_LINUX])
    assert not [n for n in m if "mlx" in n]
    defined_by = {}
    for b in BASE_LIBS:
        data = m[f"{LIB}/{b}.so"]
        dyn = elf_dyn(data)
        assert dyn["SONAME"] == [f"{b}.so"] and dyn["RUNPATH"] == ["$ORIGIN"] and dyn["RPATH"] == []
        assert elf(data).get_section_by_name(".symtab") is None   # stripped like release wheels
        d, _ = elf_dynsym(data)
        names = [n for n, bind in d if bind == "STB_GLOBAL"]
        for s in SENTINELS[b]:
            assert defines(names, s), (b, s)
        defined_by[b] = names
        assert all(glibc_key(v) <= (2, 28) for v in elf_glibc_needs(data) if v.startswith("GLIBC_"))
    assert defines(defined_by["libexecutorch_threadpool"], "pthreadpool_create")
    # every sentinel has exactly one definer
    for b, sents in SENTINELS.items():
        for s in sents:
            owners = [o for o, names in defined_by.items() if defines(names, s)]
            assert owners == ([] if b == "libexecutorch_backend_mlx" else [b]), s
    assert "GLIBC_2.2.5" in elf_glibc_needs(m[f"{LIB}/libexecutorch_threadpool.so"])


def test_linux_extension(W):
    data = W["linux_clean"][EXT_LINUX]
    dyn = elf_dyn(data)
    assert dyn["SONAME"] == [] and dyn["RPATH"] == []
    assert dyn["RUNPATH"] == ["$ORIGIN/../../lib:$ORIGIN/../../../torch/lib"]
    assert dyn["NEEDED"] == ["libexecutorch.so", "libexecutorch_threadpool.so", "libexecutorch_etdump.so",
                             "libexecutorch_backend_xnnpack.so", "libexecutorch_kernels_optimized.so",
                             "libexecutorch_backend_openvino.so", "libexecutorch_backend_qnn.so",
                             "libtorch.so", "libc10.so"]
    d, u = elf_dynsym(data)
    assert [n for n, bind in d if bind == "STB_GLOBAL" and n not in ("_init", "_fini")] == ["PyInit__C"]
    for s in EXT_IMPORTS:
        assert defines(u, s), s
    assert "PyModule_Create2" in u
    for sents in SENTINELS.values():
        assert not any(defines([n for n, _ in d], s) for s in sents)


def test_macos_clean_layout(W):
    m = W["macos_clean"]
    bases = BASE_LIBS + ["libexecutorch_backend_mlx"]
    assert native(m) == sorted([f"{LIB}/{b}.dylib" for b in bases] + [EXT_MACOS])
    assert [n for n in m if n.endswith("mlx.metallib")] == [mw.METALLIB_BESIDE_LIB]
    assert m[mw.METALLIB_BESIDE_LIB][:4] == b"MTLB"
    exported = {}
    for b in bases:
        (sl,) = macho(m[f"{LIB}/{b}.dylib"])
        assert arch_name(sl) == "arm64" and sl.header.file_type == lief.MachO.Header.FILE_TYPE.DYLIB
        assert mo_id(sl) == f"@rpath/{b}.dylib"
        assert mo_rpaths(sl) == ["@loader_path"]
        assert minos(sl) == (11, 0, 0)
        exported[b] = [n for n, weak in mo_exports(sl) if not weak]
        for s in SENTINELS[b]:
            assert defines(exported[b], s), (b, s)
    for b, sents in SENTINELS.items():
        for s in sents:
            assert [o for o, names in exported.items() if defines(names, s)] == [b], s
    # counting local symbols too (the libraries are unstripped), each sentinel still has one definer
    everything = {}
    for n in native(m):
        (sl,) = macho(m[n])
        everything[n] = [x for x, _ in mo_exports(sl)] + mo_locals(sl)
    for b, sents in SENTINELS.items():
        for s in sents:
            assert [n for n, names in everything.items() if defines(names, s)] == [
                f"{LIB}/{b}.dylib"], s
    assert [n for n, names in everything.items() if any("mlx::core::" in x for x in names)] == [
        f"{LIB}/libexecutorch_backend_mlx.dylib"]
    # pthreadpool is hidden on Apple: a local symbol, not exported
    (tp,) = macho(m[f"{LIB}/libexecutorch_threadpool.dylib"])
    assert not defines(exported["libexecutorch_threadpool"], "pthreadpool_create")
    assert "pthreadpool_create" in mo_locals(tp)
    assert [MLX_STRING in m[n] for n in native(m)].count(True) == 1
    assert MLX_STRING in m[f"{LIB}/libexecutorch_backend_mlx.dylib"]
    (xnn,) = macho(m[f"{LIB}/libexecutorch_backend_xnnpack.dylib"])
    assert mo_loads(xnn) == ["/usr/lib/libSystem.B.dylib", "@rpath/libexecutorch_threadpool.dylib",
                             "@rpath/libexecutorch.dylib", "/usr/lib/libc++.1.dylib"]


def test_macos_extension_is_bundle(W):
    (b,) = macho(W["macos_clean"][EXT_MACOS])
    assert b.header.file_type == lief.MachO.Header.FILE_TYPE.BUNDLE
    assert mo_id(b) is None
    assert mo_rpaths(b) == ["@loader_path/../../lib", "@loader_path/../../../torch/lib"]
    assert sorted(mo_loads(b)) == sorted([
        "/usr/lib/libSystem.B.dylib", "/usr/lib/libc++.1.dylib",
        "@rpath/libexecutorch.dylib", "@rpath/libexecutorch_threadpool.dylib",
        "@rpath/libexecutorch_etdump.dylib", "@rpath/libexecutorch_backend_xnnpack.dylib",
        "@rpath/libexecutorch_backend_mlx.dylib", "@rpath/libexecutorch_kernels_optimized.dylib",
        "@rpath/libtorch.dylib", "@rpath/libc10.dylib"])
    assert [n for n, _ in mo_exports(b)] == ["PyInit__C"]
    imports = mo_imports(b)
    for s in EXT_IMPORTS:
        assert defines(imports, s)
    assert "PyModule_Create2" in imports
    assert MLX_STRING not in W["macos_clean"][EXT_MACOS]


def test_mlx_exports_exactly_two_weak_symbols(W):
    for scen, path in [("macos_clean", f"{LIB}/libexecutorch_backend_mlx.dylib"),
                       ("macos_universal2", f"{LIB}/libexecutorch_backend_mlx.dylib"),
                       ("macos_fused", EXT_MACOS)]:
        for sl in macho(W[scen][path]):
            ex = mo_exports(sl)
            # note: a demangled template function carries its return type:
            # "int mlx::core::size_of_dtype<float>()"
            mlx = [(n, weak) for n, weak in ex if "mlx::core::" in n]
            assert len(mlx) == 2 and all(weak for _, weak in mlx), (scen, arch_name(sl), mlx)
            assert defines([n for n, w in ex if not w], "executorch::backends::mlx::MLXBackend::init")
            # the hidden MLX code is still visible as local symbols (unstripped Mach-O)
            assert "mlx::core::internal_helper()" in mo_locals(sl)
        assert MLX_STRING in W[scen][path]


def test_mlx_weak_per_llvm_nm(W, tmp_path):
    p = tmp_path / "libexecutorch_backend_mlx.dylib"
    p.write_bytes(W["macos_clean"][f"{LIB}/libexecutorch_backend_mlx.dylib"])
    out = subprocess.run([str(LLVM_BIN / "llvm-nm"), "-m", str(p)], capture_output=True,
                         text=True, check=True).stdout   # llvm-nm 14 ignores -C with -m
    weak = [ln for ln in out.splitlines() if "__ZN3mlx4core" in ln and ") weak external " in ln]
    strong = [ln for ln in out.splitlines() if "__ZN3mlx4core" in ln and ") external " in ln]
    hidden = [ln for ln in out.splitlines() if "__ZN3mlx4core" in ln and "non-external" in ln]
    assert hidden  # the rest of MLX is there, hidden
    assert len(weak) == 2 and strong == []


# ------------------------------------------------------------------ macOS scenarios
def test_macos_universal2(W):
    for scen in ("macos_universal2", "macos_universal2_thin_one"):
        m = W[scen]
        assert len(native(m)) == 8
        for n in native(m):
            slices = macho(m[n])
            archs = sorted(arch_name(b) for b in slices)
            if scen == "macos_universal2_thin_one" and n.endswith("libexecutorch_etdump.dylib"):
                assert archs == ["arm64"]
                continue
            assert archs == ["arm64", "x86_64"], (scen, n)
            for b in slices:
                assert minos(b) == ((11, 0, 0) if arch_name(b) == "arm64" else (10, 13, 0))
        assert mw.METALLIB_BESIDE_LIB in m


def test_macos_fused(W):
    m = W["macos_fused"]
    assert not [n for n in m if "libexecutorch_backend_mlx" in n]
    assert [n for n in m if n.endswith("mlx.metallib")] == [mw.METALLIB_BESIDE_EXT]
    (b,) = macho(m[EXT_MACOS])
    assert b.header.file_type == lief.MachO.Header.FILE_TYPE.BUNDLE
    assert defines([n for n, w in mo_exports(b) if not w], "executorch::backends::mlx::MLXBackend::init")
    assert MLX_STRING in m[EXT_MACOS]
    assert "@rpath/libexecutorch_backend_mlx.dylib" not in mo_loads(b)
    assert [n for n in native(m) if MLX_STRING in m[n]] == [EXT_MACOS]


def test_macos_dup_delegate(W):
    m = W["macos_dup_delegate"]
    copies = [n for n in m if PurePosixPath(n).name == "libexecutorch_backend_mlx.dylib"]
    assert sorted(copies) == ["executorch/backends/mlx/libexecutorch_backend_mlx.dylib",
                              f"{LIB}/libexecutorch_backend_mlx.dylib"]
    assert m[copies[0]] == m[copies[1]]
    assert [n for n in m if n.endswith("mlx.metallib")] == [mw.METALLIB_BESIDE_LIB]


def test_macos_metallib_scenarios(W):
    def metallibs(s):
        return sorted(n for n in W[s] if n.endswith("mlx.metallib"))
    assert metallibs("macos_two_metallibs") == sorted([mw.METALLIB_BESIDE_LIB, mw.METALLIB_BESIDE_EXT])
    assert metallibs("macos_metallib_wrong_place") == [mw.METALLIB_BESIDE_EXT]
    assert f"{LIB}/libexecutorch_backend_mlx.dylib" in W["macos_metallib_wrong_place"]
    m = W["macos_metallib_no_mlx"]
    assert metallibs("macos_metallib_no_mlx") == [mw.METALLIB_BESIDE_LIB]
    assert not [n for n in m if "backend_mlx" in n]
    for n in native(m):
        assert MLX_STRING not in m[n]
        for b in macho(m[n]):
            assert not [s for s in mo_exports(b) if "mlx::" in s[0]]
            assert not [s for s in mo_locals(b) if "mlx::" in s]
            assert "@rpath/libexecutorch_backend_mlx.dylib" not in mo_loads(b)


def test_macos_bad_install_name(W):
    m = W["macos_bad_install_name"]
    (e,) = macho(m[f"{LIB}/libexecutorch_etdump.dylib"])
    assert mo_id(e) == "@rpath/libetdump.dylib"
    (t,) = macho(m[f"{LIB}/libexecutorch_threadpool.dylib"])
    assert mo_id(t) == "/usr/local/lib/libexecutorch_threadpool.dylib"
    # _C is the clean one: only the identities are wrong
    assert m[EXT_MACOS] == W["macos_clean"][EXT_MACOS]


def test_macos_build_rpath(W):
    (b,) = macho(W["macos_build_rpath"][f"{LIB}/libexecutorch_backend_xnnpack.dylib"])
    assert mo_rpaths(b) == ["@loader_path", "/Users/runner/work/executorch/cmake-out/lib"]


def test_macos_rpath_via_loader(W):
    m = W["macos_rpath_via_loader"]
    (a,) = macho(m[f"{LIB}/libexecutorch_etdump.dylib"])
    assert mo_rpaths(a) == []
    assert "@rpath/libexecutorch.dylib" in mo_loads(a)
    (c,) = macho(m[EXT_MACOS])
    assert "@rpath/libexecutorch_etdump.dylib" in mo_loads(c)
    ext_dir = posixpath.dirname(EXT_MACOS)
    resolved = [posixpath.normpath(posixpath.join(ext_dir, r[len("@loader_path/"):]))
                for r in mo_rpaths(c) if r.startswith("@loader_path/")]
    assert LIB in resolved and f"{LIB}/libexecutorch.dylib" in m


def test_macos_weak_absent(W):
    m = W["macos_weak_absent"]
    (b,) = macho(m[f"{LIB}/libexecutorch_kernels_optimized.dylib"])
    assert [c.name for c in mo_cmds(b, LC.LOAD_WEAK_DYLIB)] == ["@rpath/libabsent.dylib"]
    assert not [n for n in m if "libabsent" in n]


# ------------------------------------------------------------------ Linux scenarios
def test_linux_unexpected_name(W):
    m = W["linux_unexpected_name"]
    assert set(m) - set(W["linux_clean"]) == {f"{LIB}/libexecutorch_extra.so"}
    assert elf_dyn(m[f"{LIB}/libexecutorch_extra.so"])["SONAME"] == ["libexecutorch_extra.so"]


def test_linux_partial(W):
    d, _ = elf_dynsym(W["linux_partial"][f"{LIB}/libexecutorch.so"])
    names = [n for n, _ in d]
    assert defines(names, "executorch::runtime::register_pal")
    assert not defines(names, "executorch::runtime::get_pal_impl")
    for s in REGISTRY + OPS:
        assert defines(names, s)
    for n in native(W["linux_partial"]):
        assert not defines(elf_dynsym(W["linux_partial"][n])[1], "executorch::runtime::get_pal_impl")


def test_linux_glibc234(W):
    m = W["linux_glibc234"]
    needs = elf_glibc_needs(m[f"{LIB}/libexecutorch_threadpool.so"])
    assert "GLIBC_2.34" in needs
    _, u = elf_dynsym(m[f"{LIB}/libexecutorch_threadpool.so"])
    assert "pthread_create" in u
    for n in native(m):
        if not n.endswith("libexecutorch_threadpool.so"):
            assert all(glibc_key(v) <= (2, 28) for v in elf_glibc_needs(m[n]) if v.startswith("GLIBC_"))


def test_linux_truncated(W):
    m = W["linux_truncated"]
    data = m[f"{LIB}/libexecutorch_kernels_optimized.so"]
    full = W["linux_clean"][f"{LIB}/libexecutorch_kernels_optimized.so"]
    assert data[:4] == b"\x7fELF" and len(data) == len(full) // 2 and full.startswith(data)
    assert record_problems(m) == []
    with pytest.raises(ELFError):  # (the reference reader refuses the truncated file)
        elf_dynsym(data)


def test_linux_rpath_shadowed(W):
    m = W["linux_rpath_shadowed"]
    dyn = elf_dyn(m[f"{LIB}/libexecutorch_kernels_quantized.so"])
    assert dyn["NEEDED"] == ["libexecutorch.so"]
    assert dyn["RUNPATH"] == ["$ORIGIN/../nowhere"] and dyn["RPATH"] == ["$ORIGIN"]
    assert "executorch/nowhere/libexecutorch.so" not in m and f"{LIB}/libexecutorch.so" in m
    d, _ = elf_dynsym(m[f"{LIB}/libexecutorch_kernels_quantized.so"])
    assert defines([n for n, _ in d], "torch::executor::native::quantize_per_tensor_out")


def test_linux_hidden_copy(W):
    data = W["linux_hidden_copy"][f"{LIB}/libexecutorch_backend_xnnpack.so"]
    assert "executorch::extension::threadpool::get_threadpool()" in elf_locals(data)
    d, u = elf_dynsym(data)
    assert not defines([n for n, _ in d], "executorch::extension::threadpool::get_threadpool")
    assert not defines(u, "executorch::extension::threadpool::get_threadpool")
    assert defines([n for n, _ in d], "executorch::backends::xnnpack::XnnpackBackendOptions::workspace_manager")
