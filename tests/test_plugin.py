"""The pytest plugin (SPEC §6), run through ``pytester``: collection, ids, skips, failures with
the CLI's text, select/ignore/fail-on/waivers, usage errors, fixtures, and inertness.

Every inner run works in ``pytester.path`` with copies of the fixture wheels under
``dist/<scenario>/`` (the scenario wheels share file names) and a ``pytest.ini`` that pins the
rootdir there.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import wheelaudit
from wheelaudit.cli.main import main as cli_main

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules" / "executorch.toml"
MACOS_TAG = "cp311-cp311-macosx_14_0_arm64"
LINUX_TAG = "cp311-cp311-manylinux_2_28_x86_64"
DUP_BLOCK_PATHS = ("executorch/backends/mlx/libexecutorch_backend_mlx.dylib",
                   "executorch/lib/libexecutorch_backend_mlx.dylib")


@pytest.fixture(scope="module")
def ruleset():
    return wheelaudit.load_rules(RULES)


@pytest.fixture
def project(pytester: pytest.Pytester, fixture_wheels: dict[str, Path]):
    """``project("macos_clean", ...)`` copies those wheels and the rules into the pytester
    directory and returns the wheels' paths there (relative, as a user types them)."""
    pytester.makeini("[pytest]\n")
    shutil.copy(RULES, pytester.path / "rules.toml")

    def make(*scenarios: str) -> list[str]:
        out = []
        for name in scenarios:
            dest = pytester.path / "dist" / name
            dest.mkdir(parents=True, exist_ok=True)
            src = fixture_wheels[name]
            shutil.copy(src, dest / src.name)
            out.append(f"dist/{name}/{src.name}")
        return out

    return make


# Inner runs skip pytest's end-of-run garbage collection hunt for unraisable exceptions
# (five gc.collect() over this process's heap, a quarter of a second per run) and the cache.
QUICK = ("-p", "no:unraisableexception", "-p", "no:cacheprovider")


def inline(pytester: pytest.Pytester, *args: str):
    return pytester.inline_run(*args, *QUICK)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*args, *QUICK)


def outcomes(reprec) -> dict[str, dict[str, object]]:
    """``{"passed"|"skipped"|"failed": {item name (component::x): report}}`` of an inline run."""
    passed, skipped, failed = reprec.listoutcomes()
    return {kind: {r.nodeid.split(".whl::", 1)[1]: r for r in reps}
            for kind, reps in (("passed", passed), ("skipped", skipped), ("failed", failed))}


def expected_items(rs) -> set[str]:
    names = {"names", "linkage", "integrity", "abi", "waivers"}
    names |= {f"component::{c.name}" for c in rs.components}
    names |= {f"file::{f.name}" for f in rs.files}
    names |= {f"binary::{b.name}" for b in rs.binaries}
    names |= {f"metadata::{m.name}" for m in rs.metadata}
    return names


#: the items of the ExecuTorch rules that apply only to Windows or only to CUDA builds: skipped for
#: the CPU fixture wheels (Linux and macOS), each with its `when`
def windows_and_cuda_items(rs) -> set[str]:
    out = {f"component::{c.name}" for c in rs.components if c.name.endswith("_windows")}
    out |= {f"binary::{b.name}" for b in rs.binaries if b.name.endswith("_windows")}
    return out | {"file::aoti_cuda_shims_import_library_cuda", "metadata::cu12_build_requires_cuda_12",
                  "metadata::cu13_build_requires_cuda_13"}


