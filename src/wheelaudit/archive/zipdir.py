"""The zip directory of a ``.whl``: read with the stdlib's :mod:`zipfile` (its public API only),
then judged entry by entry. Entries that cannot be read safely (unsafe names, links, duplicates,
encryption, unknown methods, sizes or ratios of a zip bomb, overlapping data) become WA002
findings and are never read; a directory that cannot be trusted at all is :class:`NotAWheel`."""

from __future__ import annotations

import os
import stat
import struct
import zipfile
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from wheelaudit.model.defects import Defect
from wheelaudit.archive.errors import NotAWheel
from wheelaudit.archive.limits import MAX_MEMBER_SIZE, MAX_MEMBERS, MAX_RATIO, MAX_TOTAL_RATIO, RATIO_FLOOR, TOTAL_RATIO_FLOOR
from wheelaudit.archive.names import unsafe_member_name

#: the compression methods the member reader inflates
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
#: every central directory entry takes at least this many bytes
_CD_ENTRY_MIN = 46
#: hidden local headers named one by one (the rest are counted in one more finding)
MAX_HIDDEN_REPORTED = 20
_LOCAL_SIG, _DESCRIPTOR_SIG = b"PK\x03\x04", b"PK\x07\x08"


@dataclass(slots=True)
class Member:
    """A regular file of the wheel. For a zip member, where its local header is and how its data
    is stored (as the central directory says); for a tree, ``offset`` is -1."""

    path: str  # POSIX, relative to the wheel root
    size: int  # declared (zip) or on-disk size
    compressed: int = 0
    offset: int = -1  # the local header's offset in the file
    method: int = 0
    crc: int = 0
    raw_name: bytes = b""  # the name as stored, which the local header must repeat


@dataclass
class ZipDirectory:
    members: list[Member]
    problems: list[Defect]  # WA002 for every entry that was refused
    refused: set[str]  # their names


