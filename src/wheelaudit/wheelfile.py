"""Open a wheel: a ``.whl`` read in place through its zip directory, or an unpacked tree.

Nothing is extracted to disk and nothing from the wheel is executed or imported. Members are
streamed once: each is hashed against RECORD while it is read, and only native binaries (found
by their magic bytes, not their names) are kept, in memory or, when large, in an anonymous
temporary file mapped read-only.
"""

from __future__ import annotations

import base64
import hashlib
import io
import mmap
import os
import stat
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO

# (packaging's metadata and tags, email and csv are imported where they are used: together 85 ms
# that `check` would otherwise spend before its first worker starts)

from .findings import Finding
from .readers import MAGIC_SIZE, detect

if TYPE_CHECKING:
    from packaging.tags import Tag

CHUNK = 1 << 20
#: native members larger than this are spooled to an anonymous temp file and mapped
SPOOL_THRESHOLD = 64 << 20
#: refuse members whose declared size is beyond this (zip bombs); a wheel member of 8 GiB is absurd
MAX_MEMBER_SIZE = 8 << 30
#: refuse compression ratios beyond this for members over 16 MiB (zip bombs)
MAX_RATIO = 1000
MAX_MEMBERS = 500_000
#: refuse a wheel whose members together inflate past this ratio once they exceed TOTAL_RATIO_FLOOR
#: bytes (many members each under the per-member bomb check; real wheels are about 3 to 5)
MAX_TOTAL_RATIO = 100
TOTAL_RATIO_FLOOR = 1 << 30
#: every central directory entry takes at least this many bytes (it bounds the member count)
_CD_ENTRY_MIN = 46
#: compression methods zipfile can read: stored, deflate, bzip2, lzma
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate",
            zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}


class NotAWheel(Exception):
    """The path is not a wheel (or cannot be read as one): a usage error, exit 2."""


@dataclass(slots=True)
class Member:
    """A regular file inside the wheel."""

    path: str  # POSIX, relative to the wheel root
    size: int  # declared (zip) or on-disk size
    compressed: int = 0


@dataclass
class MemberData:
    """What one streaming pass over a member yields."""

    member: Member
    format: str | None  # "elf" | "macho" | "pe" | None
    data: bytes | mmap.mmap | None  # the bytes, kept for native members only
    digest: str  # RECORD-style "sha256=..." of the bytes read
    size: int  # bytes actually read
    error: str | None = None  # the member could not be read (bad CRC, lying size, ...)


@dataclass
class WheelInfo:
    path: Path
    name: str
    version: str
    tags: list[Tag]
    requires_dist: list[str] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)  # WA002 found while opening


