"""SARIF shaped for GitHub code scanning: locations in the repository, our own fingerprints that
outlive a release, one analysis (automationDetails.id) per distribution and platform tag, and
GitHub's limits. Every log is validated against the vendored SARIF 2.1.0 schema."""
from __future__ import annotations

import dataclasses
import io
import json
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from wheelaudit.cli.main import main
from wheelaudit.model.finding import Finding
from wheelaudit.model.report import Report, WheelReport
from wheelaudit.render import sarif
from wheelaudit.scanner import scan

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"

RULES = """\
version = 1

[libraries]
scope = ["executorch/lib/*"]
expected = ["executorch/lib/libexecutorch.*"]

[[component]]
name = "backend_mlx"
symbols = ["executorch::backends::mlx::MLXBackend::init"]
strong-only = true
owner = "executorch/lib/libexecutorch_backend_mlx.*"
required = false
"""


@pytest.fixture(scope="module")
def validator():
    return jsonschema.Draft4Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))


def valid(validator, log: dict) -> dict:
    errors = list(validator.iter_errors(log))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    return log


@pytest.fixture
def run_check(monkeypatch, capsys):
    """``wheelaudit check ... --format sarif`` in a checkout: (exit status, log, standard error)."""

    def run(cwd: Path, *args) -> tuple[int, dict, str]:
        monkeypatch.chdir(cwd)
        code = main(["check", *map(str, args), "--format", "sarif"])
        out, err = capsys.readouterr()
        assert code in (0, 1), err
        return code, json.loads(out), err

    return run


def repack(wheel: Path, out: Path, *, version: str | None = None, tag: str | None = None) -> Path:
    """The same wheel under another version and/or tag (a later release, another Python)."""
    sys.path.insert(0, str(ROOT / "fixtures"))
    try:
        import make_wheels
    finally:
        sys.path.remove(str(ROOT / "fixtures"))
    from packaging.utils import parse_wheel_filename

    name, old, _, (old_tag,) = parse_wheel_filename(wheel.name)
    old_version = str(old)
    version, tag = version or old_version, tag or str(old_tag)
    with zipfile.ZipFile(wheel) as z:
        members = {n: z.read(n) for n in z.namelist() if ".dist-info/" not in n}
        metadata = z.read(f"{name}-{old_version}.dist-info/METADATA").replace(
            f"Version: {old_version}".encode(), f"Version: {version}".encode())
    return make_wheels.write_dist_wheel(out / f"{name}-{version}-{tag}.whl", members, tag, name, version, metadata)


def results(log: dict) -> list[dict]:
    return [r for run in log["runs"] for r in run["results"]]


def test_fingerprints_outlive_a_release_and_python_tags_share_a_run(tmp_path, fixture_wheels, validator, run_check):
    (tmp_path / "rules.toml").write_text(RULES)
    dup = fixture_wheels["macos_dup_delegate"]
    later = repack(dup, tmp_path / "later", version="1.7.0")
    cp312 = repack(dup, tmp_path / "cp312", tag="cp312-cp312-macosx_14_0_arm64")
    _, old, _ = run_check(tmp_path, dup, "--rules", "rules.toml")
    _, new, _ = run_check(tmp_path, later, "--rules", "rules.toml")

    def fingerprints(log):
        return sorted((r["ruleId"], r["partialFingerprints"]["wheelaudit/v1"]) for r in results(valid(validator, log)))

    assert fingerprints(old) == fingerprints(new)
    assert {code for code, _ in fingerprints(old)} == {"WA101", "WA201"}
    wa201 = next(fp for code, fp in fingerprints(old) if code == "WA201")
    # two Python tags of one platform: one run (one analysis), one result naming both wheels
    _, both, _ = run_check(tmp_path, dup, cp312, "--rules", "rules.toml")
    valid(validator, both)
    (run,) = both["runs"]
    assert run["automationDetails"]["id"] == "wheelaudit/executorch/macosx_14_0_arm64/"
    assert len(run["artifacts"]) == 2
    # the same findings once, and the cp312 copy's own WA602 (its extension is built for 3.11)
    assert [x for x in fingerprints(both) if x[0] != "WA602"] == fingerprints(old)
    by_code = {r["ruleId"]: r for r in run["results"]}
    assert by_code["WA201"]["partialFingerprints"]["wheelaudit/v1"] == wa201
    assert by_code["WA201"]["properties"]["wheels"] == [str(dup), str(cp312)]
    assert f"(also in {cp312.name})" in by_code["WA201"]["message"]["text"]
    # the summary counts findings, each wheel's own
    wa602 = [r for r in run["results"] if r["ruleId"] == "WA602"]
    assert run["properties"]["summary"]["errors"] == 2 * len(fingerprints(old)) + len(wa602)


