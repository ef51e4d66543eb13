"""``--format sarif``: SARIF 2.1.0 (OASIS), for code-scanning dashboards.

One run. ``tool.driver.rules`` lists every finding code of SPEC §4 (whether or not it fired) with
its title, severity and a help URI into the README's code table. Each finding is a result whose
locations are the paths inside the wheel (``artifactLocation.uri``), with the wheel file named by
``uriBaseId`` and in the result's property bag. A waived finding is kept, with a suppression
(kind ``external``: the waiver lives in the rules file) whose justification is the waiver's
reason, so dashboards show it as accepted rather than lose it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, TextIO
from urllib.parse import quote

from wheelaudit import __version__
from wheelaudit.model.finding import CODES, Finding
from wheelaudit.model.report import Report

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
MAX_LOCATIONS = 20


def sarif_name(code: str) -> str:
    """SARIF's ``reportingDescriptor.name`` (an identifier): the registry's name in PascalCase."""
    return "".join(part.capitalize() for part in CODES[code].name.split("-"))


def _uri(path: str) -> str:
    """A path inside the wheel as a relative URI reference (spaces, ``%``, ``#``, ``?`` escaped)."""
    return quote(path, safe="/:@+~!$&'()*,;=")


def rule_descriptors() -> list[dict[str, Any]]:
    out = []
    for code, c in CODES.items():
        out.append({
            "id": code,
            "name": sarif_name(code),
            "shortDescription": {"text": c.summary},
            "fullDescription": {"text": f"{code} ({c.severity}): {c.summary}."},
            # (no helpUri: the reference ships with the tool, docs/codes.md#<code>)
            "help": {"text": f"{c.summary}. See {c.code} in wheelaudit's docs/codes.md for what the code means "
                             "and how to fix or waive it."},
            "defaultConfiguration": {"level": c.severity},
            "properties": {"tags": ["wheel", "native", code[:3]]},
        })
    return out


def _fingerprint(wheel_name: str, f: Finding) -> str:
    """Stable across builds of the same release: code, subject and paths, not the message."""
    h = hashlib.sha256("\0".join([wheel_name, f.code, f.subject, *sorted(f.paths)]).encode())
    return h.hexdigest()[:32]


def result(f: Finding, wheel_path: str, wheel_name: str, dist: str, rule_index: dict[str, int]) -> dict[str, Any]:
    text = f.message
    if f.symbols and not any(s in f.message for s in f.symbols[:1]):
        text += " Symbols: " + ", ".join(f.symbols[:5]) + (f" (+{len(f.symbols) - 5} more)" if len(f.symbols) > 5 else "")
    paths = f.paths or []
    if paths:
        locations = [{
            "physicalLocation": {"artifactLocation": {"uri": _uri(p), "uriBaseId": wheel_name}},
            "message": {"text": f"{p} in {wheel_name}"},
        } for p in paths[:MAX_LOCATIONS]]
    else:  # about the wheel as a whole (a missing component, a waiver): the wheel file itself
        locations = [{"physicalLocation": {"artifactLocation": {"uri": _uri(wheel_name)}},
                      "message": {"text": wheel_name}}]
    r: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": rule_index[f.code],
        "level": f.severity,
        "kind": "fail",
        "message": {"text": text},
        "locations": locations,
        "partialFingerprints": {"wheelaudit/v1": _fingerprint(dist, f)},
        "properties": {
            "wheel": wheel_path,
            "subject": f.subject,
            "rule": f.rule,
            "paths": list(paths),
            "symbols": list(f.symbols),
        },
    }
    if f.waived:
        r["suppressions"] = [{"kind": "external", "status": "accepted", "justification": f.waived_by or ""}]
    return r


def sarif_log(report: Report) -> dict[str, Any]:
    """The SARIF log object for ``report``."""
    rules = rule_descriptors()
    rule_index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    artifacts: list[dict[str, Any]] = []
    seen_wheels: set[str] = set()
    for wr in report.wheels:
        w = wr.wheel
        wheel_name = w.path.name
        dist = f"{w.name}-{w.version}"
        if wheel_name not in seen_wheels:
            seen_wheels.add(wheel_name)
            artifacts.append({"location": {"uri": _uri(wheel_name)}, "roles": ["analysisTarget"],
                              "properties": {"path": str(w.path), "name": w.name, "version": w.version,
                                             "tags": list(w.tags)}})
        for f in wr.findings:
            results.append(result(f, str(w.path), wheel_name, dist, rule_index))
    s = report.summary()
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "wheelaudit",
            "version": __version__,
            "semanticVersion": __version__,
            "rules": rules,
        }},
        "invocations": [{"executionSuccessful": True, "exitCode": report.exit_code}],
        "artifacts": artifacts,
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {
            "rules": {"path": report.rules_path, "name": report.rules_name},
            "failOn": report.fail_on,
            "summary": s,
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render_report(report: Report, out: TextIO, color: bool = False) -> None:
    json.dump(sarif_log(report), out, indent=2)
    out.write("\n")
