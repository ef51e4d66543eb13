"""``wheelaudit rules validate`` and the pre-commit hook that runs it: every problem of every file,
``file:line: key: message``, exit 0 / 1 / 2; the hook's manifest read strictly and its entry run
the way pre-commit runs it (the staged file names appended)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "rules").glob("*.toml"))

BAD_RULES = """\
version = 1
fail-on = "fatal"

[[component]]
name = "backend_mlx"
symbols = ["executorch::backends::mlx::*"]
strong_only = true

[[file]]
glob = "**/mlx.metallib"
count = 1
beside = "mlx_runtime"

[[waive]]
code = "WA5"
reason = "checked by the installer job"
"""

# every problem of BAD_RULES, as (line, start of the rest)
BAD_RULES_PROBLEMS = [
    (2, 'key "fail-on": expected "error" or "warning", got string "fatal"'),
    (7, 'component[1] "backend_mlx": key "strong_only": unknown key (did you mean "strong-only"?)'),
    (12, 'file[1]: key "beside": no component is named "mlx_runtime" (components: backend_mlx)'),
    (15, 'waive[1]: key "code": WA5 is a code family; name one whole code'),
]


def wheelaudit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wheelaudit", *args], capture_output=True, text=True, cwd=cwd)


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command run by the console script's function itself (no interpreter start-up)."""
    from wheelaudit.cli.main import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_valid_files_exit_0_with_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\nversion = "1"\n', encoding="utf-8")
    p = wheelaudit("rules", "validate", *map(str, SHIPPED), str(pyproject))
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines() == [f"{path}: ok (valid rules)" for path in SHIPPED] + [
        f"{pyproject}: ok (no [tool.wheelaudit] table)"]
    assert in_process(capsys, "rules", "validate", "--quiet", *map(str, SHIPPED), str(pyproject)) == (0, "", "")


def test_every_problem_of_every_file(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "x.toml").write_text(BAD_RULES, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.wheelaudit]\nrules = "rules/x.toml"\nfail-on = "warn"\nname = "x"\n',
                                             encoding="utf-8")
    (tmp_path / "broken.toml").write_text('version = 1\nname = "unclosed\n', encoding="utf-8")
    p = wheelaudit("rules", "validate", "rules/x.toml", "pyproject.toml", "broken.toml", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    lines = p.stdout.splitlines()
    want = [f"rules/x.toml:{line}: {rest}" for line, rest in BAD_RULES_PROBLEMS] + [
        'pyproject.toml:3: tool.wheelaudit: key "fail-on": expected "error" or "warning", got string "warn"',
        'pyproject.toml:4: tool.wheelaudit: key "name": only "select", "ignore", "fail-on" and "severity" may sit beside "rules"',
        "broken.toml:2: TOML syntax error",
    ]
    assert len(lines) == len(want) + 1  # (the rules file the pyproject names is reported once)
    for got, expected in zip(lines, want, strict=False):
        assert got.startswith(expected), (got, expected)
    assert lines[-1] == "7 problems in 3 of 3 files"


def test_inline_table_problems_name_the_pyproject(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.wheelaudit]\nfail-on = "warning"\n\n[[tool.wheelaudit.component]]\nname = "core"\nsymbol = "x"\n',
        encoding="utf-8")
    code, out, _ = in_process(capsys, "rules", "validate", "pyproject.toml")
    assert code == 1
    assert out.splitlines() == [
        'pyproject.toml:4: tool.wheelaudit.component[1] "core": a component needs at least one entry in "symbols" or "strings"',
        'pyproject.toml:6: tool.wheelaudit.component[1] "core": key "symbol": unknown key (did you mean "symbols"?)',
        "2 problems in 1 of 1 file"]
    (tmp_path / "pyproject.toml").write_text(
        '[tool.wheelaudit]\nfail-on = "warning"\n\n[[tool.wheelaudit.component]]\nname = "core"\nsymbols = "x"\n',
        encoding="utf-8")
    assert in_process(capsys, "rules", "validate", "pyproject.toml")[:2] == (
        0, "pyproject.toml: ok ([tool.wheelaudit] holds the rules)\n")


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    missing = wheelaudit("rules", "validate", str(SHIPPED[0]), str(tmp_path / "nope.toml"))
    assert missing.returncode == 2
    assert f"{tmp_path / 'nope.toml'}: no such file" in missing.stderr and missing.stdout == ""
    from wheelaudit.cli.main import main

    assert main(["rules", "validate", str(tmp_path)]) == 2  # a directory
    assert main(["rules", "validate"]) == 2
    assert main(["rules"]) == 2


