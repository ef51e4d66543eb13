#!/usr/bin/env python3
"""The consumer surface (issue #24) of real wheels that ship CMake / pkg-config files (network).

    python scripts/surface_real_wheels.py [--cache DIR] [--json] [NAME ...]

Downloads each wheel with pip (scripts/real_wheels.py, only PyPI) and prints, per wheel, what
``wheelaudit inspect`` shows of its consumer surface (package configs, imported targets, .pc files,
unreadable files) and the WA701-WA705 findings of ``wheelaudit.checks.consumer``, with the
identities of the wheel's libraries from wheelaudit's own scan. WA705 is checked with the rules
components given for a wheel below (ExecuTorch's: each delegate and runtime library with the target
its package config is documented to declare, found with the SPEC's ``[cmake] declares`` pattern).

Not part of the default tests. The judgement of each finding (what cmake would do) is in
docs/consumer-surface.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_wheels import DEFAULT_CACHE, fetch  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

#: ExecuTorch's components with a CMake target (the names its executorch-config.cmake documents)
ET_COMPONENTS = [(target.split("::")[1], target, f"executorch/lib/lib{lib}.*") for target, lib in (
    ("executorch::runtime", "executorch"),
    ("executorch::threadpool", "executorch_threadpool"),
    ("executorch::etdump", "executorch_etdump"),
    ("executorch::kernels_optimized", "executorch_kernels_optimized"),
    ("executorch::kernels_quantized", "executorch_kernels_quantized"),
    ("executorch::kernels_torchao", "executorch_kernels_torchao"),
    ("executorch::backend_xnnpack", "executorch_backend_xnnpack"),
    ("executorch::backend_coreml", "executorch_backend_coreml"),
    ("executorch::backend_mlx", "executorch_backend_mlx"),
    ("executorch::backend_openvino", "executorch_backend_openvino"),
    ("executorch::backend_qnn", "executorch_backend_qnn"),
    ("executorch::backend_cuda", "executorch_backend_cuda"),
)]
ET_CMAKE = {"config": ["executorch/**/executorch-config.cmake"],
            "declares": r"_executorch_define_component\(\s*(?P<name>\w+)\s+(?P<library>\w+)",
            "namespace": "executorch::"}

#: the wheels to read, and the components (name, cmake-target, owner) and [cmake] table for WA705
NAMES = {
    "executorch-linux": (ET_COMPONENTS, ET_CMAKE),
    "executorch-macos": (ET_COMPONENTS, ET_CMAKE),
    "mlx-metal": None,
    "mlx": None,
    "numpy-linux": None,
    "numpy-macos": None,
    "pybind11": None,
    "nanobind": None,
    "scipy-openblas64": None,
    "torch-macos": None,
}


def report(path: Path, wa705: tuple | None) -> dict:
    from wheelaudit import scan
    from wheelaudit.checks.consumer import CMakeComponent, check_surface
    from wheelaudit.surface import Surface
    from wheelaudit.surface.declarations import read_declarations

    wheel = scan(path)
    s = wheel.surface
    components, declarations = [], []
    if wa705 is not None:
        comps, cmake = wa705
        # the runtime is declared by its own add_library, not by the helper
        components = [CMakeComponent(*c) for c in comps if c[1] != "executorch::runtime"]
        declarations = read_declarations(wheel.files, (s or Surface()).texts.get, cmake["config"],
                                         cmake["declares"], cmake["namespace"])
    findings = check_surface(s or Surface(), wheel.files, {b.path: b.identity for b in wheel.libraries},
                             components=components, declarations=declarations)
    return {
        "wheel": path.name,
        "configs": [] if s is None else [{"path": c.path, "includes": c.includes,
                                           "unresolved_includes": c.unresolved_includes} for c in s.configs],
        "targets": [] if s is None else [
            {"name": t.name, "type": t.type, "live": t.live, "export_file": t.export_file,
             "files": {k: f"{r.member or r.text}{'' if r.exists or r.kind != 'wheel' else ' (missing)'} [{r.kind}]"
                       for k, r in t.files.items()},
             "sonames": t.sonames, "link_libraries": [x if isinstance(x, str) else f"{x.text} [{x.kind}]"
                                                      for x in t.link_libraries]}
            for t in s.targets],
        "pkgconfig": [] if s is None else [{"path": p.path, "libs": p.libs, "cflags": p.cflags} for p in s.pkgconfig],
        "problems": [] if s is None else s.problems,
        "findings": [f.to_dict() for f in findings],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(NAMES), help=f"any of {', '.join(NAMES)}")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--json", action="store_true", help="one JSON object per wheel")
    args = ap.parse_args()
    for name in args.names:
        r = report(fetch(name, args.cache), NAMES.get(name))
        if args.json:
            print(json.dumps(r))
            continue
        print(f"== {r['wheel']}")
        for c in r["configs"]:
            print(f"  config {c['path']}" + (f"  includes {', '.join(c['includes'])}" if c["includes"] else ""))
        for t in r["targets"]:
            print(f"  target {t['name']} {t['type']} {'live' if t['live'] else 'orphan'} ({t['export_file']})")
            for k, v in t["files"].items():
                print(f"    file{'[' + k + ']' if k else ''} {v}")
            if t["link_libraries"]:
                print(f"    links {'; '.join(t['link_libraries'])}")
        for p in r["pkgconfig"]:
            print(f"  pc {p['path']}: libs {' '.join(p['libs'])}; cflags {' '.join(p['cflags'])}")
        for path, why in r["problems"]:
            print(f"  unreadable {path}: {why}")
        for f in r["findings"]:
            print(f"  {f['code']} {f['severity']} [{f['subject']}] {f['message']}")
        if not r["findings"]:
            print("  no WA7xx finding")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
