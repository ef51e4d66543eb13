"""pytest plugin (entry point ``pytest11``, SPEC §6); inert unless wheels are given.

``pytest --wheelaudit dist/*.whl [--wheelaudit-rules rules/x.toml]`` (or the ini options
``wheelaudit_wheels`` and ``wheelaudit_rules``) collects one test item per wheel and rule; the
wheel's part of the id is its path from the rootdir (its file name when outside it)::

    dist/executorch-1.5.1-cp311-cp311-macosx_14_0_arm64.whl::names
    dist/executorch-1.5.1-cp311-cp311-macosx_14_0_arm64.whl::component::backend_mlx
    dist/executorch-1.5.1-cp311-cp311-macosx_14_0_arm64.whl::file::metallib
    dist/executorch-1.5.1-cp311-cp311-macosx_14_0_arm64.whl::binary::python_extension
    dist/executorch-1.5.1-cp311-cp311-macosx_14_0_arm64.whl::linkage
    dist/executorch-1.5.1-cp311-cp311-macosx_14_0_arm64.whl::integrity
    dist/executorch-1.5.1-cp311-cp311-macosx_14_0_arm64.whl::waivers   (when the rules have waivers)

so ``-k backend_mlx`` selects a rule and ``-m wheelaudit`` all of them. Each wheel is scanned
once and evaluated once per session (lazily, by its first item that runs); an item fails when
a finding of its rule is at or above the fail-on severity, with the CLI's text for it. A rule
whose ``when`` does not hold for the wheel is skipped with the reason.

Fixtures for custom tests: ``wheelaudit_wheels`` (the scanned wheels given to the session),
``wheelaudit_scan`` (``path -> Wheel``, cached) and ``wheelaudit_audit``
(``(path, rules=None) -> Report``).

Nothing of wheelaudit beyond this module is imported until the plugin is asked for (README
"Use in pytest"; docs/plugin-and-api.md).
"""

from __future__ import annotations

import dataclasses
import glob as _glob
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # pragma: no cover - typing only
    from wheelaudit.ruleset.conditions import Condition
    from wheelaudit.model.finding import Finding
    from wheelaudit.model.report import Report
    from wheelaudit.ruleset.model import Ruleset
    from wheelaudit.api import FailOn
    from wheelaudit.model.wheel import Wheel

__all__ = ["WheelauditWheel", "WheelauditItem", "AuditFailed"]

PathLike = str | os.PathLike[str]

_SECTION = "wheelaudit"
_NO_WHEELS = ("no wheels to audit: pass --wheelaudit WHEEL... or set the wheelaudit_wheels ini option")


# --------------------------------------------------------------------------------------------
# Options


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("wheelaudit", "wheelaudit: audit built wheels against release rules")
    group.addoption(
        "--wheelaudit", action="extend", nargs="+", default=None, metavar="WHEEL", dest="wheelaudit",
        help="audit these wheels (.whl files or unpacked trees; globs allowed), one test item per wheel "
             "and rule. Takes every following argument up to the next option: give test paths before it.")
    group.addoption(
        "--wheelaudit-rules", default=None, metavar="FILE", dest="wheelaudit_rules",
        help="rules file (default: the wheelaudit_rules ini option, else [tool.wheelaudit] in the "
             "nearest pyproject.toml from the rootdir, else the built-in checks only)")
    group.addoption(
        "--wheelaudit-select", action="append", default=None, metavar="CODES", dest="wheelaudit_select",
        help="only these finding codes or prefixes (WA2,WA301); default: the rules' own select")
    group.addoption(
        "--wheelaudit-ignore", action="append", default=None, metavar="CODES", dest="wheelaudit_ignore",
        help="never these finding codes or prefixes; default: the rules' own ignore")
    group.addoption(
        "--wheelaudit-together", action="store_true", default=False, dest="wheelaudit_together",
        help="audit the given wheels as one install (like check --together): one item per rule for the set")
    group.addoption(
        "--wheelaudit-fail-on", choices=["error", "warning"], default=None, dest="wheelaudit_fail_on",
        help="lowest severity that fails an item (default: the rules' fail-on, else error)")
    group.addoption(
        "--wheelaudit-baseline", action="extend", nargs="+", default=None, metavar="WHEEL",
        dest="wheelaudit_baseline",
        help="the last release's wheels (globs allowed): each audited wheel is compared with the one of its platform "
             "and Python tags (like check --baseline: a `baseline` item per wheel, WA804 in the `release` item)")
    group.addoption(
        "--wheelaudit-release", action="store_true", default=False, dest="wheelaudit_release",
        help="the given wheels are one release (like check --release): one `release` item for WA811-WA813")
    parser.addini("wheelaudit_baseline", "the last release's wheels: paths or globs relative to the rootdir, one a "
                  "line (--wheelaudit-baseline replaces them)", type="linelist", default=[])
    parser.addini("wheelaudit_wheels", "wheels to audit: paths or globs relative to the rootdir, one a "
                  "line (--wheelaudit replaces them)", type="linelist", default=[])
    parser.addini("wheelaudit_rules", "rules file, relative to the rootdir (--wheelaudit-rules replaces it)",
                  type="string", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "wheelaudit: an audit item collected by wheelaudit (one per wheel and rule)")
    config.stash[_STATE_KEY] = _State(config)


