"""Names that repair tools give the libraries they vendor, and what a library's name says.

auditwheel (``<pkg>.libs/libXau-154567c4.so.6.0.0``), delvewheel (``<pkg>.libs/geos-<32 hex>.dll``)
and delocate (``<pkg>/.dylibs/libXau.6.0.0.dylib``) copy the libraries a wheel's binaries need
into the wheel, under names only those binaries know. A rebuild renames them; nobody else links
them. The release checks never compare them, and ``diff`` pairs them across a rename.
"""

from __future__ import annotations

import re

from wheelaudit.model.binary import Binary

#: auditwheel: ``<name>-<8 hex>.so[.<version>]``, the hash repeated when a vendored library was
#: itself vendored before (``libgfortran-040039e1-0352e75f.so.5.0.0``)
_AUDITWHEEL = re.compile(r"^(?P<stem>.+?)(?P<hash>(?:-[0-9a-f]{8})+)(?P<rest>\.so(?:\.[0-9][0-9.]*)?)$")
#: delvewheel: ``<name>-<32 hex>.dll``
_DELVEWHEEL = re.compile(r"^(?P<stem>.+?)(?P<hash>-[0-9a-f]{32})(?P<rest>\.(?:dll|pyd))$", re.IGNORECASE)
#: a versioned ELF name ``libfoo.so.1.2.3`` and a versioned Mach-O name ``libfoo.1.2.3.dylib``
ELF_VERSION = re.compile(r"^(?P<stem>[^/]+?\.so)\.[0-9][0-9.]*$")
MACHO_VERSION = re.compile(r"^(?P<stem>[^./]+)\.[0-9][0-9.]*\.dylib$")


def unhashed(name: str) -> tuple[str, str | None]:
    """A library file name without the hash a repair tool put in it, and that tool:
    ``libXau-154567c4.so.6.0.0`` → (``libXau.so.6.0.0``, ``"auditwheel"``);
    ``geos-bf067cd6ff74ee0ad5f3ff52c7ef08c9.dll`` → (``geos.dll``, ``"delvewheel"``);
    any other name → (the name, None)."""
    for tool, rx in (("auditwheel", _AUDITWHEEL), ("delvewheel", _DELVEWHEEL)):
        m = rx.match(name)
        if m:
            return m["stem"] + m["rest"], tool
    return name, None


def library_stem(name: str) -> str:
    """The name of a library less repair hash, version and suffix, for pairing the same
    library across two builds: ``libXau-154567c4.so.6.0.0``, ``libXau.so.6`` and
    ``libXau.6.0.0.dylib`` → ``libXau``; ``geos-<32 hex>.dll`` → ``geos``;
    ``_imaging.cpython-311-darwin.so`` → ``_imaging``."""
    return unhashed(name)[0].split(".", 1)[0]


def vendored_by(b: Binary) -> str | None:
    """The repair tool that vendored ``b`` (a library in a ``*.libs/`` or ``.dylibs/`` folder, or
    with a repair hash in its name), or None: a library of the project's own."""
    parts = b.path.split("/")[:-1]
    if ".dylibs" in parts:
        return "delocate"
    tool = unhashed(b.name)[1]
    if tool is not None:
        return tool
    if any(p.endswith(".libs") and len(p) > 5 for p in parts):
        return "auditwheel" if b.format == "elf" else "delvewheel" if b.format == "pe" else "a repair tool"
    return None
