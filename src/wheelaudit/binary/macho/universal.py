"""The universal (fat) container: each architecture's slice, checked against the fat header and
against the others, read as a thin image (a static-archive slice is noted, not read)."""

from __future__ import annotations

import struct
from collections.abc import Sequence

from wheelaudit.binary import Buffer, MalformedBinary, find_strings
from wheelaudit.binary.macho.constants import AR_MAGIC, MAX_FAT_ARCHS
from wheelaudit.binary.macho.commands import Image
from wheelaudit.binary.macho.cpu import arch_name
from wheelaudit.binary.macho.image import Demangler
from wheelaudit.model.binary import Slice


def parse_fat(data: Buffer, size: int, is64: bool, needles: Sequence[bytes],
               demangler: Demangler, with_signature: bool = True) -> list[Slice]:
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
    for (a_off, a_len, _, a_where), (b_off, _, _, b_where) in zip(ordered, ordered[1:], strict=False):
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
            s = Image(data, offset, length, where + ": ", demangler).parse(needles, with_signature=with_signature)
            if s.arch != fat_arch:
                s.notes.append(f"fat header says {fat_arch}, the slice's own header says {s.arch}")
        if s.arch in seen:
            s.notes.append(f"architecture {s.arch} appears in more than one slice")
        seen.add(s.arch)
        slices.append(s)
    return slices