# --------------------------------------------------------------------------------------------
# Session state: what was asked for, the rules, the scans and the reports (each made once)


class _Problem(Exception):
    """A problem with what the user asked for (a usage error at collection)."""


class _State:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._wheel_paths: list[Path] | None = None
        self._rules_loaded = False
        self._ruleset: Ruleset | None = None
        self._gate: tuple[tuple[str, ...] | None, tuple[str, ...] | None, FailOn | None] | None = None
        self._scans: dict[Path, Wheel] = {}
        self._reports: dict[Path, Report] = {}
        self.audited: list[Path] = []
        self._baseline_paths: list[Path] | None = None
        self._baseline: list[Wheel] | None = None

    # -- what was asked for ------------------------------------------------------------------

    @property
    def requested(self) -> bool:
        """Whether wheels were given (option or ini); cheap, imports nothing."""
        return bool(self.config.getoption("wheelaudit", None) or self.config.getini("wheelaudit_wheels"))

    def wheel_paths(self) -> list[Path]:
        """The wheels given, globs expanded; ``[]`` when none were given."""
        if self._wheel_paths is None:
            cli = self.config.getoption("wheelaudit", None)
            if cli:
                base, where = self.config.invocation_params.dir, "--wheelaudit"
                entries = list(cli)
            else:
                base, where = self.config.rootpath, "wheelaudit_wheels"
                entries = list(self.config.getini("wheelaudit_wheels"))
            paths: dict[Path, None] = {}
            for entry in entries:
                for p in _expand(entry, base, where):
                    paths.setdefault(p, None)
            self._wheel_paths = list(paths)
        return self._wheel_paths

    def ruleset(self) -> Ruleset | None:
        """``--wheelaudit-rules``, else the ``wheelaudit_rules`` ini option, else pyproject
        discovery from the rootdir (as the CLI does), else ``None`` (built-in checks only)."""
        if not self._rules_loaded:
            from wheelaudit.ruleset.errors import RulesError
            from wheelaudit.ruleset.load import load_rules

            opt = self.config.getoption("wheelaudit_rules", None)
            ini = self.config.getini("wheelaudit_rules")
            try:
                if opt or ini:
                    base = self.config.invocation_params.dir if opt else self.config.rootpath
                    from wheelaudit.ruleset import shipped

                    path = Path(os.path.expanduser(opt or ini))
                    path = path if path.is_absolute() else base / path
                    if not path.exists():  # (a shipped ruleset by name: executorch, mlx, runtimes)
                        path = shipped.find(opt or ini) or path
                    if not path.is_file():
                        what = "is not a file" if path.exists() else "does not exist"
                        raise _Problem(f"wheelaudit: rules file {path} {what}"
                                       + ("" if opt else " (the wheelaudit_rules ini option)"))
                    self._ruleset = load_rules(path)
                else:
                    from wheelaudit.ruleset.config import find_rules

                    self._ruleset, _where = find_rules(self.config.rootpath)
            except RulesError as exc:
                raise _Problem(f"wheelaudit: invalid rules: {exc}") from None
            except OSError as exc:
                raise _Problem(f"wheelaudit: cannot read the rules: {exc}") from None
            self._rules_loaded = True
        return self._ruleset

    def gate(self) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None, FailOn | None]:
        """``(select, ignore, fail_on)`` from the options; ``None`` defers to the ruleset."""
        if self._gate is None:
            self._gate = (_codes(self.config.getoption("wheelaudit_select", None), "--wheelaudit-select"),
                          _codes(self.config.getoption("wheelaudit_ignore", None), "--wheelaudit-ignore"),
                          self.config.getoption("wheelaudit_fail_on", None))
        return self._gate

    def fail_on(self) -> str:
        rs = self.ruleset()
        return self.gate()[2] or (rs.fail_on if rs is not None and rs.fail_on else "error")

    def baseline_paths(self) -> list[Path]:
        """The baseline wheels given (``--wheelaudit-baseline`` / ``wheelaudit_baseline``), globs
        and folders expanded; ``[]`` when none were given."""
        if self._baseline_paths is None:
            from wheelaudit.archive import expand_inputs

            cli = self.config.getoption("wheelaudit_baseline", None)
            if cli:
                base, where, entries = self.config.invocation_params.dir, "--wheelaudit-baseline", list(cli)
            else:
                base, where = self.config.rootpath, "wheelaudit_baseline"
                entries = list(self.config.getini("wheelaudit_baseline"))
            paths: dict[Path, None] = {}
            for entry in entries:
                for p in expand_inputs(_expand(entry, base, where)):
                    paths.setdefault(p, None)
            self._baseline_paths = list(paths)
        return self._baseline_paths

    def baseline(self) -> list[Wheel]:
        """The baseline wheels, each read once for its ABI (:func:`wheelaudit.scanner.baseline.scan_abi`)."""
        if self._baseline is None:
            from wheelaudit.scanner.baseline import scan_abi

            self._baseline = [scan_abi(p) for p in self.baseline_paths()]
        return self._baseline

    @property
    def release(self) -> bool:
        return bool(self.config.getoption("wheelaudit_release", False))

    # -- scanning and auditing, once each ----------------------------------------------------

    def scan(self, path: PathLike, strings: Iterable[bytes] | None = None) -> Wheel:
        """The scanned wheel at ``path`` (cached per path; rescanned only when more byte strings
        are needed than the cached scan looked for). ``strings`` default to the session rules'."""
        from wheelaudit.scanner import scan

        key = Path(path).resolve()
        if strings is None:
            try:
                rs = self.ruleset()
            except _Problem as exc:
                pytest.fail(str(exc), pytrace=False)
            strings = rs.strings() if rs is not None else []
        wanted = [s for s in strings if s]
        cached = self._scans.get(key)
        if cached is not None and set(wanted) <= set(cached.strings):
            return cached
        if cached is not None:
            wanted = list(dict.fromkeys([*cached.strings, *wanted]))
        wheel = scan(Path(path), strings=wanted)
        self._scans[key] = wheel
        return wheel

    def audit(self, path: PathLike, rules: Ruleset | PathLike | None = None, *,
              select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
              fail_on: FailOn | None = None) -> Report:
        """Evaluate ``rules`` (default: the session's) over the cached scan of ``path``."""
        from wheelaudit.api import audit_wheels
        from wheelaudit.ruleset.load import load_rules
        from wheelaudit.ruleset.model import Ruleset

        if rules is None:
            try:
                ruleset = self.ruleset()
            except _Problem as exc:
                pytest.fail(str(exc), pytrace=False)
            if select is None and ignore is None and fail_on is None:
                select, ignore, fail_on = self.gate()
        elif isinstance(rules, Ruleset):
            ruleset = rules
        else:
            ruleset = load_rules(Path(rules))
        wheel = self.scan(path, ruleset.strings() if ruleset is not None else [])
        old = None
        if rules is None and self.baseline_paths():
            from wheelaudit.checks.release.baseline import pair_wheels

            # (the wheel's own baseline only: the ones of other platforms are the release item's WA804)
            old = [o for _n, o in pair_wheels([wheel], self.baseline())[0]]
        return audit_wheels([_fresh(wheel)], ruleset, select=select, ignore=ignore, fail_on=fail_on, baseline=old)

    def release_report(self) -> Report:
        """The given wheels against the baseline and each other: entries past the wheels' own are
        the baseline wheels without a counterpart (WA804) and the release (WA811-WA813)."""
        from wheelaudit.api import audit_wheels

        try:
            ruleset = self.ruleset()
        except _Problem as exc:
            pytest.fail(str(exc), pytrace=False)
        strings = ruleset.strings() if ruleset is not None else []
        wheels = [_fresh(self.scan(p, strings)) for p in self.wheel_paths()]
        select, ignore, fail_on = self.gate()
        return audit_wheels(wheels, ruleset, select=select, ignore=ignore, fail_on=fail_on,
                            baseline=self.baseline() if self.baseline_paths() else None, release=self.release)

    def session_report(self, path: Path) -> Report:
        """The session's report for one of the given wheels (evaluated once); with
        ``--wheelaudit-together``, ``path`` is the first wheel and the report is the set's."""
        key = path.resolve()
        report = self._reports.get(key)
        if report is None:
            if self.together:
                report = self._reports[key] = self.together_report()
            else:
                report = self._reports[key] = self.audit(path)
            self.audited.append(path)
        return report

    @property
    def together(self) -> bool:
        return bool(self.config.getoption("wheelaudit_together", False))

    def together_report(self) -> Report:
        """All given wheels laid out as one install, evaluated with the session's rules."""
        from wheelaudit.api import audit_wheels
        from wheelaudit.scanner.together import merge_wheels

        try:
            ruleset = self.ruleset()
        except _Problem as exc:
            pytest.fail(str(exc), pytrace=False)
        strings = ruleset.strings() if ruleset is not None else []
        merged = merge_wheels([_fresh(self.scan(p, strings)) for p in self.wheel_paths()])
        select, ignore, fail_on = self.gate()
        return audit_wheels([merged], ruleset, select=select, ignore=ignore, fail_on=fail_on)


