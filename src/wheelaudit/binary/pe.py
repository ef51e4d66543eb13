"""PE reader (Windows ``.dll``/``.pyd``/``.exe``): PE32 and PE32+, any machine.

Our own reader, straight from the buffer with :mod:`struct` like ``elf.py`` and ``macho.py``, not
a library: pefile with its defaults silently caps exports (at 8,192, fewer than large DLLs have) and
can drop a DLL's imports without a word, it parses the whole image into Python objects, and it
would be the only reader whose limits are not ours to state. Only what the facts need is read:
the DOS and COFF headers, the optional header, the section table, and the export, import,
delay-import, debug and (the fixed-file-info part of the) resource directories. No section body
is copied whole; every RVA is mapped through the section table and bounds-checked, every table
walk is bounded by the bytes it stands on and by a shared budget (a hostile file cannot make
descriptors point at the same table over and over), and anything that does not fit raises
:class:`~wheelaudit.binary.MalformedBinary` with the reason.

What goes where:

* ``arch``: the COFF machine (``x86``, ``x86_64``, ``arm64``, ``arm64ec``/``arm64x`` when the
  header says so; an ARM64EC or ARM64X *image* carries the machine of its native view, and its
  hybrid metadata in the load-config directory is not read).
* ``kind``: ``shared`` for ``IMAGE_FILE_DLL``, else ``executable``.
* ``identity``: the DLL name recorded in the export directory.
* ``dependencies``: one ``Dependency(dll, "import")`` per DLL of the import directory, then one
  ``Dependency(dll, "delay")`` per DLL of the delay-import directory, in table order, once each.
* ``imports``: every imported name, once, in table order (import, then delay-import);
  ``imports_from``: DLL name -> the names imported from it (both kinds merged). A name imported
  by ordinal only is ``#<ordinal>`` (``#12``).
* ``exports``: every export address table entry that points into the image: by its name, or
  ``#<ordinal>`` when it has none; ``type`` is ``func`` when the address lies in an executable
  section, else ``data``. Forwarders (entries pointing back into the export directory, e.g.
  ``HeapAlloc2`` -> ``NTDLL.RtlAllocateHeap``) define nothing here: like Mach-O re-exports
  they are left out of ``exports`` (a forwarding shim must not pass for the owner of a
  component) and listed in ``forwarders`` (name -> target), with a note.
* ``min_os``: the optional header's subsystem version (``6.2``), the one the loader enforces;
  ``subsystem`` its subsystem (``windows_gui``, ``windows_cui``, ...); ``linker_version``
  ``Major.Minor`` of the linker (``14.38``); ``debug_path`` the CodeView PDB path of the debug
  directory (it tells the build machine's layout); ``file_version``/``product_version`` from
  the version resource's fixed file info, when there is one.
* ``managed``: a .NET assembly of IL only that does not require 32 bits (COR20 flags ILONLY
  without 32BITREQUIRED): AnyCPU, whatever its COFF machine says (x86 for AnyCPU).
* ``stripped`` stays True and ``locals`` empty: a COFF symbol table (MinGW leaves one) is not
  read, which a note says.

Reference: Microsoft's "PE Format" specification; LLVM's ``COFFObjectFile`` and
``llvm-readobj --coff-*`` as the oracle of the tests.
"""

from __future__ import annotations

import mmap
import struct
import sys
from array import array
from bisect import bisect_right
from collections.abc import Sequence

from wheelaudit.model.binary import Dependency, Slice
from wheelaudit.binary.symbols import SymbolTable, symbol_code
from wheelaudit.binary import Buffer, MalformedBinary, find_strings

__all__ = ["parse", "MACHINES"]

MACHINES = {
    0x14C: "x86",
    0x8664: "x86_64",
    0xAA64: "arm64",
    0xA641: "arm64ec",
    0xA64E: "arm64x",
    0x1C0: "arm",
    0x1C4: "armv7",
    0x200: "ia64",
}
SUBSYSTEMS = {
    1: "native", 2: "windows_gui", 3: "windows_cui", 5: "os2_cui", 7: "posix_cui", 9: "windows_ce_gui",
    10: "efi_application", 11: "efi_boot_service_driver", 12: "efi_runtime_driver", 13: "efi_rom",
    14: "xbox", 16: "windows_boot_application",
}
IMAGE_FILE_DLL = 0x2000
PE32_MAGIC, PE32_PLUS_MAGIC = 0x10B, 0x20B
IMAGE_SCN_CNT_CODE = 0x20
IMAGE_SCN_MEM_EXECUTE = 0x20000000

