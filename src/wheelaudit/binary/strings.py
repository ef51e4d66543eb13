"""Several byte strings searched for in one pass (the `strings` evidence, the index's hints).

One ``bytes.find`` per needle reads the haystack once per needle, which over a large library
adds up. With the ``ahocorasick_rs`` package (a SIMD-prefiltered Aho-Corasick
automaton) all needles cost about one pass. Its fast mode reports non-overlapping matches
(leftmost first), which could hide a needle whose only occurrences overlap another needle's
match; so the needles are split into groups in which no two can overlap (greedy colouring),
and each group is searched on its own: then every occurrence of every needle is reported,
except occurrences overlapping an earlier occurrence of the same needle (which answer nothing
new). Without the package, ``bytes.find`` is used per needle, with the same results.

A group of one to three needles is searched a needle at a time (each automaton then runs the
``memchr`` crate's SIMD ``memmem``): for two or three needles the automaton chooses a "rare
bytes" prefilter that suits text, not machine code, and is slower there than searching the
needles one after the other; four or more needles get the packed (Teddy) prefilter, whose cost
hardly grows with their number.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from types import ModuleType
from typing import Any

_ac: ModuleType | None  # the automaton library, when installed
try:  # pragma: no cover - depends on the environment
    import ahocorasick_rs

    _ac = ahocorasick_rs
except ImportError:  # pragma: no cover
    _ac = None


#: groups of up to this many needles are searched a needle at a time (see the module doc)
SINGLY = 3


def can_overlap(a: bytes, b: bytes) -> bool:
    """Whether an occurrence of ``b`` can overlap an occurrence of ``a`` (either way)."""
    if a == b:
        return False
    for x, y in ((a, b), (b, a)):
        # y laid over x from position k on: only the positions of y's first byte can match
        first = y[:1]
        k = x.find(first)
        while k >= 0:
            n = min(len(x) - k, len(y))
            if x[k:k + n] == y[:n]:
                return True
            k = x.find(first, k + 1)
    return False


def _groups(needles: Sequence[bytes]) -> list[list[bytes]]:
    groups: list[list[bytes]] = []
    for n in sorted(needles, key=len, reverse=True):
        for g in groups:
            if not any(can_overlap(n, m) for m in g):
                g.append(n)
                break
        else:
            groups.append([n])
    return groups


class NeedleSearch:
    """Finds ``needles`` in buffers (``bytes``, ``mmap``, ``memoryview``...)."""

    __slots__ = ("needles", "maxlen", "_automata")

    def __init__(self, needles: Iterable[bytes], first_only: bool = True) -> None:
        self.needles: tuple[bytes, ...] = tuple(dict.fromkeys(n for n in needles if n))
        self.maxlen = max((len(n) for n in self.needles), default=0)
        self._automata: list[tuple[object, list[bytes]]] | None = None
        if _ac is not None and self.needles:
            self._automata = []
            for g in _groups(self.needles):
                for part in ([n] for n in g) if len(g) <= SINGLY else (g,):
                    ac = _ac.BytesAhoCorasick(part, matchkind=_ac.MATCHKIND_LEFTMOST_FIRST)
                    self._automata.append((ac, part))

    def positions(self, data, start: int = 0, end: int | None = None) -> Iterator[tuple[bytes, int]]:
        """``(needle, position)`` of the occurrences in ``data[start:end]`` (see the module doc)."""
        stop = len(data) if end is None else end
        if not self.needles or stop - start <= 0:
            return
        if self._automata is not None:
            whole = not start and stop == len(data)
            view = data if whole else memoryview(data)[start:stop]
            try:
                for ac, group in self._automata:
                    for k, s, _e in ac.find_matches_as_indexes(view):  # type: ignore[attr-defined]
                        yield group[k], start + s
            finally:
                if not whole:  # (only the view made here; a caller's memoryview stays usable)
                    view.release()
            return
        for needle in self.needles:
            pos = data.find(needle, start, stop)
            while pos >= 0:
                yield needle, pos
                pos = data.find(needle, pos + 1, stop)

    def found(self, data, start: int = 0, end: int | None = None) -> frozenset[bytes]:
        """Which needles occur (wholly) in ``data[start:end]``."""
        stop = len(data) if end is None else end
        if self._automata is None:
            return frozenset(n for n in self.needles if data.find(n, start, stop) != -1)
        out = set()
        for needle, _pos in self.positions(data, start, stop):
            out.add(needle)
            if len(out) == len(self.needles):
                break
        return frozenset(out)


@lru_cache(maxsize=64)
def searcher(needles: frozenset[bytes] | tuple[bytes, ...]) -> NeedleSearch:
    """A :class:`NeedleSearch` for ``needles``, built once (an automaton per ruleset, not per file)."""
    return NeedleSearch(sorted(needles) if isinstance(needles, frozenset) else needles)


def last_in_strings(needles: Iterable[bytes], blob) -> dict[bytes, dict[int, int]]:
    """Where each needle last occurs in each NUL-terminated string of ``blob`` (a string table)
    that holds it: ``{needle: {start of the string: position of its last occurrence}}``. A
    needle holding a NUL is in no string.

    One pass of a single automaton over every needle (not a pass per non-overlapping group,
    as :class:`NeedleSearch` needs). Its leftmost-first matches may
    hide an occurrence, but only behind a reported match that overlaps it, and two occurrences
    that overlap lie in the same string (needles hold no NUL); so in each string with a
    reported match, the needles reported there and those that can overlap them
    (:func:`can_overlap`) are looked for again with ``rfind``, which also gives the last
    occurrence exactly (one hidden behind an earlier occurrence of the same needle included)."""
    wanted = tuple(sorted({n for n in needles if n and b"\0" not in n}))
    out: dict[bytes, dict[int, int]] = {n: {} for n in wanted}
    if not wanted:
        return out
    rfind = blob.rfind
    if _ac is None:
        for n in wanted:
            got = out[n]
            find = blob.find
            p = find(n)
            while p >= 0:
                got[rfind(b"\0", 0, p) + 1] = p  # (positions rise: the last one stays)
                p = find(n, p + 1)
        return out
    ac, related = _string_automaton(wanted)
    reported: dict[int, set[int]] = {}  # string start -> needles reported in it
    last_start = last_end = -1
    for k, s, _e in ac.find_matches_as_indexes(blob):
        if not last_start <= s < last_end:  # (matches come in order: most share the last string)
            last_start = rfind(b"\0", 0, s) + 1
            last_end = blob.find(b"\0", s)
            if last_end < 0:
                last_end = len(blob)
        reported.setdefault(last_start, set()).add(k)
    find = blob.find
    for start, ks in reported.items():
        end = find(b"\0", start)
        if end < 0:
            end = len(blob)
        look: set[int] = set()
        for k in ks:
            look |= related[k]
        for k in look:
            n = wanted[k]
            p = rfind(n, start, end)
            if p >= 0:
                out[n][start] = p
    return out


@lru_cache(maxsize=16)
def _string_automaton(needles: tuple[bytes, ...]) -> tuple[Any, list[frozenset[int]]]:
    """The automaton over all ``needles`` and, per needle, itself and the needles that can
    overlap it (see :func:`last_in_strings`)."""
    assert _ac is not None  # (its callers search without an automaton when the library is missing)
    ac = _ac.BytesAhoCorasick(list(needles), matchkind=_ac.MATCHKIND_LEFTMOST_FIRST)
    related = [frozenset([k] + [j for j, m in enumerate(needles) if can_overlap(n, m)]) for k, n in enumerate(needles)]
    return ac, related


class StreamSearch:
    """The needles found in a file that goes by in chunks, per region (``[start, end)``, e.g.
    the slices of a universal binary), without keeping the file: each chunk is searched with
    the last ``maxlen - 1`` bytes of the one before, so no occurrence is cut."""

    __slots__ = ("regions", "found", "_search", "_carry", "_pos", "_left")

    def __init__(self, needles: Iterable[bytes], regions: Sequence[tuple[int, int]]) -> None:
        self._search = searcher(tuple(dict.fromkeys(n for n in needles if n)))
        self.regions = list(regions)
        self.found: dict[tuple[int, int], set[bytes]] = {r: set() for r in self.regions}
        self._carry = b""
        self._pos = 0  # absolute offset of the next byte fed
        self._left = set(self._search.needles)

    def feed(self, chunk) -> None:
        if not self._left:
            self._pos += len(chunk)
            return
        # a region that starts inside the chunk starts a piece of its own: searched afresh from
        # there, an occurrence at its start cannot hide behind an overlapping occurrence of the
        # same needle that began before it (non-overlapping matching would skip it)
        pos, end = self._pos, self._pos + len(chunk)
        cuts = sorted({r[0] for r in self.regions if pos < r[0] < end})
        if not cuts:
            self._feed(chunk)
            return
        view = memoryview(chunk)
        try:
            at = 0
            for c in cuts + [end]:
                if self._left:
                    self._feed(view[at:c - pos])
                else:
                    self._pos += c - pos - at
                at = c - pos
        finally:
            view.release()

    def _feed(self, chunk) -> None:
        # the seam (the carried tail and the chunk's first bytes) for occurrences that straddle
        # the boundary, then the chunk in place (no copy of it)
        keep = self._search.maxlen - 1
        seam = self._carry + bytes(chunk[:keep]) if self._carry else b""
        base = self._pos - len(self._carry)
        done = self._note(self._search.positions(seam), base) if seam else False
        done = self._note(self._search.positions(chunk), self._pos) or done
        if done:  # fewer needles left: a smaller automaton for the rest of the file
            self._search = searcher(frozenset(self._left))
        self._pos += len(chunk)
        keep = self._search.maxlen - 1
        if keep <= 0:
            self._carry = b""
        elif len(chunk) >= keep:
            self._carry = bytes(chunk[-keep:])
        else:
            self._carry = (self._carry + bytes(chunk))[-keep:]

    def _note(self, hits: Iterable[tuple[bytes, int]], base: int) -> bool:
        """Record ``hits`` (positions relative to ``base``); whether a needle is now found in
        every region."""
        done = False
        for needle, rel in hits:
            p = base + rel
            e = p + len(needle)
            for r in self.regions:
                if r[0] <= p and e <= r[1] and needle not in self.found[r]:
                    self.found[r].add(needle)
                    if all(needle in f for f in self.found.values()):
                        self._left.discard(needle)
                        done = True
        return done

    def result(self, start: int, end: int) -> frozenset[bytes] | None:
        r = self.found.get((start, end))
        return None if r is None else frozenset(r)


class PrecomputedStrings(tuple):
    """The needles, with what a :class:`StreamSearch` found per region: handed to a reader in
    place of the needles, so that it does not search the (spooled) file again."""

    search: StreamSearch

    def __new__(cls, needles: Iterable[bytes], search: StreamSearch) -> PrecomputedStrings:
        self = super().__new__(cls, needles)
        self.search = search
        return self
