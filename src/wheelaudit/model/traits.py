"""The facts of a wheel that conditions select on: plain data, derived from the wheel's tags and
version by :func:`wheelaudit.platforms.traits.traits_from_tags`."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["WheelTraits"]


@dataclass(frozen=True)
class WheelTraits:
    """The facts of a wheel that conditions select on.

    ``platforms`` are the platform tags as written (``"macosx_14_0_arm64"``, ``"any"``), sorted;
    ``os`` is a subset of :data:`KNOWN_OS`; ``arch`` holds the architectures the tags name,
    spelled as the tags spell them (``"aarch64"`` on Linux, ``"arm64"`` on macOS and Windows:
    they are not unified, so ``arch = "arm64"`` selects Apple silicon and Windows on Arm only,
    and ``arch = ["arm64", "aarch64"]`` every 64-bit Arm wheel). ``version`` is the
    distribution version and ``pythons`` the python tags (``"cp311"``, ``"py3"``), sorted.
    ``name`` is the distribution name, canonical (PEP 503: lower case, ``-`` for runs of
    ``-_.``), or ``""`` when unknown.
    """

    platforms: tuple[str, ...] = ()
    os: frozenset[str] = field(default_factory=frozenset)
    arch: frozenset[str] = field(default_factory=frozenset)
    version: str = ""
    pythons: tuple[str, ...] = ()
    name: str = ""
