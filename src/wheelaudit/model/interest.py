"""What the symbol entries of a ruleset can match, handed to the scan: plain data
(:func:`wheelaudit.checks.index.interest_of` computes it from the patterns)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Interest"]


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

    @classmethod
    def for_rules(cls, ruleset) -> Interest:
        """What an audit with ``ruleset`` can look at: its symbol entries', or with no ruleset
        nothing (the built-in checks read exports and imports, never a local symbol)."""
        return cls() if ruleset is None else ruleset.interest()

    def covers(self, other: Interest) -> bool:
        """Whether tables narrowed for this interest answer every lookup of ``other``."""
        return self.everything or (other.hints <= self.hints and (self.all_mangled or not other.all_mangled)
                                   and not other.everything)

    def __or__(self, other: Interest) -> Interest:
        return Interest(self.hints | other.hints, self.all_mangled or other.all_mangled,
                        self.everything or other.everything)