def test_unreadable_files_are_problems_not_crashes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b'version = 1\nname = "caf\xe9"\n')
    code, out, err = in_process(capsys, "rules", "validate", str(latin1))
    assert code == 1
    assert out.startswith(f"{latin1}:2: not UTF-8 text") and err == ""


# -- the pre-commit hook ------------------------------------------------------------------------

HOOKS = ROOT / ".pre-commit-hooks.yaml"

# pre-commit's manifest keys and their types (pre_commit/clientlib.py, MANIFEST_HOOK_DICT)
MANIFEST_KEYS = {
    "id": str, "name": str, "entry": str, "language": str, "alias": str, "files": str, "exclude": str,
    "types": list, "types_or": list, "exclude_types": list, "additional_dependencies": list, "args": list,
    "always_run": bool, "fail_fast": bool, "pass_filenames": bool, "description": str, "language_version": str,
    "log_file": str, "require_serial": bool, "stages": list, "verbose": bool, "minimum_pre_commit_version": str,
}


def _strict_yaml(text: str):
    """The YAML document, refusing duplicate keys (which a plain load keeps silently)."""
    import yaml

    class Strict(yaml.SafeLoader):
        pass

    def mapping(loader, node):
        keys = [loader.construct_object(k) for k, _ in node.value]
        dup = {k for k in keys if keys.count(k) > 1}
        if dup:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate keys {dup}", node.start_mark)
        return loader.construct_mapping(node)

    Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return yaml.load(text, Loader=Strict)  # noqa: S506 - a SafeLoader subclass


def hook() -> dict:
    (h,) = _strict_yaml(HOOKS.read_text(encoding="utf-8"))
    return h


def test_hook_manifest_is_valid() -> None:
    h = hook()
    assert h["id"] == "wheelaudit-rules" and h["language"] == "python"
    assert set(h) <= set(MANIFEST_KEYS) and {"id", "name", "entry", "language"} <= set(h)
    for key, value in h.items():
        assert isinstance(value, MANIFEST_KEYS[key]), key
    assert shlex.split(h["entry"])[:3] == ["wheelaudit", "rules", "validate"]
    try:
        from pre_commit.clientlib import load_manifest
    except ImportError:
        return
    assert [x["id"] for x in load_manifest(str(HOOKS))] == ["wheelaudit-rules"]  # pre-commit's own reader


@pytest.mark.parametrize("path,matched", [
    ("pyproject.toml", True), ("sub/project/pyproject.toml", True),
    ("rules/executorch.toml", True), ("ci/rules/nightly.toml", True), ("release/wheelaudit.toml", True),
    ("wheelaudit-rules.toml", True),
    ("Cargo.toml", False), ("setup.cfg", False), ("rules/README.md", False), ("docs/rules.md", False),
    ("pyproject.toml.orig", False), ("myrules/x.toml", False),
])
def test_hook_files_pattern(path: str, matched: bool) -> None:
    # pre-commit matches `files` with Python's re.search on paths relative to the repository
    assert bool(re.search(hook()["files"], path)) is matched


