"""Open a wheel: a ``.whl`` read in place through its zip directory, or an unpacked tree.

Nothing is extracted to disk and nothing from the wheel is executed or imported. Members are
streamed once: each is hashed against RECORD while it is read, and only native binaries (found
by their magic bytes, not their names) are kept, in memory or, when large, in an anonymous
temporary file mapped read-only.
"""

from __future__ import annotations

import base64
import csv
import email.parser
import hashlib
import io
import mmap
import os
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from packaging.metadata import Metadata
from packaging.tags import Tag, parse_tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from .findings import Finding
from .readers import MAGIC_SIZE, detect

CHUNK = 1 << 20
#: native members larger than this are spooled to an anonymous temp file and mapped
SPOOL_THRESHOLD = 64 << 20
#: refuse members whose declared size is beyond this (zip bombs); a wheel member of 8 GiB is absurd
MAX_MEMBER_SIZE = 8 << 30
#: refuse compression ratios beyond this for members over 16 MiB (zip bombs)
MAX_RATIO = 1000
MAX_MEMBERS = 500_000


class NotAWheel(Exception):
    """The path is not a wheel (or cannot be read as one): a usage error, exit 2."""


@dataclass
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
    if "\x00" in name:
        return "contains a NUL byte"
    if "\\" in name:
        return "contains a backslash"
    if name.startswith("/"):
        return "is an absolute path"
    if len(name) >= 2 and name[1] == ":":
        return "has a drive letter"
    if ".." in PurePosixPath(name).parts:
        return "climbs out of the wheel with '..'"
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
    def __init__(self, path: Path):
        self.path = path
        try:
            self.zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise NotAWheel(f"{path}: not a zip file ({exc})") from None
        problems: list[Finding] = []
        self.members = []
        self._infos: dict[str, zipfile.ZipInfo] = {}
        infos = self.zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise NotAWheel(f"{path}: {len(infos)} members (limit {MAX_MEMBERS})")
        for info in infos:
            name = info.filename
            if info.is_dir():
                continue
            why = unsafe_member_name(name)
            if why:
                problems.append(Finding("WA002", f"member name {name!r} {why}; it was not read", subject=name, paths=[name]))
                continue
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                problems.append(Finding("WA002", f"member {name} is a symbolic link; wheels cannot carry links and it was not read", subject=name, paths=[name]))
                continue
            if name in self._infos:
                problems.append(Finding("WA002", f"member {name} appears more than once in the zip directory", subject=name, paths=[name]))
                continue
            if info.file_size > MAX_MEMBER_SIZE:
                problems.append(Finding("WA002", f"member {name} declares {info.file_size} bytes (limit {MAX_MEMBER_SIZE}); it was not read", subject=name, paths=[name]))
                continue
            if info.file_size > (16 << 20) and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                problems.append(Finding("WA002", f"member {name} inflates {info.compress_size} bytes to {info.file_size} (ratio above {MAX_RATIO}: a zip bomb?); it was not read", subject=name, paths=[name]))
                continue
            self._infos[name] = info
            self.members.append(Member(name, info.file_size, info.compress_size))
        self.info = _wheel_info(path, self, problems)

    def _open(self, member: Member) -> BinaryIO:
        return self.zf.open(self._infos[member.path])  # type: ignore[return-value]

    def close(self) -> None:
        self.zf.close()


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
        tops = {row[0].split("/", 1)[0] for row in csv.reader(io.StringIO(text)) if row}
        if path.name in tops:
            return parent, {path.name, dist.name}
    return path, None


def _dist_info_dir(files: list[str]) -> str | None:
    tops = sorted({f.split("/", 1)[0] for f in files if "/" in f and f.split("/", 1)[0].endswith(".dist-info")})
    return tops[0] if tops else None


def _wheel_info(path: Path, source: WheelSource, problems: list[Finding]) -> WheelInfo:
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
        wheel_text = source.read_text(f"{dist_info}/WHEEL")
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
        meta_text = source.read_text(f"{dist_info}/METADATA")
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


def parse_record(text: str) -> dict[str, tuple[str, str]]:
    """RECORD rows as ``path -> (hash, size)`` (csv, as the wheel spec says)."""
    rows: dict[str, tuple[str, str]] = {}
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        path = row[0]
        h = row[1] if len(row) > 1 else ""
        s = row[2] if len(row) > 2 else ""
        rows[path] = (h, s)
    return rows


class RecordChecker:
    """Checks each streamed member against RECORD (finding WA002)."""

    EXEMPT = ("RECORD", "RECORD.jws", "RECORD.p7s")

    def __init__(self, source: WheelSource):
        self.findings: list[Finding] = []
        files = source.files()
        self.dist_info = _dist_info_dir(files)
        self.rows: dict[str, tuple[str, str]] | None = None
        record_path = f"{self.dist_info}/RECORD" if self.dist_info else None
        text = source.read_text(record_path) if record_path else None
        if text is None:
            where = record_path or "*.dist-info/RECORD"
            self.findings.append(Finding("WA002", f"the wheel has no RECORD ({where}): no file can be verified", subject=where, paths=[where]))
        else:
            self.rows = parse_record(text)
        self.seen: set[str] = set()

    def check(self, md: MemberData) -> None:
        path = md.member.path
        self.seen.add(path)
        if md.error:
            self.findings.append(Finding("WA002", f"{path}: {md.error}", subject=path, paths=[path]))
            return
        if self.rows is None:
            return
        if self.dist_info and path.startswith(self.dist_info + "/") and path.rsplit("/", 1)[1] in self.EXEMPT:
            return
        row = self.rows.get(path)
        if row is None:
            self.findings.append(Finding("WA002", f"{path} is not listed in RECORD", subject=path, paths=[path]))
            return
        want_hash, want_size = row
        if not want_hash:
            self.findings.append(Finding("WA002", f"{path} has no hash in RECORD", subject=path, paths=[path]))
            return
        algo = want_hash.split("=", 1)[0]
        if algo != "sha256":
            self.findings.append(Finding("WA002", f"{path}: RECORD uses hash {algo!r}; only sha256 is checked", subject=path, paths=[path]))
        elif want_hash != md.digest:
            self.findings.append(Finding("WA002", f"{path}: hash {md.digest} does not match RECORD's {want_hash}", subject=path, paths=[path]))
        if want_size and want_size.isdigit() and int(want_size) != md.size:
            self.findings.append(Finding("WA002", f"{path}: size {md.size} does not match RECORD's {want_size}", subject=path, paths=[path]))

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
