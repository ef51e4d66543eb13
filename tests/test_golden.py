"""Golden reports: the JSON of `wheelaudit check --format json` for every fixture wheel, with the
ExecuTorch rules and with none, checked in under tests/golden/ and compared whole. A change of
any finding, message, hint or severity shows in review as a diff of these files.

Regenerate after an intended change:  UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from wheelaudit.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
RULES = ROOT / "rules" / "executorch.toml"


def _report(capsys, wheel: Path, *args: str) -> dict:
    code = main(["check", str(wheel), "--format", "json", *args])
    out = capsys.readouterr().out
    data = json.loads(out)
    # what varies between machines and runs: where the wheel and the rules are, the version
    data["tool"]["version"] = "*"
    if data["rules"].get("path"):
        data["rules"]["path"] = Path(data["rules"]["path"]).name
    for w in data["wheels"]:
        w["path"] = Path(w["path"]).name
    data["exit"] = code
    return data


@pytest.mark.parametrize("rules", ["executorch", "none"])
def test_golden_reports(capsys, fixture_wheels, rules):
    args = ("--rules", str(RULES)) if rules == "executorch" else ()
    got = {name: _report(capsys, wheel, *args) for name, wheel in sorted(fixture_wheels.items())}
    path = GOLDEN / f"check-{rules}.json"
    text = json.dumps(got, indent=1, sort_keys=True) + "\n"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"{path} is missing: run UPDATE_GOLDEN=1 python -m pytest {__file__}"
    want = json.loads(path.read_text())
    assert sorted(got) == sorted(want), "the fixture scenarios changed"
    for name in sorted(got):
        assert got[name] == want[name], f"{name}: the report differs from {path.name} (UPDATE_GOLDEN=1 after review)"
