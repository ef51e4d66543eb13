"""The JSON Schemas of the rules format agree with the loader.

The schemas (``wheelaudit/schemas/rules.schema.json``, ``config.schema.json``, JSON Schema
Draft 7) are generated from ruleset/format.py, the declaration the loader takes its keys from.
Here: every shipped ruleset and every rules fixture of the test suite is valid under both; broken
files, made from valid ones by mutating every key of every table (a wrong type, an unknown key, a
bad enum value, a required key left out, the constraints between keys a schema can state), are
rejected by both. What only the loader can judge (docs/rules.md, "JSON Schema") is not mutated.
"""

from __future__ import annotations

import ast
import copy
import datetime as dt
import json
import re
import shutil
import subprocess
from dataclasses import replace
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from wheelaudit.cli.main import main
from wheelaudit.ruleset.config import rules_from_pyproject
from wheelaudit.ruleset.format import CONFIG_BESIDE_RULES, TABLES, Table
from wheelaudit.ruleset.errors import RulesError
from wheelaudit.ruleset.load import ruleset_from_dict
from wheelaudit.schemas import config_schema, rules_schema, schema_text

ROOT = Path(__file__).resolve().parent.parent

RULES = jsonschema.Draft7Validator(rules_schema())
CONFIG = jsonschema.Draft7Validator(config_schema())

# A rules file that gives every key of every table (test_every_key_is_mutated holds it to that).
EVERY_KEY = """\
version = 1
name = "every-key"
select = ["WA1", "WA2", "wa301"]
ignore = "WA003"
fail-on = "warning"
severity = { WA502 = "error", WA6 = "Warning" }

[libraries]
scope = ["pkg/lib/*"]
expected = ["pkg/lib/libpkg.{so,dylib}", "pkg/lib/libpkg_mlx.*"]
identity = "filename"
when = { os = ["linux", "macos"], platform = "!win*", arch = "*64", version = "1.*", python = "cp3*", name = "pkg" }

[[component]]
name = "mlx_runtime"
symbols = ["mlx::core::*"]
strings = ["Failed to load the default metallib"]
strong-only = true
owner = "pkg/lib/libpkg_mlx.*"
required = { os = "macos" }
exempt = "*_aot_lib.*"
when = { os = "mac*" }
cmake-target = "pkg::mlx"

[[component]]
name = "core"
symbols = "pkg::core::init"
required = false

[[file]]
name = "metallib"
glob = "**/mlx.metallib"
count = 1
beside = "mlx_runtime"
when = { os = "macos" }

[[file]]
glob = "pkg/share/*.cmake"
min = 1
max = 2

[[binary]]
name = "python_module"
path = "pkg/_C.*"
count = 1
must-not-define = ["mlx_runtime"]
must-import = ["pkg::core::init"]
must-need = ["libpkg.*"]
must-not-need = "libpkg_mlx.*"
must-need-all = ["pkg/lib/lib*.so", "!**/libpkg_mlx.*"]
when = { arch = "x86_64" }

[[metadata]]
name = "cpu_builds_need_no_cuda"
when = { version = "!*+cu*" }
forbid-requires = ["nvidia-*"]
require = ["torch", "Flat_Buffers"]

[linkage]
allow-external = ["libcuda.so.1"]
provided-by = { torch = ["libtorch*"], "mlx-metal" = "libmlx.*" }
forbid-rpath = ["/home/*"]
allow-rpath = "/opt/vendor/lib"
optional = ["libcuda.so.1"]
check = true

[cmake]
config = "pkg/share/cmake/pkg-config.cmake"
declares = '_pkg_component\\(\\s*(?P<name>\\w+)\\s+(?P<library>\\w+)'
namespace = ""

[limits]
wheel-compressed = "200 MB"
wheel-uncompressed = 1000000000
file = "1.5 GiB"
files = 20000

[[limits.file-glob]]
glob = "**/*.so"
max = "500 MiB"

[abi]
policy = "strict"
public = ["pkg/lib/*"]

[release]
platforms = ["manylinux_2_28_x86_64", "macosx_14_0_arm64"]
only = { "pkg/_mlx*" = { os = "macos" } }

[[waive]]
code = "WA201"
target = "mlx_runtime"
path = "*_aot_lib.so"
reason = "export-time copy"
until = 2027-06-30
when = { version = "1.5.*" }

[[waive]]
code = " wa501 "
reason = "checked by the installer job"
until = "2027-06-30"
"""


