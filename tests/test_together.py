"""Wheels audited together (`check --together`, `dups --together`, `audit(..., together=True)`):
the fixture wheels beside small wheels of other distributions assembled here from the fixture
libraries (an "mlx-metal-like" wheel carrying MLX, a "torch-like" wheel with libtorch/libc10)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from wheel.wheelfile import WheelFile

from wheelaudit import audit, load_rules
from wheelaudit.cli.main import main
from wheelaudit.checks.evaluate import evaluate
from wheelaudit.checks.resolution import resolution_table
from wheelaudit.ruleset.load import parse_rules
from wheelaudit.scanner import scan
from wheelaudit.scanner.together import NotTogether, TogetherWheel, merge_wheels, scan_together

ROOT = Path(__file__).resolve().parents[1]
RUNTIMES = ROOT / "rules" / "runtimes.toml"
EXECUTORCH = ROOT / "rules" / "executorch.toml"
DELEGATE = "executorch/lib/libexecutorch_backend_mlx.dylib"
LIBMLX = "mlx/lib/libmlx.dylib"
EXT_MACOS = "executorch/extension/pybindings/_C.cpython-311-darwin.so"
EXT_LINUX = "executorch/extension/pybindings/_C.cpython-311-x86_64-linux-gnu.so"
METALLIB = b"MTLB\x01\x00\x02\x00 a fixture metallib".ljust(64, b"\0")

#: the MLX rules of executorch.toml without an owner, plus the metallib that must sit beside MLX.
#: The delegate library reused as "libmlx" needs @rpath/libexecutorch.dylib: from executorch; the
#: fixture wheels' _C needs libtorch and libc10: from torch.
MLX_RULES = """
version = 1
name = "mlx-together"

[[component]]
name = "mlx_runtime"
symbols = ["mlx::core::*"]
strings = ["Failed to load the default metallib"]
strong-only = true
required = false

[[file]]
name = "metallib"
glob = "**/mlx.metallib"
count = 1
beside = "mlx_runtime"

[linkage]
provided-by = { executorch = ["libexecutorch.dylib"], torch = ["libtorch*", "libc10*"] }
"""


def write_wheel(path: Path, dist: str, version: str, tag: str, members: dict[str, Path | bytes],
                requires: list[str] = ()) -> Path:
    """A wheel of distribution ``dist`` with a correct RECORD (``make_wheels.write_wheel`` writes
    only the executorch distribution)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stem = dist.replace("-", "_")
    info = f"{stem}-{version}.dist-info"
    meta = ["Metadata-Version: 2.1", f"Name: {dist}", f"Version: {version}"]
    meta += [f"Requires-Dist: {r}" for r in requires]
    with WheelFile(path, "w") as wf:
        for name in sorted(members):
            data = members[name]
            wf.writestr(name, data.read_bytes() if isinstance(data, Path) else data)
        wf.writestr(f"{info}/METADATA", ("\n".join(meta) + "\n\n").encode())
        wheel_file = f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {tag}\n\n"
        wf.writestr(f"{info}/WHEEL", wheel_file.encode())
    return path


