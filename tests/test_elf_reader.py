"""The ELF reader (wheelaudit.binary.elf): differential against pyelftools and lief, facts known
from the fixture sources, and hostile input (truncation, corruption, absurd counts).

Inputs: every ELF file of the shared ``fixture_libs`` (tests/conftest.py, detected by magic), plus
libraries built here for what the shared set does not cover: symbol versions (verdef), weak,
protected, TLS, IFUNC, common and GNU_UNIQUE symbols, empty rpath entries, SysV hash, PIE and
non-PIE executables, relocatable objects, more architectures, and copies with the section headers
removed (the loader's view only).
"""

from __future__ import annotations

import collections
import mmap
import random
import shutil
import struct
import subprocess
import tracemalloc
from pathlib import Path

import pytest
from elftools.elf import enums as pe_enums
from elftools.elf.elffile import ELFFile

from bounds import no_hang
from wheelaudit.model.binary import Slice
from wheelaudit.binary import MalformedBinary, elf, read_binary

# ---------------------------------------------------------------------------------------------
# inputs built here
# ---------------------------------------------------------------------------------------------

VER_C = r"""
int v_old_impl(void) { return 1; }
int v_new_impl(void) { return 2; }
__asm__(".symver v_old_impl,v_sym@VER_1");
__asm__(".symver v_new_impl,v_sym@@VER_2");
__attribute__((weak)) int weak_fn(void) { return 3; }
__attribute__((visibility("protected"))) int prot_fn(void) { return 4; }
__thread int tls_var = 5;
static int impl(void) { return 6; }
static void *resolve(void) { return (void *)impl; }
int ifunc_fn(void) __attribute__((ifunc("resolve")));
int common_var;
int hidden_helper(void) { return 7; }
extern int external_thing(void);
int calls_external(void) { return external_thing(); }
"""
VER_MAP = """
VER_1 { global: v_sym; weak_fn; prot_fn; tls_var; ifunc_fn; common_var; calls_external; local: *; };
VER_2 { global: v_sym; } VER_1;
"""
UNIQ_CPP = r"""
#define API __attribute__((visibility("default")))
template <class T> struct Registry { static int count; };
template <class T> int Registry<T>::count = 1;
inline int &counter() { static int c = 0; return c; }
API int *registry_count() { return &Registry<int>::count; }
API int bump() { return ++counter(); }
"""
HID_C = r"""
__attribute__((visibility("hidden"))) int v_old_impl(void) { return 1; }
__asm__(".symver v_old_impl,v_sym@VER_1");
"""
USE_C = r"""
extern int v_sym_old(void);
extern int v_sym(void);
__asm__(".symver v_sym_old, v_sym@VER_1");
int use_both(void) { return v_sym_old() + v_sym(); }
"""
DUP1_C = "__attribute__((noinline)) static int helper(int x) { return x + 1; }\nint one(int x) { return helper(x); }\n"
DUP2_C = "__attribute__((noinline)) static int helper(int x) { return x + 2; }\nint two(int x) { return helper(x); }\n"
EXE_C = "int puts(const char *);\nint main(void) { puts(\"hi\"); return 0; }\n"
BASE_C = "int base_value(void) { return 42; }\n"
CROSS = ["armv7-linux-gnueabihf", "riscv64-linux-gnu", "powerpc64le-linux-gnu", "powerpc-linux-gnu",
         "mipsel-linux-gnu", "x86_64-linux-gnux32"]


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"building an ELF test input failed: {' '.join(cmd)}\n{proc.stderr}", pytrace=False)


def strip_section_headers(data: bytes) -> bytes:
    """The same file with e_shoff/e_shnum/e_shstrndx zeroed: only the loader's view remains."""
    out = bytearray(data)
    e = "<" if out[5] == 1 else ">"
    if out[4] == 2:
        struct.pack_into(e + "Q", out, 0x28, 0)
        struct.pack_into(e + "HH", out, 0x3C, 0, 0)
    else:
        struct.pack_into(e + "I", out, 0x20, 0)
        struct.pack_into(e + "HH", out, 0x30, 0, 0)
    return bytes(out)


@pytest.fixture(scope="session")
def extra_elfs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    missing = [t for t in ("gcc", "g++", "clang", "ld.lld") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"missing {missing}: apt-get install gcc g++ clang lld", pytrace=False)
    d = tmp_path_factory.mktemp("elf_extra")
    for name, text in {"ver.c": VER_C, "ver.map": VER_MAP, "uniq.cpp": UNIQ_CPP, "exe.c": EXE_C,
                       "base.c": BASE_C, "hid.c": HID_C, "use.c": USE_C,
                       "dup1.c": DUP1_C, "dup2.c": DUP2_C}.items():
        (d / name).write_text(text)
    gcc = ["gcc", "-O1", "-fPIC", "-fcommon"]
    _run(gcc + ["-shared", "-Wl,--version-script=ver.map", "-Wl,-soname,libver.so.1",
                "-Wl,--disable-new-dtags", "-Wl,-rpath,/opt/a::$ORIGIN/lib:", "-Wl,--no-as-needed",
                "-Wl,--hash-style=gnu", "-o", "libver.so", "ver.c", "-lm"], d)
    _run(gcc + ["-shared", "-Wl,--version-script=ver.map", "-Wl,-soname,libver.so.1",
                "-Wl,--enable-new-dtags", "-Wl,-rpath,:$ORIGIN", "-Wl,--hash-style=sysv",
                "-o", "libver.sysv.so", "ver.c"], d)
    _run(gcc + ["-shared", "-o", "libuse.so", "use.c", "-L.", "-l:libver.so"], d)  # v_sym twice
    _run(["g++", "-O1", "-fPIC", "-shared", "-o", "libuniq.so", "uniq.cpp"], d)
    _run(gcc + ["-shared", "-o", "libdup.so", "dup1.c", "dup2.c"], d)  # two `static helper`s
    _run(["gcc", "-O1", "-pie", "-fPIE", "-o", "exe.pie", "exe.c"], d)
    _run(["gcc", "-O1", "-no-pie", "-fno-PIE", "-o", "exe.nopie", "exe.c"], d)
    _run(gcc + ["-c", "-o", "ver.o", "ver.c"], d)
    _run(gcc + ["-c", "-o", "hid.o", "hid.c"], d)
    _run(["clang", "--target=s390x-linux-gnu", "-O1", "-c", "-o", "base.s390x.o", "base.c"], d)
    for target in CROSS:
        _run(["clang", f"--target={target}", "-O1", "-fPIC", "-shared", "-nostdlib", "-fuse-ld=lld",
              "-Wl,-soname,libbase.so.1", "-o", f"libbase.{target}.so", "base.c"], d)
    _run(["objcopy", "--only-keep-debug", "libver.so", "libver.so.debug"], d)
    out = {p.name: p for p in d.iterdir() if p.read_bytes()[:4] == b"\x7fELF"}
    nosh = d / "noshdr"
    nosh.mkdir()
    for name in ("libver.so", "libver.sysv.so", "exe.pie", "exe.nopie", "libuniq.so",
                 "libbase.powerpc-linux-gnu.so"):
        p = nosh / name
        p.write_bytes(strip_section_headers(out[name].read_bytes()))
        out["noshdr/" + name] = p
    return out


