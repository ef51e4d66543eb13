"""CI formats of ``check``: SARIF 2.1.0 (validated against the vendored OASIS schema), GitHub
workflow commands, JUnit XML."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from wheelaudit.cli.main import main
from wheelaudit.model.finding import CODES, Finding
from wheelaudit.render import formats
from wheelaudit.render.github import escape_data, escape_property
from wheelaudit.model.report import Report
from wheelaudit.scanner import scan

DATA = Path(__file__).resolve().parent / "data"
SCHEMA = DATA / "sarif-schema-2.1.0.json"

# A small ruleset: the planted duplicate of macos_dup_delegate breaks exactly backend_mlx.
RULES = """
version = 1
name = "formats-test"

[libraries]
scope = ["executorch/lib/*"]
expected = ["executorch/lib/libexecutorch{,_threadpool,_etdump,_kernels_optimized,_kernels_quantized}.{so,dylib}",
            "executorch/lib/libexecutorch_backend_{xnnpack,mlx}.{so,dylib}"]
identity = "filename"

[[component]]
name = "backend_registry"
symbols = ["executorch::runtime::register_backend"]
strong-only = true
owner = "executorch/lib/libexecutorch.*"

[[component]]
name = "backend_mlx"
symbols = ["executorch::backends::mlx::MLXBackend::init"]
strong-only = true
owner = "executorch/lib/libexecutorch_backend_mlx.*"
required = false

[[component]]
name = "linux_only"
symbols = ["pthreadpool_create"]
owner = "executorch/lib/libexecutorch_threadpool.*"
when = { os = "linux" }

[[binary]]
name = "python_extension"
path = "executorch/extension/pybindings/_C.*"
count = 1
must-import = ["executorch::runtime::get_num_registered_backends"]

