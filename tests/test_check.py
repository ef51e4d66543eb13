"""`wheelaudit check` and the evaluation of rules over fixture wheels: one test per code, the seed's
scenarios, the gate (exit codes, select/ignore, fail-on), waivers and the JSON report."""

from __future__ import annotations

import datetime as dt
import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from wheelaudit import audit, load_rules
from wheelaudit.cli.main import main
from wheelaudit.ruleset.load import parse_rules

ROOT = Path(__file__).resolve().parents[1]
EXECUTORCH = ROOT / "rules" / "executorch.toml"
MLX_DELEGATE = "executorch/lib/libexecutorch_backend_mlx.dylib"
EXT_MACOS = "executorch/extension/pybindings/_C.cpython-311-darwin.so"


@pytest.fixture(scope="module")
def et_rules():
    return load_rules(EXECUTORCH)


def findings(fixture_wheels, scenario, rules, **kw):
    report = audit(fixture_wheels[scenario], rules, **kw)
    return report, [f for f in report.findings]


def codes(fs, *, errors_only=False):
    return sorted({f.code for f in fs if not errors_only or f.severity == "error"})


def by_code(fs, code):
    return [f for f in fs if f.code == code]


# ---------------------------------------------------------------- the clean fixtures pass

@pytest.mark.parametrize("scenario", ["macos_clean", "linux_clean", "macos_universal2"])
def test_clean_wheels_pass_the_executorch_rules(fixture_wheels, et_rules, scenario):
    report, fs = findings(fixture_wheels, scenario, et_rules)
    assert report.ok, [(f.code, f.message) for f in fs]
    assert codes(fs, errors_only=True) == []
    # nothing at all: the WA505 waiver is for the 1.5 series (when = version 1.5.*), and the
    # fixtures are 1.6.0, which declares torch
    assert fs == []


def test_rules_examine_something_on_the_clean_wheel(fixture_wheels, et_rules):
    """A rule that passes because it matched nothing is a defect: check the evidence is there."""
    from wheelaudit.checks.context import Context, component_definers
    from wheelaudit.scanner import scan

    wheel = scan(fixture_wheels["macos_clean"], strings=et_rules.strings())
    ctx = Context(wheel, et_rules)
    owners = {c.name: sorted(component_definers(ctx, c)) for c in et_rules.components if ctx.applies(c.when)}
    assert owners["backend_registry"] == ["executorch/lib/libexecutorch.dylib"]
    assert owners["backend_mlx"] == [MLX_DELEGATE]
    assert owners["mlx_runtime"] == [MLX_DELEGATE]
    assert owners["xnnpack_runtime"] == ["executorch/lib/libexecutorch_backend_xnnpack.dylib"]
    assert owners["backend_cuda"] == []  # not a CUDA wheel


# ---------------------------------------------------------------- the seed's scenarios

def test_fused_delegate_is_wa203_and_metallib_beside_the_extension_is_accepted(fixture_wheels, et_rules):
    report, fs = findings(fixture_wheels, "macos_fused", et_rules)
    assert not report.ok
    wa203 = {f.subject: f for f in by_code(fs, "WA203")}
    assert set(wa203) == {"backend_mlx", "mlx_runtime"}
    assert wa203["backend_mlx"].paths == [EXT_MACOS]
    assert "not by its owner executorch/lib/libexecutorch_backend_mlx.*" in wa203["backend_mlx"].message
    # the MLX runtime is hidden in _C: the evidence is local symbols or the string, and it says so
    assert "local symbol" in wa203["mlx_runtime"].message or "string" in wa203["mlx_runtime"].message
    # the metallib sits beside the image that carries MLX (the extension): no file finding
    assert not [f for f in fs if f.code.startswith("WA30")]
    # and the extension wiring rule catches it too: _C defines the delegate (WA401). (No WA403: the
    # delegate's library does not ship, and must-need-all asks only for the lib/ libraries that do.)
    assert {f.code for f in fs if f.subject.startswith("python_extension")} == {"WA401"}