@pytest.fixture(scope="module")
def extra(tmp_path_factory, fixture_build_dir) -> dict[str, Path]:
    """The wheels of other distributions, built from the fixture libraries."""
    out = tmp_path_factory.mktemp("together")
    a64 = fixture_build_dir / "macho" / "arm64"
    elf = fixture_build_dir / "elf"
    delegate = a64 / "lib" / "libexecutorch_backend_mlx.dylib"  # carries MLX (hidden + string)
    w: dict[str, Path] = {}
    w["mlx"] = write_wheel(out / "mlx" / "mlx_metal-0.32.4-py3-none-macosx_14_0_arm64.whl", "mlx-metal", "0.32.4",
                           "py3-none-macosx_14_0_arm64",
                           {LIBMLX: delegate, "mlx/lib/mlx.metallib": METALLIB}, requires=["executorch"])
    w["mlx_no_metallib"] = write_wheel(out / "mlx_nm" / "mlx_metal-0.32.4-py3-none-macosx_14_0_arm64.whl",
                                       "mlx-metal", "0.32.4", "py3-none-macosx_14_0_arm64", {LIBMLX: delegate},
                                       requires=["executorch"])
    w["torch_macos"] = write_wheel(out / "tm" / "torch-2.14.1-cp311-cp311-macosx_14_0_arm64.whl", "torch", "2.14.1",
                                   "cp311-cp311-macosx_14_0_arm64",
                                   {"torch/__init__.py": b"",
                                    "torch/lib/libtorch.dylib": a64 / "stubs" / "libtorch.dylib",
                                    "torch/lib/libc10.dylib": a64 / "stubs" / "libc10.dylib"})
    w["torch_linux"] = write_wheel(out / "tl" / "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl", "torch", "2.14.1",
                                   "cp311-cp311-manylinux_2_28_x86_64",
                                   {"torch/__init__.py": b"", "torch/lib/libtorch.so": elf / "stubs" / "libtorch.so",
                                    "torch/lib/libc10.so": elf / "stubs" / "libc10.so"})
    # two pure wheels that ship the same paths
    w["shared_a"] = write_wheel(out / "sa" / "alpha-1.0-py3-none-any.whl", "alpha", "1.0", "py3-none-any",
                                {"common/__init__.py": b"", "common/config.py": b"A = 1\n", "alpha/__init__.py": b""})
    w["shared_b"] = write_wheel(out / "sb" / "beta-1.0-py3-none-any.whl", "beta", "1.0", "py3-none-any",
                                {"common/__init__.py": b"", "common/config.py": b"B = 2\n", "beta/__init__.py": b""})
    return w


@pytest.fixture(scope="module")
def mlx_rules():
    return parse_rules(MLX_RULES, path=Path("mlx-together.toml"))


def by_code(fs, code):
    return [f for f in fs if f.code == code]


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


# --------------------------------------------------------------------------------------------
# components across wheels


def test_each_wheel_alone_passes_the_mlx_rules(fixture_wheels, extra, mlx_rules):
    for path in (fixture_wheels["macos_clean"], extra["mlx"]):
        report = audit(path, mlx_rules)
        assert report.ok, [(f.code, f.message) for f in report.findings]
        assert report.findings == []


def test_mlx_bundled_in_each_wheel_is_wa201_naming_both_wheels(fixture_wheels, extra, mlx_rules):
    et, mlx = fixture_wheels["macos_clean"], extra["mlx"]
    report = audit([et, mlx], mlx_rules, together=True)
    assert not report.ok
    assert len(report.wheels) == 1
    wa201 = by_code(report.findings, "WA201")
    assert len(wa201) == 1
    f = wa201[0]
    assert f.subject == "mlx_runtime"
    assert f.paths == [DELEGATE, LIBMLX]
    # each definer with the wheel it comes from, then its evidence (MLX is hidden: local symbols of
    # the unstripped fixture, and the string)
    for path, wheel in ((DELEGATE, et), (LIBMLX, mlx)):
        assert f"{path} ({wheel.name}; local symbol: " in f.message
    assert f.message.count('string: "Failed to load the default metallib"') == 2
    # two MLX, two metallibs: each beside its MLX, so the count fails but the placement does not
    wa301 = by_code(report.findings, "WA301")
    assert [x.paths for x in wa301] == [["executorch/lib/mlx.metallib", "mlx/lib/mlx.metallib"]]
    assert et.name in wa301[0].message and mlx.name in wa301[0].message
    assert by_code(report.findings, "WA302") == []
    assert sorted(x.code for x in report.findings) == ["WA201", "WA301"]


def test_the_shipped_runtimes_rules_find_mlx_twice(fixture_wheels, extra):
    rules = load_rules(RUNTIMES)
    for path in (fixture_wheels["macos_clean"], extra["mlx"]):
        alone = audit(path, rules, select=["WA2"])
        assert alone.findings == [], [(f.code, f.message) for f in alone.findings]
    report = audit([fixture_wheels["macos_clean"], extra["mlx"]], rules, together=True, select=["WA2"])
    assert [(f.code, f.subject, f.paths) for f in report.findings] == [("WA201", "mlx", [DELEGATE, LIBMLX])]


