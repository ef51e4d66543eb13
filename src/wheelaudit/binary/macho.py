"""Mach-O reader: thin (32/64-bit, either endianness) and universal (``FAT_MAGIC``/``FAT_MAGIC_64``).

Reads only what the facts need, straight from the buffer with :mod:`struct` (no subprocess, no
third-party parser, no copy of the whole file): the header, the load commands, the symbol table
and the dyld export trie. Everything is bounds-checked against the image (a fat slice is read
within its own ``[offset, offset + size)``); anything that does not fit raises
:class:`~wheelaudit.binary.MalformedBinary` with the reason.

What goes where:

* ``exports``: the dyld export trie (``LC_DYLD_EXPORTS_TRIE``, else ``LC_DYLD_INFO[_ONLY]``) when
  the image has one, even an empty one (that is what dyld sees); re-exports are left out and
  counted in ``Slice.notes``. Without a trie (object files, pre-10.6 images): the ``N_EXT``, not
  ``N_PEXT``, defined (``N_SECT``/``N_ABS``, or common) nlist entries. ``type`` is "func" when the
  address lies in a section with instructions, else "data" (thread-locals, absolutes included).
* ``imports``: ``N_EXT`` undefined nlist entries (not commons), deduplicated, in table order.
* ``locals``: defined nlist entries that are not ``N_EXT`` or are ``N_PEXT``, debug stabs excluded.
* ``min_os``/``sdk``: the macOS ``LC_BUILD_VERSION`` if there is one (else the first), else
  ``LC_VERSION_MIN_*``; a non-macOS deployment target is noted.
* a debug companion (``MH_DSYM``, what ``dsymutil`` writes under ``*.dSYM/``) is a "dsym" slice:
  no code signature is read and its symbol table, a copy of its binary's, gives no symbols.
* a fat slice holding a static archive (a universal ``.a``) is returned as an "object" slice with
  a note; its members are not read.

Reference: ``<mach-o/loader.h>``, ``<mach-o/nlist.h>``, ``<mach-o/fat.h>`` and dyld's
``MachOLoaded::trieWalk`` / LLVM's ``MachOObjectFile`` for the export trie.
"""

from __future__ import annotations

import dataclasses
import struct
import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence

from itertools import accumulate, repeat

from wheelaudit.binary import symbols as _symbols
from wheelaudit.model.binary import MACHO_EXECUTABLE, MACHO_FLAT, MACHO_SELF, Dependency, Kind, Rpath, Slice, Symbol, make_symbol
from wheelaudit.binary.demangle import demangle
from wheelaudit.binary import Buffer, MalformedBinary, find_strings
from wheelaudit.binary import _columns as _C
from wheelaudit.binary.budget import Budget

__all__ = ["parse", "arch_name"]

# ---- <mach-o/fat.h> -------------------------------------------------------------------------
FAT_MAGIC = 0xCAFEBABE
FAT_MAGIC_64 = 0xCAFEBABF
#: more slices than any real universal binary has (there are about 20 Mach-O architectures)
MAX_FAT_ARCHS = 64
AR_MAGIC = b"!<arch>\n"

