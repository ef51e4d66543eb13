"""``wheelaudit diff`` (wheelaudit.review.diff) and ``wheelaudit init`` (wheelaudit.review.init)."""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from wheelaudit.cli.main import main
from wheelaudit.review.diff import diff_wheels, library_stem, name_glob_parts, unhashed
from wheelaudit.review.init import starter_ruleset
from wheelaudit.ruleset.load import parse_rules
from wheelaudit.scanner import scan

MLX = "executorch/lib/libexecutorch_backend_mlx.dylib"
MLX_COPY = "executorch/backends/mlx/libexecutorch_backend_mlx.dylib"
C_MACOS = "executorch/extension/pybindings/_C.cpython-311-darwin.so"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "120")


# --------------------------------------------------------------------------------------------
# diff


def test_diff_mlx_fused_into_c(capsys, fixture_wheels):
    code, out, _ = _run(capsys, "diff", fixture_wheels["macos_clean"], fixture_wheels["macos_fused"],
                        "--format", "json")
    assert code == 0
    d = json.loads(out)
    assert [x["path"] for x in d["libraries"]["removed"]] == [MLX]
    assert d["libraries"]["added"] == [] and d["libraries"]["renamed"] == []
    owners = {o["key"]: o for o in d["owners"]}
    for key in ("executorch::backends::mlx", "mlx::core"):
        assert owners[key]["change"] == "moved", owners
        assert owners[key]["old"] == [MLX] and owners[key]["new"] == [C_MACOS]
    assert owners["executorch::backends::mlx"]["evidence"] == "strong exports"
    assert owners["mlx::core"]["evidence"] == "local symbols"  # MLX is hidden: its locals tell
    (c,) = [x for x in d["libraries"]["changed"] if x["path"] == C_MACOS]
    assert c["dependencies"]["removed"] == ["@rpath/libexecutorch_backend_mlx.dylib"]
    assert c["size"]["delta"] == c["size"]["new"] - c["size"]["old"] != 0
    assert c["size"]["percent"] == pytest.approx(100 * c["size"]["delta"] / c["size"]["old"], abs=0.01)
    assert c["exports"]["new"] > c["exports"]["old"]
    assert d["files"] == {"added": ["executorch/extension/pybindings/mlx.metallib"],
                          "removed": ["executorch/lib/mlx.metallib"]}
    assert d["duplicates"] == {"new": [], "resolved": []}


def test_diff_text(capsys, fixture_wheels):
    code, out, _ = _run(capsys, "diff", fixture_wheels["macos_clean"], fixture_wheels["macos_fused"])
    assert code == 0
    assert f"  removed  {MLX}  (49." in out or f"  removed  {MLX}  (" in out
    block = out[out.index("Owners that changed"):]
    assert "moved    executorch::backends::mlx  (namespace; strong exports)" in block
    assert f"      was  {MLX}" in block and f"      now  {C_MACOS}" in block
    assert "− dep    @rpath/libexecutorch_backend_mlx.dylib" in out
    assert "  − executorch/lib/mlx.metallib" in out and "  + executorch/extension/pybindings/mlx.metallib" in out
    assert out.rstrip().endswith("0 added, 1 removed, 0 renamed, 1 changed, 6 unchanged; 2 owner changes, "
                                 "0 new duplicate groups")
    assert all(len(line) <= 120 for line in out.splitlines())


def test_diff_new_duplicate(fixture_wheels):
    d = diff_wheels(scan(fixture_wheels["macos_clean"]), scan(fixture_wheels["macos_dup_delegate"]))
    assert [b.path for b in d.added] == [MLX_COPY]
    strong = [g for g in d.new_dups if g.strength == "strong"]
    assert [(g.key, sorted(g.paths)) for g in strong] == [("executorch::backends", [MLX_COPY, MLX])]
    m = d.owners_moved("executorch::backends::mlx")
    assert m is not None and m.change == "gained" and m.new == [MLX_COPY, MLX]
    back = diff_wheels(scan(fixture_wheels["macos_dup_delegate"]), scan(fixture_wheels["macos_clean"]))
    assert [g.key for g in back.resolved_dups] == ["executorch::backends", "mlx::core"]
    assert back.new_dups == []


def test_diff_rpath_and_nothing(capsys, fixture_wheels):
    d = diff_wheels(scan(fixture_wheels["macos_clean"]), scan(fixture_wheels["macos_build_rpath"]))
    (c,) = d.changed
    assert c.path == "executorch/lib/libexecutorch_backend_xnnpack.dylib"
    assert c.rpaths_added == ["/Users/runner/work/executorch/cmake-out/lib"] and not c.rpaths_removed
    assert not d.moves and not d.added and not d.removed
    code, out, _ = _run(capsys, "diff", fixture_wheels["linux_clean"], fixture_wheels["linux_clean"])
    assert code == 0 and "no change in libraries, owners, duplicates or data files" in out


