#!/usr/bin/env python3
"""Regenerate ``src/wheelaudit/platforms/data/elf_exports.json``: what the system libraries that the
manylinux policies allow export, for WA506 (an imported symbol that binds to nothing).

Source: Debian's binary packages of glibc (``libc6``), libstdc++ (``libstdc++6``), libgcc_s
(``libgcc-s1``), libatomic (``libatomic1``) and zlib (``zlib1g``), fetched with
``apt-get download`` through a private apt state in a temporary directory (its own sources.list
naming one suite, default trixie: glibc 2.41 and GCC 14, the versions of the newest manylinux
policy), unpacked with ``dpkg-deb -x`` and read with wheelaudit's own ELF reader
(``wheelaudit.binary.elf.parse``). The system's apt configuration is not touched.

A symbol version node ``GLIBC_2.x`` exists in every later glibc, so one new release tells every
policy's export set: per library, each exported symbol is kept under its lowest version node
(per version prefix), and a policy sees the symbols whose node its auditwheel ``symbol_versions``
lists. ``GLIBC_PRIVATE`` symbols are left out (not for binding by wheels). ``covers`` records the
highest version of each prefix the data holds: for a policy whose ceiling is above it, the
loader answers "no data".

Usage: python scripts/regen_external_exports.py [--suite trixie] [--arch amd64 --arch arm64]
Needs apt-get and dpkg-deb (a Debian or Ubuntu host) and wheelaudit importable (run it with the
project's venv).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _regen_util import PACKAGE, POLICYDATA, header, write_json  # noqa: E402

sys.path.insert(0, str(PACKAGE.parent))
from wheelaudit.binary.elf import parse  # noqa: E402

COMMAND = "python scripts/regen_external_exports.py"
MIRROR = "http://deb.debian.org/debian"

# Debian architecture -> the ELF reader's architecture name
ARCHS = {"amd64": "x86_64", "arm64": "aarch64"}

# Debian package -> the SONAMEs read from it (those the manylinux allowlists name, and the loader)
PACKAGES = {
    "libc6": ["libc.so.6", "libm.so.6", "libmvec.so.1", "libpthread.so.0", "libdl.so.2", "librt.so.1",
              "libutil.so.1", "libresolv.so.2", "libanl.so.1", "libnsl.so.1",
              "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"],
    "libstdc++6": ["libstdc++.so.6"],
    "libgcc-s1": ["libgcc_s.so.1"],
    "libatomic1": ["libatomic.so.1"],
    "zlib1g": ["libz.so.1"],
}

_NODE = re.compile(r"^([A-Z][A-Z0-9]*)_(.+)$")
_NUMERIC_TAIL = re.compile(r"^(?:(.*)_)?(\d+(?:\.\d+)*)$")


def split_node(node: str) -> tuple[str, str] | None:
    """``GLIBC_2.17`` -> (GLIBC, 2.17); ``GLIBCXX_LDBL_3.4`` -> (GLIBCXX, LDBL_3.4), as
    auditwheel's symbol_versions key them."""
    m = _NODE.match(node)
    return (m.group(1), m.group(2)) if m else None


def _order_key(node: str) -> tuple:
    """Sort key within one family: (sub-prefix, numeric tuple); non-numeric nodes last."""
    split = split_node(node)
    rest = split[1] if split else node
    m = _NUMERIC_TAIL.match(rest)
    if not m:
        return (split[0] if split else "", rest, (10**9,))
    return (split[0] if split else "", m.group(1) or "", tuple(int(x) for x in m.group(2).split(".")))


def _family(node: str | None) -> str:
    """Symbols are kept at their lowest node per family: the prefix plus any sub-prefix
    (CXXABI and CXXABI_TM are different families)."""
    if not node:
        return ""
    k = _order_key(node)
    return f"{k[0]}_{k[1]}"