# ---- <mach-o/loader.h> ----------------------------------------------------------------------
_THIN_MAGICS = {
    b"\xfe\xed\xfa\xce": (">", False),  # MH_MAGIC, big-endian (ppc)
    b"\xce\xfa\xed\xfe": ("<", False),  # MH_CIGAM as read on a little-endian host
    b"\xfe\xed\xfa\xcf": (">", True),  # MH_MAGIC_64, big-endian (ppc64)
    b"\xcf\xfa\xed\xfe": ("<", True),  # every modern macOS binary
}
_FAT_MAGIC_BYTES = (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf")

#: real images carry a few dozen load commands; ld64 pads to at most a few thousand
MAX_NCMDS = 1 << 16

MH_OBJECT, MH_EXECUTE, MH_DYLIB, MH_BUNDLE, MH_DYLIB_STUB, MH_DSYM = 0x1, 0x2, 0x6, 0x8, 0x9, 0xA
_KINDS: dict[int, Kind] = {
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

_LC_NAMES = {
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

_DEPENDENCY_KINDS = {
    LC_LOAD_DYLIB: "load",
    LC_LOAD_WEAK_DYLIB: "weak",
    LC_REEXPORT_DYLIB: "reexport",
    LC_LOAD_UPWARD_DYLIB: "upward",
    LC_LAZY_LOAD_DYLIB: "lazy",
}
_VERSION_MIN = {
    LC_VERSION_MIN_MACOSX: "macos",
    LC_VERSION_MIN_IPHONEOS: "ios",
    LC_VERSION_MIN_TVOS: "tvos",
    LC_VERSION_MIN_WATCHOS: "watchos",
}
#: linkedit_data_command users: (dataoff, datasize) must lie inside the image
_LINKEDIT_DATA = {
    LC_CODE_SIGNATURE,
    LC_SEGMENT_SPLIT_INFO,
    LC_FUNCTION_STARTS,
    LC_DATA_IN_CODE,
    LC_DYLIB_CODE_SIGN_DRS,
    LC_LINKER_OPTIMIZATION_HINT,
    LC_DYLD_CHAINED_FIXUPS,
    LC_ATOM_INFO,
}
_PLATFORMS = {1: "macos", 2: "ios", 3: "tvos", 4: "watchos", 5: "bridgeos", 6: "maccatalyst",
              7: "ios-simulator", 8: "tvos-simulator", 9: "watchos-simulator", 10: "driverkit",
              11: "visionos", 12: "visionos-simulator"}

S_ATTR_PURE_INSTRUCTIONS = 0x80000000
S_ATTR_SOME_INSTRUCTIONS = 0x00000400
_CODE = S_ATTR_PURE_INSTRUCTIONS | S_ATTR_SOME_INSTRUCTIONS

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


# ---- CPU types (<mach/machine.h>) -----------------------------------------------------------
CPU_ARCH_ABI64 = 0x01000000
CPU_ARCH_ABI64_32 = 0x02000000
CPU_TYPE_X86 = 7
CPU_TYPE_ARM = 12
CPU_TYPE_POWERPC = 18
CPU_TYPE_X86_64 = CPU_TYPE_X86 | CPU_ARCH_ABI64
CPU_TYPE_ARM64 = CPU_TYPE_ARM | CPU_ARCH_ABI64
CPU_TYPE_ARM64_32 = CPU_TYPE_ARM | CPU_ARCH_ABI64_32
CPU_TYPE_POWERPC64 = CPU_TYPE_POWERPC | CPU_ARCH_ABI64
CPU_SUBTYPE_MASK = 0xFF000000  # capability bits (e.g. arm64e's pointer-auth ABI version)
_ARM_SUBTYPES = {5: "armv4t", 6: "armv6", 7: "armv5", 9: "armv7", 11: "armv7s", 12: "armv7k",
                 14: "armv6m", 15: "armv7m", 16: "armv7em"}


def arch_name(cputype: int, cpusubtype: int) -> str:
    """The architecture name (as ``lipo`` spells the family) of a cputype/cpusubtype pair."""
    cputype &= 0xFFFFFFFF
    sub = cpusubtype & ~CPU_SUBTYPE_MASK & 0xFFFFFFFF
    if cputype == CPU_TYPE_ARM64:
        if sub == 2:
            return "arm64e"
        if sub in (0, 1):  # CPU_SUBTYPE_ARM64_ALL, _V8
            return "arm64"
    elif cputype == CPU_TYPE_X86_64:
        return "x86_64h" if sub == 8 else "x86_64"
    elif cputype == CPU_TYPE_X86:
        return "i386"
    elif cputype == CPU_TYPE_ARM64_32:
        return "arm64_32"
    elif cputype == CPU_TYPE_ARM:
        if sub in _ARM_SUBTYPES:
            return _ARM_SUBTYPES[sub]
    elif cputype == CPU_TYPE_POWERPC:
        return "ppc"
    elif cputype == CPU_TYPE_POWERPC64:
        return "ppc64"
    return f"cpu_{cputype}_{sub}"


def _version(v: int) -> str:
    x, y, z = v >> 16, (v >> 8) & 0xFF, v & 0xFF
    return f"{x}.{y}.{z}" if z else f"{x}.{y}"


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def _undecorate(raw: bytes) -> str:
    """A Mach-O symbol name less its leading underscore (names without one stay as they are)."""
    return (raw[1:] if raw[:1] == b"_" else raw).decode("utf-8", "backslashreplace")


def _uleb(buf: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    """Decode one ULEB128 from ``buf[pos:end]``; return (value, position after it)."""
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise MalformedBinary(f"{what}: truncated ULEB128 at offset {pos}")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result >> 64:
                raise MalformedBinary(f"{what}: ULEB128 value does not fit in 64 bits")
            return result, pos
        shift += 7
        if shift >= 70:
            raise MalformedBinary(f"{what}: overlong ULEB128 (more than 10 bytes) at offset {pos - 10}")



# the fast path's byte tables (_Image.fast_symtab, read_trie)
_LOCAL_TYPE = _C.table(lambda t: not t & N_STAB and (t & N_TYPE) in (N_SECT, N_ABS)
                       and not (t & N_EXT and not t & N_PEXT))
_IS_SECT = _C.table(lambda t: (t & N_TYPE) == N_SECT)
_IS_ABS = _C.table(lambda t: (t & N_TYPE) == N_ABS)
_MAYBE_IMPORT = _C.table(lambda t: not t & N_STAB and (t & N_TYPE) in (N_UNDF, N_PBUD) and bool(t & N_EXT))
_LOCAL_CODES = _C.table(lambda v: _symbols.symbol_code("local", "data" if v else "func") if v < 2 else 0)
_EXPORT_CODES = ((_symbols.symbol_code("global", "data"), _symbols.symbol_code("global", "func")),
                 (_symbols.symbol_code("weak", "data"), _symbols.symbol_code("weak", "func")))

# the export trie's fast path (_walk_trie, _Image.lane_codes). A terminal it decodes in bulk is kept as
# its first 1 + size bytes, a "lane" once zero-padded to 8: size (1..7), flags (one byte, neither
# re-export nor stub-and-resolver), the address (an ULEB128 that must fill the rest exactly)
_LANE_FLAGS_SLOW = 0x80 | EXPORT_SYMBOL_FLAGS_REEXPORT | EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER
_LANE_PLACEHOLDER = b"\x02\x00\x00"  # (a valid lane for address 0) of a terminal decoded one by one
_HIGH_BIT = bytes(b >> 7 for b in range(256))
#: _CONT_AT[j][size]: 1 where byte j (2..7) of a lane must have the continuation bit (size 1: no
#: address at all, never valid)
_CONT_AT = [bytes(1 if size == 1 else int(j < size) for size in range(256)) for j in range(8)]
#: export code by (address in a section with instructions) << 3 | (flags & 7)
_CODE_BY_KEY = bytes(_EXPORT_CODES[bool(key & EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION)]
                     [bool(key & 8 and not key & EXPORT_SYMBOL_FLAGS_KIND_MASK)] for key in range(16)) + bytes(240)


class _Demangler(dict):
    """``demangle`` memoised for one file: the slices of a universal binary share names; within
    the run's ``budget`` (names that could explode)."""

    def __init__(self, budget: Budget | None = None) -> None:
        super().__init__()
        self.budget = budget

    def __call__(self, name: str) -> str:
        if not name.startswith("_Z"):
            return name
        demangled = self.get(name)
        if demangled is None:
            demangled = self[name] = demangle(name, self.budget)
        return demangled


# ---- entry point ----------------------------------------------------------------------------
def parse(data: Buffer, needles: Sequence[bytes] = (), budget: Budget | None = None, *,
          with_signature: bool = True) -> list[Slice]:
    """Facts of each architecture of a Mach-O file, in file (fat header) order. ``budget``: the
    run's, which names that could explode are demangled within; without ``with_signature`` the
    code signatures are not verified."""
    size = len(data)
    if size < 4:
        raise MalformedBinary(f"truncated Mach-O file ({size} bytes)")
    magic = bytes(data[:4])
    if magic in _FAT_MAGIC_BYTES:
        return _parse_fat(data, size, magic == _FAT_MAGIC_BYTES[1], needles, _Demangler(budget), with_signature)
    return [_Image(data, 0, size, "", _Demangler(budget)).parse(needles, with_signature=with_signature)]


def _parse_fat(data: Buffer, size: int, is64: bool, needles: Sequence[bytes],
               demangler: _Demangler, with_signature: bool = True) -> list[Slice]:
    kind = "fat64" if is64 else "fat"
    if size < 8:
        raise MalformedBinary(f"truncated {kind} header ({size} bytes, need 8)")
    (nfat,) = struct.unpack_from(">I", data, 4)
    if nfat == 0:
        raise MalformedBinary(f"{kind} header lists no architectures")
    if nfat > MAX_FAT_ARCHS:
        raise MalformedBinary(f"{kind} header lists {nfat} architectures (more than {MAX_FAT_ARCHS})")
    entsize = 32 if is64 else 20
    fmt = ">iiQQII" if is64 else ">iiIII"
    header_end = 8 + nfat * entsize
    if header_end > size:
        raise MalformedBinary(
            f"{kind} header with {nfat} architectures needs {header_end} bytes, file has {size}")
    entries = []
    for i in range(nfat):
        cputype, cpusubtype, offset, length = struct.unpack_from(fmt, data, 8 + i * entsize)[:4]
        arch = arch_name(cputype, cpusubtype)
        where = f"fat slice {i} ({arch})"
        if length == 0:
            raise MalformedBinary(f"{where} is empty (size 0)")
        if offset < header_end:
            raise MalformedBinary(
                f"{where} at offset {offset} overlaps the fat header (which ends at {header_end})")
        if offset + length > size:
            raise MalformedBinary(
                f"{where} [{offset}, {offset + length}) runs past the end of the file ({size} bytes)")
        entries.append((offset, length, arch, where))
    ordered = sorted(entries)
    for (a_off, a_len, _, a_where), (b_off, _, _, b_where) in zip(ordered, ordered[1:]):
        if a_off + a_len > b_off:
            raise MalformedBinary(f"{a_where} [{a_off}, {a_off + a_len}) overlaps {b_where} (at {b_off})")
    slices = []
    seen: set[str] = set()
    for offset, length, fat_arch, where in entries:
        if bytes(data[offset : offset + 8]) == AR_MAGIC:
            # a universal static library (lipo of .a files): not a loadable image
            s = Slice(arch=fat_arch, kind="object", offset=offset, size=length,
                      notes=["static archive (ar) slice: its members are not read"])
            s.strings = find_strings(data, needles, offset, offset + length)
        else:  # (a slice that is itself fat is refused there: "nested fat binary")
            s = _Image(data, offset, length, where + ": ", demangler).parse(needles, with_signature=with_signature)
            if s.arch != fat_arch:
                s.notes.append(f"fat header says {fat_arch}, the slice's own header says {s.arch}")
        if s.arch in seen:
            s.notes.append(f"architecture {s.arch} appears in more than one slice")
        seen.add(s.arch)
        slices.append(s)
    return slices


class _Image:
    """One Mach-O image: ``data[base : base + size]``; every offset inside is relative to ``base``."""

    def __init__(self, data: Buffer, base: int, size: int, where: str, demangler: _Demangler) -> None:
        self.demangle = demangler
        self.data = data
        self.base = base
        self.size = size
        self.where = where  # prefix of error messages ("fat slice 1 (x86_64): ")

    def bad(self, reason: str) -> MalformedBinary:
        return MalformedBinary(self.where + reason)

    def check_range(self, off: int, length: int, what: str) -> None:
        if length and off + length > self.size:
            raise self.bad(
                f"{what} [{off}, {off + length}) runs past the end of the image ({self.size} bytes)")

    # ---- the header and load commands --------------------------------------------------------
    def parse(self, needles: Sequence[bytes], *, with_signature: bool = True) -> Slice:
        """The slice's facts; without ``with_signature`` the code signature is not verified
        (``signature`` left None)."""
        data, base, size = self.data, self.base, self.size
        if size < 4:
            raise self.bad(f"truncated Mach-O header ({size} bytes)")
        magic = bytes(data[base : base + 4])
        if magic in _FAT_MAGIC_BYTES:
            raise self.bad("nested fat binary")
        if magic not in _THIN_MAGICS:
            raise self.bad(f"not a Mach-O image (magic {magic.hex()})")
        e, is64 = _THIN_MAGICS[magic]
        self.e = e
        self.is64 = is64
        header_size = 32 if is64 else 28
        if size < header_size:
            raise self.bad(f"truncated Mach-O header ({size} bytes, need {header_size})")
        cputype, cpusubtype, filetype, ncmds, sizeofcmds, mh_flags = struct.unpack_from(e + "IIIIII", data, base + 4)
        s = Slice(arch=arch_name(cputype, cpusubtype), kind=_KINDS.get(filetype, "shared"),
                  offset=base, size=size)
        if ncmds > MAX_NCMDS:
            raise self.bad(f"header claims {ncmds} load commands (more than {MAX_NCMDS})")
        if sizeofcmds > size - header_size:
            raise self.bad(f"load commands (sizeofcmds {sizeofcmds}) run past the end of the image "
                           f"({size - header_size} bytes after the header)")
        if ncmds * 8 > sizeofcmds:
            raise self.bad(f"{ncmds} load commands cannot fit in sizeofcmds {sizeofcmds}")

        sections: list[tuple[int, int, int]] = []  # (addr, size, flags), in n_sect order
        image_base: int | None = None
        symtab = None
        info_trie = None  # (offset, size) of the export trie from LC_DYLD_INFO[_ONLY]
        exports_trie = None  # ... from LC_DYLD_EXPORTS_TRIE (chained-fixups images)
        builds: list[tuple[int, int, int]] = []  # LC_BUILD_VERSION (platform, minos, sdk)
        version_min: tuple[str, int, int] | None = None
        segments: list[tuple[str, int, int]] = []  # (name, fileoff, filesize), for the signature's evidence
        code_sig: tuple[int, int] | None = None  # LC_CODE_SIGNATURE (dataoff, datasize)
        debug_bytes = 0  # __DWARF

        off = base + header_size
        lc_end = off + sizeofcmds
        for i in range(ncmds):
            if off + 8 > lc_end:
                raise self.bad(f"load command {i} runs past sizeofcmds ({sizeofcmds})")
            cmd, cmdsize = struct.unpack_from(e + "II", data, off)
            name = _LC_NAMES.get(cmd, f"cmd 0x{cmd:x}")
            what = f"load command {i} ({name})"
            if cmdsize < 8:
                raise self.bad(f"{what} has cmdsize {cmdsize} (less than 8)")
            if cmdsize % 4:
                raise self.bad(f"{what} has cmdsize {cmdsize}, not a multiple of 4")
            if off + cmdsize > lc_end:
                raise self.bad(f"{what} with cmdsize {cmdsize} runs past sizeofcmds ({sizeofcmds})")

            if cmd == LC_SEGMENT_64 or cmd == LC_SEGMENT:
                wide = cmd == LC_SEGMENT_64
                head, sect, seg_fmt, sect_fmt = (72, 80, "16sQQQQiiII", "16s16sQQIIIIIIII") if wide \
                    else (56, 68, "16sIIIIiiII", "16s16sIIIIIIIII")
                self.need(cmdsize, head, what)
                segname, vmaddr, _vmsize, fileoff, filesize, _mp, _ip, nsects, _fl = \
                    struct.unpack_from(e + seg_fmt, data, off + 8)
                if head + nsects * sect > cmdsize:
                    raise self.bad(f"{what}: {nsects} sections do not fit in cmdsize {cmdsize}")
                segment = _text(segname.rstrip(b"\0"))
                self.check_range(fileoff, filesize, f"{what} segment {segment!r}")
                if image_base is None and fileoff == 0 and filesize:
                    image_base = vmaddr
                segments.append((segment, fileoff, filesize))
                if segment == "__DWARF":
                    debug_bytes += filesize
                for k in range(nsects):
                    fields = struct.unpack_from(e + sect_fmt, data, off + head + k * sect)
                    sections.append((fields[2], fields[3], fields[8]))
                    if segment != "__DWARF" and fields[1].rstrip(b"\0") == b"__DWARF":
                        debug_bytes += fields[3]  # (an object file: one unnamed segment)
            elif cmd in _DEPENDENCY_KINDS or cmd == LC_ID_DYLIB:
                self.need(cmdsize, 24, what)
                lib = self.lc_str(off, cmdsize, 24, what)
                if cmd == LC_ID_DYLIB:
                    if s.identity is None:
                        s.identity = lib
                    else:
                        s.notes.append(f"more than one LC_ID_DYLIB; using {s.identity!r}")
                else:
                    s.dependencies.append(Dependency(lib, _DEPENDENCY_KINDS[cmd]))  # type: ignore[arg-type]
            elif cmd == LC_RPATH:
                self.need(cmdsize, 12, what)
                s.rpaths.append(Rpath(self.lc_str(off, cmdsize, 12, what), "lc_rpath"))
            elif cmd == LC_SYMTAB:
                self.need(cmdsize, 24, what)
                if symtab is not None:
                    raise self.bad("more than one LC_SYMTAB")
                symtab = struct.unpack_from(e + "IIII", data, off + 8)
            elif cmd == LC_DYLD_INFO or cmd == LC_DYLD_INFO_ONLY:
                self.need(cmdsize, 48, what)
                info = struct.unpack_from(e + "10I", data, off + 8)
                for part, (o, n) in zip(("rebase", "bind", "weak bind", "lazy bind", "export trie"),
                                        zip(info[0::2], info[1::2])):
                    self.check_range(o, n, f"{what} {part}")
                if info_trie is None:
                    info_trie = (info[8], info[9])
            elif cmd == LC_DYLD_EXPORTS_TRIE:
                self.need(cmdsize, 16, what)
                o, n = struct.unpack_from(e + "II", data, off + 8)
                self.check_range(o, n, f"{what} data")
                if exports_trie is None:
                    exports_trie = (o, n)
            elif cmd in _LINKEDIT_DATA:
                self.need(cmdsize, 16, what)
                o, n = struct.unpack_from(e + "II", data, off + 8)
                self.check_range(o, n, f"{what} data")
                if cmd == LC_CODE_SIGNATURE and code_sig is None:
                    code_sig = (o, n)
            elif cmd == LC_BUILD_VERSION:
                self.need(cmdsize, 24, what)
                platform, minos, sdk, ntools = struct.unpack_from(e + "IIII", data, off + 8)
                if 24 + ntools * 8 > cmdsize:
                    raise self.bad(f"{what}: {ntools} tool entries do not fit in cmdsize {cmdsize}")
                builds.append((platform, minos, sdk))
            elif cmd in _VERSION_MIN:
                self.need(cmdsize, 16, what)
                if version_min is None:
                    v, sdk = struct.unpack_from(e + "II", data, off + 8)
                    version_min = (_VERSION_MIN[cmd], v, sdk)
            off += cmdsize

        # ---- deployment target -------------------------------------------------------------
        platform_name = None
        if builds:
            platform, minos, sdk = next((b for b in builds if b[0] == 1), builds[0])
            platform_name = _PLATFORMS.get(platform, f"platform {platform}")
            s.min_os, s.sdk = _version(minos), (_version(sdk) if sdk else None)
            s.min_os_command = "LC_BUILD_VERSION"
        elif version_min is not None:
            platform_name, minos, sdk = version_min
            s.min_os, s.sdk = _version(minos), (_version(sdk) if sdk else None)
            s.min_os_command = next(n for c, n in _LC_NAMES.items() if _VERSION_MIN.get(c) == platform_name)
        s.platform = platform_name
        if platform_name is not None and platform_name != "macos":
            s.notes.append(f"deployment target is for {platform_name}, not macOS")

        # ---- debug info and code signature -------------------------------------------------
        s.debug_bytes = debug_bytes
        if with_signature and s.kind not in ("object", "dsym"):  # (neither is ever loaded, nor signed)
            self.read_signature(s, code_sig, segments)

        # ---- symbols -----------------------------------------------------------------------
        self.sections = sections
        self.image_base = image_base or 0
        where = exports_trie if exports_trie is not None else info_trie
        self.import_desc: dict[str, int] = {}
        fallback_exports = self.read_symtab(symtab, s, collect_exports=where is None)
        if self.import_desc:
            self.bind_imports(s, bool(mh_flags & MH_TWOLEVEL))
        if where is not None:
            s.exports = self.read_trie(where[0], where[1], s.notes)
        else:
            s.exports = fallback_exports
        if s.kind == "dsym":
            # a debug companion's symbol table is a copy of its binary's, for the debugger: read as
            # this file's own, each of its names would have a second definer that nothing can bind
            copied = len(s.exports) + len(s.imports) + len(s.locals)
            s.exports, s.imports, s.locals, s.weak_imports, s.imports_from = [], [], [], [], {}
            s.notes.append(f"debug companion (MH_DSYM): never loaded; the {copied} symbols of its table "
                           f"are its binary's, not read as its own")
        s.stripped = not s.locals
        s.strings = find_strings(data, needles, base, base + size)
        return s

    def read_signature(self, s: Slice, code_sig: tuple[int, int] | None,
                       segments: list[tuple[str, int, int]]) -> None:
        """``s.signature`` (and its evidence) from LC_CODE_SIGNATURE: see
        :func:`wheelaudit.binary.codesign.verify`, which needs every byte up to the code limit."""
        if code_sig is None:
            s.signature = "absent"
            return
        from wheelaudit.binary.codesign import verify

        try:
            verdict = verify(self.data, self.base, self.size, code_sig[0], code_sig[1], segments)
        except (struct.error, ValueError, IndexError, OverflowError) as exc:  # (a bound missed: never WA001)
            s.notes.append(f"code signature not verified: unreadable ({type(exc).__name__}: {exc})")
            return
        s.signature = verdict.status
        if verdict.status == "invalid":
            s.signature_detail, s.signature_page = verdict.detail, verdict.page
        elif verdict.status is None:
            s.notes.append(f"code signature not verified: {verdict.detail}")

    def need(self, cmdsize: int, minimum: int, what: str) -> None:
        if cmdsize < minimum:
            raise self.bad(f"{what} has cmdsize {cmdsize}, too small for its {minimum}-byte structure")

    def lc_str(self, lc: int, cmdsize: int, fixed: int, what: str) -> str:
        """An ``lc_str`` (offset at byte 8 of the command) inside the command, NUL-terminated."""
        (str_off,) = struct.unpack_from(self.e + "I", self.data, lc + 8)
        if str_off < fixed or str_off >= cmdsize:
            raise self.bad(f"{what}: string offset {str_off} outside [{fixed}, {cmdsize})")
        end = self.data.find(b"\0", lc + str_off, lc + cmdsize)
        if end < 0:
            raise self.bad(f"{what}: string is not NUL-terminated within the command")
        return _text(bytes(self.data[lc + str_off : end]))

    # ---- LC_SYMTAB -----------------------------------------------------------------------------
    def read_symtab(self, symtab: tuple[int, int, int, int] | None, s: Slice,
                    collect_exports: bool) -> list[Symbol]:
        """Fill ``s.imports`` and ``s.locals``; return the N_EXT definitions (the fallback exports).

        The hot loop: one ``struct.iter_unpack`` over the nlist table, names read in place with
        ``find(b"\\0")`` (no copy of the string table); external definitions are skipped without
        reading their names when the export trie is what lists the exports.
        """
        if symtab is None:
            return []
        symoff, nsyms, stroff, strsize = symtab
        entsize = 16 if self.is64 else 12
        self.check_range(symoff, nsyms * entsize, "symbol table")
        self.check_range(stroff, strsize, "string table")
        data, base = self.data, self.base
        table = bytes(data[base + symoff : base + symoff + nsyms * entsize])
        fmt = self.e + ("IBBHQ" if entsize == 16 else "IBBHI")
        str_start = base + stroff
        str_end = str_start + strsize
        find = data.find
        # per n_sect (1-based): does the section hold instructions?
        code = [False] + [bool(flags & _CODE) for _, _, flags in self.sections]
        nsects = len(self.sections)

        if not collect_exports:
            fast = self.fast_symtab(table, entsize, nsyms, str_start, str_end, code, nsects)
            if fast is not None:
                s.imports, s.locals = fast
                return []
        defined: list[tuple[bytes, str, bool]] = []  # fallback exports: (raw name, type, weak)
        local_raw: list[tuple[bytes, str]] = []
        imports: list[str] = []
        seen_imports: set[bytes] = set()
        indirect = 0
        index = -1
        at: dict[int, bytes] = {}  # name offset -> its bytes, read once (entries may share one)
        for index, (strx, n_type, n_sect, n_desc, n_value) in enumerate(struct.iter_unpack(fmt, table)):
            if n_type & N_STAB:
                continue
            t = n_type & N_TYPE
            if t == N_SECT or t == N_ABS:
                exported = n_type & N_EXT and not n_type & N_PEXT
                if exported and not collect_exports:
                    continue
                if t == N_ABS:
                    sym_type = "data"
                elif 0 < n_sect <= nsects:
                    sym_type = "func" if code[n_sect] else "data"
                else:
                    raise self.bad(f"symbol {index} refers to section {n_sect}; the image has {nsects}")
            elif t == N_UNDF or t == N_PBUD:
                if not n_type & N_EXT:
                    continue
                if t == N_UNDF and n_value != 0:  # a common symbol: a (data) definition
                    if not collect_exports or n_type & N_PEXT:
                        continue
                    exported, sym_type = True, "data"
                else:
                    exported, sym_type = None, ""  # an import
            else:
                if t == N_INDR and n_type & N_EXT and not n_type & N_PEXT:
                    indirect += 1
                continue
            # the name, read in place
            if strx:
                raw = at.get(strx)
                if raw is None:
                    if strx >= strsize:
                        raise self.bad(f"symbol {index}: name offset {strx} is past the string table "
                                       f"({strsize} bytes)")
                    name_at = str_start + strx
                    name_end = find(b"\0", name_at, str_end)
                    if name_end < 0:
                        raise self.bad(f"symbol {index}: name at string table offset {strx} is not "
                                       f"NUL-terminated (string table without terminator)")
                    raw = at[strx] = bytes(data[name_at:name_end])  # (bytes whatever ``data`` is: a key of seen_imports)
            else:
                raw = b""
            if exported is None:
                if raw not in seen_imports:
                    seen_imports.add(raw)
                    imports.append(_undecorate(raw))
                    self.import_desc[imports[-1]] = n_desc
            elif exported:
                defined.append((raw, sym_type, bool(n_desc & N_WEAK_DEF)))
            else:
                local_raw.append((raw, sym_type))
        if collect_exports and indirect:
            s.notes.append(f"{indirect} indirect (N_INDR) symbol(s) not listed as exports")
        s.imports = imports
        dm, make = self.demangle, make_symbol
        names: dict[bytes, str] = {}  # each distinct name decoded once, its str shared
        local_syms = []
        for raw, sym_type in local_raw:
            name = names.get(raw) or names.setdefault(raw, _undecorate(raw))
            local_syms.append(make(name, "local", sym_type, None, dm(name)))
        s.locals = local_syms
        exports = []
        for raw, sym_type, weak in defined:
            name = names.get(raw) or names.setdefault(raw, _undecorate(raw))
            exports.append(make(name, "weak" if weak else "global", sym_type, None, dm(name)))
        return exports

    def fast_symtab(self, table: bytes, entsize: int, nsyms: int, str_start: int, str_end: int,
                    code: list[bool], nsects: int):
        """``read_symtab`` for an image with an export trie, a column at a time (readers._columns):
        (imports, locals as a SymbolTable), or None when the loop must decide (a name offset out
        of range or 0, a bad section number, a non-ASCII string table: the loop raises or
        decodes with the reason)."""
        if nsyms == 0 or len(table) != nsyms * entsize:
            return None
        little = self.e == "<"
        n_type = _C.column(table, 4, entsize)
        n_sect = _C.column(table, 5, entsize)
        kept = n_type.translate(_LOCAL_TYPE)  # defined, not exported, not a stab
        in_sect = _C.mask_and(kept, n_type.translate(_IS_SECT))
        if 1 in _C.mask_and(in_sect, n_sect.translate(_C.table(lambda k: not 0 < k <= nsects))):
            return None  # (a section number out of range: the loop says which)
        strx = _C.u32_column(table, 0, entsize, little)
        offsets = _C.pick(strx, kept)
        strtab = bytes(self.data[str_start:str_end])
        if not strtab.isascii():
            return None
        in_order = _C.ascending(offsets)  # (as ld64 writes them: then the ends are the bounds)
        if offsets and ((offsets[0] if in_order else min(offsets)) == 0
                        or (offsets[-1] if in_order else max(offsets)) > strtab.rfind(b"\0")):
            return None
        # type: data for N_ABS, else by the section's instructions; binding local
        sect_data = n_sect.translate(bytes(int(not (0 < k <= nsects and code[k])) for k in range(256)))
        types = _C.mask_or(_C.mask_and(sect_data, n_type.translate(_IS_SECT)), n_type.translate(_IS_ABS))
        codes = _C.pick(types.translate(_LOCAL_CODES), kept)
        local_syms = _symbols.SymbolTable(strtab, offsets, codes, underscore=True, ascending=in_order)
        # imports: external undefined (not common) or prebound entries, few enough for a loop
        imports: list[str] = []
        seen: set[bytes] = set()
        vfmt = self.e + ("Q" if entsize == 16 else "I")
        find = strtab.find
        for i in _C.select(range(nsyms), n_type.translate(_MAYBE_IMPORT)):
            t = table[i * entsize + 4] & N_TYPE
            if t == N_UNDF and struct.unpack_from(vfmt, table, i * entsize + 8)[0] != 0:
                continue  # a common symbol: a definition
            x = strx[i]
            if x:
                if x >= len(strtab):
                    return None
                end = find(b"\0", x)
                if end < 0:
                    return None
                raw = strtab[x:end]
            else:
                raw = b""
            if raw not in seen:
                seen.add(raw)
                imports.append(_undecorate(raw))
                self.import_desc[imports[-1]] = struct.unpack_from(self.e + "H", table, i * entsize + 6)[0]
        return imports, local_syms

    def bind_imports(self, s: Slice, twolevel: bool) -> None:
        """``s.imports_from`` and ``s.weak_imports`` from each import's ``n_desc`` (its first
        nlist entry): the library ordinal (GET_LIBRARY_ORDINAL, 1-based over the LC_*_DYLIB
        commands in order) and N_WEAK_REF. These are the linker's record of the binding, as
        ``nm -m`` shows it; dyld binds by the bind opcodes / chained-fixups import table, which
        the linker writes from the same ordinals. A flat-namespace image binds every import flat."""
        deps = s.dependencies
        for name, desc in self.import_desc.items():
            ordinal = (desc >> 8) & 0xFF
            if not twolevel or ordinal == DYNAMIC_LOOKUP_ORDINAL:
                lib = MACHO_FLAT
            elif ordinal == EXECUTABLE_ORDINAL:
                lib = MACHO_EXECUTABLE
            elif ordinal == SELF_LIBRARY_ORDINAL:
                lib = MACHO_SELF
            elif ordinal <= len(deps):
                lib = deps[ordinal - 1].name
            else:
                lib = f"(library ordinal {ordinal}: the image has {len(deps)} dependencies)"
            s.imports_from.setdefault(lib, []).append(name)
            if desc & N_WEAK_REF:
                s.weak_imports.append(name)

    # ---- the export trie -----------------------------------------------------------------------
    def read_trie(self, trie_off: int, trie_size: int, notes: list[str]) -> list[Symbol]:
        """The exports listed by the trie, in trie (preorder) order.

        Two walks of the same trie: ``_walk_trie`` is the fast one and decides nothing: on anything
        it does not expect (a bound exceeded, an encoding it does not decode, a node reached twice...)
        it gives up and ``walk_trie_exact``, the reference walk with every check and message, reads
        the trie again. Both give the same exports whenever the fast walk finishes.
        """
        if trie_size == 0:
            return []
        self.check_range(trie_off, trie_size, "export trie")
        trie = bytes(self.data[self.base + trie_off : self.base + trie_off + trie_size])
        try:
            walked = _walk_trie(trie)
        except (IndexError, ValueError, MalformedBinary):  # out of the trie, unterminated label, bad ULEB128
            walked = None
        if walked is not None:
            names, lanes, slow, reexports = walked
            if not names:
                codes: bytes | None = b""
            elif max(map(len, names)) > MAX_NAME:
                codes = None
            else:
                codes = self.lane_codes(lanes)
            if codes is not None:
                if slow:  # terminals the walk decoded itself: (index, flags, address)
                    is_func = self.code_rule()[1]
                    fixed = bytearray(codes)
                    for i, flags, address in slow:
                        func = not flags & EXPORT_SYMBOL_FLAGS_KIND_MASK and is_func(self.image_base + address)
                        fixed[i] = _EXPORT_CODES[bool(flags & EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION)][func]
                    codes = bytes(fixed)
                if reexports:
                    notes.append(f"{reexports} re-exported symbol(s) (EXPORT_SYMBOL_FLAGS_REEXPORT) not listed")
                return _export_table(names, codes)
        return self.walk_trie_exact(trie, notes)

    def code_rule(self) -> tuple[list[int], Callable[[int], bool]]:
        """(points, is_func): ``is_func(address)`` tells whether an (absolute) address lies in a section
        with instructions; ``points`` are the image-relative addresses, ascending, where its answer
        changes (False below the first one, then alternately True and False)."""
        spans = sorted((addr, addr + size, bool(flags & _CODE)) for addr, size, flags in self.sections if size)
        starts = [a for a, _, _ in spans]

        def is_func(address: int) -> bool:
            k = bisect_right(starts, address) - 1
            return bool(k >= 0 and address < spans[k][1] and spans[k][2])

        points = []
        func = False
        for p in sorted({p for a, e, _ in spans for p in (a, e)}):  # constant between these
            if is_func(p) != func:
                func = not func
                points.append(p - self.image_base)
        return points, is_func

    def lane_codes(self, lanes: list[bytes]) -> bytes | None:
        """The export codes of ``_walk_trie``'s terminals, computed on all of them at once, or None
        if one of them is not size, flags, then an address ULEB128 filling the rest exactly.

        The lanes, zero-padded to 8 bytes, are one big integer: the checks are done a byte column
        at a time (``bytes.translate``), the ULEB128s decoded with shifts and masks over every lane
        at once, and the section test ("address >= point", for each point where the answer changes)
        is an addition whose sign bit is that answer (addresses have at most 42 bits here).
        """
        n = len(lanes)
        raw = b"".join(map(bytes.ljust, lanes, repeat(8, n), repeat(b"\0", n)))
        sizes = raw[0::8]
        for j in range(2, 8):
            if raw[j::8].translate(_HIGH_BIT) != sizes.translate(_CONT_AT[j]):
                return None
        from_bytes = int.from_bytes
        whole = from_bytes(raw, "little")
        ones = from_bytes(b"\1\0\0\0\0\0\0\0" * n, "little")  # 1 in every lane
        addresses = 0
        low7 = ones * 0x7F
        for k in range(6):  # address byte k (lane byte 2 + k): 7 bits to bit 7k
            addresses |= (whole >> (16 + k)) & (low7 << (7 * k))
        points = self.code_rule()[0]
        sign = 1 << 63
        if len(points) <= 16:
            func = 0  # bit 0 of a lane: the parity of the points <= its address
            for p in points:
                if p <= 0:
                    func ^= ones
                elif p < sign:
                    func ^= ((addresses + ones * (sign - p)) >> 63) & ones
        else:
            values = array("Q")
            values.frombytes(addresses.to_bytes(8 * n, "little"))
            if sys.byteorder != "little":
                values.byteswap()
            parity = bytearray(8 * n)
            parity[0::8] = bytes(k & 1 for k in map(bisect_right, repeat(points), values))
            func = from_bytes(parity, "little")
        keys = (func << 3) | ((whole >> 8) & (ones * 7))
        return keys.to_bytes(8 * n, "little")[0::8].translate(_CODE_BY_KEY)

    def walk_trie_exact(self, trie: bytes, notes: list[str]) -> list[Symbol]:
        """Walk the export trie iteratively (explicit stack, each node visited at most once)."""
        end = len(trie)
        what = self.where + "export trie"
        found: list[tuple[bytes, int, int]] = []  # (raw name, flags, address)
        found_append = found.append
        trie_find = trie.find
        reexports = 0
        seen = bytearray(end)  # node offsets visited: a node reached twice means a cycle
        # name bytes a sane trie can expand to (a terminal costs at least ~6 trie bytes)
        name_budget = 256 * end + (16 << 20)
        path = bytearray()
        # pending nodes: (offset, length of the parent's name, edge label, depth). A node is
        # popped once; its children are pushed (each parsed once), so the work is linear in the
        # trie's size whatever its shape.
        stack: list[tuple[int, int, bytes, int]] = [(0, 0, b"", 0)]
        pop, push = stack.pop, stack.extend
        while stack:
            node, parent_len, label, depth = pop()
            if node >= end:
                raise MalformedBinary(f"{what}: child node offset {node} is past the trie ({end} bytes)")
            if seen[node]:
                raise MalformedBinary(f"{what}: node at offset {node} is reached twice "
                                      f"(cyclic or shared node)")
            seen[node] = 1
            del path[parent_len:]
            path += label
            if len(path) > MAX_NAME:
                raise MalformedBinary(f"{what}: symbol name longer than {MAX_NAME} bytes")
            byte = trie[node]
            if byte < 0x80:
                terminal_size, pos = byte, node + 1
            else:
                terminal_size, pos = _uleb(trie, node, end, what)
            children_at = pos + terminal_size
            if children_at >= end:
                raise MalformedBinary(f"{what}: node at offset {node}: terminal information "
                                      f"({terminal_size} bytes) runs past the trie")
            if terminal_size:
                byte = trie[pos]
                if byte < 0x80:
                    flags, pos = byte, pos + 1
                else:
                    flags, pos = _uleb(trie, pos, children_at, what)
                if flags & EXPORT_SYMBOL_FLAGS_REEXPORT:
                    reexports += 1
                else:
                    address, pos = _uleb(trie, pos, children_at, what)
                    if flags & EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER:
                        _uleb(trie, pos, children_at, what)
                    name_budget -= len(path)
                    if name_budget < 0:
                        raise MalformedBinary(f"{what}: names expand to more than the trie can hold "
                                              f"(hostile prefix sharing)")
                    found_append((bytes(path), flags, address))
            nchildren = trie[children_at]
            if nchildren:
                if depth >= MAX_TRIE_DEPTH:
                    raise MalformedBinary(f"{what}: deeper than {MAX_TRIE_DEPTH} levels")
                depth += 1
                name_len = len(path)
                pos = children_at + 1
                children = []
                for _ in range(nchildren):
                    label_end = trie_find(b"\0", pos, end)
                    if label_end < 0:
                        raise MalformedBinary(f"{what}: edge label at offset {pos} is not NUL-terminated")
                    label = trie[pos:label_end]
                    # the child's offset (ULEB128, inline: this runs once per edge)
                    pos = label_end + 1
                    child = shift = 0
                    while True:
                        if pos >= end:
                            raise MalformedBinary(f"{what}: truncated ULEB128 at offset {pos}")
                        byte = trie[pos]
                        pos += 1
                        child |= (byte & 0x7F) << shift
                        if byte < 0x80:
                            break
                        shift += 7
                        if shift >= 70:
                            raise MalformedBinary(f"{what}: overlong ULEB128 (more than 10 bytes) "
                                                  f"at offset {pos - 10}")
                    children.append((child, name_len, label, depth))
                children.reverse()  # popped in trie order
                push(children)
        if reexports:
            notes.append(f"{reexports} re-exported symbol(s) (EXPORT_SYMBOL_FLAGS_REEXPORT) not listed")

        # addresses -> func/data through the section table (addresses are image-relative)
        is_func = self.code_rule()[1]
        image_base = self.image_base
        codes = bytearray()
        for _raw, flags, address in found:
            func = False
            if not flags & EXPORT_SYMBOL_FLAGS_KIND_MASK:  # regular (not thread-local, not absolute)
                func = is_func(image_base + address)
            weak = flags & EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION
            codes.append(_EXPORT_CODES[bool(weak)][func])
        names = [f[0] for f in found]
        return _export_table(names, bytes(codes))


def _walk_trie(trie: bytes) -> tuple[list[bytes], list[bytes], list[tuple[int, int, int]], int] | None:
    """The export trie's fast walk: (names, lanes, slow, re-export count), or None to leave the trie
    to ``_Image.walk_trie_exact``, which has the checks and their messages (the caller also hands it
    the trie on IndexError, ValueError, MalformedBinary).

    Same preorder walk, with what costs per node cut down: each name is its parent's name plus
    the edge label (no shared buffer to truncate and copy), a terminal is kept as its raw bytes for
    ``_Image.lane_codes`` (``slow`` lists those decoded here: (index, flags, address), their lane a
    placeholder), and checks are folded into what the walk does anyway:

    * out of the trie: indexing past the end raises IndexError (an unterminated label: ValueError);
    * a node reached twice: ``marks`` is the trie with each visited node's first byte set to 0xFF,
      which sends a second visit (and a real 0xFF, left to the exact walk) off the common paths;
    * memory: each node with children is charged its name once per child plus its child list, so
      the names, held and pending, never add up to more than the exact walk's name budget
      (which therefore cannot run out either);
    * names longer than MAX_NAME: left to the caller (the longest name is a leaf's, every leaf is
      listed or checked here).
    """
    end = len(trie)
    names: list[bytes] = []
    lanes: list[bytes] = []
    slow: list[tuple[int, int, int]] = []
    names_append, lanes_append = names.append, lanes.append
    trie_index = trie.index
    marks = bytearray(trie)
    budget = 256 * end + (16 << 20)
    reexports = 0
    # pending nodes: (offset, parent's name, edge label, depth), popped in trie order
    stack: list[tuple[int, bytes, bytes, int]] = []
    pop, insert = stack.pop, stack.insert
    node, parent, label, depth = 0, b"", b"", 0
    while True:
        size = marks[node]
        marks[node] = 0xFF
        name = parent + label
        if not size:
            children_at = node + 1
        elif size < 8 and not trie[node + 1] & _LANE_FLAGS_SLOW:
            children_at = node + 1 + size
            names_append(name)
            lanes_append(trie[node:children_at])
        else:
            if size == 0xFF:  # visited (or a first byte 0xFF)
                return None
            if size < 0x80:
                pos = node + 1
            else:
                size, pos = _uleb(trie, node, end, "")
            children_at = pos + size
            if children_at >= end:
                return None
            flags, pos = _uleb(trie, pos, children_at, "")
            if flags & EXPORT_SYMBOL_FLAGS_REEXPORT:
                reexports += 1
                if len(name) > MAX_NAME:
                    return None
            else:
                address, pos = _uleb(trie, pos, children_at, "")
                if flags & EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER:
                    _uleb(trie, pos, children_at, "")
                slow.append((len(names), flags, address))
                names_append(name)
                lanes_append(_LANE_PLACEHOLDER)
        nchildren = trie[children_at]
        if nchildren:
            if depth >= MAX_TRIE_DEPTH:
                return None
            depth += 1
            pos = children_at + 1
            k = len(stack)  # children inserted here, each before the previous one: popped in order
            for _ in range(nchildren):
                label_end = trie_index(0, pos)
                b0 = trie[label_end + 1]  # the child's offset: ULEB128 of 1 to 4 bytes inline
                if b0 < 0x80:
                    insert(k, (b0, name, trie[pos:label_end], depth))
                    pos = label_end + 2
                    continue
                b1 = trie[label_end + 2]
                if b1 < 0x80:
                    insert(k, (b0 & 0x7F | b1 << 7, name, trie[pos:label_end], depth))
                    pos = label_end + 3
                    continue
                b2 = trie[label_end + 3]
                if b2 < 0x80:
                    insert(k, (b0 & 0x7F | (b1 & 0x7F) << 7 | b2 << 14, name, trie[pos:label_end], depth))
                    pos = label_end + 4
                    continue
                b3 = trie[label_end + 4]
                if b3 < 0x80:  # a trie over 2 MiB
                    insert(k, (b0 & 0x7F | (b1 & 0x7F) << 7 | (b2 & 0x7F) << 14 | b3 << 21, name, trie[pos:label_end],
                               depth))
                    pos = label_end + 5
                    continue
                child, after = _uleb(trie, label_end + 1, end, "")
                insert(k, (child, name, trie[pos:label_end], depth))
                pos = after
            budget -= len(name) * nchildren + pos - children_at
            if budget < 0:
                return None
        elif not size and len(name) > MAX_NAME:  # a leaf without terminal information
            return None
        try:
            node, parent, label, depth = pop()
        except IndexError:
            break
    return names, lanes, slow, reexports


def _export_table(names: list[bytes], codes: bytes) -> _symbols.SymbolTable:
    """The exports as a SymbolTable: the names joined into one string table (demangled on use)."""
    blob = b"\0".join(names) + b"\0"
    offsets = _C.u32_array(accumulate((len(r) + 1 for r in names[:-1]), initial=0)) if names else _C.u32_array(())
    table = _symbols.SymbolTable(blob, offsets, codes, underscore=True, ascending=True)  # (offsets of joined names)
    table._tails = {}  # each name is a string of its own  # noqa: SLF001
    return table
