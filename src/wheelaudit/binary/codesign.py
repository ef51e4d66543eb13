"""Mach-O code signatures: does each page of a slice still hash to what its signature says?

On Apple silicon the kernel refuses to map code whose pages disagree with the CodeDirectory
that signs them (a library edited after signing, e.g. by ``install_name_tool`` without a new
``codesign``): the process that loads it is killed. This module re-does the kernel's arithmetic
on the bytes, without running anything.

The embedded signature (``LC_CODE_SIGNATURE``'s ``dataoff``/``datasize``, relative to the slice)
is a SuperBlob (magic ``0xfade0cc0``) of typed blobs, big-endian throughout. Its CodeDirectories
(slot 0 and the alternate slots ``0x1000``-``0x1004``, magic ``0xfade0c02``) each carry
``nCodeSlots`` hashes of ``hashSize`` bytes at ``hashOffset``, one per page of ``2^pageSize``
bytes from the start of the slice up to ``codeLimit`` (``codeLimit64`` from version 0x20300
when set); the last page is short. The slots before ``hashOffset`` are the special slots (Info.plist,
requirements, entitlements...), not page hashes, and are not checked here. The directory the
kernel picks is the strongest hash type present, and that is the one verified.

Reads go through one ``memoryview`` of the caller's buffer: each page is hashed in place,
never copied, so a multi-hundred-megabyte slice costs the hashing and nothing else.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

CSMAGIC_EMBEDDED_SIGNATURE = 0xFADE0CC0
CSMAGIC_CODEDIRECTORY = 0xFADE0C02
CSSLOT_CODEDIRECTORY = 0
CSSLOT_ALTERNATE_CODEDIRECTORIES = range(0x1000, 0x1005)

#: hashType -> (name, digest bytes kept, rank: the kernel prefers the highest)
HASH_TYPES = {
    1: ("SHA-1", 20, 1),
    2: ("SHA-256", 32, 3),
    3: ("SHA-256 (truncated)", 20, 2),
    4: ("SHA-384", 48, 4),
}
_HASHERS = {1: hashlib.sha1, 2: hashlib.sha256, 3: hashlib.sha256, 4: hashlib.sha384}

#: bounds against hostile input: no real signature comes near them
MAX_BLOBS = 64
MAX_PAGE_SHIFT = 30
#: a slice with more code than this is hashed by several threads (hashlib lets go of the GIL),
#: in blocks of BLOCK bytes after each of which a mapped buffer gives its pages back
PARALLEL_MIN = 32 << 20
BLOCK = 8 << 20


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify` found. ``status``: "valid", "invalid", or None when the signature
    cannot be verified (a layout this module does not handle; ``detail`` says which).
    ``page``: the first page whose hash disagrees (index from the slice start), if that is why
    it is invalid. ``detail``: the evidence, for a finding's message."""

    status: str | None
    detail: str | None = None
    page: int | None = None


def _segment_of(offset: int, segments: Sequence[tuple[str, int, int]]) -> str | None:
    """The name of the segment whose file range holds ``offset`` (slice-relative)."""
    for name, fileoff, filesize in segments:
        if fileoff <= offset < fileoff + filesize:
            return name
    return None


def verify(data, slice_offset: int, slice_size: int, sig_offset: int, sig_size: int,
           segments: Sequence[tuple[str, int, int]] = ()) -> Verdict:
    """Verify the embedded signature of the Mach-O slice ``data[slice_offset : slice_offset +
    slice_size]`` whose ``LC_CODE_SIGNATURE`` says ``dataoff = sig_offset``, ``datasize =
    sig_size`` (slice-relative). ``segments``: ``(name, fileoff, filesize)`` of the slice, to
    name where a bad page lies.

    ``data`` must hold every byte of the slice up to the code limit.
    """
    if sig_size <= 0:
        return Verdict("invalid", "LC_CODE_SIGNATURE has no bytes (datasize 0)")
    if sig_offset + sig_size > slice_size:
        return Verdict("invalid", f"the signature [{sig_offset:#x}, {sig_offset + sig_size:#x}) runs past "
                                  f"the end of the {slice_size}-byte slice")
    base = slice_offset
    done = _releaser(data, base)
    with memoryview(data) as whole:
        view = whole[base : base + slice_size]
        try:
            return _verify(view, sig_offset, sig_size, segments, done)
        finally:
            view.release()


