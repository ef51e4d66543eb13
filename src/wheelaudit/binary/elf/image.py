"""The ELF header, the section and program headers, and the address mapping (a virtual address
to the file offset the loader maps it from), with bounds-checked access to the file."""

from __future__ import annotations

import struct

from wheelaudit.binary import Buffer, MalformedBinary
from wheelaudit.binary.budget import Budget
from wheelaudit.binary.elf.constants import (
    EM_386,
    EM_AARCH64,
    EM_ARM,
    EM_LOONGARCH,
    EM_MIPS,
    EM_PPC,
    EM_PPC64,
    EM_RISCV,
    EM_S390,
    EM_X86_64,
    ET_CORE,
    ET_DYN,
    ET_EXEC,
    ET_REL,
    MIN_PAGE,
    OTHER_MACHINES,
    PT_GNU_PROPERTY,
    PT_GNU_STACK,
    PT_LOAD,
    PT_NOTE,
    SHT_NOBITS,
)


def arch_name(machine: int, is64: bool, little: bool) -> str:
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
    if machine in OTHER_MACHINES:
        return OTHER_MACHINES[machine]
    return f"unknown machine (ELF e_machine {machine})"


class Image:
    """One ELF file's bytes: bounds-checked access, the ELF header, the section and program
    headers, virtual addresses mapped to file offsets as the loader maps them, string tables."""

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