def _run_hook(files: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The hook's entry, run as pre-commit runs it: the entry's words, then the file names.
    (`wheelaudit` is the console script installed beside this interpreter.)"""
    words = shlex.split(hook()["entry"])
    script = Path(sys.executable).with_name("wheelaudit")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "wheelaudit"]
    return subprocess.run(command + words[1:] + files, capture_output=True, text=True, cwd=cwd)


def test_hook_entry_on_staged_files(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    for path in SHIPPED:
        (tmp_path / "rules" / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.wheelaudit]\nrules = "rules/mlx.toml"\n', encoding="utf-8")
    good = ["pyproject.toml", *(f"rules/{p.name}" for p in SHIPPED)]
    assert all(re.search(hook()["files"], f) for f in good)
    ok = _run_hook(good, tmp_path)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "", "")  # silent: pre-commit shows output only on failure

    (tmp_path / "rules" / "x.toml").write_text(BAD_RULES, encoding="utf-8")
    bad = _run_hook([*good, "rules/x.toml"], tmp_path)
    assert bad.returncode == 1
    lines = bad.stdout.splitlines()
    assert [ln.split(": ", 1)[0] for ln in lines[:-1]] == [f"rules/x.toml:{n}" for n, _ in BAD_RULES_PROBLEMS]
    assert lines[-1] == f"4 problems in 1 of {len(good) + 1} files"


# Thirteen mistakes at every stage of validation: the file's version, top-level keys, a required
# key missing beside wrong ones in the same table, a check of two keys together beside wrong ones,
# references to components (one defined with mistakes of its own), waivers. One run names them all.
PLANTED = """\
name = "planted"
select = ["WA9"]
colour = "red"

[[component]]
name = "registry"
owner = 42
strong-only = "yes"

[[component]]
name = "delegate"
symbols = ["ns::delegate::*"]
when = { platfrom = "macosx_*" }

[[file]]
path = "pkg/**/mlx.metallib"
beside = "mlx_runtime"

[[binary]]
path = "pkg/_C.*"
must-not-define = ["registy"]

[[waive]]
code = "WA2O3"
until = "next year"
"""

PLANTED_PROBLEMS = [
    (1, 'key "version": missing'),
    (2, 'key "select": item 1: WA9 is not a code family'),
    (3, 'key "colour": unknown key'),
    (5, 'component[1] "registry": a component needs at least one entry in "symbols" or "strings"'),
    (7, 'component[1] "registry": key "owner": expected a string, got integer 42'),
    (8, 'component[1] "registry": key "strong-only": expected true or false'),
    (13, 'component[2] "delegate": key "when.platfrom": unknown key (did you mean "platform"?)'),
    (15, 'file[1]: key "glob": missing (this key is required)'),
    (16, 'file[1]: key "path": unknown key'),
    (17, 'file[1]: key "beside": no component is named "mlx_runtime" (components: registry, delegate)'),
    (21, 'binary[1]: key "must-not-define": no component is named "registy" (did you mean "registry"?)'),
    (23, 'waive[1]: key "reason": missing (this key is required)'),
    (24, 'waive[1]: key "code": WA2O3 is not a code; did you mean WA203?'),
    (25, 'waive[1]: key "until": expected a date like 2027-06-30'),
]


def test_every_planted_mistake_in_one_run(tmp_path: Path) -> None:
    rules = tmp_path / "planted.toml"
    rules.write_text(PLANTED, encoding="utf-8")
    p = wheelaudit("rules", "validate", str(rules))
    assert p.returncode == 1, p.stderr
    lines = p.stdout.splitlines()
    assert lines[-1] == f"{len(PLANTED_PROBLEMS)} problems in 1 of 1 file"
    assert len(lines) == len(PLANTED_PROBLEMS) + 1, p.stdout
    for line, (n, start) in zip(lines, PLANTED_PROBLEMS, strict=False):
        assert line.startswith(f"{rules}:{n}: {start}"), (line, n, start)
    assert "define no component" not in p.stdout