def test_one_analysis_per_platform(tmp_path, fixture_wheels, validator, run_check):
    """A build matrix uploads one SARIF per job: each platform is its own analysis."""
    _, log, _ = run_check(tmp_path, fixture_wheels["macos_clean"], fixture_wheels["linux_clean"],
                          fixture_wheels["macos_universal2"], "--ignore", "WA5")
    valid(validator, log)
    assert [r["automationDetails"]["id"] for r in log["runs"]] == [
        "wheelaudit/executorch/macosx_14_0_arm64/", "wheelaudit/executorch/manylinux_2_28_x86_64/",
        "wheelaudit/executorch/macosx_10_13_universal2/"]
    # a clean platform still has its (empty) run: code scanning closes the alerts it had
    assert all(run["results"] == [] for run in log["runs"])


def test_locations_without_a_rules_file(tmp_path, fixture_wheels, validator, run_check):
    wheel = fixture_wheels["linux_tampered"]
    # no rules, no pyproject.toml in the checkout (a .git stops the search): the wheel file
    (tmp_path / ".git").mkdir()
    dist = tmp_path / "dist"
    dist.mkdir()
    local = dist / wheel.name
    local.write_bytes(wheel.read_bytes())
    _, log, _ = run_check(tmp_path, "dist")
    rec = [r for r in results(valid(validator, log)) if r["ruleId"] == "WA002"]
    assert rec and {json.dumps(r["locations"]) for r in rec} == {json.dumps([{"physicalLocation": {
        "artifactLocation": {"uri": f"dist/{wheel.name}", "uriBaseId": "%SRCROOT%"}}}])}
    # a pyproject.toml without [tool.wheelaudit]: the config file, at its first line
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "executorch"\n')
    _, log, err = run_check(tmp_path, "dist")
    assert {json.dumps(r["locations"][0]["physicalLocation"]) for r in results(log)} == {json.dumps(
        {"artifactLocation": {"uri": "pyproject.toml", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 1}})}
    assert err == ""
    # rules inline in [tool.wheelaudit]: the line in pyproject.toml
    text = '[project]\nname = "executorch"\n\n[tool.wheelaudit]\n' + RULES.replace("version = 1\n", "").replace(
        "[libraries]", "[tool.wheelaudit.libraries]").replace("[[component]]", "[[tool.wheelaudit.component]]")
    (tmp_path / "pyproject.toml").write_text(text)
    _, log, _ = run_check(tmp_path, "dist")
    names = [r for r in results(valid(validator, log)) if r["ruleId"] == "WA101"]
    assert names
    for r in names:
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == "pyproject.toml"
        assert loc["region"]["startLine"] == text.splitlines().index("[tool.wheelaudit.libraries]") + 1


