"""The member reader: every member's bytes read once, hashed for RECORD, and a native binary's
bytes kept (in memory, or when large in an anonymous temporary file, mapped).

A zip member is read from its local header (checked against the central directory) and inflated
here, its CRC-32 and declared size checked; a tree's member is read from its file. Nothing is
written anywhere but anonymous temporary files, which vanish with the process."""

from __future__ import annotations

import base64
import hashlib
import mmap
import os
import struct
import queue
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING

from wheelaudit.binary import MAGIC_SIZE, detect
from wheelaudit.archive.limits import MEMORY_LIMIT
from wheelaudit.archive.zipdir import Member
from wheelaudit.model.binary import Format

if TYPE_CHECKING:
    from wheelaudit.binary.strings import StreamSearch

# The inflater: ISA-L when installed (the same streams and results as zlib, faster), else zlib.
_zlib: ModuleType
try:
    from isal import isal_zlib

    _zlib = isal_zlib
except ImportError:  # pragma: no cover - depends on the environment
    _zlib = zlib

#: bytes read (and at most produced by inflating) per step
CHUNK = 1 << 20
#: a member at least this large is hashed, searched and kept on a helper thread while this one
#: inflates it (see _Consumer)
THREADED = 16 << 20
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")


class MemberError(Exception):
    """A member that cannot be read as the directory describes it; ``str(exc)`` says why."""


@dataclass
class MemberData:
    """What one pass over a member yields."""

    member: Member
    format: Format | None
    data: bytes | bytearray | SpooledMap | None  # the bytes, kept for native members only
    digest: str  # RECORD-style "sha256=..." of the bytes read
    size: int  # bytes actually read
    error: str | None = None  # the member could not be read (bad CRC, lying size, ...)
    search: StreamSearch | None = None  # fed with the bytes of a spooled member


