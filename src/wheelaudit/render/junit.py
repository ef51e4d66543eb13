"""``--format junit``: JUnit XML, for CI systems that show test reports.

One ``<testsuite>`` per wheel and one ``<testcase>`` per wheel × rule, named as the pytest plugin
names its items: ``names`` ([libraries]), ``component:<name>``, ``file:<name>``,
``binary:<name>``, ``linkage``, ``integrity`` (RECORD, unreadable binaries) and ``waivers``. The
rules come from the report's ruleset, so a rule that found nothing is a passing testcase, and one
whose ``when`` does not hold for the wheel is skipped; without a ruleset they come from the
findings. A testcase fails (one ``<failure>``, ``type`` = the code or codes, the messages in its
text) when it has a finding at or above ``--fail-on``; findings below it and waived findings are
reported in ``<system-out>`` of a passing testcase.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, TextIO

from wheelaudit.model.finding import SEVERITY_RANK, Finding
from wheelaudit.model.messages import more, shorten
from wheelaudit.model.report import Report, WheelReport
from wheelaudit.render.escape import safe, visible

#: the failure's ``message`` attribute is cut here (the full text is the element's body)
MESSAGE_LIMIT = 400

#: rule ids that exist whatever the ruleset: the scan's own checks and linkage
BUILTIN_RULES = ("integrity", "linkage", "abi")


def _ruleset(report: Report) -> Any:
    """The ruleset behind ``report``: its ``ruleset`` attribute, else reloaded from ``rules_path``."""
    rs = getattr(report, "ruleset", None)
    if rs is not None or not report.rules_path:
        return rs
    try:
        from pathlib import Path

        path = Path(report.rules_path)
        if path.name == "pyproject.toml":
            from wheelaudit.ruleset.config import rules_from_pyproject

            return rules_from_pyproject(path)
        from wheelaudit.ruleset.load import load_rules

        return load_rules(path)
    except Exception:  # noqa: BLE001 - without the ruleset the rules come from the findings
        return None


def rule_ids(ruleset: Any, wr: WheelReport) -> tuple[list[str], dict[str, str]]:
    """The testcases of one wheel, in rules-file order, and {rule id: why it is skipped}."""
    ids: list[str] = []
    skipped: dict[str, str] = {}
    traits = wr.wheel.traits

    def add(rid: str, when: Any = None) -> None:
        ids.append(rid)
        if when is not None and not when.holds(traits):
            skipped[rid] = f"does not apply to this wheel (when: {when.describe()})"

    if ruleset is not None:
        if ruleset.libraries is not None:
            add("names", ruleset.libraries.when)
        for c in ruleset.components:
            add(f"component:{c.name}", c.when)
        for fr in ruleset.files:
            add(f"file:{fr.name}", fr.when)
        for br in ruleset.binaries:
            add(f"binary:{br.name}", br.when)
    ids += BUILTIN_RULES
    if ruleset is not None and ruleset.waivers:
        ids.append("waivers")
    for f in wr.findings:
        ids.append(f.rule_id)
    ids = list(dict.fromkeys(ids))
    for rid in ids:  # a rule that produced a finding ran, whatever its condition says
        if any(f.rule_id == rid for f in wr.findings):
            skipped.pop(rid, None)
    return ids, skipped


_XML_BAD = {c: None for c in range(0x20) if c not in (0x9, 0xA, 0xD)}


def _clean(text: str) -> str:
    """Drop the characters XML 1.0 cannot carry (control characters from a binary's strings)."""
    return text.translate(_XML_BAD)


def _text(findings: list[Finding]) -> str:
    lines = []
    for f in map(safe, findings):
        lines.append(f"{f.code} {f.severity}" + (f" [{f.subject}]" if f.subject else "") + f": {f.message}")
        for p in f.paths[:8]:
            lines.append(f"    at {p}")
        if len(f.paths) > 8:
            lines.append("    …" + more(len(f.paths) - 8, "paths"))
        if f.waived:
            lines.append(f"    waived: {f.waived_by}")
    return _clean("\n".join(lines))


def junit_tree(report: Report) -> ET.Element:
    ruleset = _ruleset(report)
    threshold = SEVERITY_RANK[report.fail_on]
    root = ET.Element("testsuites", name="wheelaudit")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for wr in report.wheels:
        w = wr.wheel
        stem = w.path.name[:-4] if w.path.name.endswith(".whl") else w.path.name
        suite = ET.SubElement(root, "testsuite", name=w.path.name)
        props = ET.SubElement(suite, "properties")
        for k, v in (("wheel", str(w.path)), ("name", w.name), ("version", w.version), ("tags", ",".join(map(str, w.tags))),
                     ("rules", report.rules_path or ""), ("fail-on", report.fail_on)):
            ET.SubElement(props, "property", name=k, value=visible(v))
        ids, skipped = rule_ids(ruleset, wr)
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        for rid in ids:
            fs = [f for f in wr.findings if f.rule_id == rid]
            case = ET.SubElement(suite, "testcase", classname=stem, name=rid)
            counts["tests"] += 1
            failing = [f for f in fs if not f.waived and SEVERITY_RANK[f.severity] >= threshold]
            other = [f for f in fs if f not in failing]
            if failing:
                codes = list(dict.fromkeys(f.code for f in failing))
                first = safe(failing[0])
                message = f"{first.code} {first.message}"
                if len(failing) > 1:
                    message = f"{len(failing)} findings ({', '.join(codes)}); first: {message}"
                message = shorten(message, MESSAGE_LIMIT)
                fail = ET.SubElement(case, "failure", message=_clean(message), type=",".join(codes))
                fail.text = _text(failing)
                counts["failures"] += 1
            elif rid in skipped and not fs:
                ET.SubElement(case, "skipped", message=skipped[rid])
                counts["skipped"] += 1
            if other:
                ET.SubElement(case, "system-out").text = _text(other)
        suite.set("tests", str(counts["tests"]))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", "0")
        suite.set("skipped", str(counts["skipped"]))
        for k in totals:
            totals[k] += counts[k]
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    root.set("skipped", str(totals["skipped"]))
    return root


def render_report(report: Report, out: TextIO, color: bool = False) -> None:
    root = junit_tree(report)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="utf-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
