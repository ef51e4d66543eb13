"""The C++ consumer surface of a wheel (issue #24): CMake package configs and export files and
pkg-config files, read as text and never run.

    surface = read_surface(wheel.files, read_text)

``read_text(path) -> str | None`` returns a member's text (None when it cannot be read). The result
is a plain :class:`Surface`; :mod:`wheelaudit.checks.consumer` turns it into findings.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable, Iterable

from wheelaudit.binary.budget import Budget
from wheelaudit.surface.cmake import read_cmake
from wheelaudit.surface.errors import SurfaceError
from wheelaudit.model.surface import (PREFIX, SITE, ConfigVariable, ImportedTarget, Layout, PackageConfig, PkgConfigFile, Ref,
                    Surface)
from wheelaudit.surface.pkgconfig import read_pkgconfig

__all__ = ["read_surface", "has_surface", "Surface", "ImportedTarget", "PackageConfig", "ConfigVariable",
           "PkgConfigFile", "Ref", "Layout", "SurfaceError", "PREFIX", "SITE"]


def has_surface(files: Iterable[str]) -> bool:
    """Whether a wheel ships any file the consumer surface is read from."""
    return any(f.endswith((".cmake", ".pc")) for f in files)


def read_surface(files: Iterable[str], read_text: Callable[[str], str | None], *,
                 platform: str | None = None, budget: Budget | None = None) -> Surface:
    """Read every CMake and pkg-config file of a wheel. Never raises on the files' content: a
    file that cannot be read is listed in ``problems``.

    ``platform`` (``"linux"``, ``"macos"``, ``"windows"``; None: unknown, e.g. a pure wheel) is where
    the wheel's consumers build: it decides ``if(WIN32)`` / ``if(APPLE)`` / ``if(UNIX)`` branches;
    unknown, both ways are read. ``budget``: the run's, which the CMake reader draws on (a fresh
    one when None)."""
    files = list(files)
    # (the CMake and pkg-config files first: the readers then see those, not every member)
    surface_files = [f for f in files if f[-6:] == ".cmake" or f[-3:] == ".pc"]
    if not surface_files:
        return Surface()
    layout = Layout(files)

    def guarded(path: str) -> str | None:
        # (the failures wheelfile._read_text words for a member it cannot read: here the file is
        # listed as unreadable instead)
        try:
            return read_text(path)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError, RuntimeError):
            return None

    reader = read_cmake(surface_files, guarded, layout, platform, budget)
    targets, configs, exports = reader.result
    pcs, pc_problems = read_pkgconfig(surface_files, guarded, layout)
    problems = sorted({**reader.problems, **pc_problems}.items())
    return Surface(targets=sorted(targets, key=lambda t: (t.name, t.export_file)), configs=configs,
                   export_files=exports, pkgconfig=pcs, problems=problems, texts=reader.texts)
