"""Several byte strings searched for in one pass (the `strings` evidence, the index's hints).

One ``bytes.find`` per needle reads the haystack once per needle: twenty needles over a 434 MB
library is 1.5 s. With the ``ahocorasick_rs`` package (a SIMD-prefiltered Aho-Corasick
automaton) all needles cost about one pass. Its fast mode reports non-overlapping matches
(leftmost first), which could hide a needle whose only occurrences overlap another needle's
match; so the needles are split into groups in which no two can overlap (greedy colouring),
and each group is searched on its own: then every occurrence of every needle is reported,
except occurrences overlapping an earlier occurrence of the same needle (which answer nothing
new). Without the package, ``bytes.find`` is used per needle, with the same results.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

try:  # pragma: no cover - depends on the environment
    import ahocorasick_rs as _ac
except ImportError:  # pragma: no cover
    _ac = None


def can_overlap(a: bytes, b: bytes) -> bool:
    """Whether an occurrence of ``b`` can overlap an occurrence of ``a`` (either way)."""
    if a == b:
        return False
    for x, y in ((a, b), (b, a)):
        for k in range(len(x)):
            n = min(len(x) - k, len(y))
            if x[k:k + n] == y[:n]:
                return True
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
                ac = _ac.BytesAhoCorasick(g, matchkind=_ac.MATCHKIND_LEFTMOST_FIRST)
                self._automata.append((ac, g))

    def positions(self, data, start: int = 0, end: int | None = None) -> Iterator[tuple[bytes, int]]:
        """``(needle, position)`` of the occurrences in ``data[start:end]`` (see the module doc)."""
        stop = len(data) if end is None else end
        if not self.needles or stop - start <= 0:
            return
        if self._automata is not None:
            view = memoryview(data)[start:stop] if (start or stop != len(data)) else data
            try:
                for ac, group in self._automata:
                    for k, s, _e in ac.find_matches_as_indexes(view):  # type: ignore[attr-defined]
                        yield group[k], start + s
            finally:
                if isinstance(view, memoryview):
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
        search = self._search
        if not self._left:
            self._pos += len(chunk)
            return
        window = self._carry + bytes(chunk) if self._carry else chunk
        base = self._pos - len(self._carry)
        done = False
        for needle, rel in search.positions(window):
            p = base + rel
            e = p + len(needle)
            for r in self.regions:
                if r[0] <= p and e <= r[1] and needle not in self.found[r]:
                    self.found[r].add(needle)
                    if all(needle in f for f in self.found.values()):
                        self._left.discard(needle)
                        done = True
        if done:  # fewer needles left: a smaller automaton for the rest of the file
            self._search = searcher(frozenset(self._left))
        keep = self._search.maxlen - 1
        self._pos += len(chunk)
        if keep > 0:
            tail = window[-keep:] if len(window) >= keep else window
            self._carry = bytes(tail)
        else:
            self._carry = b""

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
