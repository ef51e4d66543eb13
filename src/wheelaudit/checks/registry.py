"""The registry of checks: every family of ``checks/``, in the order a report lists findings.

To add a check: give its code an entry in :data:`wheelaudit.model.codes.CODES`, write the
function in its family's module and add it to that module's ``FAMILY`` (CONTRIBUTING.md says
it step by step). A new family is one module of ``checks/`` with a ``FAMILY``, listed here.
"""

from __future__ import annotations

from wheelaudit.checks import (abi, consumer, integrity, limits, linkage, platform, release, rules, symbols,
                               together, waivers)
from wheelaudit.checks.base import Check, Family

__all__ = ["WHEEL_FAMILIES", "FAMILIES", "family_of", "Check", "Family"]

#: what :func:`wheelaudit.checks.evaluate.evaluate` runs for every wheel, in this order: the
#: order of a report's findings
WHEEL_FAMILIES: tuple[Family, ...] = (
    together.FAMILY,  # wheels installed together: each member's own findings, then the tree's
    integrity.FAMILY,  # WA001, WA002: what the reading stages recorded
    rules.FAMILY,  # WA003, WA1xx-WA4xx: the rules file, table by table
    linkage.FAMILY,  # WA501, WA502, WA505, WA507
    symbols.FAMILY,  # WA506
    platform.FAMILY,  # WA503, WA504
    consumer.FAMILY,  # WA7xx
    abi.FAMILY,  # WA601-WA604, WA606-WA609
    limits.FAMILY,  # WA605
)

#: every family: the wheel's, then those run by others (the release's, by the API over several
#: wheels; waivers, applied last by the evaluation)
FAMILIES: tuple[Family, ...] = (*WHEEL_FAMILIES, release.FAMILY, waivers.FAMILY)


def family_of(code: str) -> Family:
    """The family that owns ``code`` (a whole code, ``WA501``); KeyError for an unknown one."""
    for family in FAMILIES:
        if code in family.codes:
            return family
    raise KeyError(code)
