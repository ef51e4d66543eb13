"""What the symbol entries of a ruleset can match, handed to the scan: the literal pieces any name
a symbol pattern matches must contain (:func:`pattern_hints`) and the :class:`Interest` of a
ruleset's patterns (:func:`interest_of`), plain data the readers narrow their tables to."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wheelaudit.model.globs import SymbolPattern

__all__ = ["Interest", "interest_of", "pattern_hints", "selective"]


# --------------------------------------------------------------------------------------------
# Prefiltering on the mangled name (so that only candidates are demangled)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LITERAL_HEAD = re.compile(r"[A-Za-z0-9_:]*")
#: std:: entities that Itanium abbreviates (St, Sa, Sb, Ss, Si, So, Sd): no <len><name> for them
_STD_ABBREVIATED = {"allocator", "basic_string", "string", "istream", "ostream", "iostream"}


#: the words with an underscore that a demangler writes without the mangled name spelling them:
#: builtin types and the std:: entities Itanium abbreviates (see :func:`_spelled_piece`)
_UNSPELLED_WORDS = ("char_traits", "basic_string", "basic_istream", "basic_ostream", "basic_iostream", "wchar_t",
                    "char8_t", "char16_t", "char32_t", "nullptr_t", "__int128", "__float128", "_Float16", "_Float32",
                    "_Float64", "_Float128", "_Float32x", "_Float64x", "__bf16", "bfloat16_t", "_Accum", "_Fract",
                    "_Sat", "__restrict", "__vector", "__pixel", "__bool")
_WORD = re.compile(r"[A-Za-z0-9_]+")


def _spelled_piece(parts: list[str]) -> bytes | None:
    """A literal piece of the entry that any mangled name it matches spells out, or None.

    In a demangled name, a run of identifier characters lies inside one token: an identifier
    (which the mangled name spells out: ``<length><identifier>``), a number, or a word the
    demangler writes itself (``unsigned``, ``allocator``, ``vtable for``, ...). A piece made of
    identifier characters with an underscore, at least six long, that no such word contains can
    only come from an identifier: a mangled name matched through its demangled form contains it
    as it is (``*openblas_get_config*``, whose leading ``*`` leaves no ``<length>`` to require).
    """
    best = None
    for piece in parts:
        for word in _WORD.findall(piece):
            if (len(word) >= 6 and "_" in word and not word.isdigit()
                    and not any(word in w for w in _UNSPELLED_WORDS)
                    and (best is None or len(word) > len(best))):
                best = word
    return best.encode("ascii") if best is not None else None


def _space_before_call(text: str) -> bool:
    """A space outside template arguments before the first "(" (that is, a return type)."""
    depth = 0
    for c in text:
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif c == "(" and depth == 0:
            return False
        elif c == " " and depth == 0:
            return True
    return False


def pattern_hints(pattern: SymbolPattern) -> tuple[bytes, tuple[bytes, ...] | None]:
    """What a raw symbol name must contain to be matched by ``pattern``: ``(plain, mangled)``.

    ``plain``: the longest literal piece of the entry. A C name, or a mangled name matched as
    it is, that the entry matches contains it.

    ``mangled``: ``<length><identifier>`` encodings that an Itanium-mangled name contains when
    its demangled (or return-type-stripped) form is matched: every complete identifier of the
    entry's literal head (``mlx::core::add`` -> ``3mlx``, ``4core``, ``3add``), since a mangled
    name spells every identifier it uses out in full once (later mentions are substitutions of
    that first one), and an incomplete last one as a bare substring (``mlx::core::ad*`` ->
    ``ad``). Only single identifiers: the head may be a template function's return type, whose
    scopes are not spelled one after the other (``NS_4Type``). None when the head
    gives nothing safe to require (``std::``, operators, ``(anonymous namespace)``, a leading
    ``*``), unless a literal piece can only come from an identifier (:func:`_spelled_piece`);
    else None: then every mangled name is a candidate.
    """
    parts = getattr(pattern, "_parts", None)  # the pattern's own split at its (unescaped) stars
    if not parts:
        return pattern.literal_prefix.encode("utf-8", "surrogatepass"), None
    plain = max(parts, key=len).encode("utf-8", "surrogatepass")
    head = parts[0]
    if _space_before_call(head):
        # "int ns::f", "ns::T<int> ns::f", "vtable for X": the head starts with a return type or
        # a special-name phrase, not with the entity's scopes
        return plain, None
    m = _LITERAL_HEAD.match(head)
    lit = m.group(0) if m else ""
    # the last piece of `lit` is a whole identifier when the entry goes on with "(", "<", "@",
    # "[" right after it, or when the entry ends there (names continue only with ( @ :: <)
    rest = head[len(lit):]
    if rest and rest[0] not in "(<@[":
        # "int mlx::f", "vtable for X": the head is not (only) the entity's scopes
        return plain, None
    whole_last = bool(rest) or len(parts) == 1
    pieces = lit.split("::")
    if lit.endswith("::"):
        pieces.pop()
        whole_last = True
    hints: list[bytes] = []
    if pieces and pieces[0] == "std":
        pieces.pop(0)
        if pieces and pieces[0] in _STD_ABBREVIATED:
            pieces.pop(0)
    for k, piece in enumerate(pieces):
        last = k == len(pieces) - 1
        if not piece or piece.startswith("operator") or not _IDENT.match(piece):
            continue
        if last and not whole_last:
            if "operator".startswith(piece):  # "ope*" may be an operator, spelled "pl", "ls", ...
                continue
            hints.append(piece.encode("ascii"))
        else:
            hints.append(f"{len(piece)}{piece}".encode("ascii"))
    if hints:
        return plain, tuple(hints)
    spelled = _spelled_piece(parts)
    return plain, ((spelled,) if spelled is not None else None)


def selective(hints: tuple[bytes, ...]) -> bytes:
    """The hint to look up (the others are checked on its candidates): the rarest, guessed as the
    longest, with three characters of credit for the entity's own name, the last one
    (``10add_Tensor`` of ``at::_ops::add_Tensor::call``, not ``4call``; ``3add`` of
    ``at::native::add``, not ``6native``, which tens of thousands of names hold)."""
    last = len(hints) - 1
    return hints[max(range(len(hints)), key=lambda k: (len(hints[k]) + (3 if k == last else 0), k))]


@dataclass(frozen=True)
class Interest:
    """What the symbol entries of a ruleset can match, in terms of raw names: a name is a
    candidate of some entry only if it contains one of ``hints`` or, with ``all_mangled``, is a
    mangled C++ name; with ``everything`` (an entry with no literal piece, such as ``*``) any
    name can be. Handed to the scan, it lets each worker locate the hints in its own tables and
    keep only the local symbols that can matter."""

    hints: frozenset[bytes] = frozenset()
    all_mangled: bool = False
    everything: bool = False
    #: whether the readers verify Mach-O code signatures (WA607 reads the verdict; a baseline
    #: read for its ABI does not: :mod:`wheelaudit.scanner.baseline`)
    signatures: bool = True

    @classmethod
    def of(cls, patterns) -> Interest:
        """The interest of symbol patterns (:class:`wheelaudit.model.globs.SymbolPattern`): the
        literal pieces (hints) any name they match must contain."""
        hints: set[bytes] = set()
        all_mangled = everything = False
        for p in patterns:
            plain, mangled = pattern_hints(p)
            if not plain:
                everything = True
            hints.add(plain)
            if mangled is None:
                all_mangled = True
            elif mangled:
                hints.add(selective(mangled))
        hints.discard(b"")
        return cls(frozenset(hints), all_mangled, everything)

    @classmethod
    def for_rules(cls, ruleset) -> Interest:
        """What an audit with ``ruleset`` can look at: its symbol entries', or with no ruleset
        nothing (the built-in checks read exports and imports, never a local symbol)."""
        return cls() if ruleset is None else ruleset.interest()

    def covers(self, other: Interest) -> bool:
        """Whether tables narrowed for this interest answer every lookup of ``other``."""
        if other.signatures and not self.signatures:
            return False
        return self.everything or (other.hints <= self.hints and (self.all_mangled or not other.all_mangled)
                                   and not other.everything)

    def __or__(self, other: Interest) -> Interest:
        return Interest(self.hints | other.hints, self.all_mangled or other.all_mangled,
                        self.everything or other.everything, self.signatures or other.signatures)


def interest_of(patterns: Iterable[SymbolPattern]) -> Interest:
    """The :class:`Interest` of symbol patterns (:meth:`Interest.of`)."""
    return Interest.of(patterns)
