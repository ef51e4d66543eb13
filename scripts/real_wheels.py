#!/usr/bin/env python3
"""Download real wheels (network; not part of the default tests) into a cache directory.

    python scripts/real_wheels.py [--cache DIR] [NAME ...]

Prints the path of each wheel. Other scripts import :func:`fetch`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

#: name -> (requirement, platform tag)
WHEELS = {
    "executorch-macos": ("executorch==1.5.1", "macosx_14_0_arm64"),
    "executorch-linux": ("executorch==1.5.1", "manylinux_2_28_x86_64"),
    "mlx-metal": ("mlx-metal==0.32.4", "macosx_14_0_arm64"),
    "mlx": ("mlx==0.32.4", "macosx_14_0_arm64"),
    "numpy-linux": ("numpy==2.4.6", "manylinux_2_28_x86_64"),
    "numpy-macos": ("numpy==2.4.6", "macosx_14_0_arm64"),
    # C++ SDKs in wheels (the consumer surface, scripts/surface_real_wheels.py)
    "pybind11": ("pybind11==3.1.0", "manylinux_2_28_x86_64"),
    "nanobind": ("nanobind==3.1.0", "manylinux_2_28_x86_64"),
    "scipy-openblas64": ("scipy-openblas64==0.3.34.481.3", "manylinux_2_28_x86_64"),
    "torch-macos": ("torch==2.14.1", "macosx_14_0_arm64"),
}

DEFAULT_CACHE = Path(os.environ.get("WHEELAUDIT_WHEEL_CACHE", Path.home() / ".cache" / "wheelaudit-wheels"))


def fetch(name: str, cache: Path = DEFAULT_CACHE) -> Path:
    """The cached wheel for ``name`` (see WHEELS), downloading it with pip when missing."""
    req, platform = WHEELS[name]
    dist, version = req.split("==")
    dest = cache / platform
    dest.mkdir(parents=True, exist_ok=True)
    stem = dist.replace("-", "_")

    def found() -> list[Path]:
        return sorted(p for p in dest.glob(f"{stem}-{version}-*.whl"))

    if not found():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--platform", platform, "--python-version", "3.11", "-d", str(dest), req], check=True)
    hits = found()
    if not hits:
        raise SystemExit(f"pip downloaded nothing for {req} ({platform})")
    return hits[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(WHEELS), help=f"any of {', '.join(WHEELS)}")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = ap.parse_args()
    for n in args.names:
        print(fetch(n, args.cache))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
