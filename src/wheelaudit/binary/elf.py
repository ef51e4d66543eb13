"""ELF reader: ELF32/ELF64, little and big endian, read with :mod:`struct` only.

Reads just the tables the facts need (program headers, the dynamic table, the dynamic symbol
table with its string table and GNU version tables, and ``.symtab`` when present), each sliced
out of ``data`` on its own, so a large library costs a few table-sized copies, not a file-sized
one. The loader's view comes first: the dynamic table through ``PT_DYNAMIC``, table addresses
mapped to file offsets through ``PT_LOAD``. Section headers are the fallback when there is no
such view, and a cross-check when there is (a disagreement becomes a ``Slice.notes`` entry).
A segment is mapped as the loader maps it, in whole pages: the rest of its last page past
``p_filesz`` holds the file's bytes unless the segment has a zero-filled part (:meth:`_Reader.page_tail`).

Every offset, size and count is checked against the file before use; anything out of range
raises :class:`MalformedBinary` with the reason. Every walk is bounded.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable, Sequence
from functools import partial
from itertools import repeat

from wheelaudit.binary import demangle as _demangle
from wheelaudit.binary import symbols as _symbols
from wheelaudit.model.binary import Dependency, Kind, Rpath, Slice, Symbol, make_symbol
from wheelaudit.binary import Buffer, MalformedBinary, find_strings
from wheelaudit.binary import _columns as _C
from wheelaudit.binary.budget import Budget

#: the most symbol-table entries we read from one table
MAX_SYMBOLS = 20_000_000
#: the smallest page size of any Linux machine: a loader maps at least this much of a segment's
#: last page from the file
MIN_PAGE = 0x1000

# e_type
ET_REL, ET_EXEC, ET_DYN, ET_CORE = 1, 2, 3, 4
# p_type
PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
PT_GNU_STACK = 0x6474E551
PT_NOTE, PT_GNU_PROPERTY = 4, 0x6474E553
PF_X = 1
# notes: the GNU property note and the x86 ISA level it may carry (binutils 2.36+, glibc 2.33+)
NT_GNU_PROPERTY_TYPE_0 = 5
GNU_PROPERTY_X86_ISA_1_NEEDED = 0xC0008002
#: GNU_PROPERTY_X86_ISA_1_NEEDED bits, highest level first
X86_ISA_LEVELS = ((8, "x86-64-v4"), (4, "x86-64-v3"), (2, "x86-64-v2"), (1, "x86-64-baseline"))
# d_tag / DT_FLAGS bit: relocations against read-only segments
DT_TEXTREL, DT_FLAGS, DF_TEXTREL = 22, 30, 0x4
SHF_ALLOC = 0x2
#: machines whose ABI gives an image without PT_GNU_STACK a non-executable stack (glibc's
#: DEFAULT_STACK_PERMS without PF_X); elsewhere its absence means an executable stack
_NX_STACK_BY_DEFAULT = {"aarch64", "loongarch64", "loongarch32"}
#: the note of an image whose stack is executable for want of PT_GNU_STACK
NO_GNU_STACK_NOTE = "no PT_GNU_STACK program header: the {arch} ABI then defaults to an executable stack"
# sh_type
SHT_SYMTAB, SHT_NOTE, SHT_NOBITS, SHT_DYNAMIC, SHT_DYNSYM = 2, 7, 8, 6, 11
SHT_GNU_VERDEF, SHT_GNU_VERNEED = 0x6FFFFFFD, 0x6FFFFFFE
# d_tag
DT_NULL, DT_NEEDED, DT_HASH, DT_STRTAB, DT_SYMTAB = 0, 1, 4, 5, 6
DT_STRSZ, DT_SYMENT, DT_SONAME, DT_RPATH, DT_RUNPATH = 10, 11, 14, 15, 29
DT_RELA, DT_REL, DT_JMPREL = 7, 17, 23
DT_GNU_HASH = 0x6FFFFEF5
DT_VERSYM = 0x6FFFFFF0
DT_VERDEF, DT_VERDEFNUM = 0x6FFFFFFC, 0x6FFFFFFD
DT_VERNEED, DT_VERNEEDNUM = 0x6FFFFFFE, 0x6FFFFFFF
_SINGLE_TAGS = {
    DT_HASH: "DT_HASH", DT_STRTAB: "DT_STRTAB", DT_SYMTAB: "DT_SYMTAB", DT_STRSZ: "DT_STRSZ",
    DT_SYMENT: "DT_SYMENT", DT_SONAME: "DT_SONAME", DT_GNU_HASH: "DT_GNU_HASH",
    DT_VERSYM: "DT_VERSYM", DT_VERDEF: "DT_VERDEF", DT_VERDEFNUM: "DT_VERDEFNUM",
    DT_VERNEED: "DT_VERNEED", DT_VERNEEDNUM: "DT_VERNEEDNUM",
}
# symbols
SHN_UNDEF = 0
STB_LOCAL, STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE = 0, 1, 2, 10
STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE, STT_COMMON, STT_TLS, STT_GNU_IFUNC = 1, 2, 3, 4, 5, 6, 10
STV_DEFAULT, STV_INTERNAL, STV_HIDDEN, STV_PROTECTED = 0, 1, 2, 3
VER_FLG_BASE = 1

_TYPE_NAMES = {STT_FUNC: "func", STT_GNU_IFUNC: "func", STT_OBJECT: "data", STT_TLS: "data", STT_COMMON: "data"}
_EXPORT_BINDINGS = {STB_GLOBAL: "global", STB_GNU_UNIQUE: "global", STB_WEAK: "weak"}
_LOCAL_TYPES = {STT_FUNC: "func", STT_GNU_IFUNC: "func", STT_OBJECT: "data", STT_TLS: "data"}


def _classify(info: int, vis: int) -> tuple[str, str] | None:
    """(binding, type) of an exported definition with this st_info and visibility, else None."""
    binding, stype = _EXPORT_BINDINGS.get(info >> 4), info & 0xF
    if binding is None or vis not in (STV_DEFAULT, STV_PROTECTED) or stype in (STT_SECTION, STT_FILE):
        return None
    return binding, _TYPE_NAMES.get(stype, "other")


def _classify_local(info: int, vis: int) -> str | None:
    """The type of a local definition (STB_LOCAL, or hidden/internal) with this st_info, else None."""
    if info >> 4 != STB_LOCAL and vis not in (STV_HIDDEN, STV_INTERNAL):
        return None
    return _LOCAL_TYPES.get(info & 0xF)


# indexed by st_info << 2 | (st_other & 3): one lookup per symbol instead of a chain of tests
_EXPORT_CLASS = [_classify(key >> 2, key & 3) for key in range(1024)]
_LOCAL_CLASS = [_classify_local(key >> 2, key & 3) for key in range(1024)]
_MISSING = object()

EM_386, EM_PPC, EM_PPC64, EM_S390, EM_ARM = 3, 20, 21, 22, 40
EM_X86_64, EM_AARCH64, EM_RISCV, EM_LOONGARCH = 62, 183, 243, 258
EM_MIPS = 8
#: machines with no wheel platform tag, named in words (never "em_N" in a message)
_OTHER_MACHINES = {
    2: "sparc", 4: "m68k", 15: "hppa", 18: "sparc32plus", 42: "superh", 43: "sparc64", 50: "ia64",
    75: "vax", 76: "cris", 92: "openrisc", 94: "xtensa", 106: "blackfin", 164: "hexagon", 247: "bpf",
    0x9026: "alpha",
}
# ARM: EF_ARM_ABI_FLOAT_* of e_flags (EABI 5); the .ARM.attributes section; its tags
EF_ARM_ABI_FLOAT_SOFT, EF_ARM_ABI_FLOAT_HARD = 0x200, 0x400
SHT_ARM_ATTRIBUTES = 0x70000003
TAG_CPU_ARCH, TAG_ABI_VFP_ARGS = 6, 28
_ODD = bytes(i & 1 for i in range(256))  # translate table: byte -> its low bit



# the fast paths' byte tables (see _Reader.fast_dynsym / fast_symtab)
_EXPORT_INFO_OK = _C.table(lambda i: _EXPORT_BINDINGS.get(i >> 4) is not None and (i & 0xF) not in (STT_SECTION, STT_FILE))
_EXPORT_VIS_OK = _C.table(lambda o: (o & 3) in (STV_DEFAULT, STV_PROTECTED))
_EXPORT_CODE = _C.table(lambda i: _symbols.symbol_code(_EXPORT_BINDINGS.get(i >> 4, "global"),
                                                      _TYPE_NAMES.get(i & 0xF, "other")))
_LOCAL_TYPED = _C.table(lambda i: (i & 0xF) in _LOCAL_TYPES)
_LOCAL_BOUND = _C.table(lambda i: (i >> 4) == STB_LOCAL and (i & 0xF) in _LOCAL_TYPES)
_HIDDEN_VIS = _C.table(lambda o: (o & 3) in (STV_HIDDEN, STV_INTERNAL))
_LOCAL_CODE = _C.table(lambda i: _symbols.symbol_code("local", _LOCAL_TYPES.get(i & 0xF, "other")))


def _decoded(strtab: bytes, offsets) -> list[str]:
    """The ASCII strings at ``offsets`` of ``strtab``, each distinct offset decoded once: entries
    that point at one string share one ``str`` (a table of many entries naming one long string
    costs that string once, not once per entry)."""
    find = strtab.find
    at: dict[int, str] = {}
    out = []
    for o in offsets:
        name = at.get(o)
        if name is None:
            name = at[o] = strtab[o:find(b"\0", o)].decode("ascii")
        out.append(name)
    return out


def _text(table: bytes) -> tuple[bool, bytes | str]:
    """A string table as ``str`` when it is ASCII (names then slice out without decoding)."""
    if table.isascii():
        return True, table.decode("ascii")
    return False, table


def _arch(machine: int, is64: bool, little: bool) -> str:
    if machine == EM_X86_64:
        return "x86_64" if is64 else "x32"
    if machine == EM_AARCH64:
        return "aarch64"
    if machine == EM_386:
        return "i686"
    if machine == EM_ARM:
        return "armv7l"
    if machine == EM_PPC64:
        return "ppc64le" if little else "ppc64"
    if machine == EM_PPC:
        return "ppc"
    if machine == EM_S390:
        return "s390x" if is64 else "s390"
    if machine == EM_RISCV:
        return "riscv64" if is64 else "riscv32"
    if machine == EM_LOONGARCH:
        return "loongarch64" if is64 else "loongarch32"
    if machine == EM_MIPS:  # (uname -m says mips64 for either byte order; the arch keeps it)
        return ("mips64" if is64 else "mips") + ("el" if little else "")
    if machine in _OTHER_MACHINES:
        return _OTHER_MACHINES[machine]
    return f"unknown machine (ELF e_machine {machine})"


def _uleb(data: bytes, pos: int) -> tuple[int, int]:
    """(value, next position) of the ULEB128 at ``pos``; bounded by ``data``."""
    value = shift = 0
    while pos < len(data):
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80 or shift > 63:
            return value, pos
    return value, pos


def arm_attributes(data: bytes, little: bool) -> dict[int, int]:
    """The integer file-scope attributes of an ``.ARM.attributes`` section's "aeabi" subsection
    (``{Tag_CPU_arch: 10, Tag_ABI_VFP_args: 1, ...}``); empty when the section says nothing
    readable. Every walk is bounded by the section (a damaged one gives what was read so far)."""
    out: dict[int, int] = {}
    if not data or data[0:1] != b"A":
        return out
    e = "<" if little else ">"
    pos = 1
    while pos + 4 <= len(data):
        length, = struct.unpack_from(e + "I", data, pos)
        if length < 5 or pos + length > len(data):
            break
        sub = data[pos + 4 : pos + length]
        pos += length
        nul = sub.find(b"\0")
        if nul < 0 or sub[:nul] != b"aeabi":
            continue
        q = nul + 1
        while q + 5 <= len(sub):
            tag, size = sub[q], struct.unpack_from(e + "I", sub, q + 1)[0]
            if size < 5 or q + size > len(sub):
                break
            if tag == 1:  # Tag_File: the attributes of the whole file
                body, r = sub[q + 5 : q + size], 0
                while r < len(body):
                    attr, r = _uleb(body, r)
                    if attr in (4, 5, 67) or (attr > 32 and attr % 2 and attr != 65):
                        end = body.find(b"\0", r)  # a NUL-terminated string
                        r = len(body) if end < 0 else end + 1
                    elif attr == 65:  # Tag_also_compatible_with: a string
                        end = body.find(b"\0", r)
                        r = len(body) if end < 0 else end + 1
                    elif attr == 32:  # Tag_compatibility: ULEB then string
                        _v, r = _uleb(body, r)
                        end = body.find(b"\0", r)
                        r = len(body) if end < 0 else end + 1
                    else:
                        value, r = _uleb(body, r)
                        out.setdefault(attr, value)
            q += size
    return out


#: Tag_CPU_arch -> the Linux name of the oldest CPU that runs the code
_ARM_CPU = {0: "armv4l", 1: "armv4l", 2: "armv4tl", 3: "armv5l", 4: "armv5l", 5: "armv5l", 6: "armv6l", 7: "armv6l",
            8: "armv6l", 9: "armv6l", 10: "armv7l", 11: "armv6l", 12: "armv6l", 13: "armv7l", 14: "armv8l"}


def parse(data: Buffer, needles: Sequence[bytes] = (), budget: Budget | None = None) -> list[Slice]:
    """Facts of one ELF file (always one slice). Raises :class:`MalformedBinary`. ``budget``: the
    run's, which names that could explode are demangled within."""
    return [_Reader(data, budget).read(needles)]


