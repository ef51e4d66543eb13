"""The one platform-tag model: what each platform tag promises, and the manylinux / musllinux /
android policies. Whether a wheel's binaries keep those promises (WA503, WA504) is judged in
:mod:`wheelaudit.checks.platform`.

:func:`parse_platform` is the only place that reads a platform tag (the tag strings themselves
come from :mod:`packaging.tags` / :mod:`packaging.utils`); conditions (``os`` / ``arch``),
linkage (the system-library allowlist) and ``--together`` ask it. The tags PyPI accepts and
what each promises:

* ``manylinux_X_Y_<arch>`` (and ``manylinux1`` = 2_5, ``manylinux2010`` = 2_12,
  ``manylinux2014`` = 2_17), ``musllinux_X_Y_<arch>``, ``linux_<arch>``: an ELF of that machine.
  ``armv7l`` / ``armv6l`` are hard-float ARM (armhf: float arguments in VFP registers; the
  hard-float loader refuses a soft-float object), ``armv5l`` soft-float ARM (armel), and an
  older ARM CPU architecture runs on a newer one, not the reverse; ``mips64`` covers either byte
  order (``uname -m`` says ``mips64`` on mips64el too); ``ppc64`` is big-endian, ``ppc64le``
  little-endian.
* ``macosx_X_Y_<arch>``: Mach-O for macOS, every slice the multi-arch names list
  (``universal2`` = arm64 and x86_64, ...).
* ``ios_X_Y_<arch>_<sdk>`` (PEP 730): Mach-O for iOS (``iphoneos``: LC_BUILD_VERSION platform
  IOS) or its simulator (``iphonesimulator``: IOSSIMULATOR); a macOS slice is WA503.
* ``android_<api>_<abi>`` (PEP 738): ELF for ``arm64_v8a`` (aarch64), ``x86_64``,
  ``armeabi_v7a`` (32-bit ARM, soft-float calling convention), ``x86`` (i686).
* ``win32``, ``win_amd64``, ``win_arm64``, ``win_arm32``, ``win_ia64``: a PE of that machine.
* ``any``: no native binary at all.

Nothing here opens a file: the facts come from :mod:`wheelaudit.scanner`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache, cache
from typing import TYPE_CHECKING, Any

from wheelaudit.platforms import policydata
from wheelaudit.model.binary import Slice

if TYPE_CHECKING:
    from packaging.tags import Tag

__all__ = [
    "PlatformTag",
    "parse_platform",
    "wheel_platforms",
    "platform_strings",
    "highest_needs",
    "manylinux_policy",
    "musllinux_policy",
    "android_policy",
    "policy_data",
    "version_tuple",
    "describe_arch",
    "install_keys",
    "describe_install_keys",
]

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

# Windows tags -> (the PE reader's machine name, the spellings a rule's `arch` condition matches)
_WINDOWS = {
    "win32": ("x86", ("x86", "i386")),
    "win_amd64": ("x86_64", ("x86_64", "amd64")),
    "win_arm64": ("arm64", ("arm64",)),
    "win_arm32": ("armv7", ("arm",)),
    "win_ia64": ("ia64", ("ia64",)),
}

# ARM CPU architectures, oldest first (the ELF reader's names from Tag_CPU_arch): a slice runs
# where the tag's CPU is at least as new.
ARM_ORDER = ("armv4l", "armv4tl", "armv5l", "armv6l", "armv7l", "armv8l")
_ARM_ALIAS = {"armv5tel": "armv5l"}  # (Debian armel's uname -m)
# ARM tags: the float ABI the tag's systems use (Debian armel / Raspberry Pi OS and armhf)
ARM_FLOAT = {"armv5l": "soft", "armv5tel": "soft", "armv6l": "hard", "armv7l": "hard", "armv8l": "hard"}

# Linux tag architecture -> the ELF reader's arch names that satisfy it (ARM: see ARM_ORDER).
_LINUX_ARCH = {
    "x86_64": ("x86_64",),
    "i686": ("i686",),
    "i386": ("i686",),
    "aarch64": ("aarch64",),
    "arm64": ("aarch64",),
    "ppc64le": ("ppc64le",),
    "ppc64": ("ppc64",),
    "ppc": ("ppc",),
    "s390x": ("s390x",),
    "riscv64": ("riscv64",),
    "loongarch64": ("loongarch64",),
    "mips64": ("mips64", "mips64el"),
    "mips64el": ("mips64el",),
    "mips": ("mips", "mipsel"),
    "mipsel": ("mipsel",),
}

# Android ABIs (PEP 738) -> (ELF arch, float ABI: armeabi-v7a passes floats in core registers)
_ANDROID = {"arm64_v8a": ("aarch64", None), "x86_64": ("x86_64", None), "armeabi_v7a": ("armv7l", "soft"),
            "x86": ("i686", None)}
# iOS SDKs (PEP 730) -> the Mach-O platform (LC_BUILD_VERSION) the reader names
_IOS_SDK = {"iphoneos": "ios", "iphonesimulator": "ios-simulator"}

FORMAT_NAME = {"elf": "an ELF", "macho": "a Mach-O", "pe": "a PE (Windows)"}
OS_FORMAT = {"linux": "elf", "android": "elf", "macos": "macho", "ios": "macho", "windows": "pe"}
PLATFORM_WORDS = {"macos": "macOS", "ios": "iOS", "ios-simulator": "the iOS simulator", "maccatalyst": "Mac Catalyst",
                   "tvos": "tvOS", "watchos": "watchOS", "visionos": "visionOS"}
PLATFORM_CONSTANT = {"macos": "MACOS", "ios": "IOS", "ios-simulator": "IOSSIMULATOR", "maccatalyst": "MACCATALYST",
                      "tvos": "TVOS", "watchos": "WATCHOS"}


def install_keys(platforms: Iterable[str]) -> set[tuple[str, str]] | None:
    """The (system, architecture) pairs a wheel with these platform tags installs on (musllinux
    apart from the other Linuxes; a compressed ``a.b`` tag set read as its parts); None when one of
    them is pure or unknown: the wheel installs anywhere."""
    keys: set[tuple[str, str]] = set()
    for plat in platforms:
        for one in plat.split("."):
            pt = parse_platform(one)
            if pt.os in (None, "any"):
                return None
            system = "musllinux" if pt.family == "musllinux" else pt.os
            keys.update((system, a) for a in pt.archs)
    return keys or None


def describe_install_keys(keys: Iterable[tuple[str, str]]) -> str:
    """``linux x86_64, macos arm64``: :func:`install_keys` in words."""
    return ", ".join(f"{s} {a}" for s, a in sorted(keys))


def describe_arch(arch: str, float_abi: str | None = None) -> str:
    """A slice's machine in words for messages: ``"32-bit ARM soft-float (armv7l, armel)"``."""
    if arch.startswith("armv") and arch.endswith("l"):
        if float_abi == "hard":
            return f"32-bit ARM hard-float ({arch}, armhf)"
        if float_abi == "soft":
            return f"32-bit ARM soft-float ({arch}, armel)"
        return f"32-bit ARM ({arch})"
    words = {"mips64el": "64-bit MIPS little-endian (mips64el)", "mips64": "64-bit MIPS big-endian (mips64)",
             "ppc64": "64-bit PowerPC big-endian (ppc64)", "ppc64le": "64-bit PowerPC little-endian (ppc64le)",
             "s390x": "IBM Z (s390x)", "riscv64": "64-bit RISC-V (riscv64)", "loongarch64": "64-bit LoongArch (loongarch64)"}
    return words.get(arch, arch)


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


