"""WA6xx, Python ABI and loadability: the built-in audits that catch what breaks at import time.

Each scenario wheel (fixtures/make_audit_wheels.py, binaries built from source by
fixtures/build_audits.sh) is checked by running ``wheelaudit`` as a user would; the codes, the
paths, the evidence in the messages and the exit status are asserted. The clean fixture wheels
of the other tests must stay silent.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from wheelaudit.binary.codesign import verify
from wheelaudit.checks.abi import links_libpython, module_suffix

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))
from make_audit_wheels import EXPECTED  # noqa: E402

#: findings other than WA6xx that a scenario raises, and why
ALSO: dict[str, set[str]] = {
    # libpython does not resolve either, but that is the same cause: WA603 alone reports it
    # the loader zeroes a segment's page past p_filesz when p_memsz is larger: the names are lost
    "linux_page_tail_zero_fill": {"WA001"},
}
WARNINGS = {"WA604", "WA608"}


def wheelaudit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wheelaudit", *map(str, args)], capture_output=True,
                          text=True, timeout=120)


@functools.cache
def check_json(path: Path, *extra: str) -> tuple[int, list[dict]]:
    """``check --format json``: the exit status and the wheel's findings (once per wheel)."""
    run = wheelaudit("check", path, "--format", "json", *extra)
    assert run.returncode in (0, 1), run.stderr
    [wheel] = json.loads(run.stdout)["wheels"]
    return run.returncode, wheel["findings"]


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_each_scenario_raises_exactly_its_codes(audit_wheels, scenario):
    rc, findings = check_json(audit_wheels[scenario])
    got = {(f["code"], f["paths"][0]) for f in findings if f["code"].startswith("WA6")}
    assert got == EXPECTED[scenario]
    assert {f["code"] for f in findings if not f["code"].startswith("WA6")} == ALSO.get(scenario, set())
    for f in findings:
        if f["code"].startswith("WA6"):
            assert f["subject"] == f["paths"][0]
    errors = any(f["severity"] == "error" for f in findings)
    assert rc == (1 if errors else 0)
    if findings and not errors:  # warnings only: they fail a gate that asks so
        assert wheelaudit("check", audit_wheels[scenario], "--fail-on", "warning").returncode == 1
    if scenario in ("macos_flipped", "linux_libpython"):  # --ignore takes the family's prefix
        assert wheelaudit("check", audit_wheels[scenario], "--ignore", "WA6", "--ignore", "WA501").returncode == 0


def _message(audit_wheels, scenario: str, code: str) -> str:
    _rc, findings = check_json(audit_wheels[scenario])
    [f] = [f for f in findings if f["code"] == code]
    return f["message"]


def test_messages_carry_the_evidence(audit_wheels):
    m = _message(audit_wheels, "linux_wrong_version", "WA602")
    assert "'.cpython-312-x86_64-linux-gnu.so'" in m and "cp311-cp311" in m
    m = _message(audit_wheels, "py3_none_versioned", "WA602")
    assert "py3-none" in m
    m = _message(audit_wheels, "linux_cp311_none_wrong_version", "WA602")
    assert "'.cpython-312-x86_64-linux-gnu.so'" in m and "cp311-none" in m
    m = _message(audit_wheels, "abi3_versioned", "WA602")
    assert "abi3" in m and "'.abi3.so'" in m
    m = _message(audit_wheels, "macos_linux_suffix", "WA602")
    assert "Linux" in m and "macOS" in m
    m = _message(audit_wheels, "windows_wrong_version", "WA602")
    assert "'.cp312-win_amd64.pyd'" in m
    assert "DT_NEEDED libpython3.11.so.1.0" in _message(audit_wheels, "linux_libpython", "WA603")
    assert "Python.framework/Versions/3.11/Python" in _message(audit_wheels, "macos_libpython", "WA603")
    m = _message(audit_wheels, "linux_debug", "WA604")
    assert ".debug_* sections" in m and " bytes of " in m
    assert "__DWARF" in _message(audit_wheels, "macos_debug_object", "WA604")
    assert "PT_GNU_STACK segment has the X flag" in _message(audit_wheels, "linux_execstack", "WA606")
    assert "no PT_GNU_STACK" in _message(audit_wheels, "linux_no_gnu_stack", "WA606")
    assert "no LC_CODE_SIGNATURE" in _message(audit_wheels, "macos_unsigned", "WA607")
    for scenario in ("macos_flipped", "macos_edited_header"):
        m = _message(audit_wheels, scenario, "WA607")
        assert "page 0 [0x0, 0x1000) in __TEXT" in m and "SHA-256" in m
    assert "DT_TEXTREL" in _message(audit_wheels, "linux_textrel", "WA608")


