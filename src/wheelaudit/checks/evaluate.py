"""Evaluate a ruleset over a scanned wheel: facts in, findings out. No file is opened here.

:func:`evaluate` runs every family of the registry (:data:`wheelaudit.checks.registry.WHEEL_FAMILIES`)
over one :class:`~wheelaudit.checks.context.Context`, in order, adds the findings made elsewhere
(the release checks), then applies the waivers.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Sequence

from wheelaudit.checks.context import Context
from wheelaudit.checks.registry import WHEEL_FAMILIES
from wheelaudit.checks.waivers import apply_waivers
from wheelaudit.model.finding import Finding
from wheelaudit.model.wheel import Wheel
from wheelaudit.ruleset.model import Ruleset

__all__ = ["evaluate", "Context"]


def evaluate(wheel: Wheel, ruleset: Ruleset | None, *, today: _dt.date | None = None,
             context: Context | None = None, extra: Sequence[Finding] = ()) -> list[Finding]:
    """All findings for ``wheel``: every family's (the scan's defects, the rules', linkage, ...);
    waivers applied.
    ``context``: a :class:`Context` of the same wheel and ruleset to evaluate in, when the caller
    goes on to use it (its dependency resolution and component evidence are made once).
    ``extra``: findings about the wheel made elsewhere (the release checks, against a baseline),
    waived with the rest."""
    return _findings(context if context is not None else Context(wheel, ruleset), today, extra)


def _findings(ctx: Context, today: _dt.date | None, extra: Sequence[Finding] = ()) -> list[Finding]:
    findings: list[Finding] = []
    for family in WHEEL_FAMILIES:
        findings += family.run(ctx)
    findings += [dataclasses.replace(f, waived_by=None) for f in extra]
    if ctx.ruleset is not None:
        findings = apply_waivers(findings, ctx.ruleset.waivers, today, ctx.wheel.traits)
    return findings