def version_str(v: tuple[int, ...]) -> str:
    return ".".join(str(x) for x in v)


def os_version(text: str) -> tuple[int, int]:
    """macOS 10.x / iOS compare as (major, minor); patch levels do not count."""
    t = version_tuple(text) + (0, 0)
    return (t[0], t[1])


_NUMERIC_TAIL = re.compile(r"^(.*)_(\d+(?:\.\d+)*)$")


def split_version(name: str) -> tuple[str, str] | None:
    """``"GLIBCXX_3.4.30"`` -> ``("GLIBCXX", "3.4.30")``; ``"GLIBC_PRIVATE"`` -> None."""
    m = _NUMERIC_TAIL.match(name)
    return (m.group(1), m.group(2)) if m else None


def highest_needs(slice: Slice) -> dict[str, str]:
    """The highest version a slice needs, per kind: for ELF per symbol-version prefix
    (``{"GLIBC": "2.34", "GLIBCXX": "3.4.30", "CXXABI": "1.3.13"}``), for Mach-O the minimum
    OS (``{"macOS": "11.0"}``, ``{"iOS": "13.0"}``). Empty when the slice needs nothing versioned."""
    best: dict[str, str] = {}
    for name in slice.needs_versions:
        split = split_version(name)
        if split is None:
            continue
        prefix, ver = split
        if prefix not in best or version_tuple(ver) > version_tuple(best[prefix]):
            best[prefix] = ver
    if slice.min_os:
        best["iOS" if slice.platform in ("ios", "ios-simulator") else "macOS"] = slice.min_os
    return dict(sorted(best.items()))


