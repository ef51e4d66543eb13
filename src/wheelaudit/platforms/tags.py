"""The one platform-tag model, and platform tag agreement: WA503 (architectures) and WA504
(symbol versions, minimum OS versions).

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

WA504 — ELF: each symbol version node a binary needs (``.gnu.version_r``) against the policy of
its lowest ``manylinux`` tag, for every versioned library the policy lists (auditwheel's
per-architecture ``symbol_versions``: GLIBC, GLIBCXX, CXXABI, GCC, ZLIB, LIBATOMIC, ...), each
node named with the imported symbols that need it. ``GLIBC_x.y`` numbers are compared with the
tag's glibc; the other nodes must be in the policy's list, as auditwheel has it. Error where the
loader refuses to load ("version `GLIBC_2.28' not found"): a node missing from a library the
policy lists with version nodes. Warning where the policy lists the library without any
version node (its reference system's library is unversioned: glibc loads the binary, says "no
version information available" and binds by name). A library the policy does not list is not
checkable here. A node that a library shipped in the wheel defines is the wheel's own.
Mach-O: each slice's minimum OS (LC_BUILD_VERSION minos / LC_VERSION_MIN_*), named with its
load command, must not be newer than the ``macosx_X_Y`` / ``ios_X_Y`` tag; an arm64 macOS slice
can never target below macOS 11.0, so its floor is 11.0. Android tags carry an API level that
the ELF file does not record: nothing to compare.

Nothing here opens a file: the facts come from :mod:`wheelaudit.scanner`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from wheelaudit.platforms import policydata
from wheelaudit.model.binary import Binary, Slice
from wheelaudit.model.finding import Finding, examples

if TYPE_CHECKING:
    from packaging.tags import Tag

__all__ = [
    "PlatformTag",
    "parse_platform",
    "wheel_platforms",
    "platform_strings",
    "check_platform",
    "highest_needs",
    "manylinux_policy",
    "musllinux_policy",
    "android_policy",
    "policy_data",
    "version_tuple",
    "describe_arch",
]

RULE = "linkage"

#: symbol-version libraries (auditwheel's keys) whose too-new node the loader refuses outright
ERROR_PREFIXES = ("GLIBC", "GLIBCXX", "CXXABI", "GCC")

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
_ARM_ORDER = ("armv4l", "armv4tl", "armv5l", "armv6l", "armv7l", "armv8l")
_ARM_ALIAS = {"armv5tel": "armv5l"}  # (Debian armel's uname -m)
# ARM tags: the float ABI the tag's systems use (Debian armel / Raspberry Pi OS and armhf)
_ARM_FLOAT = {"armv5l": "soft", "armv5tel": "soft", "armv6l": "hard", "armv7l": "hard", "armv8l": "hard"}

# Linux tag architecture -> the ELF reader's arch names that satisfy it (ARM: see _ARM_ORDER).
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

_FORMAT_NAME = {"elf": "an ELF", "macho": "a Mach-O", "pe": "a PE (Windows)"}
_OS_FORMAT = {"linux": "elf", "android": "elf", "macos": "macho", "ios": "macho", "windows": "pe"}
_PLATFORM_WORDS = {"macos": "macOS", "ios": "iOS", "ios-simulator": "the iOS simulator", "maccatalyst": "Mac Catalyst",
                   "tvos": "tvOS", "watchos": "watchOS", "visionos": "visionOS"}
_PLATFORM_CONSTANT = {"macos": "MACOS", "ios": "IOS", "ios-simulator": "IOSSIMULATOR", "maccatalyst": "MACCATALYST",
                      "tvos": "TVOS", "watchos": "WATCHOS"}


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


def _vstr(v: tuple[int, ...]) -> str:
    return ".".join(str(x) for x in v)


def _os_version(text: str) -> tuple[int, int]:
    """macOS 10.x / iOS compare as (major, minor); patch levels do not count."""
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
    OS (``{"macOS": "11.0"}``, ``{"iOS": "13.0"}``). Empty when the slice needs nothing versioned."""
    best: dict[str, str] = {}
    for name in slice.needs_versions:
        split = _split_version(name)
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


@lru_cache(maxsize=None)
def _policies(family: str) -> tuple[Policy, ...]:
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
    pols = _policies(family)
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
    return _policies("manylinux")[-1]


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
            if want in _ARM_FLOAT or (self.family == "android" and want == "armv7l"):
                if arch not in _ARM_ORDER or _ARM_ORDER.index(arch) > _ARM_ORDER.index(_ARM_ALIAS.get(want, want)):
                    return False
                tag_abi = self.float_abi or _ARM_FLOAT.get(want)
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
    return PlatformTag(tag, "linux", family, version, accepted[:1], arch, float_abi=_ARM_FLOAT.get(arch))


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


