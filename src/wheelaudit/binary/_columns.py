"""Symbol tables read a column at a time (C-speed slicing) instead of a Python loop per entry.

A table of fixed-size records (ELF ``Elf64_Sym``, Mach-O ``nlist_64``) is a byte string; the
bytes of one field in every record are ``raw[offset::entsize]``, and ``bytes.translate``
classifies each of them at once. Per-record conditions become byte masks (one byte per record,
0 or 1) combined with integer ``&``/``|``; :func:`select` and :func:`pick` then keep the
records a mask selects (a slice per run of them). Used by the readers' fast paths, which fall
back to their per-record loops whenever anything is unusual (so errors keep their exact
messages).
"""

from __future__ import annotations

import operator
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import compress
from typing import overload

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


def runs(mask: bytes) -> list[tuple[int, int]] | None:
    """The runs of selected records of a mask, ``[(start, end), ...]``, found with ``find``; None
    when there are so many that an element-wise pass is cheaper (a scattered mask)."""
    mask = mask.translate(NONZERO)  # (0/1 whatever the mask's bytes)
    find = mask.find
    n = len(mask)
    limit = 16 + n // 64
    out: list[tuple[int, int]] = []
    start = find(1)
    while start >= 0:
        end = find(0, start)
        if end < 0:
            end = n
        out.append((start, end))
        if len(out) > limit:
            return None
        start = find(1, end)
    return out


def select(values: Sequence, mask: bytes) -> list:
    """``values[i]`` for each ``i`` where ``mask[i]`` is not 0, in order, as a list.

    A run of selected records is taken as one slice: linkers put a table's local symbols
    together (typically one run), and a mask with few runs costs a ``find`` per run, not a
    step per element; a scattered one is read element-wise (:func:`itertools.compress`)."""
    found = runs(mask)
    if found is None:
        return list(compress(values, mask))
    out: list = []
    for start, end in found:
        out.extend(values[start:end])
    return out


@overload
def pick(values: bytes, mask: bytes) -> bytes: ...
@overload
def pick(values: array, mask: bytes) -> array: ...
def pick(values: bytes | array, mask: bytes) -> bytes | array:
    """:func:`select` for a ``bytes`` or an ``array``, whose type the result keeps."""
    found = runs(mask)
    if found is None:
        chosen = compress(values, mask)
        return bytes(chosen) if isinstance(values, bytes) else array(values.typecode, chosen)
    if isinstance(values, bytes):
        return b"".join([values[start:end] for start, end in found])
    out = array(values.typecode)
    for start, end in found:
        out += values[start:end]
    return out


def u32_array(values: Iterable[int]) -> array:
    return array(_U32, values)


#: below this many values :func:`ascending` compares them one pair at a time
ASCENDING_MIN = 4096


def ascending(values: Sequence[int]) -> bool:
    """Whether the values never decrease (an ``array``, or any sequence of ints).

    A large table is first sampled (an unsorted one, the usual ELF ``.symtab``, costs next to
    nothing), then an unsigned ``array`` is checked in a few big-integer operations instead of
    a comparison per pair (a Python-level pass makes an int object per value; this one does
    not): the values but the first and the values but the last, as two integers of
    fixed-width lanes, are subtracted, and ``d ^ y ^ x`` holds at each bit the borrow that came
    into it. No lane has ``y < x`` exactly when no borrow crosses a lane boundary (the lowest
    such lane would send one into the next) and the difference is not negative (a borrow out
    of the top lane)."""
    n = len(values)
    if n < 2:
        return True
    le = operator.le
    if n < ASCENDING_MIN:
        return all(map(le, values, values[1:]))
    sample = values[::n // 64]
    if not all(map(le, sample, sample[1:])) or values[-1] < sample[-1]:
        return False
    if not (isinstance(values, array) and values.typecode in "BHILQ"):
        return all(map(le, values, values[1:]))
    width = values.itemsize
    if sys.byteorder != "little" and width > 1:
        values = array(values.typecode, values)
        values.byteswap()
    raw = values.tobytes()
    x = int.from_bytes(raw[:-width], "little")  # values 0 .. n-2, value i in lane i
    y = int.from_bytes(raw[width:], "little")  # values 1 .. n-1
    del raw
    d = y - x
    if d < 0:
        return False
    d ^= y  # (in steps, each operand let go once used, to keep the peak memory low)
    del y
    d ^= x
    del x
    return not d & int.from_bytes((b"\1" + bytes(width - 1)) * (n - 1), "little")  # the lowest bit of each lane