# --------------------------------------------------------------------------------------------
# Policy data (platforms/data/*.json, regenerated from auditwheel; read by wheelaudit.platforms.policydata)


def policy_data() -> tuple[dict[str, Any], dict[str, Any]]:
    """The parsed ``platforms/data/manylinux.json`` and ``policies/musllinux.json``."""
    return policydata.load("manylinux"), policydata.load("musllinux")


@dataclass(frozen=True)
class Policy:
    """One manylinux / musllinux / android policy, as ``platforms/data/*.json`` keeps it."""

    name: str  # "manylinux_2_28"
    glibc: tuple[int, ...]  # (2, 28); musl version for musllinux, API level for android
    libs: tuple[str, ...]  # system-library allowlist (file names)
    ceilings: dict[str, dict[str, str]]  # arch -> prefix -> highest version
    symbol_versions: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # auditwheel's lists

    def ceiling(self, arch: str, prefix: str) -> str | None:
        return self.ceilings.get(arch, {}).get(prefix)


@cache
def family_policies(family: str) -> tuple[Policy, ...]:
    doc = policydata.load(family)
    sets = doc.get("lib_sets", {})
    out = []
    for e in doc[family]:
        libs = e["lib_whitelist"]
        libs = sets[libs] if isinstance(libs, str) else libs
        ver = tuple(int(x) for x in e["name"].split("_")[1:3])
        out.append(Policy(e["name"], ver, tuple(libs), e.get("ceilings", {}), e.get("symbol_versions", {})))
    return tuple(sorted(out, key=lambda p: p.glibc))


def _nearest(family: str, version: tuple[int, ...]) -> Policy:
    """The policy for a tag of this version: the exact one, else the nearest older one (a tag
    between two policies promises at least the older one), else the oldest."""
    pols = family_policies(family)
    below = [p for p in pols if p.glibc <= version]
    return below[-1] if below else pols[0]


def manylinux_policy(version: tuple[int, ...]) -> Policy:
    """The manylinux policy that applies to a ``manylinux_X_Y`` tag with ``version = (X, Y)``."""
    return _nearest("manylinux", version)


def musllinux_policy(version: tuple[int, ...]) -> Policy:
    return _nearest("musllinux", version)


def android_policy(api_level: int) -> Policy:
    """The android policy for an ``android_<api>_*`` tag: the nearest at or below its API level."""
    return _nearest("android", (api_level,))


def loader_globs(family: str) -> list[str]:
    return list(policydata.load(family).get("loader", []))


def latest_manylinux_policy() -> Policy:
    return family_policies("manylinux")[-1]


# --------------------------------------------------------------------------------------------
# Tags


@dataclass(frozen=True)
class PlatformTag:
    """What one platform tag promises.

    ``os`` is "linux", "macos", "ios", "android", "windows", "any" or None (a tag wheelaudit
    does not know); ``family`` is "manylinux", "musllinux", "linux", "macosx", "ios", "android",
    "windows", "any" or "unknown"; ``version`` the glibc / musl / macOS / iOS version or the
    Android API level of the tag, ``()`` when it has none; ``archs`` the architectures every
    binary must carry (each must be present), as the readers name them; ``arch_label`` the
    tag's own spelling (universal2, x86_64, arm64_v8a, ...); ``float_abi`` the ARM float ABI
    its systems use ("hard" / "soft"), ``platform`` the Mach-O platform (iOS tags).
    """

    tag: str
    os: str | None
    family: str
    version: tuple[int, ...]
    archs: tuple[str, ...]
    arch_label: str
    float_abi: str | None = None
    platform: str | None = None

    @property
    def arch_names(self) -> tuple[str, ...]:
        """The spellings a rule's ``arch`` condition matches: the tag's own (``aarch64`` on
        Linux, ``arm64`` on macOS and Windows, ``amd64`` and ``x86_64`` for ``win_amd64``),
        each architecture of a multi-arch macOS tag, an Android ABI and its machine."""
        if self.family == "windows":
            return _WINDOWS[self.tag][1]
        if self.family in ("macosx", "ios"):
            return self.archs
        if self.family == "android":
            return (self.arch_label, self.archs[0]) if self.archs else (self.arch_label,)
        return (self.arch_label,) if self.arch_label else ()

    def accepts(self, arch: str, float_abi: str | None = None) -> bool:
        """Whether a slice of this architecture (and ARM float ABI, None: unknown) serves this tag."""
        if self.family in ("manylinux", "musllinux", "linux", "android"):
            want = self.archs[0] if self.family == "android" and self.archs else self.arch_label
            if want in ARM_FLOAT or (self.family == "android" and want == "armv7l"):
                if arch not in ARM_ORDER or ARM_ORDER.index(arch) > ARM_ORDER.index(_ARM_ALIAS.get(want, want)):
                    return False
                tag_abi = self.float_abi or ARM_FLOAT.get(want)
                return float_abi is None or tag_abi is None or float_abi == tag_abi
            return arch in _LINUX_ARCH.get(want, (want,))
        if self.family == "macosx" or self.family == "ios":
            return arch in self.archs or (arch == "arm64e" and "arm64" in self.archs)
        return arch in self.archs


