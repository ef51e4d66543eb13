"""Every platform tag PyPI accepts, on real binaries (fixtures/build_platforms.sh): the
``wheelaudit check`` command in a subprocess, its exit status and its JSON findings.

WA503: ARM float ABI and CPU (armhf / armel), mips64 for mips64el, ppc64 vs ppc64le, riscv64,
Android ABIs, iOS device / simulator / macOS slices. WA504: the imported symbols behind each
too-new symbol version (checked against ``objdump -T``), every versioned library the policy
lists (ZLIB), the iOS minimum version with its load command.
"""
from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from wheelaudit.binary import read_binary

WHEELAUDIT = shutil.which("wheelaudit", path=str(Path(sys.executable).parent)) or shutil.which("wheelaudit")


def check(wheel: Path, *args: str) -> subprocess.CompletedProcess:
    assert WHEELAUDIT, "the wheelaudit command is not installed beside this Python"
    return subprocess.run([WHEELAUDIT, "check", str(wheel), *args], capture_output=True, text=True, timeout=120)


def findings(wheel: Path) -> list[dict]:
    p = check(wheel, "--format", "json")
    assert p.returncode in (0, 1), p.stderr
    return [f for w in json.loads(p.stdout)["wheels"] for f in w["findings"]]


def codes(wheel: Path) -> list[str]:
    return sorted(f["code"] for f in findings(wheel))


# --------------------------------------------------------------------------------------------
# clean wheels: exit 0, nothing found


@pytest.mark.parametrize("name", ["armv7_hard", "armv5_soft", "mips64el", "riscv64", "ppc64le", "fcntl64_2_28",
                                  "android", "android_ext", "ios", "ios_ext", "ios_libpython", "iossim_arm64",
                                  "iossim_x86_64"])
def test_binaries_that_match_their_tag_pass(platform_wheels, name):
    p = check(platform_wheels[name])
    assert p.returncode == 0, p.stdout + p.stderr
    assert findings(platform_wheels[name]) == []


# --------------------------------------------------------------------------------------------
# WA503


@pytest.mark.parametrize("name,words", [
    ("armv7_soft_in_armv7l", ["soft-float", "hard-float", "linux_armv7l", "loader refuses"]),
    ("armv7_soft_in_manylinux", ["soft-float", "manylinux_2_31_armv7l"]),
    ("armv7_hard_in_armv5l", ["armv7l", "armv5l", "newer ARM CPU"]),
    ("mips64el_in_riscv64", ["64-bit MIPS little-endian (mips64el)", "64-bit RISC-V (riscv64)"]),
    ("ppc64_in_ppc64le", ["big-endian (ppc64)", "little-endian (ppc64le)"]),
    ("android_in_x86_64", ["aarch64", "android_21_x86_64"]),
    ("macos_in_ios", ["built for macOS", "platform MACOS", "platform IOS", "ios_13_0_arm64_iphoneos"]),
    ("ios_in_simulator", ["built for iOS", "IOSSIMULATOR"]),
    ("ios_in_macos", ["built for iOS", "macosx_11_0_arm64"]),
])
def test_binaries_that_do_not_match_their_tag_are_wa503_errors(platform_wheels, name, words):
    p = check(platform_wheels[name])
    assert p.returncode == 1, p.stdout + p.stderr
    [f] = findings(platform_wheels[name])
    assert (f["code"], f["severity"]) == ("WA503", "error")
    for w in words:
        assert w in f["message"], (w, f["message"])
    assert not re.search(r"\bem_\d", f["message"])  # machines are named in words


def test_the_arm_float_abi_is_read_from_e_flags_else_from_the_attributes(platform_libs):
    hard = (platform_libs / "armv7_hard.so").read_bytes()
    soft = (platform_libs / "armv7_soft.so").read_bytes()
    assert read_binary(hard, "h.so").slices[0].float_abi == "hard"
    assert read_binary(soft, "s.so").slices[0].float_abi == "soft"
    # the same files with EF_ARM_ABI_FLOAT_* cleared from e_flags: .ARM.attributes
    # Tag_ABI_VFP_args decides (what readelf -A shows)
    for data, want in ((hard, "hard"), (soft, "soft")):
        flags, = struct.unpack_from("<I", data, 36)
        cleared = data[:36] + struct.pack("<I", flags & ~0x600) + data[40:]
        s = read_binary(cleared, "x.so").slices[0]
        assert (s.arch, s.float_abi) == ("armv7l", want)
    readelf = subprocess.run(["readelf", "-A", str(platform_libs / "armv7_hard.so")], capture_output=True, text=True)
    assert "Tag_ABI_VFP_args: VFP registers" in readelf.stdout