def cli_text(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli_main(["check", *args])
    return out.getvalue()


# --------------------------------------------------------------------------------------------
# collection and outcomes


UNUSED_WAIVER = '\n[[waive]]\ncode = "WA301"\nreason = "nothing to waive in a clean wheel"\n'


def test_clean_wheel_passes(pytester, project, ruleset):
    (whl,) = project("macos_clean")
    # an unused waiver gives a warning (WA004) below fail-on
    pytester.path.joinpath("rules.toml").write_text(RULES.read_text() + UNUSED_WAIVER)
    result = run(pytester, "--wheelaudit", whl, "--wheelaudit-rules", "rules.toml")
    got = outcomes(result.reprec)
    assert got["failed"] == {}
    assert set(got["passed"]) | set(got["skipped"]) == expected_items(ruleset)
    assert set(got["skipped"]) == {"component::threadpool_impl"} | windows_and_cuda_items(ruleset)  # when: os = linux, ...
    assert result.ret == 0
    # ids: the wheel's path from the rootdir, then the rule
    assert f"{whl}::component::backend_mlx" in {r.nodeid for r in result.reprec.getreports("pytest_runtest_logreport")}
    # a warning below fail-on passes the item and is shown
    result.stdout.fnmatch_lines([
        "*wheelaudit: findings below fail-on*",
        f"executorch-1.6.0-{MACOS_TAG}.whl: WA004 warning [[]WA301[]]",
        "    waiver for WA301 matched no finding*",
        "wheelaudit: 1 wheel audited (rules *rules.toml; fail-on error)",
    ])


def test_planted_duplicate_fails_the_component_item(pytester, project):
    (whl,) = project("macos_dup_delegate")
    result = run(pytester, "--wheelaudit", whl, "--wheelaudit-rules", "rules.toml", "-rf")
    got = outcomes(result.reprec)
    # the second copy of the delegate library carries the delegate and the MLX runtime it bundles:
    # those two components, and nothing else, fail
    assert set(got["failed"]) == {"component::backend_mlx", "component::mlx_runtime"}
    assert result.ret == 1
    text = got["failed"]["component::backend_mlx"].longreprtext
    assert text.startswith(f"executorch-1.6.0-{MACOS_TAG}.whl: WA201 error [backend_mlx]")
    for path in DUP_BLOCK_PATHS:
        assert f"    at {path}" in text
    # the CLI's text for that finding, verbatim
    cli = cli_text(whl, "--rules", "rules.toml")  # pytester runs in its directory
    block = cli[cli.index(f"executorch-1.6.0-{MACOS_TAG}.whl: WA201 error [backend_mlx]"):]
    block = block[:block.index(f"executorch-1.6.0-{MACOS_TAG}.whl: WA201 error [mlx_runtime]")]
    assert text == block.rstrip("\n")
    # in the terminal: a header naming rule and wheel, the CLI's text, no traceback
    result.stdout.fnmatch_lines([
        f"*_ component::backend_mlx in executorch-1.6.0-{MACOS_TAG}.whl _*",
        f"executorch-1.6.0-{MACOS_TAG}.whl: WA201 error [[]backend_mlx[]]",
        "    component backend_mlx is defined by 2 libraries, expected exactly one*",
        f"    at {DUP_BLOCK_PATHS[0]}",
        f"    at {DUP_BLOCK_PATHS[1]}",
        f"*_ component::mlx_runtime in executorch-1.6.0-{MACOS_TAG}.whl _*",
        f"FAILED {whl}::component::backend_mlx*",
        f"FAILED {whl}::component::mlx_runtime*",
    ])
    for noise in ("Traceback", "AuditFailed", "pytest_plugin.py", "def runtest", "raise "):
        assert noise not in result.stdout.str()


def test_k_selects_a_rule(pytester, project, ruleset):
    clean, dup = project("macos_clean", "macos_dup_delegate")
    reprec = inline(pytester, "--wheelaudit", clean, dup, "--wheelaudit-rules", "rules.toml", "-k", "backend_mlx")
    passed, skipped, failed = reprec.listoutcomes()
    assert [r.nodeid for r in passed] == [f"{clean}::component::backend_mlx"]
    assert [r.nodeid for r in failed] == [f"{dup}::component::backend_mlx"]
    assert skipped == []
    (deselected,) = reprec.getcalls("pytest_deselected")
    assert len(deselected.items) == 2 * (len(expected_items(ruleset)) - 1)  # every other rule of both wheels


def test_when_that_does_not_hold_skips_with_the_reason(pytester, project, ruleset):
    (whl,) = project("linux_clean")
    reprec = inline(pytester, "--wheelaudit", whl, "--wheelaudit-rules", "rules.toml")
    got = outcomes(reprec)
    assert set(got["skipped"]) == {"component::threadpool_impl_apple", "file::metallib"} | windows_and_cuda_items(ruleset)
    reasons = {name: rep.longrepr[2].removeprefix("Skipped: ") for name, rep in got["skipped"].items()}
    assert reasons["file::metallib"] == f"when: os = macos does not hold for {LINUX_TAG}"
    assert reasons["binary::python_extension_windows"] == f"when: os = windows does not hold for {LINUX_TAG}"
    assert reasons["metadata::cu12_build_requires_cuda_12"] == f"when: version = *+cu12* does not hold for {LINUX_TAG}"
    result = run(pytester, "--wheelaudit", whl, "--wheelaudit-rules", "rules.toml", "-rs", "-k", "metallib")
    result.stdout.fnmatch_lines([f"SKIPPED [[]1[]] rules.toml*: when: os = macos does not hold for {LINUX_TAG}"])


def test_integrity_item_carries_the_scan_findings(pytester, project):
    (whl,) = project("linux_tampered")
    reprec = inline(pytester, "--wheelaudit", whl, "--wheelaudit-rules", "rules.toml")
    got = outcomes(reprec)
    assert set(got["failed"]) >= {"integrity"}
    assert "WA002 error" in got["failed"]["integrity"].longreprtext
    assert "libexecutorch_etdump.so" in got["failed"]["integrity"].longreprtext


# --------------------------------------------------------------------------------------------
# select / ignore / fail-on / waivers, as in the CLI


def test_ignore_and_select(pytester, project):
    (whl,) = project("macos_dup_delegate")
    reprec = inline(pytester, "--wheelaudit", whl, "--wheelaudit-rules", "rules.toml", "--wheelaudit-ignore", "WA2")
    assert outcomes(reprec)["failed"] == {}
    reprec = inline(pytester, "--wheelaudit", whl, "--wheelaudit-rules", "rules.toml", "--wheelaudit-select", "WA201")
    assert set(outcomes(reprec)["failed"]) == {"component::backend_mlx", "component::mlx_runtime"}
    result = run(pytester, "--wheelaudit", whl, "--wheelaudit-select", "WA9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: wheelaudit: --wheelaudit-select: WA9 is not a code family*"])


