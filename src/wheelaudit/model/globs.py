"""Globs over paths and names, and symbol patterns, matched without backtracking.

Nothing here uses :mod:`re` or :mod:`fnmatch`. A :class:`Glob` is compiled into a small
nondeterministic automaton (one per brace alternative, all run together) whose set of live
states is one integer, a bit per state, advanced a character at a time by a few shifts and
masks (bit-parallel simulation), with a lazily built and bounded cache of the deterministic
transitions. Matching a text of length *n* against a pattern of *m* tokens costs at most
O(n x m / 64) word operations whatever the pattern, and nothing is ever retried: ``*a*a*a*a*b``
against ten thousand ``a`` is as quick as ``*.so``. The automaton is bounded too: braces expand
to at most :data:`MAX_ALTERNATIVES` alternatives and :data:`MAX_STATES` tokens in all.

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

__all__ = [
    "GlobError",
    "Glob",
    "SymbolPattern",
    "MAX_ALTERNATIVES",
    "MAX_BRACE_DEPTH",
    "linear_regex",
]

MAX_ALTERNATIVES = 1000
MAX_BRACE_DEPTH = 10
MAX_PATTERN_LENGTH = 4096
#: Bound on the automaton: the tokens of every brace alternative together (a glob without
#: braces has at most MAX_PATTERN_LENGTH)
MAX_STATES = 65_536

#: Bound on cached deterministic states per Glob; past it the cache is dropped and rebuilt.
_DFA_CACHE_LIMIT = 2048
#: Bound on the cached per-character masks per Glob (texts with many distinct characters).
_CHAR_CACHE_LIMIT = 4096


class GlobError(ValueError):
    """An invalid glob or symbol pattern. ``str(err)`` says what is wrong and where."""

    def __init__(self, message: str, pattern: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.pattern = pattern


def linear_regex(text: str):
    """A regular expression of the rules (``[cmake] declares``), compiled by RE2: matching takes
    time linear in the text, whatever the pattern, since RE2 simulates an automaton and never
    backtracks. Python's syntax for what RE2 reads (``(?P<name>...)``, classes, ``\\s``, ``\\w``,
    repetitions); backreferences and lookaround, which need backtracking, are refused.
    Raises :class:`GlobError` with RE2's reason."""
    import re2

    options = re2.Options()
    options.log_errors = False  # (RE2 would write its reason to standard error as well)
    try:
        return re2.compile(text, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise GlobError(f"not a regular expression RE2 matches in linear time: {reason}", text) from None


# ---------------------------------------------------------------------------------------------
# Tokens. Plain tuples keep the parse cheap; the first item is the kind.

_LIT = 0  # (_LIT, char)
_ANY = 1  # (_ANY,)
_CLS = 2  # (_CLS, negated: bool, members: frozenset[str], ranges: tuple[tuple[str, str], ...])
_STAR = 3  # (_STAR,)
_DSTAR = 4  # (_DSTAR,)
_DSTAR_RUN = (_DSTAR, "run")  # stars merged into a run that may cross "/" (see _normalize)


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
        shown = self.p if len(self.p) <= 120 else self.p[:100] + f"... ({len(self.p)} characters)"
        return GlobError(f"invalid glob {shown!r}: {message}", self.p)

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


def _states(items: list) -> int:
    """Tokens in all of the alternatives ``items`` expands to (each alternative's length, summed),
    computed without expanding; stops counting past :data:`MAX_STATES`."""

    def walk(seq: list) -> tuple[int, int]:  # (alternatives, tokens in all of them)
        count, total = 1, 0
        for item in seq:
            if isinstance(item, _Alt):
                parts = [walk(b) for b in item.branches]
                c = sum(p[0] for p in parts)
                t = sum(p[1] for p in parts)
            else:
                c, t = 1, 1
            total = total * c + t * count
            count *= c
            if total > MAX_STATES or count > MAX_ALTERNATIVES:
                return count, max(total, MAX_STATES + 1)
        return count, total

    return walk(items)[1]


def _normalize(alt: tuple) -> tuple:
    """One alternative with runs of stars merged (``*`` then ``**`` reads as ``**``; braces can
    put them side by side) and repeated zero-directory ``**/`` collapsed (``**/**/`` means the
    same as ``**/``), so that no two neighbouring tokens both match the empty string."""
    out: list[tuple] = []
    for tok in alt:
        kind = tok[0]
        if kind in (_STAR, _DSTAR) and out and out[-1][0] in (_STAR, _DSTAR):
            if kind == _DSTAR or out[-1][0] == _DSTAR:
                # a run that crosses "/"; never a whole-component "**/" (that needs the "**"
                # right after "/" or the start, and right before "/")
                out[-1] = _DSTAR_RUN
            continue
        if (
            tok == (_LIT, "/")
            and len(out) >= 3
            and out[-1] == (_DSTAR,)
            and out[-2] == (_LIT, "/")
            and out[-3] == (_DSTAR,)
            and (len(out) == 3 or out[-4] == (_LIT, "/"))
        ):
            out.pop()  # "**/**/" -> "**/"
            continue
        out.append(tok)
    return tuple(out)


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
        "_lit",
        "_any",
        "_classes",
        "_star",
        "_dstar",
        "_skip",
        "_start",
        "_accept",
        "_chars",
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
        if _states(tree) > MAX_STATES:
            raise parser.error(
                f"too complex: its brace alternatives hold more than {MAX_STATES} characters and "
                "wildcards in all"
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
        # Bit i of a state set: the next token to match is token i of the alternatives laid end
        # to end, each followed by its accepting bit. A step on character c is
        #   entered = (live & consumes(c)) << 1   and   stayed = live & loops(c)
        # each with its empty moves; no mask ever carries a bit across an accepting bit, so
        # alternatives never mix.
        lit: dict[str, int] = {}  # character -> its literal tokens
        any_ = 0  # "?"
        classes: dict[tuple, int] = {}  # "[...]" (one mask per distinct class)
        star = 0  # "*": loops on any character but "/"
        dstar = 0  # "**": loops on any character
        skip = 0  # "**" of a whole-component "**/": may also skip itself and its "/"
        start = accept = 0
        pos = 0
        for alt in alternatives:
            alt = _normalize(alt)
            start |= 1 << pos
            for i, tok in enumerate(alt):
                bit = 1 << (pos + i)
                kind = tok[0]
                if kind == _LIT:
                    lit[tok[1]] = lit.get(tok[1], 0) | bit
                elif kind == _ANY:
                    any_ |= bit
                elif kind == _CLS:
                    classes[tok] = classes.get(tok, 0) | bit
                elif kind == _STAR and not self.cross_slash:
                    star |= bit
                else:  # "**", or "*" that may cross "/"
                    dstar |= bit
                    if (
                        tok == (_DSTAR,)
                        and i + 1 < len(alt)
                        and alt[i + 1] == (_LIT, "/")
                        and (i == 0 or alt[i - 1] == (_LIT, "/"))
                    ):
                        skip |= bit
            accept |= 1 << (pos + len(alt))
            pos += len(alt) + 1
        self._lit = lit
        self._any = any_
        self._classes = list(classes.items())
        self._star = star
        self._dstar = dstar
        self._skip = skip
        self._start = self._close(start)
        self._accept = accept
        self._chars: dict[str, tuple[int, int]] = {}
        self._dfa: dict[int, dict[str, int]] = {}

    def _close(self, entered: int) -> int:
        """Tokens just reached, with the empty moves: a whole-component ``**/`` skipped (only
        on reaching it: once it has matched a character it must go on to its ``/``), a star
        matching nothing. No star follows a star after :func:`_normalize`, nor a ``**/`` a
        ``**/``, so one round of each is enough."""
        entered |= (entered & self._skip) << 2
        return entered | ((entered & (self._star | self._dstar)) << 1)

    def _masks(self, c: str) -> tuple[int, int]:
        """(tokens that consume ``c`` and move on, tokens that consume ``c`` and stay)."""
        masks = self._chars.get(c)
        if masks is None:
            consume = self._lit.get(c, 0)
            loop = self._dstar
            if self.cross_slash or c != "/":
                consume |= self._any
                for tok, mask in self._classes:
                    if _class_match(tok, c):
                        consume |= mask
                loop |= self._star
            if len(self._chars) >= _CHAR_CACHE_LIMIT:
                self._chars.clear()
            masks = self._chars[c] = (consume, loop)
        return masks

    def _step(self, live: int, c: str) -> int:
        consume, loop = self._masks(c)
        stayed = live & loop  # stars only: each may also stop here
        return self._close((live & consume) << 1) | stayed | (stayed << 1)

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
        return bool(cur & self._accept)

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


# ---------------------------------------------------------------------------------------------
# Symbol patterns


def _continues(name: str, end: int) -> bool:
    """Whether ``name`` ends at ``end`` or continues there with ``(``, ``@``, ``<`` or ``::``."""
    if end == len(name):
        return True
    c = name[end]
    return c == "(" or c == "@" or c == "<" or (c == ":" and name.startswith("::", end))


def _ends_with_continuation(name: str, piece: str, start: int) -> bool:
    """Whether ``piece`` occurs in ``name`` at or after ``start`` and ends where a name may end or
    continue (:func:`_continues`). Knuth-Morris-Pratt: O(len(name) + len(piece)) however many
    overlapping occurrences there are."""
    m = len(piece)
    fail = [0] * m
    k = 0
    for q in range(1, m):
        while k and piece[q] != piece[k]:
            k = fail[k - 1]
        if piece[q] == piece[k]:
            k += 1
        fail[q] = k
    k = 0
    for j in range(start, len(name)):
        c = name[j]
        while k and c != piece[k]:
            k = fail[k - 1]
        if c == piece[k]:
            k += 1
            if k == m:
                if _continues(name, j + 1):
                    return True
                k = fail[k - 1]
    return False


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
        tries = 0
        while i >= 0:
            if _continues(name, i + len(last)):
                return True
            tries += 1
            if tries == 32:  # a periodic name: one linear pass instead of a find per occurrence
                return _ends_with_continuation(name, last, i + 1)
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


class NotGlob:
    """``!pattern`` in a list of globs: what the rest of the pattern does not match. ``match``
    is the inner glob's; the list it stands in decides (:func:`matches_list`)."""

    __slots__ = ("inner",)
    negated = True

    def __init__(self, inner: Glob) -> None:
        self.inner = inner

    @property
    def pattern(self) -> str:
        return "!" + self.inner.pattern

    @property
    def is_literal(self) -> bool:
        return False

    def match(self, value: str) -> bool:
        return self.inner.match(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NotGlob) and other.inner == self.inner

    def __hash__(self) -> int:
        return hash(("!", self.inner))

    def __repr__(self) -> str:
        return f"NotGlob({self.inner!r})"


def matches_list(globs, values) -> bool:
    """A list of globs, some negated with ``!``, against a set of values: some positive glob
    matches some value (or there is no positive glob), and no negated one matches any value."""
    values = tuple(values)
    pos = [g for g in globs if not getattr(g, "negated", False)]
    neg = [g for g in globs if getattr(g, "negated", False)]
    if pos and not any(g.match(v) for g in pos for v in values):
        return False
    return not any(g.match(v) for g in neg for v in values)