def test_android_system_libraries_and_libpython_are_allowed(platform_wheels):
    wheel = platform_wheels["android"]
    lib = read_binary(_member(wheel, "plat/_plat.so"), "plat/_plat.so")
    assert lib.dependencies == ["libc.so", "liblog.so", "libpython3.13.so"]
    assert findings(wheel) == []  # no WA501: the android_21 policy and the interpreter's libpython


def test_ios_and_android_extension_modules_link_libpython_by_design(platform_wheels):
    """PEP 730: CPython's iOS build links each extension module against Python.framework; PEP 738:
    an Android module links libpython3.X.so. Neither is a WA603 (nor an unresolved WA501)."""
    ios = platform_wheels["ios_libpython"]
    mod = read_binary(_member(ios, "plat/_plat.cpython-313-iphoneos.so"), "plat/_plat.cpython-313-iphoneos.so")
    assert "@rpath/Python.framework/Python" in mod.dependencies
    assert [(s.arch, s.platform) for s in mod.slices] == [("arm64", "ios")]
    android = platform_wheels["android_ext"]
    mod = read_binary(_member(android, "plat/_plat.cpython-313-aarch64-linux-android.so"), "x.so")
    assert "libpython3.13.so" in mod.dependencies
    for wheel in (ios, android):
        p = check(wheel, "--format", "json")
        assert p.returncode == 0, p.stdout + p.stderr
        assert findings(wheel) == []


# --------------------------------------------------------------------------------------------
# WA504


def _member(wheel: Path, name: str) -> bytes:
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        return z.read(name)


def _objdump_versioned_imports(path: Path) -> dict[str, str]:
    """``objdump -T``: undefined dynamic symbols -> the version node in parentheses."""
    out = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.search(r"\*UND\*\s+\S+\s+\((\S+)\)\s+(\S+)$", line)
        if m:
            found[m.group(2)] = m.group(1)
    return found


def test_wa504_names_the_symbols_of_each_too_new_version(platform_wheels, platform_libs):
    wheel = platform_wheels["fcntl64_2_17"]
    p = check(wheel)
    assert p.returncode == 1
    assert "GLIBC_2.28 (fcntl64)" in p.stdout
    [f] = findings(wheel)
    assert (f["code"], f["severity"]) == ("WA504", "error")
    assert "manylinux_2_28_x86_64" in f["hint"]  # the tag it would need (auditwheel's answer too)
    # exactly the imports objdump shows at a node newer than GLIBC_2.17
    want = sorted(f"{sym}@{node}" for sym, node in _objdump_versioned_imports(platform_libs / "fcntl64.so").items()
                  if node.startswith("GLIBC_2.") and tuple(map(int, node[6:].split("."))) > (2, 17))
    assert want == ["fcntl64@GLIBC_2.28"]
    assert f["symbols"] == want
    # the reader agrees with objdump on every versioned import
    lib = read_binary((platform_libs / "fcntl64.so").read_bytes(), "x.so")
    assert lib.slices[0].import_versions == _objdump_versioned_imports(platform_libs / "fcntl64.so")


