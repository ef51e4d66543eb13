"""The nlist symbol table (``LC_SYMTAB``): imports with the library each binds to, locals, and
the ``N_EXT`` definitions (the exports of an image without an export trie); a loop over the
entries, or a column at a time (:mod:`wheelaudit.binary._columns`) when no entry needs a decision."""

from __future__ import annotations

import struct

from wheelaudit.binary import _columns as _C
from wheelaudit.binary import symbols as _symbols
from wheelaudit.binary.macho.constants import (
    CODE_FLAGS,
    DYNAMIC_LOOKUP_ORDINAL,
    EXECUTABLE_ORDINAL,
    N_ABS,
    N_EXT,
    N_INDR,
    N_PBUD,
    N_PEXT,
    N_SECT,
    N_STAB,
    N_TYPE,
    N_UNDF,
    N_WEAK_DEF,
    N_WEAK_REF,
    SELF_LIBRARY_ORDINAL,
)
from wheelaudit.binary.macho.image import ImageBase, undecorate
from wheelaudit.model.binary import MACHO_EXECUTABLE, MACHO_FLAT, MACHO_SELF, Slice, Symbol, make_symbol

# the fast path's byte tables (Nlist.fast_symtab)
_LOCAL_TYPE = _C.table(lambda t: not t & N_STAB and (t & N_TYPE) in (N_SECT, N_ABS)
                       and not (t & N_EXT and not t & N_PEXT))
_IS_SECT = _C.table(lambda t: (t & N_TYPE) == N_SECT)
_IS_ABS = _C.table(lambda t: (t & N_TYPE) == N_ABS)
_MAYBE_IMPORT = _C.table(lambda t: not t & N_STAB and (t & N_TYPE) in (N_UNDF, N_PBUD) and bool(t & N_EXT))
_LOCAL_CODES = _C.table(lambda v: _symbols.symbol_code("local", "data" if v else "func") if v < 2 else 0)


class Nlist(ImageBase):
    """The symbol table (``LC_SYMTAB``): imports, locals, and the exports of an image without a trie."""

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
        find = data.find  # type: ignore[union-attr]  # (the readers are handed bytes or an mmap)
        # per n_sect (1-based): does the section hold instructions?
        code = [False] + [bool(flags & CODE_FLAGS) for _, _, flags in self.sections]
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
                    imports.append(undecorate(raw))
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
            name = names.get(raw) or names.setdefault(raw, undecorate(raw))
            local_syms.append(make(name, "local", sym_type, None, dm(name)))
        s.locals = local_syms
        exports = []
        for raw, sym_type, weak in defined:
            name = names.get(raw) or names.setdefault(raw, undecorate(raw))
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
                imports.append(undecorate(raw))
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
