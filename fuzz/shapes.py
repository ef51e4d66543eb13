"""Hostile shapes written from scratch for the fuzz targets of the second hostile round.

Each builder writes the bytes of one shape field by field (these are hostile inputs, not real
binaries: real binaries come from the toolchains of ``fixtures/``):

* :func:`elf_dso` - an ELF shared object with no section headers: ``PT_LOAD`` + ``PT_DYNAMIC``,
  any number of ``DT_NEEDED``, ``DT_RPATH`` and ``DT_RUNPATH`` entries (path lists);
* :func:`macho_dylib` - a thin 64-bit Mach-O with ``LC_ID_DYLIB``, ``LC_LOAD_DYLIB`` and
  ``LC_RPATH`` commands (path lists);
* :func:`fat` - a universal header over slices, its count, offsets and sizes free to lie
  (counts of 45 to 64 are where a fat header and a Java class file share their first bytes);
* :func:`smuggled_zip` - a zip whose local headers include some the central directory does not
  list (in a gap, after a member's data), or whose local sizes disagree with the directory's;
* :func:`cmake_nesting` - a CMake text of nested blocks (``if``, ``foreach``, ``function``,
  ``macro``, ``block``), closed or not;
* :data:`CONTROL_PIECES` - the pieces of names that write into a CI log (newlines, escapes,
  workflow commands).

Every function is deterministic in its arguments (the generators in ``fuzz/mutate.py`` draw the
arguments from the input's random stream).
"""

from __future__ import annotations

import random
import struct
import zlib

# =============================================================================================
# ELF


def elf_dso(needed: list[bytes], runpath: list[bytes] | None = None, rpath: list[bytes] | None = None,
            soname: bytes | None = None, machine: int = 62,
            symbols: list[tuple[bytes, bool]] | None = None) -> bytes:
    """A little-endian ELF64 ``ET_DYN`` image: header, two program headers, the dynamic string
    table and the dynamic table; ``runpath``/``rpath`` are joined with ``:`` into one entry each.
    ``symbols`` (name, defined): a dynamic symbol table (with a ``DT_HASH`` giving its count),
    each distinct name stored once in the string table (so repeated names share one string)."""
    strtab = bytearray(b"\0")
    offsets: dict[bytes, int] = {}

    def add(s: bytes) -> int:
        if s not in offsets:
            offsets[s] = len(strtab)
            strtab.extend(s.replace(b"\0", b"") + b"\0")
        return offsets[s]

    dyn: list[tuple[int, int]] = []
    for n in needed:
        dyn.append((1, add(n)))  # DT_NEEDED
    if soname is not None:
        dyn.append((14, add(soname)))  # DT_SONAME
    if rpath is not None:
        dyn.append((15, add(b":".join(rpath))))  # DT_RPATH
    if runpath is not None:
        dyn.append((29, add(b":".join(runpath))))  # DT_RUNPATH
    syms = [(add(n), d) for n, d in symbols or ()]
    str_off = 64 + 2 * 56
    sym_off = (str_off + len(strtab) + 7) & ~7
    symtab = bytes(24) + b"".join(struct.pack("<IBBHQQ", o, 0x12, 0, 7 if d else 0, 0x1000 if d else 0, 0)
                                  for o, d in syms)
    hash_off = sym_off + len(symtab)
    nsyms = len(syms) + 1
    hashtab = struct.pack("<II", 1, nsyms) + struct.pack("<I", 0) + bytes(4 * nsyms) if syms else b""
    dyn_off = (hash_off + len(hashtab) + 7) & ~7
    extra = [(6, sym_off), (11, 24), (4, hash_off)] if syms else []  # DT_SYMTAB, DT_SYMENT, DT_HASH
    dyn = [(5, str_off), (10, len(strtab))] + extra + dyn + [(0, 0)]  # DT_STRTAB, DT_STRSZ, ..., DT_NULL
    table = b"".join(struct.pack("<qQ", t, v) for t, v in dyn)
    total = dyn_off + len(table)
    head = struct.pack("<4sBBBBB7sHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0, bytes(7), 3, machine, 1, 0,
                       64, 0, 0, 64, 56, 2, 64, 0, 0)
    phdrs = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, total, total, 0x1000)
    phdrs += struct.pack("<IIQQQQQQ", 2, 6, dyn_off, dyn_off, dyn_off, len(table), len(table), 8)
    out = bytearray(head + phdrs + strtab)
    if syms:
        out += bytes(sym_off - len(out))
        out += symtab + hashtab
    out += bytes(dyn_off - len(out))
    out += table
    return bytes(out)