def test_runtimes_rules_have_no_owner_and_require_nothing():
    rules = load_rules(RUNTIMES)
    names = [c.name for c in rules.components]
    assert names == ["openmp", "openblas", "libgfortran", "mlx", "xnnpack", "pthreadpool", "cpuinfo"]
    assert all(c.owner is None and c.required is False and c.strong_only for c in rules.components)


def test_beside_resolves_across_wheels(fixture_wheels, extra, mlx_rules):
    """ExecuTorch without MLX ships a metallib: alone that is WA303 (it serves nothing). With MLX
    from another wheel in the install, the metallib is no longer orphaned but sits in the wrong
    directory: WA302, naming the library it should be beside and its wheel."""
    et = fixture_wheels["macos_metallib_no_mlx"]
    alone = audit(et, mlx_rules)
    assert [f.code for f in alone.findings] == ["WA303"]
    report = audit([et, extra["mlx_no_metallib"]], mlx_rules, together=True)
    assert [f.code for f in report.findings] == ["WA302"]
    f = report.findings[0]
    assert f.paths == ["executorch/lib/mlx.metallib", LIBMLX]
    assert f"beside {LIBMLX} ({extra['mlx_no_metallib'].name})" in f.message
    assert f"executorch/lib/mlx.metallib ({et.name})" in f.message


# --------------------------------------------------------------------------------------------
# linkage across wheels


def test_a_dependency_satisfied_by_the_other_wheel_resolves_inside(fixture_wheels, extra):
    et = fixture_wheels["macos_clean"]
    alone = audit(et, None)
    assert by_code(alone.findings, "WA501") == []  # the wheel requires torch: the provider table's
    table = resolution_table(scan_together([et]))[EXT_MACOS]["arm64"]
    assert table["@rpath/libtorch.dylib"].startswith("provided by torch")

    merged = scan_together([et, extra["torch_macos"]])
    table = resolution_table(merged)[EXT_MACOS]["arm64"]
    assert table["@rpath/libtorch.dylib"] == "torch/lib/libtorch.dylib"
    assert table["@rpath/libc10.dylib"] == "torch/lib/libc10.dylib"
    report = audit([et, extra["torch_macos"]], None, together=True)
    assert report.ok and report.findings == [], [(f.code, f.message) for f in report.findings]


def test_the_needing_wheel_must_require_the_providing_one(fixture_wheels, extra):
    """Resolved across wheels, but executorch does not declare torch: installed alone it breaks."""
    ok = audit([fixture_wheels["linux_clean"], extra["torch_linux"]], None, together=True)
    assert ok.findings == [], [(f.code, f.message) for f in ok.findings]
    report = audit([fixture_wheels["linux_no_torch_requirement"], extra["torch_linux"]], None, together=True)
    wa505 = by_code(report.findings, "WA505")
    assert len(wa505) == 1
    f = wa505[0]
    assert f.paths == [EXT_LINUX, "torch/lib/libc10.so", "torch/lib/libtorch.so"]
    assert "libtorch.so (-> torch/lib/libtorch.so)" in f.message
    assert "executorch's METADATA has no Requires-Dist: torch" in f.message
    assert by_code(report.findings, "WA501") == []


# --------------------------------------------------------------------------------------------
# what each wheel brings along, and what cannot be merged


def test_member_findings_are_kept_and_name_their_wheel(fixture_wheels, extra):
    tampered = fixture_wheels["linux_tampered"]
    report = audit([tampered, extra["torch_linux"]], None, together=True)
    wa002 = by_code(report.findings, "WA002")
    assert wa002 and all(f.message.startswith(f"{tampered.name}: executorch/lib/libexecutorch_etdump.so")
                         for f in wa002), [f.message for f in wa002]
    assert by_code(audit(extra["torch_linux"], None).findings, "WA002") == []


