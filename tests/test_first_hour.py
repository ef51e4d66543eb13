"""A newcomer's first hour with the installed ``wheelaudit`` command: the shipped rulesets by name,
``explain``, hints that reach CI, a reader that stops early, the messages and the flags a user
of ruff or pytest reaches for. Each runs the command in a subprocess, as a user would."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WHEELAUDIT = shutil.which("wheelaudit", path=str(Path(sys.executable).parent)) or shutil.which("wheelaudit")


def run(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    assert WHEELAUDIT, "the wheelaudit command is not installed beside this Python"
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CI")}
    return subprocess.run([WHEELAUDIT, *args], capture_output=True, text=True, env={**full_env, **(env or {})},
                          cwd=cwd, timeout=120)


@pytest.fixture(scope="module")
def fused(fixture_wheels) -> str:
    """The MLX delegate linked into the Python extension: WA203 and WA401 under the ExecuTorch rules."""
    return str(fixture_wheels["macos_fused"])


@pytest.fixture(scope="module")
def clean(fixture_wheels) -> str:
    return str(fixture_wheels["macos_clean"])


# ------------------------------------------------------------------ shipped rulesets, explain

def test_a_shipped_ruleset_by_name_is_the_file_of_rules(fused, tmp_path):
    by_name = run("check", fused, "--rules", "executorch", "--format", "json", cwd=tmp_path)
    by_path = run("check", fused, "--rules", str(ROOT / "rules" / "executorch.toml"), "--format", "json")
    assert by_name.returncode == by_path.returncode == 1, by_name.stderr
    codes = lambda p: [f["code"] for w in json.loads(p.stdout)["wheels"] for f in w["findings"]]  # noqa: E731
    assert codes(by_name) == codes(by_path) and "WA401" in codes(by_name)
    # a file of that name in the working directory wins over the shipped ruleset
    (tmp_path / "executorch").write_text("version = 1\n", encoding="utf-8")
    assert run("check", fused, "--rules", "executorch", cwd=tmp_path).returncode == 0
    # an unknown name says which names there are
    p = run("check", fused, "--rules", "executorc", cwd=tmp_path)
    assert p.returncode == 2 and "executorch, mlx, runtimes" in p.stderr


def test_explain_a_code_from_the_registry():
    p = run("explain", "WA501")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("WA501 unresolved-dependency (error by default")
    for label in ("What it means:", "Why it matters:", "How to fix it:", "Example:"):
        assert label in p.stdout
    # a family explains each of its codes; no code lists them all
    assert run("explain", "WA20").stdout.count("How to fix it:") == 6
    listing = run("explain").stdout.splitlines()
    assert len(listing) >= 39 and listing[0].startswith("WA001  unreadable-binary")
    bad = run("explain", "WA5O1")
    assert bad.returncode == 2 and "did you mean WA501?" in bad.stderr
    # a refused selector names the command that lists the codes, not a page a pip user lacks
    assert "wheelaudit explain" in run("check", "x.whl", "--select", "WA9").stderr


# ------------------------------------------------------------------ hints reach CI

def test_hints_in_annotations_job_summary_and_sarif(fused, tmp_path):
    p = run("check", fused, "--rules", "executorch", "--format", "github",
            "--report", f"markdown={tmp_path / 'summary.md'}", "--report", f"sarif={tmp_path / 'log.sarif'}")
    assert p.returncode == 1, p.stderr
    wa401 = next(line for line in p.stdout.splitlines() if line.startswith("::error") and "title=WA401" in line)
    assert wa401.endswith("%0Ahint: remove the component from this binary and link it from its owner instead")
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "| Message | Hint |" in summary and "link it from its owner instead |" in summary
    rules = json.loads((tmp_path / "log.sarif").read_text(encoding="utf-8"))["runs"][0]["tool"]["driver"]["rules"]
    help_ = next(r["help"] for r in rules if r["id"] == "WA401")
    assert "Why it matters:" in help_["text"] and "wheelaudit explain WA401" in help_["text"]
    assert "docs/codes.md" not in help_["text"] + help_["markdown"]


# ------------------------------------------------------------------ a reader that stops early

def _reader_stops(*args: str) -> tuple[int, bytes]:
    proc = subprocess.Popen([WHEELAUDIT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader went away before anything was written (`| head -0`)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


@pytest.mark.parametrize("command", ["inspect", "owners", "dups", "diff", "schema", "explain"])
def test_a_command_without_a_verdict_ends_quietly_when_its_reader_stops(command, clean, fused):
    args = {"inspect": [clean], "owners": [clean, "executorch::*"], "dups": [clean], "diff": [clean, fused],
            "schema": ["rules"], "explain": ["WA5"]}[command]
    code, err = _reader_stops(command, *args)
    assert (code, err) == (0, b"")


def test_owners_keeps_its_verdict_and_check_its_message_when_the_reader_stops(clean):
    assert _reader_stops("owners", clean, "no::such::*") == (1, b"")
    code, err = _reader_stops("check", clean, "--rules", "executorch")
    assert code == 2 and b"cannot write the report to standard output: Broken pipe" in err
