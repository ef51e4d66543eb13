"""``--format sarif``: SARIF 2.1.0 (OASIS), shaped for GitHub code scanning.

- **One run per distribution and platform tag** (the wheels of one distribution built for one
  platform, whatever their Python tags, share a run), with ``automationDetails.id``
  ``wheelaudit/<distribution>/<platform tag>/``: code scanning keeps one analysis per id, so the
  uploads of a build matrix (one job per platform) never supersede each other.
- **The primary location is a file of the repository**: the rules file at the line of the rule
  that produced the finding (``Ruleset.rule``); for a built-in check, the rules file at its first
  line (code scanning shows only results with a line); with no rules at all, the project's
  ``pyproject.toml`` likewise (else the wheel file, no line). Paths are relative to the working
  directory (``%SRCROOT%``, the checkout in CI, also the invocation's ``workingDirectory``); a file
  outside it is an absolute ``file:`` URI, which code scanning cannot place: said on standard
  error. The wheel and its members go in the message text and in ``relatedLocations``.
- **partialFingerprints** are our own (``wheelaudit/v1``): code, distribution, platform tag,
  subject and the finding's first member, never the version (a ``NAME-VERSION.dist-info/``
  member counts without its version), so a finding stays the same alert from one release to the
  next; a second finding of a wheel with the same of these adds its rank. Results of one run
  with the same fingerprint (the same finding in the cp311 and cp312 wheels) are one result that
  names every wheel.
- ``tool.driver.rules`` lists every code of the registry with its ``help`` (text and Markdown);
  there is no ``helpUri`` while the project has no public address.
- A waived finding is kept with a suppression (kind ``external``: the waiver lives in the rules
  file), justification = the waiver's reason.
- GitHub's limits: at most :data:`MAX_RESULTS` results a run (errors kept first) and
  :data:`MAX_RELATED` related locations a result; what is cut is counted in the run's
  ``properties.truncated`` and said on standard error, as is a log of more than :data:`MAX_RUNS`
  runs (GitHub refuses it: check fewer platforms at once).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from wheelaudit import __version__
from wheelaudit.model.finding import CODES, SEVERITY_RANK, Finding
from wheelaudit.model.messages import examples, more
from wheelaudit.model.report import Report, WheelReport
from wheelaudit.render.text import wheel_label
from wheelaudit.render.escape import safe, visible

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

#: GitHub code scanning's hard limits (docs.github.com, "SARIF results exceed limit")
MAX_RUNS = 20
MAX_RESULTS = 25_000
MAX_RELATED = 1_000

#: the base of repository paths: the working directory, where CI runs the check in the checkout
SRCROOT = "%SRCROOT%"
FINGERPRINT = "wheelaudit/v1"


def sarif_name(code: str) -> str:
    """SARIF's ``reportingDescriptor.name`` (an identifier): the registry's name in PascalCase."""
    return "".join(part.capitalize() for part in CODES[code].name.split("-"))


_URI_SAFE = "/:@+~!$&'()*,;="
_NEEDS_QUOTING = re.compile(r"[^A-Za-z0-9_.~\-/:@+!$&'()*,;=]")


def _uri(path: str) -> str:
    """A path as a relative URI reference (spaces, ``%``, ``#``, ``?`` escaped)."""
    return quote(path, safe=_URI_SAFE) if _NEEDS_QUOTING.search(path) else path


def rule_descriptors() -> list[dict[str, Any]]:
    """Every code of the registry as a SARIF rule, its ``help`` what ``wheelaudit explain CODE``
    says (no ``helpUri``: the explanation ships with the tool)."""
    from wheelaudit.model.codes import explain

    out = []
    for code, c in CODES.items():
        e = explain(code)
        parts = [("Why it matters", e.why), ("Fix", c.fix), ("Example", e.example)]
        out.append({
            "id": code,
            "name": sarif_name(code),
            "shortDescription": {"text": c.summary},
            "fullDescription": {"text": f"{code} ({c.severity}): {c.summary}."},
            "help": {
                "text": f"{c.summary}." + "".join(f" {label}: {words}." for label, words in parts if words)
                        + f" `wheelaudit explain {code}` says the same; waive a known case with a [[waive]] "
                        "table in the rules file.",
                "markdown": f"**{code}** ({c.severity}): {c.summary}."
                            + "".join(f"\n\n**{label}:** {words}." for label, words in parts if words)
                            + f"\n\n`wheelaudit explain {code}` says the same; waive a known case with "
                            f"`[[waive]] code = \"{code}\"` in the rules file.",
            },
            "defaultConfiguration": {"level": c.severity},
            "properties": {"tags": ["wheel", "native", code[:3]]},
        })
    return out


# --------------------------------------------------------------------------------------------
# Where a result is: a file of the repository


class _Places:
    """Repository locations, relative to the working directory when they are under it."""

    def __init__(self, report: Report) -> None:
        self.root = Path.cwd().resolve()
        self.ruleset = report.ruleset
        #: files named by an absolute URI: outside the working directory, code scanning cannot place them
        self.outside: set[str] = set()
        self.rules_file = self._file(report.rules_path)
        self.fallback: dict[str, Any] | None = None
        if self.rules_file is None:
            from wheelaudit.ruleset.config import find_pyproject

            self.fallback = self._file(find_pyproject(self.root))

    def _file(self, path: str | Path | None) -> dict[str, Any] | None:
        """An ``artifactLocation`` for a file: under the working directory, relative to
        ``%SRCROOT%``; elsewhere, its absolute ``file:`` URI."""
        if not path:
            return None
        p = Path(path)
        try:
            p = p.resolve()
            rel = p.relative_to(self.root)
        except (OSError, ValueError):
            self.outside.add(str(p))
            return {"uri": p.absolute().as_uri()}
        return {"uri": _uri(rel.as_posix()), "uriBaseId": SRCROOT}

    def primary(self, f: Finding, wheel_path: Path) -> dict[str, Any]:
        """The location a finding is shown at: its rule's line in the rules file; the rules file
        (or, with no rules, the project's pyproject.toml) at its first line, code scanning showing
        only results with a line; else the wheel file."""
        rule = self.ruleset.rule(f.rule, f.subject) if self.ruleset is not None and f.rule else None
        where = self._file(getattr(rule, "source", None)) if rule is not None else None
        line = (getattr(rule, "line", None) or 1) if where is not None else None
        if where is None and (self.rules_file or self.fallback):
            where, line = self.rules_file or self.fallback, 1
        if where is None:
            where = self._file(wheel_path)
        physical: dict[str, Any] = {"artifactLocation": dict(where or {})}
        if line:
            physical["region"] = {"startLine": line}
        return {"physicalLocation": physical}


# --------------------------------------------------------------------------------------------
# Results


def distribution(wr: WheelReport) -> str:
    """The distribution's name, normalised (PEP 503); ``a+b`` for wheels checked together."""
    from packaging.utils import canonicalize_name

    return "+".join(canonicalize_name(n) for n in wr.wheel.name.split("+")) or "unknown"


def platform_tag(wr: WheelReport) -> str:
    """The wheel's platform tags, dot-joined as in a file name (``any`` for none)."""
    return ".".join(wr.wheel.platform_tags) or "any"


def _member_key(member: str, wr: WheelReport) -> str:
    """A member without the release in its ``NAME-VERSION.dist-info/`` or ``.data/`` folder."""
    version = wr.wheel.version
    if version:
        for suffix in (".dist-info/", ".data/"):
            member = member.replace(f"-{version}{suffix}", suffix)
    return member


def fingerprint(f: Finding, dist: str, platform: str, wr: WheelReport, occurrence: int = 0) -> str:
    """Stable across releases: code, distribution, platform tag, subject and first member; the
    n-th finding of a wheel with the same of these (a hash and a size mismatch of one member)
    adds its ``occurrence``."""
    member = _member_key(f.paths[0], wr) if f.paths else ""
    subject = _member_key(f.subject, wr) if f.subject else ""
    parts = [f.code, dist, platform, subject, member] + ([str(occurrence)] if occurrence else [])
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _message(f: Finding, wheel_name: str) -> str:
    f, wheel_name = safe(f), visible(wheel_name)  # (a message a viewer shows: what comes from the wheel escaped)
    text = f.message
    if f.symbols and not any(s in f.message for s in f.symbols[:1]):
        text += " Symbols: " + examples(f.symbols, 5, sort=False)
    where = f"{wheel_name}: {f.paths[0]}" if f.paths else wheel_name
    if len(f.paths) > 1:
        where += more(len(f.paths) - 1)
    return f"{text} [in {where}]"


def result(f: Finding, wr: WheelReport, places: _Places, dist: str, platform: str,
           rule_index: dict[str, int], occurrence: int = 0) -> dict[str, Any]:
    """One finding as a SARIF result (its related locations not yet cut to GitHub's limit)."""
    wheel_name = wr.wheel.path.name
    related = [{
        "id": i,
        "physicalLocation": {"artifactLocation": {"uri": _uri(p), "uriBaseId": wheel_name}},
        "message": {"text": f"{visible(p)} in {visible(wheel_name)}"},
    } for i, p in enumerate(f.paths)]
    r: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": rule_index[f.code],
        "level": f.severity,
        "kind": "fail",
        "message": {"text": _message(f, wheel_label(wr.wheel, f))},
        "locations": [places.primary(f, wr.wheel.path)],
        "partialFingerprints": {FINGERPRINT: fingerprint(f, dist, platform, wr, occurrence)},
        "properties": {
            "wheel": str(wr.wheel.path),
            "wheels": [str(wr.wheel.path)],
            "subject": f.subject,
            "rule": f.rule,
            "paths": list(f.paths),
            "symbols": list(f.symbols),
            "hint": f.hint or CODES[f.code].fix,
        },
    }
    if related:
        r["relatedLocations"] = related
    if f.waived:
        r["suppressions"] = [{"kind": "external", "status": "accepted", "justification": f.waived_by or ""}]
    return r


