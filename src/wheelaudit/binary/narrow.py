"""A compact symbol table narrowed to what a ruleset's symbol entries can match (its
:class:`~wheelaudit.model.interest.Interest`): the hints located in one pass over the string table,
and only the entries that can be candidates kept. The scan's workers narrow each table they read;
the symbol indexes of the checks (:mod:`wheelaudit.checks.index`) look the hints up again."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from itertools import compress

from wheelaudit.binary.strings import last_in_strings
from wheelaudit.binary.symbols import SymbolTable
from wheelaudit.model.interest import Interest

__all__ = ["decorated", "locate", "narrow"]


def locate(table: SymbolTable, hints: Iterable[bytes]) -> dict[bytes, set[int]]:
    """The raw indices of the entries of ``table`` whose name contains each of ``hints``, all
    hints found in one pass over its string table.

    An entry's name is ``blob[offset:next NUL]``; it contains a hit at ``p`` when its offset is
    the start of the string holding ``p`` or, for a name sharing another's tail (a few linkers
    merge "bar" into "foobar"), lies between that start and ``p``. Rather than build
    :meth:`~wheelaudit.binary.symbols.SymbolTable.tails` (a Python step per entry), the offsets are
    matched against the positions between each hit and its string's start, in one C-level
    pass."""
    hits: dict[bytes, set[int]] = {h: set() for h in hints}  # (b"" is in no name: no entry)
    wanted = [h for h in hits if h]
    if not wanted:
        return hits
    blob = table.blob
    rfind = blob.rfind
    last = last_in_strings(wanted, blob)  # hint -> string start -> last hit in it
    if not any(last.values()):
        return hits
    by_start: dict[int, list[tuple[bytes, int]]] = {}
    for h, seen in last.items():
        for start, p in seen.items():
            by_start.setdefault(start, []).append((h, p))
    offsets = table.offsets
    if table.ascending():
        # the offsets in order (ld64's tables): the entries between a string's start and its
        # last hit are one slice, found by bisection (no pass over every offset, as below)
        for start, pairs in by_start.items():
            lo = bisect_left(offsets, start)
            for i in range(lo, bisect_right(offsets, max(p for _h, p in pairs), lo)):
                o = offsets[i]
                for h, p in pairs:
                    if o <= p:
                        hits[h].add(i)
        return hits
    span = sum(p - start + 1 for seen in last.values() for start, p in seen.items())
    if span > max(1 << 20, 4 * len(offsets)):
        # hits far into very long names (a crafted table): the positions would not fit in
        # memory; map hits through the string starts and the tails map instead (linear)
        for i in compress(range(len(offsets)), map(by_start.__contains__, offsets)):
            for h, _p in by_start[offsets[i]]:
                hits[h].add(i)
        for start, entries in table.tails().items():
            for h, p in by_start.get(start, ()):
                for o, i in entries:
                    if o <= p:
                        hits[h].add(i)
        return hits
    # an entry can only hold a hit if its offset lies between the start of the hit's string and
    # the hit: those few positions, in one set, then one pass over the offsets (in C)
    near: set[int] = set()
    for start, pairs in by_start.items():
        near.update(range(start, max(p for _h, p in pairs) + 1))
    for i in compress(range(len(offsets)), map(near.__contains__, offsets)):
        o = offsets[i]
        for h, p in by_start[rfind(b"\0", 0, o) + 1]:
            if o <= p:
                hits[h].add(i)
    return hits


def narrow(table: SymbolTable, interest: Interest, keep_all: bool = False) -> SymbolTable:
    """``table`` with the hints of ``interest`` located (:attr:`SymbolTable.hits`) and, unless
    ``keep_all`` or the interest covers every name, only the entries that can be candidates:
    an index over the result finds what one over ``table`` finds, in the same order."""
    hits = locate(table, interest.hints)
    if keep_all or interest.everything or decorated(table):  # (MSVC names: found by their bare hints)
        table.hits = hits
        return table
    kept: set[int] = set()
    for got in hits.values():
        kept |= got
    if interest.all_mangled:
        lead = b"__Z" if table.underscore else b"_Z"
        blob, offs = table.blob, table.offsets
        kept.update(i for i in range(table.raw_count) if blob.startswith(lead, offs[i]))
    order = sorted(kept)
    sub = table.subset(order)
    new = {old: k for k, old in enumerate(order)}
    sub.hits = {h: {new[i] for i in got} for h, got in hits.items()}
    sub.narrowed = True
    return sub


def decorated(table: SymbolTable) -> bool:
    """Whether a name of ``table`` is MSVC-decorated (``?...``: a PE's)."""
    blob = table.blob
    return blob[:1] == b"?" or (b"?" in blob and b"\0?" in blob)  # (a lone "?" is found fast: rare elsewhere)
