"""The loadability facts of an ELF image (docs/audits.md): an executable stack, text
relocations, the x86-64 ISA level its GNU property note needs, a 32-bit ARM file's architecture
and float ABI (``.ARM.attributes``), and the bytes of its debug info."""

from __future__ import annotations

import struct

from wheelaudit.binary import MalformedBinary
from wheelaudit.binary.elf.constants import (
    DF_TEXTREL,
    DT_FLAGS,
    DT_TEXTREL,
    EF_ARM_ABI_FLOAT_HARD,
    EF_ARM_ABI_FLOAT_SOFT,
    GNU_PROPERTY_X86_ISA_1_NEEDED,
    NT_GNU_PROPERTY_TYPE_0,
    PF_X,
    PT_GNU_PROPERTY,
    PT_NOTE,
    SHF_ALLOC,
    SHT_ARM_ATTRIBUTES,
    SHT_NOBITS,
    SHT_NOTE,
    TAG_ABI_VFP_ARGS,
    TAG_CPU_ARCH,
    X86_ISA_LEVELS,
)
from wheelaudit.binary.elf.dynamic import Dynamic

#: machines whose ABI gives an image without PT_GNU_STACK a non-executable stack (glibc's
#: DEFAULT_STACK_PERMS without PF_X); elsewhere its absence means an executable stack
_NX_STACK_BY_DEFAULT = {"aarch64", "loongarch64", "loongarch32"}
#: the note of an image whose stack is executable for want of PT_GNU_STACK
NO_GNU_STACK_NOTE = "no PT_GNU_STACK program header: the {arch} ABI then defaults to an executable stack"


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


class Loadability(Dynamic):
    """What decides whether a loader takes the image: an executable stack, text relocations, the
    x86 ISA level, ARM's architecture and float ABI; and the size of its debug info."""

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
