"""Platform tag agreement: do the binaries keep the promise of the wheel's platform tags?
WA503 (architectures, ARM float ABI, the binary format and Mach-O platform a tag needs) and WA504
(symbol versions, minimum OS versions). What each tag promises is the tag model's
(:mod:`wheelaudit.platforms.tags`); this module judges the binaries against it.

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

Wheels installed together (``--together``): each member's binaries are held to that member's
tags (:mod:`wheelaudit.checks.together`), and members that no platform can install together
are a WA503 (:func:`not_installable_together`).

Nothing here opens a file: the facts come from :mod:`wheelaudit.scanner`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from wheelaudit.platforms import policydata
from wheelaudit.platforms.tags import (ARM64_MACOS_FLOOR, Policy, PlatformTag, ARM_FLOAT, ARM_ORDER, FORMAT_NAME,
                                       OS_FORMAT, PLATFORM_CONSTANT, PLATFORM_WORDS, os_version, family_policies,
                                       split_version, version_str, describe_arch, describe_install_keys, install_keys,
                                       manylinux_policy, version_tuple, wheel_platforms)
from wheelaudit.model.binary import Binary, Slice
from wheelaudit.model.finding import Finding, examples
from wheelaudit.model.wheel import Wheel
from wheelaudit.checks.base import Family
from wheelaudit.checks.links import Links, on_links

__all__ = ["FAMILY", "check_platform", "check_archs", "check_versions", "not_installable_together"]

RULE = "linkage"

#: symbol-version libraries (auditwheel's keys) whose too-new node the loader refuses outright
ERROR_PREFIXES = ("GLIBC", "GLIBCXX", "CXXABI", "GCC")


# --------------------------------------------------------------------------------------------
# WA503


def _slice_words(s: Slice) -> str:
    return describe_arch(s.arch, s.float_abi)


def _tag_words(pt: PlatformTag) -> str:
    """What a tag needs, in words: ``32-bit ARM hard-float (armv7l, armhf)``."""
    if pt.family == "android":
        return describe_arch(pt.archs[0], pt.float_abi) if pt.archs else pt.arch_label
    if pt.os == "linux":
        if pt.arch_label in ARM_FLOAT:
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
        return (f"is {FORMAT_NAME[b.format]} binary in a pure wheel (platform tag {{tags}}): the wheel installs"
                " on every platform, the binary runs on one")
    want = OS_FORMAT[pt.os]
    if b.format != want:
        return f"is {FORMAT_NAME[b.format]} binary, but {{tags}} needs {FORMAT_NAME[want]} binary"
    have = [s.arch for s in b.slices]
    if b.format == "macho":
        wrong = [s for s in b.slices if s.platform is not None and s.platform != pt.platform
                 and pt.accepts(s.arch)]
        if wrong:
            s = wrong[0]
            return (f"has {'/'.join(x.arch for x in wrong)} slice{'s' if len(wrong) != 1 else ''} built for "
                    f"{PLATFORM_WORDS.get(s.platform or '', s.platform)} ({s.min_os_command or 'LC_BUILD_VERSION'} "
                    f"platform {PLATFORM_CONSTANT.get(s.platform or '', s.platform)}); {{tags}} needs "
                    f"{PLATFORM_WORDS.get(pt.platform or '', pt.platform)} (platform "
                    f"{PLATFORM_CONSTANT.get(pt.platform or '', pt.platform)}): the loader refuses an image built for "
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
        arm = [s for s in b.slices if s.arch in ARM_ORDER]
        tag_abi = pt.float_abi or ARM_FLOAT.get(pt.arch_label)
        if arm and tag_abi and any(s.float_abi and s.float_abi != tag_abi for s in arm):
            reasons.append(f"{'soft' if tag_abi == 'hard' else 'hard'}-float code does not run on a {tag_abi}-float"
                           " system (its loader refuses the object, or float arguments arrive in the wrong registers)")
        if arm and tag_abi and not any(pt.accepts(s.arch) for s in arm):
            reasons.append("its instructions need a newer ARM CPU than the tag's")
        why = (": " + ", and ".join(reasons)) if reasons else ""
        return f"is {what}; {{tags}} needs {_tag_words(pt)}{why}"
    return None


def check_archs(wheel: Wheel, loaded: Collection[str] | None = None, never: Collection[str] = ()) -> list[Finding]:
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
    numeric = split_version(node)
    if prefix == "GLIBC" and numeric is not None and numeric[0] == "GLIBC":
        allowed = tag.version
        pol = policy.ceiling(arch, "GLIBC") if exact else None
        if pol and version_tuple(pol) > allowed:
            allowed = version_tuple(pol)  # e.g. manylinux2014 aarch64 allows GLIBC_2.18
        if version_tuple(numeric[1]) <= allowed:
            return None
        return _Need(node, prefix, f"GLIBC_{version_str(allowed)} and older", "the tag's glibc", True, [])
    rest = node[len(prefix) + 1:]
    if rest in versions:
        return None
    src = f"policy {policy.name}" + ("" if exact else f", the nearest at or below {tag.tag}")
    if not versions:
        return _Need(node, prefix, f"no {prefix} version node", src, prefix in ERROR_PREFIXES, [])
    ceiling = policy.ceiling(arch, numeric[0]) if numeric is not None else None
    words = (f"{numeric[0]}_{ceiling} and older" if numeric is not None and ceiling
             else "only " + examples([f"{prefix}_{v}" for v in versions]))
    return _Need(node, prefix, words, src, True, [])


def _lowest_policy_allowing(arch: str, nodes: list[str], floor: tuple[int, ...]) -> Policy | None:
    """The oldest manylinux policy at or above ``floor`` whose tag would allow every node."""
    for pol in family_policies("manylinux"):
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
            needed = [f"{sym}@{n.node}" for n in group for sym in n.symbols] + [n.node for n in group if not n.symbols]
            out.append(Finding(
                "WA504",
                f"{b.path}{where} needs " + ", ".join(parts) + f", newer than its tag {tagdesc} allows ({allowed})"
                + said,
                subject=b.path, paths=[b.path], symbols=needed, rule=RULE, hint=hint,
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
        have = os_version(s.min_os)
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
                       f" allows {version_str(allowed)}{floor}")
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


def check_versions(wheel: Wheel) -> list[Finding]:
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


def check_platform(wheel: Wheel, loaded: Collection[str] | None = None, never: Collection[str] = ()) -> list[Finding]:
    """WA503 and WA504 for ``wheel`` (a :class:`wheelaudit.scanner.Wheel`); ``loaded`` and ``never``
    as for :func:`check_archs`."""
    return check_archs(wheel, loaded, never) + check_versions(wheel)


# --------------------------------------------------------------------------------------------
# Wheels installed together


def not_installable_together(wheels: Sequence[Wheel], labels: Sequence[str]) -> list[Finding]:
    """WA503 for a wheel that no platform can install with the wheels before it (a macOS wheel
    with a Linux one); ``labels`` name the wheels in messages."""
    out: list[Finding] = []
    common: set[tuple[str, str]] | None = None
    first: tuple[str, set[tuple[str, str]]] | None = None
    for w, lab in zip(wheels, labels, strict=True):
        keys = install_keys(w.platform_tags)
        if keys is None:
            continue
        if common is None:
            common, first = set(keys), (lab, keys)
            continue
        if not common & keys:
            assert first is not None
            out.append(Finding(
                "WA503",
                f"{lab} installs on {describe_install_keys(keys)} ({', '.join(w.platform_tags)}), but {first[0]} only on"
                f" {describe_install_keys(first[1])}: no platform satisfies both wheels' tags, so they cannot be"
                " installed together",
                subject=lab, paths=[], rule="linkage"))
            continue
        common &= keys
    return out


# --------------------------------------------------------------------------------------------
# The family


def wrong_architectures(wheel: Wheel, links: Links) -> list[Finding]:
    """WA503: the binaries the loader loads, against every platform tag."""
    return check_archs(wheel, links.loaded, links.never)


def platform_too_new(wheel: Wheel, links: Links) -> list[Finding]:
    """WA504: symbol versions and minimum OS versions against the tags."""
    return check_versions(wheel)


#: the checks of this family: (codes, judge), in the order of a report
JUDGES: tuple[tuple[tuple[str, ...], Callable[[Wheel, Links], list[Finding]]], ...] = (
    (("WA503",), wrong_architectures),
    (("WA504",), platform_too_new),
)
FAMILY = Family("platform", checks=tuple(on_links(codes, judge) for codes, judge in JUDGES))