def test_a_rules_file_outside_the_checkout_is_an_absolute_uri(tmp_path, fixture_wheels, validator, run_check):
    outside = tmp_path / "shared"
    outside.mkdir()
    (outside / "rules.toml").write_text(RULES)
    repo = tmp_path / "repo"
    repo.mkdir()
    _, log, err = run_check(repo, fixture_wheels["macos_dup_delegate"], "--rules", outside / "rules.toml")
    (r,) = [r for r in results(valid(validator, log)) if r["ruleId"] == "WA201"]
    where = r["locations"][0]["physicalLocation"]
    assert where["artifactLocation"] == {"uri": (outside / "rules.toml").resolve().as_uri()}
    assert where["region"]["startLine"] == RULES.splitlines().index("[[component]]") + 1
    # code scanning cannot place it: the user is told
    assert "outside the working directory" in err and str((outside / "rules.toml").resolve()) in err


def test_github_limits_cut_with_a_note(fixture_wheels, validator):
    """More results than a run may hold: errors kept first, the cut counted and said; a result's
    related locations are cut too; more runs than a file may hold is said. (GitHub's limits are
    the defaults; the test lowers them to stay small.)"""
    assert (sarif.MAX_RUNS, sarif.MAX_RESULTS, sarif.MAX_RELATED) == (20, 25_000, 1_000)
    wheel = scan(fixture_wheels["macos_clean"])
    warnings = [Finding("WA604", f"warning {i}", subject=f"w{i}", paths=[f"pkg/w{i}.so"]) for i in range(40)]
    errors = [Finding("WA201", f"error {i}", subject=f"e{i}", paths=[f"pkg/e{i}.so"]) for i in range(3)]
    wide = Finding("WA301", "many members", subject="wide", paths=[f"data/f{i}.bin" for i in range(12)])
    report = Report([WheelReport(wheel, warnings + errors + [wide])])
    err = io.StringIO()
    log = valid(validator, sarif.sarif_log(report, warn=err, max_results=30, max_related=10))
    (run,) = log["runs"]
    assert len(run["results"]) == 30
    assert len([r for r in run["results"] if r["level"] == "error"]) == 4  # every error is kept
    (w,) = [r for r in run["results"] if r["ruleId"] == "WA301"]
    assert len(w["relatedLocations"]) == 10 and "(+11 more)" in w["message"]["text"]
    assert run["properties"]["truncated"] == {"results": 14, "relatedLocations": 2}
    assert "cut to GitHub's limits" in err.getvalue() and "14 results" in err.getvalue()
    # more platforms than runs: the user is told (GitHub refuses such a file)
    tagged = [WheelReport(dataclasses.replace(wheel, tags=[f"cp311-cp311-manylinux_2_{i}_x86_64"]), [])
              for i in range(4)]
    err = io.StringIO()
    log = valid(validator, sarif.sarif_log(Report(tagged), warn=err, max_runs=3))
    assert len(log["runs"]) == 4 and len({r["automationDetails"]["id"] for r in log["runs"]}) == 4
    assert "refuses more than 3" in err.getvalue()
    # nothing is said when nothing is cut
    err = io.StringIO()
    sarif.sarif_log(Report(tagged[:2]), warn=err)
    assert err.getvalue() == ""


def test_a_dist_info_member_counts_without_its_version(fixture_wheels):
    wheel = scan(fixture_wheels["linux_clean"])
    later = dataclasses.replace(wheel, version="1.7.0")

    def fp(w, member):
        wr = WheelReport(w, [])
        return sarif.fingerprint(Finding("WA002", "x", subject=member, paths=[member]), "executorch",
                                 "manylinux_2_28_x86_64", wr)

    assert fp(wheel, "executorch-1.6.0.dist-info/RECORD") == fp(later, "executorch-1.7.0.dist-info/RECORD")
    assert fp(wheel, "executorch-1.6.0.data/scripts/x") == fp(later, "executorch-1.7.0.data/scripts/x")
    assert fp(wheel, "executorch/lib/a.so") != fp(wheel, "executorch/lib/b.so")
    assert fp(wheel, "executorch/lib/a.so") != sarif.fingerprint(
        Finding("WA002", "x", subject="executorch/lib/a.so", paths=["executorch/lib/a.so"]), "executorch",
        "macosx_14_0_arm64", WheelReport(wheel, []))