# --------------------------------------------------------------------------------------------
# WA503


def _slice_words(s: Slice) -> str:
    return describe_arch(s.arch, s.float_abi)


def _tag_words(pt: PlatformTag) -> str:
    """What a tag needs, in words: ``32-bit ARM hard-float (armv7l, armhf)``."""
    if pt.family == "android":
        return describe_arch(pt.archs[0], pt.float_abi) if pt.archs else pt.arch_label
    if pt.os == "linux":
        if pt.arch_label in _ARM_FLOAT:
            return describe_arch(pt.arch_label, pt.float_abi)
        if pt.arch_label == "mips64":
            return "64-bit MIPS (mips64 or mips64el)"
        return describe_arch(pt.arch_label)
    return pt.arch_label


def _arch_problem(b: Binary, pt: PlatformTag) -> str | None:
    """Why ``b`` does not serve tag ``pt``, with ``{tags}`` where the tag(s) go; None when it does."""
    if pt.os is None:
        return None  # a tag we do not know: no promise we can check
    if b.format == "pe" and b.slices and all(s.managed for s in b.slices):
        return None  # an AnyCPU .NET assembly: the CLR runs it on any architecture and system
    if pt.os == "any":
        return (f"is {_FORMAT_NAME[b.format]} binary in a pure wheel (platform tag {{tags}}): the wheel installs"
                " on every platform, the binary runs on one")
    want = _OS_FORMAT[pt.os]
    if b.format != want:
        return f"is {_FORMAT_NAME[b.format]} binary, but {{tags}} needs {_FORMAT_NAME[want]} binary"
    have = [s.arch for s in b.slices]
    if b.format == "macho":
        wrong = [s for s in b.slices if s.platform is not None and s.platform != pt.platform
                 and pt.accepts(s.arch)]
        if wrong:
            s = wrong[0]
            return (f"has {'/'.join(x.arch for x in wrong)} slice{'s' if len(wrong) != 1 else ''} built for "
                    f"{_PLATFORM_WORDS.get(s.platform, s.platform)} ({s.min_os_command or 'LC_BUILD_VERSION'} "
                    f"platform {_PLATFORM_CONSTANT.get(s.platform, s.platform)}); {{tags}} needs "
                    f"{_PLATFORM_WORDS.get(pt.platform, pt.platform)} (platform "
                    f"{_PLATFORM_CONSTANT.get(pt.platform, pt.platform)}): the loader refuses an image built for "
                    "another platform")
        missing = [a for a in pt.archs if not any(pt.accepts(h) and (h == a or (h == "arm64e" and a == "arm64"))
                                                  for h in have)]
        if missing:
            need = " and ".join(pt.archs)
            return (f"has {'/'.join(have) or 'no'} slice{'s' if len(have) != 1 else ''} only; {{tags}} needs {need}"
                    f" in every Mach-O binary (missing {', '.join(missing)})")
        return None
    if not any(pt.accepts(s.arch, s.float_abi) for s in b.slices):
        what = " / ".join(_slice_words(s) for s in b.slices) or "of unknown architecture"
        reasons = []
        arm = [s for s in b.slices if s.arch in _ARM_ORDER]
        tag_abi = pt.float_abi or _ARM_FLOAT.get(pt.arch_label)
        if arm and tag_abi and any(s.float_abi and s.float_abi != tag_abi for s in arm):
            reasons.append(f"{'soft' if tag_abi == 'hard' else 'hard'}-float code does not run on a {tag_abi}-float"
                           " system (its loader refuses the object, or float arguments arrive in the wrong registers)")
        if arm and tag_abi and not any(pt.accepts(s.arch) for s in arm):
            reasons.append("its instructions need a newer ARM CPU than the tag's")
        why = (": " + ", and ".join(reasons)) if reasons else ""
        return f"is {what}; {{tags}} needs {_tag_words(pt)}{why}"
    return None


