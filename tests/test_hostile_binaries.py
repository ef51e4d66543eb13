"""Hostile native binaries inside a wheel, end to end: ``wheelaudit check`` says WA001 with the
reason and exits 1 — never a traceback, never a hang, nothing written.

The readers' own tests (test_elf_reader.py, test_macho_reader.py) corrupt binaries and call the
readers; here the same kinds of damage, and a few more, go through the whole command: the wheel
is read, the member streamed and hashed against RECORD, the binary parsed, the failure turned
into a finding and rendered. Each case starts from a fixture library (``fixture_libs``).
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz.guard import Guard  # noqa: E402
from fuzz.mutate import tiny_wheel  # noqa: E402
from wheelaudit.cli.main import main  # noqa: E402
from wheelaudit.binary import elf as elf_reader  # noqa: E402
from wheelaudit.binary import macho as macho_reader  # noqa: E402

MAC_TAG = "cp311-cp311-macosx_11_0_arm64"
LINUX_TAG = "cp311-cp311-manylinux_2_28_x86_64"


# ---- building the damage ----------------------------------------------------------------------
def _fat_entries(data: bytes) -> list[int]:
    return [8 + 20 * i for i in range(struct.unpack_from(">I", data, 4)[0])]


def _commands(data: bytes) -> list[tuple[int, int, int]]:
    """(offset, cmd, cmdsize) of a thin little-endian 64-bit image's load commands."""
    ncmds = struct.unpack_from("<I", data, 16)[0]
    out, off = [], 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, off)
        out.append((off, cmd, size))
        off += size
    return out


def _command(data: bytes, cmd: int) -> int:
    return next(off for off, c, _ in _commands(data) if c == cmd)


def _elf_section(data: bytes, name: bytes) -> tuple[int, int, int]:
    """(header offset, sh_offset, sh_size) of an ELF64 LE section."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3C)
    str_off = struct.unpack_from("<Q", data, shoff + shstrndx * 64 + 0x18)[0]
    for i in range(shnum):
        h = shoff + i * 64
        nm = struct.unpack_from("<I", data, h)[0]
        if data[str_off + nm: data.index(b"\0", str_off + nm)] == name:
            return h, struct.unpack_from("<Q", data, h + 0x18)[0], struct.unpack_from("<Q", data, h + 0x20)[0]
    raise KeyError(name)


def fat_overlap(libs: Path) -> bytes:
    d = bytearray((libs / "macho/universal2/libfoo.dylib").read_bytes())
    e0, e1 = _fat_entries(d)
    struct.pack_into(">I", d, e1 + 8, struct.unpack_from(">I", d, e0 + 8)[0] + 16)
    return bytes(d)


def fat_cut_short(libs: Path) -> bytes:
    """A universal header cut after its magic: too short to tell its architecture count."""
    return b"\xca\xfe\xba\xbe\0\0\0"


def fat_50_archs(libs: Path) -> bytes:
    """A fat header that lists 50 architectures: 50 is also a Java class file's version there."""
    d = bytearray((libs / "macho/universal2/libfoo.dylib").read_bytes())
    struct.pack_into(">I", d, 4, 50)
    return bytes(d)


def fat_out_of_range(libs: Path) -> bytes:
    d = bytearray((libs / "macho/universal2/libfoo.dylib").read_bytes())
    struct.pack_into(">I", d, _fat_entries(d)[1] + 12, len(d))
    return bytes(d)


def fat_offset_huge(libs: Path) -> bytes:
    d = bytearray((libs / "macho/universal2/libfoo.dylib").read_bytes())
    struct.pack_into(">I", d, _fat_entries(d)[0] + 8, 0xFFFFFFF0)
    return bytes(d)


def fat_in_fat(libs: Path) -> bytes:
    inner = (libs / "macho/universal2/libfoo.dylib").read_bytes()
    head = b"\xca\xfe\xba\xbe" + struct.pack(">I", 1) + struct.pack(">iiIII", 0x0100000C, 0, 4096, len(inner), 12)
    return head + bytes(4096 - len(head)) + inner