# =============================================================================================
# Mach-O

CPU_X86_64, CPU_ARM64 = 0x01000007, 0x0100000C
_CPUS = ((CPU_X86_64, 3), (CPU_ARM64, 0), (7, 3), (12, 9), (18, 0), (0x01000012, 0), (CPU_ARM64, 2))


def _lc_str(cmd: int, fixed: bytes, text: bytes) -> bytes:
    body = fixed + text.replace(b"\0", b"") + b"\0"
    size = (8 + len(body) + 7) & ~7
    return struct.pack("<II", cmd, size) + body + bytes(size - 8 - len(body))


def macho_dylib(deps: list[bytes], rpaths: list[bytes], identity: bytes | None = b"@rpath/libx.dylib",
                cpu: tuple[int, int] = (CPU_ARM64, 0), filetype: int = 6,
                symbols: list[tuple[bytes, bool]] | None = None) -> bytes:
    """A little-endian 64-bit Mach-O (``MH_DYLIB`` by default) of load commands only. ``symbols``
    (name, defined): an ``LC_SYMTAB`` of external entries (defined ones absolute, the others
    undefined: imports), each distinct name stored once in the string table."""
    cmds = []
    if identity is not None:
        cmds.append(_lc_str(0xD, struct.pack("<IIII", 24, 2, 0x10000, 0x10000), identity))
    for d in deps:
        cmds.append(_lc_str(0xC, struct.pack("<IIII", 24, 2, 0x10000, 0x10000), d))
    for r in rpaths:
        cmds.append(_lc_str(0x8000001C, struct.pack("<I", 12), r))
    strtab = bytearray(b" \0")
    at: dict[bytes, int] = {}
    nlist = bytearray()
    for name, defined in symbols or ():
        if name not in at:
            at[name] = len(strtab)
            strtab += name + b"\0"
        nlist += struct.pack("<IBBHQ", at[name], 0x03 if defined else 0x01, 0, 0, 0x1000 if defined else 0)
    if symbols:
        cmds.append(b"")  # LC_SYMTAB, written once the offsets are known
    body_len = sum(len(c) for c in cmds) + (24 if symbols else 0)
    data_off = (32 + body_len + 7) & ~7
    if symbols:
        cmds[-1] = struct.pack("<IIIIII", 0x2, 24, data_off, len(symbols), data_off + len(nlist), len(strtab))
    body = b"".join(cmds)
    head = struct.pack("<IIIIIIII", 0xFEEDFACF, cpu[0], cpu[1], filetype, len(cmds), len(body), 0x100085, 0)
    out = head + body
    if symbols:
        out += bytes(data_off - len(out)) + bytes(nlist) + bytes(strtab)
    return out


def fat(slices: list[bytes], *, wide: bool = False, nfat: int | None = None, align: int = 12,
        cpus: list[tuple[int, int]] | None = None, overlap: int = 0, lie_sizes: dict[int, int] | None = None,
        dup_offsets: bool = False) -> bytes:
    """A universal binary over ``slices`` laid out at ``1 << align`` boundaries. ``nfat`` may
    claim more (or fewer) entries than there are slices (the missing ones repeat the last);
    ``overlap`` pulls every slice after the first that many bytes back over its predecessor;
    ``lie_sizes`` replaces the size of entry i; ``dup_offsets`` points every entry at the first."""
    n = len(slices) if nfat is None else nfat
    listed = min(n, 4096)
    entsize = 32 if wide else 20
    header_end = 8 + listed * entsize
    step = 1 << align
    pos = (header_end + step - 1) // step * step
    layout = []
    body = bytearray()
    base = pos
    for i, s in enumerate(slices):
        off = pos - (overlap if i and overlap else 0)
        off = max(off, header_end)
        layout.append((off, len(s)))
        body_at = off - base
        if len(body) < body_at + len(s):
            body.extend(bytes(body_at + len(s) - len(body)))
        body[body_at:body_at + len(s)] = s
        pos = (off + len(s) + step - 1) // step * step
    cpus = cpus or [_CPUS[i % len(_CPUS)] for i in range(listed)]
    entries = bytearray()
    for i in range(listed):
        off, size = layout[min(i, len(layout) - 1)] if layout else (header_end, 0)
        if dup_offsets and layout:
            off, size = layout[0]
        if lie_sizes and i in lie_sizes:
            size = lie_sizes[i]
        cpu, sub = cpus[i % len(cpus)]
        if wide:
            entries += struct.pack(">iiQQII", cpu - (1 << 32) if cpu >= 1 << 31 else cpu, sub, off,
                                   size & 0xFFFFFFFFFFFFFFFF, align, 0)
        else:
            entries += struct.pack(">iiIII", cpu - (1 << 32) if cpu >= 1 << 31 else cpu, sub, off & 0xFFFFFFFF,
                                   size & 0xFFFFFFFF, align)
    head = struct.pack(">4sI", b"\xca\xfe\xba\xbf" if wide else b"\xca\xfe\xba\xbe", n & 0xFFFFFFFF)
    out = bytearray(head + entries)
    out += bytes(base - len(out))
    out += body
    return bytes(out)


