"""[[metadata]] rules and WA404 (SPEC section 3 and 4): the wheel's Requires-Dist, markers
evaluated by packaging for an environment derived from the wheel's tags (never the host's), and
the bundled ExecuTorch ruleset's variant rules (CUDA requirements, aoti_cuda_shims.lib)."""
from __future__ import annotations

from pathlib import Path

import pytest
from packaging.tags import parse_tag

from wheelaudit import audit_wheels
from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.model.binary import Binary, Slice
from wheelaudit.platforms.requirements import declared_requirements, marker_environments
from wheelaudit.ruleset.errors import RulesError
from wheelaudit.ruleset.load import load_rules, parse_rules
from wheelaudit.scanner import Wheel

ROOT = Path(__file__).resolve().parent.parent
EXECUTORCH = ROOT / "rules" / "executorch.toml"
LINUX = "cp311-cp311-manylinux_2_28_x86_64"
WINDOWS = "cp311-cp311-win_amd64"
MACOS = "cp311-cp311-macosx_14_0_arm64"


def wheel(requires=(), version="1.0", tag=LINUX, files=(), libs=()) -> Wheel:
    tags = sorted(parse_tag(tag), key=str)
    return Wheel(path=Path(f"et-{version}-{tag}.whl"), name="et", version=version, tags=[str(t) for t in tags],
                 traits=traits_from_tags(tags, version), files=list(files) + [b.path for b in libs],
                 libraries=list(libs), requires_dist=list(requires))


def wa404(report) -> list[str]:
    return [f.message for f in report.findings if f.code == "WA404"]


RULES = parse_rules("""
version = 1
[[metadata]]
name = "cpu"
when = { version = "!*+cu*" }
forbid-requires = ["nvidia-*", "cuda_*"]

[[metadata]]
name = "needs-numpy"
require = ["NumPy"]
""")


def test_a_cpu_build_must_not_require_cuda_wheels():
    report = audit_wheels([wheel(["numpy", "nvidia-cuda-runtime-cu12==12.8.90"])], RULES)
    [msg] = wa404(report)
    assert "nvidia-cuda-runtime-cu12" in msg and "forbid-requires nvidia-*" in msg and not report.ok
    assert report.findings[0].severity == "error" and report.findings[0].subject == "cpu"
    # the same requirement in a +cu build: the rule's `when` does not hold
    assert wa404(audit_wheels([wheel(["numpy", "nvidia-cuda-runtime-cu12"], version="1.0+cu128")], RULES)) == []
    # names compare canonically: cuda_* is cuda-*, CUDA.Toolkit is cuda-toolkit
    [msg] = wa404(audit_wheels([wheel(["numpy", "CUDA.Toolkit[cudart]>=12"])], RULES))
    assert "CUDA.Toolkit" in msg


def test_markers_are_evaluated_for_the_wheel_not_the_host():
    req = 'nvidia-cuda-runtime-cu12; platform_system == "Linux" and platform_machine == "x86_64"'
    assert wa404(audit_wheels([wheel(["numpy", req], tag=WINDOWS)], RULES)) == []
    assert wa404(audit_wheels([wheel(["numpy", req], tag=MACOS)], RULES)) == []
    assert len(wa404(audit_wheels([wheel(["numpy", req], tag=LINUX)], RULES))) == 1
    # a Python the wheel does not install on
    old = 'nvidia-cuda-runtime-cu12; python_version < "3.10"'
    assert wa404(audit_wheels([wheel(["numpy", old])], RULES)) == []
    # applies on one architecture of a universal2 wheel: still required there
    arm = 'nvidia-foo; platform_machine == "arm64"'
    [msg] = wa404(audit_wheels([wheel(["numpy", arm], tag="cp311-cp311-macosx_11_0_universal2")], RULES))
    assert "on some of the platforms" in msg


def test_a_requirement_behind_an_extra_counts_for_forbid_requires():
    req = 'nvidia-cudnn-cu12; extra == "cuda"'
    [msg] = wa404(audit_wheels([wheel(["numpy", req])], RULES))
    assert "with extra cuda" in msg
    # an extra whose marker also excludes this platform
    req = 'nvidia-cudnn-cu12; platform_system == "Linux" and extra == "cuda"'
    assert wa404(audit_wheels([wheel(["numpy", req], tag=WINDOWS)], RULES)) == []
    assert len(wa404(audit_wheels([wheel(["numpy", req], tag=LINUX)], RULES))) == 1


