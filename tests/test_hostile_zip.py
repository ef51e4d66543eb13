"""Hostile and broken wheels, end to end through ``wheelaudit check``.

Every archive here is built in the test, byte by byte (``fuzz/mutate.py``'s ``zip_bytes``, which
lets any field lie) or with :mod:`zipfile`. Each must end as a precise WA002 finding (exit 1) or
as "not a wheel" (exit 2): never a traceback, never a hang, in bounded memory, and with nothing
written anywhere (an audit hook, ``fuzz/guard.py``, watches every run).
"""

from __future__ import annotations

import os
import struct
import sys
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bounds import no_hang, read_by  # noqa: E402
from fuzz.guard import Guard  # noqa: E402
from fuzz.mutate import Entry, record_hash, wheel_entries, zip_bytes  # noqa: E402
from wheelaudit.cli.main import main  # noqa: E402
from wheelaudit.archive import MAX_RATIO, MAX_TOTAL_RATIO, NotAWheel, open_wheel, read_zip_directory  # noqa: E402
from wheelaudit.scanner import scan  # noqa: E402

WHEEL = "fuzz-1.0-py3-none-any.whl"
ELF = b"\x7fELF\x02\x01\x01" + bytes(57)  # a (truncated) ELF: read as a native binary if reached


def check(path: Path, capsys, *extra: str, max_read: int | None = None) -> tuple[int, str, str]:
    """``wheelaudit check PATH`` in-process, watched: no write anywhere, no program run, no
    library loaded, no code from the wheel; never a hang (:func:`bounds.no_hang`); and, given
    ``max_read``, at most that many bytes read (files and pipes: what a bomb would make it read)."""
    guard = Guard(allowed=[], foreign=[path.parent])
    with no_hang(), guard.watch():
        if max_read is None:
            rc = main(["check", str(path), *extra])
        else:
            rc, read = read_by(lambda: main(["check", str(path), *extra]))
    out, err = capsys.readouterr()
    if max_read is not None:  # (two runs: the report twice)
        out, err = out[: len(out) // 2], err[: len(err) // 2]
    assert guard.violations == [], guard.violations
    assert "Traceback" not in out + err
    if max_read is not None:
        assert read <= max_read, f"{path.name}: {read} bytes read, more than {max_read}"
    return rc, out, err


def write(tmp_path: Path, data: bytes, name: str = WHEEL) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def findings(out: str) -> list[str]:
    """The message lines of the text report."""
    return [ln.strip() for ln in out.splitlines() if ln.startswith("    ") and ln.strip() != "at" and not ln.strip().startswith(("at ", "hint: "))]


# =============================================================================================
# member names, links, duplicates


@pytest.mark.parametrize("name, why", [
    ("../evil.py", "climbs out of the wheel with '..'"),
    ("pkg/../../evil.py", "climbs out of the wheel with '..'"),
    ("/abs/evil.py", "is an absolute path"),
    ("pkg\\evil.py", "contains a backslash"),
    ("C:/evil.py", "has a drive letter"),
    ("c:evil.py", "has a drive letter"),
    ("pkg/a\x00b.so", "contains a NUL byte"),  # zipfile itself would cut the name at the NUL
    ("pkg//evil.py", "has an empty or '.' path component (it would install under another name)"),
    ("./evil.py", "has an empty or '.' path component (it would install under another name)"),
    ("", "is empty"),
])
def test_unsafe_member_names(tmp_path, capsys, name, why):
    entries = wheel_entries([("pkg/ok.py", b"ok\n")])
    entries.insert(0, Entry(name.encode(), ELF))
    p = write(tmp_path, zip_bytes(entries))
    rc, out, _ = check(p, capsys)
    assert rc == 1
    assert [f for f in findings(out)] == [f"member name {name!r} {why}; it was not read"]
    w = scan(p)
    assert w.libraries == []  # the ELF behind the name was never read
    assert name not in w.files


def test_symlink_member(tmp_path, capsys):
    entries = wheel_entries([("pkg/ok.py", b"ok\n")])
    entries.append(Entry(b"pkg/link.so", b"/etc/passwd", extattr=0o120777 << 16))
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    assert findings(out) == ["member pkg/link.so is a symbolic link; wheels cannot carry links and it was not read"]


def test_duplicate_member_names(tmp_path, capsys):
    entries = wheel_entries([("pkg/lib.so", ELF)])
    entries.append(Entry(b"pkg/lib.so", b"\x7fELF" + b"\xff" * 60))  # a second, different copy
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    assert "member pkg/lib.so appears more than once in the zip directory" in findings(out)


def test_directory_entry_with_data(tmp_path, capsys):
    entries = wheel_entries([("pkg/ok.py", b"ok\n")])
    entries.append(Entry(b"pkg/dir/", ELF))
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    assert findings(out) == [f"directory entry pkg/dir/ carries {len(ELF)} bytes; they were not read"]


def test_encrypted_and_unknown_methods(tmp_path, capsys):
    entries = wheel_entries([("pkg/a.py", b"a\n"), ("pkg/b.py", b"b\n")])
    entries[0].flags |= 1
    entries[1].method, entries[1].raw = 99, b"b\n"
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    assert findings(out) == [  # and no "RECORD lists pkg/a.py, which the wheel does not contain"
        "member pkg/a.py is encrypted; it was not read",
        "member pkg/b.py uses compression method 99, which cannot be read (stored and deflate can); it was "
        "not read",
    ]


# =============================================================================================
# sizes, offsets and data that lie


@pytest.mark.parametrize("method", [0, 8])
def test_declared_size_bigger_than_the_data(tmp_path, capsys, method):
    data = b"A" * 5000
    entries = wheel_entries([("pkg/data.bin", data)])
    entries[0].method, entries[0].lie_usize = method, 9000  # CRC matches the 5000 bytes
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    assert findings(out) == ["pkg/data.bin: the zip directory declares 9000 bytes but the member holds 5000"]


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("method", [0, 8])
def test_a_wrong_crc_is_found_whatever_reads_the_member(tmp_path, capsys, method, jobs):
    """A small member whose data, size and RECORD hash agree but whose CRC-32 lies (the zip would
    not install): WA002 in one process and in workers; the member reader says so of it alone."""
    names = [f"pkg/m{i}.txt" for i in range(6)] + ["pkg/lone.txt"]
    entries = wheel_entries([(n, f"member {n}\n".encode() * 50) for n in names])
    for e in entries:
        e.method = method
        if e.name in (b"pkg/m3.txt", b"pkg/lone.txt"):
            e.lie_crc = zlib.crc32(e.data) ^ 1
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys, "--jobs", jobs)
    assert rc == 1
    got = sorted(findings(out))
    assert len(got) == 2 and all("Bad CRC-32" in m for m in got), got
    assert got[0].startswith("pkg/lone.txt: ") and got[1].startswith("pkg/m3.txt: ")
    with open_wheel(tmp_path / WHEEL) as source:
        lone = source.reader.read(source.by_path["pkg/lone.txt"])
        assert lone.error == "cannot read: Bad CRC-32 for file 'pkg/lone.txt'"
        ok = source.reader.read(source.by_path["pkg/m2.txt"])
        assert (ok.format, ok.data, ok.error) == (None, None, None) and ok.digest == record_hash(entries[2].data)


