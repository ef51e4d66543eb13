"""JSON renderers (SPEC §5); the schemas ship in ``wheelaudit/schemas``."""

from __future__ import annotations

import json
from typing import Any, TextIO

from wheelaudit import __version__
from wheelaudit.model.binary import Binary, Slice
from wheelaudit.model.report import SCHEMA_VERSION, Report
from wheelaudit.model.wheel import Wheel


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
        "exec_stack": sl.exec_stack,
        "textrel": sl.textrel,
        "debug_bytes": sl.debug_bytes,
        "signature": sl.signature,
    }
    if sl.platform:
        d["platform"] = sl.platform
        d["min_os_command"] = sl.min_os_command
    if sl.float_abi:
        d["float_abi"] = sl.float_abi
    if sl.x86_isa_needed:
        d["x86_isa_needed"] = sl.x86_isa_needed
    if sl.signature_detail:
        d["signature_detail"] = sl.signature_detail
    if sl.signature_page is not None:
        d["signature_page"] = sl.signature_page
    if sl.notes:
        d["notes"] = list(sl.notes)
    if sl.linker_version is not None:  # a PE slice
        pe: dict[str, Any] = {
            "subsystem": sl.subsystem,
            "linker_version": sl.linker_version,
            "debug_path": sl.debug_path,
            "file_version": sl.file_version,
            "product_version": sl.product_version,
            "forwarders_count": len(sl.forwarders),
        }
        if symbols:
            pe["imports_from"] = {k: list(v) for k, v in sl.imports_from.items()}
            pe["forwarders"] = dict(sl.forwarders)
        d["pe"] = pe
    if resolved is not None:  # (every dependency says where it resolves; null: nowhere)
        for dep in d["dependencies"]:
            dep["resolved"] = resolved.get(dep["name"])
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


def _ref(ref: Any, identities: dict[str, str | None] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"text": ref.text, "kind": ref.kind, "path": ref.member, "exists": ref.exists}
    if identities is not None and ref.member in identities:
        d["identity"] = identities[ref.member]
    return d


def surface_dict(surface: Any, identities: dict[str, str | None]) -> dict[str, Any]:
    """The consumer surface (:class:`wheelaudit.surface.Surface`) of ``inspect --format json``."""
    return {
        "targets": [{
            "name": t.name, "type": t.type, "export_file": t.export_file, "live": t.live,
            "files": {cfg: _ref(r, identities) for cfg, r in t.files.items()},
            "implibs": {cfg: _ref(r) for cfg, r in t.implibs.items()},
            "sonames": dict(t.sonames),
            "include_dirs": [_ref(r) for r in t.include_dirs],
            "link_libraries": [x if isinstance(x, str) else _ref(x) for x in t.link_libraries],
        } for t in surface.targets],
        "configs": [{"path": c.path, "package": c.package, "includes": list(c.includes),
                     "unresolved_includes": list(c.unresolved_includes)} for c in surface.configs],
        "pkgconfig": [{"path": p.path, "name": p.name, "libs": list(p.libs), "libs_private": list(p.libs_private),
                       "cflags": list(p.cflags), "requires": list(p.requires)} for p in surface.pkgconfig],
        "problems": [{"path": path, "message": why} for path, why in surface.problems],
    }


def inspect_dict(wheels: list[Wheel], symbols: bool = False, resolutions: dict | None = None) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "tool": {"name": "wheelaudit", "version": __version__},
        "wheels": [
            {
                "path": str(w.path),
                "name": w.name,
                "version": w.version,
                "tags": [str(t) for t in w.tags],
                "libraries": [library_dict(b, symbols, (resolutions or {}).get(b.path)) for b in w.libraries],
                "findings": [d.to_dict() for d in w.defects],
                **({"consumer_surface": surface_dict(w.surface, {b.path: b.identity for b in w.libraries})}
                   if w.surface is not None else {}),
            }
            for w in wheels
        ],
    }


def render_inspect(wheels: list[Wheel], out: TextIO, symbols: bool = False, resolutions: dict | None = None) -> None:
    json.dump(inspect_dict(wheels, symbols, resolutions), out, indent=2)
    out.write("\n")