def test_inspect_shows_the_facts(audit_wheels, tmp_path):
    schema = json.loads(resources.files("wheelaudit").joinpath("schemas/inspect.schema.json").read_text())
    facts = {}
    for scenario in ("linux_execstack", "linux_textrel", "linux_debug", "linux_ok", "macos_ok", "macos_flipped",
                     "macos_unsigned"):
        run = wheelaudit("inspect", audit_wheels[scenario], "--format", "json")
        assert run.returncode == 0, run.stderr
        data = json.loads(run.stdout)
        jsonschema.validate(data, schema)
        for lib in data["wheels"][0]["libraries"]:
            facts[lib["path"].rsplit("/", 1)[-1]] = lib["slices"][0]
    assert facts["libexecstack.so"]["exec_stack"] is True
    assert facts["good.cpython-311-x86_64-linux-gnu.so"]["exec_stack"] is False
    assert facts["libtextrel.so"]["textrel"] is True
    assert facts["libdebug.so"]["debug_bytes"] > 0
    assert facts["good.cpython-311-x86_64-linux-gnu.so"]["debug_bytes"] == 0
    assert facts["libclean.dylib"]["signature"] == "valid"
    assert facts["librpath_added.dylib"]["signature"] == "valid"  # llvm-install-name-tool signs again
    assert facts["libunsigned.dylib"]["signature"] == "absent"
    flipped = facts["libflipped.dylib"]
    assert flipped["signature"] == "invalid" and flipped["signature_page"] == 0
    assert "__TEXT" in flipped["signature_detail"]
    assert facts["libclean.dylib"]["exec_stack"] is None and facts["libexecstack.so"]["signature"] is None
    text = wheelaudit("inspect", audit_wheels["macos_flipped"]).stdout
    assert "signature invalid (page 0" in text
    text = wheelaudit("inspect", audit_wheels["linux_execstack"]).stdout
    assert "executable stack" in text