def _unpack(whl: Path, dest: Path) -> Path:
    with zipfile.ZipFile(whl) as z:
        z.extractall(dest)
    return dest


def test_diff_rename_by_identity_and_by_exports(tmp_path, fixture_wheels):
    old = _unpack(fixture_wheels["linux_clean"], tmp_path / "old")
    new = _unpack(fixture_wheels["linux_clean"], tmp_path / "new")
    (new / "executorch/lib2").mkdir()
    # moved to another directory: same SONAME
    shutil.move(new / "executorch/lib/libexecutorch_etdump.so", new / "executorch/lib2/libexecutorch_etdump.so")
    d = diff_wheels(scan(old), scan(new))
    assert [(r.old, r.new, r.why) for r in d.renamed] == [
        ("executorch/lib/libexecutorch_etdump.so", "executorch/lib2/libexecutorch_etdump.so",
         "same identity libexecutorch_etdump.so")]
    assert not d.added and not d.removed
    # the namespace follows the rename: no owner "moved" because of it
    assert d.owners_moved("executorch::etdump") is None


# --------------------------------------------------------------------------------------------
# init


@pytest.mark.parametrize("scenario", ["macos_clean", "linux_clean", "macos_universal2", "macos_bad_install_name",
                                      "linux_hidden_copy"])
def test_init_round_trips(capsys, tmp_path, fixture_wheels, scenario):
    wheel = fixture_wheels[scenario]
    code, text, _ = _run(capsys, "init", wheel)
    assert code == 0
    rs = parse_rules(text, "init.toml")
    assert rs.name == "executorch"
    assert rs.libraries is not None and rs.libraries.expected
    assert len(rs.components) >= 5
    assert all(c.strong_only and c.owner is not None and c.symbols for c in rs.components)
    rules = tmp_path / "rules.toml"
    rules.write_text(text)
    code, out, _ = _run(capsys, "check", wheel, "--rules", rules)
    assert code == 0, out
    assert out.splitlines()[0].endswith(": OK")


def test_init_content_macos(fixture_wheels):
    text = starter_ruleset(scan(fixture_wheels["macos_clean"]))
    rs = parse_rules(text)
    assert rs.libraries.identity == "filename"
    assert [g.pattern for g in rs.libraries.scope] == ["executorch/extension/pybindings/*", "executorch/lib/*"]
    assert rs.libraries.expected[1].match("executorch/lib/libexecutorch_backend_mlx.so")  # {so,dylib}
    comps = {c.name: c for c in rs.components}
    mlx = comps["executorch_backends_mlx"]
    assert mlx.owner.pattern == "executorch/lib/libexecutorch_backend_mlx.*"
    assert {s.entry for s in mlx.symbols} == {"executorch::backends::mlx::MLXBackend::init",
                                              "executorch::backends::mlx::MLXBackend::is_available"}
    assert comps["executorch_runtime"].owner.pattern == "executorch/lib/libexecutorch.*"
    # kernels share torch::executor::native: components named after their libraries
    assert comps["libexecutorch_kernels_optimized"].owner.pattern == "executorch/lib/libexecutorch_kernels_optimized.*"
    (f,) = rs.files
    assert f.glob.pattern == "**/mlx.metallib" and f.count == 1 and f.beside == "executorch_backends_mlx"
    assert rs.linkage is not None
    assert "torch" not in rs.linkage.provided_by  # (the provider table knows torch: nothing to declare)
    # every entry says how it was inferred
    for header in ("[libraries]", "[[component]]", "[[file]]", "[linkage]"):
        i = text.index(header)
        assert "# inferred:" in text[i:i + 400]


def test_init_rules_catch_the_planted_problems(capsys, tmp_path, fixture_wheels):
    code, text, _ = _run(capsys, "init", fixture_wheels["macos_clean"])
    rules = tmp_path / "rules.toml"
    rules.write_text(text)
    code, out, _ = _run(capsys, "check", fixture_wheels["macos_dup_delegate"], "--rules", rules, "--format", "json")
    assert code == 1
    found = {(f["code"], f["subject"]) for f in json.loads(out)["wheels"][0]["findings"]}
    assert ("WA201", "executorch_backends_mlx") in found
    assert ("WA101", MLX_COPY) not in found  # out of the inferred scope, but the duplicate is caught
    code, out, _ = _run(capsys, "check", fixture_wheels["macos_fused"], "--rules", rules, "--format", "json")
    assert code == 1
    found = {(f["code"], f["subject"]) for f in json.loads(out)["wheels"][0]["findings"]}
    assert ("WA203", "executorch_backends_mlx") in found  # defined by _C, not by its owner


