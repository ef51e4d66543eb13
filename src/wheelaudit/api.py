"""The Python API (SPEC §7): ``scan``, ``load_rules``, ``audit``. The CLI and the pytest plugin
are thin layers over these three functions."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, Union

from wheelaudit.binary.budget import Budget
from wheelaudit.checks.describe import describe_libraries
from wheelaudit.checks.context import Context
from wheelaudit.checks.evaluate import evaluate
from wheelaudit.model.interest import Interest
from wheelaudit.model.codes import parse_selectors, parse_severities, parse_severity, severity_of
from wheelaudit.model.report import Report
from wheelaudit.ruleset.load import load_rules
from wheelaudit.ruleset.model import Ruleset
from wheelaudit.model.wheel import Wheel
from wheelaudit.scanner import scan
from wheelaudit.scanner.optional import find_optional_modules
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
          together: bool = False, severity: Mapping[str, str] | None = None,
          baseline: PathLike | Sequence[PathLike] | None = None, release: bool = False) -> Report:
    """Scan one wheel (or several) and evaluate ``rules`` over it.

    ``rules`` is a :class:`Ruleset`, a path to a rules file, or None (built-in checks only:
    integrity, unreadable binaries and linkage). ``select``/``ignore``/``fail_on`` default to the
    ruleset's own settings; ``severity`` (``{"WA502": "error"}``, codes or families) overrides
    codes' severities on top of the ruleset's ``severity``. A code or family that does not exist
    raises :class:`wheelaudit.model.codes.CodeError` (a ValueError) before anything is read. Returns a :class:`~wheelaudit.model.report.Report`; ``report.ok`` tells
    whether it passes.

    With ``together=True`` the wheels are audited as one install (``check --together``, see
    :mod:`wheelaudit.scanner.together`): the report has one entry, for the merged tree.

    ``baseline`` (``check --baseline``): the last release's wheels (paths, or folders of wheels);
    each wheel is compared with the baseline wheel of its platform and Python tags (WA801-WA804).
    ``release=True`` (``check --release``): the wheels are one release (WA811-WA813, reported
    on an entry of their own, the release). See :func:`audit_wheels`.
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
        from wheelaudit.scanner.together import scan_together

        wheels: list[Wheel] = [scan_together(paths, strings=strings, interest=interest, jobs=jobs, budget=budget)]
    else:
        wheels = [scan(p, strings=strings, interest=interest, jobs=jobs, budget=budget) for p in paths]
    old = None
    if baseline is not None:
        from wheelaudit.archive import expand_inputs
        from wheelaudit.scanner.baseline import scan_abi

        bpaths = [baseline] if isinstance(baseline, (str, os.PathLike)) else list(baseline)
        old = [scan_abi(p, jobs=jobs) for p in expand_inputs(bpaths)]
    report = audit_wheels(wheels, ruleset, select=select, ignore=ignore, fail_on=fail_on, today=today,
                          severity=severity, baseline=old, release=release)
    report.notes += list(budget.notes.values())  # (what the budget cut, said once)
    return report


