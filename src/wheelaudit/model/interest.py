"""What the symbol entries of a ruleset can match, handed to the scan: plain data
(:func:`wheelaudit.checks.index.interest_of` computes it from the patterns)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Interest", "selective"]


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
    #: read for its ABI does not: :mod:`wheelaudit.scan.baseline`)
    signatures: bool = True

    @classmethod
    def of(cls, patterns) -> Interest:
        """The interest of symbol patterns (:class:`wheelaudit.ruleset.globs.SymbolPattern`): the
        literal pieces (hints) any name they match must contain."""
        from wheelaudit.binary.symbols import pattern_hints  # (the readers' stage, below this one)

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
