"""JSON renderers (SPEC §5); the schemas ship in ``wheelaudit/schemas``."""

from __future__ import annotations

import json
from typing import Any, TextIO

from .. import __version__
from ..facts import Binary, Slice
from ..report import SCHEMA_VERSION, Report
from ..scan import Wheel


def render_report(report: Report, out: TextIO, color: bool = False) -> None:
    json.dump(report.to_json(), out, indent=2)
    out.write("\n")


def slice_dict(sl: Slice, symbols: bool, resolved: dict | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {
        "arch": sl.arch,
        "kind": sl.kind,
        "identity": sl.identity,
        "dependencies": [{"name": x.name, "kind": x.kind} for x in sl.dependencies],
        "rpaths": [{"path": r.path, "kind": r.kind} for r in sl.rpaths],
        "min_os": sl.min_os,
        "needs_versions": list(sl.needs_versions),
        "stripped": sl.stripped,
        "exports_count": sl.exports_count,
        "imports_count": sl.imports_count,
        "locals_count": len(sl.locals),
    }
    if sl.platform:
        d["platform"] = sl.platform
        d["min_os_command"] = sl.min_os_command
    if sl.float_abi:
        d["float_abi"] = sl.float_abi
    if sl.notes:
        d["notes"] = list(sl.notes)
    if resolved:
        for dep in d["dependencies"]:
            r = resolved.get(dep["name"])
            if r is not None:
                dep["resolved"] = r
    if symbols:
        d["exports"] = [{"name": s.name, "demangled": s.demangled, "weak": s.weak, "type": s.type} for s in sl.exports]
        d["imports"] = list(sl.imports)
        if sl.import_versions:
            d["import_versions"] = dict(sl.import_versions)
    return d


def library_dict(b: Binary, symbols: bool, resolutions: dict | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {
        "path": b.path,
        "format": b.format,
        "kind": b.kind,
        "size": b.size,
        "slices": [slice_dict(s, symbols, (resolutions or {}).get(s.arch)) for s in b.slices],
    }
    if b.error:
        d["error"] = b.error
    return d


def inspect_dict(wheels: list[Wheel], symbols: bool = False, resolutions: dict | None = None) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "tool": {"name": "wheelaudit", "version": __version__},
        "wheels": [
            {
                "path": str(w.path),
                "name": w.name,
                "version": w.version,
                "tags": list(w.tags),
                "libraries": [library_dict(b, symbols, (resolutions or {}).get(b.path)) for b in w.libraries],
                "findings": [f.to_dict() for f in w.findings],
            }
            for w in wheels
        ],
    }


def render_inspect(wheels: list[Wheel], out: TextIO, symbols: bool = False, resolutions: dict | None = None) -> None:
    json.dump(inspect_dict(wheels, symbols, resolutions), out, indent=2)
    out.write("\n")
