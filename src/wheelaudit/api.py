"""The Python API (SPEC §7): ``scan``, ``load_rules``, ``audit``. The CLI and the pytest plugin
are thin layers over these three functions."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Sequence
from typing import Literal, Union

from wheelaudit.binary.budget import Budget
from wheelaudit.checks.describe import describe_libraries
from wheelaudit.checks.evaluate import Context, evaluate
from wheelaudit.checks.index import Interest
from wheelaudit.model.codes import parse_selectors, parse_severities, parse_severity, severity_of
from wheelaudit.model.report import Report
from wheelaudit.ruleset.load import Ruleset, load_rules
from wheelaudit.model.wheel import Wheel
from wheelaudit.scan import scan
from wheelaudit.scan.optional import find_optional_modules
from wheelaudit.checks.linkage import optional_candidates

PathLike = Union[str, "os.PathLike[str]"]
FailOn = Literal["error", "warning"]

__all__ = ["scan", "load_rules", "audit", "audit_wheels"]


def _as_ruleset(rules: Ruleset | PathLike | None) -> Ruleset | None:
    if rules is None or isinstance(rules, Ruleset):
        return rules
    return load_rules(rules)


def audit(path: PathLike | Sequence[PathLike], rules: Ruleset | PathLike | None = None, *,
          select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
          fail_on: FailOn | None = None, jobs: int | None = None, today: _dt.date | None = None,
          together: bool = False, severity: dict[str, str] | None = None) -> Report:
    """Scan one wheel (or several) and evaluate ``rules`` over it.

    ``rules`` is a :class:`Ruleset`, a path to a rules file, or None (built-in checks only:
    integrity, unreadable binaries and linkage). ``select``/``ignore``/``fail_on`` default to the
    ruleset's own settings; ``severity`` (``{"WA502": "error"}``, codes or families) overrides
    codes' severities on top of the ruleset's ``severity``. A code or family that does not exist
    raises :class:`wheelaudit.model.codes.CodeError` (a ValueError) before anything is read. Returns a :class:`~wheelaudit.model.report.Report`; ``report.ok`` tells
    whether it passes.

    With ``together=True`` the wheels are audited as one install (``check --together``, see
    :mod:`wheelaudit.scan.together`): the report has one entry, for the merged tree.
    """
    select = parse_selectors(select)  # (a typo is refused before anything is read)
    ignore = parse_selectors(ignore)
    if fail_on is not None:
        fail_on = parse_severity(fail_on)
    severity = parse_severities(severity)
    ruleset = _as_ruleset(rules)
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    strings = ruleset.strings() if ruleset is not None else []
    interest = Interest.for_rules(ruleset)
    budget = Budget()  # the run's one budget (wheelaudit.binary.budget)
    if together:
        from wheelaudit.scan.together import scan_together

        wheels: list[Wheel] = [scan_together(paths, strings=strings, interest=interest, jobs=jobs, budget=budget)]
    else:
        wheels = [scan(p, strings=strings, interest=interest, jobs=jobs, budget=budget) for p in paths]
    report = audit_wheels(wheels, ruleset, select=select, ignore=ignore, fail_on=fail_on, today=today,
                          severity=severity)
    report.notes += list(budget.notes.values())  # (what the budget cut, said once)
    return report


def audit_wheels(wheels: Sequence[Wheel], ruleset: Ruleset | None, *, select: Iterable[str] | None = None,
                 ignore: Iterable[str] | None = None, fail_on: FailOn | None = None,
                 today: _dt.date | None = None, severity: dict[str, str] | None = None) -> Report:
    """Evaluate ``ruleset`` over already scanned wheels (scan once, audit many times)."""
    sel = parse_selectors(select) if select is not None else (tuple(ruleset.select) if ruleset is not None and ruleset.select else None)
    ign = parse_selectors(ignore) if ignore is not None else (tuple(ruleset.ignore) if ruleset is not None and ruleset.ignore else None)
    if fail_on is not None:
        fail_on = parse_severity(fail_on)
    gate = fail_on or (ruleset.fail_on if ruleset is not None and ruleset.fail_on else "error")
    overrides = {**(ruleset.severity if ruleset is not None else {}), **parse_severities(severity)}
    results, libraries = [], []
    for w in wheels:
        ctx = Context(w, ruleset)  # one evaluation: the findings and the report's library facts
        findings = evaluate(w, ruleset, today=today, context=ctx)
        if w.optional_modules is None:
            # a load error of an extension module the package can do without is a warning: which
            # modules those are is read from the wheel's sources, only when such an error is found
            named = optional_candidates(w, findings)
            w.optional_modules = find_optional_modules(w, named) if named else {}
            if w.optional_modules:
                findings = evaluate(w, ruleset, today=today, context=ctx)
        results.append((w, findings))
        libraries.append(describe_libraries(w, ruleset, context=ctx))
    if overrides:
        for _, findings in results:
            for f in findings:
                if any(f.code.startswith(sel) for sel in overrides):
                    f.severity_override = severity_of(f.code, overrides)
    return Report.build(results, rules_path=str(ruleset.path) if ruleset is not None and ruleset.path else None,
                        rules_name=ruleset.name if ruleset is not None else None,
                        select=sel, ignore=ign, fail_on=gate, ruleset=ruleset,
                        libraries=libraries)

