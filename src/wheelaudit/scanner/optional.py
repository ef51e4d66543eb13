"""Which of a scanned wheel's extension modules its Python code imports only where a failed
import is caught (:mod:`wheelaudit.archive.import_guards`), read from the wheel again when a
check asks: only for the modules a load error names, so a wheel without one reads no source."""

from __future__ import annotations

from collections.abc import Iterable

from wheelaudit.archive import NotAWheel, open_wheel
from wheelaudit.archive.import_guards import optional_modules
from wheelaudit.model.wheel import Wheel


def find_optional_modules(wheel: Wheel, modules: Iterable[str]) -> dict[str, str]:
    """Of ``modules`` (extension modules of ``wheel``), the optional ones: path -> where a
    guarded import of it is (``pkg/mod.py:12``). Wheels audited together (``--together``): each
    module is looked for in the wheel that ships it, its sources only. Empty for an installed
    environment (``--env``: its files are not read again) and for a wheel that can no longer be
    read."""
    wanted = sorted(set(modules))
    if not wanted:
        return {}
    if wheel.origins:
        found: dict[str, str] = {}
        for member in getattr(wheel, "members", ()):
            mine = set(member.files) & set(wanted)
            if mine and not member.origins:
                found.update(find_optional_modules(member, mine))
        return found
    try:
        source = open_wheel(wheel.path)
    except (NotAWheel, OSError):
        return {}
    with source:
        sources = [f for f in source.files() if f.endswith(".py")]
        guards = optional_modules(wanted, sources, lambda f: source.read_text(f)[0])
    return {m: str(g) for m, g in guards.items()}