def check_archs(wheel, loaded: Collection[str] | None = None, never: Collection[str] = ()) -> list[Finding]:
    """WA503 for every ok binary of ``wheel`` against every platform tag. ``loaded``: the
    binaries the system's loader loads when the wheel is used (its extension modules, executables
    and what they link: :func:`wheelaudit.checks.extension.loaded_binaries`); the others, which only
    code that opens them by path loads (often choosing one file per platform), are warnings.
    None: every binary counts as loaded. ``never``: binaries no platform loader loads (launcher
    templates, :func:`wheelaudit.load.never_loaded`): no verdict."""
    out: list[Finding] = []
    plats = wheel_platforms(wheel)
    judged = [b for b in wheel.libraries if b.ok and b.slices and b.loadable and b.path not in never]
    problems_of: dict[str, dict[str, list[str]]] = {}
    served: set[str] = set()  # the tags some binary of the wheel serves
    for b in judged:
        problems: dict[str, list[str]] = {}
        for pt in plats:
            why = _arch_problem(b, pt)
            if why is not None:
                problems.setdefault(why, []).append(pt.tag)
            else:
                served.add(pt.tag)
        problems_of[b.path] = problems
    # a tag no binary of the wheel serves: whoever loads any of them fails, by path or not
    unserved = {pt.tag for pt in plats if pt.os not in (None, "any") and pt.tag not in served}
    for b in judged:
        if not problems_of[b.path]:
            continue  # (asked only of a binary with a problem: membership may read the sources)
        linked = loaded is None or b.path in loaded
        for why, tags in problems_of[b.path].items():
            nowhere = [t for t in tags if t in unserved]
            if linked:
                tail, severity = "", None
            elif nowhere:
                tail, severity = (f"; it is loaded by path only, but the wheel ships no binary at all for "
                                  f"{' / '.join(nowhere)}: whoever loads it fails"), None
            else:
                tail, severity = ("; it is no extension module and nothing in the wheel links it: only code "
                                  "that loads it by path (ctypes, cffi, a plugin loader) would fail, where it picks "
                                  "this file"), "warning"
            out.append(Finding(
                "WA503", f"{b.path} " + why.replace("{tags}", " / ".join(tags)) + tail,
                subject=b.path, paths=[b.path], rule=RULE, severity_override=severity))  # type: ignore[arg-type]
    return out


# --------------------------------------------------------------------------------------------
# WA504


def _ships_libstdcxx(wheel) -> bool:
    """A wheel that ships its own libstdc++ provides its own GLIBCXX_ / CXXABI_ versions."""
    for b in wheel.libraries:
        if b.format == "elf" and (b.name.startswith("libstdc++.so") or (b.identity or "").startswith("libstdc++.so")):
            return True
    return False


def _own_nodes(wheel) -> frozenset[str]:
    """The symbol version nodes that the wheel's own ELF libraries define (a vendored libz or
    libstdc++ provides its own ZLIB_ / GLIBCXX_ nodes)."""
    nodes: set[str] = set()
    for b in wheel.libraries:
        if b.format != "elf" or not b.ok:
            continue
        for s in b.slices:
            versions = getattr(s.exports, "versions", None)  # a SymbolTable keeps them apart
            if versions is None:
                versions = {x.version for x in s.exports}
            nodes.update(v for v in versions if v)
    return frozenset(nodes)


@dataclass
class _Need:
    node: str
    prefix: str
    allowed: str  # in words: "GLIBC_2.17 and older", "no ZLIB version node"
    src: str  # which rule: "the tag's glibc", "policy manylinux_2_17"
    error: bool
    symbols: list[str]


def _node_symbols(s: Slice) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for sym, node in s.import_versions.items():
        out.setdefault(node, []).append(sym)
    return out


def _judge_node(node: str, arch: str, tag: PlatformTag, policy: Policy, exact: bool) -> _Need | None:
    """Whether a need of ``node`` breaks the promise of manylinux ``tag`` (policy: the exact one
    or the nearest older); None when it does not, or when the policy does not list its library."""
    if node == "GLIBC_PRIVATE":
        return None  # in every glibc: not a version to be newer than (its symbols are WA506's)
    listed = policydata.policy_listed_versions(policy.name, arch, node)
    if listed is None:
        return None  # a library the policy does not list (or an arch it does not cover)
    prefix, versions = listed
    numeric = _split_version(node)
    if prefix == "GLIBC" and numeric is not None and numeric[0] == "GLIBC":
        allowed = tag.version
        pol = policy.ceiling(arch, "GLIBC") if exact else None
        if pol and version_tuple(pol) > allowed:
            allowed = version_tuple(pol)  # e.g. manylinux2014 aarch64 allows GLIBC_2.18
        if version_tuple(numeric[1]) <= allowed:
            return None
        return _Need(node, prefix, f"GLIBC_{_vstr(allowed)} and older", "the tag's glibc", True, [])
    rest = node[len(prefix) + 1:]
    if rest in versions:
        return None
    src = f"policy {policy.name}" + ("" if exact else f", the nearest at or below {tag.tag}")
    if not versions:
        return _Need(node, prefix, f"no {prefix} version node", src, prefix in ERROR_PREFIXES, [])
    ceiling = policy.ceiling(arch, numeric[0]) if numeric is not None else None
    allowed = f"{numeric[0]}_{ceiling} and older" if ceiling else "only " + examples([f"{prefix}_{v}" for v in versions])
    return _Need(node, prefix, allowed, src, True, [])


