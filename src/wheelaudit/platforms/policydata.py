"""Policy data shipped as JSON, each file regenerated from its upstream by a ``scripts/regen_*.py``.

* ``platforms/data/manylinux.json``, ``musllinux.json``, ``android.json``: auditwheel's policies
  (allowlists, symbol versions, blacklists) -- ``scripts/regen_policies.py``;
* ``policydata/windows.json``: the DLLs of a clean Windows per machine, what CPython's installer
  ships, the MSVC redistributables (delvewheel's lists) -- ``scripts/regen_windows_dlls.py``;
* ``policydata/stable_abi.json``: CPython's Stable ABI symbols (``Misc/stable_abi.toml`` as
  abi3info ships it) -- ``scripts/regen_stable_abi.py``;
* ``policydata/elf_exports.json``: what glibc, libstdc++, libgcc_s, libatomic and zlib export,
  x86_64 and aarch64 (Debian's packages) -- ``scripts/regen_external_exports.py``;
* ``policydata/providers.json``: which distributions ship the libraries other wheels link
  against (torch, the CUDA wheels, cuda-toolkit's extras, OpenMP, MKL, TBB, ...), read from their
  real wheels, and the GPU driver libraries no wheel ships -- ``scripts/regen_providers.py``
  (answered by :mod:`wheelaudit.platforms.providers`).

Every file opens with a ``header`` object: ``source``, ``upstream_version``, ``generated`` (UTC
date) and ``command``. Nothing here downloads: the data is read from the installed package.
The loaders answer ``None`` where the data has nothing to say ("no data" is not "no").
"""

from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache, cache
from pathlib import Path
from typing import Any

from packaging.version import Version

__all__ = [
    "load",
    "linux_policy",
    "policy_allows_version",
    "policy_listed_versions",
    "windows_system_dlls",
    "windows_dll_origin",
    "stable_abi_symbol",
    "stable_abi_entry",
    "elf_external_exports",
]

_HERE = Path(__file__).resolve().parent / "data"
_POLICIES = _HERE


def _read(directory: Path, name: str) -> dict[str, Any]:
    path = directory / f"{name}.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    gz = directory / f"{name}.json.gz"
    if gz.is_file():
        return json.loads(gzip.decompress(gz.read_bytes()).decode("utf-8"))
    raise FileNotFoundError(f"wheelaudit's policy data {name}.json is missing from {directory}")


@cache
def load(name: str) -> dict[str, Any]:
    """The parsed data file ``name`` (``"windows"``, ``"stable_abi"``, ``"elf_exports"``; or a
    Linux policy family: ``"manylinux"``, ``"musllinux"``, ``"android"``). Callers must not
    mutate it: it is shared."""
    if name in ("manylinux", "musllinux", "android"):
        return _read(_POLICIES, name)
    return _read(_HERE, name)


# --------------------------------------------------------------------------------------------
# Linux policies (auditwheel's, as policies/*.json keeps them)


@cache
def _policy_index() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for family in ("manylinux", "musllinux", "android"):
        try:
            doc = load(family)
        except FileNotFoundError:
            continue
        for entry in doc[family]:
            for name in [entry["name"], *entry.get("aliases", [])]:
                out[name] = entry
    return out


def linux_policy(name: str) -> dict[str, Any] | None:
    """The policy entry named ``name`` or one of its aliases (``manylinux_2_17``,
    ``manylinux2014``, ``musllinux_1_2``, ``android_24``); None for any other name."""
    return _policy_index().get(name)


def _split_node(node: str) -> tuple[str, str] | None:
    """``GLIBC_2.17`` -> (GLIBC, 2.17); ``CXXABI_TM_1`` -> (CXXABI, TM_1), as auditwheel keys them."""
    prefix, sep, rest = node.partition("_")
    return (prefix, rest) if sep and prefix and rest else None


def policy_listed_versions(policy: str, arch: str, node: str) -> tuple[str, tuple[str, ...]] | None:
    """The library key of the symbol version ``node`` as auditwheel keys it and the versions
    ``policy`` allows a binary of ``arch`` for it: ``("ZLIB", ())`` for ``ZLIB_1.2.9`` under
    ``manylinux_2_5`` (listed, no version allowed), ``("GLIBC", ("2.2.5", ..., "2.17"))``;
    None when the policy, the architecture or that library is not listed (nothing to check)."""
    entry = linux_policy(policy)
    if entry is None or arch not in entry.get("symbol_versions", {}):
        return None
    split = _split_node(node)
    if split is None or split[0] not in entry["symbol_versions"][arch]:
        return None
    return split[0], tuple(entry["symbol_versions"][arch][split[0]])


def policy_allows_version(policy: str, arch: str, node: str) -> bool | None:
    """Whether ``policy`` lets a binary of ``arch`` need the symbol version ``node``
    (``GLIBC_2.17``, ``GLIBCXX_3.4.19``, ``ZLIB_1.2.9``); None when the policy or the
    architecture is unknown."""
    entry = linux_policy(policy)
    if entry is None or arch not in entry.get("symbol_versions", {}):
        return None
    split = _split_node(node)
    if split is None:
        return False
    return split[1] in entry["symbol_versions"][arch].get(split[0], ())


# --------------------------------------------------------------------------------------------
# Windows


def windows_system_dlls(machine: str) -> frozenset[str]:
    """The lowercase names of the DLLs on every clean Windows of ``machine`` (``x86``,
    ``x86_64``, ``arm64``: the PE reader's names); empty for another machine."""
    return _windows_sets().get(machine, frozenset())


