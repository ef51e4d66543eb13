"""Sorted symbol indexes, so that a sentinel is looked up in O(log n), not by a scan.

SPEC §3 matching: an entry matches a name equal to it or continuing it with ``(``, ``@``,
``::`` or ``<``; ``*`` is a wildcard. Every match therefore starts with the entry's literal
prefix (the part before the first ``*``), which a bisect over the sorted names finds; only that
range is then checked with the full pattern.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from .facts import Symbol
from .globs import SymbolPattern
from .symbols import qualified_name


class SymbolIndex:
    """Defined symbols of one slice, searchable by SPEC §3 patterns."""

    __slots__ = ("_keys", "_syms")

    def __init__(self, symbols: Iterable[Symbol]):
        pairs: list[tuple[str, Symbol]] = []
        for s in symbols:
            pairs.append((s.demangled, s))
            if s.name != s.demangled:
                pairs.append((s.name, s))  # a mangled entry in the rules still matches
                q = qualified_name(s.demangled)
                if q != s.demangled:
                    pairs.append((q, s))  # "int ns::f<int>()" is found as "ns::f<int>()"
        pairs.sort(key=lambda p: p[0])
        self._keys = [p[0] for p in pairs]
        self._syms = [p[1] for p in pairs]

    def __len__(self) -> int:
        return len(self._keys)

    def find(self, pattern: SymbolPattern, *, strong_only: bool = False, limit: int | None = None) -> list[Symbol]:
        """The symbols matching ``pattern`` (each once), weak ones left out with ``strong_only``."""
        prefix = pattern.literal_prefix
        i = bisect_left(self._keys, prefix)
        keys, syms = self._keys, self._syms
        out: list[Symbol] = []
        seen: set[int] = set()
        n = len(keys)
        while i < n and keys[i].startswith(prefix):
            sym = syms[i]
            if (not strong_only or not sym.weak) and id(sym) not in seen and pattern.matches(keys[i]):
                seen.add(id(sym))
                out.append(sym)
                if limit is not None and len(out) >= limit:
                    break
            i += 1
        return out

    def any(self, pattern: SymbolPattern, *, strong_only: bool = False) -> bool:
        return bool(self.find(pattern, strong_only=strong_only, limit=1))


class NameIndex:
    """Plain names (imports), searchable by SPEC §3 patterns over their demangled form."""

    def __init__(self, names: Iterable[str]):
        from .symbols import demangle

        keys = set()
        for n in names:
            keys.add(n)
            d = demangle(n)
            if d != n:
                keys.add(d)
                keys.add(qualified_name(d))
        self._keys = sorted(keys)

    def any(self, pattern: SymbolPattern) -> bool:
        prefix = pattern.literal_prefix
        i = bisect_left(self._keys, prefix)
        while i < len(self._keys) and self._keys[i].startswith(prefix):
            if pattern.matches(self._keys[i]):
                return True
            i += 1
        return False