def as_json(data: Any) -> Any:
    """``data`` as the JSON a TOML editor validates (dates and times as their ISO text)."""
    return json.loads(json.dumps(data, default=lambda v: v.isoformat()))


def loader_accepts_rules(data: dict[str, Any]) -> bool:
    try:
        ruleset_from_dict(data, "<mutant>")
    except RulesError:
        return False
    return True


def loader_accepts_config(table: Any, where: Path) -> bool:
    """Whether ``rules_from_pyproject`` takes a pyproject.toml (in ``where``) holding ``table``."""
    import tomli_w

    pyproject = where / "pyproject.toml"
    pyproject.write_text(tomli_w.dumps({"tool": {"wheelaudit": table}}), encoding="utf-8")
    try:
        rules_from_pyproject(pyproject)
    except RulesError:
        return False
    return True


def loader_accepts_inline(table: Any) -> bool:
    """Whether the loader takes ``table`` as an inline [tool.wheelaudit] ruleset (what
    ``rules_from_pyproject`` does with a table without ``rules``; no file needed)."""
    try:
        ruleset_from_dict(table, "pyproject.toml", table="tool.wheelaudit", require_version=False)
    except RulesError:
        return False
    return True


# -- the valid corpus ---------------------------------------------------------------------------

SHIPPED = sorted((ROOT / "rules").glob("*.toml")) + [ROOT / "bench" / "torch.toml"]


def _test_strings() -> Iterator[tuple[str, str]]:
    """Every string literal of the test suite that is a TOML document: (where, text)."""
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "=" in node.value:
                yield f"{path.name}:{node.lineno}", node.value


def _fixtures() -> tuple[list[tuple[str, dict]], list[tuple[str, dict]]]:
    """The rules files and the [tool.wheelaudit] tables written in the tests."""
    rules, configs = [], []
    for where, text in _test_strings():
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            continue
        if "version" in data:
            rules.append((where, data))
        tool = data.get("tool")
        if isinstance(tool, dict) and "wheelaudit" in tool:
            configs.append((where, tool["wheelaudit"]))
    return rules, configs


FIXTURE_RULES, FIXTURE_CONFIGS = _fixtures()


def test_the_schemas_are_generated_and_current() -> None:
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_schemas.py"), "--check"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    for validator in (RULES, CONFIG):
        jsonschema.Draft7Validator.check_schema(validator.schema)
        assert validator.schema["$schema"] == "http://json-schema.org/draft-07/schema#"