def _merge(results: list[tuple[Finding, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One result per fingerprint (the same finding in several wheels of the run): the first
    unwaived one speaks for the others, whose wheels it lists; it stays suppressed only when every
    one of them is waived."""
    same: dict[str, list[tuple[Finding, dict[str, Any]]]] = {}
    for f, r in results:
        same.setdefault(r["partialFingerprints"][FINGERPRINT], []).append((f, r))
    out = []
    for members in same.values():
        _, head = next(((f, r) for f, r in members if not f.waived), members[0])
        wheels = list(dict.fromkeys(w for _, r in members for w in r["properties"]["wheels"]))
        if len(wheels) > 1:
            head["properties"]["wheels"] = wheels
            others = [Path(w).name for w in wheels if w != head["properties"]["wheel"]]
            head["message"]["text"] += f" (also in {', '.join(others)})"
        if not all(f.waived for f, _ in members):
            head.pop("suppressions", None)
        out.append(head)
    return out


def _limit(results: list[dict[str, Any]], max_results: int, max_related: int,
           ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """GitHub's per-run limits: errors before warnings, at most ``max_results`` results and
    ``max_related`` related locations each. Returns the results kept and what was cut."""
    cut: dict[str, int] = {}
    if len(results) > max_results:
        order = sorted(range(len(results)), key=lambda i: -SEVERITY_RANK[results[i]["level"]])
        keep = sorted(order[:max_results])
        cut["results"] = len(results) - max_results
        results = [results[i] for i in keep]
    for r in results:
        related = r.get("relatedLocations", [])
        if len(related) > max_related:
            cut["relatedLocations"] = cut.get("relatedLocations", 0) + len(related) - max_related
            r["relatedLocations"] = related[:max_related]
    return results, cut


# --------------------------------------------------------------------------------------------
# The log


def groups(report: Report) -> dict[tuple[str, str], list[WheelReport]]:
    """The wheels of each run: {(distribution, platform tag): wheel reports}, in report order."""
    out: dict[tuple[str, str], list[WheelReport]] = {}
    for wr in report.wheels:
        out.setdefault((distribution(wr), platform_tag(wr)), []).append(wr)
    return out


def sarif_run(report: Report, dist: str, platform: str, wheels: list[WheelReport], places: _Places,
              rules: list[dict[str, Any]], limits: tuple[int, int] = (MAX_RESULTS, MAX_RELATED),
              ) -> tuple[dict[str, Any], dict[str, int]]:
    """The run of one distribution on one platform, and what GitHub's limits cut from it."""
    rule_index = {r["id"]: i for i, r in enumerate(rules)}
    found = []
    for wr in wheels:
        seen: dict[str, int] = {}
        for f in wr.findings:
            fp = fingerprint(f, dist, platform, wr)
            found.append((f, result(f, wr, places, dist, platform, rule_index, seen.get(fp, 0))))
            seen[fp] = seen.get(fp, 0) + 1
    results, cut = _limit(_merge(found), *limits)
    artifacts = [{"location": {"uri": _uri(wr.wheel.path.name)}, "roles": ["analysisTarget"],
                  "properties": {"path": str(wr.wheel.path), "name": wr.wheel.name,
                                 "version": wr.wheel.version, "tags": [str(t) for t in wr.wheel.tags]}}
                 for wr in wheels]
    part = dataclasses.replace(report, wheels=wheels)
    properties: dict[str, Any] = {
        "distribution": dist,
        "platform": platform,
        "rules": {"path": report.rules_path, "name": report.rules_name},
        "failOn": report.fail_on,
        "summary": part.summary(),
    }
    if cut:
        properties["truncated"] = cut
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "wheelaudit",
            "version": __version__,
            "semanticVersion": __version__,
            "rules": rules,
        }},
        "automationDetails": {"id": f"wheelaudit/{dist}/{platform}/"},
        "originalUriBaseIds": {SRCROOT: {"uri": places.root.as_uri() + "/"}},
        "invocations": [{"executionSuccessful": True, "exitCode": report.exit_code,
                         "workingDirectory": {"uri": places.root.as_uri() + "/"}}],
        "artifacts": artifacts,
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": properties,
    }
    return run, cut