# =============================================================================================
# zips with local headers the central directory does not tell about


def _local(name: bytes, payload: bytes, crc: int, csize: int, usize: int, method: int, flags: int = 0) -> bytes:
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0, 0x21, crc & 0xFFFFFFFF,
                       csize & 0xFFFFFFFF, usize & 0xFFFFFFFF, len(name), 0) + name + payload


def _central(name: bytes, crc: int, csize: int, usize: int, method: int, offset: int) -> bytes:
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0314, 20, 0, method, 0, 0x21, crc & 0xFFFFFFFF,
                       csize & 0xFFFFFFFF, usize & 0xFFFFFFFF, len(name), 0, 0, 0, 0, 0o100644 << 16,
                       offset & 0xFFFFFFFF) + name


def smuggled_zip(members: list[tuple[bytes, bytes]], hidden: list[tuple[bytes, bytes]], rng: random.Random,
                 where: str = "gap", disagree: str | None = None) -> bytes:
    """A zip of ``members`` (all listed) and ``hidden`` local entries the central directory never
    lists: ``where`` = ``"gap"`` (a local header between two members), ``"after"`` (inside the
    span after a member's data, the directory's size for it made to cover the hidden entry too: a
    streaming reader stops at the real end and finds the next header), ``"front"`` (before the
    first member), ``"tail"`` (between the last member and the directory). ``disagree`` = a
    field (``"csize"``, ``"usize"``, ``"crc"``, ``"method"``, ``"name"``) in which one listed
    member's local header disagrees with the directory."""
    out = bytearray()
    cd = bytearray()
    n = 0

    def emit_hidden() -> None:
        for hname, hdata in hidden:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            payload = c.compress(hdata) + c.flush()
            out.extend(_local(hname, payload, zlib.crc32(hdata), len(payload), len(hdata), 8))

    if where == "front":
        emit_hidden()
    victim = rng.randrange(len(members)) if members and disagree else -1
    for i, (name, data) in enumerate(members):
        method = 8 if rng.random() < 0.7 else 0
        if method == 8:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            payload = c.compress(data) + c.flush()
        else:
            payload = data
        crc = zlib.crc32(data)
        offset = len(out)
        lname, lcrc, lcs, lus, lmethod = name, crc, len(payload), len(data), method
        if i == victim:
            if disagree == "csize":
                lcs = rng.choice((0, len(payload) + 1, max(0, len(payload) - 1), len(payload) + 4096))
            elif disagree == "usize":
                lus = rng.choice((0, len(data) + 1, max(0, len(data) - 1), len(data) * 2 + 1))
            elif disagree == "crc":
                lcrc = crc ^ 1
            elif disagree == "method":
                lmethod = 0 if method == 8 else 8
            elif disagree == "name":
                lname = name + b".so"
        out.extend(_local(lname, payload, lcrc, lcs, lus, lmethod))
        csize_cd = len(payload)
        if where == "after" and i == 0:
            start = len(out)
            emit_hidden()
            csize_cd += len(out) - start if rng.random() < 0.5 else 0
        elif where == "gap" and i == 0 and len(members) > 1:
            emit_hidden()
        cd.extend(_central(name, crc, csize_cd, len(data), method, offset))
        n += 1
    if where == "tail" or (where in ("gap", "after") and len(members) < 1):
        emit_hidden()
    if where == "gap" and len(members) == 1:
        emit_hidden()
    cd_start = len(out)
    out.extend(cd)
    out.extend(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(cd), cd_start, 0))
    return bytes(out)


# =============================================================================================
# CMake

BLOCKS = (("if(X)", "endif()"), ("if(NOT TARGET p::p)", "else()\nendif()"), ("foreach(x IN ITEMS a b)", "endforeach()"),
          ("while(FALSE)", "endwhile()"), ("function(f_{i})", "endfunction()"), ("macro(m_{i})", "endmacro()"),
          ("block()", "endblock()"), ("if(WIN32)\nelseif(APPLE)", "endif()"))