class _Reader:
    def __init__(self, data: Buffer, budget: Budget | None = None) -> None:
        self.budget = budget
        self.data = data
        self.size = len(data)
        self.notes: list[str] = []

    # ---- bounds-checked access ------------------------------------------------------------
    def need(self, off: int, length: int, what: str) -> None:
        if off < 0 or length < 0 or off + length > self.size:
            raise MalformedBinary(
                f"truncated: {what} at 0x{off:x} + {length} bytes is past the end of the "
                f"{self.size}-byte file"
            )

    def unpack(self, fmt: str, off: int, what: str) -> tuple:
        self.need(off, struct.calcsize(fmt), what)
        return struct.unpack_from(fmt, self.data, off)

    def take(self, off: int, length: int, what: str) -> bytes:
        self.need(off, length, what)
        chunk = self.data[off : off + length]
        return chunk if isinstance(chunk, bytes) else bytes(chunk)

    # ---- headers --------------------------------------------------------------------------
    def read_header(self) -> None:
        if self.size < 16:
            raise MalformedBinary(f"truncated: ELF identification needs 16 bytes but the file has {self.size}")
        ident = self.take(0, 16, "ELF identification")
        if ident[:4] != b"\x7fELF":
            raise MalformedBinary("not an ELF file (no \\x7fELF magic)")
        cls, enc = ident[4], ident[5]
        if cls not in (1, 2):
            raise MalformedBinary(f"unknown ELF class {cls} (EI_CLASS must be 1 for ELF32 or 2 for ELF64)")
        if enc not in (1, 2):
            raise MalformedBinary(f"unknown ELF data encoding {enc} (EI_DATA must be 1 for little or 2 for big endian)")
        self.is64 = cls == 2
        self.little = enc == 1
        e = self.e = "<" if self.little else ">"
        if self.is64:
            hdr_fmt, self.word = e + "HHIQQQIHHHHHH", 8
            self.sym_min, self.ph_min, self.sh_min, self.dyn_min = 24, 56, 64, 16
        else:
            hdr_fmt, self.word = e + "HHIIIIIHHHHHH", 4
            self.sym_min, self.ph_min, self.sh_min, self.dyn_min = 16, 32, 40, 8
        ehsize = 16 + struct.calcsize(hdr_fmt)
        if self.size < ehsize:
            raise MalformedBinary(
                f"truncated: the ELF{64 if self.is64 else 32} header needs {ehsize} bytes but the file has {self.size}"
            )
        (self.e_type, self.e_machine, _ver, _entry, self.phoff, self.shoff, self.e_flags, _ehsize,
         self.phentsize, phnum, self.shentsize, shnum, self.shstrndx) = self.unpack(hdr_fmt, 16, "ELF header")
        self.ehsize = ehsize
        if self.e_type not in (ET_REL, ET_EXEC, ET_DYN):
            what = "a core dump" if self.e_type == ET_CORE else "unknown type"
            raise MalformedBinary(
                f"unsupported ELF file type {self.e_type} ({what}); expected ET_REL, ET_EXEC or ET_DYN"
            )
        self.read_sections(shnum, phnum)
        self.read_segments(phnum)

    def read_sections(self, shnum: int, phnum: int) -> None:
        self.sections: list[tuple] = []
        self.xphnum: int | None = None
        if self.shoff == 0:
            return
        if self.shentsize < self.sh_min:
            raise MalformedBinary(
                f"e_shentsize is {self.shentsize}, smaller than the {self.sh_min}-byte section header"
            )
        if self.shoff < self.ehsize:
            raise MalformedBinary(f"section header table at 0x{self.shoff:x} overlaps the ELF header")
        sh_fmt = self.e + ("IIQQQQIIQQ" if self.is64 else "IIIIIIIIII") + (
            f"{self.shentsize - self.sh_min}x" if self.shentsize > self.sh_min else ""
        )
        if shnum == 0 or phnum == 0xFFFF or self.shstrndx == 0xFFFF:
            # extended numbering: the real counts live in section header 0
            first = self.unpack(sh_fmt, self.shoff, "section header 0")
            if self.shstrndx == 0xFFFF:  # SHN_XINDEX
                self.shstrndx = first[6]
            if shnum == 0:
                shnum = first[5]
            if phnum == 0xFFFF:
                self.xphnum = first[7]
        if shnum == 0:
            return
        if shnum * self.shentsize > self.size:
            raise MalformedBinary(
                f"section header table claims {shnum} entries of {self.shentsize} bytes "
                f"({shnum * self.shentsize} bytes), more than the {self.size}-byte file"
            )
        table = self.take(self.shoff, shnum * self.shentsize, "section header table")
        self.sections = list(struct.iter_unpack(sh_fmt, table))

    def read_segments(self, phnum: int) -> None:
        self.segments: list[tuple] = []
        self.note_segments: list[tuple[int, int, int, int]] = []
        self.loads: list[tuple] = []
        self.stack_flags: int | None = None  # PT_GNU_STACK's p_flags, None without one
        if phnum == 0xFFFF:
            if self.xphnum is None:
                raise MalformedBinary("e_phnum is PN_XNUM (0xffff) but there is no section header 0 to hold the count")
            phnum = self.xphnum
        if phnum == 0:
            return
        if self.phentsize < self.ph_min:
            raise MalformedBinary(
                f"e_phentsize is {self.phentsize}, smaller than the {self.ph_min}-byte program header"
            )
        if self.phoff < self.ehsize:
            raise MalformedBinary(f"program header table at 0x{self.phoff:x} overlaps the ELF header")
        pad = f"{self.phentsize - self.ph_min}x" if self.phentsize > self.ph_min else ""
        if self.is64:
            raw = struct.iter_unpack(self.e + "IIQQQQQQ" + pad,
                                     self.take(self.phoff, phnum * self.phentsize, "program header table"))
            # (type, offset, vaddr, filesz, memsz)
            rows = [(t, off, va, fs, ms, f, al) for t, f, off, va, _pa, fs, ms, al in raw]
        else:
            raw = struct.iter_unpack(self.e + "IIIIIIII" + pad,
                                     self.take(self.phoff, phnum * self.phentsize, "program header table"))
            rows = [(t, off, va, fs, ms, f, al) for t, off, va, _pa, fs, ms, f, al in raw]
        self.segments = [r[:5] for r in rows]
        #: (type, offset, filesz, p_align) of PT_NOTE and PT_GNU_PROPERTY segments
        self.note_segments = [(r[0], r[1], r[3], r[6]) for r in rows if r[0] in (PT_NOTE, PT_GNU_PROPERTY)]
        self.stack_flags = next((r[5] for r in rows if r[0] == PT_GNU_STACK), None)
        self.loads = [s for s in self.segments if s[0] == PT_LOAD]

    # ---- address mapping ------------------------------------------------------------------
    def page_tail(self, off: int, va: int, filesz: int, memsz: int) -> int:
        """The file bytes a loader maps past a PT_LOAD segment's ``p_filesz``: the rest of its last
        page. The kernel and ld.so map file bytes in whole pages (at least MIN_PAGE); only where
        the segment has no zero-filled part (``p_memsz == p_filesz``) are those bytes left as the
        file has them (else the loader zeroes the page's tail). Never past the end of the file."""
        if not filesz or memsz != filesz:
            return 0
        end = va + filesz
        tail = -end % MIN_PAGE
        return max(0, min(tail, self.size - (off + filesz)))

    def locate(self, addr: int, what: str) -> tuple[int, int, int]:
        """(file offset of virtual address ``addr``, file bytes of its segment from there, bytes
        of the segment's last page mapped beyond them: :meth:`page_tail`)."""
        for _t, off, va, filesz, memsz in self.loads:
            if va <= addr < va + filesz:
                delta = addr - va
                return off + delta, filesz - delta, self.page_tail(off, va, filesz, memsz)
        for _t, off, va, filesz, memsz in self.loads:  # (past p_filesz, inside the last page)
            tail = self.page_tail(off, va, filesz, memsz)
            if tail and va + filesz <= addr < va + filesz + tail:
                return off + addr - va, 0, va + filesz + tail - addr
        if not self.loads:
            # no loadable segments (e.g. section headers only): map through allocated sections
            for sec in self.sections:
                _n, stype, flags, saddr, soff, ssize = sec[:6]
                if flags & 2 and stype != SHT_NOBITS and saddr <= addr < saddr + ssize:
                    delta = addr - saddr
                    return soff + delta, ssize - delta, 0
        raise MalformedBinary(f"{what} address 0x{addr:x} is not inside any loadable segment")

    def map_addr(self, addr: int, what: str) -> tuple[int, int]:
        """File offset of virtual address ``addr`` and the file bytes the loader maps from there
        (its segment's, and the rest of the segment's last page: :meth:`page_tail`)."""
        off, avail, tail = self.locate(addr, what)
        return off, avail + tail

    def section_data_range(self, index: int, what: str) -> tuple[int, int]:
        if not 0 <= index < len(self.sections):
            raise MalformedBinary(f"{what}: section index {index} is out of range ({len(self.sections)} sections)")
        sec = self.sections[index]
        if sec[1] == SHT_NOBITS:
            raise MalformedBinary(f"{what} (section {index}) has no data in the file (SHT_NOBITS)")
        self.need(sec[4], sec[5], f"{what} (section {index})")
        return sec[4], sec[5]

    # ---- string tables --------------------------------------------------------------------
    def string(self, table: bytes, off: int, what: str) -> str:
        if off >= len(table):
            raise MalformedBinary(
                f"{what}: name offset {off} is past the end of the {len(table)}-byte string table"
            )
        end = table.find(b"\0", off)
        if end < 0:
            raise MalformedBinary(
                f"{what}: the string at offset {off} runs off the end of the {len(table)}-byte "
                "string table (no NUL terminator)"
            )
        return table[off:end].decode("utf-8", "backslashreplace")

    # ---- the dynamic table ----------------------------------------------------------------
    def read_dynamic(self) -> None:
        self.dyn: list[tuple[int, int]] = []
        self.tags: dict[int, int] = {}
        dyn_secs = [i for i, s in enumerate(self.sections) if s[1] == SHT_DYNAMIC]
        self.dyn_section = dyn_secs[0] if dyn_secs else None
        pdyn = [s for s in self.segments if s[0] == PT_DYNAMIC]
        if len(pdyn) > 1:
            self.notes.append(f"{len(pdyn)} PT_DYNAMIC segments; the first one was read")
        if pdyn:
            _t, off, _va, filesz, _ms = pdyn[0]
            what = "dynamic segment (PT_DYNAMIC)"
            if filesz == 0:
                # objcopy --only-keep-debug keeps the program headers but none of their bytes
                self.notes.append("PT_DYNAMIC has no bytes in the file (a separate debug-info file?); "
                                  "no dynamic table was read")
                self.dyn_section = None
                return
            if self.dyn_section is not None:
                sec = self.sections[self.dyn_section]
                if sec[1] != SHT_NOBITS and sec[4] != off:
                    self.notes.append(
                        f"section headers disagree with the program headers: .dynamic at 0x{sec[4]:x}, "
                        f"PT_DYNAMIC at 0x{off:x} (the loader's PT_DYNAMIC was read)"
                    )
        elif self.dyn_section is not None:
            off, filesz = self.section_data_range(self.dyn_section, ".dynamic")
            what = ".dynamic section"
        else:
            return
        entsize = self.dyn_min
        fmt = self.e + ("qQ" if self.is64 else "iI")
        raw = self.take(off, filesz - filesz % entsize, what)
        terminated = False
        for tag, val in struct.iter_unpack(fmt, raw):
            if tag == DT_NULL:
                terminated = True
                break
            self.dyn.append((tag, val))
            if tag in _SINGLE_TAGS:
                if tag in self.tags and self.tags[tag] != val:
                    self.notes.append(f"the dynamic table has more than one {_SINGLE_TAGS[tag]}; the last one was read")
                self.tags[tag] = val  # the last one wins, as in glibc's loader
        if not terminated and self.dyn:
            self.notes.append(f"the {what} has no DT_NULL terminator")

    def dynstr(self) -> bytes:
        """The dynamic string table (DT_STRTAB / DT_STRSZ), or the .dynamic section's sh_link."""
        if hasattr(self, "_dynstr"):
            return self._dynstr
        linked = None
        if self.dyn_section is not None:
            link = self.sections[self.dyn_section][6]
            if 0 < link < len(self.sections) and self.sections[link][1] != SHT_NOBITS:
                linked = self.sections[link]
        if DT_STRTAB in self.tags:
            off, avail, tail = self.locate(self.tags[DT_STRTAB], "DT_STRTAB")
            if DT_STRSZ in self.tags:
                size = self.tags[DT_STRSZ]
                if size > avail + tail:
                    raise MalformedBinary(
                        f"dynamic string table (DT_STRSZ {size} bytes at 0x{off:x}) runs past the end "
                        f"of its segment ({avail} bytes left"
                        + (f", {tail} more in its last page" if tail else "") + ")"
                    )
                if size > avail:  # (casadi's patchelf-edited clp and cbc: readelf and ld.so read it)
                    self.notes.append(
                        f"the dynamic string table runs {size - avail} bytes past its segment's file size, "
                        f"inside the segment's last page, which the loader maps from the file: read from there")
            else:
                size = avail + tail
                self.notes.append("no DT_STRSZ; the dynamic string table was bounded by its segment")
            if linked is not None and linked[4] != off:
                self.notes.append(
                    f"section headers disagree with the dynamic table: .dynstr at 0x{linked[4]:x}, "
                    f"DT_STRTAB maps to 0x{off:x} (DT_STRTAB was read)"
                )
            table = self.take(off, size, "dynamic string table (DT_STRTAB)")
        elif linked is not None:
            table = self.take(linked[4], linked[5], "dynamic string table (.dynstr)")
        else:
            table = None
        self._dynstr = table
        return table

    def dyn_string(self, val: int, what: str) -> str:
        table = self.dynstr()
        if table is None:
            raise MalformedBinary(f"{what} entry but no dynamic string table (DT_STRTAB)")
        return self.string(table, val, what)

    # ---- GNU symbol versions --------------------------------------------------------------
    def read_versions(self) -> tuple[dict[int, str | None], list[str]]:
        """``{version index: name (None for the base version)}`` and the required version names."""
        index: dict[int, str | None] = {}
        needs: set[str] = set()
        by_type = {s[1]: s for s in self.sections}
        e = self.e
        if DT_VERDEF in self.tags:
            off, _ = self.map_addr(self.tags[DT_VERDEF], "DT_VERDEF")
            count = self.tags.get(DT_VERDEFNUM)
            if count is None and SHT_GNU_VERDEF in by_type:
                count = by_type[SHT_GNU_VERDEF][7]  # sh_info
            self.walk_versions(off, count, 20, "version definition (DT_VERDEF)",
                               lambda o: self._verdef(o, index))
        if DT_VERNEED in self.tags:
            off, _ = self.map_addr(self.tags[DT_VERNEED], "DT_VERNEED")
            count = self.tags.get(DT_VERNEEDNUM)
            if count is None and SHT_GNU_VERNEED in by_type:
                count = by_type[SHT_GNU_VERNEED][7]  # sh_info
            seen_aux: set[int] = set()  # bounds the whole walk: each record is read once

            def verneed(o: int) -> int:
                _v, cnt, _file, aux, nxt = self.unpack(e + "HHIII", o, "version requirement (DT_VERNEED)")
                a = o + aux
                for k in range(cnt):
                    if a in seen_aux:
                        raise MalformedBinary(f"version requirement entries overlap at 0x{a:x}")
                    seen_aux.add(a)
                    _h, _fl, other, name, anext = self.unpack(e + "IHHII", a, "version requirement entry (vernaux)")
                    vname = self.dyn_string(name, "version requirement name")
                    needs.add(vname)
                    index.setdefault(other & 0x7FFF, vname)
                    if anext == 0:
                        if k != cnt - 1:
                            raise MalformedBinary(
                                f"version requirement at 0x{o:x} claims {cnt} entries but its chain ends after {k + 1}"
                            )
                        break
                    a += anext
                return nxt

            self.walk_versions(off, count, 16, "version requirement (DT_VERNEED)", verneed)
        return index, sorted(needs)

    def _verdef(self, o: int, index: dict[int, str | None]) -> int:
        _v, flags, ndx, cnt, _hash, aux, nxt = self.unpack(self.e + "HHHHIII", o, "version definition (DT_VERDEF)")
        if cnt:
            name, _anext = self.unpack(self.e + "II", o + aux, "version definition name (verdaux)")
            index[ndx & 0x7FFF] = None if flags & VER_FLG_BASE else self.dyn_string(name, "version definition name")
        return nxt

    def walk_versions(self, off: int, count: int | None, entsize: int, what: str, step) -> None:
        limit = self.size // entsize
        if count is not None and count > limit:
            raise MalformedBinary(f"{what} claims {count} entries; the {self.size}-byte file holds at most {limit}")
        n = 0
        while count is None or n < count:  # offsets only grow (vd_next/vn_next are unsigned)
            nxt = step(off)
            n += 1
            if nxt == 0:
                if count is not None and n < count:
                    raise MalformedBinary(f"{what} claims {count} entries but its chain ends after {n}")
                break
            if count is None and n >= limit:
                raise MalformedBinary(f"{what} chain is longer than the file could hold")
            off += nxt

    # ---- symbol tables --------------------------------------------------------------------
    def sym_format(self, entsize: int, what: str) -> str:
        if entsize < self.sym_min:
            raise MalformedBinary(f"{what} entry size is {entsize}, smaller than the {self.sym_min}-byte symbol")
        if entsize > 4096:
            raise MalformedBinary(f"{what} entry size is {entsize} bytes; a symbol is {self.sym_min}")
        pad = f"{entsize - self.sym_min}x" if entsize > self.sym_min else ""
        # (st_name, st_info, st_other, st_shndx)
        return self.e + ("IBBH16x" if self.is64 else "I8xBBH") + pad

    def check_count(self, count: int, entsize: int, off: int, what: str) -> None:
        if count > MAX_SYMBOLS:
            raise MalformedBinary(f"symbol table claims {count} entries; limit {MAX_SYMBOLS:,}")
        self.need(off, count * entsize, f"{what} ({count} entries of {entsize} bytes)")

    def gnu_hash_count(self, addr: int) -> int | None:
        """Number of dynamic symbols by the GNU hash table, or None when it cannot tell."""
        off, _ = self.map_addr(addr, "DT_GNU_HASH")
        e = self.e
        nbuckets, symoffset, bloom_size, _shift = self.unpack(e + "IIII", off, "GNU hash table header")
        buckets_off = off + 16 + bloom_size * self.word
        buckets = self.take(buckets_off, nbuckets * 4, f"GNU hash buckets ({nbuckets})")
        top = max(struct.unpack(f"{e}{nbuckets}I", buckets), default=0)
        if top == 0:
            # no hashed (defined) symbols: ld still writes symoffset 1 here, so the unhashed
            # symbols before it cannot be counted from this table
            return None
        if top < symoffset:
            raise MalformedBinary(f"GNU hash bucket points at symbol {top}, below its symoffset {symoffset}")
        if top > MAX_SYMBOLS:
            raise MalformedBinary(f"symbol table claims {top + 1} entries; limit {MAX_SYMBOLS:,}")
        start = buckets_off + nbuckets * 4 + (top - symoffset) * 4
        self.need(start, 4, "GNU hash chain")
        # find the end-of-chain bit (the low bit of a word) with bytes.translate/find, reading
        # the chain in growing chunks: a real chain ends within a few words
        limit = min(self.size, start + 4 * (MAX_SYMBOLS - top + 1))
        pos, chunk = start, 64
        while pos < limit:
            stop = min(limit, pos + 4 * chunk)
            words = (stop - pos) // 4
            if words == 0:
                break
            raw = self.take(pos, 4 * words, "GNU hash chain")
            low = raw[0::4] if self.little else raw[3::4]
            k = bytes(low).translate(_ODD).find(1)
            if k >= 0:
                return top + (pos - start) // 4 + k + 1
            pos += 4 * words
            chunk *= 4
        if limit == self.size:
            raise MalformedBinary("GNU hash chain runs past the end of the file without an end marker")
        raise MalformedBinary(f"symbol table claims more than {MAX_SYMBOLS:,} entries; limit {MAX_SYMBOLS:,}")

    def hash_count(self, addr: int) -> int:
        off, _ = self.map_addr(addr, "DT_HASH")
        wide = self.is64 and self.e_machine == EM_S390  # 64-bit hash words on s390x
        _nb, nchain = self.unpack(self.e + ("QQ" if wide else "II"), off, "hash table header (DT_HASH)")
        return nchain

    def count_by_layout(self, off: int, avail: int, entsize: int) -> int:
        """Dynamic symbols up to the next table the dynamic section locates (no hash count).

        Linkers place another dynamic table right after .dynsym (.dynstr with GNU ld,
        .gnu.version with lld), so the distance to the nearest one is the table size.
        """
        tables = (DT_STRTAB, DT_VERSYM, DT_GNU_HASH, DT_HASH, DT_VERDEF, DT_VERNEED, DT_RELA, DT_REL, DT_JMPREL)
        bound = off + avail
        for tag in tables:
            if tag in self.tags:
                try:
                    other, _ = self.map_addr(self.tags[tag], "dynamic table")
                except MalformedBinary:
                    continue
                if off < other < bound:
                    bound = other
        for _t, poff, _va, _fs, _ms in self.segments:
            if _t == PT_DYNAMIC and off < poff < bound:
                bound = poff
        self.notes.append(
            "no section headers and no hash table that counts every dynamic symbol; the count was "
            "taken from the table layout (up to the next dynamic table)"
        )
        return (bound - off) // entsize

    def dynsym_location(self) -> tuple[int, int, int, bytes] | None:
        """(offset, count, entsize, string table) of the dynamic symbol table, or None."""
        dynsym = [i for i, s in enumerate(self.sections) if s[1] == SHT_DYNSYM]
        sec = self.sections[dynsym[0]] if dynsym else None
        if DT_SYMTAB not in self.tags:
            if sec is None:
                return None
            # no dynamic table to say where it is: take the section as it is
            off, size = self.section_data_range(dynsym[0], ".dynsym")
            entsize = sec[9] or self.sym_min
            strs_off, strs_size = self.section_data_range(sec[6], ".dynsym string table")
            return off, size // entsize, entsize, self.take(strs_off, strs_size, ".dynsym string table")
        off, avail = self.map_addr(self.tags[DT_SYMTAB], "DT_SYMTAB")
        entsize = self.tags.get(DT_SYMENT, self.sym_min)
        if entsize < self.sym_min:
            raise MalformedBinary(f"DT_SYMENT is {entsize}, smaller than the {self.sym_min}-byte symbol")
        hashed = None
        if DT_GNU_HASH in self.tags:
            hashed = self.gnu_hash_count(self.tags[DT_GNU_HASH])
        if hashed is None and DT_HASH in self.tags:
            hashed = self.hash_count(self.tags[DT_HASH])
        count = None
        if sec is not None and sec[1] != SHT_NOBITS and sec[4] == off:
            if sec[9] and sec[9] != entsize:
                self.notes.append(
                    f"section headers disagree with the dynamic table: .dynsym entries of {sec[9]} bytes, "
                    f"DT_SYMENT {entsize} (DT_SYMENT was used)"
                )
            count = sec[5] // entsize
            if sec[5] % entsize:
                self.notes.append(f".dynsym size {sec[5]} is not a multiple of its {entsize}-byte entries")
            if hashed is not None and hashed != count:
                self.notes.append(
                    f"the hash table counts {hashed} dynamic symbols, the .dynsym section {count}; "
                    "the section was read"
                )
        elif sec is not None:
            self.notes.append(
                f"section headers disagree with the dynamic table: .dynsym at 0x{sec[4]:x}, DT_SYMTAB maps "
                f"to 0x{off:x} (DT_SYMTAB was read)"
            )
        if count is None:
            count = hashed if hashed is not None else self.count_by_layout(off, avail, entsize)
        table = self.dynstr()
        if table is None:
            raise MalformedBinary("dynamic symbol table without a dynamic string table (DT_STRTAB)")
        return off, count, entsize, table

    def check_overlap(self, off: int, count: int, entsize: int) -> None:
        """The dynamic symbol table must not run into another table the dynamic section locates
        (a count from a damaged hash chain would, and would read other bytes as symbols)."""
        end = off + count * entsize
        tables = ((DT_STRTAB, "dynamic string table (DT_STRTAB)"), (DT_VERSYM, "symbol version table (DT_VERSYM)"),
                  (DT_GNU_HASH, "GNU hash table"), (DT_HASH, "hash table (DT_HASH)"),
                  (DT_VERDEF, "version definitions (DT_VERDEF)"), (DT_VERNEED, "version requirements (DT_VERNEED)"))
        for tag, name in tables:
            if tag in self.tags:
                try:
                    other, _ = self.map_addr(self.tags[tag], name)
                except MalformedBinary:
                    continue
                if off < other < end:
                    raise MalformedBinary(
                        f"dynamic symbol table at 0x{off:x} ({count} entries of {entsize} bytes) overlaps "
                        f"the {name} at 0x{other:x}"
                    )

    def read_dynsym(self, version_index: dict[int, str | None]) -> tuple[list[Symbol], list[str]]:
        """(exports, imports); the versioned imports' version nodes go to ``self.import_versions``."""
        self.import_versions: dict[str, str] = {}
        #: the weak ones' names (STB_WEAK undefined: the loader leaves them null when nothing
        #: defines them); a name's first entry decides, as for import_versions
        self.weak_imports: list[str] = []
        loc = self.dynsym_location()
        if loc is None:
            return [], []
        off, count, entsize, strtab = loc
        fmt = self.sym_format(entsize, "dynamic symbol table")
        self.check_count(count, entsize, off, "dynamic symbol table")
        self.check_overlap(off, count, entsize)
        raw = self.take(off, count * entsize, "dynamic symbol table")
        versym = None
        if DT_VERSYM in self.tags and count:
            voff, _ = self.map_addr(self.tags[DT_VERSYM], "DT_VERSYM")
            table = self.take(voff, 2 * count, f"symbol version table ({count} entries)")
            versym = struct.unpack(f"{self.e}{count}H", table)
        # version index -> name (None: local, global or base), _MISSING: declared nowhere
        vmap: list = [_MISSING] * 0x8000
        vmap[0] = vmap[1] = None
        for k, v in version_index.items():
            vmap[k] = v
        if versym is None:
            versym = bytes(count)  # every symbol unversioned
        fast = self.fast_dynsym(raw, count, entsize, strtab, versym, vmap)
        if fast is not None:
            return fast
        exports: list[Symbol] = []
        imports: list[str] = []
        seen_imports: set[str] = set()
        at, decode = self.names_at(strtab)
        demangle = partial(_demangle.demangle, budget=self.budget)
        make = make_symbol
        classes = _EXPORT_CLASS
        rows = struct.iter_unpack(fmt, raw)
        next(rows, None)  # the null symbol
        i = 0
        for st_name, info, other, shndx in rows:
            i += 1
            if not st_name:
                continue
            name = at.get(st_name)
            if name is None:
                name = decode(st_name, f"dynamic symbol {i}")
            if "@" in name:
                name = name.split("@", 1)[0]
                if not name:
                    continue
            if shndx == SHN_UNDEF:
                if name not in seen_imports:
                    seen_imports.add(name)
                    imports.append(name)
                    needed = vmap[versym[i] & 0x7FFF]
                    if isinstance(needed, str):
                        self.import_versions[name] = needed
                    if info >> 4 == STB_WEAK:
                        self.weak_imports.append(name)
                continue
            cls = classes[info << 2 | other & 3]
            if cls is None:
                continue
            version = vmap[versym[i] & 0x7FFF]
            if version is _MISSING:
                raise MalformedBinary(
                    f"dynamic symbol {i} ({name}) has version index {versym[i] & 0x7FFF}, which no "
                    "version definition or requirement declares"
                )
            exports.append(make(name, cls[0], cls[1], version, demangle(name) if name[:2] == "_Z" else name))
        return exports, imports

    def read_symtab(self) -> list[Symbol] | None:
        symtabs = [i for i, s in enumerate(self.sections) if s[1] == SHT_SYMTAB]
        if not symtabs:
            return None
        if len(symtabs) > 1:
            self.notes.append(f"{len(symtabs)} .symtab sections; the first one was read")
        sec = self.sections[symtabs[0]]
        entsize = sec[9] or self.sym_min
        fmt = self.sym_format(entsize, ".symtab")
        count = sec[5] // entsize
        if sec[5] % entsize:
            self.notes.append(f".symtab size {sec[5]} is not a multiple of its {entsize}-byte entries")
        self.check_count(count, entsize, sec[4], ".symtab")
        str_off, str_size = self.section_data_range(sec[6], ".symtab string table")
        strtab = self.take(str_off, str_size, ".symtab string table")
        raw = self.take(sec[4], count * entsize, ".symtab")
        fast = self.fast_symtab(raw, count, entsize, strtab)
        if fast is not None:
            return fast
        at, decode = self.names_at(strtab)
        demangle = partial(_demangle.demangle, budget=self.budget)
        make = make_symbol
        classes = _LOCAL_CLASS
        out: list[Symbol] = []
        seen: set[tuple[str, str]] = set()
        for i, (st_name, info, other, shndx) in enumerate(struct.iter_unpack(fmt, raw)):
            if shndx == SHN_UNDEF or not st_name:
                continue
            stype = classes[info << 2 | other & 3]
            if stype is None:
                continue
            name = at.get(st_name)
            if name is None:
                name = decode(st_name, f".symtab symbol {i}")
            if "@" in name:
                name = name.split("@", 1)[0]
                if not name:
                    continue
            key = (name, stype)
            if key in seen:  # e.g. two `static` helpers of one name in different objects
                continue
            seen.add(key)
            out.append(make(name, "local", stype, None, demangle(name) if name[:2] == "_Z" else name))
        return out

    # ---- the same, a column at a time (readers._columns) ----------------------------------
    # These give the very result of the loops above (checked by the differential tests) as a
    # compact SymbolTable, and return None whenever the loop must decide: a non-ASCII or
    # versioned ("@") string table, a name offset out of range (the loop raises with the
    # reason), an undeclared version index. A large library then costs a few C-level passes
    # per column, not a Python step per symbol, and ships to the parent as two byte strings.

    def _columns(self, raw: bytes, entsize: int) -> tuple[bytes, bytes, bytes, bytes]:
        """(st_info, st_other, defined (1: st_shndx != 0), named (1: st_name != 0)) per entry."""
        ioff = 4 if self.is64 else 12
        info = _C.column(raw, ioff, entsize)
        other = _C.column(raw, ioff + 1, entsize)
        defined = _C.mask_or(_C.column(raw, ioff + 2, entsize), _C.column(raw, ioff + 3, entsize)).translate(_C.NONZERO)
        named = _C.nonzero_u32(raw, 0, entsize)
        return info, other, defined, named

    def _names_ok(self, offsets, strtab: bytes) -> bool:
        """Every offset starts a NUL-terminated string inside ``strtab``."""
        if not offsets:
            return True
        last_nul = strtab.rfind(b"\0")
        return max(offsets) < last_nul + 1 if last_nul >= 0 else False

    @staticmethod
    def _no_at(strtab: bytes, offsets) -> bool:
        """No name at ``offsets`` contains "@" (a version suffix the loop would cut off)."""
        at = strtab.find(b"@")
        if at < 0:
            return True
        starts = set(offsets)
        while at >= 0:
            s = strtab.rfind(b"\0", 0, at) + 1
            if any(o in starts for o in range(s, at + 1)):
                return False
            at = strtab.find(b"@", strtab.find(b"\0", at) + 1) if strtab.find(b"\0", at) >= 0 else -1
        return True

    def names_at(self, strtab) -> tuple[dict[int, str], Callable[[int, str], str]]:
        """The names of ``strtab`` by offset, each decoded once (symbol entries may share one):
        the cache a symbol loop looks in, and the decoder it calls on a miss (which raises with the
        reason, naming ``what``, for a name that runs past the table)."""
        is_text, text = _text(strtab)
        nul = "\0" if is_text else b"\0"
        find = text.find
        at: dict[int, str] = {}

        def decode(off: int, what: str) -> str:
            end = find(nul, off)
            if end < 0:
                self.string(strtab, off, what)  # raises with the reason
            name = at[off] = text[off:end] if is_text else text[off:end].decode("utf-8", "backslashreplace")
            return name

        return at, decode

    def fast_dynsym(self, raw: bytes, count: int, entsize: int, strtab: bytes, versym, vmap: list):
        if count < 2 or len(raw) != count * entsize or not strtab.isascii():
            return None
        info, other, defined, named = self._columns(raw, entsize)
        named = b"\0" + named[1:]  # entry 0 is the null symbol
        names = _C.u32_column(raw, 0, entsize, self.little)
        named_offsets = _C.select(names, named)
        if not self._names_ok(named_offsets, strtab) or not self._no_at(strtab, named_offsets):
            return None
        exported = _C.mask_and(named, defined, info.translate(_EXPORT_INFO_OK), other.translate(_EXPORT_VIS_OK))
        undefined = _C.mask_and(named, defined.translate(_C.ZERO))
        vals = list(map(operator.and_, _C.select(versym, exported), repeat(0x7FFF)))
        distinct = sorted(set(vals))
        if any(vmap[v] is _MISSING for v in distinct):
            return None
        if len(distinct) <= 1:
            versions: tuple = (vmap[distinct[0]] if distinct else None,)
            vindex = None
        else:
            versions = tuple(vmap[v] for v in distinct)
            pos = {v: k for k, v in enumerate(distinct)}
            vindex = (bytes if len(distinct) < 256 else _C.u32_array)(map(pos.__getitem__, vals))
        exports = _symbols.SymbolTable(strtab, _C.pick(names, exported),
                                       _C.pick(info.translate(_EXPORT_CODE), exported), versions, vindex)
        imported = _decoded(strtab, _C.select(names, undefined))
        imports = list(dict.fromkeys(imported))
        for name, v in zip(imported, _C.select(versym, undefined)):
            needed = vmap[v & 0x7FFF]
            if isinstance(needed, str):
                self.import_versions.setdefault(name, needed)  # the first entry of a name, as the loop
        first: set[str] = set()
        for name, i in zip(imported, _C.select(info, undefined)):
            if name not in first:
                first.add(name)
                if i >> 4 == STB_WEAK:
                    self.weak_imports.append(name)
        return exports, imports

    def fast_symtab(self, raw: bytes, count: int, entsize: int, strtab: bytes):
        if count < 1 or len(raw) != count * entsize or not strtab.isascii():
            return None
        info, other, defined, named = self._columns(raw, entsize)
        ok = _C.mask_or(info.translate(_LOCAL_BOUND), _C.mask_and(info.translate(_LOCAL_TYPED), other.translate(_HIDDEN_VIS)))
        kept = _C.mask_and(named, defined, ok)
        offsets = _C.pick(_C.u32_column(raw, 0, entsize, self.little), kept)
        if not self._names_ok(offsets, strtab) or not self._no_at(strtab, offsets):
            return None
        codes = _C.pick(info.translate(_LOCAL_CODE), kept)
        # a (name, type) pair seen again (the same static function in two objects) is dropped
        # by the table when it is first read as a whole (unique=False), as the loop drops it here
        table = _symbols.SymbolTable(strtab, offsets, codes, unique=False)
        return table

    # ---- ARM: CPU architecture and float ABI -----------------------------------------------
    def arm_facts(self) -> tuple[str | None, str | None]:
        """(arch, float ABI) of a 32-bit ARM file: the arch from ``.ARM.attributes``
        Tag_CPU_arch (None when absent: the caller's default); the float ABI ("hard": floating
        point arguments in VFP registers, armhf; "soft": in core registers, armel) from
        e_flags' EF_ARM_ABI_FLOAT_HARD / _SOFT (what glibc's loader checks), else from the
        attributes' Tag_ABI_VFP_args, else None."""
        attrs: dict[int, int] = {}
        for k, sec in enumerate(self.sections):
            if sec[1] == SHT_ARM_ATTRIBUTES:
                try:  # (the loader never reads it: a damaged one is a note, not an unreadable file)
                    off, size = self.section_data_range(k, ".ARM.attributes")
                    attrs = arm_attributes(self.take(off, min(size, 1 << 16), ".ARM.attributes"), self.little)
                except MalformedBinary as exc:
                    self.notes.append(f"the .ARM.attributes section was not read: {exc}")
                break
        arch = _ARM_CPU.get(attrs[TAG_CPU_ARCH], "armv8l") if TAG_CPU_ARCH in attrs else None
        if self.e_flags & EF_ARM_ABI_FLOAT_HARD:
            return arch, "hard"
        if self.e_flags & EF_ARM_ABI_FLOAT_SOFT:
            return arch, "soft"
        if not attrs:
            return arch, None
        # an absent Tag_ABI_VFP_args is the AAPCS default, 0: the base (core-register) variant
        return arch, {0: "soft", 1: "hard"}.get(attrs.get(TAG_ABI_VFP_ARGS, 0))

    # ---- loadability facts ----------------------------------------------------------------
    def exec_stack(self, kind: str, arch: str) -> bool | None:
        """Whether the loader gives this image an executable stack (``Slice.exec_stack``)."""
        if kind == "object" or not self.segments:
            return None
        if self.stack_flags is not None:
            return bool(self.stack_flags & PF_X)
        if arch in _NX_STACK_BY_DEFAULT:
            return False
        self.notes.append(NO_GNU_STACK_NOTE.format(arch=arch))
        return True

    def x86_isa_needed(self) -> str | None:
        """The x86 ISA level the image needs (``Slice.x86_isa_needed``): the highest level bit of
        GNU_PROPERTY_X86_ISA_1_NEEDED in the first NT_GNU_PROPERTY_TYPE_0 note, found where glibc's
        loader looks (``sysdeps/x86/dl-prop.h``): PT_GNU_PROPERTY, else the PT_NOTE segments aligned
        to the ELF class's word (8 bytes in ELF64, 4 in ELF32: glibc skips ELF64's 4-aligned ones,
        build-id and ABI tag); an object file's SHT_NOTE sections likewise. A note that does not
        fit is skipped (with a note when it runs past the file): the loader never fails on it."""
        word = 8 if self.is64 else 4
        prop = [(off, size, word) for t, off, size, _al in self.note_segments if t == PT_GNU_PROPERTY]
        regions = prop or [(off, size, al) for t, off, size, al in self.note_segments if t == PT_NOTE and al == word]
        if not self.segments:
            regions = [(sec[4], sec[5], sec[8]) for sec in self.sections if sec[1] == SHT_NOTE and sec[8] == word]
        for off, size, align in regions:
            if off < 0 or size < 0 or off + size > self.size:
                self.notes.append(f"a note segment at 0x{off:x} ({size} bytes) runs past the end of the file; "
                                  f"not read")
                continue
            bits = self._property_note(off, size, align, word)
            if bits is None:
                continue
            unknown = bits & ~0xF
            if unknown:
                self.notes.append(f"GNU_PROPERTY_X86_ISA_1_NEEDED has bits no ISA level names (0x{unknown:x})")
            return next((name for bit, name in X86_ISA_LEVELS if bits & bit), None)
        return None

    def _property_note(self, off: int, size: int, align: int, word: int) -> int | None:
        """GNU_PROPERTY_X86_ISA_1_NEEDED of the first GNU property note in ``[off, off+size)``
        (notes aligned to ``align``, properties to ``word``), or None."""
        e, end, pos = self.e, off + size, off
        while end - pos >= 12:  # (each step moves at least 12 bytes: bounded)
            namesz, descsz, ntype = struct.unpack_from(e + "III", self.data, pos)
            desc = pos + -(-(12 + namesz) // align) * align  # (glibc's ELF_NOTE_NEXT_OFFSET)
            nxt = pos + -(-(desc - pos + descsz) // align) * align
            if nxt > end:
                return None
            if namesz == 4 and ntype == NT_GNU_PROPERTY_TYPE_0 and bytes(self.data[pos + 12 : pos + 16]) == b"GNU\0":
                if descsz < 8 or descsz % word:
                    return None
                p, stop = desc, desc + descsz
                while stop - p >= 8:
                    ptype, datasz = struct.unpack_from(e + "II", self.data, p)
                    p += 8
                    if p + datasz > stop:
                        return None
                    if ptype == GNU_PROPERTY_X86_ISA_1_NEEDED:
                        return struct.unpack_from(e + "I", self.data, p)[0] if datasz == 4 else None
                    if ptype > GNU_PROPERTY_X86_ISA_1_NEEDED:  # (ascending order)
                        return None
                    p += -(-datasz // word) * word
                return None
            pos = nxt
        return None

    def textrel(self) -> bool:
        """DT_TEXTREL, or DF_TEXTREL in DT_FLAGS (``Slice.textrel``)."""
        return any(tag == DT_TEXTREL or (tag == DT_FLAGS and val & DF_TEXTREL) for tag, val in self.dyn)

    def debug_bytes(self) -> int:
        """The bytes of the non-allocated ``.debug_*`` / ``.zdebug_*`` sections, when
        ``.debug_info`` is among them (full debug info; ``Slice.debug_bytes``); else 0. Reads the
        section names only when some non-allocated section could be one."""
        candidates = [sec for sec in self.sections if not sec[2] & SHF_ALLOC and sec[1] != SHT_NOBITS and sec[5]]
        if not candidates or not 0 < self.shstrndx < len(self.sections):
            return 0
        names_sec = self.sections[self.shstrndx]
        if names_sec[1] == SHT_NOBITS:
            return 0
        try:
            names = self.take(names_sec[4], names_sec[5], "section name table (e_shstrndx)")
        except MalformedBinary as exc:  # (the loader never reads section names: a note, not WA001)
            self.notes.append(f"section names unreadable, debug info not measured: {exc}")
            return 0
        total, full = 0, False
        for sec in candidates:
            if sec[0] >= len(names):
                continue
            end = names.find(b"\0", sec[0])
            name = names[sec[0] : end if end >= 0 else len(names)]
            if name.startswith((b".debug_", b".zdebug_")):
                total += sec[5]
                full = full or name in (b".debug_info", b".zdebug_info")
        return total if full else 0

    # ---- everything -----------------------------------------------------------------------
    def read(self, needles: Sequence[bytes]) -> Slice:
        self.read_header()
        self.read_dynamic()
        kind: Kind
        if self.e_type == ET_REL:
            kind = "object"
        elif self.e_type == ET_EXEC or any(s[0] == PT_INTERP for s in self.segments):
            kind = "executable"
        else:
            kind = "shared"
        identity = None
        deps: list[Dependency] = []
        rpaths: list[Rpath] = []
        for tag, val in self.dyn:
            if tag == DT_NEEDED:
                deps.append(Dependency(self.dyn_string(val, "DT_NEEDED"), "needed"))
            elif tag == DT_RPATH or tag == DT_RUNPATH:
                kind_ = "rpath" if tag == DT_RPATH else "runpath"
                for entry in self.dyn_string(val, f"DT_{kind_.upper()}").split(":"):
                    rpaths.append(Rpath(entry, kind_))  # empty entries kept: they are findings
        if DT_SONAME in self.tags:
            identity = self.dyn_string(self.tags[DT_SONAME], "DT_SONAME")
        version_index, needs = self.read_versions() if self.dyn else ({}, [])
        exports, imports = self.read_dynsym(version_index)
        local_syms = self.read_symtab()
        arm_arch, float_abi = self.arm_facts() if self.e_machine == EM_ARM else (None, None)
        arch = arm_arch or _arch(self.e_machine, self.is64, self.little)
        return Slice(
            arch=arch,
            kind=kind,
            identity=identity,
            dependencies=deps,
            rpaths=rpaths,
            needs_versions=needs,
            import_versions=self.import_versions,
            weak_imports=self.weak_imports,
            float_abi=float_abi,
            stripped=local_syms is None,
            exports=exports,
            imports=imports,
            locals=local_syms or [],
            strings=find_strings(self.data, needles),
            offset=0,
            size=self.size,
            notes=self.notes,
            exec_stack=self.exec_stack(kind, arch),
            textrel=self.textrel(),
            debug_bytes=self.debug_bytes(),
            x86_isa_needed=self.x86_isa_needed() if self.e_machine in (EM_386, EM_X86_64) else None,
        )