def sarif_log(report: Report, warn: TextIO | None = None, *, max_runs: int = MAX_RUNS,
              max_results: int = MAX_RESULTS, max_related: int = MAX_RELATED) -> dict[str, Any]:
    """The SARIF log object for ``report``, cut to GitHub's limits (the defaults); what is cut,
    or a log GitHub would refuse, is said on ``warn``."""
    rules = rule_descriptors()
    places = _Places(report)
    runs = []
    for (dist, platform), wheels in groups(report).items():
        run, cut = sarif_run(report, dist, platform, wheels, places, rules, (max_results, max_related))
        runs.append(run)
        if warn is not None and cut:
            what = ", ".join(f"{n} {k}" for k, n in cut.items())
            warn.write(f"wheelaudit: SARIF run {run['automationDetails']['id']} cut to GitHub's limits "
                       f"({max_results} results, {max_related} related locations a result): {what} left out\n")
    if warn is not None and places.outside:
        warn.write(f"wheelaudit: SARIF results are located at {', '.join(sorted(places.outside))}, outside the "
                   f"working directory; code scanning places results only at files of the repository: "
                   f"run the check from the checkout\n")
    if warn is not None and len(runs) > max_runs:
        warn.write(f"wheelaudit: the SARIF log has {len(runs)} runs (one per distribution and platform); GitHub "
                   f"code scanning refuses more than {max_runs} in one file: check fewer platforms at a time\n")
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": runs}


def render_report(report: Report, out: TextIO, color: bool = False) -> None:
    json.dump(sarif_log(report, warn=sys.stderr), out, indent=2)
    out.write("\n")