def fat64_many_archs(libs: Path) -> bytes:
    return b"\xca\xfe\xba\xbf" + struct.pack(">I", 40) + bytes(40 * 32)


def lc_size_zero(libs: Path) -> bytes:
    d = bytearray((libs / "macho/arm64/libfoo.dylib").read_bytes())
    struct.pack_into("<I", d, 32 + 4, 0)
    return bytes(d)


def lc_past_sizeofcmds(libs: Path) -> bytes:
    d = bytearray((libs / "macho/arm64/libfoo.dylib").read_bytes())
    off, _, _ = _commands(bytes(d))[-1]
    struct.pack_into("<I", d, off + 4, 0x10000)
    return bytes(d)


def lc_past_image(libs: Path) -> bytes:
    d = bytearray((libs / "macho/arm64/libfoo.dylib").read_bytes())
    struct.pack_into("<I", d, 20, len(d))  # sizeofcmds
    return bytes(d)


def ncmds_in_the_millions(libs: Path) -> bytes:
    d = bytearray((libs / "macho/arm64/libfoo.dylib").read_bytes())
    struct.pack_into("<I", d, 16, 3_000_000)
    return bytes(d)


def macho_strtab_unterminated(libs: Path) -> bytes:
    d = bytearray((libs / "macho/arm64/libfoo.dylib").read_bytes())
    st = _command(bytes(d), 0x2)
    _symoff, _nsyms, stroff, strsize = struct.unpack_from("<IIII", d, st + 8)
    d[stroff:stroff + strsize] = b"A" * strsize
    return bytes(d)


def macho_nsyms_millions(libs: Path) -> bytes:
    d = bytearray((libs / "macho/arm64/libfoo.dylib").read_bytes())
    struct.pack_into("<I", d, _command(bytes(d), 0x2) + 12, 5_000_000)
    return bytes(d)


def cyclic_trie(libs: Path) -> bytes:
    d = bytearray((libs / "macho/arm64/libbackend.dylib").read_bytes())
    export_off = struct.unpack_from("<I", d, _command(bytes(d), 0x80000022) + 40)[0]
    label_end = d.index(b"\0", export_off + 2)
    d[label_end + 1] = 0  # the root's first child points back at the root
    return bytes(d)


def elf_dynstr_unterminated(libs: Path) -> bytes:
    d = bytearray((libs / "elf/libfoo.so.2").read_bytes())
    _h, off, size = _elf_section(bytes(d), b".dynstr")
    d[off:off + size] = b"A" * size
    return bytes(d)


def elf_symtab_millions(libs: Path) -> bytes:
    d = bytearray((libs / "elf/libfoo.so.2").read_bytes())
    h, _off, _size = _elf_section(bytes(d), b".symtab")
    struct.pack_into("<Q", d, h + 0x20, 25_000_000 * 24)
    return bytes(d)


def elf_dynsym_past_end(libs: Path) -> bytes:
    d = bytearray((libs / "elf/libfoo.so.2").read_bytes())
    h, _off, _size = _elf_section(bytes(d), b".dynsym")
    struct.pack_into("<Q", d, h + 0x20, 1_000_000 * 24)
    return bytes(d)


def elf_shnum_millions(libs: Path) -> bytes:
    d = bytearray((libs / "elf/libfoo.so.2").read_bytes())
    shoff = struct.unpack_from("<Q", d, 0x28)[0]
    struct.pack_into("<H", d, 0x3C, 0)  # e_shnum 0: the real count is in section 0
    struct.pack_into("<Q", d, shoff + 0x20, 5_000_000)
    return bytes(d)


def elf_truncated_header(libs: Path) -> bytes:
    return (libs / "elf/libfoo.so.2").read_bytes()[:40]


def pe_truncated(libs: Path) -> bytes:
    return b"MZ" + b"\xff" * 100


