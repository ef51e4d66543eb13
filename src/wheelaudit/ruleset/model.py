"""The typed rules (SPEC section 3): a validated rules file as plain data, one class per table."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from wheelaudit.ruleset.conditions import Condition, WheelTraits
from wheelaudit.model.globs import Glob, SymbolPattern

if TYPE_CHECKING:
    from wheelaudit.model.interest import Interest

__all__ = [
    "Ruleset",
    "LibrariesRule",
    "ComponentRule",
    "FileRule",
    "BinaryRule",
    "LinkageRule",
    "LimitsRule",
    "AbiRule",
    "ReleaseRule",
    "CMakeRule",
    "GlobLimit",
    "MetadataRule",
    "Waiver",
]


@dataclass
class LibrariesRule:
    """``[libraries]``: every native binary in ``scope`` must match one of ``expected``."""

    scope: list[Glob] | None = None
    expected: list[Glob] = field(default_factory=list)
    identity: Literal["filename", "off"] = "filename"
    when: Condition | None = None
    line: int | None = None
    source: str = "<string>"


@dataclass
class ComponentRule:
    """``[[component]]``: code that exactly one library must carry."""

    name: str
    symbols: list[SymbolPattern] = field(default_factory=list)
    strings: list[bytes] = field(default_factory=list)
    strong_only: bool = False
    owner: Glob | None = None
    required: bool | Condition = True
    exempt: list[Glob] = field(default_factory=list)
    when: Condition | None = None
    #: the CMake imported target a package config of the wheel must declare for the owner (WA705)
    cmake_target: str | None = None
    line: int | None = None
    source: str = "<string>"

    @property
    def symbol_entries(self) -> list[str]:
        """The ``symbols`` entries exactly as written."""
        return [s.entry for s in self.symbols]

    def is_required(self, traits: WheelTraits) -> bool:
        """Whether the component is required in a wheel with these traits."""
        if isinstance(self.required, Condition):
            return self.required.holds(traits)
        return bool(self.required)


@dataclass
class FileRule:
    """``[[file]]``: how many files match ``glob``, and where they sit."""

    name: str
    glob: Glob
    count: int | None = None
    min: int | None = None
    max: int | None = None
    beside: str | None = None
    when: Condition | None = None
    line: int | None = None
    source: str = "<string>"

    def bounds(self) -> tuple[int, int | None]:
        """``(least, most)`` matches allowed; ``most`` is ``None`` when unbounded."""
        if self.count is not None:
            return self.count, self.count
        if self.min is None and self.max is None:
            return 1, None
        return (self.min or 0), self.max


@dataclass
class BinaryRule:
    """``[[binary]]``: constraints on the binaries whose path matches ``path``."""

    name: str
    path: Glob
    count: int | None = None
    must_not_define: list[str] = field(default_factory=list)
    must_import: list[SymbolPattern] = field(default_factory=list)
    must_need: list[Glob] = field(default_factory=list)
    must_not_need: list[Glob] = field(default_factory=list)
    #: wheel-path globs (``!`` excludes): every shipped library they match must be a resolved dependency
    must_need_all: list[Glob] = field(default_factory=list)
    when: Condition | None = None
    line: int | None = None
    source: str = "<string>"


@dataclass
class MetadataRule:
    """``[[metadata]]``: constraints on the wheel's Requires-Dist, for the wheels ``when`` selects.

    ``forbid_requires`` are globs over canonical distribution names (PEP 503) that no requirement
    may name where it applies (its marker evaluated for the wheel's tags, with or without one of
    the wheel's extras); ``require`` are names that must be required everywhere the wheel installs,
    without an extra."""

    name: str
    forbid_requires: list[Glob] = field(default_factory=list)
    require: list[str] = field(default_factory=list)
    when: Condition | None = None
    line: int | None = None
    source: str = "<string>"


@dataclass
class LinkageRule:
    """``[linkage]``: where dependencies may resolve and which rpaths are acceptable."""

    allow_external: list[Glob] = field(default_factory=list)
    provided_by: dict[str, list[Glob]] = field(default_factory=dict)
    forbid_rpath: list[Glob] = field(default_factory=list)
    allow_rpath: list[Glob] = field(default_factory=list)
    #: dependencies a binary can do without (an ImportError fallback): unresolved, a warning
    optional: list[Glob] = field(default_factory=list)
    check: bool = True
    line: int | None = None
    source: str = "<string>"


@dataclass
class GlobLimit:
    """``[[limits.file-glob]]``: the largest each member matching ``glob`` may be (uncompressed)."""

    glob: Glob
    max: int
    line: int | None = None


@dataclass
class LimitsRule:
    """``[limits]``: size budgets, in bytes (None: no budget); WA605 when one is exceeded."""

    wheel_compressed: int | None = None
    wheel_uncompressed: int | None = None
    file: int | None = None
    files: int | None = None
    file_globs: list[GlobLimit] = field(default_factory=list)
    line: int | None = None
    source: str = "<string>"


@dataclass
class AbiRule:
    """``[abi]``: what ``check --baseline`` holds the release to (WA801-WA803)."""

    policy: Literal["semver", "strict", "off"] = "semver"
    public: list[Glob] = field(default_factory=list)  # library paths whose exports are promised
    line: int | None = None
    source: str = "<string>"

    def lists(self, path: str) -> bool:
        """Whether ``public`` names the library at ``path``."""
        return any(g.match(path) for g in self.public)


@dataclass
class ReleaseRule:
    """``[release]``: what ``check --release`` expects of one release's wheels (WA811-WA813)."""

    platforms: list[str] = field(default_factory=list)  # platform tags, each needs a wheel
    only: list[tuple[Glob, Condition]] = field(default_factory=list)  # platform-specific paths
    line: int | None = None
    source: str = "<string>"


@dataclass
class CMakeRule:
    """``[cmake]``: how a hand-written package config declares its targets (WA705)."""

    config: list[Glob] = field(default_factory=list)
    declares: Any = None  # named groups: name, library (an RE2 pattern: globs.linear_regex)
    namespace: str = ""
    line: int | None = None
    source: str = "<string>"


@dataclass
class Waiver:
    """``[[waive]]``: a known finding, accepted on purpose."""

    code: str
    target: Glob | None = None
    path: Glob | None = None
    reason: str = ""
    until: _dt.date | None = None
    when: Condition | None = None  # the wheels it applies to (e.g. a release series); elsewhere it is silent
    line: int | None = None
    source: str = "<string>"

    def lapsed(self, today: _dt.date | None = None) -> bool:
        """Whether ``until`` has passed (the waiver still holds on the ``until`` day itself)."""
        if self.until is None:
            return False
        return (today or _dt.date.today()) > self.until

    def covers(self, code: str, subject: str | None, paths: Iterable[str] = (),
               symbols: Iterable[str] = ()) -> bool:
        """Whether this waiver matches a finding with this code, subject, paths and symbols
        (ignoring ``until``): the code is the waiver's code, ``target`` (if given) matches the
        subject or one of the symbols, and ``path`` (if given) matches one of the paths or its
        file name. The one waiver matcher: evaluation marks findings with it."""
        if code != self.code:
            return False
        if self.target is not None and not ((subject is not None and self.target.match(subject))
                                            or any(self.target.match(s) for s in symbols)):
            return False
        if self.path is not None and not any(self.path.match(p) or self.path.match(p.rsplit("/", 1)[-1])
                                             for p in paths):
            return False
        return True


@dataclass
class Ruleset:
    """A validated rules file."""

    version: int = 1
    name: str | None = None
    path: Path | None = None
    libraries: LibrariesRule | None = None
    components: list[ComponentRule] = field(default_factory=list)
    files: list[FileRule] = field(default_factory=list)
    binaries: list[BinaryRule] = field(default_factory=list)
    metadata: list[MetadataRule] = field(default_factory=list)
    linkage: LinkageRule | None = None
    cmake: CMakeRule | None = None
    limits: LimitsRule | None = None
    abi: AbiRule | None = None
    release: ReleaseRule | None = None
    waivers: list[Waiver] = field(default_factory=list)
    #: CLI defaults: codes or prefixes to report only / to drop, and the failing severity.
    select: list[str] | None = None
    ignore: list[str] | None = None
    fail_on: Literal["error", "warning"] | None = None
    #: severity overrides, per code or family (``severity = {WA502 = "error"}``)
    severity: dict[str, Literal["error", "warning"]] = field(default_factory=dict)
    source: str = "<string>"

    def strings(self) -> list[bytes]:
        """Every component string (de-duplicated, in file order): what the scanner looks for."""
        seen: dict[bytes, None] = {}
        for comp in self.components:
            for s in comp.strings:
                seen.setdefault(s, None)
        return list(seen)

    def symbol_patterns(self) -> list[SymbolPattern]:
        """Every symbol entry of the rules (components' symbols, binaries' ``must-import``), once."""
        pats: list[SymbolPattern] = []
        for comp in self.components:
            pats.extend(comp.symbols)
        for rule in self.binaries:
            pats.extend(rule.must_import)
        return list({p.entry: p for p in pats}.values())

    def interest(self) -> Interest:
        """What the symbol entries can match (:class:`wheelaudit.model.interest.Interest`): handed to the
        scan so that each worker keeps only the local symbols these rules can look at."""
        from wheelaudit.model.interest import interest_of

        return interest_of(self.symbol_patterns())

    def component(self, name: str) -> ComponentRule | None:
        """The component named ``name``, if any."""
        for comp in self.components:
            if comp.name == name:
                return comp
        return None

    def rule(self, rule_id: str, subject: str | None = None) -> Any:
        """The rule of this ruleset that a finding's ``rule`` id names (``names``,
        ``component:NAME``, ``file:NAME``, ``binary:NAME``, ``metadata:NAME``, ``linkage``,
        ``limits``, ``consumer`` for ``[cmake]``, ``waivers``), or None: a built-in check
        (``abi``, ``integrity``, ``linkage`` without a ``[linkage]`` table) or a rule it does not
        have. For ``waivers`` (WA004, whose subject is the waiver's code) the first waiver of that
        code. Its ``source`` and ``line`` say where it is written (reports point there)."""
        kind, _, name = rule_id.partition(":")
        if name:
            tables: dict[str, list[Any]] = {"component": self.components, "file": self.files, "binary": self.binaries,
                      "metadata": self.metadata}
            return next((r for r in tables.get(kind, ()) if r.name == name), None)
        if rule_id == "waivers":
            return next((w for w in self.waivers if subject is None or w.code == subject),
                        self.waivers[0] if self.waivers else None)
        return {"names": self.libraries, "linkage": self.linkage, "limits": self.limits,
                "consumer": self.cmake}.get(rule_id)