def test_zlib_versions_are_checked_against_the_policy(platform_wheels, platform_libs):
    assert _objdump_versioned_imports(platform_libs / "zlib.so").items() >= {("deflateBound", "ZLIB_1.2.0"),
                                                                             ("inflateValidate", "ZLIB_1.2.9")}
    # manylinux_2_17 lists ZLIB up to 1.2.5.2: ZLIB_1.2.9 is refused by the loader on its systems
    [f] = findings(platform_wheels["zlib_2_17"])
    assert (f["code"], f["severity"], f["symbols"]) == ("WA504", "error", ["inflateValidate@ZLIB_1.2.9"])
    assert "manylinux_2_27_x86_64" in f["hint"]  # auditwheel show says the same
    assert check(platform_wheels["zlib_2_17"]).returncode == 1
    # manylinux_2_5 lists zlib without any version node: a warning (glibc binds by name)
    [f] = findings(platform_wheels["zlib_2_5"])
    assert (f["code"], f["severity"]) == ("WA504", "warning")
    assert f["symbols"] == ["deflateBound@ZLIB_1.2.0", "inflateValidate@ZLIB_1.2.9"]
    assert check(platform_wheels["zlib_2_5"]).returncode == 0
    assert check(platform_wheels["zlib_2_5"], "--fail-on", "warning").returncode == 1


def test_ios_minimum_version_names_its_load_command(platform_wheels):
    wheel = platform_wheels["iossim_arm64_too_new"]
    assert check(wheel).returncode == 1
    [f] = findings(wheel)
    assert (f["code"], f["severity"]) == ("WA504", "error")
    assert "iOS 14.0 (LC_BUILD_VERSION minos 14.0)" in f["message"]
    assert "ios_14_0_arm64_iphonesimulator" in f["hint"] and "IPHONEOS_DEPLOYMENT_TARGET=13.0" in f["hint"]