CASES: list[tuple[str, Callable[[Path], bytes], str, str]] = [
    # (name, builder, platform tag, what the reason must say)
    ("fat slices that overlap", fat_overlap, MAC_TAG, "overlaps fat slice"),
    ("fat slice past the end", fat_out_of_range, MAC_TAG, "runs past the end of the file"),
    ("fat header of 50 architectures (a Java class file's magic and version)", fat_50_archs, MAC_TAG, "fat slice"),
    ("fat header cut short (7 bytes)", fat_cut_short, MAC_TAG, "truncated"),
    ("fat slice at 4 GiB", fat_offset_huge, MAC_TAG, "runs past the end of the file"),
    ("fat in fat", fat_in_fat, MAC_TAG, "nested fat binary"),
    ("fat64 claiming 40 slices", fat64_many_archs, MAC_TAG, "fat slice 0"),
    ("load command of size 0", lc_size_zero, MAC_TAG, "has cmdsize 0 (less than 8)"),
    ("load command past sizeofcmds", lc_past_sizeofcmds, MAC_TAG, "runs past sizeofcmds"),
    ("load commands past the image", lc_past_image, MAC_TAG, "run past the end of the image"),
    ("three million load commands", ncmds_in_the_millions, MAC_TAG, "3000000 load commands (more than 65536)"),
    ("Mach-O string table without terminator", macho_strtab_unterminated, MAC_TAG, "not NUL-terminated"),
    ("Mach-O symbol count in the millions", macho_nsyms_millions, MAC_TAG, "symbol table ["),
    ("cyclic export trie", cyclic_trie, MAC_TAG, "cyclic"),
    ("ELF string table without terminator", elf_dynstr_unterminated, LINUX_TAG, "no NUL terminator"),
    ("ELF .symtab of 25 million entries", elf_symtab_millions, LINUX_TAG, "claims 25000000 entries; limit 20,000,000"),
    ("ELF .dynsym past the end", elf_dynsym_past_end, LINUX_TAG, "past the end of the"),
    ("ELF section count in the millions", elf_shnum_millions, LINUX_TAG, "claims 5000000 entries"),
    ("ELF header cut short", elf_truncated_header, LINUX_TAG, "truncated"),
    ("PE header past the end", pe_truncated, LINUX_TAG, "past the end of the"),
]


@pytest.mark.parametrize("name, build, tag, reason", CASES, ids=[c[0] for c in CASES])
def test_hostile_binary_is_wa001_with_a_reason(fixture_libs, tmp_path, capsys, name, build, tag, reason):
    data = build(fixture_libs)
    member = "pkg/libhostile.dylib" if tag == MAC_TAG else "pkg/libhostile.so"
    wheel = tmp_path / f"fuzz-1.0-{tag}.whl"
    wheel.write_bytes(tiny_wheel([(member, data)], tag=tag))
    guard = Guard(allowed=[], foreign=[tmp_path])
    with guard.watch():
        rc = main(["check", str(wheel), "--format", "json", "--select", "WA001,WA002"])
    out, err = capsys.readouterr()
    assert guard.violations == [], guard.violations
    assert rc == 1 and "Traceback" not in err and err == "", err
    report = json.loads(out)
    (f,) = report["wheels"][0]["findings"]
    assert (f["code"], f["subject"], f["paths"]) == ("WA001", member, [member])
    assert reason in f["message"], f["message"]
    assert f["message"].startswith(member + ": ")
    assert "Error" not in f["message"].split(": ", 1)[1][:20]  # a reason, not an exception name


# ---- PE (fixtures/build_pe.sh; the reader's own hostile tests are in test_pe_reader.py) ----------
WIN_TAG = "cp311-cp311-win_amd64"


def _pe_dirs(d: bytes) -> tuple[int, int, int]:
    """(e_lfanew, data directories offset, section table offset) of a PE32+ image."""
    lfanew = struct.unpack_from("<I", d, 0x3C)[0]
    opt = lfanew + 24
    return lfanew, opt + 112, opt + struct.unpack_from("<H", d, lfanew + 20)[0]


