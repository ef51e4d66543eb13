"""Mach-O reader: thin (32/64-bit, either endianness) and universal (``FAT_MAGIC``/``FAT_MAGIC_64``).

Reads only what the facts need, straight from the buffer with :mod:`struct` (no subprocess, no
third-party parser, no copy of the whole file): the header, the load commands, the symbol table
and the dyld export trie. Everything is bounds-checked against the image (a fat slice is read
within its own ``[offset, offset + size)``); anything that does not fit raises
:class:`~wheelaudit.binary.MalformedBinary` with the reason.

What goes where:

* ``exports``: the dyld export trie (``LC_DYLD_EXPORTS_TRIE``, else ``LC_DYLD_INFO[_ONLY]``) when
  the image has one, even an empty one (that is what dyld sees); re-exports are left out and
  counted in ``Slice.notes``. Without a trie (object files, pre-10.6 images): the ``N_EXT``, not
  ``N_PEXT``, defined (``N_SECT``/``N_ABS``, or common) nlist entries. ``type`` is "func" when the
  address lies in a section with instructions, else "data" (thread-locals, absolutes included).
* ``imports``: ``N_EXT`` undefined nlist entries (not commons), deduplicated, in table order.
* ``locals``: defined nlist entries that are not ``N_EXT`` or are ``N_PEXT``, debug stabs excluded.
* ``min_os``/``sdk``: the macOS ``LC_BUILD_VERSION`` if there is one (else the first), else
  ``LC_VERSION_MIN_*``; a non-macOS deployment target is noted.
* a debug companion (``MH_DSYM``, what ``dsymutil`` writes under ``*.dSYM/``) is a "dsym" slice:
  no code signature is read and its symbol table, a copy of its binary's, gives no symbols.
* a fat slice holding a static archive (a universal ``.a``) is returned as an "object" slice with
  a note; its members are not read.

Reference: ``<mach-o/loader.h>``, ``<mach-o/nlist.h>``, ``<mach-o/fat.h>`` and dyld's
``MachOLoaded::trieWalk`` / LLVM's ``MachOObjectFile`` for the export trie.

The jobs: :mod:`.universal` (the fat container), :mod:`.commands` (the header and load
commands), :mod:`.nlist` (the symbol table), :mod:`.trie` (the export trie), :mod:`.image` (an
image's bytes, bounds-checked), :mod:`.cpu` (architecture names); :mod:`.constants` holds the
format's numbers; the code signature is :mod:`wheelaudit.binary.codesign`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from wheelaudit.binary import Buffer, MalformedBinary
from wheelaudit.binary.budget import Budget
from wheelaudit.binary.macho.constants import FAT_MAGIC_BYTES
from wheelaudit.binary.macho.commands import Image
from wheelaudit.binary.macho.cpu import arch_name
from wheelaudit.binary.macho.image import Demangler
from wheelaudit.binary.macho.universal import parse_fat
from wheelaudit.model.binary import Slice

__all__ = ["parse", "arch_name", "MalformedBinary"]


def parse(data: Buffer, needles: Sequence[bytes] = (), budget: Budget | None = None, *,
          with_signature: bool = True) -> list[Slice]:
    """Facts of each architecture of a Mach-O file, in file (fat header) order. ``budget``: the
    run's, which names that could explode are demangled within; without ``with_signature`` the
    code signatures are not verified."""
    size = len(data)
    if size < 4:
        raise MalformedBinary(f"truncated Mach-O file ({size} bytes)")
    magic = bytes(data[:4])
    if magic in FAT_MAGIC_BYTES:
        return parse_fat(data, size, magic == FAT_MAGIC_BYTES[1], needles, Demangler(budget), with_signature)
    return [Image(data, 0, size, "", Demangler(budget)).parse(needles, with_signature=with_signature)]
