"""Waivers (``[[waive]]``): the findings a waiver accepts are marked with its reason; a waiver
that matched nothing, lapsed, or accepts every finding of its code is WA004. Applied last, over
every finding of one report entry (:func:`wheelaudit.checks.evaluate.evaluate`, and the release's
entries in :func:`wheelaudit.api.audit_wheels`)."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

from wheelaudit.checks.base import Family
from wheelaudit.model.finding import Finding
from wheelaudit.model.traits import WheelTraits

if TYPE_CHECKING:  # (annotations only: the rules' types)
    from wheelaudit.ruleset.model import Waiver

__all__ = ["FAMILY", "apply_waivers"]

#: the waivers' own code; applied by :func:`apply_waivers`, not per wheel
FAMILY = Family("waivers", codes=("WA004",), run_by="apply_waivers, after every other family")


def _broad(w: Waiver) -> bool:
    """A waiver that matches whatever the finding's subject and paths are."""
    def everything(g) -> bool:
        return g is None or g.pattern.strip("*/") == ""
    return everything(w.target) and everything(w.path)


def apply_waivers(findings: list[Finding], waivers: list[Waiver], today: _dt.date | None = None,
                  traits: WheelTraits | None = None) -> list[Finding]:
    """Mark findings accepted by a waiver; add WA004 for waivers that matched nothing or lapsed.

    A waiver whose ``when`` does not hold for the wheel does not apply to it, and is not WA004.
    """
    today = today or _dt.date.today()
    extra: list[Finding] = []
    for w in waivers:
        if w.when is not None and traits is not None and not w.when.holds(traits):
            continue
        if w.lapsed(today):
            assert w.until is not None  # (only a waiver with an `until` lapses)
            extra.append(Finding("WA004", f"waiver for {w.code}" + (f" on {w.target.pattern}" if w.target else "")
                                 + f" lapsed on {w.until.isoformat()} ({w.reason})", subject=w.code, rule="waivers"))
            continue
        used = 0
        for f in findings:
            if f.waived or not w.covers(f.code, f.subject, f.paths, f.symbols):
                continue
            f.waived_by = w.reason
            used += 1
        if used and _broad(w):
            # a waiver that accepts every finding of its code also accepts the next, unrelated one
            extra.append(Finding("WA004", f"waiver for {w.code} names no subject or path (or only '*'): it accepts "
                                 f"every {w.code} finding, {used} now and any new one; give it a target or path",
                                 subject=w.code, rule="waivers"))
        if not used:
            extra.append(Finding("WA004", f"waiver for {w.code}" + (f" on {w.target.pattern}" if w.target else "")
                                 + (f" at {w.path.pattern}" if w.path else "") + " matched no finding; remove it or fix its target",
                                 subject=w.code, rule="waivers"))
    return findings + extra


