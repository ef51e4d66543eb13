#!/usr/bin/env python3
"""The WA6xx audits (Python ABI and loadability) on real wheels (network; not in the default tests).

    python scripts/audits_real_wheels.py [--big] [--cache DIR] [--show N]

Downloads (once, with pip, into the cache scripts/real_wheels.py uses) macOS arm64, manylinux
x86_64 and Windows wheels of numpy, scipy, pillow and executorch, scans each with the built-in
checks only, and prints for each wheel the WA6xx findings per code, the code-signature verdicts
of its arm64 Mach-O slices (every ld64-signed slice should be "valid") and the scan time.
``--big`` adds torch for macOS arm64 (127 MB, libtorch_cpu.dylib: the page-hashing cost).
``--readelf`` compares each ELF binary's exec_stack / textrel / debug info with what binutils'
``readelf`` says (a cross-check of the reader, run here, never in the audit path).
Exit 0 when no arm64 slice's signature is "invalid" and readelf agrees.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import zipfile
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real_wheels import DEFAULT_CACHE  # noqa: E402

from wheelaudit import audit_wheels, scan  # noqa: E402

#: (requirement, platform tag for pip download)
WHEELS = [
    ("numpy==2.4.6", "macosx_14_0_arm64"),
    ("scipy==1.17.1", "macosx_14_0_arm64"),
    ("pillow==13.0.0", "macosx_14_0_arm64"),
    ("executorch==1.5.1", "macosx_14_0_arm64"),
    ("mlx==0.32.4", "macosx_14_0_arm64"),
    ("mlx-metal==0.32.4", "macosx_14_0_arm64"),
    ("numpy==2.4.6", "manylinux_2_28_x86_64"),
    ("scipy==1.17.1", "manylinux_2_28_x86_64"),
    ("pillow==13.0.0", "manylinux_2_28_x86_64"),
    ("executorch==1.5.1", "manylinux_2_28_x86_64"),
    ("scipy-openblas64==0.3.34.481.3", "manylinux_2_28_x86_64"),
    ("onnxruntime==1.20.1", "manylinux_2_28_x86_64"),
    ("cryptography==48.0.1", "macosx_10_9_universal2"),  # abi3, universal2 (a signed arm64 slice)
    ("cryptography==50.0.2", "manylinux_2_28_x86_64"),  # abi3
    ("pillow==13.0.0", "win_amd64"),
]
BIG = [("torch==2.14.1", "macosx_14_0_arm64")]


def fetch(req: str, platform: str, cache: Path) -> Path:
    dist, version = req.split("==")
    dest = cache / platform
    dest.mkdir(parents=True, exist_ok=True)
    stem = dist.replace("-", "_")

    def found() -> list[Path]:
        return sorted(dest.glob(f"{stem}-{version}-*.whl"))

    if not found():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--platform", platform, "--python-version", "3.11", "-d", str(dest), req], check=True)
    if not found():
        raise SystemExit(f"pip downloaded nothing for {req} ({platform})")
    return found()[0]


def readelf_disagreements(path: Path, wheel) -> list[str]:
    """ELF binaries whose (exec_stack, textrel, has debug info) differ from readelf's view."""
    out = []
    with zipfile.ZipFile(path) as z, tempfile.TemporaryDirectory() as d:
        for b in wheel.libraries:
            if b.format != "elf" or not b.ok:
                continue
            f = os.path.join(d, "bin")
            with open(f, "wb") as fh:
                fh.write(z.read(b.path))

            def readelf(*opts: str, f: str = f) -> str:
                return subprocess.run(["readelf", *opts, f], capture_output=True, text=True).stdout

            stack = [line.split() for line in readelf("-lW").splitlines() if "GNU_STACK" in line]
            theirs = ("E" in stack[0][-2] if stack else b.slices[0].arch != "aarch64",
                      "TEXTREL" in readelf("-dW"), ".debug_info" in readelf("-SW"))
            s = b.slices[0]
            ours = (s.exec_stack, s.textrel, s.debug_bytes > 0)
            if ours != theirs:
                out.append(f"{b.path}: wheelaudit {ours}, readelf {theirs}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true", help="also torch for macOS arm64")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--show", type=int, default=3, help="findings shown per code and wheel")
    ap.add_argument("--readelf", action="store_true", help="cross-check the ELF facts with readelf")
    args = ap.parse_args()
    totals: Counter[str] = Counter()
    invalid = disagree = 0
    for req, platform in WHEELS + (BIG if args.big else []):
        path = fetch(req, platform, args.cache)
        t0 = time.perf_counter()
        wheel = scan(path)
        report = audit_wheels([wheel], None)
        dt = time.perf_counter() - t0
        findings = [f for wr in report.wheels for f in wr.findings if f.code.startswith("WA6")]
        codes = Counter(f.code for f in findings)
        totals.update(codes)
        sigs: Counter[str] = Counter()
        for b in wheel.libraries:
            for s in b.slices:
                if b.format == "macho" and s.arch in ("arm64", "arm64e") and s.kind != "object":
                    sigs[str(s.signature)] += 1
                    if s.signature == "invalid":
                        invalid += 1
        mods = sum(1 for b in wheel.libraries if b.ok and (".cpython-" in b.name or b.name.endswith((".so", ".pyd"))))
        print(f"== {path.name}: {len(wheel.libraries)} binaries ({mods} .so/.pyd), {dt:.2f} s; "
              f"WA6xx: {dict(sorted(codes.items())) or 'none'}"
              + (f"; arm64 signatures: {dict(sorted(sigs.items()))}" if sigs else ""))
        for code in sorted(codes):
            shown = [f for f in findings if f.code == code][: args.show]
            for f in shown:
                print(f"   {code} {f.message[:220]}")
            if codes[code] > len(shown):
                print(f"   {code} ... {codes[code] - len(shown)} more")
        if args.readelf:
            bad = readelf_disagreements(path, wheel)
            disagree += len(bad)
            for line in bad:
                print(f"   readelf disagrees: {line}")
    print(f"== total WA6xx findings: {dict(sorted(totals.items())) or 'none'}; invalid arm64 signatures: {invalid}"
          + (f"; ELF facts readelf disagrees with: {disagree}" if args.readelf else ""))
    return 1 if invalid or disagree else 0


if __name__ == "__main__":
    raise SystemExit(main())
