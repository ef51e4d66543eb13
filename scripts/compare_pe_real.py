#!/usr/bin/env python3
"""Compare wheelaudit's PE reader with LLVM on every DLL/PYD/EXE of real Windows wheels.

    python scripts/compare_pe_real.py [--cache bench/cache/pe] [--no-download] [WHEEL...]

Downloads (once, into the cache; network needed, so NOT part of the test run) numpy, scipy,
executorch==1.5.1 and torch for win_amd64, numpy for win_arm64 and pillow for win32, all for
CPython 3.11, with ``pip download --no-deps --only-binary=:all:``. For each PE member it checks,
against ``llvm-objdump -p`` (export table: names, ordinal-only entries, forwarders, DLL name)
and ``llvm-readobj --file-headers --coff-imports`` (machine, imports per DLL by name and
ordinal, delay-imports per DLL): every fact equal. Prints one line per mismatch and a summary;
exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from wheelaudit.binary import MalformedBinary  # noqa: E402
from wheelaudit.binary import pe  # noqa: E402

WHEELS = [
    ("numpy", "win_amd64"), ("scipy", "win_amd64"), ("executorch==1.5.1", "win_amd64"), ("torch", "win_amd64"),
    ("numpy", "win_arm64"), ("pillow", "win32"),
]


def download(cache: Path) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    for name, plat in WHEELS:
        base = name.split("==")[0].replace("-", "_")
        tag = plat
        if any(p.name.lower().startswith(base + "-") and tag in p.name for p in cache.glob("*.whl")):
            continue
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--platform", plat, "--python-version", "3.11", "-d", str(cache), name], check=False)


MACHINE = re.compile(r"^\s*Machine: \S+ \((0x[0-9A-Fa-f]+)\)", re.M)


def llvm_facts(path: str) -> dict:
    """What LLVM says, in the reader's terms."""
    ro = subprocess.run(["llvm-readobj", "--file-headers", "--coff-imports", path], capture_output=True,
                        text=True, errors="backslashreplace")
    od = subprocess.run(["llvm-objdump", "-p", path], capture_output=True, text=True, errors="backslashreplace")
    if ro.returncode or od.returncode:
        return {"error": (ro.stderr + od.stderr).strip()}
    return parse_llvm(ro.stdout, od.stdout)


def parse_llvm(readobj: str, objdump: str) -> dict:
    m = MACHINE.search(readobj)
    machine = int(m.group(1), 16) if m else None
    imports: dict[str, list[str]] = {}
    delay: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in readobj.splitlines():
        s = line.strip()
        if line.startswith("Import {"):
            current, target = None, imports
        elif line.startswith("DelayImport {"):
            current, target = None, delay
        elif s.startswith("Name: ") and current is None and line.startswith("  Name:"):
            current = target.setdefault(s[6:], [])
        elif s.startswith("Symbol:") and current is not None:
            body = s[len("Symbol:"):]
            mm = re.match(r" (.*) \((\d+)\)$", body)
            if mm is None:
                raise ValueError(f"unexpected llvm-readobj line: {line!r}")
            name, num = mm.groups()
            name = name.strip()
            entry = name if name else f"#{num}"
            if entry not in current:
                current.append(entry)
    exports: dict[str, str | None] = {}  # name -> forwarder target or None
    identity = None
    in_table = False
    for line in objdump.splitlines():
        if line.startswith("Export Table:"):
            in_table = True
            continue
        if not in_table:
            continue
        if line.startswith(" DLL name: "):
            identity = line[len(" DLL name: "):]
            continue
        if line.startswith(" Ordinal base:") or line.startswith(" Ordinal      RVA"):
            continue
        if not line.startswith(" ") or not line.strip():
            in_table = False
            continue
        mm = re.match(r"\s+(\d+)\s+(0x[0-9a-fA-F]+|0)?\s*(.*)$", line)
        if mm is None:
            continue
        ordinal, rva, rest = mm.groups()
        fwd = re.match(r"(.*?) ?\(forwarded to (.*)\)$", rest)
        if fwd:
            exports[fwd.group(1) or f"#{ordinal}"] = fwd.group(2)
        elif rva and rva != "0":
            exports[rest or f"#{ordinal}"] = None
    return {"machine": machine, "imports": imports, "delay": delay, "exports": exports, "identity": identity}


def ours(data: bytes) -> dict:
    s = pe.parse(data)[0]
    imports: dict[str, list[str]] = {}
    delay: dict[str, list[str]] = {}
    kinds = {}
    for d in s.dependencies:
        kinds.setdefault(d.name, set()).add(d.kind)
    for dll, names in s.imports_from.items():
        (delay if kinds.get(dll) == {"delay"} else imports)[dll] = list(names)
    exports: dict[str, str | None] = {x.name: None for x in s.exports}
    exports.update(s.forwarders)
    machine = next((k for k, v in pe.MACHINES.items() if v == s.arch), None)
    if machine is None and s.arch.startswith("machine_"):
        machine = int(s.arch[len("machine_"):], 16)
    return {"machine": machine, "imports": imports, "delay": delay, "exports": exports, "identity": s.identity}


def compare(a: dict, b: dict) -> list[str]:
    out = []
    for key in ("machine", "identity", "imports", "delay", "exports"):
        if a[key] != b[key]:
            if isinstance(a[key], dict):
                ka, kb = set(a[key]), set(b[key])
                diff = [f"only ours {sorted(ka - kb)[:3]}" if ka - kb else "", f"only llvm {sorted(kb - ka)[:3]}" if kb - ka else ""]
                differ = [k for k in ka & kb if a[key][k] != b[key][k]][:3]
                out.append(f"{key}: {' '.join(x for x in diff if x)} differ {differ}")
            else:
                out.append(f"{key}: ours {a[key]!r} llvm {b[key]!r}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", nargs="*", type=Path)
    ap.add_argument("--cache", type=Path, default=ROOT / "bench/cache/pe")
    ap.add_argument("--no-download", action="store_true")
    args = ap.parse_args()
    if not args.wheels and not args.no_download:
        download(args.cache)
    wheels = args.wheels or sorted(args.cache.glob("*.whl"))
    files = mismatched = exports = imports = 0
    with tempfile.TemporaryDirectory() as tmp:
        for whl in wheels:
            n_before, bad_before = files, mismatched
            with zipfile.ZipFile(whl) as zf:
                for info in zf.infolist():
                    if not info.filename.lower().endswith((".dll", ".pyd", ".exe")):
                        continue
                    data = zf.read(info)
                    if data[:2] != b"MZ":
                        continue
                    path = Path(tmp) / "member"
                    path.write_bytes(data)
                    files += 1
                    try:
                        a = ours(data)
                    except MalformedBinary as exc:
                        a = {"error": str(exc)}
                    b = llvm_facts(str(path))
                    if "error" in a or "error" in b:
                        problems = [] if ("error" in a) == ("error" in b) else [f"ours {a.get('error')!r} llvm {b.get('error')!r}"]
                    else:
                        problems = compare(a, b)
                        exports += len(b["exports"])
                        imports += sum(len(v) for v in b["imports"].values()) + sum(len(v) for v in b["delay"].values())
                    if problems:
                        mismatched += 1
                        for p in problems:
                            print(f"MISMATCH {whl.name}:{info.filename}: {p}")
            print(f"{whl.name}: {files - n_before} PE files, {mismatched - bad_before} mismatched", flush=True)
    print(f"total: {len(wheels)} wheels, {files} PE files, {exports} exports, {imports} imports compared, "
          f"{mismatched} files mismatched")
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