DIR_EXPORT, DIR_IMPORT, DIR_RESOURCE, DIR_DEBUG, DIR_DELAY_IMPORT, DIR_CLR = 0, 1, 2, 6, 13, 14
COMIMAGE_FLAGS_ILONLY, COMIMAGE_FLAGS_32BITREQUIRED = 0x1, 0x2
IMAGE_DEBUG_TYPE_CODEVIEW = 2
RT_VERSION = 16
VS_FFI_SIGNATURE = 0xFEEF04BD

#: limits far above any real image's counts; a count past them is
#: hostile and raises rather than cuts
MAX_EXPORTS = 1 << 21
MAX_IMPORT_ENTRIES = 1 << 21  # all thunks of all import and delay-import tables together
MAX_DESCRIPTORS = 1 << 16
MAX_DEBUG_ENTRIES = 64
MAX_NAME = 1 << 16  # longest name read (MSVC truncates decorated names far below this)
#: all names read from one image together (far more than a real export table needs): the
#: bound on the bytes a hostile image can make the reader scan by pointing many entries into
#: one long run of non-NUL bytes
MAX_NAME_BYTES = 64 << 20


class _Image:
    """The buffer with its section table: RVA -> file offset, bounds-checked."""

    def __init__(self, data: bytes | bytearray | mmap.mmap, sections: list[tuple[int, int, int, int, int]],
                 size_of_headers: int) -> None:
        self.data = data
        self.size = len(data)
        self.headers = min(size_of_headers, self.size)
        self.name_budget = MAX_NAME_BYTES
        #: RVA -> the string there: a name that many entries point at is read (and its bytes
        #: counted against name_budget) once, and its str shared
        self.strings: dict[int, str] = {}
        # (va, end of the file-backed part in RVA terms, raw pointer, characteristics), by va
        self.sections = sorted((va, va + min(vsize or rsize, rsize), raw, ch) for va, vsize, raw, rsize, ch in sections)
        self.starts = [s[0] for s in self.sections]

    def section(self, rva: int):
        i = bisect_right(self.starts, rva) - 1
        if i >= 0:
            sec = self.sections[i]
            if rva < sec[1]:
                return sec
        return None

    def offset(self, rva: int, length: int, what: str) -> int:
        """File offset of ``length`` bytes at ``rva``; raises when they are not all in the file."""
        sec = self.section(rva)
        if sec is not None:
            va, end, raw, _ = sec
            off = raw + (rva - va)
            if rva + length <= end and off + length <= self.size:
                return off
        elif 0 <= rva and rva + length <= self.headers:
            return rva
        raise MalformedBinary(f"{what} (RVA 0x{rva:x}, {length} bytes) is outside the file's sections")

    def cstring(self, rva: int, what: str) -> str:
        """The NUL-terminated string at ``rva``, within its section's file bytes (read once per
        ``rva``)."""
        text = self.strings.get(rva)
        if text is None:
            text = self.strings[rva] = self.cbytes(rva, what).decode("utf-8", "backslashreplace")
        return text

    def cbytes(self, rva: int, what: str) -> bytes:
        """The bytes of the NUL-terminated string at ``rva``, within its section's file bytes."""
        sec = self.section(rva)
        if sec is not None:
            va, end, raw, _ = sec
            off, stop = raw + (rva - va), min(raw + (end - va), self.size)
        elif 0 <= rva < self.headers:
            off, stop = rva, self.headers
        else:
            raise MalformedBinary(f"{what} (RVA 0x{rva:x}) is outside the file's sections")
        nul = self.data.find(b"\0", off, min(stop, off + MAX_NAME))
        if nul < 0:
            raise MalformedBinary(f"{what} at RVA 0x{rva:x} has no terminating NUL within its section")
        self.spend(nul - off)
        return bytes(self.data[off:nul])

    def spend(self, n: int) -> None:
        self.name_budget -= n + 1
        if self.name_budget < 0:
            raise MalformedBinary(f"the names of the image's tables total more than {MAX_NAME_BYTES:,} bytes")

    def executable(self, rva: int) -> bool:
        sec = self.section(rva)
        return sec is not None and bool(sec[3] & (IMAGE_SCN_CNT_CODE | IMAGE_SCN_MEM_EXECUTE))