def cmake_nesting(rng: random.Random, depth: int, *, unclosed: int = 0, body: str = "") -> str:
    """``depth`` nested blocks around ``body``; the innermost ``unclosed`` are left open."""
    opens, closes = [], []
    kinds = [rng.choice(BLOCKS) for _ in range(min(depth, 64))]
    for i in range(depth):
        o, c = kinds[i % len(kinds)]
        opens.append(o.replace("{i}", str(i)))
        closes.append(c)
    closes = closes[: max(0, depth - unclosed)]
    return "\n".join(opens) + "\n" + body + "\n" + "\n".join(reversed(closes)) + "\n"


# =============================================================================================
# names that write into a CI log

#: a marker that the oracle looks for at the start of a line
MARK = "PWNED"
CONTROL_PIECES = (
    f"\n::error title={MARK}::x", f"\r\n::warning file={MARK}::y", f"\n::notice::{MARK}", f"\n::add-mask::{MARK}",
    f"\n::stop-commands::{MARK}", f"\n::group::{MARK}", "\x1b[31m", "\x1b]8;;http://x\x07", "\x1b[2J", "\x07",
    "\x00", "\x08", "\x7f", "\u2028", "\u2029", "\x85", "\u202e", "\r", "\n", "\t", "\x0c", "\x0b",
    f"%0A::error::{MARK}", "<script>", "]]>", "&#x1b;", "\"'&<>",
)


# =============================================================================================
# PE


def pe_dll(imports: list[tuple[bytes, list[bytes]]], *, descriptor_per_name: bool = False,
           machine: int = 0x8664) -> bytes:
    """A PE32+ DLL of headers and one ``.idata`` section: an import directory for ``imports``
    ((DLL, names) in order). With ``descriptor_per_name`` every name gets a descriptor of its own
    (the same DLL named again and again), as some linkers write import tables."""
    groups = ([(dll, [n]) for dll, names in imports for n in names] if descriptor_per_name else imports)
    base = 0x1000  # the section's RVA
    ndesc = len(groups)
    desc_size = 20 * (ndesc + 1)
    body = bytearray(desc_size)
    dll_rva: dict[bytes, int] = {}
    name_rva: dict[bytes, int] = {}
    for dll, names in groups:
        for n in names:
            if n not in name_rva:
                name_rva[n] = base + len(body)
                body += struct.pack("<H", 0) + n + b"\0" + (b"\0" if (len(n) + 3) % 2 else b"")
        if dll not in dll_rva:
            dll_rva[dll] = base + len(body)
            body += dll + b"\0"
    while len(body) % 8:
        body += b"\0"
    for i, (dll, names) in enumerate(groups):
        ilt = base + len(body)
        body += b"".join(struct.pack("<Q", name_rva[n]) for n in names) + bytes(8)
        struct.pack_into("<IIIII", body, 20 * i, ilt, 0, 0, dll_rva[dll], ilt)
    raw = 0x200
    size = (len(body) + 0x1FF) & ~0x1FF
    dos = bytearray(b"MZ" + bytes(0x3A) + struct.pack("<I", 0x40))
    coff = struct.pack("<HHIIIHH", machine, 1, 0, 0, 0, 0xF0, 0x2022)
    opt = bytearray(0xF0)
    struct.pack_into("<HBB", opt, 0, 0x20B, 14, 0)
    struct.pack_into("<Q", opt, 24, 0x180000000)
    struct.pack_into("<II", opt, 32, 0x1000, 0x200)  # section and file alignment
    struct.pack_into("<HH", opt, 48, 6, 0)  # subsystem version
    struct.pack_into("<II", opt, 56, base + ((len(body) + 0xFFF) & ~0xFFF), raw)  # SizeOfImage, SizeOfHeaders
    struct.pack_into("<H", opt, 68, 3)  # console
    struct.pack_into("<I", opt, 108, 16)
    struct.pack_into("<II", opt, 112 + 8, base, desc_size)  # the import directory
    sect = b".idata\0\0" + struct.pack("<IIIIIIHHI", len(body), base, size, raw, 0, 0, 0, 0, 0xC0000040)
    head = bytes(dos) + b"PE\0\0" + coff + bytes(opt) + sect
    return head + bytes(raw - len(head)) + bytes(body) + bytes(size - len(body))