@pytest.mark.parametrize("method", [0, 8])
def test_declared_size_smaller_than_the_data(tmp_path, capsys, method):
    entries = wheel_entries([("pkg/data.bin", b"A" * 5000)])
    entries[0].method, entries[0].lie_usize = method, 100
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    (msg,) = findings(out)
    assert msg.startswith("pkg/data.bin: ") and ("Bad CRC-32" in msg or "larger than its declared" in msg), msg


def test_compressed_size_lies(tmp_path, capsys):
    # bigger: its bytes would run over the next member's header (what overlapping bombs do)
    entries = wheel_entries([("pkg/data.bin", b"A" * 5000)])
    entries[0].lie_csize = 4000
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    (msg,) = findings(out)
    assert msg.startswith("member pkg/data.bin runs to byte ") and "over the header of" in msg and "it was not read" in msg
    # smaller: the data ends early
    entries = wheel_entries([("pkg/data.bin", os.urandom(5000))])
    entries[0].method, entries[0].lie_csize = 0, 10
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    assert findings(out)[0].startswith("pkg/data.bin: cannot read: ")


def test_local_header_that_disagrees_and_offsets_outside_the_file(tmp_path, capsys):
    entries = wheel_entries([("pkg/a.py", b"a\n")])
    entries[0].local_name = b"pkg/evil.so"
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    assert findings(out) == ["pkg/a.py: cannot read: File name in directory 'pkg/a.py' and header b'pkg/evil.so' differ."]
    entries = wheel_entries([("pkg/a.py", b"a\n")])
    entries[0].offset = 0x7FFFFFF0
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    assert any(f.startswith("member pkg/a.py has its local header at byte 2147483632, outside the ") for f in findings(out))
    # (and the header the directory should have pointed at is a member it does not list)
    assert any("(member 'pkg/a.py') is not listed in the central directory" in f for f in findings(out))


