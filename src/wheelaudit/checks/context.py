"""The context of one evaluation: the wheel's facts, indexed once, and the ruleset; the evidence
of a component in each library (what the rules of components, files and binaries judge, and what
the report's library facts show). No file is opened here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wheelaudit.ruleset.conditions import Condition
from wheelaudit.model.binary import Binary, Slice, Symbol
from wheelaudit.model.finding import examples
from wheelaudit.model.globs import SymbolPattern
from wheelaudit.checks.index import NameIndex, SymbolIndex
from wheelaudit.model.interest import interest_of
from wheelaudit.model.wheel import Wheel

if TYPE_CHECKING:  # (annotations only: the rules' types)
    from wheelaudit.ruleset.model import ComponentRule, Ruleset

__all__ = ["Context", "LibraryEvidence", "SliceEvidence", "library_evidence", "origin_of", "component_definers",
           "is_exempt", "EXAMPLES"]

EXAMPLES = 3


# --------------------------------------------------------------------------------------------
# Context: the wheel's facts, indexed once per evaluation


class Context:
    """One evaluation of ``ruleset`` (None: the built-in checks only) over ``wheel``: what every
    check reads. What it computes (indexes, the dependency resolution, component evidence) is
    made once and shared by the checks; ``memo`` holds what a family computes once for its
    checks (:mod:`wheelaudit.checks.links`)."""

    def __init__(self, wheel: Wheel, ruleset: Ruleset | None):
        self.wheel = wheel
        self.memo: dict[str, object] = {}
        self.ruleset = ruleset
        self.traits = wheel.traits
        self.binaries = [b for b in wheel.libraries if b.ok]
        self._exports: dict[int, SymbolIndex] = {}
        self._locals: dict[int, SymbolIndex] = {}
        self._imports: dict[str, NameIndex] = {}
        self._evidence: dict[str, dict[str, LibraryEvidence]] = {}
        # every symbol entry of the ruleset: each index finds all their hints in one pass
        self._patterns = _ruleset_patterns(ruleset)
        if wheel.interest is not None and not wheel.interest.covers(interest_of(self._patterns)):
            raise ValueError(f"{wheel.path.name} was scanned for other rules (its local symbols were narrowed to "
                             "theirs); scan it again with these rules' interest, or with none")

    def exports(self, sl: Slice) -> SymbolIndex:
        idx = self._exports.get(id(sl))
        if idx is None:
            idx = self._exports[id(sl)] = SymbolIndex(sl.exports, self._patterns)
        return idx

    def locals(self, sl: Slice) -> SymbolIndex:
        idx = self._locals.get(id(sl))
        if idx is None:
            idx = self._locals[id(sl)] = SymbolIndex(sl.locals, self._patterns)
        return idx

    def imports(self, b: Binary) -> NameIndex:
        idx = self._imports.get(b.path)
        if idx is None:
            idx = self._imports[b.path] = NameIndex(n for s in b.slices for n in s.imports)
        return idx

    def resolution(self) -> dict:
        """Every dependency of the wheel resolved as the loader resolves it, under the rules'
        ``[linkage]`` table (:func:`wheelaudit.checks.resolution.resolve_wheel`): made once per
        evaluation and shared by the linkage checks, must-need-all and the report's library facts."""
        if not hasattr(self, "_resolution"):
            from wheelaudit.checks.resolution import resolve_wheel

            self._resolution = resolve_wheel(self.wheel, self.linkage_rule)
        return self._resolution

    @property
    def linkage_rule(self):
        return self.ruleset.linkage if self.ruleset is not None else None

    def resolved(self, b: Binary) -> set[str]:
        """The paths inside the wheel that ``b``'s dependencies resolve to (any slice)."""
        if not hasattr(self, "_resolved"):
            self._resolved = {path: {r.path for rs in per_arch.values() for r in rs if r.status == "inside" and r.path}
                              for path, per_arch in self.resolution().items()}
        return self._resolved.get(b.path, set())

    def applies(self, when: Condition | None) -> bool:
        return when is None or when.holds(self.traits)

    def required(self, required: bool | Condition) -> bool:
        return required if isinstance(required, bool) else required.holds(self.traits)

    def evidence(self, comp: ComponentRule) -> dict[str, LibraryEvidence]:
        """Evidence of ``comp`` per library path (every binary, exempt ones included)."""
        ev = self._evidence.get(comp.name)
        if ev is None:
            ev = self._evidence[comp.name] = {}
            for b in self.binaries:
                e = library_evidence(self, b, comp)
                if e.any:
                    ev[b.path] = e
        return ev