def audit_wheels(wheels: Sequence[Wheel], ruleset: Ruleset | None, *, select: Iterable[str] | None = None,
                 ignore: Iterable[str] | None = None, fail_on: FailOn | None = None,
                 today: _dt.date | None = None, severity: Mapping[str, str] | None = None,
                 baseline: Sequence[Wheel] | None = None, release: bool = False) -> Report:
    """Evaluate ``ruleset`` over already scanned wheels (scan once, audit many times).

    ``baseline``: the last release's wheels, scanned (:func:`wheelaudit.scanner.baseline.scan_abi`
    reads just what the comparison needs): each wheel gets the WA801-WA803 findings against the
    baseline wheel of its platform and Python tags, and each baseline wheel that no wheel pairs
    with is an entry of the report with its WA804. ``release``: the wheels are one release, and
    an entry for the release as a whole (named after their common folder) carries WA811-WA813."""
    sel = parse_selectors(select) if select is not None else (tuple(ruleset.select) if ruleset is not None and ruleset.select else None)
    ign = parse_selectors(ignore) if ignore is not None else (tuple(ruleset.ignore) if ruleset is not None and ruleset.ignore else None)
    if fail_on is not None:
        fail_on = parse_severity(fail_on)
    gate = fail_on or (ruleset.fail_on if ruleset is not None and ruleset.fail_on else "error")
    overrides = {**(ruleset.severity if ruleset is not None else {}), **parse_severities(severity)}
    results, libraries = [], []
    against: dict[int, list] = {}  # id(wheel) -> its findings against the baseline
    unmatched: list[Wheel] = []
    if baseline is not None:
        from wheelaudit.checks.release.baseline import compare, pair_wheels

        pairs, unmatched = pair_wheels(wheels, baseline)
        policy = _abi_policy(ruleset)
        for new, old in pairs:
            against[id(new)] = compare(old, new, policy)
    # the waivers of the release checks apply where their findings are: WA804 on a baseline
    # wheel's entry, WA811-WA813 on the release's; elsewhere they are not "unused"
    per_wheel, on_release, on_baseline = _split_waivers(ruleset, baseline is not None, release)
    for w in wheels:
        ctx = Context(w, per_wheel)  # one evaluation: the findings and the report's library facts
        extra = against.get(id(w), ())
        findings = evaluate(w, per_wheel, today=today, context=ctx, extra=extra)
        if w.optional_modules is None:
            # a load error of an extension module the package can do without is a warning: which
            # modules those are is read from the wheel's sources, only when such an error is found
            named = optional_candidates(w, findings)
            w.optional_modules = find_optional_modules(w, named) if named else {}
            if w.optional_modules:
                findings = evaluate(w, per_wheel, today=today, context=ctx, extra=extra)
        results.append((w, findings))
        libraries.append(describe_libraries(w, per_wheel, context=ctx))
    for old in unmatched:
        from wheelaudit.checks.waivers import apply_waivers
        from wheelaudit.checks.release.baseline import missing_counterpart

        results.append((old, apply_waivers([missing_counterpart(old)], on_baseline, today, old.traits)))
        libraries.append([])
    if release:
        from wheelaudit.checks.waivers import apply_waivers

        whole = _release_entry(wheels)
        results.append((whole, apply_waivers(_release_findings(wheels, ruleset), on_release, today, whole.traits)))
        libraries.append([])
    if overrides:
        for _, findings in results:
            for f in findings:
                if any(f.code.startswith(sel) for sel in overrides):
                    f.severity_override = severity_of(f.code, overrides)
    return Report.build(results, rules_path=str(ruleset.path) if ruleset is not None and ruleset.path else None,
                        rules_name=ruleset.name if ruleset is not None else None,
                        select=None if sel is None else list(sel), ignore=None if ign is None else list(ign),
                        fail_on=gate, ruleset=ruleset,
                        libraries=libraries)



def _abi_policy(ruleset: Ruleset | None):
    from wheelaudit.checks.release.baseline import AbiPolicy

    abi = ruleset.abi if ruleset is not None else None
    return AbiPolicy() if abi is None else AbiPolicy(abi.policy, tuple(abi.public))


def _split_waivers(ruleset: Ruleset | None, baseline: bool, release: bool):
    """The ruleset each wheel is evaluated with (without the waivers of release checks that do
    not report on a wheel), and the waivers of the release's entry and of a baseline wheel's."""
    if ruleset is None:
        return None, [], []
    import dataclasses

    def release_code(code: str) -> bool:
        return code.startswith("WA81")

    def wheel_code(code: str) -> bool:
        if release_code(code) or code == "WA804":
            return False
        return baseline or not code.startswith("WA80")

    per_wheel = ruleset
    if any(not wheel_code(w.code) for w in ruleset.waivers):
        per_wheel = dataclasses.replace(ruleset, waivers=[w for w in ruleset.waivers if wheel_code(w.code)])
    on_release = [w for w in ruleset.waivers if release_code(w.code)] if release else []
    on_baseline = [w for w in ruleset.waivers if w.code == "WA804"] if baseline else []
    return per_wheel, on_release, on_baseline


def _release_entry(wheels: Sequence[Wheel]) -> Wheel:
    """The release as a whole, for the report: named after the wheels' common folder, with the
    union of their tags."""
    from pathlib import Path

    from wheelaudit.platforms.traits import traits_from_tags

    folders = [str(w.path.parent) for w in wheels]
    common = Path(os.path.commonpath(folders)) if folders else Path("release")
    tags = sorted({t for w in wheels for t in w.tags}, key=str)
    first = wheels[0] if wheels else None
    name, version = (first.name, first.version) if first is not None else ("", "")
    return Wheel(path=common, name=name, version=version, tags=tags,
                 traits=traits_from_tags(tags, version, name=name),
                 files=[], libraries=[])


def _release_findings(wheels: Sequence[Wheel], ruleset: Ruleset | None) -> list:
    from wheelaudit.checks.release.cohort import release_findings

    rel = ruleset.release if ruleset is not None else None
    only = list(rel.only) if rel is not None else []
    comps = [(c.owner, c.when) for c in (ruleset.components if ruleset is not None else [])
             if c.owner is not None and c.when is not None]

    def declared(path: str) -> list:
        return ([cond.holds for glob, cond in only if glob.match(path)]
                + [when.holds for owner, when in comps if owner.match(path)])

    return release_findings(wheels, rel.platforms if rel is not None else [], declared)
