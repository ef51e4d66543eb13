"""The load model: a stage between the model and the checks.

Which binaries of a wheel the platform's loader loads, as what (extension module, command,
library linked or loaded by path, plugin, never loaded), and which images are already in the
process when each is loaded (:mod:`wheelaudit.load.model`). Resolution
(:mod:`wheelaudit.checks.resolution`) consults it, and the checks judge each binary by it. It reads
the scan's facts only: the binaries' and the import-time events of the wheel's Python sources
(:mod:`wheelaudit.archive.load_order`); it never opens a file.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace

from wheelaudit.load.entries import importable_name, is_command, is_extension_module, never_loaded
from wheelaudit.load.model import Image, LoadModel, load_model
from wheelaudit.model.binary import Binary

__all__ = ["Image", "LoadModel", "load_model", "importable_name", "is_command", "is_extension_module",
           "never_loaded", "loaded_binaries"]


def loaded_binaries(libraries: Iterable[Binary], also: Iterable[Binary] = ()) -> set[str]:
    """The paths of the binaries the system's loader loads when the wheel is used, from the
    binaries alone (no sources): its extension modules and commands, the binaries ``also`` (known
    to be loaded at every import) and everything they link, transitively."""
    libs = list(libraries)
    model = LoadModel(SimpleNamespace(libraries=libs))
    out = set(model.loaded)
    for b in also:
        if b.ok and b.path in model.binaries:
            out.update(model.closure(b.path))
    return out