def _record_hash(digest: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def unsafe_member_name(name: str) -> str | None:
    """Why a zip member name is unsafe, or None when it is fine."""
    if (name and name[0] not in "/." and "//" not in name and "/." not in name and "\\" not in name
            and "\x00" not in name and name[1:2] != ":"):
        # every component is there and starts with another character than '.': the names of
        # almost every member, at a fifth of the cost of the checks below
        return None
    if not name:
        return "is empty"
    if "\x00" in name:
        return "contains a NUL byte"
    if "\\" in name:
        return "contains a backslash"
    if name.startswith("/"):
        return "is an absolute path"
    if len(name) >= 2 and name[1] == ":":
        return "has a drive letter"
    if ".." in name.split("/"):  # (as PurePosixPath(name).parts would say, at a tenth of the cost)
        return "climbs out of the wheel with '..'"
    parts = name.split("/")
    if parts[-1] == "":  # a directory entry ("dir/")
        parts.pop()
    if any(part in ("", ".") for part in parts):
        return "has an empty or '.' path component (it would install under another name)"
    return None


class WheelSource:
    """Common interface of :class:`ZipWheel` and :class:`DirWheel`."""

    info: WheelInfo
    members: list[Member]

    def _open(self, member: Member) -> BinaryIO:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> WheelSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def files(self) -> list[str]:
        return [m.path for m in self.members]

    def read_text(self, path: str, limit: int = 16 << 20) -> str | None:
        for m in self.members:
            if m.path == path:
                with self._open(m) as fh:
                    return fh.read(limit).decode("utf-8", "replace")
        return None

    def stream(self, member: Member, keep_native: bool = True) -> MemberData:
        """Read ``member`` once: hash it, detect its format, keep its bytes if native."""
        sha = hashlib.sha256()
        size = 0
        fmt = None
        buf: bytearray | None = None
        spool = None
        try:
            with self._open(member) as fh:
                head = fh.read(CHUNK)
                fmt = detect(head[:MAGIC_SIZE]) if len(head) >= 4 else None
                keep = keep_native and fmt is not None
                if keep:
                    if member.size > SPOOL_THRESHOLD:
                        spool = tempfile.TemporaryFile(prefix="wheelaudit-")
                    else:
                        buf = bytearray()
                chunk = head
                while chunk:
                    size += len(chunk)
                    if size > MAX_MEMBER_SIZE or (member.size and size > member.size):
                        raise _Lying(f"member is larger than its declared {member.size} bytes")
                    sha.update(chunk)
                    if spool is not None:
                        spool.write(chunk)
                    elif buf is not None:
                        buf += chunk
                    chunk = fh.read(CHUNK)
        except _Lying as exc:
            if spool is not None:
                spool.close()
            return MemberData(member, fmt, None, _record_hash(sha.digest()), size, str(exc))
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
            if spool is not None:
                spool.close()
            return MemberData(member, fmt, None, _record_hash(sha.digest()), size, f"cannot read: {exc}")
        data: bytes | mmap.mmap | None = None
        if spool is not None:
            spool.flush()
            data = mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            spool.close()  # the mapping keeps the (already unlinked) file alive
        elif buf is not None:
            data = bytes(buf)
        return MemberData(member, fmt, data, _record_hash(sha.digest()), size)

    def stream_all(self, keep_native: bool = True) -> Iterator[MemberData]:
        for m in self.members:
            yield self.stream(m, keep_native)


class _Lying(Exception):
    pass


class ZipWheel(WheelSource):
    """A ``.whl`` read in place. Its member list comes from :func:`_read_central_directory` (one
    ``struct`` call an entry) when the archive is plain, else from :mod:`zipfile`, which then
    decides everything about it; :mod:`zipfile` reads the members that are streamed, and is only
    opened when the first one is (building its directory costs a ``ZipInfo`` an entry: 0.15 s for
    torch's 12,248)."""

    def __init__(self, path: Path):
        self.path = path
        self._zf: zipfile.ZipFile | None = None
        self._fh: BinaryIO | None = None  # the archive, for plain members read whole (read_text)
        self._closed = False
        _check_directory_size(path)
        try:
            self._fh = open(path, "rb")  # noqa: SIM115 - closed by close()
        except OSError:  # zipfile says why, below
            pass
        found = _read_central_directory(self._fh) if self._fh is not None else None
        if found is None:  # something unusual: zipfile reads the directory, and judges it
            if self._fh is not None:
                self._fh.close()
                self._fh = None
            try:
                self._zf = zipfile.ZipFile(path)
            except (zipfile.BadZipFile, OSError, ValueError) as exc:
                raise NotAWheel(f"{path}: not a zip file ({exc})") from None
            except Exception as exc:  # noqa: BLE001 - zipfile raises struct.error, EOFError, ... on hostile directories
                raise NotAWheel(f"{path}: not a readable zip file ({type(exc).__name__}: {exc})") from None
            found = self._zf.infolist(), self._zf.start_dir
        try:
            self._read_directory(path, *found)
        except BaseException:
            self.close()
            raise

    @property
    def zf(self) -> zipfile.ZipFile:
        """:mod:`zipfile`'s view of the archive, opened on first use."""
        if self._zf is None:
            if self._closed:  # (zipfile's own words for a closed archive)
                raise ValueError("Attempt to use ZIP archive that was already closed")
            self._zf = zipfile.ZipFile(self.path)
        return self._zf

    def _read_directory(self, path: Path, infos: list[zipfile.ZipInfo] | list[_Entry], cd_start: int) -> None:
        problems: list[Finding] = []
        self.members = []
        self._infos: dict[str, zipfile.ZipInfo | _Entry] = {}
        if len(infos) > MAX_MEMBERS:
            raise NotAWheel(f"{path}: {len(infos)} members (limit {MAX_MEMBERS})")

        self.refused: set[str] = set()  # members not read (their WA002 says why)

        def refuse(name: str, why: str) -> None:
            problems.append(Finding("WA002", why, subject=name, paths=[name]))
            self.refused.add(name)

        overlapping = _overlapping(infos, cd_start)
        try:
            file_size = os.stat(path).st_size
        except OSError as exc:
            raise NotAWheel(f"{path}: cannot read ({exc.strerror or exc})") from None
        for info in infos:
            # zipfile cuts a name at its first NUL byte; the original name is what the archive says
            raw = info.orig_filename
            name = raw.replace("\x00", "\\x00")
            why = unsafe_member_name(raw)
            if why:
                refuse(name, f"member name {raw!r} {why}; it was not read")
                continue
            if info.is_dir():
                if info.file_size:
                    refuse(name, f"directory entry {name} carries {info.file_size} bytes; they were not read")
                continue
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                refuse(name, f"member {name} is a symbolic link; wheels cannot carry links and it was not read")
                continue
            if name in self._infos:
                refuse(name, f"member {name} appears more than once in the zip directory")
                continue
            if info.flag_bits & 0x1:
                refuse(name, f"member {name} is encrypted; it was not read")
                continue
            if info.compress_type not in _METHODS:
                refuse(name, f"member {name} uses compression method {info.compress_type}, which cannot be read "
                             f"(stored, deflate, bzip2 and lzma can); it was not read")
                continue
            if info.file_size > MAX_MEMBER_SIZE:
                refuse(name, f"member {name} declares {info.file_size} bytes (limit {MAX_MEMBER_SIZE}); it was not read")
                continue
            if info.file_size > (16 << 20) and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                refuse(name, f"member {name} inflates {info.compress_size} bytes to {info.file_size} (ratio above {MAX_RATIO}: a zip bomb?); it was not read")
                continue
            if not 0 <= info.header_offset <= file_size - 30:
                refuse(name, f"member {name} has its local header at byte {info.header_offset}, outside the "
                             f"{file_size}-byte file; it was not read")
                continue
            if id(info) in overlapping:
                refuse(name, f"member {name} {overlapping[id(info)]} (overlapping members are how a zip bomb "
                             "multiplies its data); it was not read")
                continue
            self._infos[name] = info
            self.members.append(Member(name, info.file_size, info.compress_size))
        total = sum(m.size for m in self.members)
        packed = sum(m.compressed for m in self.members)
        if total > TOTAL_RATIO_FLOOR and total > MAX_TOTAL_RATIO * max(packed, 1):
            raise NotAWheel(f"{path}: its members inflate {packed} bytes to {total} (ratio {total // max(packed, 1)}, "
                            f"above {MAX_TOTAL_RATIO}: a zip bomb?); not read")
        self.info = _wheel_info(path, self, problems)

    def read_text(self, path: str, limit: int = 16 << 20) -> str | None:
        info = self._infos.get(path)  # (keyed by the members' paths: the member the base class would find)
        data = self._read_plain(info, limit) if isinstance(info, _Entry) else None
        if data is None:
            return super().read_text(path, limit)
        return data.decode("utf-8", "replace")

    def _read_plain(self, entry: _Entry, limit: int) -> bytes | None:
        """``entry``'s bytes read whole without :mod:`zipfile` (RECORD, WHEEL, METADATA), when all
        is plain: stored or deflate, not encrypted, no larger than ``limit``, a local header that
        agrees with the directory, a complete deflate stream, the declared size and CRC-32.
        None for anything else: :mod:`zipfile` then reads it, and words what is wrong."""
        fh = self._fh
        if (fh is None or fh.closed or entry.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
                or entry.flag_bits & 0x61 or entry.file_size > limit or entry.compress_size > limit):
            return None
        name = entry.raw_name
        try:
            fh.seek(entry.header_offset)
            head = fh.read(_LOCAL_HEADER.size + len(name))
            if len(head) != _LOCAL_HEADER.size + len(name):
                return None
            sig, _v, flags, _m, _t, _d, _crc, _cs, _us, nlen, xlen = _LOCAL_HEADER.unpack_from(head)
            # zipfile decodes the local name by the local UTF-8 flag, and compares it to the directory's
            if (sig != zipfile.stringFileHeader or (flags ^ entry.flag_bits) & 0x800 or nlen != len(name)
                    or head[_LOCAL_HEADER.size:] != name):
                return None
            fh.seek(entry.header_offset + _LOCAL_HEADER.size + nlen + xlen)
            raw = fh.read(entry.compress_size)
        except OSError:
            return None
        if len(raw) != entry.compress_size:
            return None
        if entry.compress_type == zipfile.ZIP_DEFLATED:
            inflate = zlib.decompressobj(-15)  # (zipfile's inflater: a stream it refuses is refused here)
            try:
                data = inflate.decompress(raw, entry.file_size + 1)
            except zlib.error:
                return None
            if not inflate.eof:
                return None
        elif entry.compress_size == entry.file_size:
            data = raw
        else:
            return None
        if len(data) != entry.file_size or zlib.crc32(data) != entry.CRC:
            return None
        return data

    def _zipinfo(self, info: zipfile.ZipInfo | _Entry) -> zipfile.ZipInfo:
        """The :class:`zipfile.ZipInfo` of a directory entry: the one at the same place in the
        directory (names repeat in hostile archives, and two entries can share a header)."""
        if isinstance(info, zipfile.ZipInfo):
            return info
        infos = self.zf.infolist()
        if info.index >= len(infos) or _ENTRY_FIELDS(infos[info.index]) != _ENTRY_FIELDS(info):
            raise zipfile.BadZipFile("the zip directory changed while the wheel was read")
        return infos[info.index]

    def _open(self, member: Member) -> BinaryIO:
        try:
            fh = self.zf.open(self._zipinfo(self._infos[member.path]))
        except zipfile.BadZipFile:
            raise
        except Exception as exc:  # noqa: BLE001 - RuntimeError, NotImplementedError, struct.error, ...
            raise zipfile.BadZipFile(f"{type(exc).__name__}: {exc}") from None
        return _Guarded(fh)  # type: ignore[return-value]

    def close(self) -> None:
        self._closed = True
        if self._fh is not None:
            self._fh.close()
        if self._zf is not None:
            self._zf.close()


def _check_directory_size(path: Path) -> None:
    """Refuse, before :mod:`zipfile` builds an object per entry, a central directory that holds
    more than :data:`MAX_MEMBERS` entries (bounded memory whatever the file claims)."""
    try:
        with open(path, "rb") as fh:
            end = zipfile._EndRecData(fh)  # type: ignore[attr-defined]  # (what ZipFile itself reads)
    except Exception:  # noqa: BLE001 - ZipFile reports it, with its own message
        return
    if not end:
        return
    count, cd_size = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]  # type: ignore[attr-defined]
    if count > MAX_MEMBERS or cd_size // _CD_ENTRY_MIN > MAX_MEMBERS:
        raise NotAWheel(f"{path}: the zip directory holds {max(count, cd_size // _CD_ENTRY_MIN)} or more members "
                        f"(limit {MAX_MEMBERS})")


