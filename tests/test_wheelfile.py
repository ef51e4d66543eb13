"""A wheel read in place, a `wheel unpack` tree and an installed package give the same facts; and
odd archives end in findings or in "not a wheel", never in a crash."""

from __future__ import annotations

import os
import struct
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz.mutate import Entry, record_hash, wheel_entries, zip_bytes  # noqa: E402
from wheelaudit.archive import NotAWheel, open_wheel, unsafe_member_name  # noqa: E402
from wheelaudit.cli.main import main  # noqa: E402
from wheelaudit.scanner import scan  # noqa: E402


def facts(wheel):
    return {b.path: (b.format, b.kind, b.size, [(s.arch, s.identity, [d.name for d in s.dependencies],
                                                 [r.path for r in s.rpaths], sorted(x.name for x in s.exports),
                                                 sorted(s.imports)) for s in b.slices])
            for b in wheel.libraries}


@pytest.fixture(scope="module")
def layouts(fixture_wheels, tmp_path_factory):
    """macos_clean as a .whl, as a `wheel unpack` tree, and installed in a site-packages with an
    extra top-level directory (as auditwheel's ``pkg.libs``) and a second distribution beside it."""
    whl = fixture_wheels["macos_clean"]
    root = tmp_path_factory.mktemp("layouts")
    unpacked = root / "unpacked" / "executorch-1.6.0"
    with zipfile.ZipFile(whl) as zf:
        zf.extractall(unpacked)
    site = root / "site-packages"
    with zipfile.ZipFile(whl) as zf:
        zf.extractall(site)
    # a top-level directory of the same distribution, listed in its RECORD
    libs = site / "executorch.libs"
    libs.mkdir()
    (libs / "README").write_text("vendored\n")
    record = next(site.glob("executorch-*.dist-info")) / "RECORD"
    import base64
    import hashlib

    digest = base64.urlsafe_b64encode(hashlib.sha256(b"vendored\n").digest()).rstrip(b"=").decode()
    record.write_text(record.read_text() + f"executorch.libs/README,sha256={digest},9\n")
    # another distribution in the same site-packages must not be scanned
    other = site / "other"
    other.mkdir()
    (other / "libother.so").write_bytes((fixture_wheels["linux_clean"].parent / "x").as_posix().encode())
    (site / "__pycache__").mkdir()
    (site / "__pycache__" / "junk.pyc").write_bytes(b"\x7fELF not really")
    return {"whl": whl, "unpacked": unpacked, "installed": site / "executorch"}


def test_the_three_layouts_give_the_same_facts(layouts):
    ref = scan(layouts["whl"])
    assert ref.libraries and not ref.defects
    for kind in ("unpacked", "installed"):
        w = scan(layouts[kind])
        assert facts(w) == facts(ref), kind
        assert (w.name, w.version, w.tags) == (ref.name, ref.version, ref.tags), kind
        assert not w.defects, (kind, [f.message for f in w.defects])
    installed = scan(layouts["installed"])
    assert "executorch.libs/README" in installed.files  # the distribution's other top-level entry
    assert not any(f.startswith("other/") for f in installed.files)  # another distribution


def test_record_is_checked_in_a_tree_too(layouts, tmp_path):
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(layouts["unpacked"], tree)
    victim = tree / "executorch" / "lib" / "libexecutorch.dylib"
    victim.write_bytes(victim.read_bytes() + b"\0")
    w = scan(tree)
    msgs = [f.message for f in w.defects if f.code == "WA002"]
    assert any("libexecutorch.dylib" in m and "hash" in m for m in msgs)


def test_a_tree_that_is_not_a_wheel_is_exit_2(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "x.py").write_text("")
    with pytest.raises(NotAWheel):
        open_wheel(tmp_path / "pkg")
    assert main(["check", str(tmp_path / "pkg")]) == 2
    assert "neither an unpacked wheel nor an installed package" in capsys.readouterr().err


