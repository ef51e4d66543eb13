"""The Mach-O reader (``wheelaudit.binary.macho``).

* Differential: for every slice of every Mach-O file in ``fixture_libs`` (tests/conftest.py, built
  by fixtures/build_fixtures.sh) and of the extra files this module builds (clang + ld64.lld +
  llvm-lipo: weak definitions, thread-locals, weak/re-exported dylibs, an executable, a bundle, a
  9-architecture universal object file, a fat64 file, an LC_DYLD_EXPORTS_TRIE image; plus
  synthetic images written here: big-endian ppc/ppc64, every dependency kind, re-exports, resolvers),
  our facts must equal both macholib's and lief's.
* Known facts of the fixture sources, so that agreement is not vacuous.
* Hostile input: truncation, corrupt load commands, bad fat headers, fat-in-fat, cyclic and
  overlong export tries, unterminated strings, random corruption: always ``MalformedBinary``
  (never another exception, never a hang).
"""

from __future__ import annotations

import dataclasses
import mmap
import os
import pickle
import random
import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import lief
import pytest
from macholib.MachO import MachO
from macholib.SymbolTable import SymbolTable

from wheelaudit.model.binary import Slice, Symbol
from wheelaudit.binary import MalformedBinary, read_binary
from wheelaudit.binary import macho
from wheelaudit.binary.demangle import demangle

lief.logging.disable()
# lief's CPU_TYPE enum has no arm64_32: it warns and hands back the raw number
pytestmark = pytest.mark.filterwarnings("ignore:.*is not a valid CPU_TYPE:RuntimeWarning")

# ==============================================================================================
# Reference tables, written from <mach/machine.h> / <mach-o/loader.h> independently of the reader
# ==============================================================================================
REF_ARCH = {
    (7, 3): "i386",
    (0x01000007, 3): "x86_64",
    (0x01000007, 8): "x86_64h",
    (12, 9): "armv7",
    (12, 11): "armv7s",
    (12, 12): "armv7k",
    (0x0100000C, 0): "arm64",
    (0x0100000C, 2): "arm64e",
    (0x0200000C, 1): "arm64_32",
    (18, 0): "ppc",
    (0x01000012, 0): "ppc64",
}
REF_KIND = {1: "object", 2: "executable", 6: "shared", 8: "bundle", 9: "shared"}
LC_ID_DYLIB, LC_RPATH, LC_BUILD_VERSION = 0xD, 0x8000001C, 0x32
REF_DEPS = {0xC: "load", 0x80000018: "weak", 0x8000001F: "reexport", 0x80000023: "upward", 0x20: "lazy"}
REF_VERSION_MIN = {0x24, 0x25, 0x2F, 0x30}
N_STAB, N_PEXT, N_TYPE, N_EXT, N_SECT, N_ABS = 0xE0, 0x10, 0x0E, 0x01, 0x0E, 0x02
CODE_FLAGS = 0x80000400  # S_ATTR_PURE_INSTRUCTIONS | S_ATTR_SOME_INSTRUCTIONS

T = lief.MachO.LoadCommand.TYPE
LIEF_DEPS = {T.LOAD_DYLIB: "load", T.LOAD_WEAK_DYLIB: "weak", T.REEXPORT_DYLIB: "reexport",
             T.LOAD_UPWARD_DYLIB: "upward", T.LAZY_LOAD_DYLIB: "lazy"}
LIEF_KIND = {"OBJECT": "object", "EXECUTE": "executable", "DYLIB": "shared", "BUNDLE": "bundle"}
EXPORT_WEAK, EXPORT_REEXPORT = 0x04, 0x08