def test_corrupt_compressed_data(tmp_path, capsys):
    entries = wheel_entries([("pkg/lib.so", ELF)])
    entries[0].raw, entries[0].lie_usize = b"\xff" * 40, len(ELF)  # not a deflate stream
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    (msg,) = findings(out)
    assert msg.startswith("pkg/lib.so: cannot read: corrupt member data (")


def test_hostile_record_wheel_and_metadata(tmp_path, capsys):
    di = "fuzz-1.0.dist-info"
    # a RECORD field larger than the csv module's limit, and a bare carriage return
    for record, why in ((b"x" * 200_000 + b",sha256=x,1\n", "field larger than field limit"),
                        (b"pkg/a.py,sha256=x,1\rjunk\"\r\n", "new-line character seen in unquoted field")):
        entries = wheel_entries([("pkg/a.py", b"a\n")], record=False)
        entries.append(Entry(f"{di}/RECORD".encode(), record))
        rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
        assert rc == 1
        (msg,) = findings(out)
        assert msg.startswith(f"{di}/RECORD is not valid CSV (line 1: ") and why in msg
        assert msg.endswith("no file can be verified")
    # WHEEL and METADATA whose data is corrupt
    entries = wheel_entries([("pkg/a.py", b"a\n")])
    for e in entries:
        if e.name.endswith((b"/WHEEL", b"/METADATA")):
            e.raw, e.lie_usize = b"\xff" * 20, 40
    rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 1
    msgs = findings(out)
    assert any(m.startswith(f"{di}/WHEEL cannot be read (corrupt member data (") for m in msgs)
    assert any(m.startswith(f"{di}/METADATA cannot be read (") for m in msgs)


# =============================================================================================
# zip bombs