def test_init_identity_off_when_names_differ(fixture_wheels):
    text = starter_ruleset(scan(fixture_wheels["macos_bad_install_name"]))
    rs = parse_rules(text)
    assert rs.libraries.identity == "off"
    assert "executorch/lib/libexecutorch_etdump.dylib has identity @rpath/libetdump.dylib" in text


def test_init_sentinels_are_unique_to_the_owner(fixture_wheels):
    # backend_xnnpack carries a hidden (local) copy of get_threadpool: local symbols count as
    # definitions, so get_threadpool cannot be a sentinel of the thread pool's component
    rs = parse_rules(starter_ruleset(scan(fixture_wheels["linux_hidden_copy"])))
    (tp,) = [c for c in rs.components if c.name == "executorch_extension"]
    entries = [s.entry for s in tp.symbols]
    assert entries and "executorch::extension::threadpool::get_threadpool" not in entries
    clean = parse_rules(starter_ruleset(scan(fixture_wheels["linux_clean"])))
    (tp,) = [c for c in clean.components if c.name == "executorch_extension"]
    assert "executorch::extension::threadpool::get_threadpool" in [s.entry for s in tp.symbols]


# --------------------------------------------------------------------------------------------
# names repair tools give vendored libraries (real names from pillow, scipy, shapely wheels)


@pytest.mark.parametrize("name, stem, tool, glob", [
    ("libXau-154567c4.so.6.0.0", "libXau", "auditwheel", "libXau-*.so*"),
    ("libopenjp2-05423b53.so", "libopenjp2", "auditwheel", "libopenjp2-*.so*"),
    ("libgfortran-040039e1-0352e75f.so.5.0.0", "libgfortran", "auditwheel", "libgfortran-*.so*"),  # vendored twice
    ("libscipy_openblas-68440149.so", "libscipy_openblas", "auditwheel", "libscipy_openblas-*.so*"),
    ("geos_c-6dd9fd915eef8a7928285416bef1e666.dll", "geos_c", "delvewheel", "geos_c-*.dll"),
    ("msvcp140-0fa7eb792d3fbcf2233e4ea47e9144b9.dll", "msvcp140", "delvewheel", "msvcp140-*.dll"),
    ("libXau.6.0.0.dylib", "libXau", None, "libXau{,.*}.dylib"),  # delocate keeps the name
    ("libfoo.so.1.2.3", "libfoo", None, "libfoo.so*"),
    ("libglib-2.0.so.0", "libglib-2", None, "libglib-2.0.so*"),
    ("libfoo.so", "libfoo", None, None),
    ("_imaging.cpython-311-x86_64-linux-gnu.so", "_imaging", None, None),
    ("libz.1.3.1.zlib-ng.dylib", "libz", None, None),
    ("libfoo-deadbee.so", "libfoo-deadbee", None, None),  # seven hex digits: not a hash
])
def test_repair_tool_names(name, stem, tool, glob):
    assert library_stem(name) == stem
    assert unhashed(name)[1] == tool
    parts = name_glob_parts(name)
    assert (None if parts is None else parts[0] + parts[1]) == glob


def test_diff_owners_ignore_linker_boilerplate():
    from wheelaudit.platforms.traits import traits_from_tags
    from wheelaudit.model.binary import Binary, Slice, Symbol
    from wheelaudit.scanner import Wheel

    def lib(path, *names):
        exports = [Symbol(n, n, "global", "func") for n in names]
        exports.append(Symbol("DEMO_1.0", "DEMO_1.0", "global", "data", "DEMO_1.0"))  # a version node
        return Binary(path=path, format="elf", size=100, slices=[Slice(arch="x86_64", exports=exports)])

    def wheel(*libs):
        return Wheel(path=Path("demo-1.0-py3-none-any.whl"), name="demo", version="1.0", tags=[],
                     traits=traits_from_tags([], "1.0"), files=[b.path for b in libs], libraries=list(libs))

    boiler = ("_init", "_fini", "_edata", "_end", "__bss_start")
    old = wheel(lib("demo/liba.so", *boiler, "alpha_one", "alpha_two"))
    new = wheel(lib("demo/liba.so", *boiler, "alpha_one", "alpha_two"), lib("demo/libb.so", *boiler, "beta_one"))
    d = diff_wheels(old, new)
    assert [b.path for b in d.added] == ["demo/libb.so"]
    assert d.moves == []  # not "(no prefix) gained demo/libb.so" for its _init and _edata
