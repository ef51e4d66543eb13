"""Format readers: bytes of one native binary in, :class:`~wheelaudit.model.binary.Binary` facts out.

Each format module (``elf``, ``macho``, ``pe``) exposes the same interface::

    def parse(data: Buffer, needles: Sequence[bytes] = ()) -> list[Slice]

``data`` is any object supporting the buffer protocol and ``.find`` (``bytes`` or ``mmap``).
A reader raises :class:`MalformedBinary` with a human reason for anything it cannot read; it
never returns partial facts silently (a limit that cuts results raises too, or is noted in
``Slice.notes``). Readers know nothing about wheels or rules and never execute or load what
they read.
"""

from __future__ import annotations

from collections.abc import Sequence
import mmap
import re

from wheelaudit.binary import demangle as _demangle  # noqa: F401  (installs the model's lazy demangler)
from wheelaudit.children import ForkFailed
from wheelaudit.model.binary import Binary, Format, Slice

Buffer = bytes | bytearray | memoryview | mmap.mmap

ELF_MAGIC = b"\x7fELF"
MACHO_MAGICS = {
    b"\xfe\xed\xfa\xce",  # MH_MAGIC (big-endian 32-bit)
    b"\xce\xfa\xed\xfe",  # MH_CIGAM (little-endian 32-bit)
    b"\xfe\xed\xfa\xcf",  # MH_MAGIC_64 (big-endian)
    b"\xcf\xfa\xed\xfe",  # MH_CIGAM_64 (little-endian 64-bit: every modern macOS binary)
}
FAT_MAGICS = {b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf"}  # FAT_MAGIC, FAT_MAGIC_64 (big-endian)
PE_MAGIC = b"MZ"

#: bytes needed to decide a format
MAGIC_SIZE = 8


class MalformedBinary(Exception):
    """The bytes claim a native format but cannot be read as one. ``str(exc)`` is the reason."""


#: names a native binary goes by (``libfoo.so.1`` too): a member so named is never a Java class file
_NATIVE_NAME = re.compile(r"\.(so|dylib|pyd|dll|bundle|exe)$|\.so\.[0-9][0-9.]*$", re.IGNORECASE)


def native_name(path: str) -> bool:
    """Whether ``path``'s name says it is a native binary (a shared library, an extension module,
    an executable with its Windows suffix)."""
    return bool(_NATIVE_NAME.search(path.rsplit("/", 1)[-1]))


def detect(head: bytes, path: str | None = None) -> Format | None:
    """Return the native format announced by the first bytes of a file, or None.

    ``CAFEBABE`` is also the magic of Java class files; a fat Mach-O header has a small
    architecture count where a class file has its version (major >= 45) in the same place, so
    counts of 45 and more are taken for Java, unless ``path`` is named as a native binary: such
    a file is never a class file, so it is read as Mach-O (and the reader judges the count).
    """
    if head[:4] == ELF_MAGIC:
        return "elf"
    if head[:4] in MACHO_MAGICS:
        return "macho"
    if head[:4] in FAT_MAGICS:
        if path is not None and native_name(path):
            return "macho"  # (the reader judges it, a header cut short too)
        nfat = int.from_bytes(head[4:8], "big") if len(head) >= 8 else 0
        return "macho" if 0 < nfat < 45 else None
    if head[:2] == PE_MAGIC:
        return "pe"
    return None


def find_strings(data: Buffer, needles: Sequence[bytes], start: int = 0, end: int | None = None) -> frozenset[bytes]:
    """Which of ``needles`` occur in ``data[start:end]`` (the `strings` evidence)."""
    stop = len(data) if end is None else end
    search = getattr(needles, "search", None)  # strings.PrecomputedStrings: found while streaming
    if search is not None:
        known = search.result(start, stop)
        if known is not None:
            return known
    if not needles:
        return frozenset()
    from wheelaudit.binary.strings import searcher

    return searcher(tuple(needles)).found(data, start, stop)


def parse(data: Buffer, fmt: Format, needles: Sequence[bytes] = (), budget=None, *,
          signatures: bool = True) -> list[Slice]:
    """Dispatch to the reader for ``fmt``. Raises :class:`MalformedBinary`. ``budget``: the run's
    (:class:`wheelaudit.binary.budget.Budget`), which C++ names that could explode are demangled
    within; without ``signatures`` a Mach-O code signature is not verified (``Slice.signature``
    left None)."""
    if fmt == "elf":
        from wheelaudit.binary import elf

        return elf.parse(data, needles, budget)
    if fmt == "macho":
        from wheelaudit.binary import macho

        return macho.parse(data, needles, budget, with_signature=signatures)
    from wheelaudit.binary import pe

    return pe.parse(data, needles)


def read_binary(data: Buffer, path: str, needles: Sequence[bytes] = (), budget=None, *,
                signatures: bool = True) -> Binary | None:
    """Facts about one file, or None when it is not a native binary.

    Never raises for bad input: a binary that cannot be parsed comes back with ``error`` set.
    ``budget``: the run's (see :func:`parse`).
    """
    fmt = detect(bytes(data[:MAGIC_SIZE]), path)
    if fmt is None:
        return None
    binary = Binary(path=path, format=fmt, size=len(data))
    try:
        binary.slices = parse(data, fmt, needles, budget, signatures=signatures)
    except MalformedBinary as exc:
        binary.error = str(exc) or "malformed"
    except ForkFailed:  # (the machine's fault, not the binary's: the run stops, exit 2)
        raise
    except (ValueError, IndexError, KeyError, OverflowError, UnicodeDecodeError, MemoryError) as exc:
        # A reader bug on hostile input must still end as a finding, not a crash.
        binary.error = f"unreadable {fmt} file ({type(exc).__name__}: {exc})"
    except Exception as exc:  # noqa: BLE001 - the third-party readers raise anything
        binary.error = f"unreadable {fmt} file ({type(exc).__name__}: {exc})"
    if binary.slices:
        binary.kind = binary.slices[0].kind
    return binary
