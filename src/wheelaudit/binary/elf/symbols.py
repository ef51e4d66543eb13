"""The symbol tables: the dynamic symbol table (where it is, how many entries, exports and
imports with their versions) and ``.symtab`` (the local definitions); each read by a loop over
the entries, or a column at a time (:mod:`wheelaudit.binary._columns`) when no entry needs a
decision."""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable
from functools import partial
from typing import Any
from itertools import repeat

from wheelaudit.binary import MalformedBinary
from wheelaudit.binary import _columns as _C
from wheelaudit.binary import demangle as _demangle
from wheelaudit.binary import symbols as _symbols
from wheelaudit.binary.elf.constants import (
    DT_GNU_HASH,
    DT_HASH,
    DT_JMPREL,
    DT_REL,
    DT_RELA,
    DT_STRTAB,
    DT_SYMENT,
    DT_SYMTAB,
    DT_VERDEF,
    DT_VERNEED,
    DT_VERSYM,
    EM_S390,
    MAX_SYMBOLS,
    PT_DYNAMIC,
    SHN_UNDEF,
    SHT_DYNSYM,
    SHT_NOBITS,
    SHT_SYMTAB,
    STB_GLOBAL,
    STB_GNU_UNIQUE,
    STB_LOCAL,
    STB_WEAK,
    STT_COMMON,
    STT_FILE,
    STT_FUNC,
    STT_GNU_IFUNC,
    STT_OBJECT,
    STT_SECTION,
    STT_TLS,
    STV_DEFAULT,
    STV_HIDDEN,
    STV_INTERNAL,
    STV_PROTECTED,
)
from wheelaudit.binary.elf.dynamic import Dynamic
from wheelaudit.model.binary import Symbol, make_symbol

_TYPE_NAMES = {STT_FUNC: "func", STT_GNU_IFUNC: "func", STT_OBJECT: "data", STT_TLS: "data", STT_COMMON: "data"}
_EXPORT_BINDINGS = {STB_GLOBAL: "global", STB_GNU_UNIQUE: "global", STB_WEAK: "weak"}
_LOCAL_TYPES = {STT_FUNC: "func", STT_GNU_IFUNC: "func", STT_OBJECT: "data", STT_TLS: "data"}


def _classify(info: int, vis: int) -> tuple[str, str] | None:
    """(binding, type) of an exported definition with this st_info and visibility, else None."""
    binding, stype = _EXPORT_BINDINGS.get(info >> 4), info & 0xF
    if binding is None or vis not in (STV_DEFAULT, STV_PROTECTED) or stype in (STT_SECTION, STT_FILE):
        return None
    return binding, _TYPE_NAMES.get(stype, "other")


def _classify_local(info: int, vis: int) -> str | None:
    """The type of a local definition (STB_LOCAL, or hidden/internal) with this st_info, else None."""
    if info >> 4 != STB_LOCAL and vis not in (STV_HIDDEN, STV_INTERNAL):
        return None
    return _LOCAL_TYPES.get(info & 0xF)


# indexed by st_info << 2 | (st_other & 3): one lookup per symbol instead of a chain of tests
_EXPORT_CLASS = [_classify(key >> 2, key & 3) for key in range(1024)]
_LOCAL_CLASS = [_classify_local(key >> 2, key & 3) for key in range(1024)]
_MISSING = object()
_ODD = bytes(i & 1 for i in range(256))  # translate table: byte -> its low bit



# the fast paths' byte tables (see SymbolTables.fast_dynsym / fast_symtab)
_EXPORT_INFO_OK = _C.table(lambda i: _EXPORT_BINDINGS.get(i >> 4) is not None and (i & 0xF) not in (STT_SECTION, STT_FILE))
_EXPORT_VIS_OK = _C.table(lambda o: (o & 3) in (STV_DEFAULT, STV_PROTECTED))
_EXPORT_CODE = _C.table(lambda i: _symbols.symbol_code(_EXPORT_BINDINGS.get(i >> 4, "global"),
                                                      _TYPE_NAMES.get(i & 0xF, "other")))