MACHO_MAGICS = {b"\xfe\xed\xfa\xce", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xcf\xfa\xed\xfe",
                b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf"}


def is_macho(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(4) in MACHO_MAGICS


def undecorate(name: str | bytes) -> str:
    if isinstance(name, bytes):
        name = name.decode()
    return name[1:] if name.startswith("_") else name


def fmt_version(v: int) -> str:
    x, y, z = v >> 16, (v >> 8) & 0xFF, v & 0xFF
    return f"{x}.{y}.{z}" if z else f"{x}.{y}"


def fmt_version_list(parts) -> str:
    x, y, z = list(parts)
    return f"{x}.{y}.{z}" if z else f"{x}.{y}"


def _int(v) -> int:
    return v if isinstance(v, int) else int(v.value)


# ==============================================================================================
# Views: the facts compared, from our reader, from macholib and from lief
# ==============================================================================================
def our_view(s: Slice) -> dict:
    return {
        "arch": s.arch,
        "kind": s.kind,
        "offset": s.offset,
        "identity": s.identity,
        "dependencies": [(d.name, d.kind) for d in s.dependencies],
        "rpaths": [r.path for r in s.rpaths],
        "min_os": s.min_os,
        "exports": {(x.name, x.weak) for x in s.exports},
        "imports": set(s.imports),
        "locals": {x.name for x in s.locals},
    }


def _cstr(data: bytes) -> str:
    return data.split(b"\0", 1)[0].decode()


def macholib_view(path: Path) -> list[dict]:
    m = MachO(str(path))
    views = []
    for h in m.headers:
        v = {
            "arch": REF_ARCH.get((h.header.cputype & 0xFFFFFFFF, h.header.cpusubtype & 0xFFFFFF)),
            "kind": REF_KIND.get(h.header.filetype, "shared"),
            "offset": h.offset,
            "identity": None,
            "dependencies": [],
            "rpaths": [],
            "min_os": None,
        }
        builds, vmin = [], None
        for lc, cmd, data in h.commands:
            if lc.cmd == LC_ID_DYLIB and v["identity"] is None:
                v["identity"] = _cstr(data)
            elif lc.cmd in REF_DEPS:
                v["dependencies"].append((_cstr(data), REF_DEPS[lc.cmd]))
            elif lc.cmd == LC_RPATH:
                v["rpaths"].append(_cstr(data))
            elif lc.cmd == LC_BUILD_VERSION:
                builds.append((int(cmd.platform), int(cmd.minos)))
            elif lc.cmd in REF_VERSION_MIN and vmin is None:
                vmin = int(cmd.version)
        if builds:
            v["min_os"] = fmt_version(next((b for b in builds if b[0] == 1), builds[0])[1])
        elif vmin is not None:
            v["min_os"] = fmt_version(vmin)
        st = SymbolTable(m, h)
        defined = (N_SECT, N_ABS)
        v["exports"] = {
            (undecorate(name), bool(nl.n_desc & 0x80))
            for nl, name in st.extdefsyms
            if not nl.n_type & N_PEXT and not nl.n_type & N_STAB and nl.n_type & N_TYPE in defined
        }
        v["imports"] = {undecorate(name) for nl, name in st.undefsyms if nl.n_value == 0}
        v["locals"] = {
            undecorate(name) for nl, name in st.localsyms
            if not nl.n_type & N_STAB and nl.n_type & N_TYPE in defined
        } | {
            undecorate(name) for nl, name in st.extdefsyms
            if nl.n_type & N_PEXT and not nl.n_type & N_STAB and nl.n_type & N_TYPE in defined
        }
        views.append(v)
    return views


def _lief_weak(s) -> bool:
    if s.has_export_info:
        return bool(int(s.export_info.flags) & EXPORT_WEAK)
    return bool(s.description & 0x80)


def _lief_reexport(s) -> bool:
    return s.has_export_info and bool(int(s.export_info.flags) & EXPORT_REEXPORT)


def _lief_symtab_defined(s) -> bool:
    raw = s.raw_type
    return (s.origin == lief.MachO.Symbol.ORIGIN.SYMTAB and not raw & N_STAB
            and raw & N_TYPE in (N_SECT, N_ABS))


def lief_binaries(path: Path) -> list[tuple[object, int]]:
    """(lief binary, slice offset) per slice. lief 1.0 cannot open FAT_MAGIC_64 files (returns
    None): for those it is handed each slice's bytes, cut where macholib places them."""
    fat = lief.MachO.parse(str(path))
    if fat is None and path.read_bytes()[:4] == b"\xca\xfe\xba\xbf":
        data = path.read_bytes()
        out = []
        for h in MachO(str(path)).headers:
            thin = lief.MachO.parse(list(data[h.offset : h.offset + h.size]))
            assert thin is not None, f"lief could not parse {path} slice at {h.offset}"
            out.append((thin.at(0), h.offset))
        return out
    assert fat is not None, f"lief could not parse {path}"
    return [(fat.at(i), fat.at(i).fat_offset) for i in range(fat.size)]


def lief_view(path: Path) -> list[dict]:
    views = []
    for b, offset in lief_binaries(path):
        file_type = b.header.file_type.name
        cmds = list(b.commands)
        v = {
            "arch": REF_ARCH.get((_int(b.header.cpu_type) & 0xFFFFFFFF, b.header.cpu_subtype & 0xFFFFFF)),
            "kind": LIEF_KIND.get(file_type, "shared"),
            "offset": offset,
            "identity": next((c.name for c in cmds if c.command == T.ID_DYLIB), None),
            "dependencies": [(c.name, LIEF_DEPS[c.command]) for c in cmds if c.command in LIEF_DEPS],
            "rpaths": [c.path for c in cmds if c.command == T.RPATH],
            "min_os": None,
        }
        if b.has_build_version:
            v["min_os"] = fmt_version_list(b.build_version.minos)
        elif b.has_version_min:
            v["min_os"] = fmt_version_list(b.version_min.version)
        if not (b.has_dyld_info or b.has_dyld_exports_trie):
            # without an export trie (MH_OBJECT, pre-10.6 images) lief lists no exported_symbols:
            # take the external definitions from its nlist symbols
            v["exports"] = {(undecorate(s.name), bool(s.description & 0x80)) for s in b.symbols
                            if _lief_symtab_defined(s) and s.raw_type & N_EXT and not s.raw_type & N_PEXT}
        else:
            v["exports"] = {(undecorate(s.name), _lief_weak(s)) for s in b.exported_symbols
                            if not _lief_reexport(s)}
        # lief 1.0 counts debug stabs with value 0 (N_GSYM) as imported symbols: leave them out
        v["imports"] = {undecorate(s.name) for s in b.imported_symbols if not s.raw_type & N_STAB}
        v["locals"] = {undecorate(s.name) for s in b.symbols if _lief_symtab_defined(s)
                       and (not s.raw_type & N_EXT or s.raw_type & N_PEXT)}
        views.append(v)
    return views


def lief_export_types(path: Path) -> list[dict[str, str]]:
    """name -> "func"/"data" per slice, from lief's own section lookup of each export's address."""
    out = []
    for b, _ in lief_binaries(path):
        types = {}
        for s in b.exported_symbols:
            if _lief_reexport(s):
                continue
            if s.has_export_info:
                kind = s.export_info.kind.name
                if kind != "REGULAR":  # thread-local, absolute
                    types[undecorate(s.name)] = "data"
                    continue
                address = s.export_info.address + b.imagebase
            else:
                address = s.value
            section = b.section_from_virtual_address(address)
            is_code = section is not None and int(section.flags) & CODE_FLAGS
            types[undecorate(s.name)] = "func" if is_code else "data"
        out.append(types)
    return out


def compare(ours: list[dict], ref: list[dict], ref_name: str, label: str) -> list[str]:
    """Mismatch descriptions between our views and a reference's (empty when they agree)."""
    problems = []
    if len(ours) != len(ref):
        return [f"{label}: {len(ours)} slices, {ref_name} sees {len(ref)}"]
    for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
        for key in b:
            if a[key] != b[key]:
                detail = ""
                if isinstance(a[key], set):
                    detail = f" (only ours: {sorted(a[key] - b[key])}, only {ref_name}: {sorted(b[key] - a[key])})"
                problems.append(f"{label} slice {i} ({a['arch']}): {key}: ours {a[key]!r} != "
                                f"{ref_name} {b[key]!r}{detail}")
    return problems


def check_file(path: Path, label: str) -> list[str]:
    data = path.read_bytes()
    binary = read_binary(data, label)
    if binary is None or binary.error:
        return [f"{label}: read_binary failed: {binary and binary.error}"]
    slices = macho.parse(data)
    ours = [our_view(s) for s in slices]
    problems = compare(ours, macholib_view(path), "macholib", label)
    problems += compare(ours, lief_view(path), "lief", label)
    for i, (s, types) in enumerate(zip(slices, lief_export_types(path), strict=False)):
        mine = {x.name: x.type for x in s.exports}
        for name, t in types.items():
            if name in mine and mine[name] != t:
                problems.append(f"{label} slice {i}: export {name!r} type ours {mine[name]} != lief {t}")
        if len(set(s.imports)) != len(s.imports):
            problems.append(f"{label} slice {i}: duplicate imports")
        if len({x.name for x in s.exports}) != len(s.exports):
            problems.append(f"{label} slice {i}: duplicate exports")
        if s.stripped != (not s.locals):
            problems.append(f"{label} slice {i}: stripped={s.stripped} with {len(s.locals)} locals")
        for x in s.exports + s.locals:
            if x.demangled != demangle(x.name):
                problems.append(f"{label} slice {i}: {x.name!r} demangled as {x.demangled!r}")
    return problems


# ==============================================================================================
# Synthetic images: a tiny Mach-O writer (ld64's layout), for what the toolchain cannot produce
# ==============================================================================================
def uleb(v: int) -> bytes:
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def term_regular(address: int, flags: int = 0) -> bytes:
    return uleb(flags) + uleb(address)


def term_reexport(ordinal: int, imported: bytes = b"", flags: int = 0) -> bytes:
    return uleb(flags | EXPORT_REEXPORT) + uleb(ordinal) + imported + b"\0"


def term_resolver(stub: int, resolver: int, flags: int = 0) -> bytes:
    return uleb(flags | 0x10) + uleb(stub) + uleb(resolver)


class _TrieNode:
    def __init__(self) -> None:
        self.term: bytes | None = None
        self.kids: dict[bytes, _TrieNode] = {}


def encode_trie(entries: dict[bytes, bytes]) -> bytes:
    """An export trie (edge labels compressed, nodes in preorder, as ld64 lays it out)."""
    root = _TrieNode()
    for name, term in entries.items():
        node = root
        for ch in name:
            node = node.kids.setdefault(bytes([ch]), _TrieNode())
        node.term = term

    def compress(node: _TrieNode) -> None:
        kids = {}
        for label, child in node.kids.items():
            while child.term is None and len(child.kids) == 1:
                ((more, child),) = child.kids.items()
                label += more
            compress(child)
            kids[label] = child
        node.kids = kids

    compress(root)
    nodes: list[_TrieNode] = []

    def walk(node: _TrieNode) -> None:
        nodes.append(node)
        for child in node.kids.values():
            walk(child)

    walk(root)
    offsets = {id(n): 0 for n in nodes}

    def node_bytes(node: _TrieNode) -> bytes:
        out = bytearray(uleb(len(node.term)) + node.term if node.term else b"\0")
        out.append(len(node.kids))
        for label, child in node.kids.items():
            out += label + b"\0" + uleb(offsets[id(child)])
        return bytes(out)

    while True:
        pos, changed = 0, False
        for n in nodes:
            if offsets[id(n)] != pos:
                offsets[id(n)], changed = pos, True
            pos += len(node_bytes(n))
        if not changed:
            return b"".join(node_bytes(n) for n in nodes)


@dataclass
class Synth:
    """A thin image: __TEXT (__text), __DATA (__data, __thread_vars), __LINKEDIT (trie, symtab)."""

    cputype: int = 0x0100000C
    cpusubtype: int = 0
    filetype: int = 6
    is64: bool = True
    big_endian: bool = False
    identity: str | None = "@rpath/libsynth.dylib"
    dylibs: list[tuple[int, str]] = field(default_factory=list)
    rpaths: list[str] = field(default_factory=list)
    build_version: tuple[int, int, int] | None = None  # (platform, minos, sdk)
    more_build_versions: list[tuple[int, int, int]] = field(default_factory=list)  # zippered images
    version_min: tuple[int, int, int] | None = None  # (cmd, version, sdk)
    symbols: list[tuple[bytes, int, int, int, int]] = field(default_factory=list)
    trie: bytes | None = None
    trie_cmd: str = "dyld_info"  # or "exports_trie"

    # file layout
    TEXT, DATA, LINKEDIT = 0x1000, 0x2000, 0x3000

    def build(self) -> bytes:
        e = ">" if self.big_endian else "<"
        align = 8 if self.is64 else 4
        header_size = 32 if self.is64 else 28

        def pad(b: bytes) -> bytes:
            return b + b"\0" * (-len(b) % align)

        def lc_with_str(cmd: int, fixed: bytes, text: str) -> bytes:
            body = pad(fixed + text.encode() + b"\0")
            return struct.pack(e + "II", cmd, 8 + len(body)) + body[0:]

        # ---- linkedit: trie, symbol table, string table ----
        linkedit = bytearray(self.trie or b"")
        linkedit += b"\0" * (-len(linkedit) % 8)
        locals_, extdefs, undefs = [], [], []
        for sym in self.symbols:
            name, n_type = sym[0], sym[1]
            if n_type & N_STAB or not n_type & N_EXT:
                locals_.append(sym)
            elif n_type & N_TYPE in (0x0, 0xC):
                undefs.append(sym)
            else:
                extdefs.append(sym)
        ordered = locals_ + extdefs + undefs
        strtab = bytearray(b" \0")
        nl_fmt = e + ("IBBHQ" if self.is64 else "IBBHI")
        symoff = self.LINKEDIT + len(linkedit)
        for name, n_type, n_sect, n_desc, n_value in ordered:
            strx = len(strtab)
            strtab += name + b"\0"
            linkedit += struct.pack(nl_fmt, strx, n_type, n_sect, n_desc, n_value)
        stroff = self.LINKEDIT + len(linkedit)
        linkedit += strtab
        linkedit += b"\0" * (-len(linkedit) % 8)

        # ---- load commands ----
        P = "Q" if self.is64 else "I"
        seg_cmd = 0x19 if self.is64 else 0x1
        seg_fmt = e + "II16s" + P * 4 + "iiII"
        sect_fmt = e + "16s16s" + P * 2 + "IIIII" + ("III" if self.is64 else "II")

        def segment(name: bytes, vmaddr: int, vmsize: int, fileoff: int, filesize: int,
                    sections: list[tuple[bytes, int, int, int, int]]) -> bytes:
            head = struct.calcsize(seg_fmt)
            size = head + len(sections) * struct.calcsize(sect_fmt)
            out = struct.pack(seg_fmt, seg_cmd, size, name, vmaddr, vmsize, fileoff, filesize,
                              7, 5, len(sections), 0)
            for sect, addr, sz, off, flags in sections:
                extra = (0, 0, 0) if self.is64 else (0, 0)
                out += struct.pack(sect_fmt, sect, name, addr, sz, off, 0, 0, 0, flags, *extra)
            return out

        cmds = [
            segment(b"__TEXT", 0, 0x2000, 0, 0x2000, [(b"__text", 0x1000, 0x100, 0x1000, CODE_FLAGS)]),
            segment(b"__DATA", 0x2000, 0x1000, 0x2000, 0x1000,
                    [(b"__data", 0x2000, 0x100, 0x2000, 0), (b"__thread_vars", 0x2100, 0x18, 0x2100, 0x13)]),
            segment(b"__LINKEDIT", 0x3000, (len(linkedit) + 0xFFF) & ~0xFFF, 0x3000, len(linkedit), []),
        ]
        if self.trie is not None:
            if self.trie_cmd == "dyld_info":
                cmds.append(struct.pack(e + "12I", 0x80000022, 48, 0, 0, 0, 0, 0, 0, 0, 0,
                                        self.LINKEDIT, len(self.trie)))
            else:
                cmds.append(struct.pack(e + "4I", 0x80000033, 16, self.LINKEDIT, len(self.trie)))
        cmds.append(struct.pack(e + "6I", 2, 24, symoff, len(ordered), stroff, len(strtab)))
        n_l, n_e, n_u = len(locals_), len(extdefs), len(undefs)
        cmds.append(struct.pack(e + "20I", 0xB, 80, 0, n_l, n_l, n_e, n_l + n_e, n_u, *[0] * 12))
        if self.identity is not None:
            cmds.append(lc_with_str(LC_ID_DYLIB, struct.pack(e + "4I", 24, 2, 0x10203, 0x10000), self.identity))
        for cmd, name in self.dylibs:
            cmds.append(lc_with_str(cmd, struct.pack(e + "4I", 24, 2, 0x10000, 0x10000), name))
        for path in self.rpaths:
            cmds.append(lc_with_str(LC_RPATH, struct.pack(e + "I", 12), path))
        for build in [self.build_version] * (self.build_version is not None) + self.more_build_versions:
            platform, minos, sdk = build
            cmds.append(struct.pack(e + "6I", LC_BUILD_VERSION, 32, platform, minos, sdk, 1)
                        + struct.pack(e + "II", 3, 0x10000))
        if self.version_min is not None:
            cmd, version, sdk = self.version_min
            cmds.append(struct.pack(e + "4I", cmd, 16, version, sdk))
        blob = b"".join(cmds)
        magic = 0xFEEDFACF if self.is64 else 0xFEEDFACE
        header = struct.pack(e + "7I", magic, self.cputype, self.cpusubtype, self.filetype,
                             len(cmds), len(blob), 0x85)
        if self.is64:
            header += b"\0\0\0\0"
        image = bytearray(header + blob)
        assert len(image) <= self.TEXT
        image += b"\0" * (self.LINKEDIT - len(image))
        image[self.TEXT : self.TEXT + 4] = b"\xd6\x5f\x03\xc0"  # some "code"
        image += linkedit
        assert len(header) == header_size
        return bytes(image)


def make_fat(slices: list[tuple[int, int, bytes]], fat64: bool = False, align: int = 12,
             reverse_layout: bool = False) -> bytes:
    """A universal file; ``reverse_layout`` stores the slices in the opposite order of the header."""
    entsize = 32 if fat64 else 20
    offset = 8 + entsize * len(slices)
    placed = {}
    for index in (reversed(range(len(slices))) if reverse_layout else range(len(slices))):
        offset = (offset + (1 << align) - 1) & ~((1 << align) - 1)
        placed[index] = offset
        offset += len(slices[index][2])
    out = bytearray(struct.pack(">II", 0xCAFEBABF if fat64 else 0xCAFEBABE, len(slices)))
    for index, (cputype, cpusubtype, image) in enumerate(slices):
        if fat64:
            out += struct.pack(">iiQQII", cputype, cpusubtype, placed[index], len(image), align, 0)
        else:
            out += struct.pack(">iiIII", cputype, cpusubtype, placed[index], len(image), align)
    for index, offset in sorted(placed.items(), key=lambda kv: kv[1]):
        out += b"\0" * (offset - len(out)) + slices[index][2]
    return bytes(out)


LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB = 0xC, 0x80000018, 0x8000001F
LC_LOAD_UPWARD_DYLIB, LC_LAZY_LOAD_DYLIB = 0x80000023, 0x20

RICH_SYMBOLS = [
    (b"src.c", 0x64, 0, 0, 0),  # N_SO (debug stab)
    (b"", 0x2E, 1, 0, 0x1040),  # N_BNSYM: a stab whose type bits look like N_SECT
    (b"_static_fn", 0x24, 1, 0, 0x1040),  # N_FUN (debug stab)
    (b"", 0x4E, 1, 0, 0x1044),  # N_ENSYM
    (b"_stab_global", 0x20, 0, 0, 0),  # N_GSYM
    (b"_static_fn", N_SECT, 1, 0, 0x1040),
    (b"_static_data", N_SECT, 2, 0, 0x2040),
    (b"_hidden_fn", N_SECT | N_PEXT, 1, 0, 0x1050),  # private extern, as ld64 leaves it
    (b"_pub_fn", N_SECT | N_EXT, 1, 0, 0x1000),
    (b"__ZN2ns3fooEv", N_SECT | N_EXT, 1, 0, 0x1010),
    (b"_resolver_fn", N_SECT | N_EXT, 1, 0, 0x1020),
    (b"_weak_data", N_SECT | N_EXT, 2, 0x80, 0x2000),
    (b"_tlv_var", N_SECT | N_EXT, 3, 0, 0x2100),
    (b"_abs_sym", N_ABS | N_EXT, 0, 0, 0x1080),  # absolute: data, though the value lies in __text
    (b"_malloc", N_EXT, 0, 0x0100, 0),
    (b"dyld_stub_binder", N_EXT, 0, 0x0100, 0),
    (b"_up_fn", N_EXT, 0, 0x0400, 0),
]
RICH_TRIE = {
    b"_pub_fn": term_regular(0x1000),
    b"__ZN2ns3fooEv": term_regular(0x1010),
    b"_resolver_fn": term_resolver(0x1020, 0x1030),
    b"_weak_data": term_regular(0x2000, EXPORT_WEAK),
    b"_tlv_var": term_regular(0x2100, 0x01),
    b"_abs_sym": term_regular(0x1080, 0x02),
    b"_reexported_alias": term_reexport(3, b"_other"),
}
RICH_DYLIBS = [
    (LC_LOAD_DYLIB, "/usr/lib/libSystem.B.dylib"),
    (LC_LOAD_WEAK_DYLIB, "@rpath/libweak.dylib"),
    (LC_REEXPORT_DYLIB, "@rpath/libre.dylib"),
    (LC_LOAD_UPWARD_DYLIB, "@rpath/libup.dylib"),
    (LC_LAZY_LOAD_DYLIB, "@rpath/liblazy.dylib"),
]


def rich(**kw) -> Synth:
    base = dict(identity="@rpath/librich.dylib", dylibs=list(RICH_DYLIBS),
                rpaths=["@loader_path", "@loader_path/../Frameworks"],
                build_version=(1, 0x0C0301, 0x0D0000), symbols=list(RICH_SYMBOLS), trie=encode_trie(RICH_TRIE))
    base.update(kw)
    return Synth(**base)


PPC_SYMBOLS = [
    (b"_ppc_local", N_SECT, 1, 0, 0x1008),
    (b"_ppc_fn", N_SECT | N_EXT, 1, 0, 0x1000),
    (b"_ppc_weak", N_SECT | N_EXT, 2, 0x80, 0x2000),
    (b"_printf", N_EXT, 0, 0x0100, 0),
]


def synthetic_files() -> dict[str, bytes]:
    ppc = Synth(cputype=18, cpusubtype=0, is64=False, big_endian=True, identity="/usr/lib/libppc.dylib",
                dylibs=[(LC_LOAD_DYLIB, "/usr/lib/libSystem.B.dylib")], version_min=(0x24, 0x0A0400, 0x0A0400),
                symbols=PPC_SYMBOLS)
    ppc64 = Synth(cputype=0x01000012, cpusubtype=0, is64=True, big_endian=True, identity="/usr/lib/libppc.dylib",
                  dylibs=[(LC_LOAD_DYLIB, "/usr/lib/libSystem.B.dylib")], version_min=(0x24, 0x0A0500, 0),
                  symbols=PPC_SYMBOLS, trie=encode_trie({b"_ppc_fn": term_regular(0x1000),
                                                         b"_ppc_weak": term_regular(0x2000, EXPORT_WEAK)}))
    ios = rich(version_min=(0x25, 0x0E0000, 0x100000), build_version=None, cputype=0x0100000C, cpusubtype=2)
    x86 = rich(cputype=0x01000007, cpusubtype=3, filetype=8, identity=None)
    return {
        "rich.dylib": rich().build(),
        "rich_exports_trie.dylib": rich(trie_cmd="exports_trie").build(),
        "rich_no_trie.dylib": rich(trie=None).build(),
        "ppc.dylib": ppc.build(),
        "ppc64.dylib": ppc64.build(),
        "fat_synthetic.dylib": make_fat([(0x0100000C, 0, rich().build()), (18, 0, ppc.build()),
                                         (0x01000007, 3, x86.build())]),
        "fat64_synthetic.dylib": make_fat([(0x01000012, 0, ppc64.build()), (0x0100000C, 2, ios.build())],
                                          fat64=True),
        "fat_reversed_layout.dylib": make_fat([(18, 0, ppc.build()), (0x0100000C, 0, rich().build()),
                                               (0x01000007, 3, x86.build())], reverse_layout=True),
    }


# ==============================================================================================
# Extra toolchain-built files
# ==============================================================================================
EXTRA_C = r"""
#define API __attribute__((visibility("default")))
int base_value(void);
API __attribute__((weak)) int extra_weak_fn(int x) { return x + 1; }
API __attribute__((weak)) int extra_weak_data = 5;
API int extra_strong(void) { return base_value() + extra_weak_fn(1); }
API __thread int extra_tlv = 3;
API const char extra_message[] = "wheelaudit extra marker";
static int extra_counter;
API int extra_bump(void) { return ++extra_counter + extra_tlv; }
"""
MAIN_C = "int base_value(void);\nint main(void) { return base_value(); }\n"
BUNDLE_C = r"""
#define API __attribute__((visibility("default")))
void *PyLong_FromLong(long);
API void *PyInit_ext(void) { return PyLong_FromLong(42); }
"""
OBJECT_C = r"""
#define API __attribute__((visibility("default")))
API int obj_fn(int x) { return x + 1; }
API int obj_data = 3;
__attribute__((visibility("hidden"))) int obj_hidden(int x) { return x * 2; }
static int obj_static(int x) { return x - 1; }
extern int obj_ext(int);
API __attribute__((weak)) int obj_weak(int x) { return obj_ext(obj_static(x)) + obj_hidden(x); }
"""
OBJECT_TARGETS = ["i386-apple-macos10.13", "x86_64-apple-macos10.13", "x86_64h-apple-macos10.15",
                  "armv7-apple-ios9", "armv7s-apple-ios9", "armv7k-apple-watchos4", "arm64_32-apple-watchos5",
                  "arm64-apple-macos11", "arm64e-apple-macos11"]
LIBSYSTEM_TBD = """--- !tapi-tbd
tbd-version:     4
targets:         [ x86_64-macos, arm64-macos ]
install-name:    '/usr/lib/libSystem.B.dylib'
current-version: 1311
exports:
  - targets:         [ x86_64-macos, arm64-macos ]
    symbols:         [ dyld_stub_binder, _malloc, _free, _printf, __tlv_bootstrap ]
...
"""


def llvm_bin() -> Path:
    clang = shutil.which("clang")
    if clang is None:
        pytest.fail("clang is missing (apt-get install clang lld llvm)", pytrace=False)
    bindir = Path(os.path.realpath(clang)).parent  # as build_fixtures.sh: /usr/lib/llvm-N/bin
    for tool in ("ld64.lld", "llvm-lipo"):
        if not (bindir / tool).exists():
            pytest.fail(f"{tool} is missing from {bindir} (apt-get install lld llvm)", pytrace=False)
    return bindir


def run(*args: object, cwd: Path) -> None:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        pytest.fail(f"{' '.join(map(str, args))} failed:\n{proc.stdout}{proc.stderr}", pytrace=False)


def thin_commands(image: bytes, base: int = 0):
    """(offset, cmd, cmdsize) of each load command of a well-formed little-endian 64-bit image."""
    ncmds = struct.unpack_from("<I", image, base + 16)[0]
    off = base + 32
    out = []
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", image, off)
        out.append((off, cmd, size))
        off += size
    return out


def with_exports_trie_command(image: bytes) -> bytes:
    """Move an image's export trie from LC_DYLD_INFO_ONLY to a new LC_DYLD_EXPORTS_TRIE."""
    out = bytearray(image)
    ncmds, sizeofcmds = struct.unpack_from("<II", out, 16)
    for off, cmd, _ in thin_commands(image):
        if cmd == 0x80000022:
            export_off, export_size = struct.unpack_from("<II", out, off + 40)
            struct.pack_into("<II", out, off + 40, 0, 0)
    end = 32 + sizeofcmds
    assert out[end : end + 16] == b"\0" * 16, "no header padding"
    struct.pack_into("<4I", out, end, 0x80000033, 16, export_off, export_size)
    struct.pack_into("<II", out, 16, ncmds + 1, sizeofcmds + 16)
    return bytes(out)


def to_fat64(fat: bytes) -> bytes:
    nfat = struct.unpack_from(">I", fat, 4)[0]
    header = bytearray(struct.pack(">II", 0xCAFEBABF, nfat))
    for i in range(nfat):
        cputype, cpusubtype, offset, size, align = struct.unpack_from(">iiIII", fat, 8 + 20 * i)
        header += struct.pack(">iiQQII", cputype, cpusubtype, offset, size, align, 0)
    first = min(struct.unpack_from(">I", fat, 8 + 20 * i + 8)[0] for i in range(nfat))
    assert len(header) <= first
    return bytes(header) + fat[len(header):]


@pytest.fixture(scope="session")
def macho_fixture_files(fixture_libs: Path) -> list[Path]:
    files = sorted(p for p in fixture_libs.rglob("*") if p.is_file() and not p.is_symlink() and is_macho(p))
    names = {p.relative_to(fixture_libs).as_posix() for p in files}
    for arch in ("arm64", "x86_64", "universal2"):
        for lib in ("libbase", "libfoo", "libmlx", "libbackend"):
            assert f"macho/{arch}/{lib}.dylib" in names, f"fixture_libs lacks macho/{arch}/{lib}.dylib"
    return files


@pytest.fixture(scope="session")
def extra_files(tmp_path_factory: pytest.TempPathFactory, fixture_libs: Path) -> dict[str, Path]:
    bindir = llvm_bin()
    out = tmp_path_factory.mktemp("macho_extra")
    (out / "sdk").mkdir()
    (out / "sdk" / "libSystem.tbd").write_text(LIBSYSTEM_TBD)
    for name, text in (("extra.c", EXTRA_C), ("main.c", MAIN_C), ("ext.c", BUNDLE_C), ("obj.c", OBJECT_C)):
        (out / name).write_text(text)
    clang, ld, lipo = bindir / "clang", bindir / "ld64.lld", bindir / "llvm-lipo"
    files: dict[str, Path] = {}
    for arch, minos in (("arm64", "11.0"), ("x86_64", "10.13")):
        libs = fixture_libs / "macho" / arch
        target = ["-target", f"{arch}-apple-macos{minos}", "-O1"]
        link = [ld, "-arch", arch, "-platform_version", "macos", minos, "11.0", "-L", "sdk", "-lSystem"]
        run(clang, *target, "-c", "extra.c", "-o", f"extra.{arch}.o", cwd=out)
        run(*link, "-dylib", "-headerpad_max_install_names", "-install_name", "@rpath/libextra.dylib",
            "-rpath", "@loader_path/../lib", "-o", f"libextra.{arch}.dylib", f"extra.{arch}.o",
            "-weak_library", libs / "libbase.dylib", "-reexport_library", libs / "libfoo.dylib", cwd=out)
        run(clang, *target, "-c", "main.c", "-o", f"main.{arch}.o", cwd=out)
        run(*link, "-execute", "-o", f"main.{arch}", f"main.{arch}.o", libs / "libbase.dylib", cwd=out)
        run(clang, *target, "-c", "ext.c", "-o", f"ext.{arch}.o", cwd=out)
        run(*link, "-bundle", "-undefined", "dynamic_lookup", "-o", f"ext.{arch}.so", f"ext.{arch}.o", cwd=out)
        for name in (f"libextra.{arch}.dylib", f"main.{arch}", f"ext.{arch}.so"):
            files[name] = out / name
    run(lipo, "-create", "libextra.arm64.dylib", "libextra.x86_64.dylib", "-output", "libextra.dylib", cwd=out)
    files["libextra.dylib"] = out / "libextra.dylib"
    objects = []
    for target in OBJECT_TARGETS:
        run(clang, "-target", target, "-O1", "-c", "obj.c", "-o", f"obj.{target}.o", cwd=out)
        objects.append(f"obj.{target}.o")
    run(lipo, "-create", *objects, "-output", "fat_objects.o", cwd=out)
    files["fat_objects.o"] = out / "fat_objects.o"
    files["obj.arm64.o"] = out / "obj.arm64-apple-macos11.o"
    (out / "libextra.fat64.dylib").write_bytes(to_fat64((out / "libextra.dylib").read_bytes()))
    files["libextra.fat64.dylib"] = out / "libextra.fat64.dylib"
    trie_image = with_exports_trie_command((out / "libextra.arm64.dylib").read_bytes())
    (out / "libextra.exports_trie.dylib").write_bytes(trie_image)
    files["libextra.exports_trie.dylib"] = out / "libextra.exports_trie.dylib"
    for name, data in synthetic_files().items():
        (out / name).write_bytes(data)
        files[name] = out / name
    return files


def parse_file(path: Path) -> list[Slice]:
    return macho.parse(path.read_bytes())


def by_name(symbols) -> dict:
    return {s.name: s for s in symbols}


# ==============================================================================================
# Differential tests
# ==============================================================================================
def test_differential_fixture_libs(fixture_libs: Path, macho_fixture_files: list[Path]) -> None:
    problems: list[str] = []
    nslices = 0
    for path in macho_fixture_files:
        problems += check_file(path, path.relative_to(fixture_libs).as_posix())
        nslices += len(parse_file(path))
    assert not problems, "\n".join(problems)
    assert any(len(parse_file(p)) > 1 for p in macho_fixture_files), "no universal fixture"
    assert nslices >= 16


def test_differential_extra_files(extra_files: dict[str, Path]) -> None:
    problems: list[str] = []
    for name, path in extra_files.items():
        problems += check_file(path, name)
    assert not problems, "\n".join(problems)


def test_comparison_detects_differences(fixture_libs: Path) -> None:
    """The differential check is not vacuous: each perturbed fact is reported."""
    path = fixture_libs / "macho" / "universal2" / "libfoo.dylib"
    base = [our_view(s) for s in parse_file(path)]
    ref = macholib_view(path)
    assert compare(base, ref, "macholib", "x") == []
    assert compare(base, lief_view(path), "lief", "x") == []
    perturbations = {
        "exports": lambda v: v["exports"].pop(),
        "weak": lambda v: v.__setitem__("exports", {(n, not w) for n, w in v["exports"]}),
        "imports": lambda v: v["imports"].add("extra"),
        "locals": lambda v: v["locals"].clear(),
        "dependencies": lambda v: v["dependencies"].reverse(),
        "rpaths": lambda v: v["rpaths"].pop(),
        "identity": lambda v: v.__setitem__("identity", "libfoo.dylib"),
        "arch": lambda v: v.__setitem__("arch", "arm64e"),
        "kind": lambda v: v.__setitem__("kind", "bundle"),
        "min_os": lambda v: v.__setitem__("min_os", "10.9"),
        "offset": lambda v: v.__setitem__("offset", 0),
    }
    for what, mutate in perturbations.items():
        views = [our_view(s) for s in parse_file(path)]
        mutate(views[1])
        assert compare(views, ref, "macholib", "x"), f"perturbed {what} went unnoticed"
    assert compare(base[:1], ref, "macholib", "x"), "a missing slice went unnoticed"


# ==============================================================================================
# Known facts (from the fixture sources)
# ==============================================================================================
def test_fixture_facts(fixture_libs: Path) -> None:
    d = fixture_libs / "macho"
    for arch, minos in (("arm64", "11.0"), ("x86_64", "10.13")):
        (foo,) = parse_file(d / arch / "libfoo.dylib")
        assert (foo.arch, foo.kind, foo.min_os, foo.sdk) == (arch, "shared", minos, "11.0")
        assert foo.identity == "@rpath/libfoo.dylib"
        assert [(x.name, x.kind) for x in foo.dependencies] == [
            ("/usr/lib/libSystem.B.dylib", "load"), ("@rpath/libbase.dylib", "load")]
        assert [(r.path, r.kind) for r in foo.rpaths] == [("@loader_path", "lc_rpath"),
                                                          ("@loader_path/../lib", "lc_rpath")]
        exports = by_name(foo.exports)
        assert set(exports) == {"foo_public", "foo_data", "foo_uses_hidden"}
        assert (exports["foo_public"].type, exports["foo_data"].type) == ("func", "data")
        assert all(x.binding == "global" for x in foo.exports)
        assert set(foo.imports) == {"base_value", "dyld_stub_binder"}
        assert by_name(foo.locals)["foo_hidden"].type == "func"
        assert by_name(foo.locals)["foo_hidden"].binding == "local"
        assert not foo.stripped and foo.offset == 0 and foo.size == (d / arch / "libfoo.dylib").stat().st_size

        (backend,) = parse_file(d / arch / "libbackend.dylib")
        demangled = {x.demangled for x in backend.exports}
        assert "executorch::runtime::register_backend(char const*, executorch::runtime::BackendInterface*)" in demangled
        assert "executorch_backend_init" in demangled
        assert "mlx::core::version()" in {demangle(n) for n in backend.imports}

        (mlx,) = parse_file(d / arch / "libmlx.dylib")
        assert {x.demangled for x in mlx.exports} == {
            "mlx::core::add(mlx::core::array const&, mlx::core::array const&)", "mlx::core::version()"}
        assert "mlx::core::internal_helper()" in {x.demangled for x in mlx.locals}

    stripped = fixture_libs / "macho" / "arm64" / "libfoo.stripped.dylib"
    if stripped.exists():
        (s,) = parse_file(stripped)
        assert s.stripped and s.locals == [] and len(s.exports) == 3

    universal = d / "universal2" / "libfoo.dylib"
    slices = parse_file(universal)
    assert sorted(s.arch for s in slices) == ["arm64", "x86_64"]
    data = universal.read_bytes()
    for s in slices:
        thin = (d / s.arch / "libfoo.dylib").read_bytes()
        assert data[s.offset : s.offset + s.size] == thin
        assert our_view(s) | {"offset": 0} == our_view(macho.parse(thin)[0])


def test_extra_facts(extra_files: dict[str, Path]) -> None:
    for name in ("libextra.arm64.dylib", "libextra.exports_trie.dylib"):
        (s,) = parse_file(extra_files[name])
        e = by_name(s.exports)
        assert set(e) == {"extra_weak_fn", "extra_weak_data", "extra_strong", "extra_tlv",
                          "extra_message", "extra_bump"}, name
        assert [e[n].binding for n in ("extra_weak_fn", "extra_weak_data", "extra_strong")] == [
            "weak", "weak", "global"]
        assert [e[n].type for n in ("extra_weak_fn", "extra_weak_data", "extra_tlv", "extra_message",
                                    "extra_bump")] == ["func", "data", "data", "data", "func"]
        kinds = [(x.name, x.kind) for x in s.dependencies]
        assert ("@rpath/libbase.dylib", "weak") in kinds and ("@rpath/libfoo.dylib", "reexport") in kinds
        assert "extra_counter" in {x.name for x in s.locals}
    (main,) = parse_file(extra_files["main.arm64"])
    assert main.kind == "executable" and main.identity is None
    assert by_name(main.exports)["_mh_execute_header"].type == "data"  # the header, not code
    assert by_name(main.exports)["main"].type == "func"
    (bundle,) = parse_file(extra_files["ext.x86_64.so"])
    assert bundle.kind == "bundle" and "PyLong_FromLong" in bundle.imports
    assert [x.name for x in bundle.exports] == ["PyInit_ext"]

    objects = parse_file(extra_files["fat_objects.o"])
    assert sorted(s.arch for s in objects) == sorted(["i386", "x86_64", "x86_64h", "armv7", "armv7s",
                                                      "arm64_32", "armv7k", "arm64", "arm64e"])
    for s in objects:
        assert s.kind == "object"
        assert {(x.name, x.binding, x.type) for x in s.exports} == {
            ("obj_fn", "global", "func"), ("obj_data", "global", "data"), ("obj_weak", "weak", "func")}
        assert s.imports == ["obj_ext"]
        assert "obj_hidden" in {x.name for x in s.locals}  # private extern
    by_arch = {s.arch: s for s in objects}
    assert (by_arch["armv7k"].min_os, by_arch["armv7"].min_os, by_arch["x86_64h"].min_os) == ("4.0", "9.0", "10.15")
    assert by_arch["arm64_32"].notes == ["deployment target is for watchos, not macOS"]
    assert by_arch["arm64"].notes == []

    fat64 = parse_file(extra_files["libextra.fat64.dylib"])
    fat32 = parse_file(extra_files["libextra.dylib"])
    assert [our_view(s) for s in fat64] == [our_view(s) for s in fat32]


def test_synthetic_facts(extra_files: dict[str, Path]) -> None:
    for name in ("rich.dylib", "rich_exports_trie.dylib"):
        (s,) = parse_file(extra_files[name])
        assert (s.arch, s.kind, s.min_os, s.sdk, s.identity) == ("arm64", "shared", "12.3.1", "13.0",
                                                                 "@rpath/librich.dylib")
        assert [d.kind for d in s.dependencies] == ["load", "weak", "reexport", "upward", "lazy"]
        assert {(x.name, x.demangled, x.binding, x.type) for x in s.exports} == {
            ("pub_fn", "pub_fn", "global", "func"),
            ("_ZN2ns3fooEv", "ns::foo()", "global", "func"),
            ("resolver_fn", "resolver_fn", "global", "func"),
            ("weak_data", "weak_data", "weak", "data"),
            ("tlv_var", "tlv_var", "global", "data"),
            ("abs_sym", "abs_sym", "global", "data"),
        }
        assert s.notes == ["1 re-exported symbol(s) (EXPORT_SYMBOL_FLAGS_REEXPORT) not listed"]
        # trie (preorder) order, as `llvm-objdump --exports-trie` lists them
        assert [x.name for x in s.exports] == ["pub_fn", "_ZN2ns3fooEv", "resolver_fn", "weak_data", "tlv_var",
                                               "abs_sym"]
        assert s.imports == ["malloc", "dyld_stub_binder", "up_fn"]
        assert [(x.name, x.type, x.binding) for x in s.locals] == [
            ("static_fn", "func", "local"), ("static_data", "data", "local"), ("hidden_fn", "func", "local")]
    (fallback,) = parse_file(extra_files["rich_no_trie.dylib"])
    assert {(x.name, x.binding, x.type) for x in fallback.exports} == {
        ("pub_fn", "global", "func"), ("_ZN2ns3fooEv", "global", "func"), ("resolver_fn", "global", "func"),
        ("weak_data", "weak", "data"), ("tlv_var", "global", "data"), ("abs_sym", "global", "data")}
    (ppc,) = parse_file(extra_files["ppc.dylib"])
    assert (ppc.arch, ppc.min_os, ppc.sdk) == ("ppc", "10.4", "10.4")
    assert {(x.name, x.binding) for x in ppc.exports} == {("ppc_fn", "global"), ("ppc_weak", "weak")}
    assert ppc.imports == ["printf"] and [x.name for x in ppc.locals] == ["ppc_local"]
    fat = parse_file(extra_files["fat64_synthetic.dylib"])
    assert [(s.arch, s.min_os) for s in fat] == [("ppc64", "10.5"), ("arm64e", "14.0")]
    assert "deployment target is for ios, not macOS" in fat[1].notes
    assert [s.arch for s in parse_file(extra_files["fat_synthetic.dylib"])] == ["arm64", "ppc", "x86_64"]
    assert parse_file(extra_files["fat_synthetic.dylib"])[2].kind == "bundle"
    # header order, not file order
    reversed_layout = parse_file(extra_files["fat_reversed_layout.dylib"])
    assert [s.arch for s in reversed_layout] == ["ppc", "arm64", "x86_64"]
    assert reversed_layout[0].offset > reversed_layout[1].offset > reversed_layout[2].offset


def test_zippered_build_versions() -> None:
    """Several LC_BUILD_VERSION (a zippered macOS + Mac Catalyst image): the macOS one counts."""
    image = Synth(build_version=(6, 0x0E0000, 0x0E0000),
                  more_build_versions=[(1, 0x0B0000, 0x0C0100), (7, 0x0F0000, 0x0F0000)]).build()
    (s,) = macho.parse(image)
    assert (s.min_os, s.sdk, s.notes) == ("11.0", "12.1", [])
    (s,) = macho.parse(Synth(build_version=(6, 0x0E0000, 0)).build())
    assert (s.min_os, s.sdk, s.notes) == ("14.0", None, ["deployment target is for maccatalyst, not macOS"])


def test_symbols_are_plain_symbols(extra_files: dict[str, Path]) -> None:
    """Exports and locals equal regular ``Symbol`` objects and survive pickling (worker processes)."""
    (s,) = parse_file(extra_files["rich.dylib"])
    for sym in s.exports + s.locals:
        assert type(sym) is Symbol
        assert sym == Symbol(sym.name, sym.demangled, sym.binding, sym.type)
        assert hash(sym) == hash(Symbol(sym.name, sym.demangled, sym.binding, sym.type))
        assert sym.version is None
        with pytest.raises(dataclasses.FrozenInstanceError):
            sym.name = "x"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(s)) == s


def test_symtab_details() -> None:
    """Common symbols, N_INDR, duplicate undefined references, names without an underscore."""
    image = Synth(filetype=1, identity=None, symbols=[
        (b"_common_var", N_EXT, 0, 0x0200, 16),  # N_UNDF with a size: a common definition
        (b"_dup", N_EXT, 0, 0, 0),
        (b"_dup", N_EXT, 0, 0, 0),
        (b"_alias", 0x0A | N_EXT, 0, 0, 2),  # N_INDR
        (b"plain", N_SECT | N_EXT, 1, 0, 0x1000),
        (b"_hidden", N_SECT | N_EXT | N_PEXT, 1, 0, 0x1004),  # .o private extern
    ]).build()
    (s,) = macho.parse(image)
    assert s.kind == "object"
    assert s.imports == ["dup"]
    assert {(x.name, x.type) for x in s.exports} == {("common_var", "data"), ("plain", "func")}
    assert [x.name for x in s.locals] == ["hidden"]
    assert any("N_INDR" in n for n in s.notes)


def test_arch_names() -> None:
    assert macho.arch_name(0x0100000C, 0x80000002) == "arm64e"  # pointer-auth ABI bits masked
    assert macho.arch_name(0x0100000C, 1) == "arm64"
    assert macho.arch_name(12, 11) == "armv7s"
    assert macho.arch_name(0x01000012, 0) == "ppc64"
    assert macho.arch_name(0x0100000E, 0) == "cpu_16777230_0"
    assert macho.arch_name(12, 99) == "cpu_12_99"
    (s,) = macho.parse(Synth(cputype=0x0100000E, cpusubtype=5).build())
    assert s.arch == "cpu_16777230_5"


def test_strings_per_slice(fixture_libs: Path) -> None:
    """`strings` are searched within each slice's own bytes: use each slice's LC_UUID as needle."""
    data = (fixture_libs / "macho" / "universal2" / "libfoo.dylib").read_bytes()
    slices = macho.parse(data)
    uuids = {}
    for s in slices:
        for off, cmd, _size in thin_commands(data, s.offset):
            if cmd == 0x1B:
                uuids[s.arch] = data[off + 8 : off + 24]
    assert len(uuids) == 2 and len(set(uuids.values())) == 2
    for s in macho.parse(data, needles=list(uuids.values()) + [b"not there at all"]):
        assert s.strings == frozenset({uuids[s.arch]})


def test_mmap_input_equals_bytes(fixture_libs: Path) -> None:
    path = fixture_libs / "macho" / "universal2" / "libbackend.dylib"
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        from_mmap = macho.parse(mm, [b"XnnpackBackend"])
    assert from_mmap == macho.parse(path.read_bytes(), [b"XnnpackBackend"])
    assert all(s.strings == {b"XnnpackBackend"} for s in from_mmap)


# ==============================================================================================
# Hostile input
# ==============================================================================================
def assert_malformed(data: bytes, *reason: str) -> str:
    """Both entry points reject ``data`` with MalformedBinary whose reason contains ``reason``."""
    with pytest.raises(MalformedBinary) as info:
        macho.parse(data)
    message = str(info.value)
    for part in reason:
        assert part in message, f"{part!r} not in {message!r}"
    binary = read_binary(data, "hostile.dylib")
    if binary is not None:  # None only when the magic itself is cut
        assert binary.error == message and not binary.slices
    return message


def test_truncation(fixture_libs: Path, extra_files: dict[str, Path]) -> None:
    rng = random.Random(1234)
    paths = [fixture_libs / "macho" / "arm64" / "libfoo.dylib", fixture_libs / "macho" / "x86_64" / "libbackend.dylib",
             fixture_libs / "macho" / "universal2" / "libmlx.dylib", extra_files["fat_objects.o"],
             extra_files["rich.dylib"], extra_files["ppc.dylib"]]
    checked = 0
    for path in paths:
        data = path.read_bytes()
        slices = macho.parse(data)
        # every 8 bytes through the (fat) header and each slice's header and load commands
        cuts = set(range(0, 64, 1))
        for s in slices:
            e = "<" if data[s.offset] in (0xCE, 0xCF) else ">"
            sizeofcmds = struct.unpack_from(e + "I", data, s.offset + 20)[0]
            cuts.update(range(s.offset, s.offset + 32 + sizeofcmds + 8, 8))
            cuts.update(rng.randrange(s.offset, s.offset + s.size) for _ in range(100))
            cuts.update((s.offset + s.size - 1, s.offset + s.size // 2))
        for cut in sorted(c for c in cuts if c < len(data)):
            truncated = data[:cut]
            if cut < 4:
                with pytest.raises(MalformedBinary):
                    macho.parse(truncated)
                continue
            try:
                macho.parse(truncated)
            except MalformedBinary:
                pass
            else:
                pytest.fail(f"{path.name} cut at {cut} of {len(data)} parsed without complaint")
            binary = read_binary(truncated, path.name)
            if binary is not None:
                assert binary.error and not binary.error.startswith("unreadable"), (cut, binary.error)
            checked += 1
    assert checked > 1000


def test_load_command_corruption(fixture_libs: Path) -> None:
    good = (fixture_libs / "macho" / "arm64" / "libfoo.dylib").read_bytes()
    cmds = thin_commands(good)

    bad = bytearray(good)
    struct.pack_into("<I", bad, 32 + 4, 0)
    assert_malformed(bytes(bad), "load command 0 (LC_SEGMENT_64) has cmdsize 0 (less than 8)")
    for i, (off, cmd, _) in enumerate(cmds):
        if cmd == 0x1B:  # LC_UUID: a command the reader does not otherwise look at
            bad = bytearray(good)
            struct.pack_into("<I", bad, off + 4, 0)
            assert_malformed(bytes(bad), f"load command {i} (cmd 0x1b) has cmdsize 0 (less than 8)")
            struct.pack_into("<I", bad, off + 4, 4)
            assert_malformed(bytes(bad), f"load command {i} (cmd 0x1b) has cmdsize 4 (less than 8)")

    bad = bytearray(good)
    off, _, size = cmds[3]
    struct.pack_into("<I", bad, off + 4, size + 2)
    assert_malformed(bytes(bad), "load command 3", "not a multiple of 4")

    bad = bytearray(good)
    off, _, _ = cmds[-1]
    struct.pack_into("<I", bad, off + 4, 0x10000)
    assert_malformed(bytes(bad), "runs past sizeofcmds")

    bad = bytearray(good)
    struct.pack_into("<I", bad, 16, 300_000)  # ncmds
    assert_malformed(bytes(bad), "300000 load commands")

    bad = bytearray(good)
    struct.pack_into("<I", bad, 16, 5000)  # more commands than sizeofcmds can hold
    assert_malformed(bytes(bad), "cannot fit in sizeofcmds")

    bad = bytearray(good)
    struct.pack_into("<I", bad, 20, len(good))  # sizeofcmds
    assert_malformed(bytes(bad), "sizeofcmds")

    assert_malformed(good[:20], "truncated Mach-O header")

    for off, cmd, size in cmds:
        if cmd == 0xD:  # LC_ID_DYLIB: name offset outside the command, then no terminator
            bad = bytearray(good)
            struct.pack_into("<I", bad, off + 8, size)
            assert_malformed(bytes(bad), "LC_ID_DYLIB", "string offset")
            bad = bytearray(good)
            bad[off + 24 : off + size] = b"A" * (size - 24)
            assert_malformed(bytes(bad), "LC_ID_DYLIB", "not NUL-terminated")
        if cmd == 0x19:  # LC_SEGMENT_64: too many sections, segment past the file
            bad = bytearray(good)
            struct.pack_into("<I", bad, off + 64, 1000)
            assert_malformed(bytes(bad), "sections do not fit")
            bad = bytearray(good)
            struct.pack_into("<Q", bad, off + 48, len(good) + 1)  # filesize
            assert_malformed(bytes(bad), "segment", "runs past the end of the image")
        if cmd == 0x2:  # LC_SYMTAB: symbols, then strings, past the image
            bad = bytearray(good)
            struct.pack_into("<I", bad, off + 8, len(good) - 8)
            assert_malformed(bytes(bad), "symbol table", "runs past the end")
            bad = bytearray(good)
            struct.pack_into("<I", bad, off + 20, len(good))
            assert_malformed(bytes(bad), "string table", "runs past the end")
            bad = bytearray(good)
            struct.pack_into("<I", bad, off + 12, 0x7FFFFFFF)  # nsyms
            assert_malformed(bytes(bad), "symbol table")
        if cmd == 0x80000022:  # LC_DYLD_INFO_ONLY: export trie past the image
            bad = bytearray(good)
            struct.pack_into("<I", bad, off + 40, len(good) - 2)
            assert_malformed(bytes(bad), "export trie", "runs past the end")


def test_symbol_table_corruption() -> None:
    good = Synth(symbols=[(b"_a", N_SECT, 1, 0, 0x1000)]).build()
    (lc,) = [off for off, cmd, _ in thin_commands(good) if cmd == 0x2]
    symoff, _, stroff, strsize = struct.unpack_from("<4I", good, lc + 8)
    image = bytearray(good)
    image[stroff + strsize - 1] = ord("x")  # the last name loses its terminator
    assert_malformed(bytes(image), "not NUL-terminated")
    image = bytearray(good)
    struct.pack_into("<I", image, symoff, 0x100000)  # the only name, past the string table
    assert_malformed(bytes(image), "past the string table")
    assert_malformed(Synth(symbols=[(b"_a", N_SECT, 9, 0, 0x1000)]).build(), "refers to section 9")
    # with an export trie the locals are read a column at a time (fast_symtab): the same words
    trie = encode_trie({b"_b": term_regular(0x1000)})
    assert_malformed(Synth(symbols=[(b"_a", N_SECT, 9, 0, 0x1000)], trie=trie).build(), "refers to section 9")
    assert_malformed(Synth(symbols=[(b"_ok", N_SECT, 1, 0, 0x1000), (b"_a", N_SECT, 0, 0, 0x1000)], trie=trie).build(),
                     "refers to section 0")


def _fat_entries(data: bytes) -> list[int]:
    return [8 + 20 * i for i in range(struct.unpack_from(">I", data, 4)[0])]


def test_fat_header_corruption(fixture_libs: Path) -> None:
    good = (fixture_libs / "macho" / "universal2" / "libfoo.dylib").read_bytes()
    e0, e1 = _fat_entries(good)
    off0, size0 = struct.unpack_from(">II", good, e0 + 8)
    off1, size1 = struct.unpack_from(">II", good, e1 + 8)

    bad = bytearray(good)
    struct.pack_into(">I", bad, e1 + 8, off0 + 16)  # second slice starts inside the first
    assert_malformed(bytes(bad), "overlaps fat slice")

    bad = bytearray(good)
    struct.pack_into(">I", bad, e0 + 8, 0)  # slice over the fat header
    assert_malformed(bytes(bad), "fat slice 0", "overlaps the fat header")

    bad = bytearray(good)
    struct.pack_into(">I", bad, e1 + 12, len(good))
    assert_malformed(bytes(bad), "fat slice 1", "runs past the end of the file")

    bad = bytearray(good)
    struct.pack_into(">I", bad, e0 + 12, 0)
    assert_malformed(bytes(bad), "empty")

    bad = bytearray(good)
    struct.pack_into(">I", bad, 4, 0)
    with pytest.raises(MalformedBinary, match="no architectures"):
        macho.parse(bytes(bad))
    bad = bytearray(good)
    struct.pack_into(">I", bad, 4, 1000)  # (detect() takes this for a Java class file)
    with pytest.raises(MalformedBinary, match="1000 architectures"):
        macho.parse(bytes(bad))
    bad = bytearray(good[:200])
    struct.pack_into(">I", bad, 4, 20)
    assert_malformed(bytes(bad), "fat header with 20 architectures needs")
    assert_malformed(good[:6], "truncated fat header")
    assert_malformed(good[: max(off0 + size0, off1 + size1) - 1], "runs past the end of the file")

    # a slice that is itself a fat file
    nested = make_fat([(0x0100000C, 0, good)])
    assert_malformed(nested, "nested fat binary")
    nested64 = make_fat([(0x0100000C, 0, to_fat64(good))], fat64=True)
    assert_malformed(nested64, "nested fat binary")
    # and a slice whose bytes are no Mach-O image at all
    assert_malformed(make_fat([(0x0100000C, 0, b"\x7fELF" + b"\0" * 60)]), "not a Mach-O image")


def test_fat_archive_slice_is_noted() -> None:
    ar = b"!<arch>\n" + b"\0" * 120
    (s,) = macho.parse(make_fat([(0x01000007, 3, ar)]), needles=[b"!<arch>"])
    assert (s.arch, s.kind, s.exports, s.strings) == ("x86_64", "object", [], frozenset({b"!<arch>"}))
    assert "static archive" in s.notes[0]


def test_trie_multibyte_addresses_and_many_children() -> None:
    """Addresses of 1 to 8 ULEB128 bytes, nodes with several children, child offsets of 3 bytes (a
    trie over 16 KiB): the exports in trie order. The same exports when a terminal carries bytes
    after its address (a size larger than its fields, as the format allows: 2 bytes, or 253 so
    that the size's ULEB128 begins with 0xFF), which the reader decodes terminal by terminal
    instead of in bulk."""
    # (name, terminal, binding, type), in trie order; image-relative: only __text [0x1000, 0x1100)
    # has instructions
    listed = [
        (b"_tiny", term_regular(0x10), "global", "data"),  # 1 byte, below __text
        (b"_text_first", term_regular(0x1000), "global", "func"),  # 2 bytes
        (b"_text_last", term_regular(0x10FF), "global", "func"),
        (b"_text_end", term_regular(0x1100), "global", "data"),  # just past __text
        (b"_tlv", term_regular(0x2100, 0x01), "global", "data"),
        (b"_weak_fn", term_regular(0x1080, EXPORT_WEAK), "weak", "func"),
        (b"_abs_in_text", term_regular(0x1010, 0x02), "global", "data"),  # absolute: data wherever it is
        (b"_padded", uleb(0) + b"\x90\xa0\x80\x00", "global", "func"),  # 0x1010, not in its shortest form
        (b"_resolved", term_resolver(0x1020, 0x1030), "global", "func"),
    ]
    bases = [0x1000, 0x4000, 0x20_0000, 0x1000_0000, 0x8_0000_0000, 1 << 42, 1 << 49]
    for i in range(48):  # "_many_": 5 children of up to 10 each, labels long enough for 3-byte offsets
        address, weak = bases[i % len(bases)] + i, i % 5 == 0
        listed.append((b"_many_%02d" % i + b"x" * 400, term_regular(address, EXPORT_WEAK if weak else 0),
                       "weak" if weak else "global", "func" if address < 0x1100 else "data"))
    entries = {name: term for name, term, _, _ in listed} | {b"_alias": term_reexport(1, b"_other")}
    trie = encode_trie(entries)
    assert len(trie) > 1 << 14 and {len(uleb(a)) for a in bases} == {2, 3, 4, 5, 6, 7, 8}
    expected = [(name[1:].decode(), binding, sym_type) for name, _, binding, sym_type in listed]
    notes = ["1 re-exported symbol(s) (EXPORT_SYMBOL_FLAGS_REEXPORT) not listed"]

    def exports(trie: bytes) -> tuple[list[tuple[str, str, str]], list[str]]:
        (s,) = macho.parse(_trie_image(trie))
        return [(x.name, x.binding, x.type) for x in s.exports], s.notes

    assert exports(trie) == (expected, notes)
    for padding in (2, 253):
        padded = encode_trie(entries | {b"_tiny": term_regular(0x10) + bytes(padding)})
        assert exports(padded) == (expected, notes), padding


def _trie_image(trie: bytes) -> bytes:
    return Synth(symbols=[(b"_a", N_SECT | N_EXT, 1, 0, 0x1000)], trie=trie).build()


def test_cyclic_export_trie(fixture_libs: Path) -> None:
    # root --"_a"--> node --"b"--> root
    cyclic = b"\x00\x01_a\x00\x06" + b"\x00\x01b\x00\x00"
    assert_malformed(_trie_image(cyclic), "export trie", "cyclic")
    # a node that is its own child
    self_loop = b"\x00\x01_\x00\x05" + b"\x00\x01x\x00\x05"
    assert_malformed(_trie_image(self_loop), "cyclic")
    # two edges into the same node (a DAG, never produced by a linker)
    shared = b"\x00\x02_a\x00\x0a_b\x00\x0a" + b"\x03\x00\x80\x20\x00"
    assert_malformed(_trie_image(shared), "reached twice")

    # a real image whose trie's first child is pointed back at the root
    data = bytearray((fixture_libs / "macho" / "arm64" / "libbackend.dylib").read_bytes())
    for off, cmd, _ in thin_commands(bytes(data)):
        if cmd == 0x80000022:
            export_off = struct.unpack_from("<I", data, off + 40)[0]
    assert data[export_off] == 0  # root: not terminal
    label_end = data.index(b"\0", export_off + 2)
    data[label_end + 1] = 0  # child offset (a one-byte ULEB) -> root
    assert_malformed(bytes(data), "cyclic")


def test_export_trie_corruption() -> None:
    overlong = b"\x00\x01_a\x00" + b"\x80" * 11 + b"\x01"
    assert_malformed(_trie_image(overlong), "overlong ULEB128")
    assert_malformed(_trie_image(b"\x00\x01_a\x00\x80"), "truncated ULEB128")
    assert_malformed(_trie_image(b"\x00\x01_a\x00\x7f"), "past the trie")
    assert_malformed(_trie_image(b"\x00\x01_abc"), "not NUL-terminated")
    assert_malformed(_trie_image(b"\x00\x01_a\x00\x05\x40\x00"), "terminal information")
    # a legal but absurdly deep trie: names "a", "aa", "aaa", ... nested 5000 levels
    deep = bytearray()
    depth = 5000
    for level in range(depth):
        start = len(deep)
        node = b"\x02\x00\x00" if level else b"\x00"
        child = start + len(node) + 1 + 2 + 3  # count, "a\0", 3-byte ULEB
        deep += node + b"\x01a\x00" + bytes([(child & 0x7F) | 0x80, ((child >> 7) & 0x7F) | 0x80, child >> 14])
    deep += b"\x02\x00\x00\x00"
    assert_malformed(_trie_image(bytes(deep)), "deeper than")
    # a long edge shared by many terminals: names would expand far beyond the trie (a memory bomb)
    long_label = 64 * 1024
    bomb = bytearray(b"\x00\x01" + b"a" * long_label + b"\x00" + uleb(long_label + 6))
    for _ in range(2000):
        nxt = len(bomb) + 3 + 1 + 2 + 3
        bomb += b"\x02\x00\x00\x01b\x00" + bytes([(nxt & 0x7F) | 0x80, ((nxt >> 7) & 0x7F) | 0x80, nxt >> 14])
    bomb += b"\x02\x00\x00\x00"
    assert uleb(long_label + 6) == bytes(bomb[long_label + 3 : long_label + 6])
    assert_malformed(_trie_image(bytes(bomb)), "names expand to more than the trie can hold")


def test_random_corruption_never_escapes(fixture_libs: Path, extra_files: dict[str, Path]) -> None:
    """Seeded byte flips in headers, load commands and linkedit: MalformedBinary or facts, nothing else."""
    rng = random.Random(20240611)
    paths = [fixture_libs / "macho" / "universal2" / "libbackend.dylib", extra_files["rich.dylib"],
             extra_files["fat_objects.o"], extra_files["ppc64.dylib"]]
    outcomes = {"malformed": 0, "parsed": 0}
    for path in paths:
        good = path.read_bytes()
        slices = macho.parse(good)
        regions = [(0, 64)]
        for s in slices:
            sizeofcmds = struct.unpack_from("<I" if good[s.offset] in (0xCE, 0xCF) else ">I", good, s.offset + 20)[0]
            regions.append((s.offset, s.offset + 32 + sizeofcmds))
            regions.append((s.offset + s.size - min(s.size, 4096), s.offset + s.size))
        for trial in range(400):
            bad = bytearray(good)
            for _ in range(rng.randint(1, 4)):
                lo, hi = rng.choice(regions)
                pos = rng.randrange(lo, hi)
                bad[pos] = rng.choice((0, 0xFF, 0x80, rng.randrange(256), bad[pos] ^ (1 << rng.randrange(8))))
            try:
                macho.parse(bytes(bad), [b"XnnpackBackend"])
                outcomes["parsed"] += 1
            except MalformedBinary:
                outcomes["malformed"] += 1
            except Exception as exc:  # noqa: BLE001
                pytest.fail(f"{path.name} trial {trial}: {type(exc).__name__}: {exc}")
    assert outcomes["malformed"] > 100 and outcomes["parsed"] > 100, outcomes


def test_the_same_facts_from_a_bytearray(macho_fixture_files, extra_files):
    """The member reader keeps a small native member in a bytearray: every reader path gives the
    facts it gives from bytes (an object file's symbol table once raised TypeError there)."""
    for path in [*macho_fixture_files, *extra_files.values()]:
        data = path.read_bytes()
        if not is_macho(path):
            continue
        from_bytes = read_binary(data, path.name)
        from_array = read_binary(bytearray(data), path.name)
        assert from_array == from_bytes, path.name
        assert from_array is None or from_array.error is None, (path.name, from_array.error)
