"""The Mach-O header and load commands of one image: dependencies, rpaths, identity, segments
and sections, the deployment target, where the symbol table, the export trie and the code
signature are; then each table read by its module."""

from __future__ import annotations

import struct
from collections.abc import Sequence

from wheelaudit.binary import find_strings
from wheelaudit.binary.macho.constants import (
    DEPENDENCY_KINDS,
    FAT_MAGIC_BYTES,
    FILE_KINDS,
    LC_BUILD_VERSION,
    LC_CODE_SIGNATURE,
    LC_DYLD_EXPORTS_TRIE,
    LC_DYLD_INFO,
    LC_DYLD_INFO_ONLY,
    LC_ID_DYLIB,
    LC_NAMES,
    LC_RPATH,
    LC_SEGMENT,
    LC_SEGMENT_64,
    LC_SYMTAB,
    LINKEDIT_DATA,
    MAX_NCMDS,
    MH_TWOLEVEL,
    PLATFORMS,
    THIN_MAGICS,
    VERSION_MIN,
)
from wheelaudit.binary.macho.cpu import arch_name
from wheelaudit.binary.macho.image import utf8
from wheelaudit.binary.macho.nlist import Nlist
from wheelaudit.binary.macho.trie import ExportTrie
from wheelaudit.model.binary import Dependency, Rpath, Slice


def _version(v: int) -> str:
    x, y, z = v >> 16, (v >> 8) & 0xFF, v & 0xFF
    return f"{x}.{y}.{z}" if z else f"{x}.{y}"


class Image(Nlist, ExportTrie):
    """One Mach-O image read into its :class:`Slice`: the header and load commands here, each
    table by the module of its job."""

    # ---- the header and load commands --------------------------------------------------------
    def parse(self, needles: Sequence[bytes], *, with_signature: bool = True) -> Slice:
        """The slice's facts; without ``with_signature`` the code signature is not verified
        (``signature`` left None)."""
        data, base, size = self.data, self.base, self.size
        if size < 4:
            raise self.bad(f"truncated Mach-O header ({size} bytes)")
        magic = bytes(data[base : base + 4])
        if magic in FAT_MAGIC_BYTES:
            raise self.bad("nested fat binary")
        if magic not in THIN_MAGICS:
            raise self.bad(f"not a Mach-O image (magic {magic.hex()})")
        e, is64 = THIN_MAGICS[magic]
        self.e = e
        self.is64 = is64
        header_size = 32 if is64 else 28
        if size < header_size:
            raise self.bad(f"truncated Mach-O header ({size} bytes, need {header_size})")
        cputype, cpusubtype, filetype, ncmds, sizeofcmds, mh_flags = struct.unpack_from(e + "IIIIII", data, base + 4)
        s = Slice(arch=arch_name(cputype, cpusubtype), kind=FILE_KINDS.get(filetype, "shared"),
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
            name = LC_NAMES.get(cmd, f"cmd 0x{cmd:x}")
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
                segment = utf8(segname.rstrip(b"\0"))
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
            elif cmd in DEPENDENCY_KINDS or cmd == LC_ID_DYLIB:
                self.need(cmdsize, 24, what)
                lib = self.lc_str(off, cmdsize, 24, what)
                if cmd == LC_ID_DYLIB:
                    if s.identity is None:
                        s.identity = lib
                    else:
                        s.notes.append(f"more than one LC_ID_DYLIB; using {s.identity!r}")
                else:
                    s.dependencies.append(Dependency(lib, DEPENDENCY_KINDS[cmd]))  # type: ignore[arg-type]
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
                                        zip(info[0::2], info[1::2], strict=False), strict=False):
                    self.check_range(o, n, f"{what} {part}")
                if info_trie is None:
                    info_trie = (info[8], info[9])
            elif cmd == LC_DYLD_EXPORTS_TRIE:
                self.need(cmdsize, 16, what)
                o, n = struct.unpack_from(e + "II", data, off + 8)
                self.check_range(o, n, f"{what} data")
                if exports_trie is None:
                    exports_trie = (o, n)
            elif cmd in LINKEDIT_DATA:
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
            elif cmd in VERSION_MIN:
                self.need(cmdsize, 16, what)
                if version_min is None:
                    v, sdk = struct.unpack_from(e + "II", data, off + 8)
                    version_min = (VERSION_MIN[cmd], v, sdk)
            off += cmdsize

        # ---- deployment target -------------------------------------------------------------
        platform_name = None
        if builds:
            platform, minos, sdk = next((b for b in builds if b[0] == 1), builds[0])
            platform_name = PLATFORMS.get(platform, f"platform {platform}")
            s.min_os, s.sdk = _version(minos), (_version(sdk) if sdk else None)
            s.min_os_command = "LC_BUILD_VERSION"
        elif version_min is not None:
            platform_name, minos, sdk = version_min
            s.min_os, s.sdk = _version(minos), (_version(sdk) if sdk else None)
            s.min_os_command = next(n for c, n in LC_NAMES.items() if VERSION_MIN.get(c) == platform_name)
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
        end = self.data.find(b"\0", lc + str_off, lc + cmdsize)  # type: ignore[union-attr]  # (bytes or an mmap)
        if end < 0:
            raise self.bad(f"{what}: string is not NUL-terminated within the command")
        return utf8(bytes(self.data[lc + str_off : end]))
