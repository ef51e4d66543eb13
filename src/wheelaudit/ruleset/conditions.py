"""Conditions: which wheels a rule applies to, decided from the wheel's tags and version.

A :class:`WheelTraits` holds the facts of one wheel (derived from its tags with
:func:`wheelaudit.platforms.traits.traits_from_tags`); a :class:`Condition` (the ``when`` and ``required`` tables of a
rules file) holds of a wheel when every key it gives holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wheelaudit.model.traits import WheelTraits
from wheelaudit.model.globs import Glob, matches_list

__all__ = ["WheelTraits", "Condition", "CONDITION_KEYS", "KNOWN_OS"]

#: Values of the ``os`` trait.
KNOWN_OS = ("linux", "macos", "windows", "ios", "android")

#: Keys of a condition table, in the order :meth:`Condition.describe` lists them. ``name`` (a
#: glob over the distribution's canonical name) is an extension of SPEC section 3, so that one
#: ruleset can serve the several distributions of a project (``mlx`` and ``mlx-metal``).
CONDITION_KEYS = ("platform", "os", "arch", "version", "python", "name")

@dataclass(frozen=True)
class Condition:
    """A condition table. Each key that is given (not ``None``) must hold: some glob of the key
    matches some value of the wheel's corresponding trait. An empty condition always holds.
    """

    platform: tuple[Glob, ...] | None = None
    os: tuple[Glob, ...] | None = None
    arch: tuple[Glob, ...] | None = None
    version: tuple[Glob, ...] | None = None
    python: tuple[Glob, ...] | None = None
    name: tuple[Glob, ...] | None = None

    def _values(self, key: str, traits: WheelTraits) -> Iterable[str]:
        if key == "platform":
            return traits.platforms
        if key == "os":
            return traits.os
        if key == "arch":
            return traits.arch
        if key == "version":
            return (traits.version,)
        if key == "name":
            return (traits.name,) if traits.name else ()
        return traits.pythons

    def holds(self, traits: WheelTraits) -> bool:
        for key in CONDITION_KEYS:
            globs = getattr(self, key)
            if globs is None:
                continue
            if not matches_list(globs, self._values(key, traits)):
                return False
        return True

    def __call__(self, traits: WheelTraits) -> bool:
        return self.holds(traits)

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys this condition gives."""
        return tuple(k for k in CONDITION_KEYS if getattr(self, k) is not None)

    def describe(self) -> str:
        """E.g. ``"os = macos, arch = arm64"``; alternatives joined with ``|``
        (``"os = linux|macos"``); ``"always"`` for an empty condition."""
        parts = []
        for key in self.keys:
            globs = getattr(self, key)
            parts.append(f"{key} = " + "|".join(g.pattern for g in globs))
        return ", ".join(parts) if parts else "always"

    def __str__(self) -> str:
        return self.describe()
