"""The numbers of the ELF format (the System V gABI, the GNU extensions, the machines' supplements)
that the reader uses."""

from __future__ import annotations

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
#: the tags of which the dynamic table holds one (a second one is a note)
SINGLE_TAGS = {
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

EM_386, EM_PPC, EM_PPC64, EM_S390, EM_ARM = 3, 20, 21, 22, 40
EM_X86_64, EM_AARCH64, EM_RISCV, EM_LOONGARCH = 62, 183, 243, 258
EM_MIPS = 8
#: machines with no wheel platform tag, named in words (never "em_N" in a message)
OTHER_MACHINES = {
    2: "sparc", 4: "m68k", 15: "hppa", 18: "sparc32plus", 42: "superh", 43: "sparc64", 50: "ia64",
    75: "vax", 76: "cris", 92: "openrisc", 94: "xtensa", 106: "blackfin", 164: "hexagon", 247: "bpf",
    0x9026: "alpha",
}
# ARM: EF_ARM_ABI_FLOAT_* of e_flags (EABI 5); the .ARM.attributes section; its tags
EF_ARM_ABI_FLOAT_SOFT, EF_ARM_ABI_FLOAT_HARD = 0x200, 0x400
SHT_ARM_ATTRIBUTES = 0x70000003
TAG_CPU_ARCH, TAG_ABI_VFP_ARGS = 6, 28
