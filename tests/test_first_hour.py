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


# ------------------------------------------------------------------ messages that confuse no more

def _pure_wheel(folder: Path, dist: str) -> Path:
    from wheel.wheelfile import WheelFile

    path = folder / f"{dist}-1.0-py3-none-any.whl"
    with WheelFile(path, "w") as wf:
        wf.writestr(f"{dist}/__init__.py", b"")
        wf.writestr(f"{dist}-1.0.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n\n".encode())
        wf.writestr(f"{dist}-1.0.dist-info/WHEEL",
                    b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n\n")
    return path


def test_wheels_together_are_counted_and_named_by_the_wheel_a_finding_is_in(fused, tmp_path):
    others = [_pure_wheel(tmp_path, name) for name in ("alpha", "beta")]
    p = run("check", "--together", fused, *map(str, others), "--rules", "executorch", "--select", "WA401")
    assert p.returncode == 1, p.stderr
    heads = [line for line in p.stdout.splitlines() if " WA401 " in line]
    assert heads and all(line.startswith(f"{Path(fused).name}: WA401 error") for line in heads), heads
    assert "+" not in p.stdout.split(" WA401 ")[0]
    assert p.stdout.splitlines()[-1].startswith("failed: 2 errors, 0 warnings in 3 wheels")
    github = run("check", "--together", fused, *map(str, others), "--rules", "executorch", "--select", "WA401",
                 "--format", "github")
    assert f"::{Path(fused).name}: " in github.stdout and "alpha-1.0" not in github.stdout
    sarif = run("check", "--together", fused, *map(str, others), "--rules", "executorch", "--select", "WA401",
                "--format", "sarif")
    messages = [r["message"]["text"] for run_ in json.loads(sarif.stdout)["runs"] for r in run_["results"]]
    assert messages and all(f"[in {Path(fused).name}: " in m for m in messages), messages


def test_an_empty_folder_is_no_wheels_found(tmp_path):
    (tmp_path / "dist").mkdir()
    p = run("check", str(tmp_path / "dist"))
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"wheelaudit: error: {tmp_path / 'dist'}: no wheels found (the folder is empty)\n"


def test_a_report_to_a_file_still_tells_the_verdict(fused, tmp_path):
    p = run("check", fused, "--rules", "executorch", "--format", "html", "-o", str(tmp_path / "r.html"))
    assert p.returncode == 1 and (tmp_path / "r.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert p.stdout.splitlines()[0].startswith("failed: 4 errors, 0 warnings in 1 wheel")
    assert p.stdout.splitlines()[1] == f"wrote the html report to {tmp_path / 'r.html'}"
    q = run("check", fused, "--rules", "executorch", "--format", "html", "-o", str(tmp_path / "r.html"), "-q")
    assert (q.returncode, q.stdout) == (1, "")


def test_inspect_quiet_keeps_the_table(clean):
    full, quiet = run("inspect", clean).stdout, run("inspect", "-q", clean).stdout
    assert " dep @rpath/libexecutorch.dylib" in full and " dep " not in quiet
    assert quiet.splitlines()[:10] == full.splitlines()[:10]  # (the wheel's line and its table)
    assert len(quiet.splitlines()) < len(full.splitlines()) / 3


def test_a_bad_option_is_told_with_its_command_usage(clean):
    p = run("check", "--bogus", clean)
    assert p.returncode == 2 and p.stderr.startswith("usage: wheelaudit check ")
    assert "unrecognized arguments: --bogus" in p.stderr
    p = run("rules", "validate", "--bogus", "x.toml")
    assert p.returncode == 2 and p.stderr.startswith("usage: wheelaudit rules validate ")


def test_schema_report_is_the_check_report_schema():
    p = run("schema", "report")
    assert p.returncode == 0 and p.stdout == run("schema", "check").stdout
    assert "report" in run("--help").stdout.split("schema", 1)[1].split("\n\n")[0]


# ------------------------------------------------------------------ what users of ruff and pytest reach for

def test_version_short_flag():
    p = run("-V")
    assert p.returncode == 0 and p.stdout.startswith("wheelaudit ") and p.stdout == run("--version").stdout


def test_exit_zero_reports_but_passes(fused, clean):
    p = run("check", fused, "--rules", "executorch", "--exit-zero")
    assert p.returncode == 0 and "WA401 error" in p.stdout and p.stdout.splitlines()[-1].startswith("failed: ")
    # it never hides that the check could not run
    assert run("check", fused, "--rules", "no-such-rules.toml", "--exit-zero").returncode == 2


def test_statistics_counts_the_findings_by_code(fused):
    p = run("check", fused, "--rules", "executorch", "--statistics")
    assert p.returncode == 1, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["count", "code", "name", "default"]
    assert [line.split() for line in lines[1:3]] == [["2", "WA203", "wrong-owner", "error"],
                                                     ["2", "WA401", "forbidden-component", "error"]]
    assert lines[3].startswith("failed: 4 errors") and len(lines) == 4
    assert run("check", fused, "--rules", "executorch", "--statistics", "--format", "json").returncode == 2


@pytest.mark.parametrize("args, env, coloured", [
    ([], {}, False),                                   # a pipe: no colour
    (["--color", "always"], {}, True),
    (["--color", "always"], {"NO_COLOR": "1"}, True),  # the option says so
    ([], {"FORCE_COLOR": "1"}, True),
    ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    (["--color", "never"], {"FORCE_COLOR": "1"}, False),
    (["--no-color"], {"FORCE_COLOR": "1"}, False),
])
def test_color_auto_always_never(fused, args, env, coloured):
    p = run("check", fused, "--rules", "executorch", *args, env=env)
    assert p.returncode == 1 and ("\x1b[" in p.stdout) == coloured


def test_the_pytest_plugin_takes_a_shipped_ruleset_by_name(fused, tmp_path):
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "wheelaudit", "--wheelaudit", fused,
                        "--wheelaudit-rules", "executorch"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 1 and "::binary::python_extension" in p.stdout, p.stdout[-2000:]


def test_a_pyproject_names_a_shipped_ruleset(fused, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.wheelaudit]\nrules = "executorch"\n', encoding="utf-8")
    p = run("check", fused, cwd=tmp_path)
    assert p.returncode == 1 and "WA401 error" in p.stdout, p.stderr
    assert run("rules", "validate", "pyproject.toml", cwd=tmp_path).returncode == 0
