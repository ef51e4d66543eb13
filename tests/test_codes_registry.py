"""The one registry of finding codes: everything that names codes agrees with it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wheelaudit.model.codes import (
    CODES, CodeError, parse_code, parse_selector, parse_selectors, parse_severities, selected, severity_of,
)

ROOT = Path(__file__).resolve().parent.parent


def test_codes_page_is_generated_from_the_registry():
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_codes_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_readme_links_the_codes_page_and_keeps_no_copy_of_the_table():
    readme = (ROOT / "README.md").read_text()
    assert "docs/codes.md" in readme
    assert "<!-- codes:start -->" not in readme  # one generated table: docs/codes.md


def test_every_code_is_documented_with_an_anchor():
    page = (ROOT / "docs" / "codes.md").read_text()
    for c in CODES.values():
        assert f'<a id="{c.anchor}"></a>{c.code}' in page
        assert c.name and c.name == c.name.lower() and " " not in c.name


def test_names_are_unique():
    names = [c.name for c in CODES.values()]
    assert len(names) == len(set(names))


def test_spec_lists_every_registered_code():
    spec = (ROOT / "SPEC.md").read_text()
    for code in CODES:
        assert f"| {code} |" in spec, code


def test_sarif_rules_come_from_the_registry(fixture_wheels, tmp_path):
    import wheelaudit
    from wheelaudit.render import renderer

    report = wheelaudit.audit(fixture_wheels["macos_clean"])
    out = tmp_path / "r.sarif"
    with out.open("w") as fh:
        renderer("sarif")(report, fh, False)
    rules = json.loads(out.read_text())["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(CODES)


@pytest.mark.parametrize("text,want", [("WA501", "WA501"), ("wa5", "WA5"), (" WA50 ", "WA50"), ("WA2", "WA2")])
def test_selectors(text, want):
    assert parse_selector(text) == want


@pytest.mark.parametrize("text", ["WA", "WA9", "WA999", "WA5O1", "W", "", "WA0000", "WA-1", "E501"])
def test_bad_selectors(text):
    with pytest.raises(CodeError):
        parse_selector(text)


def test_near_miss_suggestion():
    with pytest.raises(CodeError, match="did you mean WA501"):
        parse_selector("WA5O1")


def test_a_string_is_one_selector_list_never_its_characters():
    assert parse_selectors("WA5") == ("WA5",)
    assert parse_selectors("WA2,wa301") == ("WA2", "WA301")
    assert parse_selectors(["WA2", "WA2"]) == ("WA2",)
    assert parse_selectors(None) is None and parse_selectors([]) is None
    with pytest.raises(CodeError):
        parse_selectors("W")


def test_waivers_take_whole_codes():
    assert parse_code("wa201") == "WA201"
    with pytest.raises(CodeError, match="family"):
        parse_code("WA2")


def test_selection_and_severity():
    assert selected("WA501", ("WA5",), None) and not selected("WA501", ("WA5",), ("WA501",))
    over = parse_severities({"WA5": "warning", "WA502": "error"})
    assert severity_of("WA502", over) == "error" and severity_of("WA501", over) == "warning"
    assert severity_of("WA201", over) == CODES["WA201"].severity
    assert parse_severities(["WA502=warning,WA201=warning"]) == {"WA502": "warning", "WA201": "warning"}
    with pytest.raises(CodeError):
        parse_severities({"WA502": "fatal"})


def test_every_code_explains_why_it_matters_with_an_example():
    # `wheelaudit explain CODE` is a pip user's only documentation: a new code comes with its words
    from wheelaudit.model.codes import explain

    bare = [code for code in CODES if not (explain(code).why and explain(code).example)]
    assert bare == []
