"""Symbol names and tables: the compact symbol table the readers build, and name matching
(demangling itself is :mod:`wheelaudit.binary.demangle`).

Names are as the linker sees them, less Mach-O's leading underscore and any ELF ``@version``.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Iterator, Sequence
from itertools import accumulate, compress, repeat

from wheelaudit.model.binary import Symbol, make_symbol


_SPECIAL_PREFIXES = (
    "vtable for ", "VTT for ", "construction vtable for ", "typeinfo for ", "typeinfo name for ",
    "guard variable for ", "non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
    "TLS init function for ", "TLS wrapper function for ", "reference temporary for ",
    "transaction clone for ",
)


def qualified_name(demangled: str) -> str:
    """The demangled name without a leading return type or special-name prefix.

    Template function instances demangle with their return type in front
    (``int mlx::core::size_of_dtype<float>()``) and special names with a phrase
    (``vtable for mlx::core::Foo``); SPEC §3 patterns name the qualified name, so the index
    also files each symbol under this form. Returns ``demangled`` unchanged when there is
    nothing to strip.
    """
    name = demangled
    # fast path, for nearly every name: no space before the first "(" or "<" means no return
    # type and no special-name phrase
    stop = len(name)
    for ch in "(<":
        k = name.find(ch)
        if k != -1 and k < stop:
            stop = k
    if name.find(" ", 0, stop) == -1 and not name.startswith("decltype("):
        return demangled
    for prefix in _SPECIAL_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    if name.startswith("decltype(auto) "):
        name = name[len("decltype(auto) "):]
    depth = 0
    cut = -1
    i, n = 0, len(name)
    while i < n:
        c = name[i]
        if c == "<":
            if not (name.endswith("operator", 0, i) or name.endswith("operator<", 0, i)):
                depth += 1
        elif c == ">":
            if not (name.endswith("operator", 0, i) or name.endswith("operator-", 0, i) or name.endswith("operator>", 0, i)):
                depth = max(0, depth - 1)
        elif c == "(" and depth == 0:
            if name.startswith("(anonymous namespace)", i):
                i += len("(anonymous namespace)")
                continue
            if not name.endswith("operator", 0, i):
                break
        elif c == " " and depth == 0 and not name.endswith("operator", 0, i) and not name.endswith(",", 0, i):
            cut = i
        i += 1
    return name[cut + 1:] if cut >= 0 else name


# --------------------------------------------------------------------------------------------
# Compact symbol tables

BINDINGS: tuple[str, ...] = ("global", "weak", "local")
TYPES: tuple[str, ...] = ("func", "data", "other")
BINDING_CODE = {b: i for i, b in enumerate(BINDINGS)}
TYPE_CODE = {t: i for i, t in enumerate(TYPES)}


def symbol_code(binding: str, type_: str) -> int:
    """One byte for a symbol's binding and type (see :class:`SymbolTable`)."""
    return BINDING_CODE[binding] << 2 | TYPE_CODE[type_]




#: names at least this long are decoded once per table and shared (SymbolTable.raw_name)
SHARED_LENGTH = 256


def _restore_table(blob, offsets, codes, versions, vindex, underscore, unique, tails=None, hits=None, narrowed=False):
    if isinstance(blob, memoryview):
        blob = blob.obj if isinstance(blob.obj, bytes) and len(blob.obj) == blob.nbytes else blob.tobytes()
    table = SymbolTable(blob, offsets, codes, versions, vindex, underscore=underscore, unique=unique)
    table._tails = tails
    table.hits = hits
    table.narrowed = narrowed
    return table