def _lowest_policy_allowing(arch: str, nodes: list[str], floor: tuple[int, ...]) -> Policy | None:
    """The oldest manylinux policy at or above ``floor`` whose tag would allow every node."""
    for pol in _policies("manylinux"):
        if pol.glibc < floor or arch not in pol.symbol_versions:
            continue
        tag = PlatformTag(f"manylinux_{pol.glibc[0]}_{pol.glibc[1]}_{arch}", "linux", "manylinux", pol.glibc,
                          (arch,), arch)
        if all(n == "GLIBC_PRIVATE" or _judge_node(n, arch, tag, pol, True) is None for n in nodes):
            return pol
    return None


def _check_glibc(wheel, b: Binary, plats: list[PlatformTag], own_cxx: bool, own: frozenset[str]) -> list[Finding]:
    out: list[Finding] = []
    for s in b.slices:
        tags = [p for p in plats if p.family == "manylinux" and p.accepts(s.arch, s.float_abi)]
        if not tags or not s.needs_versions:
            continue
        lowest = min(tags, key=lambda p: (p.version, p.tag))
        lowest_tags = sorted(p.tag for p in tags if p.version == lowest.version)
        tagdesc = " / ".join(lowest_tags)
        several = len({p.version for p in tags}) > 1
        policy = manylinux_policy(lowest.version)
        exact = policy.glibc == lowest.version
        by_node = _node_symbols(s)
        needs: list[_Need] = []
        for node in s.needs_versions:
            if node in own or (own_cxx and node.startswith(("GLIBCXX_", "CXXABI_"))):
                continue  # provided by a library of the wheel
            need = _judge_node(node, lowest.arch_label, lowest, policy, exact)
            if need is not None:
                need.symbols = sorted(by_node.get(node, []))
                needs.append(need)
        if not needs:
            continue
        where = f" ({s.arch} slice)" if b.universal else ""
        claim = " (the lowest of its manylinux tags, which the wheel claims all of)" if several else ""
        for grade in (True, False):
            group = [n for n in needs if n.error == grade]
            if not group:
                continue
            group.sort(key=lambda n: (n.prefix, version_tuple(n.node.rsplit("_", 1)[-1]), n.node))
            parts = []
            for n in group:
                syms = f" ({examples(n.symbols)})" if n.symbols else ""
                parts.append(f"{n.node}{syms}")
            by_rule: dict[tuple[str, str], list[str]] = {}
            for n in group:
                by_rule.setdefault((n.allowed, n.src), []).append(n.prefix)
            allowed = "; ".join(f"allowed: {a}, {src}" for (a, src) in by_rule)
            said = claim
            fit = _lowest_policy_allowing(lowest.arch_label, [n.node for n in needs], lowest.version)
            retag = (f"tag the wheel manylinux_{fit.glibc[0]}_{fit.glibc[1]}_{lowest.arch_label} (the oldest policy"
                     " that allows every version node it needs)" if fit is not None else "retag for a newer policy")
            if any(n.prefix == "GLIBC" for n in group):
                hint = f"{retag}, or build against an older glibc (an older manylinux image)"
            elif grade:
                hint = f"{retag}, or build with an older toolchain (the manylinux image's devtoolset)"
            else:
                said += ("; the policy's reference library has no version nodes: glibc loads the binary with"
                          " \"no version information available\" and binds by name, so only a symbol it lacks"
                          " fails")
                hint = "link the library statically or ship it in the wheel, or retag for a newer policy"
            syms = [f"{sym}@{n.node}" for n in group for sym in n.symbols] + [n.node for n in group if not n.symbols]
            out.append(Finding(
                "WA504",
                f"{b.path}{where} needs " + ", ".join(parts) + f", newer than its tag {tagdesc} allows ({allowed})"
                + said,
                subject=b.path, paths=[b.path], symbols=syms, rule=RULE, hint=hint,
                severity_override=None if grade else "warning"))
    return out