#: a central directory entry (zipfile's structCentralDir) without the fields nothing here reads
#: (versions made by, reserved byte, time and date, internal attributes), and a local file header
_CD_ENTRY = struct.Struct("<4s2xBxHH4xLLLHHHH2xLL")
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")


#: zipfile writes the platform's separator as "/" in ZipInfo.filename (not on POSIX)
_OTHER_SEP = os.sep != "/"


def _zipinfo_filename(name: str) -> str:
    """``ZipInfo.filename`` for a stored name: cut at its first NUL, the platform's separator as "/"."""
    nul = name.find("\x00")
    if nul >= 0:
        name = name[:nul]
    if _OTHER_SEP and os.sep in name:
        name = name.replace(os.sep, "/")
    return name


class _Entry:
    """A central directory entry read by :func:`_read_central_directory`: the attributes of
    :class:`zipfile.ZipInfo` that the checks here and the pipeline use (same names, same values),
    the name's bytes as stored, and the entry's place in the directory."""

    __slots__ = ("index", "orig_filename", "filename", "raw_name", "flag_bits", "compress_type", "CRC",
                 "compress_size", "file_size", "header_offset", "external_attr")

    def __init__(self, index: int, orig_filename: str, filename: str, raw_name: bytes, flag_bits: int,
                 compress_type: int, crc: int, compress_size: int, file_size: int, header_offset: int,
                 external_attr: int) -> None:
        self.index = index
        self.orig_filename = orig_filename
        self.filename = filename
        self.raw_name = raw_name
        self.flag_bits = flag_bits
        self.compress_type = compress_type
        self.CRC = crc
        self.compress_size = compress_size
        self.file_size = file_size
        self.header_offset = header_offset
        self.external_attr = external_attr

    def is_dir(self) -> bool:
        return self.filename[-1] == "/"  # (as ZipInfo.is_dir, which an empty name never reaches)