def _pe_rva(d: bytes, rva: int) -> int:
    lfanew, _dirs, sections = _pe_dirs(d)
    for i in range(struct.unpack_from("<H", d, lfanew + 6)[0]):
        vsize, va, _rsize, raw = struct.unpack_from("<IIII", d, sections + 40 * i + 8)
        if va <= rva < va + vsize:
            return raw + rva - va
    raise KeyError(rva)


def pe_exports_in_the_millions(libs: Path) -> bytes:
    d = bytearray((libs / "x.pyd").read_bytes())
    exp = _pe_rva(bytes(d), struct.unpack_from("<I", d, _pe_dirs(bytes(d))[1])[0])
    struct.pack_into("<I", d, exp + 20, 40_000_000)
    return bytes(d)


def pe_import_name_outside(libs: Path) -> bytes:
    d = bytearray((libs / "x.pyd").read_bytes())
    imp = _pe_rva(bytes(d), struct.unpack_from("<I", d, _pe_dirs(bytes(d))[1] + 8)[0])
    struct.pack_into("<I", d, imp + 12, 0x7FFF0000)
    return bytes(d)


def pe_lookup_table_unterminated(libs: Path) -> bytes:
    """The first DLL's lookup table runs into 0xFF bytes to the end of its section."""
    d = bytearray((libs / "x.pyd").read_bytes())
    imp = _pe_rva(bytes(d), struct.unpack_from("<I", d, _pe_dirs(bytes(d))[1] + 8)[0])
    ilt = _pe_rva(bytes(d), struct.unpack_from("<I", d, imp)[0])
    lfanew, _dirs, sections = _pe_dirs(bytes(d))
    for i in range(struct.unpack_from("<H", d, lfanew + 6)[0]):
        _vs, _va, rsize, raw = struct.unpack_from("<IIII", d, sections + 40 * i + 8)
        if raw <= ilt < raw + rsize:
            d[ilt:raw + rsize] = b"\xff" * (raw + rsize - ilt)
    return bytes(d)


def pe_section_table_past_end(libs: Path) -> bytes:
    d = bytearray((libs / "x.pyd").read_bytes())
    struct.pack_into("<H", d, _pe_dirs(bytes(d))[0] + 6, 0xFFFF)
    return bytes(d)


def pe_debug_directory_huge(libs: Path) -> bytes:
    d = bytearray((libs / "x.pyd").read_bytes())
    struct.pack_into("<I", d, _pe_dirs(bytes(d))[1] + 6 * 8 + 4, 0x7FFFFFF0)
    return bytes(d)


PE_CASES: list[tuple[str, Callable[[Path], bytes], str]] = [
    ("PE export count in the millions", pe_exports_in_the_millions, "limit 2,097,152"),
    ("PE imported DLL name outside the image", pe_import_name_outside, "outside the file's sections"),
    ("PE lookup table without its zero entry", pe_lookup_table_unterminated, "terminating"),
    ("PE section table past the end", pe_section_table_past_end, "section table"),
    ("PE debug directory of 76 million entries", pe_debug_directory_huge, "limit 64"),
]


@pytest.mark.parametrize("name, build, reason", PE_CASES, ids=[c[0] for c in PE_CASES])
def test_hostile_pe_is_wa001_with_a_reason(pe_libs, tmp_path, capsys, name, build, reason):
    member = "pkg/hostile.pyd"
    wheel = tmp_path / f"fuzz-1.0-{WIN_TAG}.whl"
    wheel.write_bytes(tiny_wheel([(member, build(pe_libs))], tag=WIN_TAG))
    guard = Guard(allowed=[], foreign=[tmp_path])
    with guard.watch():
        rc = main(["check", str(wheel), "--format", "json", "--select", "WA001,WA002"])
    out, err = capsys.readouterr()
    assert guard.violations == [], guard.violations
    assert rc == 1 and "Traceback" not in err and err == "", err
    (f,) = json.loads(out)["wheels"][0]["findings"]
    assert (f["code"], f["subject"]) == ("WA001", member)
    assert reason in f["message"], f["message"]
    assert f["message"].startswith(member + ": ")