_STATE_KEY = pytest.StashKey[_State]()


def _state(config: pytest.Config) -> _State:
    state = config.stash.get(_STATE_KEY, None)
    if state is None:  # configured without our pytest_configure (should not happen)
        state = config.stash[_STATE_KEY] = _State(config)
    return state


def _fresh(wheel: Wheel) -> Wheel:
    """A shallow copy of ``wheel``: a cached scan is evaluated more than once, and an evaluation
    sets what it learns on the wheel (``optional_modules``)."""
    return dataclasses.replace(wheel, defects=list(wheel.defects))


def _expand(entry: str, base: Path, where: str) -> list[Path]:
    text = os.path.expanduser(entry.strip())
    if not text:
        return []
    pattern = text if os.path.isabs(text) else str(base / text)
    if _glob.has_magic(text):
        found = sorted(Path(p) for p in _glob.glob(pattern, recursive=True))
        if not found:
            raise _Problem(f"wheelaudit: {where} {entry}: no wheel matches (relative to {base})")
        return found
    return [Path(pattern)]


def _codes(values: Sequence[str] | None, option: str) -> tuple[str, ...] | None:
    from wheelaudit.model.codes import CodeError, parse_selectors

    try:
        return parse_selectors(values)
    except CodeError as exc:
        raise _Problem(f"wheelaudit: {option}: {exc}") from None