def read_zip_directory(path: Path) -> ZipDirectory:
    """The members of the zip file ``path``. Raises :class:`NotAWheel` for a file that is not a
    readable zip, or whose directory claims more than :data:`MAX_MEMBERS` entries or inflates
    past :data:`MAX_TOTAL_RATIO`."""
    try:
        file_size = os.stat(path).st_size
        with open(path, "rb") as fh:
            claimed = _claimed_entries(fh, file_size)
    except OSError as exc:
        raise NotAWheel(f"{path}: cannot read ({exc.strerror or exc})") from None
    if claimed > MAX_MEMBERS:
        # (before zipfile makes an object an entry: memory stays bounded whatever the file claims)
        raise NotAWheel(f"{path}: the zip directory holds {claimed} or more members (limit {MAX_MEMBERS})")
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            cd_start = zf.start_dir
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise NotAWheel(f"{path}: not a zip file ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - zipfile raises struct.error, EOFError, ... on hostile directories
        raise NotAWheel(f"{path}: not a readable zip file ({type(exc).__name__}: {exc})") from None
    if len(infos) > MAX_MEMBERS:
        raise NotAWheel(f"{path}: {len(infos)} members (limit {MAX_MEMBERS})")

    problems: list[Defect] = []
    refused: set[str] = set()
    members: list[Member] = []
    seen: set[str] = set()

    def refuse(name: str, why: str) -> None:
        problems.append(Defect("WA002", why, subject=name, paths=[name]))
        refused.add(name)

    raw_names = {id(info): _raw_name(info) for info in infos}
    overlapping = _overlapping(infos, cd_start, raw_names)
    try:
        hidden = _hidden_headers(path, infos, cd_start, file_size)
    except OSError as exc:
        raise NotAWheel(f"{path}: cannot read ({exc.strerror or exc})") from None
    # (said and never read; not among the refused names, which may be a listed member's too)
    for at, name in hidden[:MAX_HIDDEN_REPORTED]:
        problems.append(Defect("WA002", f"a local header at byte {at} (member {name!r}) is not listed in the "
                                "central directory: an installer that reads the zip from its start would "
                                "install a file that was never audited; it was not read",
                                subject=name, paths=[name]))
    if len(hidden) > MAX_HIDDEN_REPORTED:
        more = len(hidden) - MAX_HIDDEN_REPORTED
        problems.append(Defect("WA002", f"{more} more local headers are not listed in the central directory; "
                                "they were not read", subject=f"{more} more"))
    for info in infos:
        raw = info.orig_filename  # (zipfile cuts ``filename`` at a NUL; the archive says this)
        name = raw.replace("\x00", "\\x00")
        why = unsafe_member_name(raw)
        if why:
            refuse(name, f"member name {raw!r} {why}; it was not read")
            continue
        if info.is_dir():
            if info.file_size:
                refuse(name, f"directory entry {name} carries {info.file_size} bytes; they were not read")
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            refuse(name, f"member {name} is a symbolic link; wheels cannot carry links and it was not read")
            continue
        if name in seen:
            refuse(name, f"member {name} appears more than once in the zip directory")
            continue
        if info.flag_bits & 0x41:
            refuse(name, f"member {name} is encrypted; it was not read")
            continue
        if info.compress_type not in METHODS or info.flag_bits & 0x20:
            refuse(name, f"member {name} uses compression method {info.compress_type}, which cannot be read "
                         f"(stored and deflate can); it was not read")
            continue
        if info.file_size > MAX_MEMBER_SIZE:
            refuse(name, f"member {name} declares {info.file_size} bytes (limit {MAX_MEMBER_SIZE}); it was not read")
            continue
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            refuse(name, f"member {name} inflates {info.compress_size} bytes to {info.file_size} (ratio above "
                         f"{MAX_RATIO}: a zip bomb?); it was not read")
            continue
        if not 0 <= info.header_offset <= file_size - 30:
            refuse(name, f"member {name} has its local header at byte {info.header_offset}, outside the "
                         f"{file_size}-byte file; it was not read")
            continue
        if id(info) in overlapping:
            refuse(name, f"member {name} {overlapping[id(info)]} (overlapping members are how a zip bomb "
                         "multiplies its data); it was not read")
            continue
        seen.add(name)
        members.append(Member(name, info.file_size, info.compress_size, info.header_offset, info.compress_type,
                              info.CRC, raw_names[id(info)]))
    total = sum(m.size for m in members)
    packed = sum(m.compressed for m in members)
    if total > TOTAL_RATIO_FLOOR and total > MAX_TOTAL_RATIO * max(packed, 1):
        raise NotAWheel(f"{path}: its members inflate {packed} bytes to {total} (ratio {total // max(packed, 1)}, "
                        f"above {MAX_TOTAL_RATIO}: a zip bomb?); not read")
    return ZipDirectory(members, problems, refused)


def _raw_name(info: zipfile.ZipInfo) -> bytes:
    """The name's bytes as the archive stores them (zipfile decoded them by the UTF-8 flag)."""
    name = info.orig_filename
    try:
        if name.isascii():  # (the same bytes either way)
            return name.encode("ascii")
        return name.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
    except UnicodeEncodeError:
        return info.orig_filename.encode("utf-8", "surrogateescape")


def _claimed_entries(fh, file_size: int) -> int:
    """How many entries the end record (or the ZIP64 one) says the directory holds, at least as
    many as its declared size can hold; 0 when there is no end record (zipfile then says why)."""
    tail_len = min(file_size, 22 + 0xFFFF)
    fh.seek(file_size - tail_len)
    tail = fh.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        return 0
    count, cd_size = struct.unpack_from("<HI", tail, at + 10)
    if (count == 0xFFFF or cd_size == 0xFFFFFFFF) and at >= 20 and tail[at - 20:at - 16] == b"PK\x06\x07":
        (z64_at,) = struct.unpack_from("<Q", tail, at - 12)
        if z64_at < file_size:
            fh.seek(z64_at)
            rec = fh.read(56)
            if len(rec) == 56 and rec[:4] == b"PK\x06\x06":
                count, cd_size = struct.unpack_from("<QQ", rec, 32)
    return max(count, cd_size // _CD_ENTRY_MIN)


def _overlapping(infos: list[zipfile.ZipInfo], cd_start: int, raw_names: dict[int, bytes]) -> dict[int, str]:
    """Members whose bytes run into the next member's local header (or into the central
    directory): ``id(info) -> why``. Each member's extent is at least its 30-byte local header,
    its name and its compressed data; real archives never overlap, overlapping zip bombs must."""
    out: dict[int, str] = {}
    ordered = sorted(infos, key=attrgetter("header_offset"))
    for k, info in enumerate(ordered):
        end = info.header_offset + 30 + len(raw_names[id(info)]) + info.compress_size
        if k + 1 < len(ordered):
            nxt = ordered[k + 1]
            if end > nxt.header_offset:
                out[id(info)] = (f"runs to byte {end}, over the header of {nxt.orig_filename!r} at byte "
                                 f"{nxt.header_offset}")
        elif end > cd_start:
            out[id(info)] = f"runs to byte {end}, into the central directory at byte {cd_start}"
    return out


def _hidden_headers(path: Path, infos: list[zipfile.ZipInfo], cd_start: int, file_size: int) -> list[tuple[int, str]]:
    """Local headers that no central directory entry points at: ``[(offset, name)]``.

    A listed member spans its local header, name, extra field, data and data descriptor; the
    bytes between listed members (and before the first, and up to the central directory) must
    hold no local header signature: one there is a member that a reader of the local headers (a
    streaming installer) would see and a reader of the directory would not. Every gap is read
    once, a chunk at a time: the work is linear in the file's size."""
    ordered = sorted((i for i in infos if 0 <= i.header_offset <= file_size - 30), key=attrgetter("header_offset"))
    out: list[tuple[int, str]] = []
    with open(path, "rb") as fh:
        def pread(n: int, at: int) -> bytes:
            fh.seek(at)
            return fh.read(n)

        start = 0
        for info in ordered:
            at = info.header_offset
            if at > start:
                out += _headers_in(pread, start, at)
            head = pread(30, at)
            if len(head) < 30 or head[:4] != _LOCAL_SIG:
                start = max(start, at + 4)  # (the member reader says what is wrong with it)
                continue
            nlen, xlen = struct.unpack_from("<HH", head, 26)
            end = at + 30 + nlen + xlen + info.compress_size
            if info.flag_bits & 0x08:  # a data descriptor follows: [signature] CRC-32, sizes (4 or 8 bytes each)
                wide = info.compress_size >= 0xFFFFFFFF or info.file_size >= 0xFFFFFFFF
                end += (4 if pread(4, end) == _DESCRIPTOR_SIG else 0) + 4 + (16 if wide else 8)
            start = max(start, end)
        if cd_start > start:
            out += _headers_in(pread, start, min(cd_start, file_size))
    return out


def _headers_in(pread, start: int, stop: int) -> list[tuple[int, str]]:
    """The local header signatures in ``[start, stop)``, each with the name its header gives."""
    out: list[tuple[int, str]] = []
    chunk, at, carry = 1 << 20, start, b""
    while at < stop:
        piece = pread(min(chunk, stop - at), at)
        if not piece:
            break
        data, base = carry + piece, at - len(carry)
        k = data.find(_LOCAL_SIG)
        while k >= 0:
            pos = base + k
            head = pread(30, pos)
            nlen = struct.unpack_from("<H", head, 26)[0] if len(head) >= 30 else 0
            raw = pread(min(nlen, 4096), pos + 30) if nlen else b""
            out.append((pos, raw.decode("utf-8", "replace").replace("\x00", "\\x00") or "(no name)"))
            k = data.find(_LOCAL_SIG, k + 1)
        carry = data[-3:]
        at += len(piece)
    return out