def test_planted_duplicate_delegate_is_wa201_naming_both_paths(fixture_wheels, et_rules):
    _, fs = findings(fixture_wheels, "macos_dup_delegate", et_rules)
    dup = [f for f in by_code(fs, "WA201") if f.subject == "backend_mlx"]
    assert len(dup) == 1
    assert dup[0].paths == ["executorch/backends/mlx/libexecutorch_backend_mlx.dylib", MLX_DELEGATE]
    for p in dup[0].paths:
        assert p in dup[0].message
    assert dup[0].symbols and all("executorch::backends::mlx" in s for s in dup[0].symbols)


def test_two_metallibs_is_wa301(fixture_wheels, et_rules):
    _, fs = findings(fixture_wheels, "macos_two_metallibs", et_rules)
    f = by_code(fs, "WA301")
    assert len(f) == 1 and f[0].subject == "metallib"
    assert "found 2" in f[0].message and "expected exactly 1" in f[0].message


def test_metallib_beside_the_wrong_image_is_wa302(fixture_wheels, et_rules):
    _, fs = findings(fixture_wheels, "macos_metallib_wrong_place", et_rules)
    assert codes(fs, errors_only=True) == ["WA302"]
    f = by_code(fs, "WA302")[0]
    assert f.paths[0] == "executorch/extension/pybindings/mlx.metallib"
    assert MLX_DELEGATE in f.message


def test_metallib_without_mlx_is_wa303(fixture_wheels, et_rules):
    _, fs = findings(fixture_wheels, "macos_metallib_no_mlx", et_rules)
    f = by_code(fs, "WA303")
    assert len(f) == 1 and f[0].paths == ["executorch/lib/mlx.metallib"]


def test_unknown_library_name_is_wa101(fixture_wheels, et_rules):
    _, fs = findings(fixture_wheels, "linux_unexpected_name", et_rules)
    # an unknown library that nothing loads is also one the extension does not depend on (WA403)
    assert codes(fs, errors_only=True) == ["WA101", "WA403"]
    assert by_code(fs, "WA101")[0].paths == ["executorch/lib/libexecutorch_extra.so"]
    assert "executorch/lib/libexecutorch_extra.so" in by_code(fs, "WA403")[0].paths


def test_partial_component_is_wa205(fixture_wheels, et_rules):
    _, fs = findings(fixture_wheels, "linux_partial", et_rules)
    assert codes(fs, errors_only=True) == ["WA205"]
    f = by_code(fs, "WA205")[0]
    assert f.subject == "platform_layer" and f.symbols == ["executorch::runtime::get_pal_impl"]


def test_identity_problems_are_wa102(fixture_wheels, et_rules):
    _, fs = findings(fixture_wheels, "macos_bad_install_name", et_rules)
    wa102 = {f.subject: f.message for f in by_code(fs, "WA102")}
    assert set(wa102) == {"executorch/lib/libexecutorch_etdump.dylib", "executorch/lib/libexecutorch_threadpool.dylib"}
    assert "libetdump.dylib" in wa102["executorch/lib/libexecutorch_etdump.dylib"]
    assert "absolute" in wa102["executorch/lib/libexecutorch_threadpool.dylib"]


def test_hidden_private_copy_is_seen_through_local_symbols(fixture_wheels, et_rules):
    _, fs = findings(fixture_wheels, "linux_hidden_copy", et_rules)
    f = [x for x in by_code(fs, "WA201") if x.subject == "thread_pool"]
    assert len(f) == 1 and "local symbol" in f[0].message
    assert "executorch/lib/libexecutorch_backend_xnnpack.so" in f[0].paths