_UNKNOWN = ("unknown", (), (), "")


def parse_platform(tag: str) -> PlatformTag:
    """The promise of one platform tag (``manylinux_2_28_x86_64``, ``macosx_10_9_universal2``,
    ``ios_13_0_arm64_iphoneos``, ``android_21_arm64_v8a``, ``win_amd64``, ``any``): the grammar
    of PEP 425 / 600 / 656 / 730 / 738. A tag of none of these forms makes no promise (os None)."""
    return _parse_platform(tag)


@lru_cache(maxsize=256)
def _parse_platform(tag: str) -> PlatformTag:
    if tag == "any":
        return PlatformTag(tag, "any", "any", (), (), "any")
    m = re.fullmatch(r"(manylinux|musllinux)_(\d+)_(\d+)_(.+)", tag)
    if m:
        return _linux(tag, m.group(1), (int(m.group(2)), int(m.group(3))), m.group(4))
    m = re.fullmatch(r"(manylinux1|manylinux2010|manylinux2014)_(.+)", tag)
    if m:
        return _linux(tag, "manylinux", _LEGACY_MANYLINUX[m.group(1)], m.group(2))
    m = re.fullmatch(r"linux_(.+)", tag)
    if m:
        return _linux(tag, "linux", (), m.group(1))
    m = re.fullmatch(r"macosx_(\d+)_(\d+)_(.+)", tag)
    if m:
        arch = m.group(3)
        return PlatformTag(tag, "macos", "macosx", (int(m.group(1)), int(m.group(2))),
                           _MAC_MULTI.get(arch, (arch,)), arch, platform="macos")
    m = re.fullmatch(r"ios_(\d+)_(\d+)_(arm64|x86_64)_(iphoneos|iphonesimulator)", tag)
    if m:
        return PlatformTag(tag, "ios", "ios", (int(m.group(1)), int(m.group(2))), (m.group(3),),
                           f"{m.group(3)}_{m.group(4)}", platform=_IOS_SDK[m.group(4)])
    m = re.fullmatch(r"android_(\d+)_(arm64_v8a|x86_64|armeabi_v7a|x86)", tag)
    if m:
        arch, fabi = _ANDROID[m.group(2)]
        return PlatformTag(tag, "android", "android", (int(m.group(1)),), (arch,), m.group(2), float_abi=fabi)
    if tag in _WINDOWS:
        return PlatformTag(tag, "windows", "windows", (), (_WINDOWS[tag][0],), tag)
    return PlatformTag(tag, None, *_UNKNOWN)


def _linux(tag: str, family: str, version: tuple[int, ...], arch: str) -> PlatformTag:
    accepted = _LINUX_ARCH.get(arch, (arch,))
    return PlatformTag(tag, "linux", family, version, accepted[:1], arch, float_abi=ARM_FLOAT.get(arch))


def platform_strings(tags: Iterable[Tag]) -> list[str]:
    """The platform parts of a wheel's tags (:attr:`wheelaudit.model.wheel.Wheel.tags`), sorted
    and distinct."""
    return sorted({t.platform for t in tags})


def wheel_platforms(wheel) -> list[PlatformTag]:
    """The platform tags of a wheel (a :class:`wheelaudit.scanner.Wheel`, a ``--together`` tree
    with its own ``platform_tags``, or any object with ``tags``), parsed."""
    plats = getattr(wheel, "platform_tags", None)
    if plats is None:
        plats = platform_strings(wheel.tags)
    return [parse_platform(p) for p in plats]


_wheel_platforms = wheel_platforms
