"""The PE reader against LLVM (llvm-readobj, llvm-objdump) and LIEF on fixtures built from source
(fixtures/build_pe.sh), the MSVC demangling, and hostile PE input.

The LLVM tools run here, in the tests, as the oracle; the audit path never runs anything.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import struct
import subprocess
import sys
from pathlib import Path

import lief
import pytest

from wheelaudit.cli.main import main
from wheelaudit.binary import MalformedBinary, read_binary
from wheelaudit.binary import pe

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz.mutate import tiny_wheel  # noqa: E402

#: MSVC names demangle with pycxxfilt, whose wheels are cp311-abi3 (pyproject.toml); on 3.10 they
#: stay mangled by design
needs_msvc_demangler = pytest.mark.skipif(sys.version_info < (3, 11), reason="pycxxfilt: CPython 3.11+")

FIXTURES = ["x.pyd", "copy.dll", "arm64.pyd", "mingw.dll", "small32.dll", "small.exe"]
WIN_TAG = "cp311-cp311-win_amd64"


def _compare_module():
    spec = importlib.util.spec_from_file_location("compare_pe_real", ROOT / "scripts/compare_pe_real.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CMP = _compare_module()  # the LLVM text parsing is shared with the real-wheel comparison


def _readobj(path: Path, *flags: str) -> str:
    return subprocess.run(["llvm-readobj", *flags, str(path)], capture_output=True, text=True, check=True).stdout


def _field(text: str, name: str) -> str:
    m = re.search(rf"^\s*{name}: (.*)$", text, re.M)
    assert m, name
    return m.group(1).strip()


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fact_equals_llvm(pe_libs, name):
    path = pe_libs / name
    data = path.read_bytes()
    (s,) = pe.parse(data)
    # exports, forwarders, identity, machine, imports and delay-imports per DLL
    llvm = CMP.llvm_facts(str(path))
    assert CMP.compare(CMP.ours(data), llvm) == []
    # the headers
    heads = _readobj(path, "--file-headers", "--coff-debug-directory")
    assert s.kind == ("shared" if "IMAGE_FILE_DLL (0x2000)" in heads else "executable")
    assert s.min_os == f"{_field(heads, 'MajorSubsystemVersion')}.{_field(heads, 'MinorSubsystemVersion')}"
    assert s.linker_version == f"{_field(heads, 'MajorLinkerVersion')}.{_field(heads, 'MinorLinkerVersion')}"
    sub = _field(heads, "Subsystem")  # IMAGE_SUBSYSTEM_WINDOWS_GUI (0x2)
    assert s.subsystem == sub.split(" ")[0].removeprefix("IMAGE_SUBSYSTEM_").lower()
    pdb = re.search(r"PDBFileName: (.*)$", heads, re.M)
    assert s.debug_path == (pdb.group(1).strip() if pdb else None)


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fact_equals_lief(pe_libs, name):
    path = pe_libs / name
    (s,) = pe.parse(path.read_bytes())
    b = lief.parse(str(path))
    ex = b.get_export() if b.has_exports else None
    theirs_exports, theirs_fwd = set(), {}
    if ex is not None:
        assert s.identity == ex.name
        for e in ex.entries:
            label = e.name or f"#{e.ordinal}"
            if e.is_forwarded:
                theirs_fwd[label] = str(e.forward_information)
            elif e.address:
                theirs_exports.add(label)
    assert {x.name for x in s.exports} == theirs_exports
    assert s.forwarders == theirs_fwd
    imports = {i.name: [e.name if not e.is_ordinal else f"#{e.ordinal}" for e in i.entries] for i in b.imports}
    delay = {i.name: [e.name if not e.is_ordinal else f"#{e.ordinal}" for e in i.entries] for i in b.delay_imports}
    assert [d.name for d in s.dependencies if d.kind == "import"] == list(imports)
    assert [d.name for d in s.dependencies if d.kind == "delay"] == list(delay)
    assert s.imports_from == {**imports, **delay}
    assert b.optional_header.major_linker_version == int(s.linker_version.split(".")[0])
    pdb = b.codeview_pdb
    assert s.debug_path == (pdb.filename if pdb is not None else None)
    versions = b.resources_manager.version if b.has_resources else []
    if versions:
        f = versions[0].file_info

        def ver(ms: int, ls: int) -> str:
            return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"

        assert (s.file_version, s.product_version) == (ver(f.file_version_ms, f.file_version_ls),
                                                       ver(f.product_version_ms, f.product_version_ls))
    else:
        assert s.file_version is None and s.product_version is None


def test_fixture_facts_say_what_was_built(pe_libs):
    """The facts build_pe.sh planted, by name (so a broken oracle cannot pass them all)."""
    (x,) = pe.parse((pe_libs / "x.pyd").read_bytes())
    assert (x.arch, x.kind, x.identity, x.min_os, x.subsystem) == ("x86_64", "shared", "x.pyd", "6.2", "windows_gui")
    assert [(d.name, d.kind) for d in x.dependencies] == [
        ("python311.dll", "import"), ("KERNEL32.dll", "import"), ("MSVCP140.dll", "import"),
        ("ORDLIB.dll", "import"), ("DELAYED.dll", "delay")]
    assert x.imports_from["ORDLIB.dll"] == ["#12"]
    assert x.imports_from["DELAYED.dll"] == ["delayed_entry"]
    assert "PyModule_Create2" in x.imports and "?_Xlength_error@std@@YAXPEBD@Z" in x.imports
    assert x.debug_path == "C:\\Users\\builder\\et\\x.pdb"
    assert (x.file_version, x.product_version) == ("14.38.33130.7", "1.5.1.0")
    assert {e.name for e in x.exports} >= {"PyInit_x"}
    (c,) = pe.parse((pe_libs / "copy.dll").read_bytes())
    assert c.forwarders == {"HeapAlloc2": "NTDLL.RtlAllocateHeap", "FwdByOrdinal": "OTHER.#7"}
    assert "#40" in {e.name for e in c.exports} and "HeapAlloc2" not in {e.name for e in c.exports}
    assert any("forwarded" in n for n in c.notes)
    assert pe.parse((pe_libs / "arm64.pyd").read_bytes())[0].arch == "arm64"
    assert pe.parse((pe_libs / "small32.dll").read_bytes())[0].arch == "x86"
    assert pe.parse((pe_libs / "small.exe").read_bytes())[0].kind == "executable"
    assert pe.parse((pe_libs / "small.exe").read_bytes())[0].identity == "small.exe"


@needs_msvc_demangler
def test_msvc_and_mingw_names_demangle(pe_libs):
    (x,) = pe.parse((pe_libs / "x.pyd").read_bytes())
    by_name = {e.name: e.demangled for e in x.exports}
    assert by_name["?register_backend@runtime@executorch@@YAHAEBUBackend@12@@Z"] == \
        "int executorch::runtime::register_backend(struct executorch::runtime::Backend const &)"
    assert by_name["?get_num_registered_backends@runtime@executorch@@YAHXZ"] == \
        "int executorch::runtime::get_num_registered_backends(void)"
    assert by_name["PyInit_x"] == "PyInit_x"
    (m,) = pe.parse((pe_libs / "mingw.dll").read_bytes())
    assert "mlx::core::size_of(int)" in {e.demangled for e in m.exports}


def _wheel(tmp_path: Path, members: list[tuple[str, bytes]]) -> Path:
    w = tmp_path / f"fuzz-1.0-{WIN_TAG}.whl"
    w.write_bytes(tiny_wheel(members, tag=WIN_TAG))
    return w


@needs_msvc_demangler
def test_rule_patterns_match_msvc_names_and_find_the_second_copy(pe_libs, tmp_path, capsys):
    wheel = _wheel(tmp_path, [("pkg/x.pyd", (pe_libs / "x.pyd").read_bytes()),
                              ("pkg/copy.dll", (pe_libs / "copy.dll").read_bytes())])
    rc = main(["owners", str(wheel), "executorch::runtime::register_backend", "std::_Xlength_error",
               "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    text = json.dumps(out)
    assert "pkg/copy.dll" in text and "pkg/x.pyd" in text
    rules = tmp_path / "rules.toml"
    rules.write_text('version = 1\n[[component]]\nname = "runtime"\n'
                     'symbols = ["executorch::runtime::register_backend"]\nowner = "pkg/x.pyd"\n')
    rc = main(["check", str(wheel), "--rules", str(rules), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    findings = report["wheels"][0]["findings"]
    assert rc == 1
    assert any("pkg/copy.dll" in f["paths"] for f in findings), findings


@needs_msvc_demangler
def test_inspect_shows_the_pe_facts(pe_libs, tmp_path, capsys):
    wheel = _wheel(tmp_path, [("pkg/x.pyd", (pe_libs / "x.pyd").read_bytes()),
                              ("pkg/copy.dll", (pe_libs / "copy.dll").read_bytes())])
    assert main(["inspect", str(wheel), "--symbols"]) == 0
    text = capsys.readouterr().out
    assert "dep DELAYED.dll (delay)" in text and "dep python311.dll  → external: python311.dll" in text
    assert "pdb C:\\Users\\builder\\et\\x.pdb" in text and "subsystem windows_gui 6.2" in text
    assert "file version 14.38.33130.7" in text
    assert "U #12 (ORDLIB.dll)" in text and "F HeapAlloc2 -> NTDLL.RtlAllocateHeap" in text
    assert "T int executorch::runtime::register_backend(struct executorch::runtime::Backend const &)" in text
    assert main(["inspect", str(wheel), "--symbols", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    import jsonschema

    schema = json.loads((ROOT / "src/wheelaudit/schemas/inspect.schema.json").read_text())
    jsonschema.validate(doc, schema)
    libs = {lib["path"]: lib for lib in doc["wheels"][0]["libraries"]}
    sl = libs["pkg/x.pyd"]["slices"][0]
    assert sl["identity"] == "x.pyd" and sl["min_os"] == "6.2"
    assert {"name": "DELAYED.dll", "kind": "delay"} in [{k: d[k] for k in ("name", "kind")} for d in sl["dependencies"]]
    assert sl["pe"]["debug_path"] == "C:\\Users\\builder\\et\\x.pdb"
    assert sl["pe"]["imports_from"]["ORDLIB.dll"] == ["#12"]
    assert libs["pkg/copy.dll"]["slices"][0]["pe"]["forwarders"]["HeapAlloc2"] == "NTDLL.RtlAllocateHeap"


# ---- hostile input ------------------------------------------------------------------------------
def _headers(d: bytes) -> dict[str, int]:
    lfanew = struct.unpack_from("<I", d, 0x3C)[0]
    opt = lfanew + 24
    plus = struct.unpack_from("<H", d, opt)[0] == 0x20B
    dirs = opt + (112 if plus else 96)
    return {"lfanew": lfanew, "opt": opt, "dirs": dirs, "sections": opt + struct.unpack_from("<H", d, lfanew + 20)[0]}


def _rva_to_off(d: bytes, rva: int) -> int:
    h = _headers(d)
    n = struct.unpack_from("<H", d, h["lfanew"] + 6)[0]
    for i in range(n):
        vsize, va, rsize, raw = struct.unpack_from("<IIII", d, h["sections"] + 40 * i + 8)
        if va <= rva < va + max(vsize, rsize):
            return raw + rva - va
    raise KeyError(rva)


def _export_dir(d: bytes) -> int:
    return _rva_to_off(d, struct.unpack_from("<I", d, _headers(d)["dirs"])[0])


def _import_dir(d: bytes) -> int:
    return _rva_to_off(d, struct.unpack_from("<I", d, _headers(d)["dirs"] + 8)[0])


def _mutated(base: bytes, at: int, fmt: str, value: int) -> bytes:
    d = bytearray(base)
    struct.pack_into(fmt, d, at, value)
    return bytes(d)


def hostile_cases(libs: Path) -> list[tuple[str, bytes, str]]:
    x = (libs / "x.pyd").read_bytes()
    h = _headers(x)
    exp, imp = _export_dir(x), _import_dir(x)
    return [
        ("lfanew past the end", _mutated(x, 0x3C, "<I", 0xFFFFFFF0), "past the end"),
        ("no PE signature", _mutated(x, h["lfanew"], "<I", 0x12345678), "PE signature"),
        ("bad optional magic", _mutated(x, h["opt"], "<H", 0x999), "neither PE32"),
        ("sections past the end", _mutated(x, h["lfanew"] + 6, "<H", 0xFFFF), "section table"),
        ("optional header too big", _mutated(x, h["lfanew"] + 20, "<H", 0xFFFF), "optional header"),
        ("export count huge", _mutated(x, exp + 20, "<I", 0x7FFFFFFF), "limit"),
        ("export table outside", _mutated(x, exp + 28, "<I", 0x7FFFFFF0), "outside the file's sections"),
        ("export ordinal out of range", _mutated(x, _rva_to_off(x, struct.unpack_from("<I", x, exp + 36)[0]), "<H", 0xFFFF),
         "address table entry"),
        ("DLL name outside", _mutated(x, exp + 12, "<I", 0x7FFFFFF0), "outside"),
        ("import descriptor name outside", _mutated(x, imp + 12, "<I", 0x7FFFFFF0), "outside"),
        ("import lookup table outside", _mutated(x, imp, "<I", 0x7FFFFFF0), "outside"),
        ("debug directory huge", _mutated(x, h["dirs"] + 6 * 8 + 4, "<I", 0x7FFFFFF0), "limit"),
        ("delay descriptors outside", _mutated(x, h["dirs"] + 13 * 8, "<I", 0x7FFFFFF0), "outside"),
    ]


def test_hostile_pe_raises_malformed_with_a_reason(pe_libs):
    for name, data, reason in hostile_cases(pe_libs):
        with pytest.raises(MalformedBinary, match=reason):
            pe.parse(data)
        b = read_binary(data, "pkg/x.pyd")
        assert b is not None and b.error and reason in b.error, (name, b.error)


def test_every_truncation_and_random_damage_is_malformed_or_facts(pe_libs):
    """Every cut of each fixture and seeded random byte damage: facts or MalformedBinary, nothing
    else (no other exception; loops are bounded by the bytes they stand on)."""
    rng = random.Random(19)
    for name in FIXTURES:
        data = (pe_libs / name).read_bytes()
        step = max(1, len(data) // 400)
        for cut in list(range(0, min(len(data), 1024))) + list(range(1024, len(data), step)):
            try:
                pe.parse(data[:cut])
            except MalformedBinary as exc:
                assert str(exc)
        for _ in range(300):
            d = bytearray(data)
            for _k in range(rng.randint(1, 8)):
                at = rng.randrange(0, min(len(d), 4096)) if rng.random() < 0.7 else rng.randrange(len(d))
                d[at] = rng.randrange(256)
            try:
                pe.parse(bytes(d))
            except MalformedBinary as exc:
                assert str(exc)


def test_shared_lookup_table_is_bounded(pe_libs):
    """Tens of thousands of import descriptors all naming one long lookup table: the reader reads
    it once (cached) or stops at its entry budget; never quadratic work."""
    x = bytearray((pe_libs / "x.pyd").read_bytes())
    imp = _import_dir(bytes(x))
    first = bytes(x[imp:imp + 20])
    # a new section at the end holding 60,000 copies of the first descriptor, then a null one
    h = _headers(bytes(x))
    nsec = struct.unpack_from("<H", x, h["lfanew"] + 6)[0]
    last = h["sections"] + 40 * (nsec - 1)
    vsize, va, rsize, raw = struct.unpack_from("<IIII", x, last + 8)
    new_va = (va + max(vsize, rsize) + 0xFFFF) & ~0xFFFF
    body = first * 60_000 + bytes(20)
    raw_new = (len(x) + 511) & ~511
    x += bytes(raw_new - len(x)) + body
    sec = struct.pack("<8sIIIIIIHHI", b".evil", len(body), new_va, len(body), raw_new, 0, 0, 0, 0, 0x40000040)
    x[last + 40:last + 80] = sec
    struct.pack_into("<H", x, h["lfanew"] + 6, nsec + 1)
    struct.pack_into("<II", x, h["dirs"] + 8, new_va, len(body))
    (s,) = pe.parse(bytes(x))
    assert s.imports_from["python311.dll"] == ["PyExc_RuntimeError", "PyLong_FromLong", "PyModule_Create2"]


def test_hostile_pe_in_a_wheel_is_wa001(pe_libs, tmp_path, capsys):
    members = [(f"pkg/h{i}.pyd", data) for i, (_n, data, _r) in enumerate(hostile_cases(pe_libs))]
    wheel = _wheel(tmp_path, members)
    rc = main(["check", str(wheel), "--format", "json", "--select", "WA001"])
    out, err = capsys.readouterr()
    assert rc == 1 and err == ""
    found = {f["subject"] for f in json.loads(out)["wheels"][0]["findings"] if f["code"] == "WA001"}
    assert found == {m for m, _ in members}




def test_names_pointing_into_one_long_run_are_bounded(pe_libs):
    """Many import lookup entries naming offsets inside one long run of non-NUL bytes: the bytes
    scanned for names are bounded (pe.MAX_NAME_BYTES), so the reader stops with a reason instead
    of scanning the run once per entry."""
    x = bytearray((pe_libs / "x.pyd").read_bytes())
    h = _headers(bytes(x))
    nsec = struct.unpack_from("<H", x, h["lfanew"] + 6)[0]
    last = h["sections"] + 40 * (nsec - 1)
    vsize, va, rsize, _raw = struct.unpack_from("<IIII", x, last + 8)
    new_va = (va + max(vsize, rsize) + 0xFFFF) & ~0xFFFF
    n = 1_000_000
    run_rva = new_va + 20 * 2 + 8 * (n + 1)
    # one descriptor, its lookup table (every entry a name 60,000 bytes long, at its own offset), the run
    ilt = struct.pack(f"<{n}Q", *(run_rva + (i % 4096) for i in range(n))) + bytes(8)
    name_rva = run_rva + 70_000
    body = struct.pack("<IIIII", new_va + 40, 0, 0, name_rva, new_va + 40) + bytes(20) + ilt \
        + b"A" * 60_000 + bytes(10_000) + b"DLL.dll\0"
    raw_new = (len(x) + 511) & ~511
    x += bytes(raw_new - len(x)) + body
    x[last + 40:last + 80] = struct.pack("<8sIIIIIIHHI", b".evil", len(body), new_va, len(body), raw_new,
                                         0, 0, 0, 0, 0x40000040)
    struct.pack_into("<H", x, h["lfanew"] + 6, nsec + 1)
    struct.pack_into("<II", x, h["dirs"] + 8, new_va, 40)
    struct.pack_into("<II", x, h["dirs"] + 13 * 8, 0, 0)  # (no delay-imports to read)
    with pytest.raises(MalformedBinary, match="names of the image's tables total more than"):
        pe.parse(bytes(x))