def _u32_array(data: Buffer, off: int, count: int) -> array:
    a = array("I", bytes(data[off:off + 4 * count]))
    if sys.byteorder == "big":
        a.byteswap()
    return a


def _u16_array(data: Buffer, off: int, count: int) -> array:
    a = array("H", bytes(data[off:off + 2 * count]))
    if sys.byteorder == "big":
        a.byteswap()
    return a


def parse(data: Buffer, needles: Sequence[bytes] = ()) -> list[Slice]:
    if isinstance(data, memoryview):  # (the names are found with ``find``, which a view lacks)
        data = bytes(data)
    size = len(data)
    if size < 0x40:
        raise MalformedBinary(f"truncated: {size} bytes is shorter than a DOS header (64)")
    (e_lfanew,) = struct.unpack_from("<I", data, 0x3C)
    if e_lfanew + 24 > size:
        raise MalformedBinary(f"truncated: PE header at 0x{e_lfanew:x} is past the end of the {size}-byte file")
    if bytes(data[e_lfanew:e_lfanew + 4]) != b"PE\0\0":
        raise MalformedBinary("MZ header without a PE signature (a DOS program, not a PE image)")
    machine, nsec, _ts, symptr, nsym, opt_size, characteristics = struct.unpack_from("<HHIIIHH", data, e_lfanew + 4)
    opt = e_lfanew + 24
    if opt_size < 2 or opt + opt_size > size:
        raise MalformedBinary(f"optional header ({opt_size} bytes at 0x{opt:x}) does not fit the {size}-byte file")
    (magic,) = struct.unpack_from("<H", data, opt)
    if magic == PE32_MAGIC:
        plus, dirs_at, fixed = False, 96, 96
    elif magic == PE32_PLUS_MAGIC:
        plus, dirs_at, fixed = True, 112, 112
    else:
        raise MalformedBinary(f"optional header magic 0x{magic:x} is neither PE32 (0x10b) nor PE32+ (0x20b)")
    if opt_size < fixed:
        raise MalformedBinary(f"optional header is {opt_size} bytes; a {'PE32+' if plus else 'PE32'} one needs {fixed}")
    link_major, link_minor = data[opt + 2], data[opt + 3]
    image_base = struct.unpack_from("<Q" if plus else "<I", data, opt + (24 if plus else 28))[0]
    sub_major, sub_minor = struct.unpack_from("<HH", data, opt + 48)
    (size_of_headers,) = struct.unpack_from("<I", data, opt + 60)
    (subsystem,) = struct.unpack_from("<H", data, opt + 68)
    (ndirs,) = struct.unpack_from("<I", data, opt + dirs_at - 4)
    ndirs = min(ndirs, 16, (opt_size - dirs_at) // 8)  # the loader reads at most 16
    dirs = [struct.unpack_from("<II", data, opt + dirs_at + 8 * i) for i in range(ndirs)] + [(0, 0)] * (16 - ndirs)

    sec_at = opt + opt_size
    if sec_at + 40 * nsec > size:
        raise MalformedBinary(f"section table ({nsec} sections at 0x{sec_at:x}) is past the end of the {size}-byte file")
    sections = []
    for i in range(nsec):
        vsize, va, rsize, raw = struct.unpack_from("<IIII", data, sec_at + 40 * i + 8)
        (ch,) = struct.unpack_from("<I", data, sec_at + 40 * i + 36)
        sections.append((va, vsize, raw, rsize, ch))
    img = _Image(data, sections, size_of_headers)

    notes: list[str] = []
    s = Slice(
        arch=MACHINES.get(machine, f"machine_{machine:#x}"),
        kind="shared" if characteristics & IMAGE_FILE_DLL else "executable",
        strings=find_strings(data, needles),
        size=size,
        notes=notes,
    )
    s.min_os = f"{sub_major}.{sub_minor}"
    s.subsystem = SUBSYSTEMS.get(subsystem, f"subsystem_{subsystem}")
    s.linker_version = f"{link_major}.{link_minor}"
    budget = [MAX_IMPORT_ENTRIES]

    if dirs[DIR_EXPORT][0]:
        _exports(img, dirs[DIR_EXPORT], s)
    seen_deps: set[tuple[str, str]] = set()
    imported: dict[str, None] = {}
    known_by_dll: dict[str, set[str]] = {}
    if dirs[DIR_IMPORT][0]:
        for dll, names in _imports(img, dirs[DIR_IMPORT][0], plus, budget):
            _add_dependency(s, dll, "import", names, seen_deps, imported, known_by_dll)
    if dirs[DIR_DELAY_IMPORT][0]:
        for dll, names in _delay_imports(img, dirs[DIR_DELAY_IMPORT][0], plus, image_base, budget):
            _add_dependency(s, dll, "delay", names, seen_deps, imported, known_by_dll)
    s.imports = list(imported)
    if dirs[DIR_DEBUG][0]:
        s.debug_path = _codeview_path(img, dirs[DIR_DEBUG])
    if dirs[DIR_RESOURCE][0]:
        s.file_version, s.product_version = _version(img, dirs[DIR_RESOURCE][0])
    if dirs[DIR_CLR][0]:
        # IMAGE_COR20_HEADER: cb, runtime version, the metadata directory, then Flags
        (flags,) = struct.unpack_from("<I", img.data, img.offset(dirs[DIR_CLR][0] + 16, 4, "CLR header"))
        s.managed = bool(flags & COMIMAGE_FLAGS_ILONLY) and not flags & COMIMAGE_FLAGS_32BITREQUIRED
        notes.append("a .NET (CLR) image" + (" of IL only, for any CPU (AnyCPU)" if s.managed else "")
                     + ": managed code and its references are not read")
    if symptr and nsym:
        notes.append(f"COFF symbol table ({nsym} entries) not read")
    if s.forwarders:
        notes.append(f"{len(s.forwarders)} forwarded exports left out of the exports (see forwarders)")
    return [s]


def _add_dependency(s: Slice, dll: str, kind, names: list[str], seen: set, imported: dict,
                    known_by_dll: dict[str, set[str]]) -> None:
    """``names`` imported from ``dll`` through one more descriptor. ``known_by_dll``: the names
    already listed per DLL, kept across descriptors (a linker may write one descriptor per
    import, all naming one DLL: the work stays linear in the imports)."""
    if (dll, kind) not in seen:
        seen.add((dll, kind))
        s.dependencies.append(Dependency(name=dll, kind=kind))
    into = s.imports_from.setdefault(dll, [])
    known = known_by_dll.setdefault(dll, set())
    for n in names:
        if n not in known:
            known.add(n)
            into.append(n)
        imported[n] = None


def _exports(img: _Image, directory: tuple[int, int], s: Slice) -> None:
    data = img.data
    dir_rva, dir_size = directory
    off = img.offset(dir_rva, 40, "export directory")
    name_rva, base_ordinal, n_funcs, n_names, eat_rva, names_rva, ords_rva = struct.unpack_from("<IIIIIII", data, off + 12)
    if n_funcs > MAX_EXPORTS or n_names > MAX_EXPORTS:
        raise MalformedBinary(f"export directory claims {max(n_funcs, n_names)} entries; limit {MAX_EXPORTS:,}")
    if name_rva:
        s.identity = img.cstring(name_rva, "export directory DLL name")
    if not n_funcs:
        return
    eat = _u32_array(data, img.offset(eat_rva, 4 * n_funcs, "export address table"), n_funcs)
    names: dict[int, bytes] = {}
    if n_names:
        name_ptrs = _u32_array(data, img.offset(names_rva, 4 * n_names, "export name table"), n_names)
        ordinals = _u16_array(data, img.offset(ords_rva, 2 * n_names, "export ordinal table"), n_names)
        if max(ordinals) >= n_funcs:
            raise MalformedBinary(f"export name table points at address table entry {max(ordinals)}; it has {n_funcs}")
        strings = _names_in_one_section(img, name_ptrs)
        if strings is not None:  # the usual layout: one slice of bytes, one find per name
            blob, base = strings
            find = blob.find
            budget = img.name_budget
            read: dict[int, bytes] = {}  # RVA -> name: entries sharing a string share it
            for ptr, idx in zip(name_ptrs, ordinals, strict=True):
                if idx not in names:
                    name = read.get(ptr)
                    if name is None:
                        at = ptr - base
                        nul = find(b"\0", at, at + MAX_NAME)
                        if nul < 0:
                            raise MalformedBinary(f"export name at RVA 0x{ptr:x} has no terminating NUL within its section")
                        budget -= nul - at + 1
                        if budget < 0:
                            raise MalformedBinary(f"the names of the image's tables total more than {MAX_NAME_BYTES:,} bytes")
                        name = read[ptr] = blob[at:nul]
                    names[idx] = name
            img.name_budget = max(budget, 0)
        else:
            read = {}
            for ptr, idx in zip(name_ptrs, ordinals, strict=True):
                if idx not in names:
                    if ptr not in read:
                        read[ptr] = img.cbytes(ptr, "export name")
                    names[idx] = read[ptr]
    # a compact table (as ELF and Mach-O symbols are kept): the names joined, one type byte each
    kept: list[bytes] = []
    codes = bytearray()
    forwarders: dict[str, str] = {}
    dir_end = dir_rva + dir_size
    code = [(sec[0], sec[1]) for sec in img.sections if sec[3] & (IMAGE_SCN_CNT_CODE | IMAGE_SCN_MEM_EXECUTE)]
    lo, hi = code[0] if code else (0, 0)  # the first code section (.text) holds nearly every function
    executable = img.executable
    func, data_ = symbol_code("global", "func"), symbol_code("global", "data")
    for idx, rva in enumerate(eat):
        if not rva:
            continue  # an unused ordinal slot
        name = names.get(idx) or f"#{base_ordinal + idx}".encode("ascii")
        if dir_rva <= rva < dir_end:
            forwarders[name.decode("utf-8", "backslashreplace")] = img.cstring(rva, "export forwarder")
        else:
            kept.append(name)
            codes.append(func if (lo <= rva < hi or executable(rva)) else data_)
    # (each distinct name once in the table's blob: entries that share a name share its offset)
    where: dict[bytes, int] = {}
    parts: list[bytes] = []
    size = 0
    offsets = array("Q")
    for name in kept:
        at = where.get(name)
        if at is None:
            at = where[name] = size
            parts.append(name)
            size += len(name) + 1
        offsets.append(at)
    s.exports = SymbolTable(b"\0".join(parts) + b"\0" if parts else b"", offsets, bytes(codes),
                            ascending=len(parts) == len(kept))
    s.forwarders = forwarders


def _names_in_one_section(img: _Image, ptrs: array) -> tuple[bytes, int] | None:
    """The bytes from the lowest to past the highest of ``ptrs`` (RVAs) and the RVA they start
    at, when all lie in the file-backed part of one section; else None."""
    first, last = min(ptrs), max(ptrs)
    sec = img.section(first)
    if sec is None or last >= sec[1]:
        return None
    va, end, raw, _ = sec
    start = raw + (first - va)
    stop = min(raw + (end - va), img.size, raw + (last - va) + MAX_NAME)
    return bytes(img.data[start:stop]), first


def _thunks(img: _Image, rva: int, plus: bool, budget: list[int], what: str) -> list[str]:
    """Names of an import lookup table (``#n`` for an import by ordinal), up to its zero entry."""
    width = 8 if plus else 4
    ordinal_flag = 1 << (63 if plus else 31)
    sec = img.section(rva)
    if sec is None:
        raise MalformedBinary(f"{what} (RVA 0x{rva:x}) is outside the file's sections")
    start = img.offset(rva, width, what)
    room = (min(sec[2] + (sec[1] - sec[0]), img.size) - start) // width  # entries until the section's end
    fmt = "<Q" if plus else "<I"
    out: list[str] = []
    cstring, data = img.cstring, img.data
    for i in range(min(room, budget[0] + 1)):
        (entry,) = struct.unpack_from(fmt, data, start + i * width)
        if not entry:
            budget[0] -= i
            return out
        if entry & ordinal_flag:
            out.append(f"#{entry & 0xFFFF}")
        else:
            out.append(cstring((entry & 0x7FFFFFFF) + 2, f"{what} name"))  # past the 2-byte hint
    if room > budget[0]:
        raise MalformedBinary(f"import tables list more than {MAX_IMPORT_ENTRIES:,} entries")
    raise MalformedBinary(f"{what} at RVA 0x{rva:x} runs past its section without a terminating entry")


def _imports(img: _Image, rva: int, plus: bool, budget: list[int]):
    data = img.data
    cache: dict[int, list[str]] = {}
    for i in range(MAX_DESCRIPTORS):
        off = img.offset(rva + 20 * i, 20, "import descriptor")
        ilt, _ts, _fwd, name_rva, iat = struct.unpack_from("<IIIII", data, off)
        if not (ilt or name_rva or iat):
            return
        dll = img.cstring(name_rva, "imported DLL name")
        table = ilt or iat  # no lookup table (old linkers): the address table holds the names
        if table not in cache:
            cache[table] = _thunks(img, table, plus, budget, f"import lookup table of {dll}")
        yield dll, cache[table]
    raise MalformedBinary(f"import directory has more than {MAX_DESCRIPTORS:,} descriptors")


def _delay_imports(img: _Image, rva: int, plus: bool, image_base: int, budget: list[int]):
    data = img.data
    cache: dict[int, list[str]] = {}
    for i in range(MAX_DESCRIPTORS):
        off = img.offset(rva + 32 * i, 32, "delay-import descriptor")
        attrs, name_rva, _hmod, iat, int_rva = struct.unpack_from("<IIIII", data, off)
        if not (name_rva or iat or int_rva):
            return
        if not attrs & 1:  # version 1 (pre-VC7) descriptors hold virtual addresses, not RVAs
            name_rva, int_rva = (v - image_base if v >= image_base else v for v in (name_rva, int_rva))
        dll = img.cstring(name_rva, "delay-loaded DLL name")
        if int_rva not in cache:
            cache[int_rva] = _thunks(img, int_rva, plus, budget, f"delay-import name table of {dll}") if int_rva else []
        yield dll, cache[int_rva]
    raise MalformedBinary(f"delay-import directory has more than {MAX_DESCRIPTORS:,} descriptors")


def _codeview_path(img: _Image, directory: tuple[int, int]) -> str | None:
    rva, dir_size = directory
    count = dir_size // 28
    if count > MAX_DEBUG_ENTRIES:
        raise MalformedBinary(f"debug directory claims {count} entries; limit {MAX_DEBUG_ENTRIES}")
    data = img.data
    off = img.offset(rva, 28 * count, "debug directory") if count else 0
    for i in range(count):
        dtype, dsize, _addr, ptr = struct.unpack_from("<IIII", data, off + 28 * i + 12)
        if dtype != IMAGE_DEBUG_TYPE_CODEVIEW or dsize < 8:
            continue
        if ptr + dsize > img.size:
            raise MalformedBinary(f"CodeView record ({dsize} bytes at 0x{ptr:x}) is past the end of the file")
        sig = bytes(data[ptr:ptr + 4])
        head = 24 if sig == b"RSDS" else 16 if sig == b"NB10" else None
        if head is None or dsize <= head:
            continue
        nul = data.find(b"\0", ptr + head, ptr + dsize)
        end = nul if nul >= 0 else ptr + dsize
        return bytes(data[ptr + head:end]).decode("utf-8", "backslashreplace")
    return None


def _version(img: _Image, rva: int) -> tuple[str | None, str | None]:
    """File and product version from the first RT_VERSION resource's VS_FIXEDFILEINFO."""
    data = img.data

    def first_entry(dir_off: int, want: int | None) -> int | None:
        named, ids = struct.unpack_from("<HH", data, img.offset(rva + dir_off, 16, "resource directory") + 12)
        n = named + ids
        entries = img.offset(rva + dir_off + 16, 8 * n, "resource directory entries")
        for k in range(n):
            ident, target = struct.unpack_from("<II", data, entries + 8 * k)
            if want is None or (not ident & 0x80000000 and ident == want):
                return target
        return None

    target = first_entry(0, RT_VERSION)
    for _level in range(2):  # type -> name -> language
        if target is None or not target & 0x80000000:
            return None, None
        target = first_entry(target & 0x7FFFFFFF, None)
    if target is None or target & 0x80000000:
        return None, None
    data_rva, data_size = struct.unpack_from("<II", data, img.offset(rva + target, 16, "resource data entry"))
    if data_size < 40 + 52:
        return None, None
    off = img.offset(data_rva, 40 + 52, "version resource")
    # VS_VERSIONINFO: wLength, wValueLength, wType, L"VS_VERSION_INFO\0" (32 bytes), padding to 4
    sig_at = off + 40
    if struct.unpack_from("<I", data, sig_at)[0] != VS_FFI_SIGNATURE:
        return None, None
    fms, fls, pms, pls = struct.unpack_from("<IIII", data, sig_at + 8)

    def ver(ms: int, ls: int) -> str:
        return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"

    return ver(fms, fls), ver(pms, pls)