def elf_files_in(root: Path) -> list[Path]:
    """Every ELF file under root, by magic (symlinks to the same file counted once)."""
    seen, found = set(), []
    for p in sorted(root.rglob("*"), key=lambda q: (q.is_symlink(), q)):  # real files before links
        if p.is_file() and p.resolve() not in seen:
            with open(p, "rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    seen.add(p.resolve())
                    found.append(p)
    return found


@pytest.fixture(scope="session")
def shared_elfs(fixture_libs: Path) -> list[Path]:
    files = elf_files_in(fixture_libs)
    names = {p.name for p in files}
    # the recipe's ELF libraries must be there; if the shared fixture loses one, say so here
    for expected in ("libbase.so.1", "libfoo.so.2", "libmlx.so", "libbackend.so", "libbase.aarch64.so"):
        assert expected in names, f"fixture_libs has no {expected}: {sorted(names)}"
    return files


@pytest.fixture(scope="session")
def sectioned_elfs(shared_elfs: list[Path], extra_elfs: dict[str, Path]) -> list[Path]:
    return shared_elfs + [p for k, p in sorted(extra_elfs.items()) if not k.startswith("noshdr/")]


@pytest.fixture(scope="session")
def fixture_map(shared_elfs: list[Path], extra_elfs: dict[str, Path]) -> dict[str, Path]:
    return {**{p.name: p for p in shared_elfs}, **extra_elfs}


# ---------------------------------------------------------------------------------------------
# the facts to compare, from three readers
# ---------------------------------------------------------------------------------------------

ARCH = {  # e_machine -> expected arch (the reader contract), by (64-bit, little endian) where it matters
    62: lambda is64, le: "x86_64" if is64 else "x32",
    183: lambda is64, le: "aarch64",
    3: lambda is64, le: "i686",
    40: lambda is64, le: "armv7l",
    21: lambda is64, le: "ppc64le" if le else "ppc64",
    20: lambda is64, le: "ppc",
    22: lambda is64, le: "s390x" if is64 else "s390",
    243: lambda is64, le: "riscv64" if is64 else "riscv32",
    258: lambda is64, le: "loongarch64" if is64 else "loongarch32",
    8: lambda is64, le: ("mips64" if is64 else "mips") + ("el" if le else ""),
}


def expected_arch(machine: int, is64: bool, little: bool) -> str:
    return ARCH[machine](is64, little) if machine in ARCH else f"unknown machine (ELF e_machine {machine})"


EXPORT_BIND = {1: "global", 10: "global", 2: "weak"}
SYM_TYPE = {2: "func", 10: "func", 1: "data", 6: "data", 5: "data"}
LOCAL_TYPE = {2: "func", 10: "func", 1: "data", 6: "data"}


def classify(name, bind, typ, vis, undefined, version):
    """Apply the reader contract to one raw symbol: ("export", ...), ("import", name) or None."""
    name = name.split("@", 1)[0]
    if not name:
        return None
    if undefined:
        return ("import", name)
    if bind in EXPORT_BIND and vis in (0, 3) and typ not in (3, 4):
        return ("export", (name, EXPORT_BIND[bind], SYM_TYPE.get(typ, "other"), version))
    return None


def local_of(name, bind, typ, vis, undefined):
    name = name.split("@", 1)[0]
    if undefined or not name or typ not in LOCAL_TYPE or not (bind == 0 or vis in (1, 2)):
        return None
    return (name, LOCAL_TYPE[typ])


def empty_facts() -> dict:
    return dict(arch=None, kind=None, identity=None, dependencies=[], rpaths=[], needs_versions=[],
                exports=[], imports=set(), locals=set(), stripped=True)


def ours(path: Path) -> dict:
    s = elf.parse(path.read_bytes())[0]
    assert isinstance(s, Slice)
    assert len(s.imports) == len(set(s.imports)), "imports are deduplicated"
    return dict(
        arch=s.arch, kind=s.kind, identity=s.identity,
        dependencies=[(d.name, d.kind) for d in s.dependencies],
        rpaths=[(r.path, r.kind) for r in s.rpaths],
        needs_versions=s.needs_versions,
        exports=sorted((x.name, x.binding, x.type, x.version) for x in s.exports),
        imports=set(s.imports),
        locals={(x.name, x.type) for x in s.locals},
        stripped=s.stripped,
    )


def _pe_num(value, table) -> int:
    return table[value] if isinstance(value, str) else int(value)


def pyelftools_facts(path: Path) -> dict:
    f = empty_facts()
    with open(path, "rb") as fh:
        e = ELFFile(fh)
        machine = _pe_num(e.header["e_machine"], pe_enums.ENUM_E_MACHINE)
        f["arch"] = expected_arch(machine, e.elfclass == 64, e.little_endian)
        interp = any(seg["p_type"] == "PT_INTERP" for seg in e.iter_segments())
        f["kind"] = {"ET_REL": "object", "ET_EXEC": "executable"}.get(
            e.header["e_type"], "executable" if interp else "shared")
        by_type = {}
        for sec in e.iter_sections():
            by_type.setdefault(sec["sh_type"], sec)
        names: dict[int, str | None] = {}
        if "SHT_GNU_verdef" in by_type:
            for vd, auxs in by_type["SHT_GNU_verdef"].iter_versions():
                names[vd["vd_ndx"]] = None if vd["vd_flags"] & 1 else next(iter(auxs)).name
        needs = set()
        if "SHT_GNU_verneed" in by_type:
            for _vn, auxs in by_type["SHT_GNU_verneed"].iter_versions():
                for aux in auxs:
                    needs.add(aux.name)
                    names.setdefault(aux["vna_other"] & 0x7FFF, aux.name)
        f["needs_versions"] = sorted(needs)
        versym = by_type.get("SHT_GNU_versym")
        bind_t, type_t, vis_t = pe_enums.ENUM_ST_INFO_BIND, pe_enums.ENUM_ST_INFO_TYPE, pe_enums.ENUM_ST_VISIBILITY
        if "SHT_DYNSYM" in by_type:
            for i, sym in enumerate(by_type["SHT_DYNSYM"].iter_symbols()):
                if i == 0:
                    continue
                version = None
                if versym is not None:
                    ndx = versym.get_symbol(i)["ndx"]
                    ndx = ndx & 0x7FFF if isinstance(ndx, int) else 0
                    version = names[ndx] if ndx >= 2 else None
                got = classify(sym.name, _pe_num(sym["st_info"]["bind"], bind_t),
                               _pe_num(sym["st_info"]["type"], type_t), _pe_num(sym["st_other"]["visibility"], vis_t),
                               sym["st_shndx"] == "SHN_UNDEF", version)
                if got and got[0] == "import":
                    f["imports"].add(got[1])
                elif got:
                    f["exports"].append(got[1])
        f["exports"].sort()
        if "SHT_SYMTAB" in by_type:
            f["stripped"] = False
            for sym in by_type["SHT_SYMTAB"].iter_symbols():
                got = local_of(sym.name, _pe_num(sym["st_info"]["bind"], bind_t),
                               _pe_num(sym["st_info"]["type"], type_t), _pe_num(sym["st_other"]["visibility"], vis_t),
                               sym["st_shndx"] == "SHN_UNDEF")
                if got:
                    f["locals"].add(got)
        if "SHT_DYNAMIC" in by_type:
            for tag in by_type["SHT_DYNAMIC"].iter_tags():
                t = tag.entry.d_tag
                if t == "DT_NEEDED":
                    f["dependencies"].append((tag.needed, "needed"))
                elif t == "DT_SONAME":
                    f["identity"] = tag.soname
                elif t == "DT_RPATH":
                    f["rpaths"] += [(p, "rpath") for p in tag.rpath.split(":")]
                elif t == "DT_RUNPATH":
                    f["rpaths"] += [(p, "runpath") for p in tag.runpath.split(":")]
    return f


def lief_facts(path: Path) -> dict:
    import lief  # the test extra; a missing lief fails this test, it does not skip it

    lief.logging.disable()
    b = lief.ELF.parse(str(path))
    assert b is not None, f"lief could not parse {path}"
    f = empty_facts()
    h = b.header
    f["arch"] = expected_arch(int(h.machine_type.value), h.identity_class == lief.ELF.Header.CLASS.ELF64,
                              h.identity_data == lief.ELF.Header.ELF_DATA.LSB)
    FT = lief.ELF.Header.FILE_TYPE
    f["kind"] = ("object" if h.file_type == FT.REL else "executable" if h.file_type == FT.EXEC
                 else "executable" if b.has_interpreter else "shared")
    for i, s in enumerate(b.dynamic_symbols):
        if i == 0:
            continue
        version = None
        if s.has_version and (s.symbol_version.value & 0x7FFF) >= 2:
            aux = s.symbol_version.symbol_version_auxiliary
            version = aux.name if aux is not None else None
        got = classify(s.name, int(s.binding.value), int(s.type.value), int(s.visibility.value),
                       s.shndx == 0, version)
        if got and got[0] == "import":
            f["imports"].add(got[1])
        elif got:
            f["exports"].append(got[1])
    f["exports"].sort()
    has_symtab = any(sec.type == lief.ELF.Section.TYPE.SYMTAB for sec in b.sections)
    f["stripped"] = not has_symtab
    for s in b.symtab_symbols:
        got = local_of(s.name, int(s.binding.value), int(s.type.value), int(s.visibility.value), s.shndx == 0)
        if got:
            f["locals"].add(got)
    TAG = lief.ELF.DynamicEntry.TAG
    for entry in b.dynamic_entries:
        if entry.tag == TAG.NEEDED:
            f["dependencies"].append((entry.name, "needed"))
        elif entry.tag == TAG.SONAME:
            f["identity"] = entry.name
        elif entry.tag == TAG.RPATH:  # .rpath, not .paths: .paths drops a trailing empty entry
            f["rpaths"] += [(p, "rpath") for p in entry.rpath.split(":")]
        elif entry.tag == TAG.RUNPATH:
            f["rpaths"] += [(p, "runpath") for p in entry.runpath.split(":")]
    f["needs_versions"] = sorted({a.name for r in b.symbols_version_requirement for a in r.get_auxiliary_symbols()})
    return f


def diff(path: Path, a: dict, b: dict, fields) -> list[str]:
    out = []
    for k in fields:
        if a[k] != b[k]:
            if isinstance(a[k], (set, list)):
                sa = collections.Counter(a[k]) if isinstance(a[k], list) else collections.Counter(a[k])
                sb = collections.Counter(b[k]) if isinstance(b[k], list) else collections.Counter(b[k])
                out.append(f"{path.name}: {k}: only ours {sorted((sa - sb).elements())[:8]}, "
                           f"only theirs {sorted((sb - sa).elements())[:8]} (ours {a[k]!r:.200}, theirs {b[k]!r:.200})")
            else:
                out.append(f"{path.name}: {k}: ours {a[k]!r}, theirs {b[k]!r}")
    return out


ALL_FIELDS = ("arch", "kind", "identity", "dependencies", "rpaths", "needs_versions", "exports", "imports",
              "locals", "stripped")


# ---------------------------------------------------------------------------------------------
# differential
# ---------------------------------------------------------------------------------------------


def test_inputs_cover_the_contract(sectioned_elfs, extra_elfs):
    """The differential below is only as good as its inputs: make sure they exercise the contract."""
    assert len(sectioned_elfs) >= 20
    facts = [ours(p) for p in sectioned_elfs]
    assert {f["arch"] for f in facts} >= {"x86_64", "aarch64", "i686", "armv7l", "ppc64", "ppc64le", "ppc",
                                          "riscv64", "s390x", "mipsel"}
    assert {f["kind"] for f in facts} == {"shared", "executable", "object"}
    exports = [x for f in facts for x in f["exports"]]
    assert {x[1] for x in exports} == {"global", "weak"}
    assert {x[2] for x in exports} == {"func", "data"}
    assert any(x[3] for x in exports), "some export has a symbol version"
    assert {r[1] for f in facts for r in f["rpaths"]} == {"rpath", "runpath"}
    assert any(r[0] == "" for f in facts for r in f["rpaths"]), "an empty rpath entry"
    assert any(f["needs_versions"] for f in facts) and any(f["locals"] for f in facts)
    assert any(f["stripped"] for f in facts) and not all(f["stripped"] for f in facts)


def test_matches_pyelftools(sectioned_elfs):
    problems = []
    for p in sectioned_elfs:
        problems += diff(p, ours(p), pyelftools_facts(p), ALL_FIELDS)
    assert not problems, "\n".join(problems)


def test_matches_lief(sectioned_elfs):
    problems = []
    for p in sectioned_elfs:
        problems += diff(p, ours(p), lief_facts(p), ALL_FIELDS)
    assert not problems, "\n".join(problems)


def test_without_section_headers_matches_lief_and_the_full_file(extra_elfs):
    """With no section headers, the loader's view (PT_DYNAMIC, DT_*, hash tables) gives the same facts."""
    problems = []
    loader_fields = [k for k in ALL_FIELDS if k not in ("locals", "stripped")]
    for key, p in sorted(extra_elfs.items()):
        if not key.startswith("noshdr/"):
            continue
        got = ours(p)
        assert got["stripped"] and not got["locals"]
        problems += diff(p, got, ours(extra_elfs[key.split("/", 1)[1]]), loader_fields)
        problems += diff(p, got, lief_facts(p), loader_fields)
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------------------------
# facts known from the sources (fixtures.md and the sources above)
# ---------------------------------------------------------------------------------------------


def parsed(path: Path) -> Slice:
    (s,) = elf.parse(path.read_bytes())
    return s


def test_libfoo(fixture_map):
    s = parsed(fixture_map["libfoo.so.2"])
    assert (s.arch, s.kind, s.identity) == ("x86_64", "shared", "libfoo.so.2")
    assert [(d.name, d.kind) for d in s.dependencies] == [("libbase.so.1", "needed")]
    assert [(r.path, r.kind) for r in s.rpaths] == [("$ORIGIN/../lib", "runpath")]
    assert {(x.name, x.binding, x.type) for x in s.exports} == {
        ("foo_public", "global", "func"), ("foo_data", "global", "data"), ("foo_uses_hidden", "global", "func")}
    assert "base_value" in s.imports
    assert not s.stripped and ("foo_hidden", "func") in {(x.name, x.type) for x in s.locals}
    assert all(x.binding == "local" for x in s.locals)
    assert (s.offset, s.size) == (0, fixture_map["libfoo.so.2"].stat().st_size)
    stripped = parsed(fixture_map["libfoo.stripped.so"])
    assert stripped.stripped and stripped.locals == [] and stripped.exports == s.exports


def test_libbackend_cxx(fixture_map):
    s = parsed(fixture_map["libbackend.so"])
    assert [d.name for d in s.dependencies] == ["libmlx.so", "libstdc++.so.6", "libc.so.6"]
    assert [(r.path, r.kind) for r in s.rpaths] == [("$ORIGIN", "rpath")]
    assert s.identity is None
    demangled = {x.demangled: x for x in s.exports}
    reg = demangled["executorch::runtime::register_backend(char const*, executorch::runtime::BackendInterface*)"]
    assert (reg.name, reg.binding, reg.type) == (
        "_ZN10executorch7runtime16register_backendEPKcPNS0_16BackendInterfaceE", "global", "func")
    typeinfo = demangled["typeinfo for executorch::backends::xnnpack::XnnpackBackend"]
    assert (typeinfo.name, typeinfo.binding, typeinfo.type) == (
        "_ZTIN10executorch8backends7xnnpack14XnnpackBackendE", "weak", "data")
    assert demangled["executorch_backend_init"].name == "executorch_backend_init"
    assert "_ZN3mlx4core7versionEv" in s.imports
    assert {"CXXABI_1.3", "GLIBC_2.2.5"} <= set(s.needs_versions)


def test_libmlx_hidden_runtime_stays_local(fixture_map):
    s = parsed(fixture_map["libmlx.so"])
    assert {x.demangled for x in s.exports} == {
        "mlx::core::add(mlx::core::array const&, mlx::core::array const&)", "mlx::core::version()"}
    assert "mlx::core::internal_helper()" in {x.demangled for x in s.locals}


def test_glibc_version_needed(fixture_map):
    s = parsed(fixture_map["libthreads.so"])
    assert "GLIBC_2.34" in s.needs_versions
    assert s.needs_versions == sorted(set(s.needs_versions))
    assert {"pthread_create", "pthread_join"} <= set(s.imports)


@pytest.mark.parametrize("name, arch", [
    ("libbase.aarch64.so", "aarch64"), ("libbase.i686.so", "i686"), ("libbase.ppc64.so", "ppc64"),
    ("libbase.armv7-linux-gnueabihf.so", "armv7l"), ("libbase.riscv64-linux-gnu.so", "riscv64"),
    ("libbase.powerpc64le-linux-gnu.so", "ppc64le"), ("libbase.powerpc-linux-gnu.so", "ppc"),
    ("libbase.mipsel-linux-gnu.so", "mipsel"), ("base.s390x.o", "s390x"),
    ("libbase.x86_64-linux-gnux32.so", "x32"),  # EM_X86_64 in an ELF32 file: not loadable as x86_64
])
def test_architectures(fixture_map, name, arch):
    s = parsed(fixture_map[name])
    assert s.arch == arch
    if name.endswith(".so"):
        assert (s.identity, [(x.name, x.type) for x in s.exports]) == ("libbase.so.1", [("base_value", "func")])
    else:
        assert s.kind == "object" and s.exports == []  # no dynamic symbol table in an object
        assert ("base_value", "func") not in {(x.name, x.type) for x in s.locals}  # global, not local


def test_arch_mapping_of_loongarch_and_unknown(fixture_map):
    data = bytearray(fixture_map["libbase.riscv64-linux-gnu.so"].read_bytes())
    struct.pack_into("<H", data, 18, 258)  # EM_LOONGARCH
    assert elf.parse(bytes(data))[0].arch == "loongarch64"
    struct.pack_into("<H", data, 18, 0xBEEF)
    assert elf.parse(bytes(data))[0].arch == "unknown machine (ELF e_machine 48879)"  # words, never em_N


def test_versions_and_symbol_kinds(fixture_map):
    s = parsed(fixture_map["libver.so"])
    exports = {(x.name, x.version): x for x in s.exports}
    assert {k for k in exports if k[0] == "v_sym"} == {("v_sym", "VER_1"), ("v_sym", "VER_2")}
    assert exports[("weak_fn", "VER_1")].binding == "weak"
    assert exports[("prot_fn", "VER_1")].type == "func"          # protected visibility is exported
    assert exports[("tls_var", "VER_1")].type == "data"          # STT_TLS
    assert exports[("ifunc_fn", "VER_1")].type == "func"         # STT_GNU_IFUNC
    assert exports[("common_var", "VER_1")].type == "data"
    assert not any("@" in x.name for x in s.exports)
    assert "hidden_helper" not in {x.name for x in s.exports}    # `local: *` in the version script
    assert "hidden_helper" in {x.name for x in s.locals}
    assert [(r.path, r.kind) for r in s.rpaths] == [
        ("/opt/a", "rpath"), ("", "rpath"), ("$ORIGIN/lib", "rpath"), ("", "rpath")]
    assert [d.name for d in s.dependencies] == ["libm.so.6", "libc.so.6"]
    assert "external_thing" in s.imports and s.identity == "libver.so.1"
    sysv = parsed(fixture_map["libver.sysv.so"])
    assert [(r.path, r.kind) for r in sysv.rpaths] == [("", "runpath"), ("$ORIGIN", "runpath")]
    assert sorted(map(repr, sysv.exports)) == sorted(map(repr, s.exports))


def test_imports_are_deduplicated(fixture_map):
    # libuse.so imports v_sym@VER_1 and v_sym@VER_2: two undefined entries, one import name
    s = parsed(fixture_map["libuse.so"])
    assert s.imports.count("v_sym") == 1
    assert "VER_1" in s.needs_versions and "VER_2" in s.needs_versions
    assert s.dependencies[0].name == "libver.so.1"  # its SONAME


def test_locals_are_listed_once(fixture_map):
    s = parsed(fixture_map["libdup.so"])
    assert [(x.name, x.type) for x in s.locals].count(("helper", "func")) == 1
    with open(fixture_map["libdup.so"], "rb") as fh:  # while .symtab has two
        symtab = ELFFile(fh).get_section_by_name(".symtab")
        assert [sym.name for sym in symtab.iter_symbols()].count("helper") == 2


@pytest.mark.parametrize("st_info, exported_as", [
    (0x12, ("global", "func")), (0x10, ("global", "other")), (0x11, ("global", "data")),
    (0x16, ("global", "data")), (0x15, ("global", "data")), (0x1A, ("global", "func")),
    (0x22, ("weak", "func")), (0xA2, ("global", "func")),
    (0x13, None), (0x14, None), (0x02, None),  # STT_SECTION, STT_FILE, STB_LOCAL
])
def test_export_classification(fixture_map, st_info, exported_as):
    """st_info of foo_public rewritten: which bindings and types export, and as what."""
    path = fixture_map["libfoo.so.2"]
    data = bytearray(path.read_bytes())
    with open(path, "rb") as fh:
        dynsym = ELFFile(fh).get_section_by_name(".dynsym")
        index = next(i for i, sym in enumerate(dynsym.iter_symbols()) if sym.name == "foo_public")
        at = dynsym["sh_offset"] + 24 * index
    data[at + 4] = st_info
    got = {x.name: (x.binding, x.type) for x in elf.parse(bytes(data))[0].exports}.get("foo_public")
    assert got == exported_as
    for vis, exported in ((1, False), (2, False), (3, True)):  # internal, hidden, protected
        data[at + 5] = vis
        assert ("foo_public" in {x.name for x in elf.parse(bytes(data))[0].exports}) == (exported and bool(exported_as))
    data[at + 5] = 0


def test_gnu_unique_is_global(fixture_map):
    s = parsed(fixture_map["libuniq.so"])
    by_name = {x.demangled: x for x in s.exports}
    assert (by_name["Registry<int>::count"].binding, by_name["Registry<int>::count"].type) == ("global", "data")
    assert by_name["counter()::c"].binding == "global"


def test_executables_and_objects(fixture_map):
    assert parsed(fixture_map["exe.pie"]).kind == "executable"     # ET_DYN with PT_INTERP
    assert parsed(fixture_map["exe.nopie"]).kind == "executable"   # ET_EXEC
    assert "puts" in parsed(fixture_map["exe.nopie"]).imports
    obj = parsed(fixture_map["ver.o"])
    assert obj.kind == "object" and obj.dependencies == [] and not obj.stripped
    assert {"impl", "resolve"} <= {x.name for x in obj.locals}
    # a hidden symbol with a .symver alias: ".symtab" holds "v_sym@VER_1"; names drop the version
    hid = parsed(fixture_map["hid.o"])
    assert {(x.name, x.binding, x.type) for x in hid.locals} == {("v_old_impl", "local", "func"),
                                                                 ("v_sym", "local", "func")}


def test_separate_debug_file(fixture_map):
    """objcopy --only-keep-debug: program headers without bytes, .dynsym/.dynamic as NOBITS."""
    s = parsed(fixture_map["libver.so.debug"])
    assert (s.exports, s.imports, s.dependencies, s.identity) == ([], [], [], None)
    assert not s.stripped and "hidden_helper" in {x.name for x in s.locals}
    assert any("debug-info" in n for n in s.notes)


def test_empty_gnu_hash_without_sections_counts_by_layout(fixture_map):
    # ld writes an empty GNU hash with symoffset 1 for an executable that exports nothing
    s = parsed(fixture_map["noshdr/exe.nopie"])
    assert {"puts", "__libc_start_main"} <= set(s.imports)
    assert any("table layout" in n for n in s.notes)


def test_mmap_input_and_needles(fixture_map):
    path = fixture_map["libbackend.so"]
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        from_mmap = elf.parse(mm, [b"XnnpackBackend", b"not in there"])[0]
    from_bytes = elf.parse(path.read_bytes(), [b"XnnpackBackend", b"not in there"])[0]
    assert from_mmap == from_bytes
    assert from_mmap.strings == frozenset({b"XnnpackBackend"})


def test_reads_tables_not_the_whole_file(fixture_map, tmp_path):
    """A big file costs table-sized memory: 48 MB of padding must not be copied."""
    big = tmp_path / "big.so"
    big.write_bytes(fixture_map["libbackend.so"].read_bytes() + b"\0" * (48 << 20))
    with open(big, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        tracemalloc.start()
        try:
            s = elf.parse(mm, [b"XnnpackBackend"])[0]
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert s.size == big.stat().st_size and len(s.exports) == 15
    assert peak < 4 << 20, f"peak {peak} bytes"


# ---------------------------------------------------------------------------------------------
# hostile input
# ---------------------------------------------------------------------------------------------


def comparable(s: Slice) -> tuple:
    return (s.arch, s.kind, s.identity, s.dependencies, s.rpaths, s.needs_versions, s.stripped,
            s.exports, s.imports, s.locals)


def outcome(data: bytes):
    """parse() either works or raises MalformedBinary; anything else fails the test."""
    try:
        return elf.parse(data)[0]
    except MalformedBinary as exc:
        assert str(exc), "a MalformedBinary always says why"
        return exc


def assert_contained(data: bytes) -> None:
    b = read_binary(data, "lib/x.so")
    if b is not None and b.error is not None:
        assert not b.error.startswith("unreadable"), f"a non-MalformedBinary exception escaped: {b.error}"


TRUNCATION_INPUTS = ["libfoo.so.2", "libbackend.so", "libbase.i686.so", "libbase.ppc64.so",
                     "libbase.powerpc-linux-gnu.so", "noshdr/libver.so", "noshdr/libver.sysv.so",
                     "noshdr/exe.nopie", "libver.so"]


@pytest.mark.parametrize("name", TRUNCATION_INPUTS)
def test_truncation(fixture_map, name):
    """Every 16 bytes through the headers and tables, then sampled: an error, or exactly the full facts."""
    data = fixture_map[name].read_bytes()
    full = comparable(elf.parse(data)[0])
    has_sections = not name.startswith("noshdr/")
    rng = random.Random(name)
    cuts = list(range(0, min(len(data), 4096), 16))
    cuts += rng.sample(range(4096, len(data)), min(200, max(0, len(data) - 4096))) if len(data) > 4096 else []
    cuts += [len(data) - 1, len(data) - 8]
    ok = 0
    for n in cuts:
        got = outcome(data[:n])
        if isinstance(got, Slice):
            ok += 1
            # a truncated file that still parses must not lose anything
            assert comparable(got) == full, f"cut at {n}: silently different facts"
            assert not has_sections, f"cut at {n} of a file whose section headers are at its end parsed"
        assert_contained(data[:n])
    if has_sections:
        assert ok == 0


def fuzz_targets(data: bytes) -> list[int]:
    e = "<" if data[5] == 1 else ">"
    if data[4] == 2:
        phoff, shoff = struct.unpack_from(e + "QQ", data, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(e + "HHHH", data, 0x36)
    else:
        phoff, shoff = struct.unpack_from(e + "II", data, 0x1C)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(e + "HHHH", data, 0x2A)
    spots = list(range(16, 64))
    spots += range(phoff, phoff + phentsize * phnum)
    if shoff:
        spots += range(shoff, min(len(data), shoff + shentsize * shnum))
    spots += range(0, min(len(data), 4096))  # .dynsym, .dynstr, hash and version tables of small libs
    dyn_off, dyn_size = dynamic_segment(data)
    spots += range(dyn_off, dyn_off + dyn_size)
    return spots


def dynamic_segment(data: bytes) -> tuple[int, int]:
    """(offset, size) of PT_DYNAMIC, read with struct here (independent of the reader)."""
    e = "<" if data[5] == 1 else ">"
    if data[4] == 2:
        phoff = struct.unpack_from(e + "Q", data, 0x20)[0]
        phentsize, phnum = struct.unpack_from(e + "HH", data, 0x36)
        for i in range(phnum):
            p_type, _f, p_offset, _va, _pa, p_filesz = struct.unpack_from(e + "IIQQQQ", data, phoff + i * phentsize)
            if p_type == 2:
                return p_offset, p_filesz
    else:
        phoff = struct.unpack_from(e + "I", data, 0x1C)[0]
        phentsize, phnum = struct.unpack_from(e + "HH", data, 0x2A)
        for i in range(phnum):
            p_type, p_offset, _va, _pa, p_filesz = struct.unpack_from(e + "IIIII", data, phoff + i * phentsize)
            if p_type == 2:
                return p_offset, p_filesz
    raise AssertionError("no PT_DYNAMIC")


@pytest.mark.parametrize("name", ["libbackend.so", "libver.so", "libbase.i686.so", "libbase.ppc64.so",
                                  "noshdr/libver.sysv.so", "noshdr/exe.nopie"])
def test_every_dynamic_value_extreme(fixture_map, name):
    """Each dynamic entry's value set to absurd values in turn: MalformedBinary or a result."""
    data = fixture_map[name].read_bytes()
    is64, e = data[4] == 2, "<" if data[5] == 1 else ">"
    fmt, width = (e + "qQ", 16) if is64 else (e + "iI", 8)
    dyn_off, dyn_size = dynamic_segment(data)
    top = (1 << (64 if is64 else 32)) - 1
    for at in range(dyn_off, dyn_off + dyn_size - width + 1, width):
        tag, _val = struct.unpack_from(fmt, data, at)
        if tag == 0:
            break
        for value in (0, 1, 3, 0x7FFF_FFFF, top >> 1, top, len(data), len(data) - 1, 21_000_000):
            mutant = bytearray(data)
            struct.pack_into(fmt, mutant, at, tag, value & top)
            outcome(bytes(mutant))
            assert_contained(bytes(mutant))


@pytest.mark.parametrize("name", ["libbackend.so", "libver.so", "libbase.i686.so", "libbase.ppc64.so",
                                  "noshdr/libver.so", "noshdr/libver.sysv.so", "libuniq.so"])
def test_corruption_fuzz(fixture_map, name):
    """Random corruption of headers and tables: MalformedBinary or a result, never a crash, and
    never more memory than a small multiple of the input (an absurd count taken at its word would
    allocate per entry it claims: gigabytes, or a hang, which :func:`bounds.no_hang` fails)."""
    data = fixture_map[name].read_bytes()
    spots = fuzz_targets(data)
    rng = random.Random(f"fuzz-{name}")
    extremes = [0, 1, 0x7F, 0x80, 0xFF]
    peak = 0
    for _ in range(400):
        mutant = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            at = rng.choice(spots)
            if rng.random() < 0.5:
                mutant[at] = rng.choice(extremes)
            else:
                width = rng.choice((2, 4, 8))
                value = rng.choice([0, 1, 0xFFFF_FFFF, 0x7FFF_FFFF, len(data), len(data) - 1, rng.getrandbits(32)])
                chunk = value.to_bytes(8, "little")[:width]
                mutant[at : at + width] = chunk[: len(mutant) - at]
        mutant = bytes(mutant)
        tracemalloc.start()
        try:
            with no_hang():
                outcome(mutant)
            peak = max(peak, tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert_contained(mutant)
    assert peak < 16 * len(data) + (4 << 20), f"a corrupt input of {len(data)} bytes took {peak} bytes of memory"


# --- crafted cases with precise reasons -------------------------------------------------------


def section(path: Path, name: str):
    with open(path, "rb") as fh:
        e = ELFFile(fh)
        index = next(i for i, s in enumerate(e.iter_sections()) if s.name == name)
        sec = e.get_section(index)
        return dict(index=index, offset=sec["sh_offset"], size=sec["sh_size"],
                    header=e.header["e_shoff"] + index * e.header["e_shentsize"])


def dynamic_entry(path: Path, tag: int) -> int:
    """File offset of the first dynamic entry with ``tag`` (x86_64 files only)."""
    data = path.read_bytes()
    dyn = section(path, ".dynamic")
    for off in range(dyn["offset"], dyn["offset"] + dyn["size"], 16):
        if struct.unpack_from("<q", data, off)[0] == tag:
            return off
    raise AssertionError(f"no tag {tag:#x}")


def malformed(data: bytes) -> str:
    with pytest.raises(MalformedBinary) as info:
        elf.parse(data)
    b = read_binary(data, "lib/x.so")
    assert b is not None and b.error == str(info.value) and not b.slices
    return str(info.value)


def test_shoff_past_end(fixture_map):
    data = bytearray(fixture_map["libfoo.so.2"].read_bytes())
    shnum = struct.unpack_from("<H", data, 0x3C)[0]
    struct.pack_into("<Q", data, 0x28, len(data) + 0x100)
    assert malformed(bytes(data)) == (
        f"truncated: section header table at 0x{len(data) + 0x100:x} + {shnum * 64} bytes "
        f"is past the end of the {len(data)}-byte file")


def test_small_entry_sizes(fixture_map):
    data = bytearray(fixture_map["libfoo.so.2"].read_bytes())
    struct.pack_into("<H", data, 0x3A, 12)
    assert malformed(bytes(data)) == "e_shentsize is 12, smaller than the 64-byte section header"
    data = bytearray(fixture_map["libfoo.so.2"].read_bytes())
    struct.pack_into("<H", data, 0x36, 8)
    assert malformed(bytes(data)) == "e_phentsize is 8, smaller than the 56-byte program header"


def test_section_count_in_the_millions(fixture_map):
    path = fixture_map["libfoo.so.2"]
    data = bytearray(path.read_bytes())
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    struct.pack_into("<H", data, 0x3C, 0)                 # e_shnum 0: the count is in section 0
    struct.pack_into("<Q", data, shoff + 0x20, 5_000_000)  # section 0 sh_size
    assert "claims 5000000 entries" in malformed(bytes(data))


def test_dynstr_without_terminator(fixture_map):
    for name in ("libfoo.so.2", "libver.so"):
        path = fixture_map[name]
        data = bytearray(path.read_bytes())
        dynstr = section(path, ".dynstr")
        data[dynstr["offset"] : dynstr["offset"] + dynstr["size"]] = b"A" * dynstr["size"]
        assert "no NUL terminator" in malformed(bytes(data))
    # the same through the loader's view only
    path = fixture_map["noshdr/libver.so"]
    data = bytearray(path.read_bytes())
    dynstr = section(fixture_map["libver.so"], ".dynstr")
    data[dynstr["offset"] : dynstr["offset"] + dynstr["size"]] = b"B" * dynstr["size"]
    assert "no NUL terminator" in malformed(bytes(data))


def test_symbol_names_out_of_range(fixture_map):
    path = fixture_map["libfoo.so.2"]
    dynsym = section(path, ".dynsym")
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, dynsym["offset"] + 24 * 3, 0x00FF_FFFF)  # st_name of symbol 3
    assert "dynamic symbol 3: name offset 16777215 is past the end of the" in malformed(bytes(data))
    # .symtab names without a terminator
    strtab = section(path, ".strtab")
    data = bytearray(path.read_bytes())
    data[strtab["offset"] : strtab["offset"] + strtab["size"]] = b"x" * strtab["size"]
    reason = malformed(bytes(data))
    assert reason.startswith(".symtab symbol ") and "no NUL terminator" in reason


def test_duplicate_dynamic_tags_last_wins_and_is_noted(fixture_map):
    """glibc's loader keeps the last of a repeated single-valued tag; so do we, and say so."""
    path = fixture_map["libfoo.so.2"]
    data = bytearray(path.read_bytes())
    needed = struct.unpack_from("<Q", data, dynamic_entry(path, 1) + 8)[0]  # "libbase.so.1"
    soname_at = dynamic_entry(path, 14)
    init_at = dynamic_entry(path, 12)  # DT_INIT, after DT_SONAME in GNU ld's order
    assert init_at > soname_at
    struct.pack_into("<qQ", data, init_at, 14, needed)
    s = elf.parse(bytes(data))[0]
    assert s.identity == "libbase.so.1"
    assert any("more than one DT_SONAME" in n for n in s.notes)


def test_strsz_cuts_a_name(fixture_map):
    path = fixture_map["libfoo.so.2"]
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, dynamic_entry(path, 10) + 8, 3)  # DT_STRSZ = 3
    reason = malformed(bytes(data))
    assert "3-byte string table" in reason


def test_huge_dynsym_section(fixture_map):
    path = fixture_map["libfoo.so.2"]
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, section(path, ".dynsym")["header"] + 0x20, 21_000_000 * 24)
    assert malformed(bytes(data)) == "symbol table claims 21000000 entries; limit 20,000,000"


def test_huge_symtab(fixture_map):
    path = fixture_map["libfoo.so.2"]
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, section(path, ".symtab")["header"] + 0x20, 30_000_000 * 24)
    assert malformed(bytes(data)) == "symbol table claims 30000000 entries; limit 20,000,000"