# --------------------------------------------------------------------------------------------
# Collection


@dataclasses.dataclass
class _RulePlan:
    """One item to collect: a rule id (as in ``Finding.rule``) and the conditions it runs under."""

    rule_id: str
    item_name: str
    whens: list[Condition | None]
    source: str | None = None
    line: int | None = None

    def reason_skipped(self, traits: Any, tags: str) -> str | None:
        if not self.whens or any(w is None or w.holds(traits) for w in self.whens):
            return None
        conds = " or ".join(w.describe() for w in self.whens if w is not None)
        return f"when: {conds} does not hold for {tags}"


def _plan(ruleset: Ruleset | None, baseline: bool = False) -> list[_RulePlan]:
    plans: dict[str, _RulePlan] = {}

    def add(rule_id: str, item_name: str, when: Condition | None = None, source: str | None = None,
            line: int | None = None, conditional: bool = True) -> None:
        if rule_id in plans:
            plans[rule_id].whens.append(when)
            return
        plans[rule_id] = _RulePlan(rule_id, item_name, [when] if conditional else [], source, line)

    if ruleset is not None:
        if ruleset.libraries is not None:
            lib = ruleset.libraries
            add("names", "names", lib.when, lib.source, lib.line)
        for c in ruleset.components:
            add(f"component:{c.name}", f"component::{c.name}", c.when, c.source, c.line)
        for f in ruleset.files:
            add(f"file:{f.name}", f"file::{f.name}", f.when, f.source, f.line)
        for b in ruleset.binaries:
            add(f"binary:{b.name}", f"binary::{b.name}", b.when, b.source, b.line)
        for m in ruleset.metadata:
            add(f"metadata:{m.name}", f"metadata::{m.name}", m.when, m.source, m.line)
    link = ruleset.linkage if ruleset is not None else None
    add("linkage", "linkage", None, link.source if link else None, link.line if link else None, conditional=False)
    add("integrity", "integrity", conditional=False)
    add("abi", "abi", conditional=False)  # WA6xx, built in
    if baseline:
        add("baseline", "baseline", conditional=False)  # WA801-WA803 against the wheel's baseline
    if ruleset is not None and ruleset.waivers:
        w = ruleset.waivers[0]
        add("waivers", "waivers", None, w.source, w.line, conditional=False)
    return list(plans.values())


