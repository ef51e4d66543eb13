"""Rules that ExecuTorch's own release checks need (issue #25): `!` in conditions and path lists,
`must-need-all`, `[[binary]]` rules over several binaries, and waivers too broad to trust."""
from __future__ import annotations

from pathlib import Path

from packaging.tags import parse_tag

from wheelaudit import audit_wheels
from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.model.binary import Binary, Dependency, Rpath, Slice
from wheelaudit.ruleset.load import parse_rules
from wheelaudit.scanner import Wheel

LINUX = "cp311-cp311-manylinux_2_28_x86_64"


def elf(path, needed=(), runpath=("$ORIGIN",)) -> Binary:
    return Binary(path=path, format="elf", size=1, slices=[Slice(
        arch="x86_64", identity=path.rsplit("/", 1)[-1], dependencies=[Dependency(n) for n in needed],
        rpaths=[Rpath(r, "runpath") for r in runpath])])


def wheel(libs, version="1.0") -> Wheel:
    tags = sorted(parse_tag(LINUX), key=str)
    return Wheel(path=Path(f"et-{version}-{LINUX}.whl"), name="et", version=version, tags=[str(t) for t in tags],
                 traits=traits_from_tags(tags, version), files=[b.path for b in libs], libraries=libs)


def codes(report) -> list[tuple[str, str]]:
    return sorted((f.code, f.severity) for f in report.findings)


LIBS = ["et/lib/libexecutorch.so", "et/lib/libbackend_openvino.so", "et/lib/libkernels_quantized.so"]
RULES = """
version = 1
[[binary]]
path = "et/_C.so"
must-need-all = ["et/lib/lib*.so", "!**/libkernels_quantized.*"]
"""


def test_must_need_all_every_shipped_library_but_the_excluded():
    ext_ok = elf("et/_C.so", ["libexecutorch.so", "libbackend_openvino.so"], runpath=["$ORIGIN/lib"])
    libs = [elf(p) for p in LIBS]
    assert codes(audit_wheels([wheel([ext_ok, *libs])], parse_rules(RULES))) == []
    # _C dropped its dependency on the OpenVINO delegate: the backend is never registered
    ext_bad = elf("et/_C.so", ["libexecutorch.so"], runpath=["$ORIGIN/lib"])
    report = audit_wheels([wheel([ext_bad, *libs])], parse_rules(RULES))
    assert codes(report) == [("WA403", "error")]
    assert "libbackend_openvino.so" in report.findings[0].message
    # a NEEDED that does not resolve (no rpath to lib/) is no dependency on the shipped file
    ext_lost = elf("et/_C.so", ["libexecutorch.so", "libbackend_openvino.so"], runpath=[])
    report = audit_wheels([wheel([ext_lost, *libs])], parse_rules(RULES))
    assert ("WA403", "error") in codes(report)


def test_binary_rule_over_several_binaries():
    rules = parse_rules('version = 1\n[[binary]]\npath = "et/lib/*"\nmust-not-need = ["libtorch*"]\n')
    libs = [elf(LIBS[0]), elf(LIBS[2], ["libtorch.so"])]
    report = audit_wheels([wheel(libs)], rules, select=["WA4"])
    assert codes(report) == [("WA403", "error")] and report.findings[0].paths == [LIBS[2]]


def test_negated_condition():
    rules = parse_rules('version = 1\n[[file]]\nname = "cuda shims"\nglob = "**/aoti_cuda_shims.*"\ncount = 0\n'
                        'when = { version = "!*+cu*" }\n')
    libs = [elf("et/lib/aoti_cuda_shims.so")]
    assert ("WA301", "error") in codes(audit_wheels([wheel(libs, "1.0")], rules, select=["WA3"]))
    assert codes(audit_wheels([wheel(libs, "1.0+cu128")], rules, select=["WA3"])) == []


def test_a_waiver_for_everything_is_a_warning():
    rules = parse_rules('version = 1\n[[binary]]\npath = "et/lib/*"\nmust-not-need = ["libtorch*"]\n'
                        '[[waive]]\ncode = "WA403"\ntarget = "*"\nreason = "known"\n')
    libs = [elf(LIBS[2], ["libtorch.so"])]
    report = audit_wheels([wheel(libs)], rules, select=["WA4", "WA0"])
    assert [f.code for f in report.wheels[0].findings if f.waived] == ["WA403"]
    assert codes(report) == [("WA004", "warning")]
    broad = [f for f in report.findings if f.code == "WA004"][0]
    assert "accepts every WA403 finding" in broad.message
    # a waiver with a real target is fine
    rules = parse_rules('version = 1\n[[binary]]\nname = "runtime"\npath = "et/lib/*"\nmust-not-need = ["libtorch*"]\n'
                        '[[waive]]\ncode = "WA403"\ntarget = "runtime"\nreason = "known"\n')
    report = audit_wheels([wheel(libs)], rules, select=["WA4", "WA0"])
    assert codes(report) == [] and [f.code for f in report.wheels[0].findings if f.waived] == ["WA403"]