[linkage]
provided-by = { torch = ["libtorch*", "libc10*"] }
"""

WAIVED = RULES + """
[[waive]]
code = "WA201"
target = "backend_mlx"
reason = "second copy kept for the 1.5 series, see issue 123"
"""


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    p = tmp_path / "rules.toml"
    p.write_text(RULES)
    return p


@pytest.fixture
def waived_rules(tmp_path: Path) -> Path:
    p = tmp_path / "waived.toml"
    p.write_text(WAIVED)
    return p


def _run(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr().out
    return code, out


def test_formats_registered():
    """Every --format name has its renderer, and every renderer module of the package has its
    name (the names are listed without importing the renderers)."""
    from wheelaudit import render
    from wheelaudit.render import renderer

    assert {"text", "json", "sarif", "github", "junit"} <= set(formats())
    for name in formats():
        assert callable(renderer(name))
    modules = {p.stem for p in Path(render.__file__).parent.glob("*.py") if p.stem not in ("__init__", "escape")}
    assert modules == set(formats())
    with pytest.raises(KeyError):
        renderer("yaml")


# --------------------------------------------------------------------------------------------
# SARIF


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def _assert_valid(validator, log: dict) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def test_sarif_validates_and_names_every_code(capsys, fixture_wheels, rules, sarif_validator, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the checkout: rules.toml is a file of it
    code, out = _run(capsys, "check", fixture_wheels["macos_dup_delegate"], fixture_wheels["linux_tampered"],
                     "--rules", rules, "--format", "sarif")
    assert code == 1
    log = json.loads(out)
    _assert_valid(sarif_validator, log)
    assert log["version"] == "2.1.0"
    # one run per distribution and platform tag
    assert [r["automationDetails"]["id"] for r in log["runs"]] == [
        "wheelaudit/executorch/macosx_14_0_arm64/", "wheelaudit/executorch/manylinux_2_28_x86_64/"]
    mac, linux = log["runs"]
    for run in log["runs"]:
        driver = run["tool"]["driver"]
        assert driver["name"] == "wheelaudit" and driver["version"]
        assert "informationUri" not in driver  # (no made-up address: the project has no public home yet)
        ids = [r["id"] for r in driver["rules"]]
        assert ids == list(CODES)
        for r in driver["rules"]:
            assert "helpUri" not in r and r["id"] in r["help"]["text"] and f"wheelaudit explain {r['id']}" in r["help"]["text"]
            assert r["id"] in r["help"]["markdown"] and CODES[r["id"]].fix in r["help"]["markdown"]
            assert r["name"].isidentifier() and r["name"][0].isupper()
            assert r["shortDescription"]["text"] == CODES[r["id"]].summary
            assert r["fullDescription"]["text"]
            assert r["defaultConfiguration"]["level"] == CODES[r["id"]].severity
    (r,) = mac["results"]
    assert r["ruleId"] == "WA201" and r["level"] == "error" and "backend_mlx" in r["message"]["text"]
    assert ids[r["ruleIndex"]] == "WA201"
    # shown at the component's line of the rules file; the members are related locations
    (loc,) = r["locations"]
    assert loc["physicalLocation"]["artifactLocation"] == {"uri": "rules.toml", "uriBaseId": "%SRCROOT%"}
    # (RULES opens with a new line: the 0-based index of the name is the 1-based line of its header)
    assert loc["physicalLocation"]["region"] == {"startLine": RULES.splitlines().index('name = "backend_mlx"')}
    uris = sorted(x["physicalLocation"]["artifactLocation"]["uri"] for x in r["relatedLocations"])
    assert uris == ["executorch/backends/mlx/libexecutorch_backend_mlx.dylib",
                    "executorch/lib/libexecutorch_backend_mlx.dylib"]
    assert {x["physicalLocation"]["artifactLocation"]["uriBaseId"] for x in r["relatedLocations"]} == {
        fixture_wheels["macos_dup_delegate"].name}
    assert f"[in {fixture_wheels['macos_dup_delegate'].name}: executorch/" in r["message"]["text"]
    assert r["properties"]["wheel"] == str(fixture_wheels["macos_dup_delegate"])
    assert r["properties"]["subject"] == "backend_mlx"
    # RECORD mismatch of the tampered wheel (a built-in check): the rules file, at its first line
    rec = [x for x in linux["results"] if x["ruleId"] == "WA002"]
    assert len(rec) == 2  # hash and size: two results, two fingerprints
    assert len({x["partialFingerprints"]["wheelaudit/v1"] for x in rec}) == 2
    for x in rec:
        assert x["locations"][0]["physicalLocation"] == {
            "artifactLocation": {"uri": "rules.toml", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 1}}
        assert [y["physicalLocation"]["artifactLocation"]["uri"] for y in x["relatedLocations"]] == [
            "executorch/lib/libexecutorch_etdump.so"]
    assert not any("suppressions" in x for run in log["runs"] for x in run["results"])
    # the checkout the relative paths start from
    assert {run["invocations"][0]["workingDirectory"]["uri"] for run in log["runs"]} == {tmp_path.resolve().as_uri() + "/"}


def test_sarif_waived_finding_is_suppressed(capsys, fixture_wheels, waived_rules, sarif_validator):
    code, out = _run(capsys, "check", fixture_wheels["macos_dup_delegate"], "--rules", waived_rules,
                     "--format", "sarif")
    assert code == 0  # the only error is waived
    log = json.loads(out)
    _assert_valid(sarif_validator, log)
    (r,) = [x for x in log["runs"][0]["results"] if x["ruleId"] == "WA201"]
    assert r["suppressions"] == [{"kind": "external", "status": "accepted",
                                  "justification": "second copy kept for the 1.5 series, see issue 123"}]


def test_sarif_without_findings_and_validator_rejects_a_broken_log(capsys, fixture_wheels, sarif_validator):
    code, out = _run(capsys, "check", fixture_wheels["macos_clean"], "--format", "sarif",
                     "--ignore", "WA5")
    assert code == 0
    log = json.loads(out)
    _assert_valid(sarif_validator, log)
    assert log["runs"][0]["results"] == []
    # the schema test can fail: a log the schema forbids is caught
    bad = json.loads(out)
    bad["runs"][0]["results"] = [{"ruleId": "WA201", "level": "fatal", "message": {"text": "x"}}]
    assert list(sarif_validator.iter_errors(bad))
    del bad["version"]
    assert any("version" in e.message for e in sarif_validator.iter_errors(bad))


# --------------------------------------------------------------------------------------------
# GitHub workflow commands


def test_github_escaping():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("a:b,c") == "a:b,c"


def test_github_annotations(capsys, fixture_wheels, rules):
    code, out = _run(capsys, "check", fixture_wheels["macos_dup_delegate"], "--rules", rules, "--format", "github")
    assert code == 1
    lines = out.splitlines()
    cmds = [line for line in lines if line.startswith("::")]
    assert len(cmds) == 1
    assert cmds[0].startswith("::error file=executorch/backends/mlx/libexecutorch_backend_mlx.dylib,"
                              "title=WA201 backend_mlx::")
    assert "\n" not in cmds[0] and "%0Aat executorch/lib/libexecutorch_backend_mlx.dylib" in cmds[0]
    assert lines[-1].startswith("wheelaudit failed: 1 error, 0 warnings in 1 wheel")


def test_github_escapes_messages_and_properties(capsys, fixture_wheels):
    wheel = scan(fixture_wheels["macos_clean"])
    findings = [
        Finding("WA101", "100% wrong:\nsee a,b", subject="lib:x,y", paths=["dir,1/lib:a.so"], rule="names"),
        Finding("WA003", "matched nothing", subject="files", rule="file:x"),
        Finding("WA102", "waived one", subject="s", paths=["p"], rule="names", waived_by="ok"),
    ]
    report = Report.build([(wheel, findings)])
    from wheelaudit.render.github import render_report
    import io

    buf = io.StringIO()
    render_report(report, buf)
    lines = buf.getvalue().splitlines()
    assert lines[0] == ("::error file=dir%2C1/lib%3Aa.so,title=WA101 lib%3Ax%2Cy::"
                        f"{wheel.path.name}: 100%25 wrong:%0Asee a,b"
                        "%0Ahint: add the library's name to [libraries] expected, or stop shipping it")
    assert lines[1].startswith(f"::warning title=WA003 files::{wheel.path.name}: matched nothing%0Ahint: ")
    assert len(lines) == 3  # the waived finding is not annotated; the summary counts it
    assert "1 waived" in lines[2]


# --------------------------------------------------------------------------------------------
# JUnit


def _cases(suite: ET.Element) -> dict[str, ET.Element]:
    return {c.get("name"): c for c in suite.findall("testcase")}


def test_junit_one_suite_per_wheel_one_case_per_rule(capsys, fixture_wheels, rules):
    code, out = _run(capsys, "check", fixture_wheels["macos_clean"], fixture_wheels["macos_dup_delegate"],
                     "--rules", rules, "--format", "junit")
    assert code == 1
    root = ET.fromstring(out)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [fixture_wheels["macos_clean"].name,
                                               fixture_wheels["macos_dup_delegate"].name]
    expected = ["names", "component:backend_registry", "component:backend_mlx", "component:linux_only",
                "binary:python_extension", "integrity", "linkage", "abi"]
    for s in suites:
        cases = _cases(s)
        assert list(cases) == expected
        assert s.get("tests") == str(len(cases))
        assert s.get("failures") == str(len(s.findall("testcase/failure")))
        assert s.get("skipped") == "1"
        assert cases["component:linux_only"].find("skipped") is not None
    clean, dup = suites
    assert clean.findall("testcase/failure") == []
    failing = [c.get("name") for c in dup.findall("testcase") if c.find("failure") is not None]
    assert failing == ["component:backend_mlx"]
    fail = _cases(dup)["component:backend_mlx"].find("failure")
    assert fail.get("type") == "WA201"
    assert fail.get("message").startswith("WA201 component backend_mlx is defined by 2 libraries")
    assert "executorch/backends/mlx/libexecutorch_backend_mlx.dylib" in fail.text
    assert root.get("tests") == str(2 * len(expected)) and root.get("failures") == "1"


def test_junit_waived_and_warnings_do_not_fail(capsys, fixture_wheels, waived_rules):
    code, out = _run(capsys, "check", fixture_wheels["macos_dup_delegate"], "--rules", waived_rules,
                     "--format", "junit")
    assert code == 0
    suite = ET.fromstring(out).find("testsuite")
    cases = _cases(suite)
    assert "waivers" in cases
    assert suite.findall("testcase/failure") == []
    sysout = cases["component:backend_mlx"].find("system-out")
    assert sysout is not None and "waived: second copy kept" in sysout.text


def test_junit_without_rules_uses_builtin_rules(capsys, fixture_wheels):
    code, out = _run(capsys, "check", fixture_wheels["linux_tampered"], "--format", "junit")
    assert code == 1
    suite = ET.fromstring(out).find("testsuite")
    cases = _cases(suite)
    assert list(cases) == ["integrity", "linkage", "abi"]
    fail = cases["integrity"].find("failure")
    assert fail is not None and fail.get("type") == "WA002"
    # libtorch / libc10 are torch's, which the wheel requires (the provider table): no failure
    assert cases["linkage"].find("failure") is None


@pytest.mark.parametrize(("code", "rule", "filed"), [
    ("WA201", "component:backend_mlx", "component:backend_mlx"),  # the rule that produced it
    ("WA605", "limits", "limits"),
    ("WA501", "", "linkage"), ("WA602", "", "abi"), ("WA004", "", "waivers"), ("WA002", "", "integrity"),
])
def test_a_finding_is_filed_under_one_rule_id(code, rule, filed):
    """The one finding -> rule id mapping, which the JUnit testcases and the pytest items share."""
    assert Finding(code, "m", rule=rule).rule_id == filed


def test_inspect_json_says_where_every_dependency_resolves(capsys, tmp_path):
    """Schema 2: each dependency carries ``resolved``, null where it resolves nowhere."""

    from wheel.wheelfile import WheelFile

    lib = next(Path("/lib/x86_64-linux-gnu").glob("libz.so.1*"), None) or next(Path("/usr/lib").rglob("libz.so.1*"))
    whl = tmp_path / "demo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with WheelFile(whl, "w") as wf:
        wf.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        wf.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\n"
                    "Tag: cp311-cp311-manylinux_2_28_x86_64\n")
        wf.write(str(lib), "demo/libz.so.1")
    code, out = _run(capsys, "inspect", whl, "--format", "json")
    assert code == 0
    deps = json.loads(out)["wheels"][0]["libraries"][0]["slices"][0]["dependencies"]
    assert deps and all("resolved" in d for d in deps)
    assert {d["name"]: d["resolved"] for d in deps}["libc.so.6"].startswith("external")
