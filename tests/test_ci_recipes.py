"""The recipes of docs/ci.md, tried as far as this machine allows.

Every code block that docs/ci.md marks ``<!-- recipe: NAME -->`` is read here as its CI system
reads it (YAML for GitHub and GitLab, TOML for cibuildwheel), and its ``wheelaudit`` commands run
on the fixture wheels in a checkout laid out as the recipes assume (``dist/``, ``pyproject.toml``,
``rules/myproject.toml``), with the real exit codes and reports checked. ``pip install`` lines
are not run (this test's environment has wheelaudit); cibuildwheel itself and the runners are not
here: their part (which commands run, with what ``{wheel}``, in which folder) is played by the
test after the rules cibuildwheel's documentation gives.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from github_runner import ACTION, Runner, run_bash

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ci.md"
RECIPE = re.compile(r"<!-- recipe: ([\w-]+) -->\n```(\w+)\n(.*?)\n```", re.S)

RULES = """\
version = 1
name = "myproject"

[[component]]
name = "backend_mlx"
symbols = ["executorch::backends::mlx::MLXBackend::init"]
strong-only = true
owner = "executorch/lib/libexecutorch_backend_mlx.*"
required = false
"""


def recipes() -> dict[str, tuple[str, str]]:
    """{name: (language, text)} of the marked code blocks of docs/ci.md."""
    found: dict[str, tuple[str, str]] = {}
    for name, lang, text in RECIPE.findall(DOC.read_text(encoding="utf-8")):
        assert name not in found, f"two recipes named {name}"
        found[name] = (lang, text)
    return found


def test_every_recipe_is_marked():
    assert set(recipes()) == {"plain", "github-action", "github-plain", "gitlab", "cibuildwheel"}


@pytest.fixture
def checkout(tmp_path: Path, fixture_wheels) -> Path:
    """A project: the failing fixture wheel in dist/, the rules in rules/myproject.toml."""
    repo = tmp_path / "repo"
    (repo / "dist").mkdir(parents=True)
    (repo / "rules").mkdir()
    (repo / "rules" / "myproject.toml").write_text(RULES)
    shutil.copy(fixture_wheels["macos_dup_delegate"], repo / "dist")
    return repo


def shell_env() -> dict[str, str]:
    """This test's wheelaudit first on PATH, as `pip install wheelaudit` would put it."""
    bindir = str(Path(sys.executable).parent)
    assert (Path(bindir) / "wheelaudit").exists() or (Path(bindir) / "wheelaudit.exe").exists()
    return {"PATH": bindir + os.pathsep + os.environ.get("PATH", "")}


def commands(lines: list[str]) -> list[str]:
    """The lines to run: not the installation of wheelaudit (``pip install "$WHEELAUDIT_SPEC"``,
    the one variable each recipe installs from, and its assignment)."""
    installs = [line for line in lines if line.startswith("pip install")]
    assert all(line == 'pip install "$WHEELAUDIT_SPEC"' for line in installs), installs
    return [line for line in lines if not line.startswith(("pip install", "WHEELAUDIT_SPEC="))]


def test_plain(checkout, tmp_path):
    lang, text = recipes()["plain"]
    assert lang == "sh"
    lines = commands(text.splitlines())
    assert lines and all(line.startswith("wheelaudit check dist/") for line in lines)
    for i, line in enumerate(lines):
        proc = run_bash(line, checkout, tmp_path, f"plain{i}", shell_env())
        assert proc.returncode == 1, proc.stderr
        assert "failed: 1 error" in proc.stdout
    report = json.loads((checkout / "wheelaudit.json").read_text())
    assert [f["code"] for w in report["wheels"] for f in w["findings"]] == ["WA201"]


