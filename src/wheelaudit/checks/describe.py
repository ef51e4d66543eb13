"""Each native library of a wheel as reports draw it (:class:`wheelaudit.model.library.LibraryFacts`):
its size and architectures, the components of the rules it carries, and where each of its
dependencies resolves, as the linkage checks resolve them.

Part of the evaluate stage: facts in, plain data out, no file opened. ``check`` fills
:attr:`wheelaudit.model.report.WheelReport.libraries` with it; ``inspect --format dot`` draws it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wheelaudit.checks.context import Context, is_exempt
from wheelaudit.model.library import ComponentMark, LibraryFacts, ResolvedDependency

if TYPE_CHECKING:
    from wheelaudit.model.wheel import Wheel
    from wheelaudit.ruleset.model import Ruleset


def describe_libraries(wheel: Wheel, ruleset: Ruleset | None = None, *, context: Context | None = None
                       ) -> list[LibraryFacts]:
    """Every native binary of ``wheel``, sorted by path. ``context`` is the evaluation's own
    (its component evidence is reused); without it one is made for ``ruleset``."""
    ctx = context if context is not None else Context(wheel, ruleset)
    ruleset = ctx.ruleset
    marks: dict[str, list[ComponentMark]] = {}
    if ruleset is not None:
        for comp in ruleset.components:
            if not ctx.applies(comp.when):
                continue
            for path, ev in ctx.evidence(comp).items():
                marks.setdefault(path, []).append(
                    ComponentMark(comp.name, tuple(sorted(ev.kinds)), exempt=is_exempt(comp, path)))
    resolved = ctx.resolution()
    origins = getattr(wheel, "origins", None) or {}
    out: list[LibraryFacts] = []
    for b in sorted(wheel.libraries, key=lambda b: b.path):
        if not b.ok:
            out.append(LibraryFacts(b.path, b.format, b.kind, b.size, (), origin=origins.get(b.path),
                                    error=b.error))
            continue
        # one entry per (dependency, outcome), with the slices it holds for, in first-seen order
        outcomes: dict[tuple, list[str]] = {}
        for arch, rs in resolved.get(b.path, {}).items():
            for r in rs:
                key = (r.dependency.name, r.dependency.kind, r.status, r.path, r.where, r.dist)
                outcomes.setdefault(key, []).append(arch)
        deps = tuple(ResolvedDependency(name, kind, status, tuple(archs), path=path, where=where, dist=dist)
                     for (name, kind, status, path, where, dist), archs in outcomes.items())
        out.append(LibraryFacts(
            b.path, b.format, b.kind, b.size, tuple(b.archs), identity=b.identity,
            components=tuple(sorted(marks.get(b.path, []), key=lambda m: m.name)),
            dependencies=deps, origin=origins.get(b.path)))
    return out