class SymbolTable(Sequence[Symbol]):
    """The defined symbols of one table, kept compactly: a read-only sequence of :class:`Symbol`.

    A big library holds a great many symbols; as objects they would be costly to build, ship
    between processes and demangle, while a rule looks at a handful. So a table keeps the names
    where the file has them — ``blob``, a NUL-separated string table (the ELF ``.strtab`` itself,
    or the joined names of a Mach-O export trie), each name starting at ``offsets[i]`` — and one
    byte per symbol for binding and type (``codes``), plus a version index (``vindex`` into
    ``versions``) for ELF exports. A :class:`Symbol` is made when an item is read; names are
    decoded as UTF-8 (``backslashreplace``), Mach-O's leading underscore dropped
    (``underscore``). With ``unique=False`` the entries may repeat a (name, type) pair, which is
    dropped (first one kept) the first time the sequence is read as a whole.

    ``hits`` (set by :func:`wheelaudit.binary.narrow.narrow`, in the worker that read the table): the
    raw indices of the entries whose name contains each of a ruleset's hints; ``narrowed``: the
    table keeps only the entries those hints (and, for some rulesets, every mangled name) pick,
    so it answers that ruleset's lookups and no others.
    """

    __slots__ = ("blob", "offsets", "codes", "versions", "vindex", "underscore", "_order", "_tails", "hits",
                 "narrowed", "_ascending", "_long")

    def __init__(self, blob: bytes, offsets: Sequence[int], codes: bytes, versions: tuple[str | None, ...] = (None,),
                 vindex: Sequence[int] | None = None, *, underscore: bool = False, unique: bool = True,
                 ascending: bool | None = None) -> None:
        self.blob = blob
        self.offsets = offsets if isinstance(offsets, array) else array("Q", offsets)
        self.codes = bytes(codes)
        self.versions = tuple(versions)
        self.vindex = vindex
        self.underscore = underscore
        # None: every entry counts; False: repeats not dropped yet; a list: the entries kept
        self._order: list[int] | bool | None = None if unique else False
        self._tails: dict[int, list[tuple[int, int]]] | None = None
        self.hits: dict[bytes, set[int]] | None = None
        self.narrowed = False
        self._ascending = ascending
        #: offset -> name, for the names of SHARED_LENGTH characters and more: each is decoded
        #: once and its str shared by every entry (and Symbol) that names it, so that entries
        #: pointing at one long string cost that string once
        self._long: dict[int, str] = {}

    def ascending(self) -> bool:
        """Whether ``offsets`` never decrease (ld64 writes a string table in the order of its
        symbols; ELF linkers do not), found once (``ascending=``: known by the reader)."""
        if self._ascending is None:
            from wheelaudit.binary._columns import ascending

            self._ascending = ascending(self.offsets)
        return self._ascending

    def tails(self) -> dict[int, list[tuple[int, int]]]:
        """Entries whose name starts inside another string of the blob (a linker that merges
        "bar" into "foobar"): string start -> [(offset, raw index)]. Usually empty; computed
        once (by the reader, in the worker process, when it builds the table)."""
        if self._tails is None:
            blob, offsets = self.blob, self.offsets
            tails: dict[int, list[tuple[int, int]]] = {}
            if len(offsets):
                before = bytes(map(blob.__getitem__, map(operator.sub, offsets, repeat(1))))
                for i in compress(range(len(offsets)), before):  # the byte before is not a NUL
                    o = offsets[i]
                    if o:
                        tails.setdefault(blob.rfind(b"\0", 0, o) + 1, []).append((o, i))
            self._tails = tails
        return self._tails

    def subset(self, indices: Sequence[int]) -> SymbolTable:
        """A table of the entries at ``indices`` (raw indices, ascending), in that order, each
        name a string of its own in a new blob (repeats, if this table may have them, kept)."""
        blob, offsets = self.blob, self.offsets
        find = blob.find
        picked = list(map(offsets.__getitem__, indices))
        if len(set(picked)) == len(picked):
            names = [blob[o:find(b"\0", o)] for o in picked]
            new_blob = b"\0".join(names) + b"\0" if names else b""
            new_offsets = array(offsets.typecode, accumulate((len(n) + 1 for n in names[:-1]), initial=0) if names else ())
        else:  # entries that share a string share it in the new blob too
            where: dict[int, int] = {}
            parts: list[bytes] = []
            size = 0
            for o in picked:
                if o not in where:
                    where[o] = size
                    name = blob[o:find(b"\0", o)]
                    parts.append(name)
                    size += len(name) + 1
            new_blob = b"\0".join(parts) + b"\0"
            new_offsets = array(offsets.typecode, map(where.__getitem__, picked))
        codes = bytes(map(self.codes.__getitem__, indices))
        vindex = self.vindex
        if vindex is not None:
            versions = map(vindex.__getitem__, indices)
            vindex = bytes(versions) if isinstance(vindex, bytes) else array(getattr(vindex, "typecode", "Q"), versions)
        table = SymbolTable(new_blob, new_offsets, codes, self.versions, vindex, underscore=self.underscore,
                            unique=self._order is None)
        table._tails = {}
        return table

    # ---- raw access (index i of the stored entries) -------------------------------------------
    @property
    def raw_count(self) -> int:
        """Stored entries (before any lazy deduplication)."""
        return len(self.offsets)

    def raw_name(self, i: int) -> str:
        blob = self.blob
        start = self.offsets[i]
        end = blob.find(b"\0", start)
        if end < 0:
            end = len(blob)
        if end - start >= SHARED_LENGTH:
            name = self._long.get(start)
            if name is not None:
                return name
        raw = blob[start:end]
        if self.underscore and raw[:1] == b"_":
            raw = raw[1:]
        name = raw.decode("utf-8", "backslashreplace")
        if end - start >= SHARED_LENGTH:
            self._long[start] = name
        return name

    def raw_symbol(self, i: int, demangled: str | None = None) -> Symbol:
        code = self.codes[i]
        version = self.versions[self.vindex[i]] if self.vindex is not None else self.versions[0]
        return make_symbol(self.raw_name(i), BINDINGS[code >> 2], TYPES[code & 3], version, demangled)

    def _dedupe(self) -> list[int]:
        seen: set[tuple[str, int]] = set()
        order = []
        codes = self.codes
        for i in range(len(self.offsets)):
            key = (self.raw_name(i), codes[i])
            if key not in seen:
                seen.add(key)
                order.append(i)
        return order

    def _indices(self) -> Sequence[int]:
        if self._order is None:
            return range(len(self.offsets))
        if self._order is False:
            self._order = self._dedupe()
        return self._order  # type: ignore[return-value]

    @property
    def may_repeat(self) -> bool:
        """Entries may repeat a (name, type) pair (only the first one counts)."""
        return self._order is not None

    # ---- Sequence ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._indices())

    def __bool__(self) -> bool:
        return len(self.offsets) > 0

    def __getitem__(self, k):
        idx = self._indices()
        if isinstance(k, slice):
            return [self.raw_symbol(i) for i in idx[k]]
        return self.raw_symbol(idx[k])

    def __iter__(self) -> Iterator[Symbol]:
        for i in self._indices():
            yield self.raw_symbol(i)

    def any_name_startswith(self, prefix: str) -> bool:
        """Whether a name starts with ``prefix`` (a substring test on the table first)."""
        raw = prefix.encode("utf-8", "surrogatepass")
        if raw not in self.blob:
            return False
        return any(self.raw_name(i).startswith(prefix) for i in self._indices())

    def names(self) -> list[str]:
        """The names, in order (no Symbol objects made)."""
        return [self.raw_name(i) for i in self._indices()]

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if isinstance(other, SymbolTable):
            if (self.blob == other.blob and self.offsets == other.offsets and self.codes == other.codes
                    and (self._order is None) == (other._order is None) and self.underscore == other.underscore
                    and self.versions == other.versions and self.vindex == other.vindex):
                return True
            return list(self) == list(other)
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: object) -> list[Symbol]:
        if isinstance(other, (list, tuple, SymbolTable)):
            return list(self) + list(other)
        return NotImplemented

    def __radd__(self, other: object) -> list[Symbol]:
        if isinstance(other, (list, tuple)):
            return list(other) + list(self)
        return NotImplemented

    def __repr__(self) -> str:
        n = len(self)
        if n <= 20:
            return repr(list(self))
        return f"<SymbolTable of {n} symbols: {self[0]!r}, ...>"

    def __reduce_ex__(self, protocol):
        blob = self.blob
        if protocol >= 5 and len(blob) > (1 << 20):
            import pickle

            blob = pickle.PickleBuffer(blob)  # out of band: shipped without a copy
        return (_restore_table, (blob, self.offsets, self.codes, self.versions, self.vindex, self.underscore,
                                 self._order is None, self._tails, self.hits, self.narrowed))
