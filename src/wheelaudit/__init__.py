"""wheelaudit: a release-audit linter for Python wheels that ship native code.

>>> import wheelaudit
>>> wheel = wheelaudit.scan("dist/executorch-1.5.1-cp311-cp311-macosx_14_0_arm64.whl")   # doctest: +SKIP
>>> report = wheelaudit.audit(wheel.path, "rules/executorch.toml")                       # doctest: +SKIP
>>> report.ok, [f.code for f in report.findings]                                         # doctest: +SKIP

The names below are imported on first use (PEP 562), so that ``import wheelaudit`` — and the
pytest plugin, which pytest imports in every session — cost next to nothing until used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the submodule that defines it
_EXPORTS = {
    "scan": "api", "load_rules": "api", "audit": "api", "audit_wheels": "api",
    "Binary": "model.binary", "Slice": "model.binary", "Symbol": "model.binary", "Dependency": "model.binary", "Rpath": "model.binary",
    "Finding": "model.finding", "CODES": "model.finding",
    "Report": "model.report", "WheelReport": "model.report",
    "Ruleset": "ruleset.model", "RulesError": "ruleset.errors",
    "Wheel": "model.wheel",
    "NotAWheel": "archive",
}

__all__ = [  # (the keys of _EXPORTS, spelt out for linters and type checkers)
    "__version__", "scan", "load_rules", "audit", "audit_wheels", "Binary", "Slice", "Symbol", "Dependency", "Rpath",
    "Finding", "CODES", "Report", "WheelReport", "Ruleset", "RulesError", "Wheel", "NotAWheel",
]

if TYPE_CHECKING:  # for type checkers and IDEs: the eager imports
    from wheelaudit.api import audit, audit_wheels, load_rules, scan
    from wheelaudit.model.binary import Binary, Dependency, Rpath, Slice, Symbol
    from wheelaudit.model.finding import CODES, Finding
    from wheelaudit.model.report import Report, WheelReport
    from wheelaudit.ruleset.errors import RulesError
    from wheelaudit.ruleset.model import Ruleset
    from wheelaudit.model.wheel import Wheel
    from wheelaudit.archive import NotAWheel


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