def test_gitlab_junit(checkout, tmp_path):
    lang, text = recipes()["gitlab"]
    assert lang == "yaml"
    (job,) = yaml.safe_load(text).values()
    assert job["variables"]["WHEELAUDIT_SPEC"]
    junit = job["artifacts"]["reports"]["junit"]
    assert job["artifacts"]["when"] == "always"  # the report of a failed gate is kept
    script = commands(job["script"])
    assert script and all(line.startswith("wheelaudit ") for line in script)
    # GitLab runs each line with `sh`, stopping at the first that fails: the gate's own status
    proc = subprocess.run(["sh", "-c", "\n".join(script)], cwd=checkout, env={**os.environ, **shell_env()},
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    root = ET.parse(checkout / junit).getroot()
    assert root.tag == "testsuites" and root.get("failures") == "1"
    (failure,) = root.iter("failure")
    assert failure.get("type") == "WA201"
    for path in job["artifacts"].get("paths", []):
        assert (checkout / path).is_file()


def test_github_workflow_without_the_action(checkout, tmp_path):
    lang, text = recipes()["github-plain"]
    assert lang == "yaml"
    steps = yaml.safe_load(text)
    summary = tmp_path / "step_summary.md"
    summary.write_text("")
    env = {**shell_env(), "GITHUB_STEP_SUMMARY": str(summary)}
    statuses = []
    for i, s in enumerate(steps):
        if s["run"].startswith("pip install"):
            assert s["run"] == 'pip install "$WHEELAUDIT_SPEC"' and s["env"]["WHEELAUDIT_SPEC"]
            continue
        proc = run_bash(s["run"], checkout, tmp_path, f"step{i}", env)
        statuses.append(proc.returncode)
        if "wheelaudit check" in s["run"]:
            assert "--format github" in s["run"]
            assert proc.stdout.startswith("::error file=executorch/")
    assert statuses == [1, 0]  # the gate fails the job; the summary step runs anyway (!cancelled())
    assert steps[-1]["if"] == "${{ !cancelled() }}"
    assert summary.read_text().startswith("### wheelaudit: failed")
    assert json.loads((checkout / "wheelaudit.sarif").read_text())["runs"][0]["results"]


def test_github_action_with_sarif_upload(checkout, tmp_path):
    lang, text = recipes()["github-action"]
    assert lang == "yaml"
    (job,) = yaml.safe_load(text).values()
    assert job["permissions"]["security-events"] == "write"
    steps = job["steps"]
    (audit,) = [s for s in steps if s.get("uses", "").split("@")[0].endswith("/wheelaudit")]
    (upload,) = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert steps.index(upload) > steps.index(audit)
    assert upload["if"] == "${{ !cancelled() }}"
    # the upload takes the file the action writes, and sets no category (each run has its own id)
    assert upload["with"]["sarif_file"] == audit["with"]["sarif"]
    assert "category" not in upload["with"]
    inputs = audit["with"]
    assert set(inputs) <= set(ACTION["inputs"])
    runner = Runner(checkout, tmp_path, inputs)
    runner.context["steps.install.outputs.python"] = sys.executable
    proc = runner.run("check")
    assert proc.returncode == 1, proc.stderr
    assert "title=WA201 backend_mlx" in proc.stdout
    assert runner.summary.read_text().startswith("### wheelaudit: failed")
    log = json.loads((checkout / inputs["sarif"]).read_text())
    (run,) = log["runs"]
    assert run["automationDetails"]["id"] == "wheelaudit/executorch/macosx_14_0_arm64/"
    (result,) = run["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == inputs["rules"]


def test_cibuildwheel_audit_command(checkout, tmp_path, fixture_wheels):
    lang, text = recipes()["cibuildwheel"]
    assert lang == "toml"
    config = tomllib.loads(text)
    tool = config["tool"]
    # the project's rules come from [tool.wheelaudit], as the recipe says
    assert tool["wheelaudit"] == {"rules": "rules/myproject.toml"}
    (override,) = tool["cibuildwheel"]["overrides"]
    assert override["select"] == "*"
    assert override["inherit"] == {"audit-command": "append", "audit-requires": "append"}
    requires = override["audit-requires"]
    assert (requires if isinstance(requires, list) else requires.split()) == ["wheelaudit"]
    appended = override["audit-command"]
    appended = appended if isinstance(appended, list) else [appended]
    # cibuildwheel's defaults, then the override appended (inherit = "append")
    audit = ["abi3audit --strict --report {abi3_wheel}", *appended]
    (checkout / "pyproject.toml").write_text(text)
    # each repaired wheel sits in a temporary folder of its build, outside the project
    wheels = []
    for name in ("macos_dup_delegate", "macos_clean"):
        (tmp_path / name).mkdir()
        wheels.append(Path(shutil.copy(fixture_wheels[name], tmp_path / name)))
    ran = []
    for wheel in wheels:
        is_abi3 = "-abi3-" in wheel.name
        for template in audit:
            # cibuildwheel's rules: one placeholder per command; {abi3_wheel} only for abi3 wheels
            assert ("{wheel}" in template) != ("{abi3_wheel}" in template)
            if "{abi3_wheel}" in template and not is_abi3:
                continue
            command = template.replace("{wheel}", shlex.quote(str(wheel)))
            proc = subprocess.run(command, shell=True, cwd=checkout, env={**os.environ, **shell_env()},
                                  capture_output=True, text=True)
            ran.append(proc.returncode)
            assert "rules/myproject.toml; fail-on error)" in proc.stdout, proc.stderr  # found by pyproject.toml
            if proc.returncode:
                assert "WA201" in proc.stdout and "backend_mlx" in proc.stdout
    # the broken wheel fails the build (cibuildwheel stops at a non-zero audit), the clean one passes
    assert ran == [1, 0]
