"""The release as a whole: ``check --baseline`` (WA801-WA804) and ``check --release``
(WA811-WA813), run as a user runs them, on the wheels of fixtures/make_release_wheels.py (built
from source by fixtures/build_release.sh: gcc, clang + ld64.lld, MinGW-w64)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str, cwd: Path | None = None) -> tuple[int, dict]:
    proc = subprocess.run([sys.executable, "-m", "wheelaudit", "check", *args, "--format", "json"],
                          capture_output=True, text=True, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def findings(report: dict, prefix: str = "WA8") -> list[dict]:
    return [f for w in report["wheels"] for f in w["findings"] if f["code"].startswith(prefix)]


def against(rw: dict[str, Path], new: str, old: str, *more: str) -> tuple[int, list[dict]]:
    code, report = run(str(rw[new]), "--baseline", str(rw[old]), *more)
    return code, findings(report)


def rules(tmp_path: Path, text: str) -> str:
    p = tmp_path / "rules.toml"
    p.write_text("version = 1\n" + text)
    return str(p)


# ---- WA801: exports removed, on every format -------------------------------------------------

@pytest.mark.parametrize("new,old,lib", [("elf_drop_same", "elf_base", "reldemo/lib/libcore.so"),
                                         ("macho_drop", "macho_base", "reldemo/lib/libcore.dylib"),
                                         ("pe_drop", "pe_base", "reldemo/lib/core.dll")])
def test_removed_exports_are_named_demangled_with_the_mangled_names_in_json(release_wheels, new, old, lib):
    _, fs = against(release_wheels, new, old)
    assert [f["code"] for f in fs] == ["WA801"]
    f = fs[0]
    assert f["paths"] == [lib]
    assert f["symbols"] == ["_ZN4demo6Engine5countEv", "core_b"]  # all of them, mangled
    assert "demo::Engine::count()" in f["message"] and "core_b" in f["message"]
    assert "1.0.0" in f["message"]


def test_a_rebuild_that_drops_an_export_fails_the_gate(release_wheels):
    code, fs = against(release_wheels, "elf_drop_same", "elf_base")
    assert code == 1 and fs[0]["severity"] == "error" and "rebuild of the same version" in fs[0]["message"]


# ---- severity by the two versions, [abi] and the consumer surface ------------------------------

PUBLIC = '[abi]\npublic = ["reldemo/lib/*"]\n'


@pytest.mark.parametrize("new,old,abi,severity", [
    ("elf_drop_patch", "elf_base", "", "warning"),           # nobody promised libcore's exports
    ("elf_drop_patch", "elf_base", PUBLIC, "error"),         # a patch release keeps public exports
    ("elf_drop_patch_pc", "elf_base", "", "error"),          # public: its .pc file offers it
    ("elf_drop_minor", "elf_base", PUBLIC, "error"),         # semver at 1.0+: a minor release keeps them
    ("elf_drop_major", "elf_base", PUBLIC, "warning"),       # a major release may break them
    ("elf_drop_0x", "elf_base_0x", PUBLIC, "warning"),       # below 1.0 a minor release may
    ("elf_drop_major", "elf_base", '[abi]\npolicy = "strict"\n', "error"),
])
def test_severity_follows_versions_policy_and_public_libraries(release_wheels, tmp_path, new, old, abi, severity):
    extra = ["--rules", rules(tmp_path, abi)] if abi else []
    code, fs = against(release_wheels, new, old, *extra)
    assert [(f["code"], f["severity"]) for f in fs] == [("WA801", severity)]
    assert code == (1 if severity == "error" else 0)


def test_policy_off_turns_the_comparison_off(release_wheels, tmp_path):
    code, fs = against(release_wheels, "elf_drop_same", "elf_base", "--rules", rules(tmp_path, '[abi]\npolicy = "off"\n'))
    assert (code, fs) == (0, [])


# ---- WA802: identity, version nodes ------------------------------------------------------------

@pytest.mark.parametrize("new,old,before,after", [
    ("elf_soname", "elf_base", "libcore.so.1", "libcore.so.2"),
    ("macho_install_name", "macho_base", "@rpath/libcore.1.dylib", "@rpath/libcore.2.dylib"),
])
def test_identity_change(release_wheels, new, old, before, after):
    _, fs = against(release_wheels, new, old)
    assert [f["code"] for f in fs] == ["WA802"]
    assert f"{before} → {after}" in fs[0]["message"]


def test_version_node_removed(release_wheels):
    _, fs = against(release_wheels, "elf_node", "elf_base")
    assert [f["code"] for f in fs] == ["WA802"]
    assert "core_b@CORE_1" in fs[0]["symbols"] and "CORE_1" in fs[0]["message"]


# ---- WA803: libraries and extension modules gone, or moved ---------------------------------------

def test_library_and_extension_module_removed(release_wheels):
    _, fs = against(release_wheels, "elf_removed", "elf_base")
    assert sorted((f["code"], f["subject"]) for f in fs) == [("WA803", "reldemo._gone"),
                                                             ("WA803", "reldemo/lib/libextra.so")]
    module = next(f for f in fs if f["subject"] == "reldemo._gone")
    assert "private" in module["message"] and module["severity"] == "warning"


def test_a_moved_library_is_one_finding_and_keeps_its_exports(release_wheels):
    _, fs = against(release_wheels, "elf_moved", "elf_base")
    assert [f["code"] for f in fs] == ["WA803"]  # no WA801: its exports are compared at the new path
    assert fs[0]["paths"] == ["reldemo/lib/libcore.so", "reldemo/core/libcore.so"]
    assert "moved to reldemo/core/libcore.so" in fs[0]["message"]


def test_a_rebuild_that_renames_its_vendored_library_is_clean(release_wheels):
    # new repair hash for reldemo.libs/libvend-*.so.1, the extension module's other export gone,
    # and a newer manylinux tag: nothing a consumer binds to changed
    code, fs = against(release_wheels, "elf_rebuild", "elf_base")
    assert (code, fs) == (0, [])


# ---- WA804 and pairing -----------------------------------------------------------------------------

def test_pairing_by_platform_and_a_dropped_platform(release_wheels):
    rw = release_wheels
    code, report = run(str(rw["macho_drop"]), str(rw["elf_rebuild"]), "--baseline",
                       str(rw["elf_base"]), str(rw["macho_base"]), str(rw["pe_base"]))
    fs = findings(report)
    assert sorted(f["code"] for f in fs) == ["WA801", "WA804"]
    wa804 = next(f for f in fs if f["code"] == "WA804")
    assert wa804["subject"] == rw["pe_base"].name
    entry = next(w for w in report["wheels"] if any(f["code"] == "WA804" for f in w["findings"]))
    assert entry["path"] == str(rw["pe_base"])


# ---- --release -------------------------------------------------------------------------------------

def _dist(tmp_path: Path, rw: dict[str, Path], *names: str) -> Path:
    d = tmp_path / "dist"
    d.mkdir()
    for n in names:
        shutil.copy(rw[n], d)
    return d


def test_a_consistent_release_passes(release_wheels, tmp_path):
    d = _dist(tmp_path, release_wheels, "macho_base", "pe_base")
    toml = rules(tmp_path, '[release]\nplatforms = ["macosx_14_0_arm64", "win_amd64"]\n')
    code, report = run(str(d), "--release", "--rules", toml)
    assert (code, findings(report)) == (0, [])
    assert report["wheels"][-1]["path"] == str(d)  # the release's own entry


def test_release_version_platforms_and_modules(release_wheels, tmp_path):
    d = _dist(tmp_path, release_wheels, "elf_extra_module", "macho_base", "pe_drop")
    toml = rules(tmp_path, '[release]\nplatforms = ["manylinux_2_28_x86_64", "macosx_14_0_arm64", "win_amd64", "win_arm64"]\n')
    code, report = run(str(d), "--release", "--rules", toml)
    fs = findings(report)
    assert code == 1
    wa812 = [f for f in fs if f["code"] == "WA812"]
    assert len(wa812) == 1 and "reldemo-1.0.1-cp311-cp311-win_amd64.whl" in wa812[0]["message"]
    assert [f["subject"] for f in fs if f["code"] == "WA813"] == ["win_arm64"]
    (wa811,) = [f for f in fs if f["code"] == "WA811"]
    assert sorted(wa811["symbols"]) == ["reldemo._gone", "reldemo.linux_only", "reldemo/lib/extra"]
    assert wa811["severity"] == "warning" and "manylinux_2_17_x86_64" in wa811["message"]


def test_release_only_declares_platform_specific_modules(release_wheels, tmp_path):
    d = _dist(tmp_path, release_wheels, "elf_extra_module", "macho_base")
    toml = rules(tmp_path, '[release]\nonly = { "reldemo/linux_only.py" = { os = "linux" }, '
                           '"reldemo/lib/libextra*" = { os = "linux" }, "reldemo/_gone*" = { os = "macos" } }\n')
    _, report = run(str(d), "--release", "--rules", toml)
    (wa811,) = findings(report, "WA811")  # _gone is declared for macOS but ships on Linux
    assert wa811["symbols"] == ["reldemo._gone"] and "declared platform-specific" in wa811["message"]


# ---- diff: the same engine's report ------------------------------------------------------------------

def _diff(old: Path, new: Path, *more: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "wheelaudit", "diff", str(old), str(new), *more],
                          capture_output=True, text=True, env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_diff_shows_a_folder_moved_as_one_line(release_wheels):
    out = _diff(release_wheels["elf_base"], release_wheels["elf_folder_moved"])
    libs = out[out.index("Libraries"):].splitlines()[1:]
    assert [line for line in libs if line.startswith("  ") and line.strip()][0] == \
        "  moved    reldemo/lib/ → reldemo/_lib/  (2 libraries, file names kept)"
    assert "renamed  " not in out and "Owners that changed" not in out


def test_diff_leads_with_the_breaks_check_baseline_reports(release_wheels):
    out = _diff(release_wheels["elf_base"], release_wheels["elf_removed"])
    head = out[out.index("Breaks a consumer sees"):out.index("Libraries")]
    assert "WA803 warning  extension module reldemo._gone" in head
    # wrapped between words: every path of the wheel shows whole
    assert "reldemo/_gone.cpython-311-x86_64-linux-gnu.so" in head and "reldemo/lib/libextra.so" in head
    assert all(len(line) <= 80 for line in head.splitlines())


def test_owner_lists_show_whole_paths():
    from wheelaudit.review.diff import whole_paths

    paths = ["executorch/extension/pybindings/_portable_lib.cpython-311-darwin.so",
             "executorch/lib/libexecutorch_backend_mlx.dylib", "executorch/lib/libexecutorch.dylib"]
    text = whole_paths(paths, 80)
    assert text == paths[0] + " (+2 more)"
    assert whole_paths(paths, 1000) == ", ".join(paths)


# ---- init from a release ---------------------------------------------------------------------------

def test_init_over_a_release_writes_rules_that_pass_on_every_wheel(release_wheels, tmp_path):
    d = _dist(tmp_path, release_wheels, "elf_base", "macho_base", "pe_base")
    one = subprocess.run([sys.executable, "-m", "wheelaudit", "init", str(release_wheels["elf_base"])],
                         capture_output=True, text=True, check=True).stdout
    (tmp_path / "linux.toml").write_text(one)
    code, report = run(str(d), "--rules", str(tmp_path / "linux.toml"))
    assert code == 1  # the Linux wheel's rules do not hold on the other platforms' wheels
    proc = subprocess.run([sys.executable, "-m", "wheelaudit", "init", str(d)], capture_output=True, text=True, check=True)
    (tmp_path / "release.toml").write_text(proc.stdout)
    assert 'platforms = ["macosx_11_0_arm64", "manylinux_2_17_x86_64", "win_amd64"]' in proc.stdout
    assert '"reldemo/_gone.*" = { os = "linux" }' in proc.stdout
    code, report = run(str(d), "--release", "--rules", str(tmp_path / "release.toml"))
    assert code == 0
    assert [f for w in report["wheels"] for f in w["findings"]] == []


# ---- the Python API --------------------------------------------------------------------------------

def test_api_takes_the_baseline_and_the_release_mode(release_wheels, tmp_path):
    import wheelaudit

    rw = release_wheels
    report = wheelaudit.audit([rw["elf_drop_same"], rw["macho_base"]], baseline=[rw["elf_base"], rw["pe_base"]],
                              release=True)
    codes = sorted(f.code for f in report.findings if f.code.startswith("WA8"))
    assert codes == ["WA801", "WA804", "WA811"] and not report.ok  # (libextra, _gone: Linux only)
    assert [wr.wheel.path for wr in report.wheels] == [rw["elf_drop_same"], rw["macho_base"], rw["pe_base"],
                                                        Path(os.path.commonpath([rw["elf_drop_same"].parent,
                                                                                 rw["macho_base"].parent]))]


def test_messages_name_symbols_without_their_parameters():
    from wheelaudit.checks.release.baseline import short_name

    assert short_name("ns::f(at::Tensor const&, long)") == "ns::f(…)"
    assert short_name("ns::g()") == "ns::g()"
    assert short_name("ns::h<void (*)(int)>(int)") == "ns::h<void (*)(int)>(…)"
    assert short_name("ns::A::operator()(int)") == "ns::A::operator()(…)"
    assert short_name("core_b") == "core_b"


def test_waivers_of_release_codes_apply_where_their_findings_are(release_wheels, tmp_path):
    toml = rules(tmp_path, '[[waive]]\ncode = "WA801"\npath = "reldemo/lib/libcore.so"\nreason = "dropped on purpose"\n'
                           '[[waive]]\ncode = "WA811"\ntarget = "reldemo.linux_only"\nreason = "a Linux helper"\n')
    code, fs = against(release_wheels, "elf_drop_same", "elf_base", "--rules", toml)
    assert code == 0 and [(f["code"], f.get("waived")) for f in fs] == [("WA801", "dropped on purpose")]
    # without --baseline / --release the waivers of their codes are not "unused" (no WA004)
    code, report = run(str(release_wheels["elf_base"]), "--rules", toml)
    assert code == 0 and findings(report, "WA004") == []


def test_a_universal2_baseline_pairs_with_an_arm64_wheel(release_wheels):
    _, fs = against(release_wheels, "macho_drop", "macho_base_universal2")
    assert [f["code"] for f in fs] == ["WA801"]  # compared, and no WA804


def test_a_baseline_is_read_for_its_abi_only(release_wheels):
    from wheelaudit.scanner import scan
    from wheelaudit.scanner.baseline import scan_abi

    full, abi = scan(release_wheels["macho_base"]), scan_abi(release_wheels["macho_base"])
    assert {b.path for b in abi.libraries} == {b.path for b in full.libraries}
    assert abi.library("reldemo/lib/libcore.dylib").exports == full.library("reldemo/lib/libcore.dylib").exports
    # ld64.lld signs arm64 ad hoc: the full scan verifies the signature, the baseline's read does not
    assert [s.signature for s in full.library("reldemo/lib/libcore.dylib").slices] == ["valid"]
    assert [s.signature for s in abi.library("reldemo/lib/libcore.dylib").slices] == [None]
    assert "reldemo/__init__.py" in abi.files  # (the file list stays whole)


def test_diff_duplicate_lines_show_whole_paths(fixture_wheels):
    out = _diff(fixture_wheels["macos_clean"], fixture_wheels["macos_dup_delegate"])  # (80 columns)
    block = out[out.index("Duplicates"):].split("\n\n")[0]
    paths = {"executorch/backends/mlx/libexecutorch_backend_mlx.dylib", "executorch/lib/libexecutorch_backend_mlx.dylib"}
    words = [w.rstrip(",") for line in block.splitlines()[1:] for w in line.split() if "/" in w]
    assert words and all(w in paths for w in words)


def test_diff_header_never_cuts_a_wheel_path(release_wheels):
    old, new = release_wheels["elf_base"], release_wheels["elf_rebuild"]
    out = _diff(old, new)  # (80 columns: these paths are longer)
    assert len(str(old)) > 75
    head = out.splitlines()[:4]
    assert head[0] == f"old  {old.name}" and head[1] == f"     in {old.parent}"
    assert "…" not in "".join(head)
