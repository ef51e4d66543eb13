"""Symbol tables read a column at a time (C-speed slicing) instead of a Python loop per entry.

A table of fixed-size records (ELF ``Elf64_Sym``, Mach-O ``nlist_64``) is a byte string; the
bytes of one field in every record are ``raw[offset::entsize]``, and ``bytes.translate``
classifies each of them at once. Per-record conditions become byte masks (one byte per record,
0 or 1) combined with integer ``&``/``|``; ``itertools.compress`` then keeps the records a mask
selects. Used by the readers' fast paths, which fall back to their per-record loops whenever
anything is unusual (so errors keep their exact messages).
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable

_U32 = "I" if array("I").itemsize == 4 else "L"


def column(raw: bytes, offset: int, stride: int) -> bytes:
    """Byte ``offset`` of every ``stride``-byte record."""
    return raw[offset::stride]


def u32_column(raw: bytes, offset: int, stride: int, little: bool) -> array:
    """The 32-bit field at ``offset`` of every record, as an array of ints."""
    n = len(raw) // stride
    buf = bytearray(4 * n)
    order = range(4) if little == (sys.byteorder == "little") else range(3, -1, -1)
    for k, src in enumerate(order):
        buf[k::4] = raw[offset + src: offset + src + stride * n: stride][:n]
    out = array(_U32)
    out.frombytes(bytes(buf))
    return out


def table(pred: Callable[[int], bool | int]) -> bytes:
    """A ``bytes.translate`` table: byte value -> ``int(pred(value))`` (or the value it gives)."""
    return bytes(int(pred(v)) for v in range(256))


def mask_and(*cols: bytes) -> bytes:
    n = len(cols[0])
    acc = int.from_bytes(cols[0], "little")
    for c in cols[1:]:
        acc &= int.from_bytes(c, "little")
    return acc.to_bytes(n, "little")


def mask_or(*cols: bytes) -> bytes:
    n = len(cols[0])
    acc = int.from_bytes(cols[0], "little")
    for c in cols[1:]:
        acc |= int.from_bytes(c, "little")
    return acc.to_bytes(n, "little")


NONZERO = table(lambda v: v != 0)
ZERO = table(lambda v: v == 0)


def nonzero_u32(raw: bytes, offset: int, stride: int) -> bytes:
    """1 where the 32-bit field at ``offset`` is not zero (either byte order)."""
    return mask_or(*(raw[offset + k::stride] for k in range(4))).translate(NONZERO)


def select(values: Iterable, mask: bytes) -> list:
    from itertools import compress

    return list(compress(values, mask))


def u32_array(values: Iterable[int]) -> array:
    return array(_U32, values)