def _releaser(data, base: int) -> Callable[[int, int], None]:
    """For a memory-mapped ``data``: a function that hands the mapped pages of a hashed range
    (slice-relative ``[lo, hi)``) back to the page cache, so that hashing a file does not
    keep all of it resident; otherwise one that does nothing."""
    if not isinstance(data, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
        return lambda lo, hi: None
    step = mmap.PAGESIZE

    def done(lo: int, hi: int) -> None:
        start = (base + lo) // step * step
        try:
            data.madvise(mmap.MADV_DONTNEED, start, base + hi - start)
        except (OSError, ValueError):
            pass  # (only a hint)

    return done


def _verify(view: memoryview, sig_offset: int, sig_size: int,
            segments: Sequence[tuple[str, int, int]], done: Callable[[int, int], None]) -> Verdict:
    sig = view[sig_offset : sig_offset + sig_size]
    try:
        if sig_size < 12:
            return Verdict("invalid", f"the signature is {sig_size} bytes, too short for a SuperBlob")
        magic, length, count = struct.unpack_from(">III", sig, 0)
        if magic != CSMAGIC_EMBEDDED_SIGNATURE:
            return Verdict("invalid", f"the signature's magic is {magic:#010x}, not an embedded "
                                      f"signature ({CSMAGIC_EMBEDDED_SIGNATURE:#010x})")
        if length > sig_size or length < 12 or count > MAX_BLOBS or 12 + 8 * count > length:
            return Verdict("invalid", f"the signature's SuperBlob (length {length}, {count} blobs) does not fit "
                                      f"its {sig_size} bytes")
        directories = []
        for i in range(count):
            btype, boff = struct.unpack_from(">II", sig, 12 + 8 * i)
            if btype == CSSLOT_CODEDIRECTORY or btype in CSSLOT_ALTERNATE_CODEDIRECTORIES:
                if boff + 8 > length:
                    return Verdict("invalid", f"blob {i} (type {btype:#x}) at {boff} is outside the signature")
                directories.append((btype, boff))
        if not directories:
            return Verdict("invalid", "the signature has no CodeDirectory")
        parsed = []
        for btype, boff in directories:
            cd = _code_directory(sig, boff, length, btype)
            if isinstance(cd, Verdict):
                return cd
            parsed.append(cd)
        best = max(parsed, key=lambda cd: HASH_TYPES[cd["hash_type"]][2])
        return _check_pages(view, sig, best, sig_offset, segments, done)
    finally:
        sig.release()


def _code_directory(sig: memoryview, boff: int, length: int, btype: int) -> dict | Verdict:
    """The fields of the CodeDirectory blob at ``boff``, bounds-checked, or the Verdict that
    it is malformed."""
    where = f"CodeDirectory (slot {btype:#x})"
    if boff + 44 > length:
        return Verdict("invalid", f"{where} at {boff} does not fit the signature")
    (magic, cd_len, version, _flags, hash_offset, _ident, n_special, n_code, code_limit,
     hash_size, hash_type, _platform, page_shift, _spare2) = struct.unpack_from(">IIIIIIIIIBBBBI", sig, boff)
    if magic != CSMAGIC_CODEDIRECTORY:
        return Verdict("invalid", f"{where} has magic {magic:#010x}, not {CSMAGIC_CODEDIRECTORY:#010x}")
    if boff + cd_len > length:
        return Verdict("invalid", f"{where} of {cd_len} bytes runs past the signature")
    if version >= 0x20100 and cd_len >= 48:
        (scatter,) = struct.unpack_from(">I", sig, boff + 44)
        if scatter:
            return Verdict(None, f"{where} uses a scatter vector (not verified)")
    if version >= 0x20300 and cd_len >= 64:
        (limit64,) = struct.unpack_from(">Q", sig, boff + 56)
        if limit64:
            code_limit = limit64
    if hash_type not in HASH_TYPES:
        return Verdict(None, f"{where} has hash type {hash_type}, which is not verified")
    name, size, _rank = HASH_TYPES[hash_type]
    if hash_size != size:
        return Verdict("invalid", f"{where}: hashSize {hash_size} for {name} (expected {size})")
    if page_shift > MAX_PAGE_SHIFT:
        return Verdict("invalid", f"{where}: pageSize 2^{page_shift} is out of range")
    if hash_offset < n_special * hash_size or hash_offset + n_code * hash_size > cd_len:
        return Verdict("invalid", f"{where}: {n_code} hash slots at offset {hash_offset} do not fit its "
                                  f"{cd_len} bytes")
    return {"slot": btype, "version": version, "hash_type": hash_type, "hash_size": hash_size,
            "hash_offset": boff + hash_offset, "n_code": n_code, "code_limit": code_limit,
            "page_shift": page_shift}


def _check_pages(view: memoryview, sig: memoryview, cd: dict, sig_offset: int,
                 segments: Sequence[tuple[str, int, int]], done: Callable[[int, int], None]) -> Verdict:
    name = HASH_TYPES[cd["hash_type"]][0]
    limit, n_code, size = cd["code_limit"], cd["n_code"], cd["hash_size"]
    if limit > sig_offset:
        return Verdict("invalid", f"the code limit {limit:#x} reaches into the signature (at {sig_offset:#x})")
    # pageSize 0: the whole code limit is one "page"
    page = 1 << cd["page_shift"] if cd["page_shift"] else max(limit, 1)
    expected_slots = -(-limit // page)
    if n_code != expected_slots:
        return Verdict("invalid", f"{n_code} page hashes for a code limit of {limit:#x} bytes in "
                                  f"{page}-byte pages (expected {expected_slots})")
    hasher = _HASHERS[cd["hash_type"]]
    at = cd["hash_offset"]
    stored = bytes(sig[at : at + n_code * size])  # (the slots only: a few bytes a page)

    def first_bad(first: int, stop: int) -> int | None:
        """The first page in ``[first, stop)`` whose hash disagrees, or None."""
        per_block = max(1, BLOCK // page)
        for b0 in range(first, stop, per_block):
            b1 = min(b0 + per_block, stop)
            for i in range(b0, b1):
                with view[i * page : min((i + 1) * page, limit)] as chunk:
                    if hasher(chunk).digest()[:size] != stored[i * size : (i + 1) * size]:
                        return i
            done(b0 * page, min(b1 * page, limit))
        return None

    workers = min(os.cpu_count() or 1, 8) if limit >= PARALLEL_MIN else 1
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        bounds = [n_code * k // workers for k in range(workers + 1)]
        with ThreadPoolExecutor(workers, thread_name_prefix="wheelaudit-codesign") as pool:
            found = [r for r in pool.map(first_bad, bounds[:-1], bounds[1:]) if r is not None]
        bad = min(found) if found else None
    else:
        bad = first_bad(0, n_code)
    if bad is None:
        return Verdict("valid", f"{n_code} pages of {page} bytes, {name}")
    lo, hi = bad * page, min((bad + 1) * page, limit)
    with view[lo:hi] as chunk:
        digest = hasher(chunk).digest()[:size]
    segment = _segment_of(lo, segments)
    inside = f" in {segment}" if segment else ""
    return Verdict(
        "invalid",
        f"page {bad} [{lo:#x}, {hi:#x}){inside}: its {name} is {digest.hex()[:16]}..., "
        f"the signature says {stored[bad * size : (bad + 1) * size].hex()[:16]}... (edited after signing?)",
        page=bad,
    )