def test_huge_sysv_hash_count(fixture_map):
    path = fixture_map["noshdr/libver.sysv.so"]
    data = bytearray(path.read_bytes())
    hash_off = section(fixture_map["libver.sysv.so"], ".hash")["offset"]
    struct.pack_into("<I", data, hash_off + 4, 0xFFFF_FFFF)  # nchain
    assert malformed(bytes(data)) == "symbol table claims 4294967295 entries; limit 20,000,000"
    struct.pack_into("<I", data, hash_off + 4, 100_000)      # within the limit, past the file
    assert malformed(bytes(data)).startswith("truncated: dynamic symbol table (100000 entries of 24 bytes)")


def test_huge_gnu_hash_bucket(fixture_map):
    path = fixture_map["noshdr/libver.so"]
    data = bytearray(path.read_bytes())
    gh = section(fixture_map["libver.so"], ".gnu.hash")["offset"]
    bloom_size = struct.unpack_from("<I", data, gh + 8)[0]
    struct.pack_into("<I", data, gh + 16 + 8 * bloom_size, 0x7FFF_FFFF)  # bucket 0
    assert malformed(bytes(data)) == f"symbol table claims {0x7FFF_FFFF + 1} entries; limit 20,000,000"


def test_gnu_hash_chain_without_end(fixture_map):
    """A damaged chain walks on into the next table: the overlap is reported, not read as symbols."""
    path = fixture_map["noshdr/libver.so"]
    data = bytearray(path.read_bytes())
    gh = section(fixture_map["libver.so"], ".gnu.hash")
    nbuckets, symoffset, bloom_size = struct.unpack_from("<III", data, gh["offset"])
    chain = gh["offset"] + 16 + 8 * bloom_size + 4 * nbuckets
    for off in range(chain, gh["offset"] + gh["size"], 4):  # clear every end-of-chain bit
        data[off] &= 0xFE
    reason = malformed(bytes(data))
    assert "dynamic symbol table at 0x" in reason and "overlaps the" in reason, reason


