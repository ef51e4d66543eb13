#!/usr/bin/env python3
"""Regenerate ``src/wheelaudit/platforms/data/stable_abi.json``: CPython's Stable ABI, per symbol.

Source: CPython's ``Misc/stable_abi.toml`` as the ``abi3info`` package on PyPI ships it -- not as
the TOML file but as a module generated from it (``abi3info/_internal.py``: ``_FUNCTIONS`` and
``_DATAS``, ``Symbol(name=...): Function(added=PyVersion(major=3, minor=2), ifdef=...,
abi_only=...)``). The module is read with ``ast`` (nothing downloaded is imported or run).

Written: symbol -> {"kind": "function" | "data", "added": "3.x", "abi_only": bool, and "ifdef":
the feature macro when the symbol exists only on some builds (MS_WINDOWS, HAVE_FORK, ...)}.
Only functions and data are linker symbols; the TOML's macros, structs and typedefs are not.

Usage: python scripts/regen_stable_abi.py [--wheel abi3info-X.whl] [--version X]
"""

from __future__ import annotations

import argparse
import ast
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _regen_util import POLICYDATA, header, pip_download, read_member, wheel_version  # noqa: E402

COMMAND = "python scripts/regen_stable_abi.py"
TABLES = {"_FUNCTIONS": "function", "_DATAS": "data"}


def _kwargs(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg}


def _call_name(node: ast.expr) -> str | None:
    return node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else None


def parse_tables(source: str) -> dict[str, dict]:
    symbols: dict[str, dict] = {}
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if not isinstance(target, ast.Name) or target.id not in TABLES or not isinstance(node.value, ast.Dict):
            continue
        kind = TABLES[target.id]
        for key, value in zip(node.value.keys, node.value.values, strict=True):
            if _call_name(value) not in ("Function", "Data"):
                raise SystemExit(f"{target.id}: unexpected entry {ast.dump(value)[:80]}")
            kw = _kwargs(value)
            name = ast.literal_eval(_kwargs(kw["symbol"])["name"])
            if _call_name(key) == "Symbol" and ast.literal_eval(_kwargs(key)["name"]) != name:
                raise SystemExit(f"{target.id}: key and symbol disagree for {name}")
            added = _kwargs(kw["added"])
            entry = {
                "kind": kind,
                "added": f"{ast.literal_eval(added['major'])}.{ast.literal_eval(added['minor'])}",
                "abi_only": bool(ast.literal_eval(kw["abi_only"])),
            }
            ifdef = kw.get("ifdef")
            if ifdef is not None and not (isinstance(ifdef, ast.Constant) and ifdef.value is None):
                entry["ifdef"] = ast.literal_eval(_kwargs(ifdef)["name"])
            if name in symbols:
                raise SystemExit(f"{name} is listed twice")
            symbols[name] = entry
    if not symbols:
        raise SystemExit("no _FUNCTIONS / _DATAS tables found")
    return dict(sorted(symbols.items()))


def build(wheel: Path) -> dict:
    version = wheel_version(wheel)
    found = read_member(wheel, "abi3info/_internal.py")
    if found is None:
        raise SystemExit(f"abi3info {version}: _internal.py not found in {wheel.name}")
    member, data = found
    symbols = parse_tables(data.decode("utf-8"))
    newest = max(tuple(map(int, e["added"].split("."))) for e in symbols.values())
    return {
        "header": header(f"woodruffw/abi3info (MIT licence): {member}, generated from CPython's "
                         "Misc/stable_abi.toml", version, COMMAND,
                         newest_added=f"{newest[0]}.{newest[1]}"),
        "comment": ("Every function and data symbol of CPython's Stable ABI (abi3): kind, the minor "
                    "version that added it, abi_only (in the Stable ABI but not the Limited API: "
                    "private names that public macros call, or names kept for binary compatibility) "
                    "and ifdef (a feature macro: the symbol exists only on builds that define it)."),
        "symbols": symbols,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", type=Path, help="an abi3info wheel already downloaded")
    ap.add_argument("--version", help="abi3info version to download (default: the latest)")
    ap.add_argument("--out", type=Path, default=POLICYDATA / "stable_abi.json")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or pip_download("abi3info" + (f"=={args.version}" if args.version else ""), Path(tmp))
        doc = build(wheel)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # one symbol per line: a new CPython release diffs as the lines it adds
    import json
    lines = ["{"]
    lines.append(f'  "header": {json.dumps(doc["header"])},')
    lines.append(f'  "comment": {json.dumps(doc["comment"])},')
    lines.append('  "symbols": {')
    items = list(doc["symbols"].items())
    for i, (name, e) in enumerate(items):
        lines.append(f"    {json.dumps(name)}: {json.dumps(e)}{',' if i < len(items) - 1 else ''}")
    lines.append("  }")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == doc
    args.out.write_text(text, encoding="utf-8")
    kinds = {k: sum(1 for e in doc["symbols"].values() if e["kind"] == k) for k in TABLES.values()}
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes; {kinds}, newest {doc['header']['newest_added']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
