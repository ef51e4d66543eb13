"""The GitHub Action (action.yml): its shape, and its steps run as the runner runs them
(tests/github_runner.py plays the runner).

The install step needs the package index (pip installs the checkout and its dependencies), so the
default run hands the check step this test run's own interpreter, where wheelaudit is installed;
``test_install_step_installs_from_the_checkout`` (slow, network) runs the install step itself.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from github_runner import ACTION, Runner, step, steps

SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"

RULES = """\
version = 1
name = "action-test"

[[component]]
name = "backend_mlx"
symbols = ["executorch::backends::mlx::MLXBackend::init"]
strong-only = true
owner = "executorch/lib/libexecutorch_backend_mlx.*"
required = false
"""


@pytest.fixture
def workspace(tmp_path: Path, fixture_wheels) -> Path:
    """A checkout: rules.toml and dist/ with the fixture wheel that breaks backend_mlx."""
    ws = tmp_path / "repo"
    (ws / "dist").mkdir(parents=True)
    (ws / "rules.toml").write_text(RULES)
    shutil.copy(fixture_wheels["macos_dup_delegate"], ws / "dist")
    return ws


def check(workspace: Path, tmp_path: Path, **inputs: str) -> tuple[Runner, subprocess.CompletedProcess]:
    runner = Runner(workspace, tmp_path, {k.replace("_", "-"): v for k, v in inputs.items()})
    runner.context["steps.install.outputs.python"] = sys.executable
    return runner, runner.run("check")


def test_action_shape():
    assert ACTION["runs"]["using"] == "composite"
    assert ACTION["name"] and ACTION["description"]
    assert set(ACTION["inputs"]) == {"wheels", "rules", "fail-on", "select", "ignore", "args", "sarif", "summary",
                                     "python-version", "baseline", "release"}
    assert ACTION["inputs"]["wheels"]["default"] == "dist/*.whl"
    assert all(v.get("description") for v in ACTION["inputs"].values())
    assert set(ACTION["outputs"]) == {"exit-code", "sarif"}
    ids = [s.get("id") for s in steps()]
    assert ids == ["python", "install", "check"]
    # the Python of the action is set up without changing the job's (update-environment: false)
    py = step("python")
    assert py["uses"].startswith("actions/setup-python@") and py["with"]["update-environment"] is False
    assert py["if"] == "inputs.python-version != ''"
    for s in steps():
        if "run" in s:
            assert s["shell"] == "bash"
            # inputs reach scripts through env only: no expression is ever pasted into a script
            assert "${{" not in s["run"], s["id"]
    install = step("install")["run"]
    assert "-m venv" in install and '-m pip install' in install and '"$WA_ACTION_PATH"' in install
    assert step("install")["env"]["WA_ACTION_PATH"] == "${{ github.action_path }}"
    # one scan writes every report: one wheelaudit command in the check step
    assert step("check")["run"].count("-m wheelaudit") == 1


def test_failing_wheel_annotates_summarises_and_fails(workspace, tmp_path):
    runner, proc = check(workspace, tmp_path, rules="rules.toml", sarif="wheelaudit.sarif")
    assert proc.returncode == 1, proc.stderr
    assert "::error " in proc.stdout and "title=WA201 backend_mlx" in proc.stdout
    assert "wheelaudit failed: 1 error" in proc.stdout
    summary = runner.summary.read_text()
    assert summary.startswith("### wheelaudit: failed")
    assert "| Code | Severity | Wheel | Member | Message |" in summary
    row = next(line for line in summary.splitlines() if line.startswith("| WA201 "))
    assert "| error | `executorch-1.6.0-cp311-cp311-macosx_14_0_arm64.whl` |" in row
    assert "`executorch/" in row
    assert runner.context["steps.check.outputs.exit-code"] == "1"
    assert runner.context["steps.check.outputs.sarif"] == "wheelaudit.sarif"
    log = json.loads((workspace / "wheelaudit.sarif").read_text())
    validator = jsonschema.Draft4Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert not list(validator.iter_errors(log))
    (result,) = [r for run in log["runs"] for r in run["results"] if r["ruleId"] == "WA201"]
    loc = result["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "rules.toml", "uriBaseId": "%SRCROOT%"}
    assert loc["region"]["startLine"] == RULES.splitlines().index("[[component]]") + 1
    # the temporary summary is gone, and nothing was written outside the workspace and runner temp
    assert not list((tmp_path / "runner_temp").iterdir())


def test_passing_wheel_and_args_split_like_a_shell(workspace, tmp_path):
    runner, proc = check(workspace, tmp_path, rules="rules.toml", args='--severity "WA201=warning"')
    assert proc.returncode == 0, proc.stderr
    assert "::warning " in proc.stdout
    summary = runner.summary.read_text()
    assert summary.startswith("### wheelaudit: passed") and "| WA201 | warning |" in summary
    assert runner.context["steps.check.outputs.exit-code"] == "0"
    assert runner.context["steps.check.outputs.sarif"] == ""
    # the same warning fails with fail-on: warning; summary: false writes no job summary
    runner, proc = check(workspace, tmp_path, rules="rules.toml", args="--severity WA201=warning", fail_on="warning",
                         summary="false")
    assert proc.returncode == 1 and "::warning " in proc.stdout
    assert runner.summary.read_text() == ""


def test_nothing_to_check_is_exit_2_with_a_summary(workspace, tmp_path):
    runner, proc = check(workspace, tmp_path, wheels="wheelhouse/*.whl", sarif="wheelaudit.sarif")
    assert proc.returncode == 2
    assert "::error title=wheelaudit::no wheel matches wheelhouse/*.whl" in proc.stdout
    assert runner.summary.read_text().startswith("### wheelaudit: could not run (exit 2)")
    assert runner.context["steps.check.outputs.sarif"] == ""
    runner, proc = check(workspace, tmp_path, args="--severity 'WA201=warning")
    assert proc.returncode == 2 and "the args input cannot be split" in proc.stderr


@pytest.mark.slow
@pytest.mark.network
def test_install_step_installs_from_the_checkout(workspace, tmp_path):
    """The install step for real: a venv from the runner's python3, pip install of this checkout."""
    runner = Runner(workspace, tmp_path, {"rules": "rules.toml"})
    proc = runner.run("install")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    python = runner.context["steps.install.outputs.python"]
    assert Path(python).is_file() and str(tmp_path / "runner_temp") in python
    proc = runner.run("check")
    assert proc.returncode == 1 and "title=WA201" in proc.stdout


def test_baseline_and_release_inputs(tmp_path, release_wheels):
    ws = tmp_path / "repo"
    (ws / "dist").mkdir(parents=True)
    (ws / "last").mkdir()
    shutil.copy(release_wheels["elf_drop_same"], ws / "dist")
    shutil.copy(release_wheels["elf_base"], ws / "last")
    shutil.copy(release_wheels["pe_base"], ws / "last")
    _, proc = check(ws, tmp_path, baseline="last/*.whl", release="true", summary="false")
    assert proc.returncode == 1, proc.stderr
    assert "title=WA801" in proc.stdout and "title=WA804" in proc.stdout
    _, proc = check(ws, tmp_path, baseline="nothing/*.whl", summary="false")
    assert proc.returncode == 2 and "no baseline wheel matches nothing/*.whl" in proc.stdout
