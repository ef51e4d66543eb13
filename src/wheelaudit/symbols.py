"""Symbol names: demangling (with the ``cpp_demangle`` crate, never our own) and name matching.

Names are as the linker sees them, less Mach-O's leading underscore and any ELF ``@version``.
"""

from __future__ import annotations

from functools import lru_cache

import cpp_demangle


@lru_cache(maxsize=1 << 16)
def _demangle_cached(name: str) -> str:
    try:
        return cpp_demangle.demangle(name)
    except Exception:  # noqa: BLE001 - a name that is not valid Itanium stays as it is
        return name


def demangle(name: str) -> str:
    """The demangled C++ form of ``name``; C names and unknown schemes come back unchanged.

    ``name`` is the undecorated name (``_ZN...``), i.e. without Mach-O's extra underscore.
    """
    if not name.startswith("_Z"):
        return name
    return _demangle_cached(name)
