"""WA605: the size budgets of ``[limits]`` (the rules file), one finding per exceeded budget.

Sizes come from the scan (:attr:`Wheel.sizes <wheelaudit.model.wheel.Wheel.sizes>`, as the zip
directory or the file system states them; :attr:`Wheel.archive_size` for the ``.whl`` itself).
For an unpacked tree, or wheels audited together, ``wheel-compressed`` is not checked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wheelaudit.model.finding import Finding
from wheelaudit.model.messages import human_size
from wheelaudit.model.wheel import Wheel
from wheelaudit.ruleset.model import LimitsRule
from wheelaudit.checks.base import Check, Family

if TYPE_CHECKING:
    from wheelaudit.checks.context import Context

__all__ = ["FAMILY", "check_limits", "human_size"]

#: offenders named in a message (every one is in the finding's ``paths``)
SHOWN = 3


def _binary(budget: int) -> bool:
    """Whether ``budget`` reads better in binary units (a multiple of 1 KiB, not of 1 KB)."""
    return budget % 1000 != 0 and budget % 1024 == 0


def _versus(measured: int, budget: int) -> tuple[str, str]:
    """Measured and budget in the budget's unit family; exact bytes when they would read equal."""
    b = _binary(budget)
    got, limit = human_size(measured, b), human_size(budget, b)
    if got == limit:
        got, limit = f"{got} ({measured} bytes)", f"{limit} ({budget} bytes)"
    return got, limit


def _over(wheel: Wheel, key: str, paths: list[str], budget: int) -> Finding:
    """One finding for the members of ``paths`` (uncompressed) over ``budget``, largest first."""
    b = _binary(budget)
    sizes = {p: wheel.sizes[p][1] for p in paths}
    ranked = sorted(paths, key=lambda p: (-sizes[p], p))
    budget_text = human_size(budget, b)

    def size(p: str) -> str:
        h = human_size(sizes[p], b)
        return f"{sizes[p]} bytes" if h == budget_text else h

    exact = any(human_size(sizes[p], b) == budget_text for p in ranked[:SHOWN])
    limit = f"{budget_text} ({budget} bytes)" if exact else budget_text
    shown = ", ".join(f"{p} ({size(p)})" for p in ranked[:SHOWN])
    if len(ranked) == 1:
        message = f"{key}: {shown} exceeds the budget of {limit}"
    else:
        more = f" and {len(ranked) - SHOWN} more" if len(ranked) > SHOWN else ""
        message = f"{key}: {len(ranked)} members exceed the budget of {limit} each; the largest: {shown}{more}"
    return Finding("WA605", message, subject=key, paths=ranked, rule="limits")


def check_limits(wheel: Wheel, limits: LimitsRule | None) -> list[Finding]:
    """WA605 for every budget of ``limits`` that ``wheel`` exceeds (none without ``[limits]``)."""
    if limits is None:
        return []
    out: list[Finding] = []
    if limits.wheel_compressed is not None and wheel.archive_size is not None \
            and wheel.archive_size > limits.wheel_compressed:
        got, limit = _versus(wheel.archive_size, limits.wheel_compressed)
        out.append(Finding("WA605", f"wheel-compressed: the wheel file is {got}, over the budget of {limit}",
                           subject="wheel-compressed", rule="limits"))
    if limits.wheel_uncompressed is not None:
        total = sum(u for _, u in wheel.sizes.values())
        if total > limits.wheel_uncompressed:
            got, limit = _versus(total, limits.wheel_uncompressed)
            out.append(Finding("WA605", f"wheel-uncompressed: the members add up to {got} installed, "
                                        f"over the budget of {limit}",
                               subject="wheel-uncompressed", rule="limits"))
    if limits.file is not None:
        big = [p for p, (_, u) in wheel.sizes.items() if u > limits.file]
        if big:
            out.append(_over(wheel, "file", big, limits.file))
    if limits.files is not None and len(wheel.files) > limits.files:
        out.append(Finding("WA605", f"files: the wheel has {len(wheel.files)} members, over the budget of "
                                    f"{limits.files}", subject="files", rule="limits"))
    for gl in limits.file_globs:
        big = [p for p, (_, u) in wheel.sizes.items() if u > gl.max and gl.glob.match(p)]
        if big:
            out.append(_over(wheel, f"file-glob {gl.glob.pattern}", big, gl.max))
    return out


def size_budgets(ctx: Context) -> list[Finding]:
    """WA605: the size budgets of ``[limits]``."""
    return check_limits(ctx.wheel, ctx.ruleset.limits if ctx.ruleset is not None else None)


FAMILY = Family("limits", checks=(Check(("WA605",), size_budgets),))