def test_a_dsym_companion_shows_its_facts_and_gets_no_loader_verdict(audit_wheels):
    """dsymutil's output (MH_DSYM, under *.dSYM/): dyld never opens it. inspect names its kind;
    no signature is asked of it (no WA607), its copied symbol table defines nothing (the module
    stays the one owner of PyInit_withdsym); only its shipped DWARF is reported (WA604)."""
    wheel = audit_wheels["macos_dsym"]
    schema = json.loads(resources.files("wheelaudit").joinpath("schemas/inspect.schema.json").read_text())
    run = wheelaudit("inspect", wheel, "--format", "json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    jsonschema.validate(data, schema)
    libs = {lib["path"]: lib for lib in data["wheels"][0]["libraries"]}
    dsym = libs["auditfix/withdsym.cpython-311-darwin.so.dSYM/Contents/Resources/DWARF/withdsym.cpython-311-darwin.so"]
    assert dsym["kind"] == "dsym"
    assert sorted(s["arch"] for s in dsym["slices"]) == ["arm64", "x86_64"]
    for s in dsym["slices"]:
        assert (s["kind"], s["signature"], s["exports_count"], s["imports_count"]) == ("dsym", None, 0, 0)
        assert s["debug_bytes"] > 0 and s["min_os"] == "11.0"
    module = libs["auditfix/withdsym.cpython-311-darwin.so"]
    assert module["kind"] == "bundle" and {s["signature"] for s in module["slices"]} == {"valid", "absent"}
    run = wheelaudit("owners", wheel, "PyInit_withdsym")
    assert run.returncode == 0, run.stderr
    assert "defined by 1 library" in run.stdout and ".dSYM/" not in run.stdout
    assert "debug companion" in _message(audit_wheels, "macos_dsym", "WA604")


def test_a_string_table_in_its_segments_last_page_is_read_as_the_loader_reads_it(audit_wheels, tmp_path):
    """The kernel and ld.so map a segment's file bytes in whole pages: a dynamic string table that
    runs past p_filesz inside the segment's last page is read (readelf agrees), unless the loader
    zeroes that page's tail (p_memsz > p_filesz)."""
    import zipfile

    wheel = audit_wheels["linux_page_tail"]
    run = wheelaudit("inspect", wheel, "--format", "json")
    assert run.returncode == 0, run.stderr
    [lib] = json.loads(run.stdout)["wheels"][0]["libraries"]
    [sl] = lib["slices"]
    assert (sl["identity"], [d["name"] for d in sl["dependencies"]]) == ("libpagetail.so", ["libc.so.6"])
    assert any("past its segment's file size" in n for n in sl["notes"])
    with zipfile.ZipFile(wheel) as z:
        data = z.read("auditfix/libpagetail.so")
    (tmp_path / "libpagetail.so").write_bytes(data)
    readelf = subprocess.run(["readelf", "-dlW", str(tmp_path / "libpagetail.so")], capture_output=True, text=True)
    assert "Library soname: [libpagetail.so]" in readelf.stdout
    assert "Shared library: [libc.so.6]" in readelf.stdout
    load = next(line.split() for line in readelf.stdout.splitlines() if line.strip().startswith("LOAD"))
    strtab = int(next(line.split()[-1] for line in readelf.stdout.splitlines() if "(STRTAB)" in line), 16)
    strsz = int(next(line.split()[-2] for line in readelf.stdout.splitlines() if "(STRSZ)" in line))
    assert int(load[2], 16) + int(load[4], 16) < strtab + strsz  # past p_filesz ...
    assert load[4] == load[5]  # ... with no zero-filled part
    _rc, findings = check_json(audit_wheels["linux_page_tail_zero_fill"])
    [f] = [f for f in findings if f["code"] == "WA001"]
    assert "dynamic string table" in f["message"] and "runs past the end of its segment" in f["message"]


def test_the_x86_64_isa_level_is_read_where_glibc_reads_it(audit_wheels, tmp_path):
    """GNU_PROPERTY_X86_ISA_1_NEEDED from PT_GNU_PROPERTY, as readelf -n shows it; with that
    program header gone (binutils before 2.35), from the 8-aligned PT_NOTE that holds the note."""
    import struct
    import zipfile

    from wheelaudit.binary import read_binary

    levels = {}
    for scenario, member in (("linux_isa_v3", "libisa_v3.so"), ("musllinux_isa_v2", "libisa_v2.so"),
                             ("linux_isa_baseline", "libisa_baseline.so"), ("linux_ok", "good.cpython-311-x86_64-linux-gnu.so")):
        run = wheelaudit("inspect", audit_wheels[scenario], "--format", "json")
        assert run.returncode == 0, run.stderr
        [lib] = json.loads(run.stdout)["wheels"][0]["libraries"]
        levels[member] = lib["slices"][0].get("x86_isa_needed")
        with zipfile.ZipFile(audit_wheels[scenario]) as z:
            (tmp_path / member).write_bytes(z.read(f"auditfix/{member}"))
    assert levels == {"libisa_v3.so": "x86-64-v3", "libisa_v2.so": "x86-64-v2",
                      "libisa_baseline.so": "x86-64-baseline", "good.cpython-311-x86_64-linux-gnu.so": None}
    notes = subprocess.run(["readelf", "-nW", str(tmp_path / "libisa_v3.so")], capture_output=True, text=True).stdout
    assert "x86 ISA needed: x86-64-baseline, x86-64-v2, x86-64-v3" in notes
    notes = subprocess.run(["readelf", "-nW", str(tmp_path / "libisa_v2.so")], capture_output=True, text=True).stdout
    assert "x86 ISA needed: x86-64-v2" in notes
    # PT_GNU_PROPERTY turned into PT_NULL: the PT_NOTE segments remain (one 8-aligned, one 4-aligned)
    data = bytearray((tmp_path / "libisa_v3.so").read_bytes())
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    types = [struct.unpack_from("<I", data, phoff + i * phentsize)[0] for i in range(phnum)]
    assert types.count(4) == 2 and 0x6474E553 in types
    struct.pack_into("<I", data, phoff + types.index(0x6474E553) * phentsize, 0)
    assert read_binary(bytes(data), "libisa_v3.so").slices[0].x86_isa_needed == "x86-64-v3"
    # a word-aligned note holds it, a 4-aligned one in ELF64 never does (glibc skips those)
    [note8] = [i for i, t in enumerate(types) if t == 4 and struct.unpack_from("<Q", data, phoff + i * phentsize + 48)[0] == 8]
    struct.pack_into("<Q", data, phoff + note8 * phentsize + 48, 4)
    assert read_binary(bytes(data), "libisa_v3.so").slices[0].x86_isa_needed is None
    m = _message(audit_wheels, "linux_isa_v3", "WA609")
    assert "x86-64-v3 (AVX, AVX2" in m and "manylinux_2_28_x86_64" in m and "Haswell (2013)" in m
    assert "CPU ISA level is lower than required" in m
    m = _message(audit_wheels, "musllinux_isa_v2", "WA609")
    assert "x86-64-v2" in m and "musl" in m and "Nehalem" in m


def test_the_clean_fixture_wheels_stay_silent(fixture_wheels):
    """The ExecuTorch-shaped fixtures: right suffixes, arm64 slices signed by ld64.lld, stripped
    ELF with a non-executable stack: no WA6xx finding."""
    for name, path in sorted(fixture_wheels.items()):
        run = wheelaudit("check", path, "--select", "WA6", "--format", "json")
        [wheel] = json.loads(run.stdout)["wheels"]
        assert wheel["findings"] == [], name
        assert run.returncode == 0, name


# ---- the public helpers ---------------------------------------------------------------------

def test_module_suffixes_as_importers_see_them():
    s = module_suffix("_C.cpython-313t-aarch64-linux-musl.so")
    assert (s.python, s.abi, s.arch, s.libc, s.os) == ("cp313", "cp313t", "aarch64", "musl", frozenset({"linux"}))
    s = module_suffix("_x.pypy310-pp73-darwin.so")
    assert (s.python, s.abi, s.os) == ("pp310", "pypy310_pp73", frozenset({"macos"}))
    s = module_suffix("m.cp312-win_arm64.pyd")
    assert (s.python, s.windows_platform) == ("cp312", "win_arm64")
    assert module_suffix("m.abi3.so").python is None
    assert module_suffix("libfoo.so.1") is None and module_suffix("libfoo.dylib") is None


def test_libpython_names():
    assert links_libpython("libpython3.11.so.1.0") and links_libpython("libpython3.13t.so")
    assert links_libpython("@rpath/libpython3.12.dylib")
    assert links_libpython("/Library/Frameworks/Python.framework/Versions/3.11/Python")
    assert not links_libpython("libpython_helpers.so") and not links_libpython("libtorch_python.so")


def test_a_signature_is_checked_over_every_page(audit_wheels):
    """The signature check needs every page, and a signature past the end is a verdict, never
    a crash."""
    import zipfile

    from wheelaudit.binary import macho

    with zipfile.ZipFile(audit_wheels["macos_ok"]) as z:
        data = z.read("auditfix/libclean.dylib")
    [s] = macho.parse(data)
    assert s.signature == "valid"
    assert verify(data, 0, len(data), len(data) + 1, 16).status == "invalid"  # past the end: never a crash


def test_a_damaged_signature_is_a_verdict_never_a_crash(audit_wheels):
    """Bytes of the signature overwritten at random: the slice still reads (no WA001), and its
    signature is valid (a byte no hash covers), invalid, or not verifiable (None)."""
    import random
    import struct
    import zipfile

    from wheelaudit.binary import read_binary

    with zipfile.ZipFile(audit_wheels["macos_ok"]) as z:
        data = z.read("auditfix/libclean.dylib")
    ncmds, = struct.unpack_from("<I", data, 16)
    off, sig = 32, None
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, off)
        if cmd == 0x1D:  # LC_CODE_SIGNATURE
            sig = struct.unpack_from("<II", data, off + 8)
        off += size
    assert sig is not None
    rng = random.Random(22)
    seen = set()
    for _ in range(300):
        bad = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            bad[sig[0] + rng.randrange(min(sig[1], 256))] = rng.randrange(256)
        b = read_binary(bytes(bad), "libclean.dylib")
        assert b.error is None
        seen.add(b.slices[0].signature)
    assert "invalid" in seen and seen <= {"valid", "invalid", None}