def test_platform_tags_are_checked_per_wheel(fixture_wheels, extra):
    """An arm64-only wheel beside a universal2 one: its binaries are held to its own tag (merging
    the tags would demand x86_64 slices of them), while the universal2 wheel's own thin binary is
    still a WA503, named with its wheel."""
    report = audit([fixture_wheels["macos_universal2"], extra["mlx"]], None, together=True,
                   select=["WA503", "WA504"])
    assert report.findings == [], [(f.code, f.message) for f in report.findings]
    thin = fixture_wheels["macos_universal2_thin_one"]
    report = audit([thin, extra["mlx"]], None, together=True, select=["WA503"])
    assert [(f.code, f.paths) for f in report.findings] == [("WA503", ["executorch/lib/libexecutorch_etdump.dylib"])]
    assert report.findings[0].message.startswith(thin.name + ": ")


def test_wheels_for_different_platforms_cannot_be_installed_together(fixture_wheels, extra):
    report = audit([fixture_wheels["linux_clean"], extra["mlx"]], None, together=True, select=["WA503"])
    assert len(report.findings) == 1
    f = report.findings[0]
    assert "cannot be installed together" in f.message
    assert "macos arm64" in f.message and "linux x86_64" in f.message
    # a pure wheel installs anywhere
    ok = audit([fixture_wheels["linux_clean"], extra["shared_a"]], None, together=True, select=["WA503"])
    assert ok.findings == []


def test_the_same_path_in_two_wheels(extra):
    merged = scan_together([extra["shared_a"], extra["shared_b"]])
    clashes = by_code(evaluate(merged, None), "WA002")
    # common/__init__.py is identical in both (one file once installed); common/config.py is not
    assert [(f.subject, f.paths) for f in clashes] == [("common/config.py", ["common/config.py"])]
    assert extra["shared_a"].name in clashes[0].message and extra["shared_b"].name in clashes[0].message
    # the tree holds each path once, from the wheel given first
    assert merged.files.count("common/config.py") == 1
    assert merged.origins["common/config.py"] == extra["shared_a"].name
    assert merged.origins["beta/__init__.py"] == extra["shared_b"].name


def test_the_same_distribution_twice_is_a_usage_error(capsys, fixture_wheels):
    with pytest.raises(NotTogether, match="both the distribution executorch"):
        scan_together([fixture_wheels["macos_clean"], fixture_wheels["macos_fused"]])
    code, _out, err = _run(capsys, "check", "--together", fixture_wheels["macos_clean"], fixture_wheels["macos_fused"])
    assert code == 2
    assert "one install holds one version of a distribution" in err


def test_merged_wheel_shape(fixture_wheels, extra):
    et, mlx = fixture_wheels["macos_clean"], extra["mlx"]
    a, b = scan(et), scan(mlx)
    merged = merge_wheels([a, b])
    assert isinstance(merged, TogetherWheel)
    assert merged.name == "executorch+mlx-metal" and merged.version == "1.6.0+0.32.4"
    assert merged.path == et.parent / f"{et.name}+{mlx.name}"
    assert [str(t) for t in merged.tags] == ["cp311-cp311-macosx_14_0_arm64", "py3-none-macosx_14_0_arm64"]
    assert merged.traits.os == {"macos"} and merged.traits.arch == {"arm64"}
    assert merged.members == [a, b]
    assert {lib.path for lib in merged.libraries} == {lib.path for lib in a.libraries} | {LIBMLX}
    assert merged.origins[LIBMLX] == mlx.name and merged.origins[DELEGATE] == et.name
    assert set(merged.requires_dist) == {"torch", "numpy", "executorch"}
    assert a.origins == {} and b.defects == []  # the members are not modified
    assert merged.owners("executorch::backends::mlx::MLXBackend::init") == [DELEGATE, LIBMLX]


# --------------------------------------------------------------------------------------------
# command line