def test_verneed_chain(fixture_map):
    path = fixture_map["libbackend.so"]
    data = bytearray(path.read_bytes())
    vr = section(path, ".gnu.version_r")["offset"]
    struct.pack_into("<I", data, vr + 12, 0x7FFF_0000)  # vn_next far away
    assert "version requirement" in malformed(bytes(data))
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, dynamic_entry(path, 0x6FFFFFFF) + 8, 1 << 40)  # DT_VERNEEDNUM
    assert "claims 1099511627776 entries" in malformed(bytes(data))


def test_verneed_entries_sharing_records(fixture_map):
    """Two version requirements pointing at the same vernaux records: refused, so that a hostile
    file cannot make the walk quadratic."""
    path = fixture_map["libbackend.so"]
    data = bytearray(path.read_bytes())
    vn0 = section(path, ".gnu.version_r")["offset"]
    _ver, _cnt, _file, _aux, nxt = struct.unpack_from("<HHIII", data, vn0)
    vn1 = vn0 + nxt
    aux1 = vn1 + struct.unpack_from("<HHIII", data, vn1)[3]
    struct.pack_into("<H", data, vn0 + 2, 1)              # vn_cnt = 1
    struct.pack_into("<I", data, vn0 + 8, aux1 - vn0)     # vn_aux -> the next entry's records
    assert malformed(bytes(data)) == f"version requirement entries overlap at 0x{aux1:x}"


