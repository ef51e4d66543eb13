"""PE (Windows) reader: recognised and listed — machine and DLL/EXE kind only, for now.

Imports and exports of PE files are not read yet; the slice says so in its notes.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from ..facts import Slice
from . import MalformedBinary, find_strings

MACHINES = {0x14C: "x86", 0x8664: "x86_64", 0xAA64: "arm64", 0x1C4: "armv7", 0xA641: "arm64ec"}
IMAGE_FILE_DLL = 0x2000


def parse(data, needles: Sequence[bytes] = ()) -> list[Slice]:
    if len(data) < 0x40:
        raise MalformedBinary(f"truncated: {len(data)} bytes is shorter than a DOS header (64)")
    (e_lfanew,) = struct.unpack_from("<I", data, 0x3C)
    if e_lfanew + 24 > len(data):
        raise MalformedBinary(f"truncated: PE header at 0x{e_lfanew:x} is past the end of the {len(data)}-byte file")
    if bytes(data[e_lfanew:e_lfanew + 4]) != b"PE\0\0":
        raise MalformedBinary("MZ header without a PE signature (a DOS program, not a PE image)")
    machine, _nsec, _ts, _sym, _nsym, _opt, characteristics = struct.unpack_from("<HHIIIHH", data, e_lfanew + 4)
    arch = MACHINES.get(machine, f"machine_{machine:#x}")
    kind = "shared" if characteristics & IMAGE_FILE_DLL else "executable"
    return [Slice(arch=arch, kind=kind, strings=find_strings(data, needles), size=len(data),
                  notes=["PE imports and exports are not read yet"])]