def _mac_tag(v: tuple[int, int], pt: PlatformTag) -> str:
    """The installable tag for a binary that needs OS ``v``: pip knows only ``X_0`` macOS tags
    from macOS 11 on, so 12.3 rounds up to 13_0; iOS tags keep the minor version."""
    if pt.family == "ios":
        return f"ios_{v[0]}_{v[1]}_{pt.arch_label}"
    if v[0] >= 11:
        major = v[0] if v[1] == 0 else v[0] + 1
        return f"macosx_{major}_0_{pt.arch_label}"
    return f"macosx_{v[0]}_{v[1]}_{pt.arch_label}"


def _check_minos(b: Binary, plats: list[PlatformTag]) -> list[Finding]:
    out: list[Finding] = []
    for family, os_words, env in (("macosx", "macOS", "MACOSX_DEPLOYMENT_TARGET"),
                                  ("ios", "iOS", "IPHONEOS_DEPLOYMENT_TARGET")):
        fam = [p for p in plats if p.family == family]
        if fam:
            out += _check_minos_family(b, fam, os_words, env)
    return out


def _check_minos_family(b: Binary, mac: list[PlatformTag], os_words: str, env: str) -> list[Finding]:
    bad: list[str] = []
    lowest_seen: PlatformTag | None = None
    needed: tuple[int, int] = (0, 0)
    macos = mac[0].family == "macosx"
    for s in b.slices:
        if not s.min_os:
            continue
        tags = [p for p in mac if p.accepts(s.arch) and (s.platform is None or s.platform == p.platform)]
        if not tags:
            continue  # (a slice for another platform is WA503)
        lowest = min(tags, key=lambda p: (p.version, p.tag))
        lowest_seen = lowest if lowest_seen is None or lowest.version < lowest_seen.version else lowest_seen
        have = _os_version(s.min_os)
        allowed = (lowest.version[0], lowest.version[1])
        arm = macos and s.arch in ("arm64", "arm64e")
        if arm and allowed < ARM64_MACOS_FLOOR:
            allowed = ARM64_MACOS_FLOOR
        if not arm or have > ARM64_MACOS_FLOOR:
            needed = max(needed, have)
        if have > allowed:
            floor = (" (an arm64 slice cannot target below 11.0)"
                     if arm and allowed == ARM64_MACOS_FLOOR and lowest.version < ARM64_MACOS_FLOOR else "")
            cmd = (f"{s.min_os_command} {'minos' if s.min_os_command == 'LC_BUILD_VERSION' else 'version'}"
                   if s.min_os_command else "minos")
            bad.append(f"{s.arch} slice needs {os_words} {s.min_os} ({cmd} {s.min_os}) but {lowest.tag}"
                       f" allows {_vstr(allowed)}{floor}")
    if not bad:
        return []
    assert lowest_seen is not None
    target = f"{lowest_seen.version[0]}.{lowest_seen.version[1]}"
    arm_only = macos and all(s.arch in ("arm64", "arm64e") for s in b.slices)
    if arm_only and lowest_seen.version < ARM64_MACOS_FLOOR:
        target = "11.0"
    tag = _mac_tag(needed, lowest_seen)
    return [Finding(
        "WA504",
        f"{b.path}: " + "; ".join(bad),
        subject=b.path, paths=[b.path], rule=RULE,
        hint=f"rebuild with {env}={target}, or tag the wheel {tag} (the lowest tag every slice passes)")]


def check_versions(wheel) -> list[Finding]:
    """WA504 for every ok binary of ``wheel``."""
    out: list[Finding] = []
    plats = wheel_platforms(wheel)
    own_cxx = _ships_libstdcxx(wheel)
    own: frozenset[str] | None = None
    many = any(p.family == "manylinux" for p in plats)
    for b in wheel.libraries:
        if not b.ok or not b.loadable:
            continue
        if b.format == "elf" and many:
            if own is None:
                own = _own_nodes(wheel)
            out += _check_glibc(wheel, b, plats, own_cxx, own)
        elif b.format == "macho":
            out += _check_minos(b, plats)
    return out


def check_platform(wheel, loaded: Collection[str] | None = None, never: Collection[str] = ()) -> list[Finding]:
    """WA503 and WA504 for ``wheel`` (a :class:`wheelaudit.scanner.Wheel`); ``loaded`` and ``never``
    as for :func:`check_archs`."""
    return check_archs(wheel, loaded, never) + check_versions(wheel)