#: what identifies a directory entry for the reading path (an _Entry against its ZipInfo)
_ENTRY_FIELDS = attrgetter("header_offset", "orig_filename", "flag_bits", "compress_type", "CRC", "compress_size",
                           "file_size")


def _read_central_directory(fh: BinaryIO) -> tuple[list[_Entry], int] | None:
    """The central directory's entries and its offset, from one read of the directory and one
    ``struct`` call an entry (zipfile builds a ``ZipInfo`` an entry: four times slower).

    Only a plain archive is read here: None for anything unusual, which :class:`zipfile.ZipFile`
    then reads and judges with its own rules and words: a ZIP64 end record or locator, several
    disks, data before the first member, a directory that does not exactly fill its declared size
    or whose entry count disagrees, a bad signature, an extract version zipfile refuses, a field
    at its ZIP64 marker value, a ZIP64, Unicode path or malformed extra field, a name that does
    not decode. (What is plain is judged by zipfile 3.11's rules, which the tests compare.)"""
    try:
        end = zipfile._EndRecData(fh)  # type: ignore[attr-defined]  # (what ZipFile itself reads)
    except Exception:  # noqa: BLE001 - zipfile words it
        return None
    if not end:
        return None
    sig, disk, disk_start, count_here, count, cd_size, cd_offset, _clen, _comment, location = end  # (its _ECD_* order)
    # (a directory that does not end where the end record starts: data before the first member,
    # which zipfile adds to every offset, its "concat")
    if (sig != zipfile.stringEndArchive or disk or disk_start or count_here != count or count == 0xFFFF
            or 0xFFFFFFFF in (cd_size, cd_offset) or cd_offset + cd_size != location):
        return None
    locator = zipfile.sizeEndCentDir64Locator  # (the ZIP64 locator's place, just before the end record)
    lo = max(min(cd_offset, location - locator), 0)
    try:
        fh.seek(lo)
        data = fh.read(location - lo)
    except OSError:
        return None
    if len(data) != location - lo or data[-locator:4 - locator] == zipfile.stringEndArchive64Locator:
        return None
    cd = data[cd_offset - lo:]
    entries: list[_Entry] = []
    unpack = _CD_ENTRY.unpack_from
    pos = 0
    while pos < cd_size:
        if pos + _CD_ENTRY.size > cd_size:
            return None
        sig, extract_version, flags, method, crc, csize, usize, nlen, xlen, clen, disk, eattr, hoff = unpack(cd, pos)
        name_at = pos + _CD_ENTRY.size
        extra_at = name_at + nlen
        pos = extra_at + xlen + clen
        if (sig != zipfile.stringCentralDir or pos > cd_size or extract_version > zipfile.MAX_EXTRACT_VERSION
                or disk or 0xFFFFFFFF in (csize, usize, hoff)):
            return None
        if xlen and not _plain_extra(cd, extra_at, extra_at + xlen):
            return None
        raw = cd[name_at:extra_at]
        try:  # (an ASCII name decodes alike in UTF-8 and cp437, at a fraction of the cp437 codec's cost)
            name = raw.decode("ascii") if raw.isascii() else raw.decode("utf-8" if flags & 0x800 else "cp437")
        except UnicodeDecodeError:
            return None
        filename = _zipinfo_filename(name) if _OTHER_SEP or "\x00" in name else name
        entries.append(_Entry(len(entries), name, filename, raw, flags, method, crc, csize, usize, hoff, eattr))
    if len(entries) != count:
        return None
    return entries, cd_offset


