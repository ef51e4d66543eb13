#!/usr/bin/env python3
"""`check --env` against `check --together` on real wheels: install the wheels with pip into a
temporary `--target` folder (no index, no dependencies; other platforms' wheels too), audit the
folder with `--env` and the wheel files with `--together`, and compare the findings one by one
(code, subject, paths, symbols, and the message once each wheel's file name is read as its
`.dist-info` folder's name).

Usage:  python scripts/compare_env_together.py WHEEL... [-- CHECK_ARGS...]
  e.g.  python scripts/compare_env_together.py /work/wheelcache/macosx_14_0_arm64/*.whl -- --rules rules/runtimes.toml

Exit 0 when the findings are the same, 1 when they differ (the differences are printed).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename


def wheelaudit(*argv: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "wheelaudit", *argv, "--format", "json"], capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"wheelaudit {' '.join(argv)}: exit {proc.returncode}\n{proc.stderr}")
    return json.loads(proc.stdout)


def comparable(data: dict, relabel: dict[str, str]) -> list[tuple]:
    out = []
    for f in data["wheels"][0]["findings"]:
        msg = f["message"]
        for a, b in relabel.items():
            msg = msg.replace(a, b)
        out.append((f["code"], f["subject"], tuple(f["paths"]), tuple(f["symbols"]), msg))
    return sorted(out)


def main(argv: list[str]) -> int:
    if "--" in argv:
        i = argv.index("--")
        wheels, extra = [Path(a) for a in argv[:i]], argv[i + 1:]
    else:
        wheels, extra = [Path(a) for a in argv], []
    if not wheels:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    platforms, pythons = set(), set()
    for w in wheels:
        for tag in parse_wheel_filename(w.name)[3]:
            platforms.add(tag.platform)
            if tag.interpreter.startswith("cp") and tag.interpreter[2:].isdigit():
                pythons.add(f"{tag.interpreter[2]}.{tag.interpreter[3:]}")
    with tempfile.TemporaryDirectory(prefix="wheelaudit-env-") as tmp:
        site = Path(tmp) / "site"
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile",
               "--disable-pip-version-check", "--only-binary=:all:", "--target", str(site)]
        cmd += [a for p in sorted(platforms) for a in ("--platform", p)]
        if len(pythons) == 1:
            cmd += ["--python-version", pythons.pop()]
        subprocess.run(cmd + [str(w) for w in wheels], check=True)
        infos = {canonicalize_name(p.name[: -len(".dist-info")].rsplit("-", 1)[0]): p.name for p in site.glob("*.dist-info")}
        relabel = {w.name: infos[canonicalize_name(parse_wheel_filename(w.name)[0])] for w in wheels}
        together = comparable(wheelaudit("check", "--together", *map(str, wheels), *extra), relabel)
        env = comparable(wheelaudit("check", "--env", str(site), *extra), {})
    print(f"{len(wheels)} wheels; --together: {len(together)} findings {dict(Counter(f[0] for f in together))}")
    print(f"{' ' * len(str(len(wheels)))} installed; --env:      {len(env)} findings {dict(Counter(f[0] for f in env))}")
    if together == env:
        print("the same findings")
        return 0
    for f in sorted(set(together) ^ set(env)):
        print(("only --together: " if f in together else "only --env:      ") + f"{f[0]} {f[1]} {f[4][:200]}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
