"""Shared plumbing of the ``scripts/regen_*.py`` data generators and the ``scripts/gen_*.py``
generated files (stdlib + packaging only).

Every generated data file starts with a ``header`` object: where the data came from (``source``),
the upstream version read (``upstream_version``), the UTC date it was generated and the command
that regenerates it. The generators download with ``pip download --no-deps`` (or ``apt-get
download``) into a temporary directory; nothing here runs at check time or in the default tests.
"""

from __future__ import annotations

import datetime as _dt
import json
import subprocess
import sys
import zipfile
from pathlib import Path

from packaging.utils import parse_wheel_filename

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "wheelaudit"
POLICYDATA = PACKAGE / "platforms" / "data"


def pip_download(requirement: str, dest: Path, platforms: tuple[str, ...] = (),
                 python_version: str | None = None) -> Path:
    """Download the wheel of ``requirement`` (no dependencies) into ``dest``; its path.

    ``platforms`` / ``python_version``: the wheel for that target rather than this host (pip's
    ``--platform`` / ``--python-version``; pip widens a manylinux or macOS tag to the older ones
    it is compatible with). When ``dest`` already holds wheels of the distribution (a kept
    download directory), the newest one is the answer."""
    target: list[str] = []
    for platform in platforms:
        target += ["--platform", platform]
    if python_version:
        target += ["--python-version", python_version]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-q",
         *target, "-d", str(dest), requirement],
        check=True,
    )
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise SystemExit(f"expected a wheel for {requirement!r} in {dest}, found none")
    if len(wheels) > 1 and not platforms:
        raise SystemExit(f"expected one wheel for {requirement!r} in {dest}, found {[w.name for w in wheels]}")
    return max(wheels, key=lambda w: parse_wheel_filename(w.name)[1])


def wheel_version(wheel: Path) -> str:
    """The distribution version of a wheel, from its file name."""
    return str(parse_wheel_filename(wheel.name)[1])


def read_member(wheel: Path, suffix: str) -> tuple[str, bytes] | None:
    """The first member of ``wheel`` whose path ends with ``suffix``: (path, bytes), or None."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.endswith(suffix):
                return name, z.read(name)
    return None


def header(source: str, upstream_version: str, command: str, **extra) -> dict:
    out = {
        "source": source,
        "upstream_version": upstream_version,
        "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
        "command": command,
    }
    out.update(extra)
    return out


def write_json(path: Path, data: dict) -> None:
    """Sorted keys inside each mapping are the generator's job; this writes one compact document
    (one line per top-level key) so that a regeneration shows as a readable diff."""
    lines = ["{"]
    items = list(data.items())
    for k, (key, value) in enumerate(items):
        comma = "," if k < len(items) - 1 else ""
        lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False, separators=(', ', ': '))}{comma}")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_generated(targets: dict[Path, str], script: str, check: bool) -> int:
    """Write each generated file whose text differs (``targets``: path -> text); with ``check``
    write nothing and exit 1 naming every stale file, for the tests and CI."""
    stale = [p for p, text in targets.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if check:
        for p in stale:
            print(f"{p.relative_to(ROOT)} is out of date: run python scripts/{script}", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_text(targets[p], encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    return 0
