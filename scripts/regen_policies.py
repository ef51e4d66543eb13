#!/usr/bin/env python3
"""Regenerate ``src/wheelaudit/platforms/data/{manylinux,musllinux,android}.json`` from auditwheel.

Reads ``auditwheel/policy/manylinux-policy.json``, ``musllinux-policy.json`` and (when the
release has it) ``android-policy.json`` out of auditwheel's wheel and writes the shape that
``wheelaudit.platforms.tags`` reads:

* ``lib_sets`` (manylinux only): each distinct system-library allowlist once, by name; a policy's
  ``lib_whitelist`` names its set (musllinux and android policies list theirs inline);
* per policy ``ceilings``: per architecture, the highest version of each versioned-symbol prefix
  (``GLIBCXX_LDBL_3.4.21`` -> ``GLIBCXX_LDBL: 3.4.21``, ``CXXABI_TM_1`` -> ``CXXABI_TM: 1``);
  names without a numeric tail (``CXXABI_FLOAT128``, ``GLIBC_ABI_DT_RELR``) have no ceiling;
* per policy ``symbol_versions``: auditwheel's exact lists (every version node of every versioned
  library the policy allows: GLIBC, GLIBCXX, CXXABI, GCC, LIBATOMIC, ZLIB, ... including the
  non-numeric ones), and ``blacklist``: symbols that a library of the allowlist exports but a
  wheel must not import from it (auditwheel refuses them).

Usage: python scripts/regen_policies.py [--wheel auditwheel-X.whl] [--version X.Y.Z]
(stdlib + packaging; downloads with ``pip download --no-deps auditwheel`` into a temp dir.)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _regen_util import PACKAGE, header, pip_download, read_member, wheel_version  # noqa: E402

OUT = PACKAGE / "platforms" / "data"
COMMAND = "python scripts/regen_policies.py"

# The dynamic loaders are allowed dependencies of every policy though auditwheel's allowlists do
# not name them (they are the program interpreter, not a NEEDED library of the usual kind).
LOADERS = {
    "manylinux": ["ld-linux*.so*", "ld64.so*"],
    "musllinux": ["ld-musl-*.so.1", "libc.musl-*.so.1"],
    "android": ["linker", "linker64"],
}

_NUMERIC_TAIL = re.compile(r"^(?:(.*)_)?(\d+(?:\.\d+)*)$")


def _vt(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def ceilings(symbol_versions: dict[str, dict[str, list[str]]]) -> dict[str, dict[str, str]]:
    """arch -> prefix -> the highest numeric version auditwheel lists for it."""
    out: dict[str, dict[str, str]] = {}
    for arch, prefixes in sorted(symbol_versions.items()):
        best: dict[str, str] = {}
        for prefix, versions in prefixes.items():
            for v in versions:
                m = _NUMERIC_TAIL.match(v)
                if not m:
                    continue  # FLOAT128, ABI_DT_RELR: a marker, not an ordered version
                key = f"{prefix}_{m.group(1)}" if m.group(1) else prefix
                if key not in best or _vt(m.group(2)) > _vt(best[key]):
                    best[key] = m.group(2)
        if best:
            out[arch] = dict(sorted(best.items()))
    return out


def _policies(raw: list[dict]) -> list[dict]:
    # "linux" (priority 0) is auditwheel's catch-all, not a policy a tag names
    return [p for p in raw if p["name"] != "linux"]


def _entry(p: dict, whitelist) -> dict:
    sv = {a: {k: list(v) for k, v in sorted(pref.items())} for a, pref in sorted(p["symbol_versions"].items())}
    return {
        "name": p["name"],
        "aliases": list(p.get("aliases", [])),
        "priority": p.get("priority"),
        "lib_whitelist": whitelist,
        "ceilings": ceilings(p["symbol_versions"]),
        "symbol_versions": sv,
        "blacklist": {lib: sorted(syms) for lib, syms in sorted(p.get("blacklist", {}).items())},
    }


def _dump(doc: dict, list_key: str) -> str:
    """One line per header key and lib set, one block per policy: a regeneration diffs readably."""
    lines = ["{"]
    for key, value in doc.items():
        if key in ("lib_sets", list_key):
            continue
        lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    if "lib_sets" in doc:
        lines.append('  "lib_sets": {')
        sets = list(doc["lib_sets"].items())
        for i, (name, libs) in enumerate(sets):
            lines.append(f"    {json.dumps(name)}: {json.dumps(libs)}{',' if i < len(sets) - 1 else ''}")
        lines.append("  },")
    lines.append(f"  {json.dumps(list_key)}: [")
    entries = doc[list_key]
    for i, e in enumerate(entries):
        lines.append("    {" + ", ".join(f"{json.dumps(k)}: {json.dumps(e[k])}" for k in
                                        ("name", "aliases", "priority", "lib_whitelist")) + ",")
        for key in ("ceilings", "symbol_versions", "blacklist"):
            sub = e[key]
            if not sub:
                lines.append(f"      {json.dumps(key)}: {{}}" + ("," if key != "blacklist" else ""))
                continue
            lines.append(f"      {json.dumps(key)}: {{")
            subs = list(sub.items())
            for j, (k, v) in enumerate(subs):
                lines.append(f"        {json.dumps(k)}: {json.dumps(v)}{',' if j < len(subs) - 1 else ''}")
            lines.append("      }" + ("," if key != "blacklist" else ""))
        lines.append("    }" + ("," if i < len(entries) - 1 else ""))
    lines.append("  ]")
    lines.append("}")
    out = "\n".join(lines) + "\n"
    assert json.loads(out) == doc  # the hand-made layout is still exactly the document
    return out


def build(wheel: Path) -> dict[str, dict]:
    version = wheel_version(wheel)
    docs: dict[str, dict] = {}
    for family in ("manylinux", "musllinux", "android"):
        found = read_member(wheel, f"auditwheel/policy/{family}-policy.json")
        if found is None:
            if family == "android":
                print(f"auditwheel {version} has no android policy; android.json not written", file=sys.stderr)
                continue
            raise SystemExit(f"auditwheel {version}: {family}-policy.json not found in {wheel.name}")
        member, data = found
        raw = _policies(json.loads(data))
        doc: dict = {
            "header": header(f"pypa/auditwheel (MIT licence): {member}", version, COMMAND),
            "comment": (f"Generated from pypa/auditwheel {version} {member}; do not edit by hand. Per policy: "
                        "its system-library allowlist (lib_whitelist"
                        + (", by set name in lib_sets" if family == "manylinux" else "")
                        + "), per architecture the highest allowed version of each versioned-symbol prefix "
                        "(ceilings: GLIBC_2.28 -> GLIBC: 2.28; GLIBCXX_LDBL_3.4.21 -> GLIBCXX_LDBL: 3.4.21; "
                        "non-numeric nodes such as CXXABI_FLOAT128 have none), auditwheel's exact version lists "
                        "(symbol_versions) and the symbols a wheel must not import from an allowed library "
                        "(blacklist)."),
            "source": f"pypa/auditwheel {version}: {member}",
            "loader": LOADERS[family],
        }
        if family == "manylinux":
            sets: dict[str, list[str]] = {}
            names: dict[tuple, str] = {}
            entries = []
            for p in raw:
                key = tuple(p["lib_whitelist"])
                if key not in names:
                    names[key] = f"set{len(names) + 1}"
                    sets[names[key]] = list(p["lib_whitelist"])
                entries.append(_entry(p, names[key]))
            doc["lib_sets"] = sets
        else:
            entries = [_entry(p, list(p["lib_whitelist"])) for p in raw]
        doc[family] = entries
        docs[family] = doc
    return docs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", type=Path, help="an auditwheel wheel already downloaded")
    ap.add_argument("--version", help="auditwheel version to download (default: the latest)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or pip_download("auditwheel" + (f"=={args.version}" if args.version else ""), Path(tmp))
        docs = build(wheel)
    args.out.mkdir(parents=True, exist_ok=True)
    for family, doc in docs.items():
        path = args.out / f"{family}.json"
        path.write_text(_dump(doc, family), encoding="utf-8")
        print(f"wrote {path} ({path.stat().st_size} bytes, {len(doc[family])} policies)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
