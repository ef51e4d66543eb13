"""Platform tag agreement: WA503 (architectures) and WA504 (glibc symbol versions, macOS minos).

Every native binary of a wheel must run wherever the wheel's platform tags say it installs:

* WA503 — each platform tag against each binary's format and architectures, every slice:
  ``universal2`` needs arm64 *and* x86_64 in every Mach-O, ``intel`` x86_64 and i386,
  ``macosx_*_arm64`` arm64, ``manylinux_*_x86_64`` an x86_64 ELF, ``win_amd64`` an x86_64 PE, ...;
  a Mach-O in a Linux-tagged wheel, an ELF in a macOS-tagged one, or any native binary in a
  ``none-any`` wheel is WA503 as well.
* WA504 — ELF: the highest ``GLIBC_x.y`` symbol version a binary needs must not be newer than
  the glibc of its ``manylinux_X_Y`` tag (``manylinux1`` = 2_5, ``manylinux2010`` = 2_12,
  ``manylinux2014`` = 2_17), and ``GLIBCXX_`` / ``CXXABI_`` must not pass the ceilings of
  the tag's manylinux policy (``policies/manylinux.json``, summarised from auditwheel). A wheel
  with several manylinux tags claims all of them, so the check is against the lowest.
  Mach-O: each slice's minimum macOS (LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX) must not be
  newer than the ``macosx_X_Y`` tag, except that an arm64 slice can never target below macOS
  11.0, so its floor is 11.0 (``macosx_10_9_universal2`` is right for a universal binary whose
  arm64 slice says 11.0, but not 12.0).

Nothing here opens a file: the facts come from :mod:`wheelaudit.scan`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .facts import Binary, Slice
from .findings import Finding

__all__ = [
    "PlatformTag",
    "parse_platform",
    "check_platform",
    "highest_needs",
    "manylinux_policy",
    "musllinux_policy",
    "policy_data",
    "version_tuple",
]

RULE = "linkage"

#: symbol-version prefixes WA504 checks against the manylinux policy's ceilings
CHECKED_PREFIXES = ("GLIBC", "GLIBCXX", "CXXABI")

#: the oldest macOS an arm64 (or arm64e) slice can target
ARM64_MACOS_FLOOR = (11, 0)

_LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}

# macOS tag architectures: every Mach-O must carry every one of them.
_MAC_MULTI = {
    "universal2": ("arm64", "x86_64"),
    "intel": ("i386", "x86_64"),
    "universal": ("i386", "ppc", "ppc64", "x86_64"),
    "fat": ("i386", "ppc"),
    "fat3": ("i386", "ppc", "x86_64"),
    "fat32": ("i386", "ppc"),
    "fat64": ("ppc64", "x86_64"),
}

# Windows tags -> PE machine names as readers/pe.py spells them.
_WINDOWS = {"win32": "x86", "win_amd64": "x86_64", "win_arm64": "arm64", "win_arm32": "armv7"}

# Linux tag architecture -> the ELF reader's arch names that satisfy it.
_LINUX_ARCH = {
    "x86_64": ("x86_64",),
    "i686": ("i686",),
    "i386": ("i686",),
    "aarch64": ("aarch64",),
    "armv7l": ("armv7l",),
    "armv6l": ("armv7l",),  # EM_ARM: the ELF header does not tell v6 from v7
    "ppc64le": ("ppc64le",),
    "ppc64": ("ppc64",),
    "s390x": ("s390x",),
    "riscv64": ("riscv64",),
    "loongarch64": ("loongarch64",),
}

_FORMAT_NAME = {"elf": "an ELF", "macho": "a Mach-O", "pe": "a PE (Windows)"}
_OS_FORMAT = {"linux": "elf", "macos": "macho", "windows": "pe"}


# --------------------------------------------------------------------------------------------
# Versions


@lru_cache(maxsize=1024)
def version_tuple(text: str) -> tuple[int, ...]:
    """``"2.2.5"`` -> ``(2, 2, 5)``; non-numeric parts end the tuple."""
    out = []
    for part in text.split("."):
        if not part.isdigit():
            break
        out.append(int(part))
    return tuple(out)


def _vstr(v: tuple[int, ...]) -> str:
    return ".".join(str(x) for x in v)


def _macos_version(text: str) -> tuple[int, int]:
    """macOS 10.x compares as (10, x), 11+ as (major, minor); patch levels do not count."""
    t = version_tuple(text) + (0, 0)
    return (t[0], t[1])


_NUMERIC_TAIL = re.compile(r"^(.*)_(\d+(?:\.\d+)*)$")


def _split_version(name: str) -> tuple[str, str] | None:
    """``"GLIBCXX_3.4.30"`` -> ``("GLIBCXX", "3.4.30")``; ``"GLIBC_PRIVATE"`` -> None."""
    m = _NUMERIC_TAIL.match(name)
    return (m.group(1), m.group(2)) if m else None


def highest_needs(slice: Slice) -> dict[str, str]:
    """The highest version a slice needs, per kind: for ELF per symbol-version prefix
    (``{"GLIBC": "2.34", "GLIBCXX": "3.4.30", "CXXABI": "1.3.13"}``), for Mach-O the minimum
    macOS (``{"macOS": "11.0"}``). Empty when the slice needs nothing versioned."""
    best: dict[str, str] = {}
    for name in slice.needs_versions:
        split = _split_version(name)
        if split is None:
            continue
        prefix, ver = split
        if prefix not in best or version_tuple(ver) > version_tuple(best[prefix]):
            best[prefix] = ver
    if slice.min_os:
        best["macOS"] = slice.min_os
    return dict(sorted(best.items()))


# --------------------------------------------------------------------------------------------
# Policy data (policies/*.json, summarised from auditwheel)


def _policy_file(name: str) -> dict[str, Any]:
    try:
        from importlib.resources import files

        text = files("wheelaudit").joinpath("policies").joinpath(name).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, OSError, TypeError):
        text = (Path(__file__).resolve().parent / "policies" / name).read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def policy_data() -> tuple[dict[str, Any], dict[str, Any]]:
    """The parsed ``policies/manylinux.json`` and ``policies/musllinux.json``."""
    return _policy_file("manylinux.json"), _policy_file("musllinux.json")


@dataclass(frozen=True)
class Policy:
    """One manylinux / musllinux policy, as summarised in ``policies/*.json``."""

    name: str  # "manylinux_2_28"
    glibc: tuple[int, ...]  # (2, 28); musl version for musllinux
    libs: tuple[str, ...]  # system-library allowlist (file names)
    ceilings: dict[str, dict[str, str]]  # arch -> prefix -> highest version

    def ceiling(self, arch: str, prefix: str) -> str | None:
        return self.ceilings.get(arch, {}).get(prefix)


@lru_cache(maxsize=None)
def _policies(family: str) -> tuple[Policy, ...]:
    many, musl = policy_data()
    if family == "manylinux":
        sets = many["lib_sets"]
        entries = many["manylinux"]
    else:
        sets = {}
        entries = musl["musllinux"]
    out = []
    for e in entries:
        libs = e["lib_whitelist"]
        libs = sets[libs] if isinstance(libs, str) else libs
        ver = tuple(int(x) for x in e["name"].split("_")[1:3])
        out.append(Policy(e["name"], ver, tuple(libs), e.get("ceilings", {})))
    return tuple(sorted(out, key=lambda p: p.glibc))


def _nearest(family: str, version: tuple[int, ...]) -> Policy:
    """The policy for a tag of this version: the exact one, else the nearest older one (a tag
    between two policies promises at least the older one), else the oldest."""
    pols = _policies(family)
    below = [p for p in pols if p.glibc <= version]
    return below[-1] if below else pols[0]


def manylinux_policy(version: tuple[int, ...]) -> Policy:
    """The manylinux policy that applies to a ``manylinux_X_Y`` tag with ``version = (X, Y)``."""
    return _nearest("manylinux", version)


def musllinux_policy(version: tuple[int, ...]) -> Policy:
    return _nearest("musllinux", version)


def loader_globs(family: str) -> list[str]:
    many, musl = policy_data()
    return list((many if family == "manylinux" else musl).get("loader", []))


def latest_manylinux_policy() -> Policy:
    return _policies("manylinux")[-1]


# --------------------------------------------------------------------------------------------
# Tags


@dataclass(frozen=True)
class PlatformTag:
    """What one platform tag promises.

    ``os`` is "linux", "macos", "windows", "any" or None (a tag wheelaudit does not know);
    ``family`` is "manylinux", "musllinux", "linux", "macosx", "windows" or "any";
    ``version`` the glibc / musl / macOS version of the tag, ``()`` when it has none;
    ``archs`` the architectures every binary must carry (each must be present).
    """

    tag: str
    os: str | None
    family: str
    version: tuple[int, ...]
    archs: tuple[str, ...]
    arch_label: str  # the tag's own spelling (universal2, x86_64, ...)

    def accepts(self, arch: str) -> bool:
        """Whether a slice of this architecture serves this tag."""
        if self.family in ("manylinux", "musllinux", "linux"):
            return arch in _LINUX_ARCH.get(self.arch_label, (self.arch_label,))
        return arch in self.archs


def parse_platform(tag: str) -> PlatformTag:
    """Parse a platform tag (``manylinux_2_28_x86_64``, ``macosx_10_9_universal2``, ``any``)."""
    if tag == "any":
        return PlatformTag(tag, "any", "any", (), (), "any")
    m = re.fullmatch(r"(manylinux|musllinux)_(\d+)_(\d+)_(.+)", tag)
    if m:
        arch = m.group(4)
        return PlatformTag(tag, "linux", m.group(1), (int(m.group(2)), int(m.group(3))),
                           _LINUX_ARCH.get(arch, (arch,))[:1], arch)
    m = re.fullmatch(r"(manylinux1|manylinux2010|manylinux2014)_(.+)", tag)
    if m:
        arch = m.group(2)
        return PlatformTag(tag, "linux", "manylinux", _LEGACY_MANYLINUX[m.group(1)],
                           _LINUX_ARCH.get(arch, (arch,))[:1], arch)
    m = re.fullmatch(r"linux_(.+)", tag)
    if m:
        arch = m.group(1)
        return PlatformTag(tag, "linux", "linux", (), _LINUX_ARCH.get(arch, (arch,))[:1], arch)
    m = re.fullmatch(r"macosx_(\d+)_(\d+)_(.+)", tag)
    if m:
        arch = m.group(3)
        return PlatformTag(tag, "macos", "macosx", (int(m.group(1)), int(m.group(2))),
                           _MAC_MULTI.get(arch, (arch,)), arch)
    if tag in _WINDOWS:
        return PlatformTag(tag, "windows", "windows", (), (_WINDOWS[tag],), tag)
    return PlatformTag(tag, None, "unknown", (), (), "")


def _wheel_platforms(wheel) -> list[PlatformTag]:
    plats = getattr(wheel, "platform_tags", None)
    if plats is None:  # a Wheel-like object without the property
        plats = sorted({t.split("-")[-1] for t in wheel.tags})
    return [parse_platform(p) for p in plats]


# --------------------------------------------------------------------------------------------
# WA503


def _arch_problem(b: Binary, pt: PlatformTag) -> str | None:
    """Why ``b`` does not serve tag ``pt``, with ``{tags}`` where the tag(s) go; None when it does."""
    if pt.os is None:
        return None  # a tag we do not know (ios_*, android_*, ...): no promise we can check
    if pt.os == "any":
        return (f"is {_FORMAT_NAME[b.format]} binary in a pure wheel (platform tag {{tags}}): the wheel installs"
                " on every platform, the binary runs on one")
    want = _OS_FORMAT[pt.os]
    if b.format != want:
        return f"is {_FORMAT_NAME[b.format]} binary, but {{tags}} needs {_FORMAT_NAME[want]} binary"
    have = [s.arch for s in b.slices]
    if b.format == "macho":
        missing = [a for a in pt.archs if a not in have]
        if missing:
            need = " and ".join(pt.archs)
            return (f"has {'/'.join(have) or 'no'} slice{'s' if len(have) != 1 else ''} only; {{tags}} needs {need}"
                    f" in every Mach-O binary (missing {', '.join(missing)})")
        return None
    if not any(pt.accepts(a) for a in have):
        return f"is {'/'.join(have) or 'of unknown architecture'}; {{tags}} needs {pt.arch_label}"
    return None


def check_archs(wheel) -> list[Finding]:
    """WA503 for every ok binary of ``wheel`` against every platform tag."""
    out: list[Finding] = []
    plats = _wheel_platforms(wheel)
    for b in wheel.libraries:
        if not b.ok or not b.slices:
            continue
        problems: dict[str, list[str]] = {}
        for pt in plats:
            why = _arch_problem(b, pt)
            if why is not None:
                problems.setdefault(why, []).append(pt.tag)
        for why, tags in problems.items():
            out.append(Finding("WA503", f"{b.path} " + why.replace("{tags}", " / ".join(tags)),
                               subject=b.path, paths=[b.path], rule=RULE))
    return out


# --------------------------------------------------------------------------------------------
# WA504


def _ships_libstdcxx(wheel) -> bool:
    """A wheel that ships its own libstdc++ provides its own GLIBCXX_ / CXXABI_ versions."""
    for b in wheel.libraries:
        if b.format == "elf" and (b.name.startswith("libstdc++.so") or (b.identity or "").startswith("libstdc++.so")):
            return True
    return False


def _check_glibc(wheel, b: Binary, plats: list[PlatformTag], own_cxx: bool) -> list[Finding]:
    out: list[Finding] = []
    for s in b.slices:
        tags = [p for p in plats if p.family == "manylinux" and p.accepts(s.arch)]
        if not tags:
            continue
        lowest = min(tags, key=lambda p: (p.version, p.tag))
        lowest_tags = sorted(p.tag for p in tags if p.version == lowest.version)
        tagdesc = " / ".join(lowest_tags)
        several = len({p.version for p in tags}) > 1
        policy = manylinux_policy(lowest.version)
        exact = policy.glibc == lowest.version
        needs = highest_needs(s)
        problems = []
        for prefix in CHECKED_PREFIXES:
            have = needs.get(prefix)
            if have is None:
                continue
            if prefix == "GLIBC":
                allowed = lowest.version
                pol = policy.ceiling(s.arch, "GLIBC") if exact else None
                if pol and version_tuple(pol) > allowed:
                    allowed = version_tuple(pol)  # e.g. manylinux2014 aarch64 allows GLIBC_2.18
                if version_tuple(have) > allowed:
                    problems.append((prefix, have, _vstr(allowed), "the tag's glibc"))
            else:
                if own_cxx:
                    continue
                ceiling = policy.ceiling(s.arch, prefix)
                if ceiling is None:
                    continue
                if version_tuple(have) > version_tuple(ceiling):
                    src = f"policy {policy.name}" + ("" if exact else f", the nearest at or below {lowest.tag}")
                    problems.append((prefix, have, ceiling, src))
        if not problems:
            continue
        where = f" ({s.arch} slice)" if b.universal else ""
        parts = [f"{p}_{have} (allowed: {p}_{allowed} and older, {src})" for p, have, allowed, src in problems]
        glibc_need = next((have for p, have, _a, _s in problems if p == "GLIBC"), None)
        hint = ""
        if glibc_need is not None:
            gv = version_tuple(glibc_need)
            hint = (f"; tag the wheel manylinux_{gv[0]}_{gv[1] if len(gv) > 1 else 0}_{lowest.arch_label}"
                    " or build against an older glibc (an older manylinux image)")
        else:
            hint = "; build with an older toolchain (the manylinux image's devtoolset) or retag for a newer policy"
        claim = f" (the lowest of its manylinux tags, which the wheel claims all of)" if several else ""
        out.append(Finding(
            "WA504",
            f"{b.path}{where} needs " + "; ".join(parts) + f", newer than its tag {tagdesc} allows{claim}{hint}",
            subject=b.path, paths=[b.path], symbols=[f"{p}_{have}" for p, have, _a, _s in problems], rule=RULE))
    return out


def _mac_tag(v: tuple[int, int], arch_label: str) -> str:
    """The installable tag for a binary that needs macOS ``v``: pip knows only ``X_0`` tags from
    macOS 11 on, so 12.3 rounds up to 13_0."""
    if v[0] >= 11:
        major = v[0] if v[1] == 0 else v[0] + 1
        return f"macosx_{major}_0_{arch_label}"
    return f"macosx_{v[0]}_{v[1]}_{arch_label}"


def _check_minos(b: Binary, plats: list[PlatformTag]) -> list[Finding]:
    mac = [p for p in plats if p.family == "macosx"]
    if not mac:
        return []
    bad: list[str] = []
    lowest_seen: PlatformTag | None = None
    needed: tuple[int, int] = (0, 0)
    for s in b.slices:
        if not s.min_os:
            continue
        tags = [p for p in mac if s.arch in p.archs or (s.arch == "arm64e" and "arm64" in p.archs)]
        if not tags:
            continue
        lowest = min(tags, key=lambda p: (p.version, p.tag))
        lowest_seen = lowest if lowest_seen is None or lowest.version < lowest_seen.version else lowest_seen
        have = _macos_version(s.min_os)
        allowed = (lowest.version[0], lowest.version[1])
        arm = s.arch in ("arm64", "arm64e")
        if arm and allowed < ARM64_MACOS_FLOOR:
            allowed = ARM64_MACOS_FLOOR
        if not arm or have > ARM64_MACOS_FLOOR:
            needed = max(needed, have)
        if have > allowed:
            floor = " (an arm64 slice cannot target below 11.0)" if arm and allowed == ARM64_MACOS_FLOOR and lowest.version < ARM64_MACOS_FLOOR else ""
            bad.append(f"{s.arch} slice needs macOS {s.min_os} (minos) but {lowest.tag} allows {_vstr(allowed)}{floor}")
    if not bad:
        return []
    assert lowest_seen is not None
    target = f"{lowest_seen.version[0]}.{lowest_seen.version[1]}"
    arm_only = all(s.arch in ("arm64", "arm64e") for s in b.slices)
    if arm_only and lowest_seen.version < ARM64_MACOS_FLOOR:
        target = "11.0"
    tag = _mac_tag(needed, lowest_seen.arch_label)
    return [Finding(
        "WA504",
        f"{b.path}: " + "; ".join(bad) + f". Rebuild with MACOSX_DEPLOYMENT_TARGET={target}, or tag the wheel {tag}"
        " (the lowest tag every slice passes)",
        subject=b.path, paths=[b.path], rule=RULE)]


def check_versions(wheel) -> list[Finding]:
    """WA504 for every ok binary of ``wheel``."""
    out: list[Finding] = []
    plats = _wheel_platforms(wheel)
    own_cxx = _ships_libstdcxx(wheel)
    for b in wheel.libraries:
        if not b.ok:
            continue
        if b.format == "elf":
            out += _check_glibc(wheel, b, plats, own_cxx)
        elif b.format == "macho":
            out += _check_minos(b, plats)
    return out


def check_platform(wheel) -> list[Finding]:
    """WA503 and WA504 for ``wheel`` (a :class:`wheelaudit.scan.Wheel`)."""
    return check_archs(wheel) + check_versions(wheel)