def test_integrity_findings(fixture_wheels, et_rules):
    _, fs = findings(fixture_wheels, "linux_tampered", et_rules)
    assert codes(fs, errors_only=True) == ["WA002"]
    msgs = " ".join(f.message for f in by_code(fs, "WA002"))
    assert "hash" in msgs and "size" in msgs and "libexecutorch_etdump.so" in msgs
    _, fs = findings(fixture_wheels, "linux_no_record", et_rules)
    assert "no RECORD" in by_code(fs, "WA002")[0].message
    _, fs = findings(fixture_wheels, "linux_truncated", et_rules)
    wa001 = by_code(fs, "WA001")
    assert len(wa001) == 1 and wa001[0].paths == ["executorch/lib/libexecutorch_kernels_optimized.so"]
    # an unreadable owner is not "defines nothing": the component whose owner it is must not pass silently
    assert "cpu_kernels" not in {f.subject for f in fs if f.code == "WA204"}


# ---------------------------------------------------------------- one test per remaining code

def small_rules(text: str):
    return parse_rules("version = 1\n" + text, "inline.toml")


def test_wa202_required_component_missing(fixture_wheels):
    rules = small_rules('[[component]]\nname = "ghost"\nsymbols = ["ghost::init"]\nowner = "lib/libghost.*"\n')
    _, fs = findings(fixture_wheels, "linux_clean", rules)
    assert [f.code for f in fs if f.subject == "ghost"] == ["WA202"]


def test_wa204_owner_ships_without_evidence(fixture_wheels):
    rules = small_rules('[[component]]\nname = "renamed"\nsymbols = ["executorch::runtime::no_such_function"]\n'
                        'owner = "executorch/lib/libexecutorch.*"\n')
    _, fs = findings(fixture_wheels, "linux_clean", rules)
    f = [f for f in fs if f.subject == "renamed"]
    assert [x.code for x in f] == ["WA204"] and f[0].paths == ["executorch/lib/libexecutorch.so"]


def test_wa206_slices_disagree(fixture_wheels):
    # in the thin_one universal2 wheel etdump is arm64-only: nothing disagrees. Build the case from
    # a component whose sentinel only one slice defines: min OS differs, symbols are the same, so
    # use the facts directly.
    from wheelaudit.checks.context import Context
    from wheelaudit.checks.rules import check_component
    from wheelaudit.scanner import scan

    wheel = scan(fixture_wheels["macos_universal2"])
    lib = wheel.library("executorch/lib/libexecutorch.dylib")
    assert sorted(lib.archs) == ["arm64", "x86_64"]
    x86 = next(sl for sl in lib.slices if sl.arch == "x86_64")
    x86.exports = [s for s in x86.exports if "register_backend" not in s.demangled]
    comp = small_rules('[[component]]\nname = "registry"\nsymbols = ["executorch::runtime::register_backend"]\n'
                       'owner = "executorch/lib/libexecutorch.*"\n').components[0]
    fs = check_component(Context(wheel, None), comp)
    assert [f.code for f in fs] == ["WA206"]
    assert "arm64: executorch::runtime::register_backend" in fs[0].message and "x86_64: nothing" in fs[0].message


def test_wa003_rule_that_matches_nothing(fixture_wheels):
    rules = small_rules('[[file]]\nname = "readme"\nglob = "**/NOTHING.txt"\nmin = 0\n'
                        '[[binary]]\nname = "ghost"\npath = "nowhere/*.so"\nmust-need = ["libc.so.6"]\n'
                        '[libraries]\nscope = ["nowhere/*"]\nexpected = ["x"]\n')
    _, fs = findings(fixture_wheels, "linux_clean", rules)
    assert sorted(f.subject for f in by_code(fs, "WA003")) == ["ghost", "libraries", "readme"]