_LOCAL_TYPED = _C.table(lambda i: (i & 0xF) in _LOCAL_TYPES)
_LOCAL_BOUND = _C.table(lambda i: (i >> 4) == STB_LOCAL and (i & 0xF) in _LOCAL_TYPES)
_HIDDEN_VIS = _C.table(lambda o: (o & 3) in (STV_HIDDEN, STV_INTERNAL))
_LOCAL_CODE = _C.table(lambda i: _symbols.symbol_code("local", _LOCAL_TYPES.get(i & 0xF, "other")))


def _decoded(strtab: bytes, offsets) -> list[str]:
    """The ASCII strings at ``offsets`` of ``strtab``, each distinct offset decoded once: entries
    that point at one string share one ``str`` (a table of many entries naming one long string
    costs that string once, not once per entry)."""
    find = strtab.find
    at: dict[int, str] = {}
    out = []
    for o in offsets:
        name = at.get(o)
        if name is None:
            name = at[o] = strtab[o:find(b"\0", o)].decode("ascii")
        out.append(name)
    return out


def _text(table: bytes) -> tuple[bool, Any]:
    """A string table as ``str`` when it is ASCII (names then slice out without decoding), else
    as ``bytes``: ``(is str, table)``."""
    if table.isascii():
        return True, table.decode("ascii")
    return False, table


