"""Wheels installed together (``check --together``, ``--env``, ``--find-links``): the findings of
a tree :func:`wheelaudit.scanner.together.merge_wheels` made, before those of the tree as one wheel.

Each member keeps its own findings of what was read (:mod:`wheelaudit.checks.integrity`) and its
own platform and tag checks (:mod:`wheelaudit.checks.platform`, WA503 / WA504; the tag checks of
:mod:`wheelaudit.checks.abi`, WA601 / WA602): a binary is held to the tags of the wheel it ships
in, not to another wheel's; each message is prefixed with the member's label. Then what only the
tree shows: members no platform installs together (WA503), paths two members ship with
different contents (WA002), a member that needs another's library without requiring it (WA505).

This family owns no code: each finding is raised by the family that owns its code, and only
ordered here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from wheelaudit.model.finding import Finding
from wheelaudit.checks.abi import TAG_CHECKS
from wheelaudit.checks.base import Check, Family
from wheelaudit.checks.context import Context
from wheelaudit.checks.integrity import damage_found_while_reading, overwritten_files
from wheelaudit.checks.linkage import members_not_required
from wheelaudit.checks.platform import check_platform, not_installable_together
from wheelaudit.load import load_model

if TYPE_CHECKING:
    from wheelaudit.model.together import TogetherWheel

__all__ = ["FAMILY", "installed_together"]


def _prefixed(f: Finding, prefix: str) -> Finding:
    return Finding(f.code, f"{prefix}{f.message}", subject=f.subject, paths=list(f.paths),
                   symbols=list(f.symbols), rule=f.rule, waived_by=f.waived_by,
                   severity_override=f.severity_override)


def installed_together(ctx: Context) -> list[Finding]:
    """Every member's own findings, prefixed with its label, then the tree's (see the module
    docstring); nothing for a wheel that is not a tree of several."""
    if not getattr(ctx.wheel, "members", None):
        return []
    tree = cast("TogetherWheel", ctx.wheel)
    members, labels, bare = tree.members, tree.labels, tree.bare
    out: list[Finding] = []
    for w, lab in zip(members, labels, strict=True):
        prefix = "" if lab == bare else f"{lab}: "
        model = load_model(w)
        own = damage_found_while_reading(w) + check_platform(w, model.loaded, never=model.never)
        for check in TAG_CHECKS:
            own += check(w)
        out += [_prefixed(f, prefix) for f in own]
    out += not_installable_together(members, labels)
    out += overwritten_files(tree.overwritten)
    out += members_not_required(tree.cross_links, tree.origins, members, labels)
    return out


FAMILY = Family("together", owns=False, checks=(
    Check(("WA001", "WA002", "WA503", "WA504", "WA505", "WA601", "WA602"), installed_together),
), run_by="evaluate, first, for a tree of wheels installed together; the codes are owned by integrity, platform, "
          "abi and linkage")