def record_hash(digest: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class SpooledMap(mmap.mmap):
    """A large member, mapped read-only from its file. Long slices are read with ``pread``
    rather than through the mapping, so that reading a big table costs its copy only: the
    mapped pages of a file never touched through the map do not join the resident set."""

    _fh: IO[bytes]  # the file mapped, closed with the map

    def __new__(cls, fh) -> SpooledMap:  # noqa: D102
        self = super().__new__(cls, fh.fileno(), 0, access=mmap.ACCESS_READ)
        self._fh = fh
        return self

    def __getitem__(self, k):
        if isinstance(k, slice) and k.step in (None, 1) and hasattr(os, "pread"):
            start, stop, _ = k.indices(len(self))
            if stop - start > (64 << 10):
                parts, fd = [], self._fh.fileno()
                while start < stop:
                    part = os.pread(fd, min(stop - start, 1 << 30), start)
                    if not part:
                        break
                    parts.append(part)
                    start += len(part)
                return parts[0] if len(parts) == 1 else b"".join(parts)
        return super().__getitem__(k)

    def close(self) -> None:
        super().close()
        self._fh.close()


class MemberReader:
    """Reads the members of one wheel: a ``.whl`` (``root`` None) or a tree rooted at ``root``."""

    def __init__(self, path: Path, root: Path | None = None) -> None:
        self.path, self.root = path, root
        self._fh = open(path, "rb") if root is None else None  # noqa: SIM115 - closed by close()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> MemberReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _pread(self, n: int, offset: int) -> bytes:
        assert self._fh is not None
        if hasattr(os, "pread"):
            return os.pread(self._fh.fileno(), n, offset)
        self._fh.seek(offset)  # pragma: no cover - Windows: the reader owns its file object
        return self._fh.read(n)

    def chunks(self, m: Member) -> Iterator[bytes]:
        """The member's bytes, in pieces of at most :data:`CHUNK`. Raises :class:`MemberError`."""
        if self.root is not None:
            yield from self._file_chunks(m)
        else:
            yield from self._zip_chunks(m)

    def _file_chunks(self, m: Member) -> Iterator[bytes]:
        assert self.root is not None
        try:
            with open(self.root / m.path, "rb") as fh:
                while piece := fh.read(CHUNK):
                    yield piece
        except OSError as exc:
            raise MemberError(f"cannot read: {exc.strerror or exc}") from None

    def _zip_chunks(self, m: Member) -> Iterator[bytes]:
        try:
            head = self._pread(30 + len(m.raw_name), m.offset)
        except OSError as exc:
            raise MemberError(f"cannot read: {exc.strerror or exc}") from None
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise MemberError("cannot read: Bad magic number for file header")
        nlen, xlen = _LOCAL_HEADER.unpack_from(head)[9:]
        local_name = head[30:30 + nlen] if nlen <= len(m.raw_name) else self._pread(nlen, m.offset + 30)
        if local_name != m.raw_name:
            raise MemberError(f"cannot read: File name in directory {m.path!r} and header {local_name!r} differ.")
        disagree = _local_disagrees(head, m, self._pread(xlen, m.offset + 30 + nlen) if xlen else b"")
        if disagree:
            raise MemberError(f"cannot read: its local header {disagree}: an installer that reads the local headers "
                              "would not install what the directory describes")
        pos, left = m.offset + 30 + nlen + xlen, m.compressed
        inflate = _zlib.decompressobj(-15) if m.method == 8 else None
        crc = produced = 0
        try:
            while left > 0:
                raw = self._pread(min(CHUNK, left), pos)
                if not raw:
                    raise MemberError("cannot read: the file ends inside the member's data")
                pos, left = pos + len(raw), left - len(raw)
                while True:
                    if inflate is None:
                        piece, raw = raw, b""
                    else:
                        piece = inflate.decompress(raw, CHUNK)  # (at most CHUNK out: a bomb stays small)
                        raw = inflate.unconsumed_tail
                    produced += len(piece)
                    if produced > m.size:
                        raise MemberError(f"member is larger than its declared {m.size} bytes")
                    if piece:
                        crc = _zlib.crc32(piece, crc)
                        yield piece
                    if inflate is not None and inflate.eof:
                        left = 0
                        break
                    # (all input taken, but a full piece out: the inflater may hold more output
                    # for no more input, as a highly compressible stream does; ask again)
                    if not raw and (inflate is None or len(piece) < CHUNK):
                        break
        except MemberError:
            raise
        except OSError as exc:
            raise MemberError(f"cannot read: {exc.strerror or exc}") from None
        except Exception as exc:  # noqa: BLE001 - the inflater's own error type
            raise MemberError(f"cannot read: corrupt member data ({type(exc).__name__}: {exc})") from None
        if inflate is not None and not inflate.eof:
            raise MemberError("cannot read: the member's deflate stream ends early")
        if crc != m.crc:
            raise MemberError(f"cannot read: Bad CRC-32 for file {m.path!r}")

    def read(self, m: Member, needles: Sequence[bytes] = (), progress: Callable[[int], None] | None = None) -> MemberData:
        """Read ``m`` once: hash it, detect its format, keep its bytes if it is native. With
        ``needles``, a spooled member is searched for them as it goes by (see ``search``).

        A native member over :data:`MEMORY_LIMIT` goes to an anonymous temporary file."""
        sha = hashlib.sha256()
        size = 0
        it = self.chunks(m)
        head = b""
        kept: bytearray | None = None
        spool = search = mapped = None
        fmt = None
        try:
            for piece in it:
                head += piece
                if len(head) >= MAGIC_SIZE:
                    break
            fmt = detect(head[:MAGIC_SIZE], m.path) if len(head) >= 4 else None
            if fmt is not None and m.size > MEMORY_LIMIT:
                from wheelaudit.binary.strings import StreamSearch

                search = StreamSearch(needles, fat_regions(head, m.size)) if needles else None
                if self.root is not None:  # (a tree's file is mapped itself: nothing is copied)
                    mapped = open(self.root / m.path, "rb")  # noqa: SIM115 - closed by the map
                else:
                    spool = tempfile.TemporaryFile(prefix="wheelaudit-")  # noqa: SIM115 - closed by the map
            elif fmt is not None:
                kept = bytearray()

            def consume(piece: bytes) -> None:
                sha.update(piece)
                if kept is not None:
                    kept.extend(piece)
                elif spool is not None:
                    spool.write(piece)
                if search is not None:
                    search.feed(piece)

            with _Consumer(consume, threaded=m.size >= THREADED) as sink:
                for piece in _prepend(head, it):
                    sink.put(piece)
                    size += len(piece)
                    if progress is not None:
                        progress(len(piece))
        except MemberError as exc:
            for fh in (spool, mapped):
                if fh is not None:
                    fh.close()
            return MemberData(m, fmt, None, record_hash(sha.digest()), size, str(exc))
        except OSError as exc:
            for fh in (spool, mapped):
                if fh is not None:
                    fh.close()
            return MemberData(m, fmt, None, record_hash(sha.digest()), size, f"cannot read: {exc.strerror or exc}")
        data: bytes | bytearray | SpooledMap | None = kept
        if mapped is not None:
            if size:
                data = SpooledMap(mapped)
            else:
                mapped.close()
                data = b""
        if spool is not None:
            spool.flush()
            if size:
                data = SpooledMap(spool)
            else:
                spool.close()
                data = b""
        return MemberData(m, fmt, data, record_hash(sha.digest()), size, None, search)

    def read_whole(self, m: Member, limit: int) -> bytes:
        """A small member's bytes (RECORD, METADATA, WHEEL). Raises :class:`MemberError`."""
        if m.size > limit:
            raise MemberError(f"larger than {limit} bytes")
        return b"".join(self.chunks(m))


class _Consumer:
    """Hands each piece of a member to ``consume(piece)``, in order: here, or with
    ``threaded`` on a helper thread while the caller inflates the next piece (hashing, the
    strings search and writing release the interpreter lock, as inflating does). Invariant: every
    piece is consumed, in order, before the ``with`` block ends; an exception in ``consume``
    is raised there (or at the next ``put``)."""

    def __init__(self, consume: Callable[[bytes], None], threaded: bool) -> None:
        self.consume = consume
        self.failure: BaseException | None = None
        self.queue: queue.Queue | None = queue.Queue(maxsize=8) if threaded else None
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Consumer:
        if self.queue is not None:
            self.thread = threading.Thread(target=self._run, name="wheelaudit-consume", daemon=True)
            self.thread.start()
        return self

    def _run(self) -> None:
        assert self.queue is not None
        while (item := self.queue.get()) is not None:
            if self.failure is None:
                try:
                    self.consume(item)
                except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
                    self.failure = exc

    def put(self, piece: bytes) -> None:
        if self.queue is None:
            self.consume(piece)
            return
        if self.failure is not None:
            raise self.failure
        self.queue.put(piece)

    def __exit__(self, *exc: object) -> None:
        if self.queue is not None and self.thread is not None:
            if exc[0] is not None and not issubclass(exc[0], Exception):  # type: ignore[arg-type]
                # a stop signal's exception (the command is ending) may have come inside the
                # queue's lock handling and left it unusable: waiting for the helper could hang
                # for ever; it is a daemon thread, gone with the process
                return
            self.queue.put(None)
            self.thread.join()
        if self.failure is not None and exc[0] is None:
            raise self.failure


def _local_disagrees(head: bytes, m: Member, extra: bytes) -> str | None:
    """How a member's local header disagrees with its central directory entry, or None.

    The method must be the same; the CRC-32 and sizes too, unless the local header defers them to
    a data descriptor (flag bit 3: then they are zero, or the same); sizes of 0xFFFFFFFF are in the
    local ZIP64 extra field."""
    (_sig, _ver, flags, method, _t, _d, crc, csize, usize, _n, _x) = _LOCAL_HEADER.unpack_from(head)
    if method != m.method:
        return f"says compression method {method}, the central directory {m.method}"
    if usize == 0xFFFFFFFF or csize == 0xFFFFFFFF:
        at = 0
        while at + 4 <= len(extra):
            hid, hlen = struct.unpack_from("<HH", extra, at)
            if hid == 1:
                body = extra[at + 4:at + 4 + hlen]
                if usize == 0xFFFFFFFF and len(body) >= 8:
                    usize, body = struct.unpack_from("<Q", body)[0], body[8:]
                if csize == 0xFFFFFFFF and len(body) >= 8:
                    csize = struct.unpack_from("<Q", body)[0]
                break
            at += 4 + hlen
    local, central = (crc, csize, usize), (m.crc, m.compressed, m.size)
    if local == central or (flags & 0x08 and local == (0, 0, 0)):
        return None
    return (f"says {usize} bytes ({csize} stored, CRC-32 {crc:08x}), the central directory "
            f"{m.size} ({m.compressed} stored, CRC-32 {m.crc:08x})")


def _prepend(head: bytes, pieces):
    if head:
        yield head
    yield from pieces


def fat_regions(head: bytes, size: int) -> list[tuple[int, int]]:
    """The byte ranges the readers search for strings: the whole file, and each slice of a
    universal Mach-O (read from the fat header in ``head``)."""
    regions = [(0, size)]
    if len(head) >= 8 and head[:4] in (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf"):
        is64 = head[3] == 0xBF
        nfat = int.from_bytes(head[4:8], "big")
        entsize, fmt = (32, ">iiQQII") if is64 else (20, ">iiIII")
        if 0 < nfat < 64 and 8 + nfat * entsize <= len(head):
            for i in range(nfat):
                _c, _s, off, length = struct.unpack_from(fmt, head, 8 + i * entsize)[:4]
                if length and off + length <= size:
                    regions.append((off, off + length))
    return regions
