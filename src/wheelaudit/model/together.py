"""Several wheels as one install (``check --together``, ``--env``, ``--find-links``): the merged
tree of facts that :mod:`wheelaudit.scanner.together` makes and :mod:`wheelaudit.checks.together`
judges. Plain data."""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.tags import Tag

from wheelaudit.model.defects import Overwrite
from wheelaudit.model.wheel import Wheel

__all__ = ["TogetherWheel"]


@dataclass
class TogetherWheel(Wheel):
    """Several wheels as one install. ``members`` are the wheels as scanned alone; ``path`` is
    synthetic (the first wheel's directory / ``A.whl+B.whl``); ``name`` and ``version`` are the
    members' joined with ``+``; ``origins`` maps every path of the tree to its wheel's file name."""

    members: list[Wheel] = field(default_factory=list)
    #: ``check --find-links``: the provider wheels found for the checked wheel, canonical
    #: distribution name -> how messages name the wheel (``prov 1.0 (prov-1.0-….whl from
    #: --find-links)``); a dependency none of them ships is a WA501 that says so, even when the
    #: provider table names that distribution
    found_providers: dict[str, str] = field(default_factory=dict)
    #: how findings name each member (:func:`label`), in the order of ``members``
    labels: list[str] = field(default_factory=list)
    #: the label of the member whose own findings are not prefixed with it (``check --find-links``
    #: with one checked wheel: its findings read as when it is audited alone); empty: none
    bare: str = ""
    #: the paths two members ship with different contents (WA002, :mod:`wheelaudit.checks.integrity`)
    overwritten: list[Overwrite] = field(default_factory=list)
    #: (binary, the label of the member that ships what it needs) -> [(dependency, the path it
    #: resolves to)], for the binaries of one member that need another member's libraries (WA505
    #: when the needing member does not require the providing one)
    cross_links: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)

    @property
    def platform_tags(self) -> list[str]:
        """None: the tree has no tags of its own to hold a binary to. Each member's binaries were
        checked against that member's tags when the wheels were merged (WA503 / WA504), so that,
        e.g., torch's binaries (minos 14.0, tagged ``macosx_14_0``) are not held to scikit-learn's
        ``macosx_12_0``."""
        return []

    @property
    def binary_tags(self) -> list[Tag]:
        """None, for the same reason: each member's extension modules were held to that member's
        tags (WA601, WA602) when the wheels were merged; one member's ``abi3`` tag says nothing
        of another's modules."""
        return []
