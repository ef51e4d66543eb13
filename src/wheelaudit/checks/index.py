"""Symbol indexes: find the symbols a SPEC §3 pattern matches without demangling every name.

SPEC §3 matching: an entry matches a name equal to it or continuing it with ``(``, ``@``,
``::`` or ``<``; ``*`` is a wildcard. A symbol is matched through any of its keys: its
demangled name, its mangled name, and its demangled name less a return type or special-name
prefix (:func:`~wheelaudit.binary.symbols.qualified_name`).

Demangling is what costs (a call per name, and a big library has very many names), so it
is done for candidates only. A candidate is a name that contains what any
match must contain (:func:`~wheelaudit.model.interest.pattern_hints`): the entry's longest literal
piece for C names and names matched as they are, the ``<length><identifier>`` encodings of the
entry's scopes for mangled names. For a :class:`~wheelaudit.binary.symbols.SymbolTable` the hints of
all the patterns of a ruleset are found in one pass over its string table (``prepare``); the
result is the same as demangling everything and scanning the sorted keys, examples in the same
order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from wheelaudit.model.binary import Symbol
from wheelaudit.model.interest import pattern_hints, selective
from wheelaudit.model.globs import SymbolPattern
from wheelaudit.binary.demangle import demangle, is_mangled
from wheelaudit.binary.narrow import decorated, locate
from wheelaudit.binary.symbols import SymbolTable, qualified_name

from wheelaudit.model.wheel import use_symbol_lookups

if TYPE_CHECKING:
    from wheelaudit.model.wheel import Wheel

#: with a limit, at most this many candidates are demangled to order the examples exactly; past
#: it the first ``limit`` matches in table order are sorted (the matched set is the same)
MAX_ORDERED_CANDIDATES = 4096


_selective = selective


def _msvc_hints(mangled: tuple[bytes, ...]) -> tuple[str, ...]:
    """The Itanium hints (``10executorch``) as an MSVC name spells them (``executorch``): a
    decorated name writes each identifier once in full (later mentions are back-references)."""
    return tuple(h.decode("ascii").lstrip("0123456789") for h in mangled)


def _keys(name: str, demangled: str | None = None) -> list[str]:
    """The keys a symbol is found under (demangled, mangled, qualified), as SPEC §3 says."""
    d = demangled if demangled is not None else demangle(name)
    if d == name:
        return [d]
    q = qualified_name(d)
    return [d, name] if q == d else [d, name, q]


def _first_key(pattern: SymbolPattern, keys: list[str]) -> str | None:
    """The smallest key ``pattern`` matches (the order the old sorted index found it in)."""
    best = None
    for k in keys:
        if pattern.matches(k) and (best is None or k < best):
            best = k
    return best


class SymbolIndex:
    """Defined symbols of one slice (a :class:`SymbolTable` or any list of :class:`Symbol`)."""

    __slots__ = ("_table", "_syms", "_names", "_hits", "_mangled", "_msvc")

    def __init__(self, symbols: Iterable[Symbol], patterns: Iterable[SymbolPattern] = ()):
        if isinstance(symbols, SymbolTable):
            self._table: SymbolTable | None = symbols
            self._syms: list[Symbol] | None = None
            self._names: list[str] | None = None
        else:
            self._table = None
            self._syms = list(symbols)
            self._names = [s.name for s in self._syms]
        self._hits: dict[bytes, set[int]] = {}  # hint -> the entries whose name contains it
        self._mangled: list[int] | None = None
        self._msvc: bool | None = None  # whether any name is MSVC-decorated (``?...``)
        pats = list(patterns)
        if pats:
            self.prepare(pats)

    def __len__(self) -> int:
        return self._table.raw_count if self._table is not None else len(self._syms or ())

    # ---- candidates ------------------------------------------------------------------------
    def prepare(self, patterns: Iterable[SymbolPattern]) -> None:
        """Find the hints of ``patterns`` in one pass (instead of one pass per pattern)."""
        want: set[bytes] = set()
        for p in patterns:
            plain, mangled = pattern_hints(p)
            want.add(plain)
            if mangled:
                want.add(_selective(mangled))
                if self._has_msvc():
                    want.add(_msvc_hints((_selective(mangled),))[0].encode("ascii"))
        self._locate([h for h in want if h and h not in self._hits])

    def _locate(self, hints: list[bytes]) -> None:
        if not hints:
            return
        if self._table is None:  # (a list of symbols: a few, built by hand or from JSON)
            names = self._names or []
            for h in hints:
                text = h.decode("utf-8", "surrogatepass")
                self._hits[h] = {i for i, n in enumerate(names) if text in n}
            return
        known = self._table.hits
        if known is not None:
            missing = [h for h in hints if h not in known]
            if missing and self._table.narrowed:
                raise RuntimeError(f"hints {missing!r} were not located when the table was narrowed")
            self._hits.update((h, known[h]) for h in hints if h in known)
            hints = missing
        if hints:
            self._hits.update(locate(self._table, hints))

    def _entries(self, hint: bytes) -> set[int]:
        """The raw indices of the entries whose name contains ``hint``."""
        got = self._hits.get(hint)
        if got is None:
            self._locate([hint])
            got = self._hits[hint]
        return got

    def _all_mangled(self) -> list[int]:
        if self._mangled is None:
            if self._table is None:
                self._mangled = [i for i, n in enumerate(self._names or []) if is_mangled(n)]
            else:
                t = self._table
                blob, offs = t.blob, t.offsets
                lead = (b"__Z",) if t.underscore else (b"_Z", b"?") if self._has_msvc() else (b"_Z",)
                self._mangled = [i for i in range(t.raw_count) if blob.startswith(lead, offs[i])]
        return self._mangled

    def _has_msvc(self) -> bool:
        if self._msvc is None:
            if self._table is not None:
                self._msvc = not self._table.underscore and decorated(self._table)
            else:
                self._msvc = any(n[:1] == "?" for n in self._names or ())
        return self._msvc

    def _raw(self, i: int) -> bytes:
        if self._table is not None:
            blob = self._table.blob
            start = self._table.offsets[i]
            return blob[start:blob.find(b"\0", start)]
        return (self._names or [])[i].encode("utf-8", "surrogatepass")

    def _candidates(self, pattern: SymbolPattern) -> set[int]:
        plain, mangled = pattern_hints(pattern)
        out = set(self._entries(plain))
        if mangled is None:
            out.update(self._all_mangled())
            return out
        rarest = _selective(mangled)
        others = [h for h in mangled if h != rarest]
        for i in self._entries(rarest):
            if i not in out:
                raw = self._raw(i)
                if all(h in raw for h in others):
                    out.add(i)
        if self._has_msvc():
            # MSVC names spell each identifier bare (``register_backend@runtime@executorch@@``):
            # the names holding the bare form of the rarest hint, then the others checked on them
            bare = [h.encode("ascii") for h in _msvc_hints(mangled)]
            for i in self._entries(_msvc_hints((rarest,))[0].encode("ascii")):
                if i not in out:
                    raw = self._raw(i)
                    if raw[:1] == b"?" and all(h in raw for h in bare):
                        out.add(i)
        return out

    # ---- lookups ---------------------------------------------------------------------------
    def find(self, pattern: SymbolPattern, *, strong_only: bool = False, limit: int | None = None) -> list[Symbol]:
        """The symbols matching ``pattern`` (each once), weak ones left out with ``strong_only``.

        In the order of their smallest matching key, as a scan of the sorted keys finds them.
        """
        cands = sorted(self._candidates(pattern))
        table, syms = self._table, self._syms
        if strong_only:
            if table is not None:
                codes = table.codes
                cands = [i for i in cands if codes[i] >> 2 != 1]
            else:
                assert syms is not None
                cands = [i for i in cands if not syms[i].weak]
        hits: list[tuple[str, int, Symbol]] = []
        seen: set[tuple[str, int]] = set()
        exact = limit is None or len(cands) <= MAX_ORDERED_CANDIDATES
        for i in cands:
            if table is not None:
                name = table.raw_name(i)
                d = demangle(name)
                key = _first_key(pattern, _keys(name, d))
                if key is None:
                    continue
                code = table.codes[i]
                if table.may_repeat:  # a table with repeats: the first one counts
                    if (name, code) in seen:
                        continue
                    seen.add((name, code))
                hits.append((key, i, table.raw_symbol(i, d)))
            else:
                assert syms is not None
                sym = syms[i]
                key = _first_key(pattern, _keys(sym.name, sym.demangled))
                if key is None:
                    continue
                hits.append((key, i, sym))
            if not exact and limit is not None and len(hits) >= limit:
                break
        hits.sort(key=lambda h: (h[0], h[1]))
        out = [h[2] for h in hits]
        return out if limit is None else out[:limit]

    def any(self, pattern: SymbolPattern, *, strong_only: bool = False) -> bool:
        return bool(self.find(pattern, strong_only=strong_only, limit=1))


class NameIndex:
    """Plain names (imports), searchable by SPEC §3 patterns over their demangled form."""

    def __init__(self, names: Iterable[str]):
        self._names: list[str] = list(dict.fromkeys(names))

    def any(self, pattern: SymbolPattern) -> bool:
        plain, mangled = pattern_hints(pattern)
        ptext = plain.decode("utf-8", "surrogatepass")
        mtext = [h.decode("ascii") for h in mangled] if mangled is not None else None
        for n in self._names:
            if ptext in n:
                if any(pattern.matches(k) for k in _keys(n)):
                    return True
            elif n[:2] == "_Z" and (mtext is None or all(h in n for h in mtext)):
                if any(pattern.matches(k) for k in _keys(n)):
                    return True
            elif n[:1] == "?" and (mangled is None or all(h in n for h in _msvc_hints(mangled))):
                if any(pattern.matches(k) for k in _keys(n)):
                    return True
        return False


def owners(wheel: Wheel, pattern: str, *, strong_only: bool = False) -> list[str]:
    """Paths of the wheel's libraries that define a symbol matching ``pattern`` (SPEC §3 matching)."""
    pat = SymbolPattern(pattern)
    return sorted(b.path for b in wheel.libraries
                  if any(SymbolIndex(sl.exports).any(pat, strong_only=strong_only) for sl in b.slices))


def importers(wheel: Wheel, pattern: str) -> list[str]:
    """Paths of the wheel's libraries that import (reference, undefined) a symbol matching ``pattern``."""
    pat = SymbolPattern(pattern)
    return sorted(b.path for b in wheel.libraries if NameIndex(n for sl in b.slices for n in sl.imports).any(pat))


use_symbol_lookups(owners, importers)
