"""Globs over paths and names, and symbol patterns, matched without backtracking.

Nothing here uses :mod:`re` or :mod:`fnmatch`. A :class:`Glob` is compiled into a small
nondeterministic automaton (one per brace alternative, all run together) and matched by
state-set simulation, with a lazily built and bounded cache of the deterministic transitions.
Matching a text of length *n* against a pattern of *m* tokens costs at most O(n x m), whatever
the pattern: ``*a*a*a*a*a*a*a*a*b`` against ten thousand ``a`` is as quick as ``*.so``.

Glob syntax (:class:`Glob`):

``*``
    any run of characters except ``/`` (any run at all with ``cross_slash=True``)
``**``
    any run of characters, ``/`` included. When it forms a whole path component
    (``**/`` at the start or after a ``/``) it also matches zero directories, so
    ``**/mlx.metallib`` matches ``mlx.metallib`` and ``a/b/mlx.metallib``. Elsewhere
    (``a**b``) it is simply a run that may cross ``/``.
``?``
    one character except ``/`` (any one character with ``cross_slash=True``)
``[abc]``, ``[a-z]``, ``[!a-z]`` (or ``[^a-z]``)
    one character in (or not in) the class; ``]`` first in the class is a member; a class
    never matches ``/`` unless ``cross_slash=True``
``{a,b,c}``
    alternatives, nesting allowed, an empty alternative allowed (``lib{,64}``); at most
    :data:`MAX_ALTERNATIVES` expanded alternatives and :data:`MAX_BRACE_DEPTH` levels
``\\x``
    the character ``x`` literally

Symbol patterns (:class:`SymbolPattern`) follow SPEC section 3, "Symbol matching".
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "GlobError",
    "Glob",
    "SymbolPattern",
    "any_match",
    "MAX_ALTERNATIVES",
    "MAX_BRACE_DEPTH",
]

MAX_ALTERNATIVES = 1000
MAX_BRACE_DEPTH = 10
MAX_PATTERN_LENGTH = 4096

#: Bound on cached deterministic states per Glob; past it the cache is dropped and rebuilt.
_DFA_CACHE_LIMIT = 2048


class GlobError(ValueError):
    """An invalid glob or symbol pattern. ``str(err)`` says what is wrong and where."""

    def __init__(self, message: str, pattern: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.pattern = pattern


# ---------------------------------------------------------------------------------------------
# Tokens. Plain tuples keep the parse cheap; the first item is the kind.

_LIT = 0  # (_LIT, char)
_ANY = 1  # (_ANY,)
_CLS = 2  # (_CLS, negated: bool, members: frozenset[str], ranges: tuple[tuple[str, str], ...])
_STAR = 3  # (_STAR,)
_DSTAR = 4  # (_DSTAR,)
_END = 5  # automaton only: accepting state
_EPS = 6  # automaton only: consumes nothing, has epsilon moves


class _Alt:
    """``{a,b,...}`` in the parse tree: a list of branches, each a list of items."""

    __slots__ = ("branches",)

    def __init__(self, branches: list[list]) -> None:
        self.branches = branches


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.n = len(pattern)

    def error(self, message: str) -> GlobError:
        return GlobError(f"invalid glob {self.p!r}: {message}", self.p)

    def parse(self) -> list:
        items, pos = self._seq(0, 0, in_brace=False)
        assert pos == self.n
        return items

    def _seq(self, pos: int, depth: int, in_brace: bool) -> tuple[list, int]:
        p, n = self.p, self.n
        items: list = []
        while pos < n:
            c = p[pos]
            if c == "\\":
                if pos + 1 >= n:
                    raise self.error("a trailing backslash escapes nothing")
                items.append((_LIT, p[pos + 1]))
                pos += 2
            elif c == "*":
                end = pos
                while end < n and p[end] == "*":
                    end += 1
                items.append((_DSTAR,) if end - pos >= 2 else (_STAR,))
                pos = end
            elif c == "?":
                items.append((_ANY,))
                pos += 1
            elif c == "[":
                tok, pos = self._class(pos)
                items.append(tok)
            elif c == "{":
                if depth + 1 > MAX_BRACE_DEPTH:
                    raise self.error(f"braces nested deeper than {MAX_BRACE_DEPTH} levels")
                branches: list[list] = []
                pos += 1
                while True:
                    branch, pos = self._seq(pos, depth + 1, in_brace=True)
                    branches.append(branch)
                    if pos >= n:
                        raise self.error("unclosed '{'")
                    if p[pos] == ",":
                        pos += 1
                        continue
                    # p[pos] == "}"
                    pos += 1
                    break
                items.append(_Alt(branches))
            elif in_brace and c in ",}":
                return items, pos
            else:
                items.append((_LIT, c))
                pos += 1
        return items, pos

    def _class(self, start: int) -> tuple[tuple, int]:
        p, n = self.p, self.n
        pos = start + 1
        negated = False
        if pos < n and p[pos] in "!^":
            negated = True
            pos += 1
        members: set[str] = set()
        ranges: list[tuple[str, str]] = []
        first = True
        while True:
            if pos >= n:
                raise self.error(f"unclosed '[' at position {start}")
            c = p[pos]
            if c == "]" and not first:
                pos += 1
                break
            first = False
            if c == "\\":
                if pos + 1 >= n:
                    raise self.error(f"unclosed '[' at position {start}")
                c = p[pos + 1]
                pos += 2
            else:
                pos += 1
            # a range?
            if pos + 1 < n and p[pos] == "-" and p[pos + 1] != "]":
                hi = p[pos + 1]
                step = 2
                if hi == "\\":
                    if pos + 2 >= n:
                        raise self.error(f"unclosed '[' at position {start}")
                    hi = p[pos + 2]
                    step = 3
                if hi < c:
                    raise self.error(f"reversed range {c}-{hi} in a class")
                ranges.append((c, hi))
                pos += step
            else:
                members.add(c)
        return (_CLS, negated, frozenset(members), tuple(ranges)), pos


def _count(items: list) -> int:
    total = 1
    for item in items:
        if isinstance(item, _Alt):
            total *= sum(_count(b) for b in item.branches)
            if total > MAX_ALTERNATIVES:
                return total
    return total


def _expand(items: list) -> list[tuple]:
    results: list[list] = [[]]
    for item in items:
        if isinstance(item, _Alt):
            options: list[tuple] = []
            for branch in item.branches:
                options.extend(_expand(branch))
            results = [r + list(o) for r in results for o in options]
        else:
            for r in results:
                r.append(item)
    return [tuple(r) for r in results]


def _class_match(tok: tuple, c: str) -> bool:
    _, negated, members, ranges = tok
    hit = c in members or any(lo <= c <= hi for lo, hi in ranges)
    return hit != negated


def _make_glob(pattern: str, cross_slash: bool) -> Glob:
    return Glob(pattern, cross_slash=cross_slash)


class Glob:
    """A compiled glob; :meth:`match` tests a whole string.

    Globs compare equal when their pattern and ``cross_slash`` are equal, and pickle by pattern.
    """

    __slots__ = (
        "pattern",
        "cross_slash",
        "literal_prefix",
        "_literals",
        "_kinds",
        "_args",
        "_closure",
        "_start",
        "_accept",
        "_dfa",
    )

    def __init__(self, pattern: str, *, cross_slash: bool = False) -> None:
        if not isinstance(pattern, str):
            raise GlobError(f"a glob must be a string, not {type(pattern).__name__}")
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise GlobError(
                f"glob is {len(pattern)} characters long; at most {MAX_PATTERN_LENGTH} are allowed",
                pattern,
            )
        self.pattern = pattern
        self.cross_slash = cross_slash
        parser = _Parser(pattern)
        tree = parser.parse()
        n_alts = _count(tree)
        if n_alts > MAX_ALTERNATIVES:
            raise parser.error(
                f"braces expand to more than {MAX_ALTERNATIVES} alternatives"
            )
        if any(isinstance(item, _Alt) for item in tree):
            alternatives = list(dict.fromkeys(_expand(tree)))  # de-duplicated, order kept
        else:
            alternatives = [tuple(tree)]

        # The longest literal text every match starts with, for callers' pre-filtering.
        heads = []
        for alt in alternatives:
            head = []
            for tok in alt:
                if tok[0] != _LIT:
                    break
                head.append(tok[1])
            heads.append("".join(head))
        prefix = heads[0]
        for h in heads[1:]:
            i = 0
            while i < len(prefix) and i < len(h) and prefix[i] == h[i]:
                i += 1
            prefix = prefix[:i]
        self.literal_prefix: str = prefix

        if all(all(t[0] == _LIT for t in alt) for alt in alternatives):
            self._literals: frozenset[str] | None = frozenset(
                "".join(t[1] for t in alt) for alt in alternatives
            )
            self._compile([])  # never used: literal globs match by set membership
        else:
            self._literals = None
            self._compile(alternatives)

    # -- automaton ----------------------------------------------------------------------------

    def _compile(self, alternatives: list[tuple]) -> None:
        kinds: list[int] = []
        args: list = []
        eps: list[list[int]] = []
        starts: list[int] = []
        accept: list[int] = []
        for alt in alternatives:
            starts.append(len(kinds))
            for i, tok in enumerate(alt):
                s = len(kinds)
                kind = tok[0]
                if (
                    kind == _DSTAR
                    and i + 1 < len(alt)
                    and alt[i + 1] == (_LIT, "/")
                    and (i == 0 or alt[i - 1] == (_LIT, "/"))
                ):
                    # "**/" also matches zero directories: an entry state that either goes on
                    # to the "**" or skips both it and its "/".
                    kinds.append(_EPS)
                    args.append(None)
                    eps.append([s + 1, s + 3])
                    s += 1
                if kind == _STAR and self.cross_slash:
                    kind = _DSTAR
                kinds.append(kind)
                args.append(tok)
                eps.append([s + 1] if kind in (_STAR, _DSTAR) else [])
            accept.append(len(kinds))
            kinds.append(_END)
            args.append(None)
            eps.append([])
        closure: list[frozenset[int]] = []
        for s in range(len(kinds)):
            seen = {s}
            stack = [s]
            while stack:
                t = stack.pop()
                for u in eps[t]:
                    if u not in seen:
                        seen.add(u)
                        stack.append(u)
            closure.append(frozenset(seen))
        self._kinds = kinds
        self._args = args
        self._closure = closure
        start: set[int] = set()
        for s in starts:
            start |= closure[s]
        self._start = frozenset(start)
        self._accept = frozenset(accept)
        self._dfa: dict[frozenset[int], dict[str, frozenset[int]]] = {}

    def _step(self, states: frozenset[int], c: str) -> frozenset[int]:
        kinds, args, closure = self._kinds, self._args, self._closure
        slash_ok = self.cross_slash or c != "/"
        out: set[int] = set()
        for s in states:
            k = kinds[s]
            if k == _LIT:
                if args[s][1] == c:
                    out |= closure[s + 1]
            elif k == _DSTAR:
                out |= closure[s]
            elif k == _STAR:
                if slash_ok:
                    out |= closure[s]
            elif k == _ANY:
                if slash_ok:
                    out |= closure[s + 1]
            elif k == _CLS:
                if slash_ok and _class_match(args[s], c):
                    out |= closure[s + 1]
        return frozenset(out)

    def match(self, text: str) -> bool:
        """Whether the whole of ``text`` matches."""
        if self._literals is not None:
            return text in self._literals
        if not text.startswith(self.literal_prefix):
            return False
        dfa = self._dfa
        cur = self._start
        for c in text:
            row = dfa.get(cur)
            if row is None:
                if len(dfa) >= _DFA_CACHE_LIMIT:
                    dfa.clear()
                row = dfa[cur] = {}
            nxt = row.get(c)
            if nxt is None:
                nxt = row[c] = self._step(cur, c)
            if not nxt:
                return False
            cur = nxt
        return not cur.isdisjoint(self._accept)

    __call__ = match

    @property
    def is_literal(self) -> bool:
        """True when the pattern has no wildcard (braces of plain text are still literal)."""
        return self._literals is not None

    # -- value semantics ----------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Glob):
            return NotImplemented
        return self.pattern == other.pattern and self.cross_slash == other.cross_slash

    def __hash__(self) -> int:
        return hash((Glob, self.pattern, self.cross_slash))

    def __repr__(self) -> str:
        extra = ", cross_slash=True" if self.cross_slash else ""
        return f"Glob({self.pattern!r}{extra})"

    def __str__(self) -> str:
        return self.pattern

    def __reduce__(self):
        return (_make_glob, (self.pattern, self.cross_slash))


def any_match(globs: Iterable[Glob], text: str) -> bool:
    """Whether any of ``globs`` matches ``text``."""
    return any(g.match(text) for g in globs)


# ---------------------------------------------------------------------------------------------
# Symbol patterns


def _continues(name: str, end: int) -> bool:
    """Whether ``name`` ends at ``end`` or continues there with ``(``, ``@``, ``<`` or ``::``."""
    if end == len(name):
        return True
    c = name[end]
    return c == "(" or c == "@" or c == "<" or (c == ":" and name.startswith("::", end))


class SymbolPattern:
    """A symbol entry of a rules file (SPEC section 3, "Symbol matching").

    It matches a name (demangled C++ or C) equal to the entry, or continuing it with ``(``
    (arguments), ``@`` (a symbol version), ``::`` (a member) or ``<`` (template arguments).
    ``*`` matches any run of characters, ``::``, ``(`` and ``<`` included; ``\\*`` is a literal
    star (for ``operator*``) and ``\\\\`` a literal backslash.

    Matching splits the entry at its stars and places the pieces left to right with
    :meth:`str.find`; the placement is leftmost for all but the last piece, which is tried at
    each of its occurrences. There is no backtracking: the cost is at most O(len(name) x
    len(entry)), and a literal entry costs one ``startswith`` and a character test.
    """

    __slots__ = ("entry", "_parts", "literal_prefix")

    def __init__(self, entry: str) -> None:
        if not isinstance(entry, str):
            raise GlobError(f"a symbol entry must be a string, not {type(entry).__name__}")
        if not entry or entry.strip() != entry:
            raise GlobError(
                f"invalid symbol entry {entry!r}: it is empty or has leading or trailing space",
                entry,
            )
        if len(entry) > MAX_PATTERN_LENGTH:
            raise GlobError(
                f"symbol entry is {len(entry)} characters long; at most "
                f"{MAX_PATTERN_LENGTH} are allowed",
                entry,
            )
        self.entry = entry
        parts: list[str] = []
        cur: list[str] = []
        i = 0
        while i < len(entry):
            c = entry[i]
            if c == "\\" and i + 1 < len(entry) and entry[i + 1] in "*\\":
                cur.append(entry[i + 1])
                i += 2
                continue
            if c == "*":
                parts.append("".join(cur))
                cur = []
                # "**" means the same as "*"
                while i + 1 < len(entry) and entry[i + 1] == "*":
                    i += 1
            else:
                cur.append(c)
            i += 1
        parts.append("".join(cur))
        if len(parts) > 1 and all(p == "" for p in parts):
            raise GlobError(
                f"invalid symbol entry {entry!r}: a bare '*' would match every symbol", entry
            )
        self._parts = tuple(parts)
        #: Every matching name starts with this text.
        self.literal_prefix: str = parts[0]

    @property
    def is_literal(self) -> bool:
        return len(self._parts) == 1

    def matches(self, name: str) -> bool:
        """Whether ``name`` (a demangled or C symbol name) is matched by this entry."""
        parts = self._parts
        first = parts[0]
        if not name.startswith(first):
            return False
        if len(parts) == 1:
            return _continues(name, len(first))
        pos = len(first)
        for piece in parts[1:-1]:
            if not piece:
                continue
            i = name.find(piece, pos)
            if i < 0:
                return False
            pos = i + len(piece)
        last = parts[-1]
        if not last:
            return True  # a trailing star reaches the end of the name
        i = name.find(last, pos)
        while i >= 0:
            if _continues(name, i + len(last)):
                return True
            i = name.find(last, i + 1)
        return False

    __call__ = matches

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SymbolPattern):
            return NotImplemented
        return self.entry == other.entry

    def __hash__(self) -> int:
        return hash((SymbolPattern, self.entry))

    def __repr__(self) -> str:
        return f"SymbolPattern({self.entry!r})"

    def __str__(self) -> str:
        return self.entry

    def __reduce__(self):
        return (SymbolPattern, (self.entry,))
