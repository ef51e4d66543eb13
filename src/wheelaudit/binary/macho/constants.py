"""The numbers of the Mach-O format (``<mach-o/fat.h>``, ``<mach-o/loader.h>``,
``<mach-o/nlist.h>``) that the reader uses."""

from __future__ import annotations

from wheelaudit.model.binary import Kind

# ---- <mach-o/fat.h> -------------------------------------------------------------------------
FAT_MAGIC = 0xCAFEBABE
FAT_MAGIC_64 = 0xCAFEBABF
#: more slices than any real universal binary has (there are about 20 Mach-O architectures)
MAX_FAT_ARCHS = 64
AR_MAGIC = b"!<arch>\n"

# ---- <mach-o/loader.h> ----------------------------------------------------------------------
THIN_MAGICS = {
    b"\xfe\xed\xfa\xce": (">", False),  # MH_MAGIC, big-endian (ppc)
    b"\xce\xfa\xed\xfe": ("<", False),  # MH_CIGAM as read on a little-endian host
    b"\xfe\xed\xfa\xcf": (">", True),  # MH_MAGIC_64, big-endian (ppc64)
    b"\xcf\xfa\xed\xfe": ("<", True),  # every modern macOS binary
}
FAT_MAGIC_BYTES = (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf")

#: real images carry a few dozen load commands; ld64 pads to at most a few thousand
MAX_NCMDS = 1 << 16

MH_OBJECT, MH_EXECUTE, MH_DYLIB, MH_BUNDLE, MH_DYLIB_STUB, MH_DSYM = 0x1, 0x2, 0x6, 0x8, 0x9, 0xA
FILE_KINDS: dict[int, Kind] = {
    MH_OBJECT: "object",
    MH_EXECUTE: "executable",
    MH_DYLIB: "shared",
    MH_DYLIB_STUB: "shared",
    MH_BUNDLE: "bundle",
    MH_DSYM: "dsym",
}

LC_REQ_DYLD = 0x80000000
LC_SEGMENT = 0x1
LC_SYMTAB = 0x2
LC_DYSYMTAB = 0xB
LC_LOAD_DYLIB = 0xC
LC_ID_DYLIB = 0xD
LC_SEGMENT_64 = 0x19
LC_CODE_SIGNATURE = 0x1D
LC_SEGMENT_SPLIT_INFO = 0x1E
LC_LAZY_LOAD_DYLIB = 0x20
LC_DYLD_INFO = 0x22
LC_VERSION_MIN_MACOSX = 0x24
LC_VERSION_MIN_IPHONEOS = 0x25
LC_FUNCTION_STARTS = 0x26
LC_DATA_IN_CODE = 0x29
LC_DYLIB_CODE_SIGN_DRS = 0x2B
LC_LINKER_OPTIMIZATION_HINT = 0x2E
LC_VERSION_MIN_TVOS = 0x2F
LC_VERSION_MIN_WATCHOS = 0x30
LC_BUILD_VERSION = 0x32
LC_ATOM_INFO = 0x36
LC_LOAD_WEAK_DYLIB = 0x18 | LC_REQ_DYLD
LC_RPATH = 0x1C | LC_REQ_DYLD
LC_REEXPORT_DYLIB = 0x1F | LC_REQ_DYLD
LC_DYLD_INFO_ONLY = 0x22 | LC_REQ_DYLD
LC_LOAD_UPWARD_DYLIB = 0x23 | LC_REQ_DYLD
LC_DYLD_EXPORTS_TRIE = 0x33 | LC_REQ_DYLD
LC_DYLD_CHAINED_FIXUPS = 0x34 | LC_REQ_DYLD

LC_NAMES = {
    LC_SEGMENT: "LC_SEGMENT",
    LC_SYMTAB: "LC_SYMTAB",
    LC_DYSYMTAB: "LC_DYSYMTAB",
    LC_LOAD_DYLIB: "LC_LOAD_DYLIB",
    LC_ID_DYLIB: "LC_ID_DYLIB",
    LC_SEGMENT_64: "LC_SEGMENT_64",
    LC_CODE_SIGNATURE: "LC_CODE_SIGNATURE",
    LC_SEGMENT_SPLIT_INFO: "LC_SEGMENT_SPLIT_INFO",
    LC_LAZY_LOAD_DYLIB: "LC_LAZY_LOAD_DYLIB",
    LC_DYLD_INFO: "LC_DYLD_INFO",
    LC_VERSION_MIN_MACOSX: "LC_VERSION_MIN_MACOSX",
    LC_VERSION_MIN_IPHONEOS: "LC_VERSION_MIN_IPHONEOS",
    LC_FUNCTION_STARTS: "LC_FUNCTION_STARTS",
    LC_DATA_IN_CODE: "LC_DATA_IN_CODE",
    LC_DYLIB_CODE_SIGN_DRS: "LC_DYLIB_CODE_SIGN_DRS",
    LC_LINKER_OPTIMIZATION_HINT: "LC_LINKER_OPTIMIZATION_HINT",
    LC_VERSION_MIN_TVOS: "LC_VERSION_MIN_TVOS",
    LC_VERSION_MIN_WATCHOS: "LC_VERSION_MIN_WATCHOS",
    LC_BUILD_VERSION: "LC_BUILD_VERSION",
    LC_ATOM_INFO: "LC_ATOM_INFO",
    LC_LOAD_WEAK_DYLIB: "LC_LOAD_WEAK_DYLIB",
    LC_RPATH: "LC_RPATH",
    LC_REEXPORT_DYLIB: "LC_REEXPORT_DYLIB",
    LC_DYLD_INFO_ONLY: "LC_DYLD_INFO_ONLY",
    LC_LOAD_UPWARD_DYLIB: "LC_LOAD_UPWARD_DYLIB",
    LC_DYLD_EXPORTS_TRIE: "LC_DYLD_EXPORTS_TRIE",
    LC_DYLD_CHAINED_FIXUPS: "LC_DYLD_CHAINED_FIXUPS",
}

DEPENDENCY_KINDS = {
    LC_LOAD_DYLIB: "load",
    LC_LOAD_WEAK_DYLIB: "weak",
    LC_REEXPORT_DYLIB: "reexport",
    LC_LOAD_UPWARD_DYLIB: "upward",
    LC_LAZY_LOAD_DYLIB: "lazy",
}
VERSION_MIN = {
    LC_VERSION_MIN_MACOSX: "macos",
    LC_VERSION_MIN_IPHONEOS: "ios",
    LC_VERSION_MIN_TVOS: "tvos",
    LC_VERSION_MIN_WATCHOS: "watchos",
}
#: linkedit_data_command users: (dataoff, datasize) must lie inside the image
LINKEDIT_DATA = {
    LC_CODE_SIGNATURE,
    LC_SEGMENT_SPLIT_INFO,
    LC_FUNCTION_STARTS,
    LC_DATA_IN_CODE,
    LC_DYLIB_CODE_SIGN_DRS,
    LC_LINKER_OPTIMIZATION_HINT,
    LC_DYLD_CHAINED_FIXUPS,
    LC_ATOM_INFO,
}
PLATFORMS = {1: "macos", 2: "ios", 3: "tvos", 4: "watchos", 5: "bridgeos", 6: "maccatalyst",
              7: "ios-simulator", 8: "tvos-simulator", 9: "watchos-simulator", 10: "driverkit",
              11: "visionos", 12: "visionos-simulator"}

S_ATTR_PURE_INSTRUCTIONS = 0x80000000
S_ATTR_SOME_INSTRUCTIONS = 0x00000400
CODE_FLAGS = S_ATTR_PURE_INSTRUCTIONS | S_ATTR_SOME_INSTRUCTIONS

# ---- <mach-o/nlist.h> -----------------------------------------------------------------------
N_STAB = 0xE0
N_PEXT = 0x10
N_TYPE = 0x0E
N_EXT = 0x01
N_UNDF, N_ABS, N_INDR, N_PBUD, N_SECT = 0x0, 0x2, 0xA, 0xC, 0xE
N_WEAK_DEF = 0x0080
N_WEAK_REF = 0x0040  # an undefined symbol dyld leaves null when its library lacks it
MH_TWOLEVEL = 0x80  # two-level namespace: each import's n_desc names its library (GET_LIBRARY_ORDINAL)
# library ordinals that name no LC_*_DYLIB (<mach-o/nlist.h>)
SELF_LIBRARY_ORDINAL, DYNAMIC_LOOKUP_ORDINAL, EXECUTABLE_ORDINAL = 0x0, 0xFE, 0xFF

# ---- export trie (<mach-o/loader.h>) --------------------------------------------------------
EXPORT_SYMBOL_FLAGS_KIND_MASK = 0x03
EXPORT_SYMBOL_FLAGS_KIND_THREAD_LOCAL = 0x01
EXPORT_SYMBOL_FLAGS_KIND_ABSOLUTE = 0x02
EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION = 0x04
EXPORT_SYMBOL_FLAGS_REEXPORT = 0x08
EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER = 0x10
#: deeper than any real trie (a level needs a branching point or a terminal on the path)
MAX_TRIE_DEPTH = 4096
#: longest symbol name accepted from the trie
MAX_NAME = 1 << 20