def test_wa401_wa402_wa403_binary_rules(fixture_wheels):
    rules = small_rules(
        '[[component]]\nname = "registry"\nsymbols = ["executorch::runtime::register_backend"]\n'
        'owner = "executorch/lib/libexecutorch.*"\n'
        '[[binary]]\nname = "runtime"\npath = "executorch/lib/libexecutorch.so"\n'
        'must-not-define = ["registry"]\nmust-import = ["executorch::runtime::no_such_import"]\n'
        'must-need = ["libnothing.so*"]\n'
        '[[binary]]\nname = "pool"\npath = "executorch/lib/libexecutorch_threadpool.so"\n'
        'must-not-need = ["libc.so.*"]\nmust-need = ["libstdc++.so.*"]\n')
    _, fs = findings(fixture_wheels, "linux_clean", rules)
    assert sorted(f.code for f in fs if f.subject == "runtime") == ["WA401", "WA402", "WA403"]
    pool = [f for f in fs if f.subject == "pool"]
    assert [f.code for f in pool] == ["WA403"] and "libc.so.6" in pool[0].message


def test_wa402_private_copy_instead_of_import(fixture_wheels):
    rules = small_rules('[[binary]]\nname = "xnn"\npath = "executorch/lib/libexecutorch_backend_xnnpack.so"\n'
                        'must-import = ["executorch::extension::threadpool::get_threadpool"]\n')
    _, fs = findings(fixture_wheels, "linux_clean", rules)
    assert not [f for f in fs if f.subject == "xnn"]  # the clean one imports it
    _, fs = findings(fixture_wheels, "linux_hidden_copy", rules)
    f = [f for f in fs if f.subject == "xnn"]
    assert [x.code for x in f] == ["WA402"] and "defines its own copy" in f[0].message


def test_waiver_when_scopes_it_to_some_wheels(fixture_wheels):
    base = ('[libraries]\nexpected = ["executorch/lib/libexecutorch.so"]\nscope = ["executorch/lib/*"]\n'
            '[[waive]]\ncode = "WA101"\nreason = "names of the 1.5 series"\n')
    _, fs = findings(fixture_wheels, "linux_unexpected_name", small_rules(base + 'when = { version = "1.5.*" }\n'))
    assert by_code(fs, "WA101") and not by_code(fs, "WA004")  # does not apply to 1.6.0, and is silent
    report, fs = findings(fixture_wheels, "linux_unexpected_name", small_rules(base + 'when = { version = "1.6.*" }\n'))
    assert not by_code(fs, "WA101") and report.summary()["waived"] > 0


def test_waivers_apply_and_lapse(fixture_wheels):
    text = ('[libraries]\nexpected = ["executorch/lib/libexecutorch.so"]\nscope = ["executorch/lib/*"]\n'
            '[[waive]]\ncode = "WA101"\npath = "*kernels*"\nreason = "kernels are named by another team"\n'
            '[[waive]]\ncode = "WA201"\nreason = "nothing to waive here"\n'
            '[[waive]]\ncode = "WA101"\ntarget = "*xnnpack*"\nreason = "old"\nuntil = 2020-01-01\n')
    report, fs = findings(fixture_wheels, "linux_clean", small_rules(text), today=dt.date(2026, 11, 29))
    all_f = [f for wr in report.wheels for f in wr.findings]
    waived = sorted(f.subject for f in all_f if f.waived)
    assert waived == ["executorch/lib/libexecutorch_kernels_optimized.so", "executorch/lib/libexecutorch_kernels_quantized.so"]
    wa004 = sorted(f.message for f in by_code(fs, "WA004"))
    assert len(wa004) == 2 and "lapsed on 2020-01-01" in wa004[0] + wa004[1] and "matched no finding" in wa004[0] + wa004[1]
    # the lapsed waiver no longer hides its finding
    assert "executorch/lib/libexecutorch_backend_xnnpack.so" in {f.subject for f in by_code(fs, "WA101")}
    assert report.summary()["waived"] == 2


# ---------------------------------------------------------------- the CLI gate

def run_cli(args, capsys):
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