def apt(tmp: Path, suite: str, archs: list[str]) -> list[str]:
    """apt-get options for a private apt state under ``tmp`` that knows ``suite`` only."""
    state = tmp / "apt"
    for sub in ("lists/partial", "cache/archives/partial"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    (state / "sources.list").write_text(f"deb {MIRROR} {suite} main\n")
    opts = [f"-oDir::Etc::SourceList={state / 'sources.list'}", f"-oDir::Etc::SourceParts={state / 'none'}",
            f"-oDir::State::Lists={state / 'lists'}", f"-oDir::Cache={state / 'cache'}",
            "-oAPT::Sandbox::User=root"]
    opts += [f"-oAPT::Architectures::={a}" for a in archs]
    subprocess.run(["apt-get", *opts, "-qq", "update"], check=True)
    return opts


def fetch(tmp: Path, opts: list[str], arch: str) -> tuple[Path, dict[str, str]]:
    """Download and unpack this architecture's packages; (root, package -> version)."""
    debs = tmp / "debs" / arch
    root = tmp / "root" / arch
    debs.mkdir(parents=True)
    root.mkdir(parents=True)
    subprocess.run(["apt-get", *opts, "-qq", "download", *[f"{p}:{arch}" for p in PACKAGES]], check=True, cwd=debs)
    versions = {}
    for deb in sorted(debs.glob("*.deb")):
        name, version = deb.name.split("_")[:2]
        versions[name] = version.replace("%3a", ":")
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    return root, versions


def _find(root: Path, soname: str) -> Path | None:
    """The unpacked file of ``soname``: a regular file of that name, or a symlink to one inside
    the unpacked tree."""
    for path in sorted(root.rglob(soname)):
        real = path.resolve()
        if real.is_file() and root.resolve() in real.parents:
            return real
    return None


def exports(path: Path) -> dict[str, list[str]]:
    """version node ("" for unversioned) -> the names whose lowest node (per family) it is."""
    s = parse(path.read_bytes())[0]
    lowest: dict[tuple[str, str], str] = {}
    for sym in s.exports:
        node = sym.version or ""
        if node == "GLIBC_PRIVATE" or sym.name == node:
            continue  # private to glibc, or the absolute symbol that names a version node
        key = (sym.name, _family(node))
        if key not in lowest or _order_key(node) < _order_key(lowest[key]):
            lowest[key] = node
    out: dict[str, set[str]] = {}
    for (name, _fam), node in lowest.items():
        out.setdefault(node, set()).add(name)
    return {node: sorted(out[node]) for node in sorted(out, key=_order_key)}


def covers(libs: dict[str, dict]) -> dict[str, str]:
    """prefix (GLIBC, GLIBCXX, ...) -> the highest numeric version any library of the data defines."""
    best: dict[str, tuple[tuple[int, ...], str]] = {}
    for lib in libs.values():
        for node in lib["versions"]:
            split = split_node(node)
            if not split:
                continue
            m = _NUMERIC_TAIL.match(split[1])
            if not m or m.group(1):
                continue
            v = tuple(int(x) for x in m.group(2).split("."))
            if split[0] not in best or v > best[split[0]][0]:
                best[split[0]] = (v, m.group(2))
    return {k: best[k][1] for k in sorted(best)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="trixie", help="Debian suite to read (default: trixie)")
    ap.add_argument("--arch", action="append", choices=sorted(ARCHS), help="Debian architecture (repeatable)")
    ap.add_argument("--out", type=Path, default=POLICYDATA / "elf_exports.json")
    args = ap.parse_args(argv)
    archs = args.arch or sorted(ARCHS)
    data: dict[str, dict] = {}
    packages: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        os.chmod(tmp, 0o755)
        opts = apt(tmp, args.suite, archs)
        for arch in archs:
            root, versions = fetch(tmp, opts, arch)
            packages[ARCHS[arch]] = versions
            libs: dict[str, dict] = {}
            for package, sonames in PACKAGES.items():
                for soname in sonames:
                    path = _find(root, soname)
                    if path is None:
                        continue  # ld-linux of the other architecture, or a library the release dropped
                    libs[soname] = {"package": f"{package} {versions[package]}", "versions": exports(path)}
            data[ARCHS[arch]] = libs
    glibc = {a: v.get("libc6") for a, v in packages.items()}
    doc = {
        "header": header(f"Debian {args.suite} binary packages ({', '.join(PACKAGES)}) from {MIRROR}, "
                         "read with wheelaudit.binary.elf", ", ".join(sorted({v for v in glibc.values() if v})),
                         COMMAND + (f" --suite {args.suite}" if args.suite != "trixie" else ""),
                         packages=packages),
        "comment": ("Per architecture and library (SONAME): version node -> the exported symbols whose lowest "
                    "version node (per prefix) it is; '' holds unversioned symbols. A policy can bind to a "
                    "symbol when its node is among the policy's symbol_versions (policies/manylinux.json). "
                    "covers: per architecture, the highest version of each prefix that the data holds; a "
                    "policy whose ceiling for a library's prefix is above it has no data for that library. "
                    "Since glibc 2.34 the symbols of libpthread, libdl, librt, libutil and libanl live in "
                    "libc.so.6 (at their old version nodes as well): those libraries export (almost) "
                    "nothing here, and libc.so.6, which every glibc binary's closure holds, answers for them."),
        "covers": {arch: covers(libs) for arch, libs in data.items()},
        "libraries": data,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, doc)
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({size} bytes); covers {json.dumps(doc['covers'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