def test_fail_on_warning(pytester, project):
    (whl,) = project("macos_clean")
    pytester.path.joinpath("rules.toml").write_text(RULES.read_text() + UNUSED_WAIVER)
    reprec = inline(pytester, "--wheelaudit", whl, "--wheelaudit-rules", "rules.toml",
                    "--wheelaudit-fail-on", "warning")
    got = outcomes(reprec)
    assert set(got["failed"]) == {"waivers"}  # WA004: the WA3 waiver matched nothing
    assert "WA004 warning [WA301]" in got["failed"]["waivers"].longreprtext
    # the same from the ruleset's own fail-on
    text = (RULES.read_text() + UNUSED_WAIVER).replace('name = "executorch"\n', 'name = "executorch"\nfail-on = "warning"\n', 1)
    pytester.path.joinpath("strict.toml").write_text(text)
    reprec = inline(pytester, "--wheelaudit", whl, "--wheelaudit-rules", "strict.toml")
    assert set(outcomes(reprec)["failed"]) == {"waivers"}


def test_waivers_apply(pytester, project):
    (whl,) = project("macos_dup_delegate")
    text = RULES.read_text() + (
        '\n[[waive]]\ncode = "WA201"\ntarget = "backend_mlx"\nreason = "accepted for this test"\n')
    pytester.path.joinpath("waived.toml").write_text(text)
    result = run(pytester, "--wheelaudit", whl, "--wheelaudit-rules", "waived.toml",
                                "-k", "backend_mlx or mlx_runtime")
    result.assert_outcomes(passed=1, failed=1)  # backend_mlx waived; mlx_runtime still fails
    result.stdout.fnmatch_lines([
        "*wheelaudit: findings below fail-on, and waived ones*",
        f"executorch-1.6.0-{MACOS_TAG}.whl: WA201 waived [[]backend_mlx[]]: accepted for this test",
        "FAILED *::component::mlx_runtime*",
    ])


# --------------------------------------------------------------------------------------------
# where wheels and rules come from


def test_ini_options(pytester, project):
    project("macos_clean", "macos_dup_delegate")
    pytester.makeini("[pytest]\nwheelaudit_wheels =\n    dist/macos_*/*.whl\nwheelaudit_rules = rules.toml\n")
    reprec = inline(pytester, "-k", "backend_mlx")
    passed, _skipped, failed = reprec.listoutcomes()
    name = f"executorch-1.6.0-{MACOS_TAG}.whl::component::backend_mlx"
    assert [r.nodeid for r in passed] == [f"dist/macos_clean/{name}"]
    assert [r.nodeid for r in failed] == [f"dist/macos_dup_delegate/{name}"]


def test_rules_discovered_from_pyproject(pytester, project):
    (whl,) = project("macos_clean")
    pytester.path.joinpath("tox.ini").unlink()
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\n\n[tool.wheelaudit]\nrules = "rules.toml"\n')
    result = run(pytester, "--wheelaudit", whl, "-k", "backend_mlx or metallib", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["wheelaudit: 1 wheel audited (rules *rules.toml; fail-on error)"])