def test_undeclared_symbol_version(fixture_map):
    path = fixture_map["libver.so"]
    data = bytearray(path.read_bytes())
    versym = section(path, ".gnu.version")["offset"]
    with open(path, "rb") as fh:
        dynsym = ELFFile(fh).get_section_by_name(".dynsym")
        index = next(i for i, sym in enumerate(dynsym.iter_symbols()) if sym.name == "weak_fn")
    struct.pack_into("<H", data, versym + 2 * index, 9)
    assert malformed(bytes(data)) == (
        f"dynamic symbol {index} (weak_fn) has version index 9, which no version definition or requirement declares")


def test_needed_name_out_of_range(fixture_map):
    path = fixture_map["libfoo.so.2"]
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, dynamic_entry(path, 1) + 8, 0x10_0000)  # DT_NEEDED
    assert "DT_NEEDED: name offset 1048576 is past the end" in malformed(bytes(data))


def test_symbol_entry_size_too_small(fixture_map):
    path = fixture_map["libfoo.so.2"]
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, dynamic_entry(path, 11) + 8, 0)  # DT_SYMENT
    assert malformed(bytes(data)) == "DT_SYMENT is 0, smaller than the 24-byte symbol"


def test_strtab_address_outside_segments(fixture_map):
    path = fixture_map["libfoo.so.2"]
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, dynamic_entry(path, 5) + 8, 0x7FFF_0000_0000)  # DT_STRTAB
    assert malformed(bytes(data)) == "DT_STRTAB address 0x7fff00000000 is not inside any loadable segment"


@pytest.mark.parametrize("patch, reason", [
    ((4, 3), "unknown ELF class 3"),
    ((5, 0), "unknown ELF data encoding 0"),
    ((16, 4), "unsupported ELF file type 4 (a core dump)"),
])
def test_header_fields(fixture_map, patch, reason):
    data = bytearray(fixture_map["libfoo.so.2"].read_bytes())
    data[patch[0]] = patch[1]
    assert malformed(bytes(data)).startswith(reason)


def test_tiny_files():
    for data in (b"\x7fELF", b"\x7fELF\x02\x01\x01" + b"\0" * 9, b"\x7fELF\x02\x01\x01" + b"\0" * 40):
        assert malformed(data).startswith("truncated")