def _route(finding: Finding, known: set[str]) -> str:
    """The item a finding belongs to: its rule's (:attr:`Finding.rule_id`); for a rule collected
    as no item of its own (``limits``, ``consumer``, ``release``), the linkage or waivers item of
    its code's family, else integrity (nothing is ever dropped)."""
    from wheelaudit.model.finding import family_rule

    rule = finding.rule_id
    if rule in known:
        return rule
    family = family_rule(finding.code)
    return family if family in ("linkage", "waivers") and family in known else "integrity"


def _labels(paths: list[Path], rootdir: Path) -> list[str]:
    """Node ids of the wheels: the path from the rootdir (``dist/x.whl``, as pytest's own node ids
    are) for a wheel inside it, else the file name; the full path when two would collide."""
    root = rootdir.resolve()
    labels = []
    for p in paths:
        try:
            labels.append(p.resolve().relative_to(root).as_posix())
        except ValueError:
            labels.append(p.name)
    return [lab if labels.count(lab) == 1 else p.resolve().as_posix() for lab, p in zip(labels, paths, strict=True)]


@pytest.hookimpl(tryfirst=True)  # before -k / -m deselect the items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    state = config.stash.get(_STATE_KEY, None)
    if state is None or not state.requested:
        return
    try:
        paths = state.wheel_paths()
        ruleset = state.ruleset()
        state.gate()
        plans = _plan(ruleset, baseline=bool(state.baseline_paths()) and not state.together)
        whole = bool(state.baseline_paths() or state.release) and not state.together
        labels = _labels(paths, config.rootpath)
        wheels = [(label, path, *_wheel_tags(path)) for label, path in zip(labels, paths, strict=True)]
    except _Problem as exc:
        raise pytest.UsageError(str(exc)) from None
    if not paths:
        raise pytest.UsageError(f"wheelaudit: {_NO_WHEELS}")
    if state.together:
        # one collector for the set; its traits are the union of the wheels' (as --together)
        from wheelaudit.model.traits import WheelTraits

        traits = WheelTraits(
            platforms=tuple(sorted({p for _, _, t, _ in wheels for p in t.platforms})),
            os=frozenset().union(*(t.os for _, _, t, _ in wheels)),
            arch=frozenset().union(*(t.arch for _, _, t, _ in wheels)),
            version="+".join(t.version for _, _, t, _ in wheels),
            pythons=tuple(sorted({p for _, _, t, _ in wheels for p in t.pythons})),
            name="+".join(t.name for _, _, t, _ in wheels),
        )
        label = "+".join(lab for lab, _, _, _ in wheels)
        tags = "; ".join(tg for _, _, _, tg in wheels)
        first = wheels[0][1]
        collector = WheelauditWheel.from_parent(session, name=label, path=first, nodeid=label,
                                                wheel_path=first, traits=traits, tags=tags, plans=plans)
        items.extend(session.genitems(collector))
        return
    for label, path, traits, tags in wheels:
        collector = WheelauditWheel.from_parent(session, name=path.name, path=path, nodeid=label,
                                                wheel_path=path, traits=traits, tags=tags, plans=plans)
        items.extend(session.genitems(collector))
    if whole:
        item = WheelauditReleaseItem.from_parent(session, name="release", nodeid="wheelaudit::release")
        item.add_marker(pytest.mark.wheelaudit)
        items.append(item)