def _plain_extra(cd: bytes, start: int, end: int) -> bool:
    """Whether the extra fields in ``cd[start:end]``, walked as ``ZipInfo._decodeExtra`` walks
    them, hold none that zipfile calls corrupt, no ZIP64 field (it changes sizes and offsets) and
    no Info-ZIP Unicode path (the name newer zipfiles take instead of the stored one)."""
    while end - start >= 4:
        tag, length = struct.unpack_from("<HH", cd, start)
        if tag in (0x0001, 0x7075) or start + 4 + length > end:
            return False
        start += 4 + length
    return True


def _overlapping(infos: list[zipfile.ZipInfo] | list[_Entry], cd_start: int) -> dict[int, str]:
    """Members whose bytes run into the next member's local header (or into the central
    directory): ``id(info) -> why``. Each member's extent is at least its 30-byte local header,
    its name and its compressed data; real archives never overlap, overlapping zip bombs must."""
    out: dict[int, str] = {}
    ordered = sorted(infos, key=attrgetter("header_offset"))
    for k, info in enumerate(ordered):
        if isinstance(info, _Entry):
            name_len = len(info.raw_name)  # (what encoding the name back gives, without the codec's cost)
        else:
            try:
                name_len = len(info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437"))
            except UnicodeEncodeError:
                name_len = len(info.orig_filename.encode("utf-8", "surrogateescape"))
        end = info.header_offset + 30 + name_len + info.compress_size
        if k + 1 < len(ordered):
            nxt = ordered[k + 1]
            if end > nxt.header_offset:
                out[id(info)] = (f"runs to byte {end}, over the header of {nxt.orig_filename!r} at byte "
                                 f"{nxt.header_offset}")
        elif end > cd_start:
            out[id(info)] = f"runs to byte {end}, into the central directory at byte {cd_start}"
    return out


class _Guarded:
    """A zip member opened for reading whose decompression errors (``zlib.error``,
    ``lzma.LZMAError``, ``struct.error``, ...) all surface as :class:`zipfile.BadZipFile`."""

    __slots__ = ("_fh",)

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh

    def _call(self, method, *args):
        try:
            return method(*args)
        except zipfile.BadZipFile:
            raise
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise zipfile.BadZipFile(f"corrupt member data ({type(exc).__name__}: {exc})") from None

    def read(self, n: int = -1) -> bytes:
        return self._call(self._fh.read, n)

    def read1(self, n: int = -1) -> bytes:
        return self._call(self._fh.read1, n)  # type: ignore[attr-defined]

    def readinto(self, b) -> int:
        return self._call(self._fh.readinto, b)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> _Guarded:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def __getattr__(self, name: str):
        return getattr(self._fh, name)


class DirWheel(WheelSource):
    """An unpacked wheel (``wheel unpack``) or an installed package inside ``site-packages``."""

    def __init__(self, path: Path):
        self.path = path
        root, only = _dir_root(path)
        self.root = root
        self.members = []
        problems: list[Finding] = []
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            rel_dir = Path(dirpath).relative_to(root)
            if rel_dir.parts and rel_dir.parts[0] == "__pycache__" or "__pycache__" in rel_dir.parts:
                dirnames[:] = []
                continue
            if only is not None and rel_dir.parts and rel_dir.parts[0] not in only:
                dirnames[:] = []
                continue
            dirnames.sort()
            for fn in sorted(filenames):
                rel = (rel_dir / fn).as_posix()
                if only is not None and not rel_dir.parts and fn not in only:
                    continue
                full = Path(dirpath, fn)
                try:
                    st = full.lstat()
                except OSError:
                    continue
                if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
                    continue  # links in an installed tree are not wheel members
                self.members.append(Member(rel, st.st_size, st.st_size))
                if len(self.members) > MAX_MEMBERS:
                    raise NotAWheel(f"{path}: more than {MAX_MEMBERS} files")
        self.info = _wheel_info(path, self, problems)

    def _open(self, member: Member) -> BinaryIO:
        return open(self.root / member.path, "rb")

    def stream(self, member: Member, keep_native: bool = True) -> MemberData:
        # On disk, native binaries are mapped instead of copied.
        md = super().stream(member, keep_native=False)
        if keep_native and md.format is not None and md.error is None and md.size:
            with open(self.root / member.path, "rb") as fh:
                md.data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        elif keep_native and md.format is not None and md.error is None:
            md.data = b""
        return md


def _dir_root(path: Path) -> tuple[Path, set[str] | None]:
    """The tree to scan, and (for an installed package) the top-level names that belong to it."""
    if any(p.suffix == ".dist-info" for p in path.iterdir() if p.is_dir()):
        return path, None
    parent = path.parent
    for dist in sorted(parent.glob("*.dist-info")):
        record = dist / "RECORD"
        if not record.is_file():
            continue
        try:
            text = record.read_text("utf-8", "replace")
        except OSError:
            continue
        try:
            tops = {p.split("/", 1)[0] for p in parse_record(text)}
        except ValueError:
            continue
        if path.name in tops:
            # the distribution's files are every top-level entry its RECORD lists (numpy and
            # numpy.libs), not only the one named
            return parent, {t for t in tops if t and t != ".."} | {dist.name}
    raise NotAWheel(f"{path}: a directory without a *.dist-info, and no RECORD in {parent} lists it: "
                    "neither an unpacked wheel nor an installed package")


def _dist_info_dir(files: list[str]) -> str | None:
    tops = sorted({top for f in files if ".dist-info/" in f  # (a cheap filter first: torch has 12,248 files)
                   for top in (f.split("/", 1)[0],) if top.endswith(".dist-info")})
    return tops[0] if tops else None


def _wheel_info(path: Path, source: WheelSource, problems: list[Finding]) -> WheelInfo:
    import email.parser

    from packaging.metadata import Metadata
    from packaging.tags import parse_tag
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    files = source.files()
    dist_info = _dist_info_dir(files)
    name = version = ""
    tags: list[Tag] = []
    requires: list[str] = []
    if path.suffix == ".whl":
        try:
            n, v, _build, tagset = parse_wheel_filename(path.name)
            name, version, tags = str(n), str(v), sorted(tagset, key=str)
        except InvalidWheelFilename:
            pass
    if dist_info:
        wheel_text, why = _read_text(source, f"{dist_info}/WHEEL")
        if why:
            problems.append(Finding("WA002", f"{dist_info}/WHEEL cannot be read ({why})", subject=f"{dist_info}/WHEEL",
                                    paths=[f"{dist_info}/WHEEL"]))
        if wheel_text:
            msg = email.parser.Parser().parsestr(wheel_text)
            from_file: set[Tag] = set()
            for t in msg.get_all("Tag") or []:
                try:
                    from_file |= set(parse_tag(t.strip()))
                except ValueError:
                    problems.append(Finding("WA002", f"WHEEL has an invalid Tag line {t!r}", subject=f"{dist_info}/WHEEL", paths=[f"{dist_info}/WHEEL"]))
            if not tags:
                tags = sorted(from_file, key=str)
        meta_text, why = _read_text(source, f"{dist_info}/METADATA")
        if why:
            problems.append(Finding("WA002", f"{dist_info}/METADATA cannot be read ({why})",
                                    subject=f"{dist_info}/METADATA", paths=[f"{dist_info}/METADATA"]))
        if meta_text:
            try:
                meta = Metadata.from_email(meta_text, validate=False)
                name = name or str(meta.name or "")
                version = version or str(meta.version or "")
                requires = [str(r) for r in (meta.requires_dist or [])]
            except Exception:  # noqa: BLE001 - packaging raises ExceptionGroup and others
                problems.append(Finding("WA002", "METADATA cannot be parsed", subject=f"{dist_info}/METADATA", paths=[f"{dist_info}/METADATA"]))
    if not name:
        name = path.name.split("-")[0] if path.suffix == ".whl" else path.name
    return WheelInfo(path=path, name=name, version=version, tags=tags, requires_dist=requires, problems=problems)


def _read_text(source: WheelSource, path: str, limit: int = 16 << 20) -> tuple[str | None, str | None]:
    """``(text or None when absent, None)``, or ``(None, why)`` when the member cannot be read."""
    try:
        return source.read_text(path, limit), None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
        return None, str(exc) or type(exc).__name__


def parse_record(text: str) -> dict[str, tuple[str, str]]:
    """RECORD rows as ``path -> (hash, size)`` (csv, as the wheel spec says).

    Raises :class:`ValueError` (naming the line) for text that is not CSV.
    """
    import csv

    rows: dict[str, tuple[str, str]] = {}
    plain = text.replace("\r\n", "\n")  # (csv ends a line at "\r\n" as at "\n")
    lines = plain.split("\n")
    if '"' not in plain and "\r" not in plain and max(map(len, lines)) < csv.field_size_limit():
        # without quotes or other carriage returns, and no field over csv's limit, csv splits each
        # line at its commas: this does the same at about half the cost (12,248 rows for torch)
        for line in lines:
            if line:
                row = line.split(",")
                rows[row[0]] = (row[1] if len(row) > 1 else "", row[2] if len(row) > 2 else "")
        return rows
    reader = csv.reader(io.StringIO(text))
    try:
        for row in reader:
            if not row:
                continue
            path = row[0]
            h = row[1] if len(row) > 1 else ""
            s = row[2] if len(row) > 2 else ""
            rows[path] = (h, s)
    except csv.Error as exc:
        raise ValueError(f"line {reader.line_num}: {exc}") from None
    return rows


#: the largest RECORD read (about 500,000 rows)
RECORD_LIMIT = 64 << 20


class RecordChecker:
    """Checks each streamed member against RECORD (finding WA002)."""

    EXEMPT = ("RECORD", "RECORD.jws", "RECORD.p7s")

    def __init__(self, source: WheelSource):
        self.findings: list[Finding] = []
        files = source.files()
        self.dist_info = _dist_info_dir(files)
        self.rows: dict[str, tuple[str, str]] | None = None
        self.zip = isinstance(source, ZipWheel)
        record_path = f"{self.dist_info}/RECORD" if self.dist_info else None
        text, why = _read_text(source, record_path, RECORD_LIMIT) if record_path else (None, None)
        where = record_path or "*.dist-info/RECORD"
        if why:
            self.findings.append(Finding("WA002", f"{where} cannot be read ({why}): no file can be verified", subject=where, paths=[where]))
        elif text is None:
            self.findings.append(Finding("WA002", f"the wheel has no RECORD ({where}): no file can be verified", subject=where, paths=[where]))
        elif any(m.path == record_path and m.size > RECORD_LIMIT for m in source.members):
            self.findings.append(Finding("WA002", f"{where} is larger than {RECORD_LIMIT} bytes and was not read: "
                                         "no file can be verified", subject=where, paths=[where]))
        else:
            try:
                self.rows = parse_record(text)
            except ValueError as exc:
                self.findings.append(Finding("WA002", f"{where} is not valid CSV ({exc}): no file can be verified",
                                             subject=where, paths=[where]))
        self.seen: set[str] = set(getattr(source, "refused", ()))  # not read, and said so already

    def check(self, md: MemberData) -> None:
        self.findings.extend(self.member_findings(md))

    def agrees(self, path: str, declared: int, digest: str, size: int) -> bool:
        """Whether a member read without error, ``size`` bytes as the zip ``declared``, is
        exactly as RECORD lists it (then it is marked as seen and :meth:`member_findings` would
        find nothing): the common case, checked in a few lookups (12,000 members a torch wheel)."""
        rows = self.rows
        if rows is None or size != declared:
            return False
        row = rows.get(path)
        if row is None or row[0] != digest or row[1] != str(size):
            return False
        self.seen.add(path)
        return True

    def member_findings(self, md: MemberData) -> list[Finding]:
        """What RECORD says of one streamed member (and it is marked as seen); :meth:`check`
        keeps them, a caller checking members as they arrive keeps them in its own order."""
        path = md.member.path
        self.seen.add(path)
        if md.error:
            return [Finding("WA002", f"{path}: {md.error}", subject=path, paths=[path])]
        out: list[Finding] = []
        if md.size != md.member.size:
            lie = (f"the zip directory declares {md.member.size} bytes but the member holds {md.size}" if self.zip
                   else f"{md.member.size} bytes when listed, {md.size} when read (it changed during the scan)")
            out.append(Finding("WA002", f"{path}: {lie}", subject=path, paths=[path]))
        if self.rows is None:
            return out
        if self.dist_info and path.startswith(self.dist_info + "/") and path.rsplit("/", 1)[1] in self.EXEMPT:
            return out
        row = self.rows.get(path)
        if row is None:
            out.append(Finding("WA002", f"{path} is not listed in RECORD", subject=path, paths=[path]))
            return out
        want_hash, want_size = row
        if not want_hash:
            out.append(Finding("WA002", f"{path} has no hash in RECORD", subject=path, paths=[path]))
            return out
        algo = want_hash.split("=", 1)[0]
        if algo != "sha256":
            out.append(Finding("WA002", f"{path}: RECORD uses hash {algo!r}; only sha256 is checked", subject=path, paths=[path]))
        elif want_hash != md.digest:
            out.append(Finding("WA002", f"{path}: hash {md.digest} does not match RECORD's {want_hash}", subject=path, paths=[path]))
        if want_size and want_size.isdigit() and int(want_size) != md.size:
            out.append(Finding("WA002", f"{path}: size {md.size} does not match RECORD's {want_size}", subject=path, paths=[path]))
        return out

    def finish(self) -> list[Finding]:
        if self.rows is not None:
            missing = [p for p in self.rows if p not in self.seen and not p.endswith("/") and unsafe_member_name(p) is None
                       and not (p.endswith(".pyc") and "__pycache__" in p)]
            for p in sorted(missing):
                self.findings.append(Finding("WA002", f"RECORD lists {p}, which the wheel does not contain", subject=p, paths=[p]))
        return self.findings


def open_wheel(path: str | os.PathLike[str]) -> WheelSource:
    """Open a ``.whl`` file or an unpacked/installed tree. Raises :class:`NotAWheel`."""
    p = Path(path)
    if p.is_dir():
        try:
            return DirWheel(p)
        except OSError as exc:
            raise NotAWheel(f"{p}: cannot read directory ({exc})") from None
    if not p.exists():
        raise NotAWheel(f"{p}: no such file or directory")
    if not p.is_file():
        raise NotAWheel(f"{p}: not a file or directory")
    return ZipWheel(p)