def test_exit_codes_and_text(fixture_wheels, capsys):
    rc, out, _ = run_cli(["check", str(fixture_wheels["macos_clean"]), "--rules", str(EXECUTORCH)], capsys)
    assert rc == 0 and out.rstrip().splitlines()[-1].startswith("passed: 0 errors")
    rc, out, _ = run_cli(["check", str(fixture_wheels["macos_dup_delegate"]), "--rules", str(EXECUTORCH)], capsys)
    assert rc == 1
    assert "executorch-1.6.0-cp311-cp311-macosx_14_0_arm64.whl: WA201 error [backend_mlx]" in out
    assert out.count("WA201 error") == 2
    assert out.rstrip().splitlines()[-1].startswith("failed: ")
    assert "\033[" not in out  # no colour when not a TTY


def test_several_wheels_and_select_ignore_fail_on(fixture_wheels, capsys):
    args = ["check", str(fixture_wheels["macos_clean"]), str(fixture_wheels["linux_unexpected_name"]),
            "--rules", str(EXECUTORCH)]
    rc, out, _ = run_cli(args, capsys)
    assert rc == 1 and "WA101" in out and "in 2 wheels" in out
    rc, out, _ = run_cli(args + ["--ignore", "WA1,WA403"], capsys)
    assert rc == 0 and "WA101" not in out
    rc, out, _ = run_cli(args + ["--select", "WA2,WA3"], capsys)
    assert rc == 0 and "WA101" not in out
    rc, _, _ = run_cli(args + ["--ignore", "WA1,WA403", "--fail-on", "warning"], capsys)
    assert rc == 0  # nothing left, not even a warning


def test_fail_on_warning(fixture_wheels, tmp_path, capsys):
    rules = tmp_path / "r.toml"
    rules.write_text('version = 1\n[[file]]\nname = "notes"\nglob = "**/NOTES.txt"\nmin = 0\n'
                     '[linkage]\nprovided-by = { torch = ["libtorch*", "libc10*"] }\n')
    args = ["check", str(fixture_wheels["linux_clean"]), "--rules", str(rules)]
    rc, out, _ = run_cli(args, capsys)
    assert rc == 0 and "WA003 warning [notes]" in out
    rc, _, _ = run_cli(args + ["--fail-on", "warning"], capsys)
    assert rc == 1
    rc, _, _ = run_cli(args + ["--fail-on", "warning", "--ignore", "WA003"], capsys)
    assert rc == 0