def _wheel_tags(path: Path) -> tuple[Any, str]:
    """The wheel's traits and its tags as text, read from its name / WHEEL file (no scan)."""
    from wheelaudit.platforms.traits import traits_from_tags
    from wheelaudit.archive import NotAWheel, open_wheel

    try:
        with open_wheel(path) as source:
            info = source.info
    except NotAWheel as exc:
        raise _Problem(f"wheelaudit: not a wheel: {exc}") from None
    except OSError as exc:
        raise _Problem(f"wheelaudit: cannot read {path}: {exc}") from None
    tags = ", ".join(str(t) for t in info.tags) or "a wheel without tags"
    return traits_from_tags(info.tags, info.version, name=info.name), tags


class WheelauditWheel(pytest.Collector):
    """One wheel given to the session; collects one :class:`WheelauditItem` per rule."""

    def __init__(self, *, wheel_path: Path, traits: Any, tags: str, plans: list[_RulePlan], **kw: Any) -> None:
        super().__init__(**kw)
        self.wheel_path = wheel_path
        self.traits = traits
        self.tags = tags
        self.plans = plans
        self.known = {p.rule_id for p in plans}

    def collect(self) -> list[pytest.Item]:
        items: list[pytest.Item] = []
        for plan in self.plans:
            item = WheelauditItem.from_parent(self, name=plan.item_name, plan=plan)
            item.add_marker(pytest.mark.wheelaudit)
            reason = plan.reason_skipped(self.traits, self.tags)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
            items.append(item)
        return items


# --------------------------------------------------------------------------------------------
# Running


class AuditFailed(Exception):
    """Raised by an item whose rule has findings at or above fail-on; ``text`` is the CLI's."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class WheelauditItem(pytest.Item):
    """One rule over one wheel. Fails when a selected, non-waived finding of the rule is at or
    above fail-on; lower ones are shown in the wheelaudit summary and the item passes."""

    def __init__(self, *, plan: _RulePlan, **kw: Any) -> None:
        super().__init__(**kw)
        self.plan = plan
        self.rule_id = plan.rule_id

    @property
    def wheel(self) -> WheelauditWheel:
        parent = self.parent
        assert isinstance(parent, WheelauditWheel)
        return parent

    def runtest(self) -> None:
        from wheelaudit.model.finding import SEVERITY_RANK
        from wheelaudit.archive import NotAWheel

        state = _state(self.config)
        try:
            report = state.session_report(self.wheel.wheel_path)
        except NotAWheel as exc:  # the file changed since collection
            raise AuditFailed(f"wheelaudit: not a wheel: {exc}") from None
        wr = report.wheels[0]
        mine = [f for f in wr.findings if _route(f, self.wheel.known) == self.rule_id]
        active = [f for f in mine if not f.waived]
        threshold = SEVERITY_RANK[report.fail_on]
        failing = [f for f in active if SEVERITY_RANK[f.severity] >= threshold]
        passing = [f for f in active if f not in failing]
        waived = [f for f in mine if f.waived]
        notes = []
        if passing:
            notes.append(_render(report, passing))
        for f in waived:
            notes.append(f"{wr.wheel.path.name}: {f.code} waived [{f.subject}]: {f.waived_by}\n    {f.message}")
        if notes:
            self.add_report_section("call", _SECTION, "\n".join(notes))
        if failing:
            raise AuditFailed(_render(report, failing))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | Any:
        if isinstance(excinfo.value, AuditFailed):
            return excinfo.value.text
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[os.PathLike[str] | str, int | None, str]:
        plan = self.plan
        where: os.PathLike[str] | str = self.wheel.wheel_path
        line = None
        if plan.source and plan.source != "<string>" and Path(plan.source).is_file():
            where = Path(plan.source)
            line = plan.line - 1 if plan.line else None
        # the failure header ("component::backend_mlx in x.whl"); never a suffix of the node id,
        # which pytest would take for a Python dotted name and rewrite
        return where, line, f"{self.name} in {self.wheel.name}"


class WheelauditReleaseItem(pytest.Item):
    """The release as a whole (``--wheelaudit-release``, ``--wheelaudit-baseline``): fails on
    the findings of no single wheel at or above fail-on: WA804 (a baseline wheel without a
    counterpart) and WA811-WA813."""

    def runtest(self) -> None:
        import io

        from wheelaudit.model.finding import SEVERITY_RANK
        from wheelaudit.model.report import Report as _Report
        from wheelaudit.model.report import WheelReport
        from wheelaudit.render.text import render_report

        state = _state(self.config)
        report = state.release_report()
        entries = report.wheels[len(state.wheel_paths()):]
        threshold = SEVERITY_RANK[report.fail_on]
        failing = [WheelReport(wr.wheel, [f for f in wr.findings if not f.waived
                                          and SEVERITY_RANK[f.severity] >= threshold]) for wr in entries]
        failing = [wr for wr in failing if wr.findings]
        if failing:
            sub = _Report(failing, report.rules_path, report.rules_name, report.fail_on, report.select, report.ignore)
            out = io.StringIO()
            render_report(sub, out, False)
            raise AuditFailed("\n".join(out.getvalue().rstrip("\n").split("\n")[:-1]))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | Any:
        if isinstance(excinfo.value, AuditFailed):
            return excinfo.value.text
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[os.PathLike[str] | str, int | None, str]:
        return "wheelaudit", None, "the release as a whole"


def _render(report: Report, findings: list[Finding]) -> str:
    """The CLI's text (``wheelaudit check``) for these findings, without its summary line."""
    import io

    from wheelaudit.render.text import render_report
    from wheelaudit.model.report import Report as _Report
    from wheelaudit.model.report import WheelReport

    sub = _Report([WheelReport(report.wheels[0].wheel, findings)], report.rules_path, report.rules_name,
                  report.fail_on, report.select, report.ignore)
    out = io.StringIO()
    render_report(sub, out, False)
    lines = out.getvalue().rstrip("\n").split("\n")
    return "\n".join(lines[:-1])  # the last line is the run's summary


