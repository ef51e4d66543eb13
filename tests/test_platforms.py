"""Platform tag agreement: WA503 (architectures) and WA504 (glibc versions, macOS minos).

Hand-built wheels (facts.py dataclasses) pin each rule precisely; the fixture wheels show the
same on real binaries (universal2 with one thin library, GLIBC_2.34 in a manylinux_2_28 wheel).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from packaging.tags import parse_tag

from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.model.binary import Binary, Slice
from wheelaudit.checks.platform import check_platform
from wheelaudit.platforms.tags import (
    highest_needs,
    manylinux_policy,
    musllinux_policy,
    parse_platform,
    policy_data,
)
from wheelaudit.model.wheel import Wheel
from wheelaudit.scanner import scan


# --------------------------------------------------------------------------------------------
# helpers


def make_wheel(tag: str, libs: list[Binary]) -> Wheel:
    """A wheel with these binaries; ``tag`` is a compressed tag set ("cp311-cp311-a.b")."""
    tags = sorted(parse_tag(tag), key=str)
    return Wheel(path=Path(f"demo-1.0-{tag}.whl"), name="demo", version="1.0", tags=[str(t) for t in tags],
                 traits=traits_from_tags(tags, "1.0"), files=[b.path for b in libs], libraries=libs)


def elf(path: str, arch: str = "x86_64", needs: tuple[str, ...] = (), soname: str | None = None) -> Binary:
    return Binary(path=path, format="elf", size=100,
                  slices=[Slice(arch=arch, identity=soname, needs_versions=list(needs))])


def macho(path: str, *slices: tuple[str, str | None]) -> Binary:
    """Mach-O with (arch, minos) slices."""
    return Binary(path=path, format="macho", size=100,
                  slices=[Slice(arch=a, min_os=m, identity=f"@rpath/{path.rsplit('/', 1)[-1]}") for a, m in slices])


def pe(path: str, arch: str) -> Binary:
    return Binary(path=path, format="pe", size=100, slices=[Slice(arch=arch)])


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def only(findings, code: str):
    got = [f for f in findings if f.code == code]
    assert len(got) == 1, [f.message for f in findings]
    return got[0]


# --------------------------------------------------------------------------------------------
# tags and data


def test_parse_platform_legacy_aliases_and_families():
    assert parse_platform("manylinux1_x86_64").version == (2, 5)
    assert parse_platform("manylinux2010_i686").version == (2, 12)
    assert parse_platform("manylinux2014_aarch64").version == (2, 17)
    p = parse_platform("manylinux_2_28_x86_64")
    assert (p.family, p.version, p.arch_label) == ("manylinux", (2, 28), "x86_64")
    assert parse_platform("musllinux_1_2_aarch64").family == "musllinux"
    assert parse_platform("macosx_10_9_universal2").archs == ("arm64", "x86_64")
    assert parse_platform("macosx_10_9_intel").archs == ("i386", "x86_64")
    assert parse_platform("win_amd64").archs == ("x86_64",)
    assert parse_platform("any").os == "any"
    assert parse_platform("ios_13_0_arm64_iphoneos").os == "ios"
    assert parse_platform("pyodide_2024_0_wasm32").os is None


def test_policy_data_summarises_auditwheel():
    many, musl = policy_data()
    assert "auditwheel" in many["comment"] and "auditwheel" in musl["comment"]
    p228 = manylinux_policy((2, 28))
    assert p228.name == "manylinux_2_28"
    assert "libc.so.6" in p228.libs and "libstdc++.so.6" in p228.libs
    assert p228.ceiling("x86_64", "GLIBCXX") == "3.4.24"
    assert p228.ceiling("x86_64", "CXXABI") == "1.3.11"
    assert "libexpat.so.1" not in manylinux_policy((2, 5)).libs  # manylinux1 has no expat
    assert "libexpat.so.1" in manylinux_policy((2, 17)).libs
    # a tag between two policies takes the nearest older one
    assert manylinux_policy((2, 29)).name == "manylinux_2_28"
    assert musllinux_policy((1, 2)).libs == ("libc.so", "libz.so.1")


def test_highest_needs_elf_and_macho():
    s = Slice(arch="x86_64", needs_versions=["GLIBC_2.2.5", "GLIBC_2.34", "GLIBC_2.4", "GLIBCXX_3.4.9",
                                             "GLIBCXX_3.4.30", "CXXABI_1.3.13", "GLIBC_PRIVATE"])
    assert highest_needs(s) == {"CXXABI": "1.3.13", "GLIBC": "2.34", "GLIBCXX": "3.4.30"}
    assert highest_needs(Slice(arch="arm64", min_os="11.0")) == {"macOS": "11.0"}
    assert highest_needs(Slice(arch="x86_64")) == {}


# --------------------------------------------------------------------------------------------
# WA503


@pytest.mark.parametrize("tag,arch", [
    ("manylinux_2_28_x86_64", "x86_64"), ("manylinux_2_17_aarch64", "aarch64"), ("manylinux2014_i686", "i686"),
    ("manylinux_2_31_armv7l", "armv7l"), ("manylinux_2_17_ppc64le", "ppc64le"), ("manylinux_2_17_s390x", "s390x"),
    ("manylinux_2_31_riscv64", "riscv64"), ("linux_x86_64", "x86_64"), ("musllinux_1_2_x86_64", "x86_64"),
])
def test_linux_tag_arch_agrees(tag, arch):
    assert codes(check_platform(make_wheel(f"cp311-cp311-{tag}", [elf("pkg/_x.so", arch)]))) == []


@pytest.mark.parametrize("tag,arch", [
    ("manylinux_2_28_x86_64", "aarch64"), ("manylinux_2_17_aarch64", "x86_64"), ("manylinux2014_i686", "x86_64"),
    ("musllinux_1_2_x86_64", "i686"), ("linux_armv7l", "aarch64"), ("manylinux_2_17_ppc64le", "ppc64"),
])
def test_linux_tag_arch_mismatch_is_wa503(tag, arch):
    f = only(check_platform(make_wheel(f"cp311-cp311-{tag}", [elf("pkg/_x.so", arch)])), "WA503")
    assert tag in f.message and arch in f.message and f.subject == "pkg/_x.so" and f.paths == ["pkg/_x.so"]
    assert f.rule == "linkage"


def test_universal2_needs_both_archs_in_every_macho():
    good = make_wheel("cp311-cp311-macosx_10_13_universal2",
                      [macho("pkg/a.dylib", ("arm64", "11.0"), ("x86_64", "10.13"))])
    assert check_platform(good) == []
    bad = make_wheel("cp311-cp311-macosx_10_13_universal2",
                     [macho("pkg/a.dylib", ("arm64", "11.0"), ("x86_64", "10.13")),
                      macho("pkg/thin.dylib", ("arm64", "11.0"))])
    f = only(check_platform(bad), "WA503")
    assert f.subject == "pkg/thin.dylib"
    assert "missing x86_64" in f.message and "macosx_10_13_universal2" in f.message


@pytest.mark.parametrize("tag,slices,ok", [
    ("macosx_11_0_arm64", [("arm64", "11.0")], True),
    ("macosx_11_0_arm64", [("x86_64", "10.9")], False),
    ("macosx_11_0_arm64", [("arm64", "11.0"), ("x86_64", "10.9")], True),  # an extra slice is harmless
    ("macosx_10_9_x86_64", [("x86_64", "10.9")], True),
    ("macosx_10_9_x86_64", [("arm64", "11.0")], False),
    ("macosx_10_9_intel", [("x86_64", "10.9"), ("i386", "10.9")], True),
    ("macosx_10_9_intel", [("x86_64", "10.9")], False),
])
def test_macos_arch_tags(tag, slices, ok):
    w = make_wheel(f"cp311-cp311-{tag}", [macho("pkg/_x.so", *slices)])
    assert ("WA503" not in codes(check_platform(w))) == ok


def test_format_must_match_the_os_of_the_tag():
    f = only(check_platform(make_wheel("cp311-cp311-manylinux_2_28_x86_64", [macho("pkg/a.dylib", ("x86_64", None))])), "WA503")
    assert "Mach-O" in f.message and "ELF" in f.message
    f = only(check_platform(make_wheel("cp311-cp311-macosx_11_0_arm64", [elf("pkg/a.so", "aarch64")])), "WA503")
    assert "ELF" in f.message and "macosx_11_0_arm64" in f.message


def test_native_binary_in_pure_wheel_is_wa503():
    f = only(check_platform(make_wheel("py3-none-any", [elf("pkg/a.so")])), "WA503")
    assert "pure" in f.message
    assert check_platform(make_wheel("py3-none-any", [])) == []


@pytest.mark.parametrize("tag,arch,ok", [
    ("win_amd64", "x86_64", True), ("win_amd64", "x86", False), ("win32", "x86", True),
    ("win32", "x86_64", False), ("win_arm64", "arm64", True), ("win_arm64", "x86_64", False),
])
def test_windows_tags_vs_pe_machine(tag, arch, ok):
    w = make_wheel(f"cp311-cp311-{tag}", [pe("pkg/_x.pyd", arch)])
    assert ("WA503" not in codes(check_platform(w))) == ok


def test_unknown_platform_tag_makes_no_promise():
    w = make_wheel("cp313-cp313-pyodide_2024_0_wasm32", [macho("pkg/_x.so", ("arm64", "13.0"))])
    assert check_platform(w) == []


def test_one_finding_per_binary_naming_every_tag_it_fails():
    w = make_wheel("cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64", [elf("pkg/_x.so", "aarch64")])
    f = only(check_platform(w), "WA503")
    assert "manylinux_2_27_x86_64" in f.message and "manylinux_2_28_x86_64" in f.message


def test_unreadable_binaries_are_skipped():
    broken = Binary(path="pkg/broken.so", format="elf", size=10, error="truncated")
    assert check_platform(make_wheel("cp311-cp311-macosx_11_0_arm64", [broken])) == []


# --------------------------------------------------------------------------------------------
# WA504: glibc


def test_glibc_newer_than_tag_is_wa504():
    w = make_wheel("cp311-cp311-manylinux_2_28_x86_64", [elf("pkg/a.so", needs=("GLIBC_2.2.5", "GLIBC_2.34"))])
    f = only(check_platform(w), "WA504")
    assert "GLIBC_2.34" in f.message and "GLIBC_2.28" in f.message and "manylinux_2_28_x86_64" in f.message
    assert "manylinux_2_34_x86_64" in f.hint  # the oldest policy that allows GLIBC_2.34
    assert f.subject == "pkg/a.so"
    ok = make_wheel("cp311-cp311-manylinux_2_28_x86_64", [elf("pkg/a.so", needs=("GLIBC_2.2.5", "GLIBC_2.28"))])
    assert check_platform(ok) == []


@pytest.mark.parametrize("tag,need,bad", [
    ("manylinux1_x86_64", "GLIBC_2.5", False), ("manylinux1_x86_64", "GLIBC_2.6", True),
    ("manylinux2010_x86_64", "GLIBC_2.12", False), ("manylinux2010_x86_64", "GLIBC_2.14", True),
    ("manylinux2014_x86_64", "GLIBC_2.17", False), ("manylinux2014_x86_64", "GLIBC_2.18", True),
])
def test_legacy_manylinux_aliases(tag, need, bad):
    arch = tag.split("_", 1)[1]
    w = make_wheel(f"cp311-cp311-{tag}", [elf("pkg/a.so", arch, needs=(need,))])
    assert ("WA504" in codes(check_platform(w))) == bad


def test_manylinux2014_aarch64_allows_glibc_218_as_the_policy_does():
    w = make_wheel("cp311-cp311-manylinux2014_aarch64", [elf("pkg/a.so", "aarch64", needs=("GLIBC_2.18",))])
    assert check_platform(w) == []


def test_several_manylinux_tags_check_the_lowest():
    need = ("GLIBC_2.27",)
    w = make_wheel("cp311-cp311-manylinux_2_17_x86_64.manylinux_2_28_x86_64", [elf("pkg/a.so", needs=need)])
    f = only(check_platform(w), "WA504")
    assert "manylinux_2_17_x86_64" in f.message and "lowest" in f.message
    # numpy's real shape: manylinux_2_27 + manylinux_2_28 with GLIBC_2.27 passes
    w = make_wheel("cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64", [elf("pkg/a.so", needs=need)])
    assert check_platform(w) == []


def test_glibcxx_and_cxxabi_ceilings_from_the_policy():
    w = make_wheel("cp311-cp311-manylinux_2_28_x86_64", [elf("pkg/a.so", needs=("GLIBC_2.17", "GLIBCXX_3.4.30"))])
    f = only(check_platform(w), "WA504")
    assert "GLIBCXX_3.4.30" in f.message and "GLIBCXX_3.4.24" in f.message and "manylinux_2_28" in f.message
    w = make_wheel("cp311-cp311-manylinux_2_28_x86_64", [elf("pkg/a.so", needs=("CXXABI_1.3.13",))])
    assert "CXXABI_1.3.13" in only(check_platform(w), "WA504").message
    w = make_wheel("cp311-cp311-manylinux_2_28_x86_64", [elf("pkg/a.so", needs=("GLIBCXX_3.4.24", "CXXABI_1.3.11",
                                                                                 "GLIBC_PRIVATE", "GCC_7.0.0"))])
    assert check_platform(w) == []


def test_shipped_libstdcxx_provides_its_own_glibcxx():
    libs = [elf("pkg/a.so", needs=("GLIBCXX_3.4.30",)), elf("pkg.libs/libstdc++.so.6", soname="libstdc++.so.6")]
    assert check_platform(make_wheel("cp311-cp311-manylinux_2_28_x86_64", libs)) == []


def test_musllinux_and_linux_tags_have_no_glibc_ceiling():
    for tag in ("musllinux_1_2_x86_64", "linux_x86_64"):
        w = make_wheel(f"cp311-cp311-{tag}", [elf("pkg/a.so", needs=("GLIBC_2.40",))])
        assert "WA504" not in codes(check_platform(w))


# --------------------------------------------------------------------------------------------
# WA504: macOS


def test_universal2_arm64_slice_floor_is_11():
    ok = make_wheel("cp311-cp311-macosx_10_9_universal2", [macho("pkg/a.so", ("arm64", "11.0"), ("x86_64", "10.9"))])
    assert check_platform(ok) == []
    bad = make_wheel("cp311-cp311-macosx_10_9_universal2", [macho("pkg/a.so", ("arm64", "12.0"), ("x86_64", "10.9"))])
    f = only(check_platform(bad), "WA504")
    assert "arm64 slice needs macOS 12.0" in f.message and "11.0" in f.message
    assert "MACOSX_DEPLOYMENT_TARGET=10.9" in f.hint and "macosx_12_0_universal2" in f.hint


def test_x86_64_slice_newer_than_tag():
    w = make_wheel("cp311-cp311-macosx_10_9_universal2", [macho("pkg/a.so", ("arm64", "11.0"), ("x86_64", "10.13"))])
    f = only(check_platform(w), "WA504")
    assert "x86_64 slice needs macOS 10.13" in f.message and "macosx_10_13_universal2" in f.hint
    assert "arm64 slice" not in f.message  # the arm64 slice at 11.0 passes (its floor)


@pytest.mark.parametrize("tag,minos,suggest", [
    ("macosx_14_0_arm64", "14.0", None),
    ("macosx_14_0_arm64", "15.0", "macosx_15_0_arm64"),
    ("macosx_11_0_arm64", "12.3", "macosx_13_0_arm64"),  # pip knows only X_0 tags from macOS 11
    ("macosx_10_9_x86_64", "10.9.5", None),  # patch levels do not count
    ("macosx_10_15_x86_64", "11.0", "macosx_11_0_x86_64"),  # (11, 0) > (10, 15)
    ("macosx_12_0_x86_64", "10.15", None),
])
def test_macos_minos_vs_tag(tag, minos, suggest):
    arch = tag.split("_", 3)[3]
    w = make_wheel(f"cp311-cp311-{tag}", [macho("pkg/a.so", (arch, minos))])
    fs = check_platform(w)
    if suggest is None:
        assert fs == []
    else:
        f = only(fs, "WA504")
        assert suggest in f.hint and minos in f.message and tag in f.message


def test_several_macos_tags_check_the_lowest():
    w = make_wheel("cp311-cp311-macosx_11_0_arm64.macosx_14_0_arm64", [macho("pkg/a.so", ("arm64", "14.0"))])
    f = only(check_platform(w), "WA504")
    assert "macosx_11_0_arm64" in f.message


# --------------------------------------------------------------------------------------------
# fixture wheels (real binaries)


def test_fixture_universal2_with_one_thin_binary(fixture_wheels):
    w = scan(fixture_wheels["macos_universal2_thin_one"])
    fs = check_platform(w)
    f = only(fs, "WA503")
    assert f.subject == "executorch/lib/libexecutorch_etdump.dylib" and "missing x86_64" in f.message
    assert check_platform(scan(fixture_wheels["macos_universal2"])) == []


def test_fixture_glibc234_in_manylinux_2_28(fixture_wheels):
    w = scan(fixture_wheels["linux_glibc234"])
    f = only(check_platform(w), "WA504")
    assert f.subject == "executorch/lib/libexecutorch_threadpool.so"
    assert "GLIBC_2.34" in f.message and "manylinux_2_28_x86_64" in f.message
    assert highest_needs(w.library("executorch/lib/libexecutorch_threadpool.so").slices[0])["GLIBC"] == "2.34"


@pytest.mark.parametrize("name", ["linux_clean", "macos_clean", "macos_universal2"])
def test_fixture_clean_wheels_agree_with_their_tags(fixture_wheels, name):
    assert check_platform(scan(fixture_wheels[name])) == []
