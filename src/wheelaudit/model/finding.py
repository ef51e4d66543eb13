"""Findings: the stable codes of SPEC §4 and the record each check produces."""

from __future__ import annotations

from dataclasses import dataclass, field

from wheelaudit.model.codes import CODES, SEVERITY_RANK, Code, Severity
from wheelaudit.model.messages import examples  # (the checks' import; the toolkit is model.messages)

__all__ = ["CODES", "SEVERITY_RANK", "Code", "Severity", "Finding", "examples", "family_rule"]


def family_rule(code: str) -> str:
    """The built-in rule a code's family is filed under when no rule of the ruleset produced it:
    ``linkage`` (WA5xx), ``abi`` (WA6xx), ``waivers`` (WA004), else ``integrity``."""
    if code.startswith("WA5"):
        return "linkage"
    if code.startswith("WA6"):
        return "abi"
    if code == "WA004":
        return "waivers"
    return "integrity"


@dataclass
class Finding:
    """One thing a check found.

    ``subject`` is the component, file rule, binary rule or library path the finding is about
    (for component findings, the component's name). ``paths`` are paths inside the wheel.
    """

    code: str
    message: str
    subject: str = ""
    paths: list[str] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)
    rule: str = ""  # id of the rule that produced it ("component:backend_mlx", "names", ...)
    waived_by: str | None = None  # the waiver's reason when a [[waive]] accepted it
    #: the severity when it is not the code's default: a check that grades its case (WA502), or a
    #: `severity` override of the rules, `[tool.wheelaudit]` or the command line
    severity_override: Severity | None = None
    #: what to do about it, in one line (default: the code's ``fix`` in the registry)
    hint: str = ""

    @property
    def severity(self) -> Severity:
        return self.severity_override or CODES[self.code].severity

    @property
    def waived(self) -> bool:
        return self.waived_by is not None

    @property
    def rule_id(self) -> str:
        """The rule the finding is filed under (a JUnit testcase, a pytest item): the rule that
        produced it, else its code's family (:func:`family_rule`)."""
        return self.rule or family_rule(self.code)

    def to_dict(self) -> dict:
        data = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "subject": self.subject,
            "paths": list(self.paths),
            "symbols": list(self.symbols),
            "hint": self.hint or CODES[self.code].fix,
        }
        if self.rule:
            data["rule"] = self.rule
        if self.waived_by is not None:
            data["waived"] = self.waived_by
        return data