def test_require_must_hold_everywhere_without_an_extra():
    assert wa404(audit_wheels([wheel(["numpy>=2"])], RULES)) == []
    [msg] = wa404(audit_wheels([wheel(["torch"])], RULES))
    assert "no Requires-Dist: numpy" in msg
    [msg] = wa404(audit_wheels([wheel(['numpy; extra == "np"'])], RULES))
    assert "only with extra np" in msg
    [msg] = wa404(audit_wheels([wheel(['numpy; sys_platform == "win32"'])], RULES))
    assert "under a marker that excludes this wheel" in msg
    assert wa404(audit_wheels([wheel(['numpy; sys_platform == "win32"'], tag=WINDOWS)], RULES)) == []


def test_an_unparsable_requirement_is_reported_not_a_traceback():
    [msg] = wa404(audit_wheels([wheel(["numpy", "nvidia-x ;;; ==="])], RULES))
    assert "cannot be parsed" in msg


def test_metadata_rule_validation():
    with pytest.raises(RulesError, match='needs "forbid-requires" or "require"'):
        parse_rules('version = 1\n[[metadata]]\nwhen = { os = "linux" }\n')
    with pytest.raises(RulesError, match='unknown key.*did you mean "forbid-requires"'):
        parse_rules('version = 1\n[[metadata]]\nforbid_requires = ["x"]\n')
    with pytest.raises(RulesError, match="not a valid distribution name"):
        parse_rules('version = 1\n[[metadata]]\nrequire = ["not a name"]\n')
    with pytest.raises(RulesError) as exc:
        parse_rules('version = 1\n\n[[metadata]]\nname = "m"\nforbid-requires = 3\n')
    assert exc.value.line == 5 and 'metadata[1] "m"' in str(exc.value)


def test_marker_environments_from_tags():
    [win] = marker_environments(["cp312-cp312-win_amd64"])
    assert (win["sys_platform"], win["platform_system"], win["platform_machine"], win["python_version"],
            win["os_name"], win["implementation_name"]) == ("win32", "Windows", "AMD64", "3.12", "nt", "cpython")
    mac = marker_environments(["cp311-cp311-macosx_11_0_universal2"])
    assert sorted(e["platform_machine"] for e in mac) == ["arm64", "x86_64"]
    [arm] = marker_environments(["pp310-pypy310_pp73-manylinux_2_17_aarch64"])
    assert (arm["platform_machine"], arm["implementation_name"], arm["python_version"]) == ("aarch64", "pypy", "3.10")
    # a py3 wheel is judged for each CPython 3 minor version; `any` has no platform
    pure = marker_environments(["py3-none-any"])
    assert len(pure) > 1 and {e["sys_platform"] for e in pure} == {""}
    decl, bad = declared_requirements(['a; python_version >= "3.12"'], ["py3-none-any"])
    assert bad == [] and decl[0].somewhere and not decl[0].always



def test_the_wheel_keeps_its_tags_and_requirements_parsed(fixture_wheels):
    """Tags and Requires-Dist are read once, into typed values on the wheel, which every check
    reads; a hand-built wheel's tag strings are read the same way."""
    from packaging.requirements import Requirement
    from packaging.tags import Tag

    from wheelaudit import scan

    scanned = scan(fixture_wheels["linux_clean"])
    assert scanned.tags and all(isinstance(t, Tag) for t in scanned.tags)
    assert scanned.requirements is scanned.requirements  # (parsed once)
    assert [text for text, _req in scanned.requirements.parsed] == scanned.requires_dist
    assert all(isinstance(req, Requirement) for _text, req in scanned.requirements.parsed)
    w = wheel(['torch>=2; sys_platform == "linux"', "not a requirement ("], tag="cp311-cp311-manylinux_2_28_x86_64.manylinux_2_17_x86_64")
    assert [str(t) for t in w.tags] == ["cp311-cp311-manylinux_2_17_x86_64", "cp311-cp311-manylinux_2_28_x86_64"]
    assert w.platform_tags == ["manylinux_2_17_x86_64", "manylinux_2_28_x86_64"]
    assert w.requirements.invalid == ("not a requirement (",)
    w.requires_dist.append("numpy")
    assert [text for text, _req in w.requirements.parsed] == ['torch>=2; sys_platform == "linux"', "numpy"]