def _zeros_deflate(mib: int) -> tuple[bytes, int]:
    """A raw deflate stream of ``mib`` MiB of zeros, built in milliseconds: after a full flush the
    compressor starts over, so one encoded MiB repeats. Returns (stream, CRC-32)."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = co.compress(bytes(1 << 20)) + co.flush(zlib.Z_FULL_FLUSH)
    stream = block * mib + co.flush()
    crc = 0
    zero = bytes(1 << 20)
    for _ in range(mib):
        crc = zlib.crc32(zero, crc)
    return stream, crc


def test_zeros_deflate_helper_is_a_real_stream():
    stream, crc = _zeros_deflate(3)
    out = zlib.decompress(stream, -15)
    assert out == bytes(3 << 20) and zlib.crc32(out) == crc


def test_high_ratio_member_is_not_inflated(tmp_path, capsys):
    stream, _ = _zeros_deflate(1024)  # 1 GiB of zeros in about 1 MB
    entries = wheel_entries([("pkg/ok.py", b"ok\n")])
    entries.append(Entry(b"pkg/zeros.bin", b"", raw=stream, lie_usize=1 << 30, lie_crc=0))
    tracemalloc.start()
    try:
        # (its compressed megabyte is never read: a tenth of it bounds what the run reads)
        rc, out, _ = check(write(tmp_path, zip_bytes(entries, zip64=True)), capsys, max_read=len(stream) // 10)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rc == 1
    assert findings(out) == [f"member pkg/zeros.bin inflates {len(stream)} bytes to {1 << 30} (ratio above "
                             f"{MAX_RATIO}: a zip bomb?); it was not read"]
    assert peak < 64 << 20


def test_many_members_each_under_the_member_limit(tmp_path, capsys):
    """Seventy members of 15 MiB of zeros (each below the per-member check, 16 MiB): together they
    inflate about 1 MB to over 1 GiB, and the wheel is refused before any is read."""
    stream, crc = _zeros_deflate(15)
    entries = wheel_entries([])
    entries += [Entry(f"pkg/z{i}.bin".encode(), b"", raw=stream, lie_usize=15 << 20, lie_crc=crc) for i in range(70)]
    rc, _, err = check(write(tmp_path, zip_bytes(entries)), capsys)
    assert rc == 2
    assert f"above {MAX_TOTAL_RATIO}: a zip bomb?); not read" in err and "its members inflate" in err


def test_high_ratio_data_below_the_limits_is_read_in_bounded_memory(tmp_path, capsys):
    """Below the limits, high-ratio data is read, streamed: 195 MiB through a few MiB of memory."""
    stream, crc = _zeros_deflate(15)
    names = [f"pkg/z{i}.bin" for i in range(13)]
    entries = [Entry(n.encode(), b"", raw=stream, lie_usize=15 << 20, lie_crc=crc) for n in names]
    di = "fuzz-1.0.dist-info"
    meta = [(f"{di}/METADATA", b"Metadata-Version: 2.1\nName: fuzz\nVersion: 1.0\n"),
            (f"{di}/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")]
    zeros_hash = record_hash(bytes(15 << 20))
    rows = "".join(f"{n},{zeros_hash},{15 << 20}\n" for n in names)
    rows += "".join(f"{n},{record_hash(d)},{len(d)}\n" for n, d in meta) + f"{di}/RECORD,,\n"
    entries += [Entry(n.encode(), d) for n, d in meta] + [Entry(f"{di}/RECORD".encode(), rows.encode())]
    tracemalloc.start()
    try:
        rc, out, _ = check(write(tmp_path, zip_bytes(entries)), capsys)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rc == 0, out
    assert peak < 48 << 20, f"peak {peak >> 20} MiB"


def _quoted_overlap_bomb(files: int, kernel_mib: int) -> bytes:
    """David Fifield's "quoted overlap" zip bomb: every member's compressed data starts with a
    stored deflate block that quotes the next member's local header, and all of them end in the
    same kernel; each member inflates to the kernel and more, from a few bytes of its own."""
    kernel, kernel_crc = _zeros_deflate(kernel_mib)
    names = [f"pkg/b{i:04d}.bin".encode() for i in range(files)]
    # from the last member back: (local header, uncompressed size, CRC of its output)
    headers: list[bytes] = [b""] * files
    usize, crc_tail, csize = kernel_mib << 20, kernel_crc, len(kernel)
    out_prefix_crcs = []
    for i in range(files - 1, -1, -1):
        if i < files - 1:
            nxt = headers[i + 1]
            usize += len(nxt)
            csize += 5 + len(nxt)
        # the output of member i: the headers of i+1..n-1, then the kernel's zeros
        quoted = b"".join(headers[i + 1:])
        crc = zlib.crc32(quoted)
        zero = bytes(1 << 20)
        for _ in range(kernel_mib):
            crc = zlib.crc32(zero, crc)
        headers[i] = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, csize, usize,
                                 len(names[i]), 0) + names[i]
        out_prefix_crcs.append((i, crc, csize, usize))
    del crc_tail
    body = bytearray()
    offsets = []
    for i in range(files):
        offsets.append(len(body))
        body += headers[i]
        if i < files - 1:
            nxt = headers[i + 1]
            body += struct.pack("<BHH", 0, len(nxt), len(nxt) ^ 0xFFFF)  # a stored, non-final block
    body += kernel
    cd = bytearray()
    info = {i: (crc, csize, usize) for i, crc, csize, usize in out_prefix_crcs}
    for i in range(files):
        crc, csize, usize = info[i]
        cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0314, 20, 0, 8, 0, 0x21, crc, csize, usize,
                          len(names[i]), 0, 0, 0, 0, 0o100644 << 16, offsets[i]) + names[i]
    cd_start = len(body)
    return bytes(body + cd + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, files, files, len(cd), cd_start, 0))


def test_overlapping_members_bomb(tmp_path, capsys):
    data = _quoted_overlap_bomb(60, 4)  # ~4 KB that inflate to 60 x 4 MiB
    p = write(tmp_path, data, "bomb-1.0-py3-none-any.whl")
    with zipfile.ZipFile(p) as zf:  # it is a real bomb: a stdlib without the overlap check reads the members
        try:
            member = zf.read("pkg/b0058.bin")
        except zipfile.BadZipFile as exc:  # CPython >= 3.11.8 / 3.12.2, and Debian 12's patched 3.11.2 (CVE-2024-0450)
            assert "Overlapped entries" in str(exc)
        else:
            assert member[-16:] == bytes(16) and len(member) > 4 << 20
    rc, out, err = check(p, capsys)
    assert rc == 2 and "a wheel has exactly one *.dist-info directory, this zip has none" in err  # (no .dist-info)
    overlaps = [f.message for f in read_zip_directory(p).problems
                if "overlapping members are how a zip bomb multiplies its data" in f.message]
    assert len(overlaps) == 59  # all but the last, which holds only the kernel
    assert overlaps[0].startswith("member pkg/b0000.bin runs to byte ")


def test_full_overlap_every_entry_points_at_one_header(tmp_path, capsys):
    stream, crc = _zeros_deflate(8)
    entries = [Entry(b"pkg/a.bin", b"", raw=stream, lie_usize=8 << 20, lie_crc=crc)]
    entries += [Entry(f"pkg/a{i}.bin".encode(), b"", raw=b"", lie_usize=8 << 20, lie_crc=crc, lie_csize=len(stream),
                      offset=0) for i in range(200)]
    p = write(tmp_path, zip_bytes(entries))
    rc, out, _ = check(p, capsys)
    assert rc == 2  # (and no .dist-info: not a wheel)
    assert sum("overlapping members" in f.message for f in read_zip_directory(p).problems) >= 200


def test_a_zip_inside_the_wheel_is_only_bytes(tmp_path, capsys, monkeypatch):
    inner_stream, _ = _zeros_deflate(1024)
    inner = zip_bytes([Entry(b"zeros.bin", b"", raw=inner_stream, lie_usize=1 << 30, lie_crc=0)], zip64=True)
    nested = zip_bytes([Entry(b"inner.zip", inner, method=0)] * 1)
    p = write(tmp_path, zip_bytes(wheel_entries([("pkg/inner.zip", inner), ("pkg/nested.zip", nested)])))
    opened = []
    real_init = zipfile.ZipFile.__init__

    def spy(self, file, *a, **kw):
        opened.append(file)
        return real_init(self, file, *a, **kw)

    monkeypatch.setattr(zipfile.ZipFile, "__init__", spy)
    rc, out, _ = check(p, capsys)
    assert rc == 0, out
    assert all(Path(os.fsdecode(f)) == p for f in opened if not hasattr(f, "read")), opened
    assert not any(hasattr(f, "read") for f in opened)  # no archive opened from bytes in memory


# =============================================================================================
# ZIP64, truncation, not a zip at all


def test_forced_zip64_headers(tmp_path, capsys):
    p = tmp_path / WHEEL
    di = "fuzz-1.0.dist-info"
    files = {"pkg/a.py": b"a\n", f"{di}/METADATA": b"Metadata-Version: 2.1\nName: fuzz\nVersion: 1.0\n",
             f"{di}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            with zf.open(name, "w", force_zip64=True) as fh:
                fh.write(data)
        rows = "".join(f"{n},{record_hash(d)},{len(d)}\n" for n, d in files.items()) + f"{di}/RECORD,,\n"
        zf.writestr(f"{di}/RECORD", rows)
    assert b"\x01\x00\x10\x00" in p.read_bytes()  # a ZIP64 extra field in the local headers
    rc, out, _ = check(p, capsys)
    assert rc == 0, out


def test_zip64_with_more_than_65535_members(tmp_path, capsys):
    n = 66_000
    entries = wheel_entries([(f"pkg/m{i}.txt", b"") for i in range(n)])
    for e in entries:
        e.method = 0
    data = zip_bytes(entries, zip64=True)
    assert data.rfind(b"PK\x06\x06") > 0  # the ZIP64 end of central directory record
    p = write(tmp_path, data)
    with open_wheel(p) as src:
        assert len(src.members) == n + 3
    rc, out, _ = check(p, capsys)
    assert rc == 0, out


@pytest.mark.parametrize("cut", ["eocd", "half-of-cd", "cd", "end-record-only"])
def test_truncated_central_directory(tmp_path, capsys, cut):
    good = zip_bytes(wheel_entries([("pkg/a.py", b"a\n" * 50), ("pkg/b.py", b"b\n")]))
    eocd = good.rfind(b"PK\x05\x06")
    cd_size, cd_off = struct.unpack_from("<II", good, eocd + 12)
    data = {"eocd": good[: eocd + 10],
            "half-of-cd": good[: cd_off + cd_size // 2] + good[eocd:],
            "cd": good[:cd_off],
            "end-record-only": good[eocd:]}[cut]
    rc, out, err = check(write(tmp_path, data), capsys)
    assert rc == 2 and out == ""
    assert err.startswith("wheelaudit: not a wheel: ") and "not a zip file" in err


@pytest.mark.parametrize("data", [b"", b"hello world\n" * 10, ELF * 100, b"PK\x03\x04" + bytes(100), os.urandom(4096)],
                         ids=["empty", "text", "elf", "local-header-only", "random"])
def test_not_a_zip(tmp_path, capsys, data):
    rc, out, err = check(write(tmp_path, data), capsys)
    assert rc == 2 and out == ""
    assert err.startswith("wheelaudit: not a wheel: ") and err.count("\n") == 1


def test_a_directory_that_is_not_a_wheel(tmp_path, capsys):
    plain = tmp_path / "site" / "plain"
    plain.mkdir(parents=True)
    (plain / "mod.py").write_text("x = 1\n")
    rc, out, err = check(plain, capsys)
    assert rc == 2 and out == ""
    assert "a directory without a *.dist-info" in err and "neither an unpacked wheel nor an installed package" in err
    # a directory named like a wheel, and something that is neither file nor directory
    (tmp_path / WHEEL).mkdir()
    rc, _, err = check(tmp_path / WHEEL, capsys)
    assert rc == 2 and "a directory without a *.dist-info" in err
    fifo = tmp_path / "fifo-1.0-py3-none-any.whl"
    os.mkfifo(fifo)
    rc, _, err = check(fifo, capsys)
    assert rc == 2 and "not a file or directory" in err


def test_scan_raises_not_a_wheel_for_the_api():
    with pytest.raises(NotAWheel):
        scan(Path("/nonexistent/x-1.0-py3-none-any.whl"))


# =============================================================================================
# a member hidden from the central directory (what a streaming installer would install unaudited)


def _smuggle(where: str) -> bytes:
    """A wheel with one more member, ``pkg/_evil.so``, whose local header the directory does not list."""
    hidden = zip_bytes([Entry(b"pkg/_evil.so", ELF * 10)])
    hidden = hidden[:hidden.index(b"PK\x01\x02")]  # its local header and data only
    good = zip_bytes(wheel_entries([("pkg/__init__.py", b"")]))
    cd = good.index(b"PK\x01\x02")
    if where == "after the last member":  # between the last member's data and the directory
        data = good[:cd] + hidden + good[cd:]
        eocd = data.rindex(b"PK\x05\x06")
        return data[:eocd + 16] + struct.pack("<I", cd + len(hidden)) + data[eocd + 20:]
    # in front of the first member: every directory offset moves (zipfile reads it as a prefix)
    return hidden + good


@pytest.mark.parametrize("where", ["after the last member", "in front of the members"])
def test_a_local_header_the_directory_does_not_list_is_wa002(tmp_path, capsys, where):
    data = _smuggle(where)
    with zipfile.ZipFile(write(tmp_path, data)) as zf:  # (what a directory reader sees: no such member)
        assert "pkg/_evil.so" not in zf.namelist()
    rc, out, _ = check(write(tmp_path, data), capsys)
    assert rc == 1, out
    (msg,) = [f for f in findings(out) if "not listed in the central directory" in f]
    assert "(member 'pkg/_evil.so')" in msg


def test_a_local_header_in_a_gap_between_members_is_wa002(tmp_path, capsys):
    entries = wheel_entries([("pkg/__init__.py", b""), ("pkg/b.py", b"b = 1\n")])
    good = zip_bytes(entries)
    second = good.index(b"PK\x03\x04", 4)
    hidden = zip_bytes([Entry(b"pkg/_evil.so", ELF * 10)])
    hidden = hidden[:hidden.index(b"PK\x01\x02")]
    data = bytearray(good[:second] + hidden + good[second:])
    # every directory entry at or after the gap moves by len(hidden); so does the directory
    cd = data.index(b"PK\x01\x02")
    at = cd
    while data[at:at + 4] == b"PK\x01\x02":
        off = struct.unpack_from("<I", data, at + 42)[0]
        if off >= second:
            struct.pack_into("<I", data, at + 42, off + len(hidden))
        n, x, c = struct.unpack_from("<HHH", data, at + 28)
        at += 46 + n + x + c
    eocd = data.rindex(b"PK\x05\x06")
    struct.pack_into("<I", data, eocd + 16, cd)
    rc, out, _ = check(write(tmp_path, bytes(data)), capsys)
    assert rc == 1, out
    assert any("(member 'pkg/_evil.so') is not listed in the central directory" in f for f in findings(out))


@pytest.mark.parametrize("field, at", [("uncompressed size", 22), ("compressed size", 18), ("CRC-32", 14)])
def test_a_local_header_whose_sizes_disagree_with_the_directory_is_wa002(tmp_path, capsys, field, at):
    data = bytearray(zip_bytes(wheel_entries([("pkg/a.py", b"a = 1\n" * 50)])))
    struct.pack_into("<I", data, at, struct.unpack_from("<I", data, at)[0] + 7)  # the first local header only
    rc, out, _ = check(write(tmp_path, bytes(data)), capsys)
    assert rc == 1, out
    assert findings(out)[0].startswith("pkg/a.py: cannot read: its local header says "), findings(out)


def test_a_highly_compressible_member_of_any_size_is_read(tmp_path, capsys):
    """1 MiB + 1 byte of one letter: all the deflate input is taken before the last byte comes out."""
    body = b"x" * ((1 << 20) + 1)
    rows = f"pkg/x.txt,{record_hash(body)},{len(body)}\n"
    p = tmp_path / "fuzz-1.0-py3-none-any.whl"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pkg/x.txt", body)
        for e in wheel_entries([]):
            if not e.name.endswith(b"RECORD"):
                zf.writestr(e.name.decode(), e.data)
                rows += f"{e.name.decode()},{record_hash(e.data)},{len(e.data)}\n"
        zf.writestr("fuzz-1.0.dist-info/RECORD", rows + "fuzz-1.0.dist-info/RECORD,,\n")
    rc, out, _ = check(p, capsys, "--select", "WA002")
    assert rc == 0 and findings(out) == [], out


def test_a_record_of_phantom_files_is_one_bounded_finding(tmp_path, capsys):
    """RECORD lists 200,000 files the wheel does not have: one WA002 that counts them, a report
    of bounded size (it grew by about 300 bytes a row: 624 MB for 2,000,000)."""
    from fuzz.mutate import wheel_entries

    n = 200_000
    entries = wheel_entries([("pkg/__init__.py", b"")])
    record = next(e for e in entries if e.name.endswith(b"RECORD"))
    record.data += "".join(f"p/{i:07d},,\n" for i in range(n)).encode()
    path = write(tmp_path, zip_bytes(entries))
    tracemalloc.start()
    rc, out, _ = check(path, capsys, "--format", "json")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert rc == 1
    assert len(out) < 1 << 20, len(out)
    assert f"RECORD lists {n} files that the wheel does not contain" in out
    assert peak < 256 << 20, peak


def test_many_hidden_local_headers_are_named_up_to_a_bound(tmp_path, capsys):
    hidden = b""
    for i in range(50):
        one = zip_bytes([Entry(f"pkg/_evil{i}.so".encode(), ELF)])
        hidden += one[:one.index(b"PK\x01\x02")]
    data = hidden + zip_bytes(wheel_entries([("pkg/__init__.py", b"")]))
    rc, out, _ = check(write(tmp_path, data), capsys)
    assert rc == 1
    named = [f for f in findings(out) if "is not listed in the central directory" in f]
    assert len(named) == 20, named
    assert any(f.startswith("30 more local headers are not listed") for f in findings(out)), findings(out)
