"""What a check is, and what a family of checks is: the types of the registry of checks
(:mod:`wheelaudit.checks.registry`).

A :class:`Check` is one function and the codes it raises; it reads the :class:`Context` of one
evaluation (the wheel's facts, the ruleset) and returns findings. A :class:`Family` is one module
of ``checks/``: its checks in the order they run, and the codes it owns. Every code of
:data:`wheelaudit.model.codes.CODES` is owned by exactly one family (the test suite holds the
registry and the code table to that); a code may be raised by several checks of its family
(WA003 by the rules of each table that matched nothing).

Families whose findings are not about one wheel (the release as a whole, waivers) declare their
codes without per-wheel checks: their functions are called by the drivers that have what they
need (:mod:`wheelaudit.api`, :mod:`wheelaudit.checks.evaluate`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheelaudit.model.finding import Finding
from wheelaudit.model.wheel import Wheel

if TYPE_CHECKING:
    from wheelaudit.checks.context import Context

__all__ = ["Check", "Family"]


@dataclass(frozen=True)
class Check:
    """One check: the ``codes`` it may raise and ``run``, which raises them for one evaluation."""

    codes: tuple[str, ...]
    run: Callable[[Context], list[Finding]]
    #: what it checks, for ``wheelaudit`` contributors and the registry's listing (default: the
    #: function's name)
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", getattr(self.run, "__name__", "check"))

    @classmethod
    def on_wheel(cls, codes: tuple[str, ...], judge: Callable[[Wheel], list[Finding]]) -> Check:
        """A check that needs the wheel's facts only (no ruleset), such as the ABI checks."""

        def run(ctx: Context) -> list[Finding]:
            return judge(ctx.wheel)

        return cls(codes, run, judge.__name__)


@dataclass(frozen=True)
class Family:
    """One module of ``checks/``: ``name`` (the module's), the ``codes`` it owns, and the
    ``checks`` :func:`wheelaudit.checks.evaluate.evaluate` runs for every wheel, in order (the
    order of a report's findings). ``codes`` defaults to the union of the checks' codes; a family
    that only orders checks whose codes other families own (``together``) has ``owns=False`` and
    owns none."""

    name: str
    checks: tuple[Check, ...] = ()
    codes: tuple[str, ...] = ()
    owns: bool = True
    #: who runs the family, or its functions, besides :func:`~wheelaudit.checks.evaluate.evaluate`
    run_by: str = ""

    def __post_init__(self) -> None:
        if not self.owns:
            object.__setattr__(self, "codes", ())
        elif not self.codes:
            own = dict.fromkeys(c for check in self.checks for c in check.codes)
            object.__setattr__(self, "codes", tuple(sorted(own)))

    def run(self, ctx: Context) -> list[Finding]:
        """Every finding of the family's checks for one evaluation, in order."""
        out: list[Finding] = []
        for check in self.checks:
            out += check.run(ctx)
        return out