def _ruleset_patterns(ruleset: Ruleset | None) -> list[SymbolPattern]:
    return ruleset.symbol_patterns() if ruleset is not None else []


# --------------------------------------------------------------------------------------------
# Component evidence


@dataclass
class SliceEvidence:
    arch: str
    sentinels: set[int] = field(default_factory=set)  # indices of comp.symbols defined here
    kinds: set[str] = field(default_factory=set)  # "exported", "weak", "local symbol", "string"
    symbols: list[str] = field(default_factory=list)  # example names
    strings: list[str] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.sentinels or self.strings)


@dataclass
class LibraryEvidence:
    path: str
    slices: list[SliceEvidence]
    origin: str | None = None  # the wheel file it came from, when wheels are audited together

    @property
    def any(self) -> bool:
        return any(s.any for s in self.slices)

    @property
    def sentinels(self) -> set[int]:
        return set().union(*(s.sentinels for s in self.slices))

    @property
    def kinds(self) -> set[str]:
        return set().union(*(s.kinds for s in self.slices))

    @property
    def symbols(self) -> list[str]:
        return list(dict.fromkeys(n for s in self.slices for n in s.symbols))

    @property
    def strings(self) -> list[str]:
        return list(dict.fromkeys(n for s in self.slices for n in s.strings))

    def evidence(self) -> str:
        """``exported: a, b; string: "x"`` (with the wheel it came from, for --together)."""
        parts = []
        kinds = sorted(self.kinds - {"string"})
        if self.symbols:
            parts.append(f"{', '.join(kinds)}: {examples(self.symbols, EXAMPLES)}")
        if self.strings:
            parts.append("string: " + ", ".join(f'"{s}"' for s in self.strings[:EXAMPLES]))
        if self.origin:
            parts.insert(0, self.origin)
        return "; ".join(parts)

    def describe(self) -> str:
        """``libfoo.so (exported: a, b; string: "x")``."""
        return f"{self.path} ({self.evidence()})"


def library_evidence(ctx: Context, b: Binary, comp: ComponentRule) -> LibraryEvidence:
    slices = []
    for sl in b.slices:
        se = SliceEvidence(arch=sl.arch)
        exports = ctx.exports(sl)
        local_idx = ctx.locals(sl) if sl.locals else None
        for i, pat in enumerate(comp.symbols):
            found: list[Symbol] = exports.find(pat, strong_only=comp.strong_only, limit=EXAMPLES)
            kind = None
            if found:
                kind = "weak" if all(s.weak for s in found) else "exported"
            elif local_idx is not None:
                found = local_idx.find(pat, limit=EXAMPLES)
                if found:
                    kind = "local symbol"
            if found and kind:
                se.sentinels.add(i)
                se.kinds.add(kind)
                se.symbols.extend(s.demangled for s in found)
        for s in comp.strings:
            if s in sl.strings:
                se.kinds.add("string")
                se.strings.append(s.decode("utf-8", "replace"))
        slices.append(se)
    return LibraryEvidence(b.path, slices, origin_of(ctx, b.path))


def origin_of(ctx: Context, path: str) -> str | None:
    """The wheel a path came from, when wheels are audited together (``wheelaudit.scanner.together``)."""
    origins = getattr(ctx.wheel, "origins", None)
    return origins.get(path) if origins else None



def is_exempt(comp: ComponentRule, path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return any(g.match(path) or g.match(name) for g in comp.exempt)


def component_definers(ctx: Context, comp: ComponentRule) -> dict[str, LibraryEvidence]:
    """The non-exempt libraries that carry ``comp`` (SPEC §3 "definers")."""
    return {p: e for p, e in ctx.evidence(comp).items() if not is_exempt(comp, p)}