# --------------------------------------------------------------------------------------------
# Reporting


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_STATE_KEY, None)
    if state is None or not state.requested:
        return
    notes = []
    for rep in terminalreporter.stats.get("passed", []):
        for title, text in getattr(rep, "sections", []):
            if title.endswith(f" {_SECTION} call") or title == f"Captured {_SECTION} call":
                notes.append(text)
    if notes:
        terminalreporter.write_sep("-", "wheelaudit: findings below fail-on, and waived ones")
        for text in notes:
            terminalreporter.write_line(text)
    if state.audited:
        rs = state._ruleset
        rules = f"rules {rs.path}" if rs is not None and rs.path else (
            "inline rules" if rs is not None else "built-in checks only (no rules file)")
        n = len(state.audited)
        terminalreporter.write_line(
            f"wheelaudit: {n} wheel{'s' if n != 1 else ''} audited ({rules}; fail-on {state.fail_on()})")


# --------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="session")
def wheelaudit_wheels(request: pytest.FixtureRequest) -> list[Wheel]:
    """The wheels given to the session (``--wheelaudit`` / ``wheelaudit_wheels``), scanned once.

    Skips the test when no wheel was given, so that it never passes vacuously.
    """
    state = _state(request.config)
    try:
        paths = state.wheel_paths()
    except _Problem as exc:
        pytest.fail(str(exc), pytrace=False)
    if not paths:
        pytest.skip(_NO_WHEELS)
    return [state.scan(p) for p in paths]


@pytest.fixture(scope="session")
def wheelaudit_scan(request: pytest.FixtureRequest) -> Callable[[PathLike], Wheel]:
    """A factory ``wheelaudit_scan(path) -> Wheel``: scan any wheel or unpacked tree, once per
    path per session (shared with the audit items)."""
    state = _state(request.config)

    def scan(path: PathLike) -> Wheel:
        return state.scan(path)

    return scan


@pytest.fixture(scope="session")
def wheelaudit_audit(request: pytest.FixtureRequest) -> Callable[..., Report]:
    """A factory ``wheelaudit_audit(path, rules=None, *, select=None, ignore=None, fail_on=None)
    -> Report``. ``rules`` is a rules file or a :class:`~wheelaudit.ruleset.model.Ruleset`; ``None``
    means the session's rules (``--wheelaudit-rules``, ``wheelaudit_rules``, pyproject)."""
    state = _state(request.config)

    def audit(path: PathLike, rules: Ruleset | PathLike | None = None, *,
              select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
              fail_on: FailOn | None = None) -> Report:
        return state.audit(path, rules, select=select, ignore=ignore, fail_on=fail_on)

    return audit