def test_no_rules_runs_the_built_in_checks(pytester, project):
    (whl,) = project("macos_clean")
    reprec = inline(pytester, "--wheelaudit", whl)
    got = outcomes(reprec)
    assert set(got["passed"]) | set(got["failed"]) == {"linkage", "integrity", "abi"}
    # _C's libtorch / libc10 are torch's, which the wheel requires (the provider table)
    assert {"abi", "integrity", "linkage"} <= set(got["passed"])


@pytest.mark.parametrize("case", ["invalid_rules", "missing_rules", "not_a_wheel", "no_match", "ini_no_match"])
def test_usage_errors(pytester, project, case):
    (whl,) = project("macos_clean")
    args = ["--wheelaudit", whl]
    if case == "invalid_rules":
        pytester.path.joinpath("bad.toml").write_text('version = 1\n[[component]]\nname = "x"\nsymbolz = ["a"]\n')
        args += ["--wheelaudit-rules", "bad.toml"]
        want = '*bad.toml:4: component[[]1[]] "x": key "symbolz": unknown key*'
    elif case == "missing_rules":
        args += ["--wheelaudit-rules", "nope.toml"]
        want = "ERROR: wheelaudit: rules file *nope.toml does not exist"
    elif case == "not_a_wheel":
        pytester.path.joinpath("junk.whl").write_bytes(b"not a zip")
        args = ["--wheelaudit", "junk.whl"]
        want = "ERROR: wheelaudit: not a wheel: *junk.whl: not a zip file*"
    elif case == "no_match":
        args = ["--wheelaudit", "build/*.whl"]
        want = "ERROR: wheelaudit: --wheelaudit build/*.whl: no wheel matches*"
    else:
        pytester.makeini("[pytest]\nwheelaudit_wheels = build/*.whl\n")
        args = []
        want = "ERROR: wheelaudit: wheelaudit_wheels build/*.whl: no wheel matches*"
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([want])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


# --------------------------------------------------------------------------------------------
# fixtures


USER_TESTS = '''
import pytest

MLX = "executorch/lib/libexecutorch_backend_mlx.dylib"

def test_owners(wheelaudit_wheels):
    (wheel,) = wheelaudit_wheels
    assert wheel.owners("executorch::backends::mlx::*") == [MLX]
    assert wheel.library("executorch/lib/libexecutorch.dylib").rpaths == ["@loader_path"]

def test_scan_is_shared(wheelaudit_wheels, wheelaudit_scan):
    assert wheelaudit_scan(r"{clean}") is wheelaudit_wheels[0]

def test_audit_any_path(wheelaudit_audit):
    report = wheelaudit_audit(r"{dup}")          # the session's rules
    assert not report.ok
    assert {{f.subject for f in report.findings if f.code == "WA201"}} == {{"backend_mlx", "mlx_runtime"}}
    assert wheelaudit_audit(r"{dup}", rules=None, ignore=["WA2"]).ok
    assert wheelaudit_audit(r"{clean}", r"{rules}").ok

def test_a_wrong_expectation_fails(wheelaudit_scan):
    assert wheelaudit_scan(r"{dup}").owners("executorch::backends::mlx::*") == [MLX]
'''


def test_fixtures_in_a_user_test(pytester, project):
    clean, dup = project("macos_clean", "macos_dup_delegate")
    pytester.makepyfile(test_user=USER_TESTS.format(clean=clean, dup=dup, rules=RULES))
    reprec = inline(pytester, "--wheelaudit", clean, "--wheelaudit-rules", "rules.toml", "-m", "not wheelaudit")
    passed, skipped, failed = reprec.listoutcomes()
    assert sorted(r.nodeid.split("::")[-1] for r in passed) == [
        "test_audit_any_path", "test_owners", "test_scan_is_shared"]
    assert [r.nodeid.split("::")[-1] for r in failed] == ["test_a_wrong_expectation_fails"]
    assert "executorch/backends/mlx/libexecutorch_backend_mlx.dylib" in failed[0].longreprtext
    assert skipped == []


def test_wheels_fixture_skips_without_wheels(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_user="def test_it(wheelaudit_wheels):\n    assert False\n")
    result = run(pytester, "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no wheels to audit: pass --wheelaudit WHEEL*"])