def test_reader_limits_raise_instead_of_cutting(fixture_libs):
    """A limit that would cut the facts short is an error that names it, never a silent cut."""
    libs = fixture_libs
    with pytest.raises(elf_reader.MalformedBinary, match="limit 20,000,000"):
        elf_reader.parse(elf_symtab_millions(libs))
    with pytest.raises(macho_reader.MalformedBinary, match=r"more than 65536"):
        macho_reader.parse(ncmds_in_the_millions(libs))
    many = b"\xca\xfe\xba\xbe" + struct.pack(">I", 44) + bytes(44 * 20)
    with pytest.raises(macho_reader.MalformedBinary, match=r"44 architectures \(more than 64\)|fat slice 0"):
        macho_reader.parse(many)


def test_every_truncation_of_a_binary_in_a_wheel(fixture_libs, tmp_path, capsys):
    """The universal2 library cut at each interesting offset (headers, load commands, slice
    boundaries, the linkedit data) inside one wheel: one WA001 per cut, never anything else."""
    data = (fixture_libs / "macho/universal2/libbackend.dylib").read_bytes()
    cuts = {0, 4, 7, 8, 20, 27, 28, 31, 32, 33, 64, 100, 1000, 4095, 4096, 4097, len(data) // 2, len(data) - 1}
    for e in _fat_entries(data):
        off, size = struct.unpack_from(">II", data, e + 8)
        cuts |= {off, off + 1, off + 31, off + 32, off + 100, off + size - 1, off + size // 2}
    members = [(f"pkg/lib{c}.dylib", data[:c]) for c in sorted(cuts) if 0 < c < len(data)]
    wheel = tmp_path / f"fuzz-1.0-{MAC_TAG}.whl"
    wheel.write_bytes(tiny_wheel(members, tag=MAC_TAG))
    guard = Guard(allowed=[], foreign=[tmp_path])
    with guard.watch():
        rc = main(["check", str(wheel), "--format", "json", "--select", "WA001,WA002"])
    out, err = capsys.readouterr()
    assert guard.violations == [] and err == ""
    found = {f["subject"]: f for f in json.loads(out)["wheels"][0]["findings"]}
    # (a member named as a native binary is never a Java class file: its magic alone is a
    # universal binary cut short)
    native = {n for n, d in members if len(d) >= 4}
    assert rc == 1
    assert set(found) == native, sorted(native ^ set(found))
    for f in found.values():
        assert f["code"] == "WA001", f
        assert any(w in f["message"] for w in ("truncated", "past the end", "runs past", "run past", "needs")), f["message"]


def _demangler_bomb(levels: int) -> str:
    """A mangled name whose template arguments each repeat the previous one twice through
    substitutions (S_, S0_, ...): its demangled form doubles with every level."""

    def sub(i: int) -> str:
        if i == 0:
            return "S_"
        i -= 1
        digits, out = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""
        while True:
            out = digits[i % 36] + out
            i //= 36
            if not i:
                return f"S{out}_"

    return "_Z1fI1xIiE" + "".join(f"S_I{sub(k + 1)}{sub(k + 1)}E" for k in range(levels)) + "Ev"


def test_demangler_output_is_bounded():
    """cpp_demangle has no output bound; names that could explode go to a capped worker
    (wheelaudit/demangle_guard.py) and stay mangled when they blow its budget: the output is the
    name itself, where an uncapped demangler writes megabytes (or runs out of memory)."""
    from bounds import no_hang
    from wheelaudit.binary.demangle import demangle

    for levels in (34, 50):  # 352 bytes -> about 5 MB demangled; 50 levels exhaust memory
        name = _demangler_bomb(levels)
        with no_hang():
            out = demangle(name)
        assert len(out) <= 1 << 20 and out == name
    # a real, long, reference-heavy name still demangles (through the same worker)
    real = "_ZN3mlx4core5arrayC2IJiEEESt16initializer_listIT_ENS0_5DtypeE" * 1
    assert demangle(real) != real