def test_nothing_is_extracted_to_disk(fixture_wheels, tmp_path, monkeypatch):
    """Reading a .whl writes no file: an audit hook records every open() for writing."""
    import sys
    import tempfile

    writes: list[str] = []

    def hook(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            if any(c in mode for c in "wax+") or flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                writes.append(os.fsdecode(args[0]))

    sys.addaudithook(hook)  # audit hooks cannot be removed: it only records
    start = len(writes)
    scan(fixture_wheels["macos_universal2"])
    mine = [p for p in writes[start:] if not p.startswith(tempfile.gettempdir())]
    assert mine == []


# =============================================================================================
# odd archives


def _patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def _cd_offset(data: bytes) -> int:
    return struct.unpack_from("<I", data, data.rfind(b"PK\x05\x06") + 16)[0]


def _end_record_patched(offset: int, fmt: str, change) -> bytes:
    """The small wheel with a field of its end record (at ``offset`` in it) set to ``change(value)``."""
    data = zip_bytes(_entries())
    at = data.rfind(b"PK\x05\x06") + offset
    return _patched(data, at, fmt, change(struct.unpack_from(fmt, data, at)[0]))


def _directory_patched(offset: int, fmt: str, value: int) -> bytes:
    """The small wheel with a field of its first central directory entry set to ``value``."""
    data = zip_bytes(_entries())
    return _patched(data, _cd_offset(data) + offset, fmt, value)


def _directory_cut() -> bytes:
    """The small wheel with its central directory cut after 60 bytes (the end record kept)."""
    data = zip_bytes(_entries())
    return data[:_cd_offset(data) + 60] + data[data.rfind(b"PK\x05\x06"):]


def _entries(**lies) -> list[Entry]:
    """A small wheel with a native member, whose RECORD entry (last) gets ``lies``."""
    entries = wheel_entries([("pkg/lib.so", b"\x7fELF\x02\x01\x01" + bytes(57)), ("pkg/a.py", b"a = 1\n" * 40)])
    for key, value in lies.items():
        setattr(entries[-1], key, value)
    return entries


def _with_extra(tmp: Path, extra: bytes) -> bytes:
    """A wheel written by zipfile whose every entry carries ``extra`` (local and central)."""
    p = tmp / "extra.zip"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zf:
        for e in _entries():
            zi = zipfile.ZipInfo(e.name.decode())
            zi.extra, zi.compress_type = extra, zipfile.ZIP_DEFLATED
            zf.writestr(zi, e.data)
    return p.read_bytes()


def _zip64_forced(tmp: Path) -> bytes:
    """zipfile's ZIP64 local headers (``force_zip64``): the central directory stays plain."""
    p = tmp / "z64.zip"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zf:
        for e in _entries():
            with zf.open(e.name.decode(), "w", force_zip64=True) as fh:
                fh.write(e.data)
    return p.read_bytes()


def _local_flag_flipped(dist: str) -> bytes:
    """RECORD's local header without the UTF-8 flag its directory entry has: zipfile decodes an
    ASCII name alike either way, a UTF-8 one as cp437 (then the names differ)."""
    data = zip_bytes(wheel_entries([("pkg/a.py", b"a = 1\n")], dist=dist))
    at = data.rfind(b"PK\x03\x04")
    return _patched(data, at + 6, "<H", struct.unpack_from("<H", data, at + 6)[0] ^ 0x800)


ARCHIVES = {
    "plain": lambda tmp: zip_bytes(_entries()),
    "comment": lambda tmp: zip_bytes(_entries(), comment=b"an archive comment"),
    "prefix-counted-in-offsets": lambda tmp: zip_bytes(_entries(), prefix=b"#!/bin/sh\nexit 0\n"),
    "duplicate": lambda tmp: zip_bytes(_entries() + [Entry(b"pkg/a.py", b"b = 2\n")]),
    "unsafe-names": lambda tmp: zip_bytes(_entries() + [Entry(n, b"x") for n in (
        b"../evil.py", b"/abs.py", b"pkg\\b.py", b"c:evil.py", b"pkg//x.py", b"./x.py", b"", b"pkg/a\x00b.so")]),
    "nul-cut-to-a-member-name": lambda tmp: zip_bytes(_entries() + [Entry(b"pkg/a.py\x00.so", b"x")]),
    "symlink": lambda tmp: zip_bytes(_entries() + [Entry(b"pkg/link.so", b"/etc/passwd", extattr=0o120777 << 16)]),
    "directories": lambda tmp: zip_bytes(_entries() + [Entry(b"pkg/", b""), Entry(b"pkg/d/", b"data")]),
    "encrypted-and-unknown-method": lambda tmp: zip_bytes(
        _entries() + [Entry(b"pkg/e.py", b"e", flags=0x801), Entry(b"pkg/m.py", b"m", method=99, raw=b"m")]),
    "bzip2-and-stored": lambda tmp: zip_bytes(
        _entries() + [Entry(b"pkg/b.txt", b"bz" * 100, method=12), Entry(b"pkg/s.txt", b"st" * 100, method=0)]),
    "cp437-names": lambda tmp: zip_bytes(_entries() + [Entry(b"pkg/caf\x82.py", b"x", flags=0),
                                                       Entry(b"pkg/caf\xc3\xa9.py", b"y", flags=0)]),
    "utf8-names": lambda tmp: zip_bytes(_entries() + [Entry("pkg/café.py".encode(), b"x"),
                                                      Entry("pkg/日本.py".encode(), b"y")]),
    "overlapping": lambda tmp: zip_bytes(_entries() + [Entry(f"pkg/o{i}.bin".encode(), b"", raw=b"", lie_usize=10,
                                                             lie_csize=400, offset=0) for i in range(3)]),
    # an entry before pkg/lib.so's own in the directory, pointing at its header (30 + 10 + 1 bytes in)
    "refused-entry-sharing-a-header": lambda tmp: zip_bytes([Entry(b"../evil.so", b"x", method=0, offset=41)]
                                                            + _entries()),
    "header-outside-the-file": lambda tmp: zip_bytes(_entries() + [Entry(b"pkg/far.py", b"x", offset=0x7FFFFFF0)]),
    "record-bigger-than-declared": lambda tmp: zip_bytes(_entries(lie_usize=50)),
    "record-smaller-than-declared": lambda tmp: zip_bytes(_entries(lie_usize=90_000)),
    "record-stored-size-lies": lambda tmp: zip_bytes(_entries(method=0, lie_usize=30)),
    "record-compressed-size-short": lambda tmp: zip_bytes(_entries(lie_csize=20)),
    "record-bad-crc": lambda tmp: zip_bytes(_entries(lie_crc=1234)),
    "record-corrupt-deflate": lambda tmp: zip_bytes(_entries(raw=b"\xff" * 40, lie_usize=40)),
    "record-local-name-differs": lambda tmp: zip_bytes(_entries(local_name=b"fuzz-1.0.dist-info/RECORX")),
    "record-local-name-longer": lambda tmp: zip_bytes(_entries(local_name=b"fuzz-1.0.dist-info/RECORDX")),
    "record-local-flag-differs": lambda tmp: _local_flag_flipped("fuzz-1.0"),
    "record-local-flag-differs-utf8": lambda tmp: _local_flag_flipped("fuzé-1.0"),
    "record-data-descriptor-flag": lambda tmp: zip_bytes(_entries(flags=0x808)),
    "record-encrypted": lambda tmp: zip_bytes(_entries(flags=0x801)),
    "record-bzip2": lambda tmp: zip_bytes(_entries(method=12)),
    "record-empty": lambda tmp: zip_bytes(wheel_entries([("pkg/a.py", b"a")], record=False)
                                          + [Entry(b"fuzz-1.0.dist-info/RECORD", b"")]),
    "record-quoted-csv": lambda tmp: zip_bytes(wheel_entries([("pkg/a.py", b"a")], record=False) + [Entry(
        b"fuzz-1.0.dist-info/RECORD", f'"pkg/a.py","{record_hash(b"a")}",1\r\n"x,y",,\n'.encode())]),
    "no-record": lambda tmp: zip_bytes(wheel_entries([("pkg/a.py", b"a")], record=False)),
    "plain-extra-fields": lambda tmp: _with_extra(tmp, b"UT\x05\x00\x01abcd" + b"\x01\x02"),  # (a short tail)
    "zip64-local-headers-only": lambda tmp: _zip64_forced(tmp),
    "empty-archive": lambda tmp: zip_bytes([]),
    "zip64": lambda tmp: zip_bytes(_entries(), zip64=True),
    "prefix-not-in-offsets": lambda tmp: b"#!/bin/sh\nexit 0\n" + zip_bytes(_entries()),
    "zip64-marker-size": lambda tmp: zip_bytes(_entries() + [Entry(b"pkg/big.bin", b"x", lie_usize=0xFFFFFFFF)]),
    "bad-utf8-name": lambda tmp: zip_bytes(_entries() + [Entry(b"pkg/\xff.py", b"x")]),
    "corrupt-extra-field": lambda tmp: _with_extra(tmp, b"\x99\x99\xff\x00ab"),
    "unicode-path-extra-field": lambda tmp: _with_extra(tmp, b"up\x06\x00\x01abcd\x78"),
    "extract-version-64": lambda tmp: _directory_patched(6, "<B", 64),
    "bad-directory-signature": lambda tmp: _directory_patched(0, "<I", 0x02014B51),
    "second-disk": lambda tmp: _end_record_patched(4, "<H", lambda v: 1),
    "entry-count-lies": lambda tmp: _end_record_patched(10, "<H", lambda v: v + 1),
    "directory-size-lies": lambda tmp: _end_record_patched(12, "<I", lambda v: v - 3),
    "truncated-directory": lambda tmp: _directory_cut(),
    "not-a-zip": lambda tmp: b"hello world\n" * 10,
    "empty-file": lambda tmp: b"",
}


@pytest.mark.parametrize("case", sorted(ARCHIVES))
def test_odd_archives_end_in_findings_or_not_a_wheel(case, tmp_path, capsys):
    """Every odd archive: ``check`` exits 0, 1 or 2 with a message (never a crash), and reading it
    in workers gives what reading it in one process gives."""
    data = ARCHIVES[case](tmp_path)
    p = tmp_path / "fuzz-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    p.write_bytes(data)
    rc = main(["check", str(p)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "internal error" not in err
    if rc == 2:
        assert err.startswith("wheelaudit: not a wheel: ")
        with pytest.raises(NotAWheel):
            open_wheel(p)
        return
    assert rc in (0, 1)
    one, two = scan(p, jobs=1), scan(p, jobs=2)
    assert [(f.code, f.message) for f in one.defects] == [(f.code, f.message) for f in two.defects]
    assert facts(one) == facts(two)


def test_the_directory_lists_what_zipfile_lists(fixture_wheels):
    for name, path in fixture_wheels.items():
        with open_wheel(path) as src, zipfile.ZipFile(path) as zf:
            assert [m.path for m in src.members] == [i.filename for i in zf.infolist() if not i.is_dir()], name


def test_safe_names_are_those_the_rules_allow():
    """unsafe_member_name says None exactly where the rules spelt out once more do."""
    import itertools

    pieces = ["a", "/", ".", "..", ":", "\\", "\x00", "c:"]
    for n in range(5):
        for name in map("".join, itertools.product(pieces, repeat=n)):
            assert (unsafe_member_name(name) is None) == _safe_by_the_rules(name), repr(name)


def _safe_by_the_rules(name: str) -> bool:
    """The rules of unsafe_member_name, spelt out once more."""
    if not name or "\x00" in name or "\\" in name or name.startswith("/") or name[1:2] == ":":
        return False
    parts = name.split("/")
    if parts[-1] == "":
        parts.pop()
    return not any(part in ("", ".", "..") for part in parts)