def test_each_wheel_is_scanned_once(pytester, project, monkeypatch):
    scan_mod = importlib.import_module("wheelaudit.scanner")

    calls: list[Path] = []
    real = scan_mod.scan

    def counting(path, **kw):
        calls.append(Path(path).resolve())
        return real(path, **kw)

    monkeypatch.setattr(scan_mod, "scan", counting)
    clean, dup = project("macos_clean", "macos_dup_delegate")
    pytester.makepyfile(test_user="def test_it(wheelaudit_wheels, wheelaudit_scan):\n"
                                  f"    assert wheelaudit_scan(r'{clean}') is wheelaudit_wheels[0]\n")
    inline(pytester, "--wheelaudit", clean, dup, "--wheelaudit-rules", "rules.toml", "--collect-only")
    assert calls == []  # collection reads the tags only
    reprec = inline(pytester, "--wheelaudit", clean, dup, "--wheelaudit-rules", "rules.toml")
    assert len(reprec.listoutcomes()[0]) > 40
    assert sorted(calls) == sorted({(pytester.path / clean).resolve(), (pytester.path / dup).resolve()})


# --------------------------------------------------------------------------------------------
# inert unless asked


def test_inert_when_not_asked_for(pytester):
    pytester.makeini("[pytest]\n")
    # rules that would be a usage error if the plugin looked at them
    pytester.makepyprojecttoml('[tool.wheelaudit]\nrules = "missing.toml"\n')
    pytester.makepyfile(test_a="def test_one():\n    pass\n")
    result = run(pytester, "-v")
    assert result.ret == 0
    assert [r.nodeid for r in result.reprec.getreports("pytest_runtest_logreport") if r.when == "call"] == [
        "test_a.py::test_one"]
    result.stdout.fnmatch_lines(["*collected 1 item"])
    assert "wheelaudit:" not in result.stdout.str()


def test_plugin_module_imports_nothing_else():
    code = ("import sys, wheelaudit; before = set(sys.modules); import wheelaudit.pytest_plugin; "
            "print(sorted(m for m in set(sys.modules) - before if m.startswith('wheelaudit')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['wheelaudit.pytest_plugin']"


def test_inert_session_imports_nothing_heavy(pytester):
    """A session without wheels loads no part of wheelaudit beyond the package and the plugin
    (measured in a fresh interpreter; meaningful once ``import wheelaudit`` itself is lazy)."""
    probe = "import sys, wheelaudit; print('wheelaudit.api' in sys.modules)"
    eager = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    if eager.strip() == "True":
        pytest.skip("wheelaudit/__init__.py imports its submodules eagerly (see docs/plugin-and-api.md)")
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(
        "import sys\n"
        "def pytest_unconfigure(config):\n"
        "    loaded = sorted(m for m in sys.modules if m.startswith('wheelaudit'))\n"
        "    open('loaded.txt', 'w').write(' '.join(loaded))\n")
    pytester.makepyfile(test_a="def test_one():\n    pass\n")
    result = pytester.runpytest_subprocess(*QUICK)
    result.assert_outcomes(passed=1)
    assert pytester.path.joinpath("loaded.txt").read_text().split() == ["wheelaudit", "wheelaudit.pytest_plugin"]


def test_plugin_can_be_disabled(pytester, project):
    (whl,) = project("macos_clean")
    result = run(pytester, "-p", "no:wheelaudit", "--wheelaudit", whl)
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # the option no longer exists
    result.stderr.fnmatch_lines(["*unrecognized arguments: --wheelaudit*"])


def test_baseline_and_release_items(pytester, release_wheels):
    pytester.makeini("[pytest]\n")
    for name in ("elf_drop_same", "macho_base"):
        (pytester.path / "dist").mkdir(exist_ok=True)
        shutil.copy(release_wheels[name], pytester.path / "dist")
    (pytester.path / "last").mkdir()
    for name in ("elf_base", "macho_base", "pe_base"):
        shutil.copy(release_wheels[name], pytester.path / "last")
    reprec = inline(pytester, "--wheelaudit", "dist/*.whl", "--wheelaudit-baseline", "last", "--wheelaudit-release")
    passed, _skipped, failed = reprec.listoutcomes()
    failed_ids = sorted(r.nodeid.rsplit("::", 1)[-1] + ("@linux" if "manylinux" in r.nodeid else "")
                        for r in failed)
    # the Linux rebuild lost exports (WA801, an error in a rebuild); the Windows wheel of the last
    # release has no counterpart (WA804, a warning: the release item passes)
    assert failed_ids == ["baseline@linux"]
    assert any(r.nodeid == "wheelaudit::release" for r in passed)
    text = str(failed[0].longrepr)
    assert "WA801" in text and "demo::Engine::count()" in text
    shutil.copy(release_wheels["elf_stale"], pytester.path / "dist")  # a stale build of 0.9.0
    reprec = inline(pytester, "--wheelaudit", "dist/*.whl", "--wheelaudit-release")
    failed = reprec.listoutcomes()[2]
    assert [r.nodeid for r in failed] == ["wheelaudit::release"] and "WA812" in str(failed[0].longrepr)
