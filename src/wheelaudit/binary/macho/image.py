"""One Mach-O image's bytes, bounds-checked; the helpers every table's reader shares (names,
ULEB128, demangling memoised for the file)."""

from __future__ import annotations

from wheelaudit.binary import Buffer, MalformedBinary
from wheelaudit.binary.budget import Budget
from wheelaudit.binary.demangle import demangle


def utf8(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def undecorate(raw: bytes) -> str:
    """A Mach-O symbol name less its leading underscore (names without one stay as they are)."""
    return (raw[1:] if raw[:1] == b"_" else raw).decode("utf-8", "backslashreplace")


def uleb(buf: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    """Decode one ULEB128 from ``buf[pos:end]``; return (value, position after it)."""
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise MalformedBinary(f"{what}: truncated ULEB128 at offset {pos}")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result >> 64:
                raise MalformedBinary(f"{what}: ULEB128 value does not fit in 64 bits")
            return result, pos
        shift += 7
        if shift >= 70:
            raise MalformedBinary(f"{what}: overlong ULEB128 (more than 10 bytes) at offset {pos - 10}")


class Demangler(dict):
    """``demangle`` memoised for one file: the slices of a universal binary share names; within
    the run's ``budget`` (names that could explode)."""

    def __init__(self, budget: Budget | None = None) -> None:
        super().__init__()
        self.budget = budget

    def __call__(self, name: str) -> str:
        if not name.startswith("_Z"):
            return name
        demangled = self.get(name)
        if demangled is None:
            demangled = self[name] = demangle(name, self.budget)
        return demangled


class ImageBase:
    """One Mach-O image: ``data[base : base + size]``; every offset inside is relative to ``base``.
    What its load commands say (``e``, ``sections``, ...) is set by
    :meth:`wheelaudit.binary.macho.commands.Image.parse` before the tables are read."""

    e: str  # struct byte order
    is64: bool
    sections: list[tuple[int, int, int]]  # (addr, size, flags), in n_sect order
    image_base: int
    import_desc: dict[str, int]

    def __init__(self, data: Buffer, base: int, size: int, where: str, demangler: Demangler) -> None:
        self.demangle = demangler
        self.data = data
        self.base = base
        self.size = size
        self.where = where  # prefix of error messages ("fat slice 1 (x86_64): ")

    def bad(self, reason: str) -> MalformedBinary:
        return MalformedBinary(self.where + reason)

    def check_range(self, off: int, length: int, what: str) -> None:
        if length and off + length > self.size:
            raise self.bad(
                f"{what} [{off}, {off + length}) runs past the end of the image ({self.size} bytes)")
