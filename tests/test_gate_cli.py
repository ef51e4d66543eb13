"""The gate as CI runs it: the installed ``wheelaudit`` command in a subprocess, its real exit
status, real pipes and closed descriptors. Each test here is a way the gate could be opened by
accident (a typo in a code, a pipe, a bad setting) that must keep it shut."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXECUTORCH = ROOT / "rules" / "executorch.toml"
WHEELAUDIT = shutil.which("wheelaudit", path=str(Path(sys.executable).parent)) or shutil.which("wheelaudit")


def run(*args: str, env: dict | None = None, cwd: Path | None = None, **kw) -> subprocess.CompletedProcess:
    assert WHEELAUDIT, "the wheelaudit command is not installed beside this Python"
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([WHEELAUDIT, *args], capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=120, **kw)


@pytest.fixture(scope="module")
def broken(fixture_wheels) -> str:
    """A wheel with findings under the ExecuTorch rules (two libraries define backend_mlx)."""
    return str(fixture_wheels["macos_dup_delegate"])


@pytest.fixture(scope="module")
def clean(fixture_wheels) -> str:
    return str(fixture_wheels["macos_clean"])


# ------------------------------------------------------------------ code selectors

@pytest.mark.parametrize("selector", ["WA999", "WA9", "WA", "WA5O1", "E501", "WA50000", "wa 5"])
@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_unknown_selector_is_a_usage_error(broken, option, selector):
    p = run("check", broken, "--rules", str(EXECUTORCH), option, selector)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert p.stdout == ""


def test_near_miss_says_what_was_meant(broken):
    p = run("check", broken, "--rules", str(EXECUTORCH), "--select", "WA2O1")
    assert p.returncode == 2
    assert "WA2O1 is not a code; did you mean WA201?" in p.stderr


def test_known_selectors_still_work(broken):
    assert run("check", broken, "--rules", str(EXECUTORCH), "--select", "WA2").returncode == 1
    assert run("check", broken, "--rules", str(EXECUTORCH), "--select", "wa201,WA5").returncode == 1
    assert run("check", broken, "--rules", str(EXECUTORCH), "--ignore", "WA2").returncode == 0


def test_api_refuses_unknown_selectors_and_a_string_is_one_selector(broken):
    import wheelaudit
    from wheelaudit.model.codes import CodeError

    with pytest.raises(CodeError, match="WA999"):
        wheelaudit.audit(broken, EXECUTORCH, select=["WA999"])
    with pytest.raises(CodeError):
        wheelaudit.audit(broken, EXECUTORCH, ignore="W")  # not the characters of "W..."
    report = wheelaudit.audit(broken, EXECUTORCH, ignore="WA5")  # one selector, not "W", "A", "5"
    assert not report.ok
    with pytest.raises(ValueError):
        wheelaudit.audit(broken, EXECUTORCH, fail_on="errors")


@pytest.mark.parametrize("code", ["WA", "WA2", "WA9", "WA999"])
def test_waiver_must_name_a_whole_known_code(broken, tmp_path, code):
    rules = tmp_path / "rules.toml"
    rules.write_text(EXECUTORCH.read_text() + f'\n[[waive]]\ncode = "{code}"\nreason = "all of it"\n')
    p = run("check", broken, "--rules", str(rules))
    assert p.returncode == 2, p.stdout + p.stderr
    assert "waive" in p.stderr and "Traceback" not in p.stderr


def test_pyproject_selectors_are_checked(broken, tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(f'[tool.wheelaudit]\nrules = "{EXECUTORCH}"\nignore = ["WA"]\n')
    p = run("check", broken, cwd=tmp_path)
    assert p.returncode == 2 and "pyproject.toml" in p.stderr


def test_pytest_option_selectors_are_checked(broken, tmp_path):
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "wheelaudit", "--wheelaudit", broken,
                        "--wheelaudit-rules", str(EXECUTORCH), "--wheelaudit-ignore", "WA", "-q"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode != 0 and "--wheelaudit-ignore" in (p.stdout + p.stderr)


# ------------------------------------------------------------------ the report's way out

def test_broken_pipe_keeps_exit_1(broken):
    proc = subprocess.Popen([WHEELAUDIT, "check", broken, "--rules", str(EXECUTORCH)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader went away before the report was written (`| head -0`)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert b"Traceback" not in err and b"cannot write the report" in err


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif", "junit"])
def test_head_of_the_report_keeps_exit_1(broken, fmt):
    p = subprocess.run(["bash", "-o", "pipefail", "-c", f'"{WHEELAUDIT}" check "{broken}" --rules "{EXECUTORCH}" '
                        f"--format {fmt} | head -c 10 >/dev/null"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr


def test_closed_stdout_keeps_exit_1_and_says_why(broken, clean):
    p = subprocess.run(["sh", "-c", f'"{WHEELAUDIT}" check "{broken}" --rules "{EXECUTORCH}" >&-'],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr and "cannot write the report to standard output" in p.stderr
    # nothing could be reported of a clean wheel: not a pass
    p = subprocess.run(["sh", "-c", f'"{WHEELAUDIT}" check "{clean}" --rules "{EXECUTORCH}" >&-'],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr


def test_unwritable_output_keeps_the_verdict(broken, clean, tmp_path):
    target = tmp_path / "no-such-dir" / "report.json"
    p = run("check", broken, "--rules", str(EXECUTORCH), "--format", "json", "--output", str(target))
    assert p.returncode == 1 and "cannot write the report" in p.stderr and "Traceback" not in p.stderr
    p = run("check", clean, "--rules", str(EXECUTORCH), "--output", str(target))
    assert p.returncode == 2 and "cannot write the report" in p.stderr


def test_full_disk_keeps_the_verdict(broken):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    p = run("check", broken, "--rules", str(EXECUTORCH), "--output", "/dev/full")
    assert p.returncode == 1 and "cannot write the report" in p.stderr and "Traceback" not in p.stderr


# ------------------------------------------------------------------ settings

@pytest.mark.parametrize("value", ["abc", "0", "-5", "nan", "inf", "1e10", "", " "])
def test_bad_binary_timeout_is_a_usage_error_naming_the_variable(clean, value):
    p = run("check", clean, "--rules", str(EXECUTORCH), env={"WHEELAUDIT_BINARY_TIMEOUT": value})
    if value.strip() == "":
        assert p.returncode == 0, p.stderr  # an empty variable is an unset one
        return
    assert p.returncode == 2, p.stdout + p.stderr
    assert "WHEELAUDIT_BINARY_TIMEOUT" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("value", ["abc", "0", "-5", "nan", "inf", "1e10", "86401"])
def test_bad_binary_timeout_option(clean, value):
    p = run("check", clean, "--binary-timeout", value)
    assert p.returncode == 2 and "--binary-timeout" in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("name,value", [("WHEELAUDIT_PROGRESS", "maybe"), ("WHEELAUDIT_DEBUG", "loud")])
def test_other_variables_are_validated(clean, name, value):
    p = run("check", clean, env={name: value})
    assert p.returncode == 2, p.stdout + p.stderr
    assert name in p.stderr


def test_unknown_variable_is_named_not_ignored(clean):
    p = run("check", clean, "--rules", str(EXECUTORCH), env={"WHEELAUDIT_BINARY_TIMOUT": "5"})
    assert p.returncode == 0
    assert "WHEELAUDIT_BINARY_TIMOUT" in p.stderr and "did you mean WHEELAUDIT_BINARY_TIMEOUT" in p.stderr


def test_good_variables_are_accepted(clean):
    p = run("check", clean, "--rules", str(EXECUTORCH), env={"WHEELAUDIT_BINARY_TIMEOUT": "30", "WHEELAUDIT_PROGRESS": "0",
                                 "WHEELAUDIT_DEBUG": "0"})
    assert p.returncode == 0, p.stderr


def test_every_rules_mistake_at_once(clean, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(
        'version = 1\n'
        'nmae = "typo at the top"\n'                      # line 2: unknown key
        '[[component]]\n'
        'name = "a"\n'
        'symbols = ["x::y"]\n'
        'strong_only = true\n'                            # line 6: unknown key
        'required = "yes"\n'                              # line 7: wrong type, same table
        '[[file]]\n'
        'glob = "**/mlx.metallib"\n'
        'count = -1\n'                                    # line 10: bad value
        '[[waive]]\n'
        'code = "WA999"\n'                                # line 12: unknown code
        'reason = "r"\n'
    )
    p = run("check", clean, "--rules", str(rules))
    assert p.returncode == 2
    for line in (2, 6, 7, 10, 12):
        assert f"rules.toml:{line}:" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_every_pyproject_mistake_at_once(clean, tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n'
        '[tool.wheelaudit]\n'
        f'rules = "{EXECUTORCH}"\n'
        'select = ["WA9"]\n'                              # line 5
        'fail-on = "errors"\n'                            # line 6
    )
    p = run("check", clean, cwd=tmp_path)
    assert p.returncode == 2
    assert "pyproject.toml:5:" in p.stderr and "pyproject.toml:6:" in p.stderr, p.stderr


# ------------------------------------------------------------------ severity overrides

def _codes_and_levels(stdout: str) -> set[tuple[str, str]]:
    import json

    report = json.loads(stdout)
    return {(f["code"], f["severity"]) for w in report["wheels"] for f in w["findings"]}


def test_severity_override_on_the_command_line(broken):
    base = run("check", broken, "--rules", str(EXECUTORCH), "--format", "json")
    assert base.returncode == 1 and ("WA201", "error") in _codes_and_levels(base.stdout)
    p = run("check", broken, "--rules", str(EXECUTORCH), "--format", "json", "--severity", "WA2=warning")
    levels = _codes_and_levels(p.stdout)
    assert ("WA201", "warning") in levels and ("WA201", "error") not in levels
    assert p.returncode == (1 if any(lv == "error" for _, lv in levels) else 0)
    assert run("check", broken, "--rules", str(EXECUTORCH), "--severity", "WA2=warning",
               "--fail-on", "warning").returncode == 1


def test_severity_override_in_the_rules_file(broken, tmp_path):
    rules = tmp_path / "rules.toml"
    text = EXECUTORCH.read_text()
    rules.write_text(text.replace("version = 1", 'version = 1\nseverity = {WA201 = "warning"}', 1))
    p = run("check", broken, "--rules", str(rules), "--format", "json")
    assert ("WA201", "warning") in _codes_and_levels(p.stdout), p.stderr


@pytest.mark.parametrize("value", ["WA999=error", "WA201=fatal", "WA201", "WA=warning"])
def test_bad_severity_override_is_a_usage_error(broken, value):
    p = run("check", broken, "--rules", str(EXECUTORCH), "--severity", value)
    assert p.returncode == 2 and "--severity" in p.stderr and "Traceback" not in p.stderr