@cache
def _windows_sets() -> dict[str, frozenset[str]]:
    return {m: frozenset(names) for m, names in load("windows")["system"].items()}


#: the Windows versions whose in-box DLLs the data lists beyond every Windows's (oldest first)
WINDOWS_VERSIONS = ("7", "8.1", "10")


@lru_cache(maxsize=4096)
def windows_dll_origin(name: str, machine: str, windows: str = "7") -> str | None:
    """Where a DLL that a binary of ``machine`` imports comes from, when not from the wheel:

    ``"api-set"`` (``api-ms-win-*``, ``ext-ms-*``: the loader maps it), ``"python"`` (beside
    python.exe: ``python3.dll``, ``python3X.dll``, ``vcruntime140.dll``, ...), ``"ucrt"``
    (``ucrtbase.dll``), ``"system"`` (in-box on ``windows``, the oldest Windows the wheel's
    interpreters run on, and every later one: ``"7"``, ``"8.1"`` or ``"10"``), ``"windows-8.1"``
    / ``"windows-10"`` (in-box only from that version on, later than ``windows``),
    ``"redistributable"`` (an MSVC runtime DLL that is *not* on a clean Windows: the wheel must
    ship it; the 140 family's and the older ones', ``msvcr120.dll``, ``msvcr100.dll``), ``"debug-runtime"`` (its debug build: on no user's machine), or None (unknown). Names compare case-insensitively, as Windows does."""
    data = load("windows")
    low = name.lower()
    if low.startswith(tuple(data["api_set_prefixes"])):
        return "api-set"
    if low in data["python_runtime"].get(machine, ()) or re.fullmatch(data["python_dll_pattern"], low):
        return "python"
    if low in data["universal_crt"]:
        return "ucrt"
    if low in windows_system_dlls(machine):
        return "system"
    for version in WINDOWS_VERSIONS[1:]:
        if low in data[f"since_windows_{version.replace('.', '_')}"]:
            older = WINDOWS_VERSIONS.index(windows) < WINDOWS_VERSIONS.index(version)
            return f"windows-{version}" if older else "system"
    if low in data["msvc_redistributable"]:
        return "redistributable"
    if low in data.get("debug_runtime", ()):
        return "debug-runtime"
    if (re.fullmatch(data["delvewheel_vc_redist_pattern"], low) and low not in _clean_windows_crts(machine)
            and not any(low in names for names in data["python_runtime"].values())):
        # an older Visual C++ runtime (msvcr120.dll, msvcp100.dll, vcomp90.dll): no more on a clean
        # Windows than msvcp140.dll is
        return "redistributable"
    return None


def _clean_windows_crts(machine: str) -> frozenset[str]:
    """The old CRTs that Windows itself carries though delvewheel's pattern names them (msvcrt.dll)."""
    return frozenset(load("windows").get("redistributable_on_clean_windows", {}).get(machine, ()))


# --------------------------------------------------------------------------------------------
# CPython's Stable ABI (WA601)


def stable_abi_entry(name: str) -> dict[str, Any] | None:
    """``{"kind": "function" | "data", "added": "3.x", "abi_only": bool[, "ifdef": macro]}``
    for a symbol of the Stable ABI (the linker's name: no Mach-O underscore); None otherwise."""
    return load("stable_abi")["symbols"].get(name)


def stable_abi_symbol(name: str) -> str | None:
    """The Python version (``"3.2"``) whose Stable ABI added ``name``; None when it is not in
    the Stable ABI."""
    entry = stable_abi_entry(name)
    return entry["added"] if entry is not None else None


# --------------------------------------------------------------------------------------------
# External libraries' exports (WA506)

_NUMERIC = re.compile(r"^\d+(?:\.\d+)*$")


@lru_cache(maxsize=1024)
def elf_external_exports(soname: str, policy: str, arch: str) -> frozenset[str] | None:
    """The symbols that system library ``soname`` (``libc.so.6``, ``libstdc++.so.6``, ...) of
    an ``arch`` machine (``x86_64``, ``aarch64``) exports to a binary of manylinux ``policy``
    (a policy name or alias): those whose version node the policy allows, less the policy's
    blacklist for that library.

    None when there is no data: an unknown library, policy or architecture, or a policy whose
    ceiling for one of the library's version prefixes is newer than the data's source (a
    release the data predates)."""
    entry = linux_policy(policy)
    data = load("elf_exports")
    lib = data["libraries"].get(arch, {}).get(soname)
    if entry is None or lib is None or not entry["name"].startswith("manylinux_"):
        return None  # the data is glibc's: musllinux and android binaries bind elsewhere
    if arch not in entry.get("symbol_versions", {}):
        return None
    allowed = entry["symbol_versions"][arch]
    covers = data["covers"].get(arch, {})
    out: set[str] = set()
    for node, names in lib["versions"].items():
        if node:
            split = _split_node(node)
            if split is None:
                continue
            prefix, rest = split
            listed = [v for v in allowed.get(prefix, ()) if _NUMERIC.match(v)]
            have = covers.get(prefix)
            if listed and (have is None or max(map(Version, listed)) > Version(have)):
                return None  # the policy allows versions this data has never seen
            if rest not in allowed.get(prefix, ()):
                continue
        out.update(names)
    out.difference_update(entry.get("blacklist", {}).get(soname, ()))
    return frozenset(out)
