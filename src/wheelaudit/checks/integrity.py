"""The integrity of what was read: WA001 (a native binary that cannot be read) and WA002 (the
archive, RECORD, WHEEL or METADATA damaged or disagreeing; an installed environment's RECORDs;
two wheels installed together that overwrite each other's files).

The reading stages (``archive/``, ``scan/``) find the damage while they read, and record it on
the wheel as plain facts (:class:`wheelaudit.model.defects.Defect`, ``Wheel.defects``; for wheels
installed together, :class:`wheelaudit.model.defects.Overwrite`): this family is where those
facts become findings, so that every finding comes from ``checks/``.
"""

from __future__ import annotations

from collections.abc import Sequence

from wheelaudit.model.defects import Overwrite
from wheelaudit.model.finding import Finding
from wheelaudit.model.wheel import Wheel
from wheelaudit.checks.base import Check, Family

__all__ = ["FAMILY", "damage_found_while_reading", "overwritten_files"]

RULE = "integrity"


def damage_found_while_reading(wheel: Wheel) -> list[Finding]:
    """WA001 and WA002: one finding per defect the reading stages recorded, in the order they
    recorded them."""
    return [Finding(d.code, d.message, subject=d.subject, paths=list(d.paths), rule=RULE) for d in wheel.defects]


def overwritten_files(overwrites: Sequence[Overwrite]) -> list[Finding]:
    """WA002 for each path two wheels installed together ship with different contents."""
    out: list[Finding] = []
    for o in overwrites:
        where = o.kept_path if o.kept_path == o.other_path else f"{o.kept_path} / {o.other_path}"
        out.append(Finding(
            "WA002",
            f"{o.installed} is shipped by {o.kept} and by {o.other} with different contents ({where}):"
            f" installed together, one overwrites the other, whose RECORD then no longer matches (and"
            f" uninstalling either removes the file for both). The audit keeps the copy from {o.kept}",
            subject=o.installed, paths=[o.kept_path] if o.kept_path == o.other_path else [o.kept_path, o.other_path],
            rule=RULE))
    return out


FAMILY = Family("integrity", checks=(
    Check.on_wheel(("WA001", "WA002"), damage_found_while_reading),
))
