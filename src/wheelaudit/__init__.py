"""wheelaudit: a release-audit linter for Python wheels that ship native code.

>>> import wheelaudit
>>> wheel = wheelaudit.scan("dist/executorch-1.5.1-cp311-cp311-macosx_14_0_arm64.whl")   # doctest: +SKIP
>>> report = wheelaudit.audit(wheel.path, "rules/executorch.toml")                       # doctest: +SKIP
>>> report.ok, [f.code for f in report.findings]                                         # doctest: +SKIP
"""

from __future__ import annotations

__version__ = "0.1.0"

from .api import audit, audit_wheels, load_rules, scan  # noqa: E402
from .facts import Binary, Dependency, Rpath, Slice, Symbol  # noqa: E402
from .findings import CODES, Finding  # noqa: E402
from .report import Report, WheelReport  # noqa: E402
from .ruleset import Ruleset, RulesError  # noqa: E402
from .scan import Wheel  # noqa: E402
from .wheelfile import NotAWheel  # noqa: E402

__all__ = [
    "__version__", "scan", "load_rules", "audit", "audit_wheels",
    "Wheel", "Binary", "Slice", "Symbol", "Dependency", "Rpath",
    "Finding", "CODES", "Report", "WheelReport", "Ruleset", "RulesError", "NotAWheel",
]
