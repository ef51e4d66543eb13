"""What the checks of the ``[linkage]`` table share in one evaluation: :class:`Links` (the rules in
force, every dependency resolved, who the loaders load) and :func:`on_links`, the shape of such a
check. The ``linkage`` (:mod:`wheelaudit.checks.linkage`, :mod:`wheelaudit.checks.rpaths`),
``symbols`` and ``platform`` families read it; ``check = false`` turns all of them off.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheelaudit.checks.base import Check
from wheelaudit.checks.resolution import Resolution, Rules, resolve_wheel
from wheelaudit.load import load_model
from wheelaudit.model.finding import Finding
from wheelaudit.model.wheel import Wheel

if TYPE_CHECKING:
    from wheelaudit.checks.context import Context
    from wheelaudit.ruleset.model import LinkageRule

__all__ = ["Links", "links", "links_of", "on_links"]


@dataclass
class Links:
    """What the checks of the ``[linkage]`` table share in one evaluation (the ``linkage``,
    ``symbols`` and ``platform`` families'): the table's rules,
    every dependency resolved (files no platform loader loads left out: their facts are shown by
    inspect, they get no loader verdict), the binaries the loaders load when the wheel is used,
    and those no platform loader loads."""

    rules: Rules
    resolved: dict[str, dict[str, list[Resolution]]]
    loaded: Collection[str]  # (a lazy view: membership may read the sources, load.model.Loaded)
    never: Collection[str]


def links(wheel: Wheel, rule: LinkageRule | None = None, resolved: dict[str, dict[str, list[Resolution]]] | None = None) -> Links | None:
    """The :class:`Links` of ``wheel`` under ``rule`` (the ``[linkage]`` table, None for the
    defaults); None when the table turns the checks off (``check = false``). ``resolved``:
    :func:`wheelaudit.checks.resolution.resolve_wheel` of the same wheel and rule, when the caller has it already."""
    if rule is not None and not getattr(rule, "check", True):
        return None
    rules = Rules.build(wheel, rule)
    if resolved is None:
        resolved = resolve_wheel(wheel, rule)
    # (a DLL the package loads by its full path at import, scikit-learn's vcomp140.dll, is loaded
    # at every import, as a linked one is; so is what it links)
    preloaded = {p.lower() for p in getattr(wheel, "preloaded_dlls", ())}
    model = load_model(wheel)
    loaded = model.loaded.including(p for b in wheel.libraries if b.ok and b.path.lower() in preloaded
                                    and b.path in model.binaries for p in model.closure(b.path))
    # (a file no platform loader loads gets no loader verdict: its facts are shown by inspect)
    resolved = {p: r for p, r in resolved.items() if p not in model.never}
    return Links(rules, resolved, loaded, model.never)


def links_of(ctx: Context) -> Links | None:
    """:func:`links` for one evaluation, made once and shared by its checks."""
    if "links" not in ctx.memo:
        ctx.memo["links"] = links(ctx.wheel, ctx.linkage_rule, ctx.resolution())
    return ctx.memo["links"]  # type: ignore[return-value]


def on_links(codes: tuple[str, ...], judge: Callable[[Wheel, Links], list[Finding]]) -> Check:
    """A check of the ``[linkage]`` table: ``judge`` reads the wheel and its :class:`Links`; it
    does not run when the table turns the checks off."""

    def run(ctx: Context) -> list[Finding]:
        shared = links_of(ctx)
        return judge(ctx.wheel, shared) if shared is not None else []

    return Check(codes, run, judge.__name__)