def test_schema_command_prints_the_shipped_schemas(capsys: pytest.CaptureFixture[str]) -> None:
    p = subprocess.run([sys.executable, "-m", "wheelaudit", "schema", "rules"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout == schema_text("rules")
    for name in ("config", "check", "inspect"):
        assert main(["schema", name]) == 0
        out = capsys.readouterr().out
        assert out == schema_text(name) and json.loads(out)["$id"].endswith(f"/{name}.schema.json")
    assert config_schema("wheelaudit") == json.loads(schema_text("config"))


def test_config_schema_shares_the_rules_tables() -> None:
    """[tool.wheelaudit] inline is a ruleset: its tables are the rules schema's, key for key
    (so the mutations of the rules' tables below hold for the config's too)."""
    assert config_schema()["definitions"] == rules_schema()["definitions"]
    top, rules = config_schema()["properties"], rules_schema()["properties"]
    assert {k: v for k, v in top.items() if k not in ("rules", "version")} == \
        {k: v for k, v in rules.items() if k != "version"}


def test_code_enums_and_descriptions_come_from_the_registry() -> None:
    from wheelaudit.model.codes import CODES

    code = rules_schema()["definitions"]["code"]["anyOf"][0]
    assert code["enum"] == sorted(CODES)
    docs = dict(zip(code["enum"], code["x-taplo"]["docs"]["enumValues"], strict=True))
    assert docs["WA501"].startswith(f"WA501 {CODES['WA501'].name} (error): {CODES['WA501'].summary}")
    severity = rules_schema()["properties"]["severity"]["properties"]
    assert set(CODES) < set(severity) and {"WA5", "WA50"} < set(severity)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_rulesets_are_valid_under_both(path: Path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert loader_accepts_rules(data)
    assert not list(RULES.iter_errors(data)), [e.message for e in RULES.iter_errors(data)]
    assert RULES.is_valid(as_json(data))


def test_every_rules_fixture_the_loader_accepts_is_valid_under_the_schema() -> None:
    assert len(FIXTURE_RULES) >= 40  # (the extraction finds the suite's rules files)
    accepted = [(where, data) for where, data in [("EVERY_KEY", tomllib.loads(EVERY_KEY)), *FIXTURE_RULES]
                if loader_accepts_rules(data)]
    assert len(accepted) >= 20
    refused = [(where, [e.message for e in RULES.iter_errors(form)][:3]) for where, data in accepted
               for form in (data, as_json(data)) if not RULES.is_valid(form)]
    assert not refused


def test_every_config_fixture_the_loader_accepts_is_valid_under_the_schema(tmp_path: Path) -> None:
    assert len(FIXTURE_CONFIGS) >= 10
    accepted = []
    for i, (where, table) in enumerate(FIXTURE_CONFIGS):
        here = tmp_path / str(i)
        ref = table.get("rules") if isinstance(table, dict) else None
        if isinstance(ref, str) and Path(ref).name not in ("", ".", "..") and not Path(ref).is_absolute():
            # (the rules file it names: what matters here is the table)
            (here / ref).parent.mkdir(parents=True, exist_ok=True)
            (here / ref).write_text(EVERY_KEY, encoding="utf-8")
        here.mkdir(exist_ok=True)
        if loader_accepts_config(table, here):
            accepted.append((where, table))
    assert len(accepted) >= 10
    refused = [(w, [e.message for e in CONFIG.iter_errors(t)][:3]) for w, t in accepted if not CONFIG.is_valid(t)]
    assert not refused


# -- broken files, by mutation ------------------------------------------------------------------

# Values of the wrong type or outside the allowed set, per kind of key (ruleset/format.py). Only
# what a schema can judge: not a glob's syntax, a regex's compilation, a date's day in its month,
# nor 1.0 for an integer (JSON Schema counts it as one; the loader does not).
BAD: dict[str, list[Any]] = {
    "version": [2, "1", True, 1.5],
    "text": [5, "", "   ", ["x"]],
    "text-or-empty": [5, ["x"]],
    "path": [5, "", ["rules.toml"]],
    "choice": ["soname", 5],
    "bool": ["yes", 1],
    "count": [-1, "3", 1.5, True],
    "size": [-1, "5 Mb", "five", 1.5, True, ["1 MB"]],
    "date": ["2027-13-01", "June 2027", "2027-06-30T10:00:00", 5, dt.datetime(2027, 6, 30, 10, 0)],
    "regex": [5, "(?P<other>x)"],
    "strings": [5, [5], [""], {"x": "y"}],
    "glob": [5, "", ["x"]],
    "globs": [5, [5], [""], {"x": "y"}],
    "not-globs": [5, [5], [""], "!", ["x", "!"]],
    "os-globs": [5, ["linux", ""], "macOS", ["linux", "plan9"], "!plan9", "!"],
    "symbols": [5, [5], [" x"], ["x "], ["*"], "**"],
    "dist-names": [5, ["not a name"], ["-x"], "x_"],
    "selectors": [5, "WA999", ["WA5O1"], "WA", ["WA1", 5], "WA2,WA3"],
    "code": ["WA5", "WA999", 5, ["WA501"]],
    "level": ["fatal", "Error", 5],
    "severities": ["error", {"WA999": "error"}, {"WA5": "fatal"}, {"WA5": 5}],
    "condition": ["macos", 5, ["x"]],
    "required": ["yes", 5, ["x"]],
    "provided-by": [5, {"not a name!": ["x"]}, {"torch": 5}, {"torch": [""]}],
    "platform-only": [5, ["x"], {"x": 5}, {"x": {"os": "plan9"}}, {"": {"os": "linux"}}],
    "table": [5, "x", [{}]],
    "tables": [5, "x", {"name": "x"}, [5]],
}


def _at(data: Any, path: tuple) -> Any:
    for p in path:
        data = data[p]
    return data


def _tables(data: dict[str, Any], table: Table, path: tuple = ()) -> Iterator[tuple[tuple, Table]]:
    """Every table of ``data`` (a valid file) with its place and its declaration."""
    yield path, table
    for key in table.keys:
        if key.name not in data:
            continue
        value = data[key.name]
        if key.kind == "table":
            yield from _tables(value, TABLES[key.table], path + (key.name,))
        elif key.kind == "tables":
            for i, item in enumerate(value):
                yield from _tables(item, TABLES[key.table], path + (key.name, i))
        elif key.kind == "condition" or (key.kind == "required" and isinstance(value, dict)):
            yield from _tables(value, TABLES["condition"], path + (key.name,))


def mutants(data: dict[str, Any], top: Table = TABLES[""],
            done: set[tuple[str, str, str]] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Broken copies of ``data``, each with one mistake: ``(what, mutant)``. Each kind of mistake
    is made once per key of each table kind (the first table of an array that has the key);
    ``done`` collects them as (table, key, mistake)."""
    done = set() if done is None else done

    def once(table: Table, key: str, what: str) -> bool:
        mark = (table.name, key, what)
        if mark in done:
            return False
        done.add(mark)
        return True

    for path, table in _tables(data, top):
        here = _at(data, path)
        name = ".".join(str(p) for p in path) or "(top)"

        def mutant(change, what: str, path: tuple = path, name: str = name) -> tuple[str, dict[str, Any]]:
            m = copy.deepcopy(data)
            change(_at(m, path))
            return f"{name}: {what}", m

        if once(table, "", "unknown key"):
            yield mutant(lambda t: t.__setitem__("no-such-key", "x"), "unknown key")
        for key in table.keys:
            if key.required and once(table, key.name, "missing"):
                yield mutant(lambda t, k=key.name: t.pop(k), f"{key.name} missing")
            if key.name not in here:
                continue
            for bad in BAD[key.kind]:
                if once(table, key.name, repr(bad)):
                    yield mutant(lambda t, k=key.name, b=bad: t.__setitem__(k, copy.deepcopy(b)), f"{key.name} = {bad!r}")
        # the constraints between keys that the schema states too
        if table.name == "component" and once(table, "", "no evidence"):
            yield mutant(lambda t: (t.__setitem__("symbols", []), t.pop("strings", None)), "symbols = [] and no strings")
        if table.name == "file" and "count" in here and once(table, "", "count and min"):
            yield mutant(lambda t: t.__setitem__("min", 0), "count and min")
        if table.name == "metadata" and once(table, "", "neither"):
            yield mutant(lambda t: (t.pop("forbid-requires", None), t.pop("require", None)), "no forbid-requires or require")


def disagreements(cases, loader_accepts, validator) -> tuple[int, list[str]]:
    n, out = 0, []
    for what, m in cases:
        n += 1
        by_loader = loader_accepts(m)
        by_schema = validator.is_valid(as_json(m))
        if by_loader or by_schema:
            out.append(f"{what}: accepted by {'the loader' if by_loader else ''}"
                       f"{' and ' if by_loader and by_schema else ''}{'the schema' if by_schema else ''}")
    return n, out


def test_every_key_is_mutated() -> None:
    """The mutations reach every key of every table the format declares, through EVERY_KEY."""
    done: set[tuple[str, str, str]] = set()
    for _ in mutants(tomllib.loads(EVERY_KEY), done=done):
        pass
    mutated = {(table, key) for table, key, what in done if what not in ("missing", "unknown key")}
    missing = [f"{t.name or '(top)'}.{k.name}" for t in TABLES.values() for k in t.keys if (t.name, k.name) not in mutated]
    assert not missing


@pytest.mark.parametrize("source", ["EVERY_KEY", "mlx.toml", "runtimes.toml"])
def test_broken_rules_are_rejected_by_both(source: str) -> None:
    text = EVERY_KEY if source == "EVERY_KEY" else (ROOT / "rules" / source).read_text(encoding="utf-8")
    n, wrong = disagreements(mutants(tomllib.loads(text)), loader_accepts_rules, RULES)
    assert n >= 20
    assert not wrong, "\n".join(wrong)


def test_broken_config_tables_are_rejected_by_both(tmp_path: Path) -> None:
    inline = tomllib.loads(EVERY_KEY)
    del inline["version"]  # (optional inline)
    inline_top = Table("", "[tool.wheelaudit]", "", tuple(replace(k, required=False) if k.name == "version" else k
                                                         for k in TABLES[""].keys))
    top_level = [(w, m) for w, m in mutants(inline, inline_top) if w.startswith("(top)")]
    n, wrong = disagreements([*top_level, ("inline, version 2", {**inline, "version": 2})], loader_accepts_inline, CONFIG)
    assert n >= 50
    assert not wrong, "\n".join(wrong)
    assert loader_accepts_config(inline, tmp_path) and CONFIG.is_valid(as_json(inline))

    (tmp_path / "rules.toml").write_text("version = 1\n", encoding="utf-8")
    beside = {"rules": "rules.toml", "select": ["WA5"], "ignore": "WA003", "fail-on": "warning",
              "severity": {"WA604": "error"}}
    assert set(beside) == {k.name for k in CONFIG_BESIDE_RULES}
    config_top = Table("", "[tool.wheelaudit]", "", tuple(replace(k, required=False) for k in CONFIG_BESIDE_RULES))
    cases = [*mutants(beside, config_top),
             ("rules and a table beside it", {**beside, "component": [{"name": "x", "symbols": "x"}]}),
             ("rules and version beside it", {**beside, "version": 1})]
    n, wrong = disagreements(cases, lambda t: loader_accepts_config(t, tmp_path), CONFIG)
    assert n >= 20
    assert not wrong, "\n".join(wrong)
    assert loader_accepts_config(beside, tmp_path) and CONFIG.is_valid(beside)


# -- validate-pyproject -------------------------------------------------------------------------

GOOD_PYPROJECT = """\
[project]
name = "pkg"
version = "1.0"

[tool.wheelaudit]
fail-on = "warning"
severity = { WA604 = "error" }

[[tool.wheelaudit.component]]
name = "core"
symbols = ["pkg::core::*"]

[[tool.wheelaudit.waive]]
code = "WA604"
reason = "debug builds"
until = 2027-06-30
"""


def test_validate_pyproject_checks_the_wheelaudit_table(tmp_path: Path) -> None:
    pytest.importorskip("validate_pyproject")
    from importlib.metadata import entry_points

    (plugin,) = [e for e in entry_points(group="validate_pyproject.tool_schema") if e.name == "wheelaudit"]
    assert plugin.load()("wheelaudit") == config_schema()

    good = tmp_path / "good" / "pyproject.toml"
    bad = tmp_path / "bad" / "pyproject.toml"
    for path, text in ((good, GOOD_PYPROJECT),
                       (bad, GOOD_PYPROJECT.replace('symbols = ["pkg::core::*"]', 'symbol = ["pkg::core::*"]'))):
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "validate_pyproject", str(good), str(bad)], capture_output=True, text=True)
    out = p.stdout + p.stderr
    assert p.returncode != 0
    assert f"Valid file: {good}" in out and f"Invalid file: {bad}" in out
    assert "tool.wheelaudit.component" in out and "symbol" in out


# -- taplo (the engine of Even Better TOML), where it is installed ------------------------------

TAPLO = shutil.which("taplo")


@pytest.mark.skipif(TAPLO is None, reason="taplo is not on PATH (npm install @taplo/cli)")
def test_taplo_agrees(tmp_path: Path) -> None:
    """The editor's view: taplo reads the schema through the `#:schema` directive, takes the
    valid files and refuses every broken one."""
    import tomli_w

    (tmp_path / "wheelaudit-rules.schema.json").write_text(schema_text("rules"), encoding="utf-8")
    header = "#:schema ./wheelaudit-rules.schema.json\n"
    valid = {"every-key.toml": EVERY_KEY, **{p.name: p.read_text(encoding="utf-8") for p in SHIPPED}}
    broken = {f"broken-{i:04d}.toml": (what, tomli_w.dumps(m)) for i, (what, m) in enumerate(mutants(tomllib.loads(EVERY_KEY)))}
    for name, text in [*valid.items(), *((n, t) for n, (_, t) in broken.items())]:
        (tmp_path / name).write_text(header + text, encoding="utf-8")
    p = subprocess.run([TAPLO, "check", "--no-auto-config", *sorted(valid), *sorted(broken)],
                       capture_output=True, text=True, cwd=tmp_path)
    refused = set(re.findall(r'invalid file .*?path="(?:[^"]*/)?([^"/]+\.toml)"', p.stdout + p.stderr))
    assert not refused & set(valid), p.stderr[-3000:]
    assert [broken[n][0] for n in sorted(set(broken) - refused)] == []