class SymbolTables(Dynamic):
    """The dynamic symbol table (exports, imports) and ``.symtab`` (locals), read by a loop over
    the entries or, when the loop has nothing to decide, a column at a time."""

    def sym_format(self, entsize: int, what: str) -> str:
        if entsize < self.sym_min:
            raise MalformedBinary(f"{what} entry size is {entsize}, smaller than the {self.sym_min}-byte symbol")
        if entsize > 4096:
            raise MalformedBinary(f"{what} entry size is {entsize} bytes; a symbol is {self.sym_min}")
        pad = f"{entsize - self.sym_min}x" if entsize > self.sym_min else ""
        # (st_name, st_info, st_other, st_shndx)
        return self.e + ("IBBH16x" if self.is64 else "I8xBBH") + pad

    def check_count(self, count: int, entsize: int, off: int, what: str) -> None:
        if count > MAX_SYMBOLS:
            raise MalformedBinary(f"symbol table claims {count} entries; limit {MAX_SYMBOLS:,}")
        self.need(off, count * entsize, f"{what} ({count} entries of {entsize} bytes)")

    def gnu_hash_count(self, addr: int) -> int | None:
        """Number of dynamic symbols by the GNU hash table, or None when it cannot tell."""
        off, _ = self.map_addr(addr, "DT_GNU_HASH")
        e = self.e
        nbuckets, symoffset, bloom_size, _shift = self.unpack(e + "IIII", off, "GNU hash table header")
        buckets_off = off + 16 + bloom_size * self.word
        buckets = self.take(buckets_off, nbuckets * 4, f"GNU hash buckets ({nbuckets})")
        top = max(struct.unpack(f"{e}{nbuckets}I", buckets), default=0)
        if top == 0:
            # no hashed (defined) symbols: ld still writes symoffset 1 here, so the unhashed
            # symbols before it cannot be counted from this table
            return None
        if top < symoffset:
            raise MalformedBinary(f"GNU hash bucket points at symbol {top}, below its symoffset {symoffset}")
        if top > MAX_SYMBOLS:
            raise MalformedBinary(f"symbol table claims {top + 1} entries; limit {MAX_SYMBOLS:,}")
        start = buckets_off + nbuckets * 4 + (top - symoffset) * 4
        self.need(start, 4, "GNU hash chain")
        # find the end-of-chain bit (the low bit of a word) with bytes.translate/find, reading
        # the chain in growing chunks: a real chain ends within a few words
        limit = min(self.size, start + 4 * (MAX_SYMBOLS - top + 1))
        pos, chunk = start, 64
        while pos < limit:
            stop = min(limit, pos + 4 * chunk)
            words = (stop - pos) // 4
            if words == 0:
                break
            raw = self.take(pos, 4 * words, "GNU hash chain")
            low = raw[0::4] if self.little else raw[3::4]
            k = bytes(low).translate(_ODD).find(1)
            if k >= 0:
                return top + (pos - start) // 4 + k + 1
            pos += 4 * words
            chunk *= 4
        if limit == self.size:
            raise MalformedBinary("GNU hash chain runs past the end of the file without an end marker")
        raise MalformedBinary(f"symbol table claims more than {MAX_SYMBOLS:,} entries; limit {MAX_SYMBOLS:,}")

    def hash_count(self, addr: int) -> int:
        off, _ = self.map_addr(addr, "DT_HASH")
        wide = self.is64 and self.e_machine == EM_S390  # 64-bit hash words on s390x
        _nb, nchain = self.unpack(self.e + ("QQ" if wide else "II"), off, "hash table header (DT_HASH)")
        return nchain

    def count_by_layout(self, off: int, avail: int, entsize: int) -> int:
        """Dynamic symbols up to the next table the dynamic section locates (no hash count).

        Linkers place another dynamic table right after .dynsym (.dynstr with GNU ld,
        .gnu.version with lld), so the distance to the nearest one is the table size.
        """
        tables = (DT_STRTAB, DT_VERSYM, DT_GNU_HASH, DT_HASH, DT_VERDEF, DT_VERNEED, DT_RELA, DT_REL, DT_JMPREL)
        bound = off + avail
        for tag in tables:
            if tag in self.tags:
                try:
                    other, _ = self.map_addr(self.tags[tag], "dynamic table")
                except MalformedBinary:
                    continue
                if off < other < bound:
                    bound = other
        for _t, poff, _va, _fs, _ms in self.segments:
            if _t == PT_DYNAMIC and off < poff < bound:
                bound = poff
        self.notes.append(
            "no section headers and no hash table that counts every dynamic symbol; the count was "
            "taken from the table layout (up to the next dynamic table)"
        )
        return (bound - off) // entsize

    def dynsym_location(self) -> tuple[int, int, int, bytes] | None:
        """(offset, count, entsize, string table) of the dynamic symbol table, or None."""
        dynsym = [i for i, s in enumerate(self.sections) if s[1] == SHT_DYNSYM]
        sec = self.sections[dynsym[0]] if dynsym else None
        if DT_SYMTAB not in self.tags:
            if sec is None:
                return None
            # no dynamic table to say where it is: take the section as it is
            off, size = self.section_data_range(dynsym[0], ".dynsym")
            entsize = sec[9] or self.sym_min
            strs_off, strs_size = self.section_data_range(sec[6], ".dynsym string table")
            return off, size // entsize, entsize, self.take(strs_off, strs_size, ".dynsym string table")
        off, avail = self.map_addr(self.tags[DT_SYMTAB], "DT_SYMTAB")
        entsize = self.tags.get(DT_SYMENT, self.sym_min)
        if entsize < self.sym_min:
            raise MalformedBinary(f"DT_SYMENT is {entsize}, smaller than the {self.sym_min}-byte symbol")
        hashed = None
        if DT_GNU_HASH in self.tags:
            hashed = self.gnu_hash_count(self.tags[DT_GNU_HASH])
        if hashed is None and DT_HASH in self.tags:
            hashed = self.hash_count(self.tags[DT_HASH])
        count = None
        if sec is not None and sec[1] != SHT_NOBITS and sec[4] == off:
            if sec[9] and sec[9] != entsize:
                self.notes.append(
                    f"section headers disagree with the dynamic table: .dynsym entries of {sec[9]} bytes, "
                    f"DT_SYMENT {entsize} (DT_SYMENT was used)"
                )
            count = sec[5] // entsize
            if sec[5] % entsize:
                self.notes.append(f".dynsym size {sec[5]} is not a multiple of its {entsize}-byte entries")
            if hashed is not None and hashed != count:
                self.notes.append(
                    f"the hash table counts {hashed} dynamic symbols, the .dynsym section {count}; "
                    "the section was read"
                )
        elif sec is not None:
            self.notes.append(
                f"section headers disagree with the dynamic table: .dynsym at 0x{sec[4]:x}, DT_SYMTAB maps "
                f"to 0x{off:x} (DT_SYMTAB was read)"
            )
        if count is None:
            count = hashed if hashed is not None else self.count_by_layout(off, avail, entsize)
        table = self.dynstr()
        if table is None:
            raise MalformedBinary("dynamic symbol table without a dynamic string table (DT_STRTAB)")
        return off, count, entsize, table

    def check_overlap(self, off: int, count: int, entsize: int) -> None:
        """The dynamic symbol table must not run into another table the dynamic section locates
        (a count from a damaged hash chain would, and would read other bytes as symbols)."""
        end = off + count * entsize
        tables = ((DT_STRTAB, "dynamic string table (DT_STRTAB)"), (DT_VERSYM, "symbol version table (DT_VERSYM)"),
                  (DT_GNU_HASH, "GNU hash table"), (DT_HASH, "hash table (DT_HASH)"),
                  (DT_VERDEF, "version definitions (DT_VERDEF)"), (DT_VERNEED, "version requirements (DT_VERNEED)"))
        for tag, name in tables:
            if tag in self.tags:
                try:
                    other, _ = self.map_addr(self.tags[tag], name)
                except MalformedBinary:
                    continue
                if off < other < end:
                    raise MalformedBinary(
                        f"dynamic symbol table at 0x{off:x} ({count} entries of {entsize} bytes) overlaps "
                        f"the {name} at 0x{other:x}"
                    )

    def read_dynsym(self, version_index: dict[int, str | None]) -> tuple[list[Symbol], list[str]]:
        """(exports, imports); the versioned imports' version nodes go to ``self.import_versions``."""
        self.import_versions: dict[str, str] = {}
        #: the weak ones' names (STB_WEAK undefined: the loader leaves them null when nothing
        #: defines them); a name's first entry decides, as for import_versions
        self.weak_imports: list[str] = []
        loc = self.dynsym_location()
        if loc is None:
            return [], []
        off, count, entsize, strtab = loc
        fmt = self.sym_format(entsize, "dynamic symbol table")
        self.check_count(count, entsize, off, "dynamic symbol table")
        self.check_overlap(off, count, entsize)
        raw = self.take(off, count * entsize, "dynamic symbol table")
        versym: tuple[int, ...] | bytes | None = None
        if DT_VERSYM in self.tags and count:
            voff, _ = self.map_addr(self.tags[DT_VERSYM], "DT_VERSYM")
            table = self.take(voff, 2 * count, f"symbol version table ({count} entries)")
            versym = struct.unpack(f"{self.e}{count}H", table)
        # version index -> name (None: local, global or base), _MISSING: declared nowhere
        vmap: list = [_MISSING] * 0x8000
        vmap[0] = vmap[1] = None
        for k, v in version_index.items():
            vmap[k] = v
        if versym is None:
            versym = bytes(count)  # every symbol unversioned
        fast = self.fast_dynsym(raw, count, entsize, strtab, versym, vmap)
        if fast is not None:
            return fast
        exports: list[Symbol] = []
        imports: list[str] = []
        seen_imports: set[str] = set()
        at, decode = self.names_at(strtab)
        demangle = partial(_demangle.demangle, budget=self.budget)
        make = make_symbol
        classes = _EXPORT_CLASS
        rows = struct.iter_unpack(fmt, raw)
        next(rows, None)  # the null symbol
        i = 0
        for st_name, info, other, shndx in rows:
            i += 1
            if not st_name:
                continue
            name = at.get(st_name)
            if name is None:
                name = decode(st_name, f"dynamic symbol {i}")
            if "@" in name:
                name = name.split("@", 1)[0]
                if not name:
                    continue
            if shndx == SHN_UNDEF:
                if name not in seen_imports:
                    seen_imports.add(name)
                    imports.append(name)
                    needed = vmap[versym[i] & 0x7FFF]
                    if isinstance(needed, str):
                        self.import_versions[name] = needed
                    if info >> 4 == STB_WEAK:
                        self.weak_imports.append(name)
                continue
            cls = classes[info << 2 | other & 3]
            if cls is None:
                continue
            version = vmap[versym[i] & 0x7FFF]
            if version is _MISSING:
                raise MalformedBinary(
                    f"dynamic symbol {i} ({name}) has version index {versym[i] & 0x7FFF}, which no "
                    "version definition or requirement declares"
                )
            exports.append(make(name, cls[0], cls[1], version, demangle(name) if name[:2] == "_Z" else name))
        return exports, imports

    def read_symtab(self) -> list[Symbol] | None:
        symtabs = [i for i, s in enumerate(self.sections) if s[1] == SHT_SYMTAB]
        if not symtabs:
            return None
        if len(symtabs) > 1:
            self.notes.append(f"{len(symtabs)} .symtab sections; the first one was read")
        sec = self.sections[symtabs[0]]
        entsize = sec[9] or self.sym_min
        fmt = self.sym_format(entsize, ".symtab")
        count = sec[5] // entsize
        if sec[5] % entsize:
            self.notes.append(f".symtab size {sec[5]} is not a multiple of its {entsize}-byte entries")
        self.check_count(count, entsize, sec[4], ".symtab")
        str_off, str_size = self.section_data_range(sec[6], ".symtab string table")
        strtab = self.take(str_off, str_size, ".symtab string table")
        raw = self.take(sec[4], count * entsize, ".symtab")
        fast = self.fast_symtab(raw, count, entsize, strtab)
        if fast is not None:
            return fast
        at, decode = self.names_at(strtab)
        demangle = partial(_demangle.demangle, budget=self.budget)
        make = make_symbol
        classes = _LOCAL_CLASS
        out: list[Symbol] = []
        seen: set[tuple[str, str]] = set()
        for i, (st_name, info, other, shndx) in enumerate(struct.iter_unpack(fmt, raw)):
            if shndx == SHN_UNDEF or not st_name:
                continue
            stype = classes[info << 2 | other & 3]
            if stype is None:
                continue
            name = at.get(st_name)
            if name is None:
                name = decode(st_name, f".symtab symbol {i}")
            if "@" in name:
                name = name.split("@", 1)[0]
                if not name:
                    continue
            key = (name, stype)
            if key in seen:  # e.g. two `static` helpers of one name in different objects
                continue
            seen.add(key)
            out.append(make(name, "local", stype, None, demangle(name) if name[:2] == "_Z" else name))
        return out

    # ---- the same, a column at a time (readers._columns) ----------------------------------
    # These give the very result of the loops above (checked by the differential tests) as a
    # compact SymbolTable, and return None whenever the loop must decide: a non-ASCII or
    # versioned ("@") string table, a name offset out of range (the loop raises with the
    # reason), an undeclared version index. A large library then costs a few C-level passes
    # per column, not a Python step per symbol, and ships to the parent as two byte strings.

    def _columns(self, raw: bytes, entsize: int) -> tuple[bytes, bytes, bytes, bytes]:
        """(st_info, st_other, defined (1: st_shndx != 0), named (1: st_name != 0)) per entry."""
        ioff = 4 if self.is64 else 12
        info = _C.column(raw, ioff, entsize)
        other = _C.column(raw, ioff + 1, entsize)
        defined = _C.mask_or(_C.column(raw, ioff + 2, entsize), _C.column(raw, ioff + 3, entsize)).translate(_C.NONZERO)
        named = _C.nonzero_u32(raw, 0, entsize)
        return info, other, defined, named

    def _names_ok(self, offsets, strtab: bytes) -> bool:
        """Every offset starts a NUL-terminated string inside ``strtab``."""
        if not offsets:
            return True
        last_nul = strtab.rfind(b"\0")
        return max(offsets) < last_nul + 1 if last_nul >= 0 else False

    @staticmethod
    def _no_at(strtab: bytes, offsets) -> bool:
        """No name at ``offsets`` contains "@" (a version suffix the loop would cut off)."""
        at = strtab.find(b"@")
        if at < 0:
            return True
        starts = set(offsets)
        while at >= 0:
            s = strtab.rfind(b"\0", 0, at) + 1
            if any(o in starts for o in range(s, at + 1)):
                return False
            at = strtab.find(b"@", strtab.find(b"\0", at) + 1) if strtab.find(b"\0", at) >= 0 else -1
        return True

    def names_at(self, strtab) -> tuple[dict[int, str], Callable[[int, str], str]]:
        """The names of ``strtab`` by offset, each decoded once (symbol entries may share one):
        the cache a symbol loop looks in, and the decoder it calls on a miss (which raises with the
        reason, naming ``what``, for a name that runs past the table)."""
        is_text, text = _text(strtab)
        nul = "\0" if is_text else b"\0"
        find = text.find
        at: dict[int, str] = {}

        def decode(off: int, what: str) -> str:
            end = find(nul, off)
            if end < 0:
                self.string(strtab, off, what)  # raises with the reason
            name = at[off] = text[off:end] if is_text else text[off:end].decode("utf-8", "backslashreplace")
            return name

        return at, decode

    def fast_dynsym(self, raw: bytes, count: int, entsize: int, strtab: bytes, versym, vmap: list):
        if count < 2 or len(raw) != count * entsize or not strtab.isascii():
            return None
        info, other, defined, named = self._columns(raw, entsize)
        named = b"\0" + named[1:]  # entry 0 is the null symbol
        names = _C.u32_column(raw, 0, entsize, self.little)
        named_offsets = _C.select(names, named)
        if not self._names_ok(named_offsets, strtab) or not self._no_at(strtab, named_offsets):
            return None
        exported = _C.mask_and(named, defined, info.translate(_EXPORT_INFO_OK), other.translate(_EXPORT_VIS_OK))
        undefined = _C.mask_and(named, defined.translate(_C.ZERO))
        vals = list(map(operator.and_, _C.select(versym, exported), repeat(0x7FFF)))
        distinct = sorted(set(vals))
        if any(vmap[v] is _MISSING for v in distinct):
            return None
        if len(distinct) <= 1:
            versions: tuple = (vmap[distinct[0]] if distinct else None,)
            vindex = None
        else:
            versions = tuple(vmap[v] for v in distinct)
            pos = {v: k for k, v in enumerate(distinct)}
            vindex = (bytes if len(distinct) < 256 else _C.u32_array)(map(pos.__getitem__, vals))
        exports = _symbols.SymbolTable(strtab, _C.pick(names, exported),
                                       _C.pick(info.translate(_EXPORT_CODE), exported), versions, vindex)
        imported = _decoded(strtab, _C.select(names, undefined))
        imports = list(dict.fromkeys(imported))
        for name, v in zip(imported, _C.select(versym, undefined), strict=False):
            needed = vmap[v & 0x7FFF]
            if isinstance(needed, str):
                self.import_versions.setdefault(name, needed)  # the first entry of a name, as the loop
        first: set[str] = set()
        for name, i in zip(imported, _C.select(info, undefined), strict=False):
            if name not in first:
                first.add(name)
                if i >> 4 == STB_WEAK:
                    self.weak_imports.append(name)
        return exports, imports

    def fast_symtab(self, raw: bytes, count: int, entsize: int, strtab: bytes):
        if count < 1 or len(raw) != count * entsize or not strtab.isascii():
            return None
        info, other, defined, named = self._columns(raw, entsize)
        ok = _C.mask_or(info.translate(_LOCAL_BOUND), _C.mask_and(info.translate(_LOCAL_TYPED), other.translate(_HIDDEN_VIS)))
        kept = _C.mask_and(named, defined, ok)
        offsets = _C.pick(_C.u32_column(raw, 0, entsize, self.little), kept)
        if not self._names_ok(offsets, strtab) or not self._no_at(strtab, offsets):
            return None
        codes = _C.pick(info.translate(_LOCAL_CODE), kept)
        # a (name, type) pair seen again (the same static function in two objects) is dropped
        # by the table when it is first read as a whole (unique=False), as the loop drops it here
        table = _symbols.SymbolTable(strtab, offsets, codes, unique=False)
        return table
