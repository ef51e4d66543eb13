"""The result of an audit: findings per wheel, select/ignore, severity gate, exit code, JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wheelaudit import __version__
from wheelaudit.model.finding import SEVERITY_RANK, Finding
from wheelaudit.model.library import LibraryFacts
from wheelaudit.model.codes import selected
from wheelaudit.model.wheel import Wheel

SCHEMA_VERSION = 1  # the contract's version (SPEC §5); added fields ("hint", "resolved") do not change it


@dataclass
class WheelReport:
    """The findings of one wheel (or of one ``--together`` set)."""

    wheel: Wheel
    findings: list[Finding]  # selected findings, waived ones included (marked)
    #: each native library with its components and resolved dependencies, sorted by path (made
    #: by the evaluation: wheelaudit.checks.describe); empty when the report was built without it
    libraries: list[LibraryFacts] = field(default_factory=list)

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if not f.waived]

    def to_dict(self) -> dict[str, Any]:
        w = self.wheel
        d: dict[str, Any] = {
            "path": str(w.path),
            "name": w.name,
            "version": w.version,
            "tags": [str(t) for t in w.tags],
            "findings": [f.to_dict() for f in self.findings],
        }
        members = getattr(w, "members", None)
        if members:  # --together: the wheels laid out as one install
            d["members"] = [str(m.path) for m in members]
        return d


@dataclass
class Report:
    """What ``wheelaudit.audit`` returns and every renderer draws."""

    wheels: list[WheelReport]
    rules_path: str | None = None
    rules_name: str | None = None
    fail_on: str = "error"
    select: list[str] | None = None
    ignore: list[str] | None = None
    notes: list[str] = field(default_factory=list)
    ruleset: Any = None  # the Ruleset evaluated (renderers such as JUnit list its rules)

    @classmethod
    def build(cls, results: list[tuple[Wheel, list[Finding]]], *, rules_path: str | None = None,
              rules_name: str | None = None, select: list[str] | None = None, ignore: list[str] | None = None,
              fail_on: str = "error", ruleset: Any = None,
              libraries: list[list[LibraryFacts]] | None = None) -> Report:
        """``libraries``: for each wheel of ``results``, its :attr:`WheelReport.libraries`."""
        wheels = [WheelReport(w, [f for f in fs if selected(f.code, select, ignore)],
                              list(libraries[i]) if libraries is not None else [])
                  for i, (w, fs) in enumerate(results)]
        return cls(wheels, rules_path, rules_name, fail_on, select, ignore, ruleset=ruleset)

    @property
    def findings(self) -> list[Finding]:
        """Every selected finding that is not waived, across wheels."""
        return [f for wr in self.wheels for f in wr.active]

    @property
    def failing(self) -> list[Finding]:
        """The findings that fail the run: not waived, at or above ``fail_on``."""
        threshold = SEVERITY_RANK[self.fail_on]
        return [f for f in self.findings if SEVERITY_RANK[f.severity] >= threshold]

    @property
    def ok(self) -> bool:
        """True when no finding is at or above ``fail_on``."""
        return not self.failing

    @property
    def exit_code(self) -> int:
        """0 when the report passes, 1 when it fails (the CLI's exit code)."""
        return 0 if self.ok else 1

    def summary(self) -> dict[str, int]:
        """Counts of active errors and warnings, and of waived findings."""
        all_f = [f for wr in self.wheels for f in wr.findings]
        return {
            "errors": sum(1 for f in all_f if not f.waived and f.severity == "error"),
            "warnings": sum(1 for f in all_f if not f.waived and f.severity == "warning"),
            "waived": sum(1 for f in all_f if f.waived),
        }

    def to_json(self) -> dict[str, Any]:
        """The SPEC §5 object (``schemas/check.schema.json``)."""
        return {
            "schema": SCHEMA_VERSION,
            "tool": {"name": "wheelaudit", "version": __version__},
            "rules": {"path": self.rules_path, "name": self.rules_name},
            "wheels": [wr.to_dict() for wr in self.wheels],
            "summary": self.summary(),
            "notes": list(self.notes),
        }
