"""Golden reports: the JSON of `wheelaudit check --format json` for every fixture scenario, one
file per scenario and rules, checked in under tests/golden/<family>/<scenario>.<rules>.json and
compared whole. A change of any finding, message, hint or severity shows in review as a diff of
one small file.

The families are the fixture wheel makers (fixtures/make_*_wheels.py, tests/conftest.py): the
ExecuTorch-shaped wheels (with the ExecuTorch rules and with none), and, with no rules, the WA6xx
audits, the platform cases, WA506's providers, the release library (alone, and against its last
release with ``--baseline``), the C++ consumer surface, issue #26's provider and consumer wheels and
the Windows PE fixtures.

tests/test_codes_raised.py reads these files: every code of the registry is raised by some
fixture.

Regenerate after an intended change:  UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
(files of scenarios that no longer exist are removed).
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from wheelaudit.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
RULES = ROOT / "rules" / "executorch.toml"

#: family -> (session fixture of tests/conftest.py: scenario -> wheel, the rules to run with)
FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "executorch": ("fixture_wheels", ("executorch", "none")),
    "audits": ("audit_wheels", ("none",)),
    "platforms": ("platform_wheels", ("none",)),
    "unbound": ("unbound_wheels", ("none",)),
    "release": ("release_wheels", ("none",)),
    "surface": ("surface_wheels", ("none",)),
    "providers": ("provider_wheels", ("none",)),
    "windows": ("pe_wheels", ("none",)),
    "cases": ("case_wheels", ("none",)),
}

#: release scenarios also checked against the last release: scenario -> its baseline scenario
BASELINES: dict[str, str] = {
    "elf_drop_patch": "elf_base",
    "elf_drop_same": "elf_base",
    "elf_soname": "elf_base",
    "elf_node": "elf_base",
    "elf_removed": "elf_base",
    "elf_moved": "elf_base",
    "macho_install_name": "macho_base",
    "pe_drop": "pe_base",
}




@dataclass(frozen=True)
class Case:
    """An explicit run: ``check`` of some fixture wheels (scenarios of one family) with a rules file,
    ``--baseline`` wheels or ``--release`` (the wheels copied into one folder ``dist``)."""

    family: str
    wheels: tuple[str, ...]
    rules: str = ""
    baseline: tuple[str, ...] = ()
    release: bool = False


#: case -> how it runs: the codes only a rules file, a baseline or --release raises
CASES: dict[str, Case] = {
    "rules-that-match-nothing": Case("executorch", ("linux_clean",), rules=(  # WA003
        '[[file]]\nname = "readme"\nglob = "**/NOTHING.txt"\nmin = 0\n'
        '[[binary]]\nname = "ghost"\npath = "nowhere/*.so"\nmust-need = ["libc.so.6"]\n'
        '[libraries]\nscope = ["nowhere/*"]\nexpected = ["x"]\n')),
    "waivers-unused-and-lapsed": Case("executorch", ("linux_clean",), rules=(  # WA004, WA101
        '[libraries]\nexpected = ["executorch/lib/libexecutorch.so"]\nscope = ["executorch/lib/*"]\n'
        '[[waive]]\ncode = "WA101"\npath = "*kernels*"\nreason = "kernels are named by another team"\n'
        '[[waive]]\ncode = "WA201"\nreason = "nothing to waive here"\n'
        '[[waive]]\ncode = "WA101"\ntarget = "*xnnpack*"\nreason = "old"\nuntil = 2020-01-01\n')),
    "components-absent": Case("executorch", ("linux_clean",), rules=(  # WA202, WA204
        '[[component]]\nname = "ghost"\nsymbols = ["ghost::init"]\nowner = "lib/libghost.*"\n'
        '[[component]]\nname = "renamed"\nsymbols = ["executorch::runtime::no_such_function"]\n'
        'owner = "executorch/lib/libexecutorch.*"\n')),
    "binary-rules": Case("executorch", ("linux_hidden_copy",), rules=(  # WA401, WA402, WA403
        '[[component]]\nname = "registry"\nsymbols = ["executorch::runtime::register_backend"]\n'
        'owner = "executorch/lib/libexecutorch.*"\n'
        '[[binary]]\nname = "runtime"\npath = "executorch/lib/libexecutorch.so"\n'
        'must-not-define = ["registry"]\nmust-import = ["executorch::runtime::no_such_import"]\n'
        'must-need = ["libnothing.so*"]\n'
        '[[binary]]\nname = "xnn"\npath = "executorch/lib/libexecutorch_backend_xnnpack.so"\n'
        'must-import = ["executorch::extension::threadpool::get_threadpool"]\n')),
    "metadata-rule": Case("executorch", ("linux_clean",), rules=(  # WA404
        '[[metadata]]\nname = "no-torch"\nforbid-requires = ["torch"]\n')),
    "size-budgets": Case("executorch", ("linux_clean",), rules=(  # WA605
        '[limits]\nwheel-compressed = 100\nfile = "4 KB"\nfiles = 3\n')),
    "slices-disagree": Case("cases", ("universal2_slices_disagree",), rules=(  # WA206
        '[[component]]\nname = "registry"\nsymbols = ["executorch::runtime::register_backend"]\n'
        'owner = "casedemo/lib/libexecutorch.*"\n')),
    "baseline-platform-dropped": Case("release", ("macho_drop", "elf_rebuild"),  # WA801, WA804
                                      baseline=("elf_base", "macho_base", "pe_base")),
    "release-inconsistent": Case("release", ("elf_extra_module", "macho_base", "pe_drop"), release=True,  # WA811-WA813
                                 rules='[release]\nplatforms = ["manylinux_2_28_x86_64", "macosx_14_0_arm64", '
                                       '"win_amd64", "win_arm64"]\n'),
}


def run_case(name: str, case: Case, wheels: dict[str, Path], tmp: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    inputs = [wheels[w] for w in case.wheels]
    args: list[str] = []
    if case.release:
        dist = tmp / name / "dist"
        dist.mkdir(parents=True)
        for w in inputs:
            shutil.copy(w, dist)
        inputs, args = [dist], ["--release"]
    if case.rules:
        rules = tmp / f"{name}.toml"
        rules.write_text("version = 1\n" + case.rules)
        args += ["--rules", str(rules)]
    if case.baseline:
        args += ["--baseline", *(str(wheels[w]) for w in case.baseline)]
    data = report(capsys, *inputs, *args)
    # a message may name a wheel of the release folder by its path: keep the part inside the folder
    return json.loads(json.dumps(data).replace(str(tmp / name) + os.sep, ""))


def report(capsys: pytest.CaptureFixture[str], *args: str | Path) -> dict:
    """The JSON report of ``check ARGS``, with what varies between machines and runs (where
    the wheel and the rules are, the version) made constant, and the exit code as ``exit``."""
    code = main(["check", *map(str, args), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    data["tool"]["version"] = "*"
    if data["rules"].get("path"):
        data["rules"]["path"] = Path(data["rules"]["path"]).name
    for w in data["wheels"]:
        w["path"] = Path(w["path"]).name
    data["exit"] = code
    return data


def _args(rules: str) -> tuple[str, ...]:
    return ("--rules", str(RULES)) if rules == "executorch" else ()


def reports(family: str, wheels: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:
    """File name (``<scenario>.<rules>.json``) -> report, for every scenario of ``family``."""
    _, rule_sets = FAMILIES[family]
    got = {f"{name}.{rules}.json": report(capsys, wheel, *_args(rules))
           for name, wheel in sorted(wheels.items()) for rules in rule_sets}
    if family == "release":
        for new, old in sorted(BASELINES.items()):
            got[f"{new}.baseline-{old}.json"] = report(capsys, wheels[new], "--baseline", str(wheels[old]))
    return got


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_golden_reports(request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], family: str) -> None:
    wheels = request.getfixturevalue(FAMILIES[family][0])
    got = reports(family, wheels, capsys)
    compare(GOLDEN / family, got)


def test_golden_cases(request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    got = {f"{name}.json": run_case(name, case, request.getfixturevalue(FAMILIES[case.family][0]), tmp_path, capsys)
           for name, case in sorted(CASES.items())}
    compare(GOLDEN / "explicit", got)


def compare(folder: Path, got: dict[str, dict]) -> None:
    """``got`` (file name -> report) against the files of ``folder``; with UPDATE_GOLDEN set,
    write them first (and remove the files of scenarios that are gone)."""
    if os.environ.get("UPDATE_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for stale in set(p.name for p in folder.glob("*.json")) - set(got):
            (folder / stale).unlink()
        for name, data in got.items():
            (folder / name).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    have = sorted(p.name for p in folder.glob("*.json"))
    assert have, f"{folder} is empty: run UPDATE_GOLDEN=1 python -m pytest {__file__}"
    assert sorted(got) == have, "the fixture scenarios changed (UPDATE_GOLDEN=1 after review)"
    for name in sorted(got):
        want = json.loads((folder / name).read_text())
        assert got[name] == want, f"{folder.name}/{name}: the report differs (UPDATE_GOLDEN=1 after review)"
