"""Plays the GitHub Actions runner for action.yml and for workflow ``run`` steps, as far as this
machine allows (helpers of tests/test_action.py and tests/test_ci_recipes.py).

A ``run`` step is written to a file and started as ``shell: bash`` starts it (``bash --noprofile
--norc -eo pipefail FILE``), with GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and RUNNER_TEMP in a temporary
folder. The action's ``env`` expressions are evaluated from its inputs (defaults from action.yml),
``github.action_path`` (this checkout) and the outputs of earlier steps; any other expression is an
error, so a step that needs something the runner would give and this one does not fails the test.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def steps() -> list[dict]:
    return ACTION["runs"]["steps"]


def step(step_id: str) -> dict:
    return next(s for s in steps() if s.get("id") == step_id)


def evaluate(text: str, context: dict[str, str]) -> str:
    def one(m: re.Match) -> str:
        assert m.group(1) in context, f"unknown expression: {m.group(0)}"
        return context[m.group(1)]

    return EXPR.sub(one, text)


def run_bash(script: str, cwd: Path, tmp: Path, name: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``script`` as GitHub runs a ``shell: bash`` step, in ``cwd``, with ``env`` on top of this
    process's environment (less the runner's own variables)."""
    path = tmp / f"{name}.sh"
    path.write_text(script)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "WA_"))}
    full.update(env)
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=300)


class Runner:
    """The action's steps in ``workspace`` with these ``inputs``; scratch files go to ``tmp``."""

    def __init__(self, workspace: Path, tmp: Path, inputs: dict[str, str]) -> None:
        unknown = set(inputs) - set(ACTION["inputs"])
        assert not unknown, f"not inputs of action.yml: {unknown}"
        self.workspace = workspace
        self.tmp = tmp
        self.context = {f"inputs.{k}": str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
        self.context.update({f"inputs.{k}": str(v) for k, v in inputs.items()})
        self.context["github.action_path"] = str(ROOT)
        self.context["steps.python.outputs.python-path"] = ""  # (setup-python skipped: no python-version)
        self.summary = tmp / "step_summary.md"
        self.summary.write_text("")
        self.runner_temp = tmp / "runner_temp"
        self.runner_temp.mkdir(exist_ok=True)

    def run(self, step_id: str) -> subprocess.CompletedProcess:
        s = step(step_id)
        output = self.tmp / f"output_{step_id}"
        output.write_text("")
        env = {k: evaluate(str(v), self.context) for k, v in s.get("env", {}).items()}
        env.update(GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(self.summary),
                   RUNNER_TEMP=str(self.runner_temp), GITHUB_ACTION_PATH=str(ROOT),
                   GITHUB_WORKSPACE=str(self.workspace))
        proc = run_bash(s["run"], self.workspace, self.tmp, step_id, env)
        for line in output.read_text().splitlines():
            key, _, value = line.partition("=")
            self.context[f"steps.{step_id}.outputs.{key}"] = value
        return proc