def test_json_report_validates_against_the_shipped_schema(fixture_wheels, tmp_path, capsys):
    out_file = tmp_path / "report.json"
    rc, out, _ = run_cli(["check", str(fixture_wheels["macos_fused"]), "--rules", str(EXECUTORCH),
                          "--format", "json", "--output", str(out_file)], capsys)
    assert rc == 1 and out.endswith(f"wrote the json report to {out_file}\n")  # (the verdict on the terminal)
    data = json.loads(out_file.read_text())
    schema = json.loads(resources.files("wheelaudit").joinpath("schemas/check.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert data["rules"]["name"] == "executorch"
    [wheel] = data["wheels"]
    assert wheel["name"] == "executorch" and wheel["tags"] == ["cp311-cp311-macosx_14_0_arm64"]
    assert {"WA203", "WA401"} <= {f["code"] for f in wheel["findings"]}
    assert data["summary"]["errors"] == sum(f["severity"] == "error" for f in wheel["findings"])
    # the schema is not vacuous: a wrong report fails it
    data["wheels"][0]["findings"][0]["code"] = "X1"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


def test_usage_errors_exit_2_with_a_message(tmp_path, fixture_wheels, capsys):
    rc, _, err = run_cli(["check", str(tmp_path / "nope.whl")], capsys)
    assert rc == 2 and "no such file" in err
    bad = tmp_path / "bad.toml"
    bad.write_text('version = 1\n[[component]]\nname = "x"\nsymbols = ["a"]\nstrong_only = true\n')
    rc, _, err = run_cli(["check", str(fixture_wheels["linux_clean"]), "--rules", str(bad)], capsys)
    assert rc == 2 and "bad.toml:5" in err and "strong-only" in err and "Traceback" not in err
    notzip = tmp_path / "x.whl"
    notzip.write_bytes(b"not a zip at all")
    rc, _, err = run_cli(["check", str(notzip)], capsys)
    assert rc == 2 and "not a zip" in err
    rc, _, err = run_cli(["check", str(fixture_wheels["linux_clean"]), "--select", "bogus"], capsys)
    assert rc == 2 and "bogus" in err.lower()


def test_rules_discovered_from_pyproject(fixture_wheels, tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.wheelaudit]\nversion = 1\n[tool.wheelaudit.libraries]\nexpected = ["executorch/lib/libexecutorch.so"]\n'
        'scope = ["executorch/lib/*"]\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    rc, out, _ = run_cli(["check", str(fixture_wheels["linux_clean"])], capsys)
    assert rc == 1 and "WA101" in out and "pyproject.toml" in out


def test_built_in_checks_only_without_rules(fixture_wheels, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run_cli(["check", str(fixture_wheels["macos_build_rpath"])], capsys)
    # a home-folder rpath no lookup reaches: a warning, not a red (and torch is the table's)
    assert rc == 0 and "WA502 warning" in out and "built-in checks only" in out
    rc, out, _ = run_cli(["check", str(fixture_wheels["macos_build_rpath"]), "--fail-on", "warning"], capsys)
    assert rc == 1


def test_the_command_loses_nothing_at_its_end(fixture_wheels, tmp_path):
    """``python -m wheelaudit``: the exit code is main's, standard output is complete even
    through a pipe, and the ``atexit`` handlers (coverage's, say) run."""
    import os
    import subprocess
    import sys

    marker = tmp_path / "atexit-ran"
    wheel = fixture_wheels["macos_fused"]
    rules = Path(__file__).resolve().parent.parent / "rules" / "executorch.toml"
    code = (f"import atexit, gc, sys; atexit.register(lambda: open({str(marker)!r}, 'w').write("
            "'ran'));"
            f"sys.argv = ['wheelaudit', 'check', {str(wheel)!r}, '--rules', {str(rules)!r}, '--format', 'json']; "
            "from wheelaudit.cli.main import console; console()")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # (stdout block-buffered, as usual)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 1, run.stderr  # the fused wheel fails the gate
    report = json.loads(run.stdout)  # all of it, flushed before the end
    assert report["wheels"][0]["findings"]
    assert marker.read_text() == "ran"
    clean = subprocess.run([sys.executable, "-m", "wheelaudit", "check", str(fixture_wheels["macos_clean"]),
                            "--rules", str(rules)], capture_output=True, text=True, timeout=120, env=env)
    assert clean.returncode == 0 and "passed" in clean.stdout


def test_a_command_sets_up_only_its_own_parser(fixture_wheels, capsys):
    """``wheelaudit COMMAND ...`` imports and sets up that command's module alone (the others' cost
    15 ms before a check's first worker starts), and a check the renderer of its ``--format``
    alone; the help without a command lists them all, and an unknown command is still refused
    with the list."""
    import subprocess
    import sys

    from wheelaudit.cli.main import COMMANDS, build_parser, main

    code = ("import sys; from wheelaudit.cli.main import main; "
            f"rc = main(['check', {str(fixture_wheels['linux_clean'])!r}, '--format', 'json']); "
            "print('MODULES', sorted(m for m in sys.modules if m.startswith(('wheelaudit.cli.', "
            "'wheelaudit.render.'))), rc)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    last = run.stdout.strip().splitlines()[-1]
    # (and of the renderers, the one asked for)
    assert last.rsplit(" ", 1) == ["MODULES ['wheelaudit.cli.check', 'wheelaudit.cli.common', 'wheelaudit.cli.main', "
                                   "'wheelaudit.render.json']", "0"], run.stderr
    sub = next(a for a in build_parser("owners")._actions if a.dest == "command")
    assert list(sub.choices) == ["owners"]
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == COMMANDS
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)
    assert main(["chek", "x.whl"]) == 2
    assert "invalid choice: 'chek'" in capsys.readouterr().err