def test_check_together_cli_json(capsys, fixture_wheels, extra):
    et, mlx = fixture_wheels["macos_clean"], extra["mlx"]
    code, out, _ = _run(capsys, "check", "--together", et, mlx, "--rules", RUNTIMES, "--select", "WA2",
                        "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert len(data["wheels"]) == 1
    schema = json.loads((resources.files("wheelaudit") / "schemas" / "check.schema.json").read_text())
    jsonschema.validate(data, schema)
    w = data["wheels"][0]
    assert w["name"] == "executorch+mlx-metal"
    assert Path(w["path"]).name == f"{et.name}+{mlx.name}"
    assert [(f["code"], f["subject"]) for f in w["findings"]] == [("WA201", "mlx")]
    for fmt in ("text", "sarif", "github", "junit"):
        code, out, err = _run(capsys, "check", "--together", et, mlx, "--rules", RUNTIMES, "--select", "WA2",
                              "--format", fmt)
        assert code == 1 and "mlx" in out and not err, (fmt, err)
    # without --together the same wheels are audited one by one, and pass
    code, out, _ = _run(capsys, "check", et, mlx, "--rules", RUNTIMES, "--select", "WA2")
    assert code == 0, out


def test_dups_together(capsys, fixture_wheels, extra):
    et, mlx = fixture_wheels["macos_clean"], extra["mlx"]
    code, out, _ = _run(capsys, "dups", "--together", et, mlx, "--format", "json")
    assert code == 0
    data = json.loads(out)
    across = [g for g in data["groups"] if len({lib["wheel"] for lib in g["libraries"]}) > 1]
    assert across, data["groups"]
    g = next(g for g in across if g["key"] == "executorch::backends")
    assert g["strength"] == "strong"
    assert sorted((lib["path"], lib["wheel"]) for lib in g["libraries"]) == [(DELEGATE, et.name), (LIBMLX, mlx.name)]
    code, out, _ = _run(capsys, "dups", "--together", et, mlx)
    assert code == 0 and "wheels" in out and "mlx_metal-0.32.4" in out
    # several wheels without --together: each wheel on its own, one after the other
    code, out, _ = _run(capsys, "dups", et, mlx)
    assert code == 0 and et.name in out and mlx.name in out
    # one wheel: as before, no wheel column
    code, out, _ = _run(capsys, "dups", et, "--format", "json")
    assert code == 0 and all("wheel" not in lib for g in json.loads(out)["groups"] for lib in g["libraries"])


def test_executorch_rules_together_with_mlx(fixture_wheels, extra):
    """The shipped executorch rules: alone the wheel passes; beside an mlx wheel, its MLX is the
    second copy (WA201 for mlx_runtime) and there are two metallibs (WA301)."""
    rules = load_rules(EXECUTORCH)
    report = audit([fixture_wheels["macos_clean"], extra["mlx"]], rules, together=True)
    errors = sorted((f.code, f.subject) for f in report.findings if f.severity == "error")
    # the mlx wheel's library also exports the delegate namespace (it is a copy of the delegate):
    # backend_mlx has two definers too, and the library matches no expected executorch name
    assert ("WA201", "mlx_runtime") in errors and ("WA301", "metallib") in errors
    assert ("WA201", "backend_mlx") in errors
    assert all(code in {"WA201", "WA301", "WA501"} for code, _ in errors), errors



# --------------------------------------------------------------------------------------------
# the pytest plugin, --wheelaudit-together

pytest_plugins = ["pytester"]


def test_plugin_together_fails_the_component_naming_both_wheels(pytester, fixture_wheels, extra):
    import shutil

    pytester.makeini("[pytest]\n")
    rules = ROOT / "rules" / "runtimes.toml"
    shutil.copy(rules, pytester.path / "rules.toml")
    dist = pytester.path / "dist"
    dist.mkdir()
    a = shutil.copy(fixture_wheels["macos_clean"], dist)
    b = shutil.copy(extra["mlx"], dist)
    res = pytester.runpytest("--wheelaudit", str(a), str(b), "--wheelaudit-rules", "rules.toml",
                             "--wheelaudit-together", "-p", "no:cacheprovider", "-k", "component")
    out = res.stdout.str()
    # one item per rule for the set, not per wheel; the mlx component fails naming both wheels
    assert "component::mlx FAILED" in out or "component::mlx" in out
    res.assert_outcomes(failed=1, passed=6)
    assert "WA201" in out and "executorch-1.6.0" in out and "mlx_metal-0.32.4" in out
    # alone, each wheel passes the same items
    for w in (a, b):
        alone = pytester.runpytest("--wheelaudit", str(w), "--wheelaudit-rules", "rules.toml",
                                   "-p", "no:cacheprovider", "-k", "component")
        alone.assert_outcomes(passed=7)