# --------------------------------------------------------------------------------------------
# The bundled ExecuTorch ruleset's variant rules


def pe(path: str, exports=()) -> Binary:
    from wheelaudit.model.binary import Symbol

    return Binary(path=path, format="pe", size=1, slices=[Slice(arch="x86_64", identity=path.rsplit("/", 1)[-1],
                                                                 exports=[Symbol(n) for n in exports])])


def aoti(report) -> list[tuple[str, str]]:
    """The findings of the aoti_cuda_shims rules (the toy wheels lack the rest of ExecuTorch)."""
    return [(f.code, f.subject) for f in report.findings if f.subject.startswith("aoti_cuda_shims")]


def test_executorch_cpu_wheel_declaring_cuda_runtime_fails():
    rules = load_rules(EXECUTORCH)
    report = audit_wheels([wheel(["numpy", "nvidia-cuda-runtime-cu12"], version="1.5.1")], rules, select=["WA404"])
    [f] = report.findings
    assert f.code == "WA404" and f.subject == "cpu_build_requires_no_cuda" and not report.ok
    ok = audit_wheels([wheel(["numpy", "nvidia-cuda-runtime-cu12"], version="1.5.1+cu128")], rules, select=["WA404"])
    assert ok.findings == []
    # a +cu128 build must not pull in CUDA 13 wheels
    bad = audit_wheels([wheel(["nvidia-cublas-cu13"], version="1.5.1+cu128")], rules, select=["WA404"])
    assert [f.subject for f in bad.findings] == ["cu12_build_requires_cuda_12"]


def test_executorch_cpu_wheel_shipping_the_cuda_import_library_fails():
    rules = load_rules(EXECUTORCH)
    lib = "executorch/backends/cuda/aoti_cuda_shims.lib"
    for tag in (WINDOWS, LINUX):
        report = audit_wheels([wheel(version="1.5.1", tag=tag, files=[lib])], rules, select=["WA3"])
        assert aoti(report) == [("WA301", "aoti_cuda_shims_import_library")]
        # without it, the rule is met and says nothing (no WA003 for a rule that forbids a file)
        assert aoti(audit_wheels([wheel(version="1.5.1", tag=tag)], rules, select=["WA3", "WA003"])) == []


def test_executorch_cuda_windows_wheel_ships_the_import_library_with_the_shims():
    rules = load_rules(EXECUTORCH)
    shims = pe("executorch/backends/cuda/aoti_cuda_shims.dll",
               [s.entry for s in rules.component("aoti_cuda_shims").symbols])
    lib = "executorch/backends/cuda/aoti_cuda_shims.lib"
    both = audit_wheels([wheel(version="1.5.1+cu128", tag=WINDOWS, files=[lib], libs=[shims])], rules, select=["WA3"])
    assert aoti(both) == []
    no_lib = audit_wheels([wheel(version="1.5.1+cu128", tag=WINDOWS, libs=[shims])], rules, select=["WA3"])
    assert aoti(no_lib) == [("WA301", "aoti_cuda_shims_import_library_cuda")]
    no_dll = audit_wheels([wheel(version="1.5.1+cu128", tag=WINDOWS, files=[lib])], rules, select=["WA3"])
    assert aoti(no_dll) == [("WA303", "aoti_cuda_shims_import_library_cuda")]
    # all twelve of ExecuTorch's sentinels: a shim library missing some is partial (WA205)
    assert len(rules.component("aoti_cuda_shims").symbols) == 12
    part = pe(shims.path, ["aoti_torch_empty_strided", "aoti_torch_delete_tensor_object"])
    report = audit_wheels([wheel(version="1.5.1+cu128", tag=WINDOWS, files=[lib], libs=[part])], rules, select=["WA205"])
    assert [f.subject for f in report.findings] == ["aoti_cuda_shims"]
