"""The dynamic table: its tags (``DT_NEEDED``, ``DT_SONAME``, the tables it locates) and the
dynamic string table."""

from __future__ import annotations

import struct

from wheelaudit.binary import MalformedBinary
from wheelaudit.binary.elf.constants import (
    DT_NULL,
    DT_STRSZ,
    DT_STRTAB,
    PT_DYNAMIC,
    SHT_DYNAMIC,
    SHT_NOBITS,
    SINGLE_TAGS,
)
from wheelaudit.binary.elf.image import Image


class Dynamic(Image):
    """The dynamic table (``PT_DYNAMIC``, else ``.dynamic``) and its string table."""

    _dynstr: bytes | None  # (set by the first dynstr())

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
            if tag in SINGLE_TAGS:
                if tag in self.tags and self.tags[tag] != val:
                    self.notes.append(f"the dynamic table has more than one {SINGLE_TAGS[tag]}; the last one was read")
                self.tags[tag] = val  # the last one wins, as in glibc's loader
        if not terminated and self.dyn:
            self.notes.append(f"the {what} has no DT_NULL terminator")

    def dynstr(self) -> bytes | None:
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
