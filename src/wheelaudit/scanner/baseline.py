"""Reading a baseline wheel (``check --baseline``) for its ABI only.

The release checks compare what a consumer binds to: the shared libraries' identities and
exports and the extension modules' names (:mod:`wheelaudit.checks.release.abi`). Of a baseline
wheel only the members a loader or an importer can take by name are read (``*.so``,
``*.so.N``, ``*.dylib``, ``*.dll``, ``*.pyd``, and files with no suffix, which Mach-O frameworks
and executables use); no byte string is searched, no local symbol kept and no code signature
verified; its text files are read for the consumer surface (which libraries are public). Its own
findings are not reported.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from wheelaudit.model.interest import Interest
from wheelaudit.model.wheel import Wheel

_NATIVE_NAME = re.compile(r"(\.so(\.[0-9][0-9.]*)?|\.dylib|\.dll|\.pyd|/[^./]+)$", re.IGNORECASE)


def may_be_native(path: str) -> bool:
    """Whether a member's name is one a loader or an importer can take (see the module docstring)."""
    return ".dist-info/" not in path and _NATIVE_NAME.search("/" + path) is not None


def scan_abi(path: str | os.PathLike[str], *, jobs: int | None = None) -> Wheel:
    """The wheel at ``path`` scanned for its ABI only (see the module docstring); raises what
    :func:`wheelaudit.scanner.scan` raises."""
    from wheelaudit.scanner import scan

    wheel = scan(Path(path), interest=Interest(signatures=False), jobs=jobs, only=may_be_native)
    wheel.defects = []
    return wheel
