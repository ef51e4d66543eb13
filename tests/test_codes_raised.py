"""Every code of the registry is raised by some fixture: the golden reports of tests/golden/ (kept
true by tests/test_golden.py, one per fixture scenario and explicit case) hold at least one finding
of each code, but for the few listed below.
"""
from __future__ import annotations

import json
from pathlib import Path

from wheelaudit.model.codes import CODES

GOLDEN = Path(__file__).resolve().parent / "golden"

#: Codes no fixture raises yet. The list can only shrink: a code raised by a fixture must leave it.
NOT_YET_RAISED_BY_A_FIXTURE = {
    # a vendored msvcp140.dll older than the MSVC toolset (PE linker version) that linked its
    # importer: lld-link always writes linker version 14.0 and no msvcp140.dll is older than 14.0,
    # so it needs binaries linked by a newer MSVC link.exe (tests/test_windows_linkage.py checks
    # it on reader facts)
    "WA507",
}


def raised_by_golden_reports() -> dict[str, list[str]]:
    """Code -> the golden files (``family/file``) that hold one of its findings."""
    raised: dict[str, list[str]] = {}
    for path in sorted(GOLDEN.rglob("*.json")):
        report = json.loads(path.read_text())
        for code in sorted({f["code"] for w in report["wheels"] for f in w["findings"]}):
            raised.setdefault(code, []).append(path.relative_to(GOLDEN).as_posix())
    return raised


def test_every_code_is_raised_by_some_fixture() -> None:
    raised = raised_by_golden_reports()
    assert len(raised) > 10, "no golden reports found: run tests/test_golden.py with UPDATE_GOLDEN=1"
    assert set(raised) <= set(CODES), f"codes outside the registry: {sorted(set(raised) - set(CODES))}"
    missing = set(CODES) - set(raised)
    assert missing == NOT_YET_RAISED_BY_A_FIXTURE, (
        f"raised by no fixture, and not listed: {sorted(missing - NOT_YET_RAISED_BY_A_FIXTURE)}; "
        f"raised now, remove from the list: {sorted(NOT_YET_RAISED_BY_A_FIXTURE - missing)}")
