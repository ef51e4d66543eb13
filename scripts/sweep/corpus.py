#!/usr/bin/env python3
"""The sweep corpus: real wheels of every platform, pinned by version and sha256 (network; never
run by the default tests).

    python scripts/sweep/corpus.py fetch [--cache DIR] [--only GLOB] [--jobs N]
    python scripts/sweep/corpus.py list  [--cache DIR] [--only GLOB]
    python scripts/sweep/corpus.py pin   [--cache DIR] [--jobs N] [--refresh]  # rewrite corpus.tsv

`corpus.tsv` (beside this script) is the pinned list: one wheel a line, `name version platform python
file sha256`. `fetch` downloads every wheel missing from the cache with `pip download --no-deps
--only-binary=:all:` for that exact version, platform and Python, and refuses a file whose sha256
differs from the pin (exit 1). `list` prints the cached path of each pinned wheel (what
`verdicts.py record` reads). `pin` resolves the (name, platform) pairs of `wanted.txt` that
`corpus.tsv` does not pin yet (with `--refresh`, all of them afresh) to the newest wheel PyPI serves,
and rewrites `corpus.tsv`; a name with no wheel for a platform is left out and said on standard
error.

The cache (default `~/.cache/wheelaudit-sweep`, or `$WHEELAUDIT_SWEEP_CACHE`) holds each wheel at
`<platform>/<name>/<file>`.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus.tsv"
WANTED = HERE / "wanted.txt"
DEFAULT_CACHE = Path(os.environ.get("WHEELAUDIT_SWEEP_CACHE", Path.home() / ".cache" / "wheelaudit-sweep"))

#: short platform key -> (pip --platform values, python version). iOS and Android wheels exist for
#: CPython 3.13 and later only (PEP 730, PEP 738).
PLATFORMS: dict[str, tuple[tuple[str, ...], str]] = {
    # pip takes --platform values literally: every manylinux tag a manylinux_2_28 machine installs
    "lx": (tuple(f"manylinux_2_{v}_x86_64" for v in range(28, 16, -1)) + ("manylinux2014_x86_64",), "3.11"),
    "la": (tuple(f"manylinux_2_{v}_aarch64" for v in range(28, 16, -1)) + ("manylinux2014_aarch64",), "3.11"),
    "ml": (("musllinux_1_2_x86_64",), "3.11"),
    "ma": (("macosx_14_0_arm64",), "3.11"),
    "mx": (("macosx_13_0_x86_64",), "3.11"),
    "wa": (("win_amd64",), "3.11"),
    "w32": (("win32",), "3.11"),
    "wr": (("win_arm64",), "3.11"),
    "ios": (tuple(f"ios_{v}_0_arm64_iphoneos" for v in range(12, 19)), "3.13"),
    "and": (tuple(f"android_{v}_arm64_v8a" for v in range(21, 36)), "3.13"),
    "any": ((), "3.11"),
}


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    platform: str
    python: str
    file: str
    sha256: str

    def path(self, cache: Path) -> Path:
        return cache / self.platform / self.name / self.file


def read_corpus(path: Path = CORPUS) -> list[Pin]:
    pins = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, version, platform, python, file, sha = line.split("\t")
        pins.append(Pin(name, version, platform, python, file, sha))
    return pins


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _pip_download(req: str, platform: str, dest: Path) -> Path | None:
    plats, python = PLATFORMS[platform]
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
               "--only-binary=:all:", "--python-version", python, "-d", tmp, req]
        for p in plats:
            cmd += ["--platform", p]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        got = sorted(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or len(got) != 1:
            return None
        final = dest / got[0].name
        os.replace(got[0], final)
        return final


def fetch_one(pin: Pin, cache: Path) -> tuple[Pin, str]:
    path = pin.path(cache)
    if not path.exists():
        if _pip_download(f"{pin.name}=={pin.version}", pin.platform, path.parent) is None or not path.exists():
            return pin, "not downloaded (pip found no such file)"
    got = sha256(path)
    if got != pin.sha256:
        return pin, f"sha256 {got} differs from the pin"
    return pin, "ok"


def pin_one(name: str, platform: str, cache: Path) -> Pin | None:
    from packaging.utils import parse_wheel_filename

    # resolve into a scratch folder: the newest wheel PyPI serves
    scratch = cache / ".pin" / platform / name
    got = _pip_download(name, platform, scratch)
    if got is None:
        return None
    _, version, _, _ = parse_wheel_filename(got.name)
    pin = Pin(name, str(version), platform, PLATFORMS[platform][1], got.name, sha256(got))
    target = pin.path(cache)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(got, target)
    return pin


def _selected(pins: list[Pin], only: str | None) -> list[Pin]:
    if not only:
        return pins
    return [p for p in pins if fnmatch.fnmatch(f"{p.name}/{p.platform}", only) or fnmatch.fnmatch(p.file, only)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["fetch", "list", "pin"])
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--only", help="a glob over NAME/PLATFORM (e.g. 'torch/*', '*/wa') or the file name")
    ap.add_argument("--jobs", type=int, default=6, help="downloads at once (default 6)")
    ap.add_argument("--refresh", action="store_true", help="pin: resolve every wanted wheel afresh")
    args = ap.parse_args(argv)

    if args.command == "pin":
        wanted = []
        for line in WANTED.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, *plats = line.split()
                wanted += [(name, p) for p in plats]
        kept = {} if args.refresh or not CORPUS.exists() else {(p.name, p.platform): p for p in read_corpus()}
        todo = [np for np in wanted if np not in kept]
        with ThreadPoolExecutor(args.jobs) as ex:
            results = list(ex.map(lambda np: (np, pin_one(np[0], np[1], args.cache)), todo))
        results += [(np, kept[np]) for np in wanted if np in kept]
        results.sort(key=lambda r: wanted.index(r[0]))
        pins = []
        for (name, plat), pin in results:
            if pin is None:
                print(f"no wheel: {name} for {plat}", file=sys.stderr)
            else:
                pins.append(pin)
        with CORPUS.open("w") as f:
            f.write("# The sweep corpus, pinned (scripts/sweep/corpus.py pin rewrites it from wanted.txt).\n")
            f.write("# name\tversion\tplatform\tpython\tfile\tsha256\n")
            for p in pins:
                f.write("\t".join((p.name, p.version, p.platform, p.python, p.file, p.sha256)) + "\n")
        print(f"pinned {len(pins)} wheels of {len(wanted)} wanted into {CORPUS}", file=sys.stderr)
        return 0

    pins = _selected(read_corpus(), args.only)
    if args.command == "list":
        for p in pins:
            print(p.path(args.cache))
        return 0

    bad = 0
    with ThreadPoolExecutor(args.jobs) as ex:
        for pin, status in ex.map(lambda p: fetch_one(p, args.cache), pins):
            if status != "ok":
                bad += 1
                print(f"{pin.name} {pin.version} {pin.platform}: {status}", file=sys.stderr)
    print(f"fetched {len(pins) - bad} of {len(pins)} wheels into {args.cache}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