def test_inspect_json_shows_versioned_imports(platform_wheels):
    p = subprocess.run([WHEELAUDIT, "inspect", str(platform_wheels["fcntl64_2_17"]), "--format", "json", "--symbols"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    [lib] = json.loads(p.stdout)["wheels"][0]["libraries"]
    assert lib["slices"][0]["import_versions"]["fcntl64"] == "GLIBC_2.28"


@pytest.mark.parametrize("name,want", [
    ("fcntl64_2_17", {"import_versions": {"puts": "GLIBC_2.2.5", "fcntl64": "GLIBC_2.28",
                                          "__cxa_finalize": "GLIBC_2.2.5"}}),
    ("iossim_arm64", {"platform": "ios-simulator", "min_os_command": "LC_BUILD_VERSION"}),
    ("armv7_soft_in_armv7l", {"float_abi": "soft"}),
])
def test_inspect_json_platform_facts_follow_the_schema(platform_wheels, name, want):
    import jsonschema

    schema_path = Path(__import__("wheelaudit").__file__).parent / "schemas" / "inspect.schema.json"
    p = subprocess.run([WHEELAUDIT, "inspect", str(platform_wheels[name]), "--format", "json", "--symbols"],
                       capture_output=True, text=True, timeout=120)
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, json.loads(schema_path.read_text()))
    sl = doc["wheels"][0]["libraries"][0]["slices"][0]
    assert {k: sl[k] for k in want} == want


# --------------------------------------------------------------------------------------------
# the tag model on facts (machines lld cannot link: s390x, loongarch64; Android armeabi-v7a)


def _wheel(tag: str, *slices):
    from packaging.tags import parse_tag

    from wheelaudit.platforms.traits import traits_from_tags
    from wheelaudit.model.binary import Binary
    from wheelaudit.scanner import Wheel

    tags = sorted(parse_tag(tag), key=str)
    libs = [Binary(path="pkg/_x.so", format="elf", size=100, slices=list(slices))]
    return Wheel(path=Path(f"demo-1.0-{tag}.whl"), name="demo", version="1.0", tags=[str(t) for t in tags],
                 traits=traits_from_tags(tags, "1.0"), files=["pkg/_x.so"], libraries=libs)


@pytest.mark.parametrize("tag,arch,float_abi,ok", [
    ("manylinux_2_17_s390x", "s390x", None, True),
    ("manylinux_2_17_s390x", "ppc64", None, False),
    ("manylinux_2_36_loongarch64", "loongarch64", None, True),
    ("manylinux_2_36_loongarch64", "riscv64", None, False),
    ("android_21_armeabi_v7a", "armv7l", "soft", True),   # Android's armeabi-v7a: softfp calling convention
    ("android_21_armeabi_v7a", "armv7l", "hard", False),
    ("android_21_x86", "i686", None, True),
    ("linux_armv6l", "armv6l", "hard", True),
    ("linux_armv6l", "armv7l", "hard", False),            # ARMv7 code on an ARMv6 CPU
    ("linux_armv7l", "armv6l", "hard", True),             # ARMv6 code runs on ARMv7
    ("linux_armv7l", "armv7l", None, True),               # nothing says: no finding
    ("linux_armv5tel", "armv5l", "soft", True),
    ("linux_armv5tel", "armv7l", "soft", False),
    ("linux_mips64", "mips64", None, True),
    ("linux_ppc64", "ppc64le", None, False),
])
def test_tag_model_on_facts(tag, arch, float_abi, ok):
    from wheelaudit.model.binary import Slice
    from wheelaudit.checks.platform import check_platform

    found = [f for f in check_platform(_wheel(f"cp312-cp312-{tag}", Slice(arch=arch, float_abi=float_abi)))
             if f.code == "WA503"]
    assert (not found) == ok, [f.message for f in found]


def test_conditions_know_ios_and_android():
    from packaging.tags import parse_tag

    from wheelaudit.platforms.traits import traits_from_tags

    t = traits_from_tags(parse_tag("cp313-cp313-ios_13_0_arm64_iphoneos"), "1.0")
    assert (t.os, t.arch) == ({"ios"}, {"arm64"})
    t = traits_from_tags(parse_tag("cp313-cp313-android_21_arm64_v8a"), "1.0")
    assert (t.os, t.arch) == ({"android"}, {"arm64_v8a", "aarch64"})
    t = traits_from_tags(parse_tag("cp311-cp311-win_amd64"), "1.0")
    assert (t.os, t.arch) == ({"windows"}, {"x86_64", "amd64"})  # the spellings rules already use


@pytest.mark.parametrize("data", [b"", b"A", b"A\xff\xff\xff\xff", b"A\x10\x00\x00\x00aeabi\x00\x01\xff\xff\xff\x7f",
                                  b"A\x0f\x00\x00\x00aeabi\x00\x01\x05\x00\x00\x00\x80", b"B" + bytes(40),
                                  b"A\x14\x00\x00\x00aeabi\x00\x01\x09\x00\x00\x00\x05abc"])
def test_damaged_arm_attributes_give_what_was_read(data):
    from wheelaudit.binary.elf.loadability import arm_attributes

    assert isinstance(arm_attributes(data, True), dict)


def test_macho_slices_record_their_platform_and_load_command(platform_libs, fixture_libs):
    def facts(path: Path):
        return [(s.arch, s.platform, s.min_os, s.min_os_command) for s in read_binary(path.read_bytes(), "x").slices]

    assert facts(platform_libs / "ios_arm64.dylib") == [("arm64", "ios", "13.0", "LC_BUILD_VERSION")]
    assert facts(platform_libs / "iossim_x86_64.dylib") == [("x86_64", "ios-simulator", "13.0", "LC_BUILD_VERSION")]
    assert facts(platform_libs / "macos_arm64.dylib") == [("arm64", "macos", "11.0", "LC_BUILD_VERSION")]
    # build_fixtures.sh's x86_64 slices carry LC_VERSION_MIN_MACOSX (minos 10.13)
    assert facts(fixture_libs / "macho" / "x86_64" / "libbase.dylib") == [
        ("x86_64", "macos", "10.13", "LC_VERSION_MIN_MACOSX")]


def test_a_damaged_arm_attributes_section_is_a_note_not_an_unreadable_file(platform_libs):
    data = bytearray((platform_libs / "armv7_hard.so").read_bytes())
    shoff, = struct.unpack_from("<I", data, 32)
    shentsize, shnum = struct.unpack_from("<HH", data, 46)
    for k in range(shnum):
        at = shoff + k * shentsize
        if struct.unpack_from("<I", data, at + 4)[0] == 0x70000003:  # SHT_ARM_ATTRIBUTES
            struct.pack_into("<I", data, at + 16, len(data) + 100)  # sh_offset past the end
    b = read_binary(bytes(data), "x.so")
    assert b.ok and (b.slices[0].arch, b.slices[0].float_abi) == ("armv7l", "hard")  # e_flags still says
    assert any(".ARM.attributes" in n for n in b.slices[0].notes)
