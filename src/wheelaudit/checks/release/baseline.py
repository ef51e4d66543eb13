"""``check --baseline``: each new wheel against the baseline wheel of its platform and Python
tags (WA801-WA804, SPEC §4 "The release checks").

:func:`pair_wheels` pairs new wheels with baseline wheels through the one platform-tag model
(:mod:`wheelaudit.platforms.tags`) and :mod:`packaging.tags`; :func:`compare` compares the ABI
(:mod:`wheelaudit.checks.release.abi`) of one pair and grades each break by the two versions
(:func:`release_step`, PEP 440 through :mod:`packaging.version`), ``[abi] policy`` and whether the
library is public (named by the consumer surface or ``[abi] public``) or the module private. It
reads facts only.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from wheelaudit.checks.release.abi import (LibraryAbi, WheelAbi, is_private_module, pair_libraries, wheel_abi)
from wheelaudit.model.codes import Severity
from wheelaudit.model.finding import Finding
from wheelaudit.model import messages
from wheelaudit.model.wheel import Wheel

if TYPE_CHECKING:
    from packaging.tags import Tag

#: how two versions relate: a rebuild of the same version (a ``.postN``, a local version, a second
#: build), a patch, a minor release of a project at 1.0 or later, a minor release below 1.0, a
#: major release (or an older version)
Step = Literal["rebuild", "patch", "minor", "0.x minor", "major"]
Policy = Literal["semver", "strict", "off"]

#: how many removed symbols a message names per library (JSON lists all of them)
SHOWN = 5


def release_step(old: str, new: str) -> Step:
    """How ``new`` relates to ``old`` (PEP 440). A version that does not parse is compared as a
    string: equal is a rebuild, anything else a major release."""
    from packaging.version import InvalidVersion, Version

    try:
        o, n = Version(old), Version(new)
    except InvalidVersion:
        return "rebuild" if old == new else "major"
    orel = (o.release + (0, 0, 0))[:3]
    nrel = (n.release + (0, 0, 0))[:3]
    if orel == nrel and len(o.release) <= 3 and len(n.release) <= 3 or o.release == n.release:
        return "rebuild"
    if n < o or orel[0] != nrel[0]:
        return "major"
    if orel[1] != nrel[1]:
        return "minor" if orel[0] >= 1 else "0.x minor"
    return "patch"


def break_severity(step: Step, policy: Policy, public: bool) -> Severity:
    """The severity of a break (an export, an identity, a library or a module gone): every one an
    error under ``strict`` and in a rebuild of the same version; a warning where the versions
    allow it (a major release, a minor release below 1.0); otherwise an error for what is public
    and a warning for the rest."""
    if policy == "strict" or step == "rebuild":
        return "error"
    if step in ("major", "0.x minor"):
        return "warning"
    return "error" if public else "warning"


_STEP_WORDS = {"rebuild": "a rebuild of the same version", "patch": "a patch release",
               "minor": "a minor release", "0.x minor": "a minor release below 1.0", "major": "a major release"}


# --------------------------------------------------------------------------------------------
# Pairing wheels


def _platform_keys(tags: Iterable[Tag]) -> set[tuple[str, str, str, str]]:
    """(interpreter, abi, platform family, architecture) of each tag: ``manylinux_2_17_x86_64``
    and ``manylinux_2_28_x86_64`` are one platform, ``musllinux_1_2_x86_64`` another."""
    from wheelaudit.platforms.tags import parse_platform

    out: set[tuple[str, str, str, str]] = set()
    for t in tags:
        pt = parse_platform(t.platform)
        family = "linux" if pt.family in ("manylinux", "linux") else pt.family
        # (a macOS tag per architecture it serves: universal2 pairs with arm64 and x86_64)
        archs = pt.archs if pt.family == "macosx" else (pt.arch_label if pt.os is not None else t.platform,)
        out.update((t.interpreter, t.abi, family, arch) for arch in archs)
    return out


def pair_wheels(new: Sequence[Wheel], old: Sequence[Wheel]) -> tuple[list[tuple[Wheel, Wheel]], list[Wheel]]:
    """Each new wheel with the baseline wheel of its platform and Python tags (the one sharing
    most (interpreter, abi, platform family, architecture) tags; a platform tag's version does
    not count, so ``manylinux_2_17`` pairs with ``manylinux_2_28``, and a macOS tag stands for
    each architecture it serves, so ``universal2`` pairs with ``arm64``); a new wheel of no
    Python in particular (``abi3``, ``none``) pairs with one of its platform. Returns the pairs
    and the baseline wheels that share no such tag with any new wheel (WA804)."""
    okeys = [_platform_keys(w.tags) for w in old]
    pairs: list[tuple[Wheel, Wheel]] = []
    used: set[int] = set()
    served: set = set()  # the baseline's keys some new wheel serves
    for w in new:
        nk = _platform_keys(w.tags)
        served |= nk
        best, score = None, 0
        for i, ok in enumerate(okeys):
            s = len(nk & ok)
            if s > score:
                best, score = i, s
        if best is None and any(k[1] in ("abi3", "none") for k in nk):
            plats = {k[2:] for k in nk}
            best = next((i for i, ok in enumerate(okeys) if plats & {k[2:] for k in ok}), None)
        if best is not None:
            pairs.append((w, old[best]))
            used.add(best)
    return pairs, [w for i, w in enumerate(old) if i not in used and not okeys[i] & served]


def missing_counterpart(old: Wheel) -> Finding:
    """WA804 for a baseline wheel no new wheel pairs with."""
    return Finding("WA804", f"the baseline wheel {old.path.name} ({old.name} {old.version}, "
                            f"{', '.join(map(str, old.tags))}) has no counterpart among the new wheels: "
                            "a platform or a Python the last release served is dropped",
                   subject=old.path.name, paths=[], rule="baseline",
                   hint="build the wheel for this platform and Python, or say in the release notes that it is dropped")


# --------------------------------------------------------------------------------------------
# Comparing one pair


@dataclass(frozen=True)
class AbiPolicy:
    """What ``[abi]`` says: the ``policy`` and which libraries are ``public`` (a predicate over
    library paths; the consumer surface's libraries are public too)."""

    policy: Policy = "semver"
    public: tuple = ()  # globs with .match(path)

    def lists(self, path: str) -> bool:
        return any(g.match(path) for g in self.public)


def surface_libraries(wheel: Wheel) -> set[str]:
    """The wheel paths of the libraries its consumer surface names (imported targets' files and
    import libraries, link items, a ``.pc`` file's library files and its ``-l`` names found in
    its ``-L`` folders)."""
    s = wheel.surface
    if s is None:
        return set()
    out: set[str] = set()
    for t in s.targets:
        for ref in list(t.files.values()) + list(t.implibs.values()) + [x for x in t.link_libraries if not isinstance(x, str)]:
            if ref.member:
                out.add(ref.member)
    files = set(wheel.files)
    for pc in s.pkgconfig:
        out.update(r.member for r in pc.files if r.member)
        for d in pc.lib_dirs:
            if not d.member:
                continue
            for lib in pc.libraries:
                for name in (f"lib{lib}.so", f"lib{lib}.dylib", f"{lib}.dll", f"lib{lib}.dll"):
                    p = posixpath.join(d.member, name)
                    if p in files:
                        out.add(p)
    return out


def _demangled(names: Iterable[str]) -> list[str]:
    from wheelaudit.binary.demangle import demangle

    return [demangle(n) for n in names]


def short_name(demangled: str) -> str:
    """A demangled name without its parameter list, for a message: ``ns::f(at::Tensor const&,
    long)`` → ``ns::f(…)``; the full names are in the finding's ``symbols``."""
    depth = 0
    for i, c in enumerate(demangled):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0 and i > 0 and not demangled.startswith("operator", max(0, i - 8)):
            return demangled[:i] + ("(…)" if demangled[i + 1:i + 2] != ")" else "()")
    return demangled


def _few(names: Sequence[str]) -> str:
    """A few of ``names`` (mangled), demangled and short, each once (overloads are one name),
    and how many there are in all."""
    # (a library that lost tens of thousands: the message draws on the first few hundred by name)
    pool = names if len(names) <= 400 else sorted(names)[:400]
    shown = list(dict.fromkeys(sorted(short_name(d) for d in _demangled(pool))))
    more = len(names) - min(len(shown), SHOWN)
    return ", ".join(shown[:SHOWN]) + messages.more(more)


def compare(old: Wheel, new: Wheel, policy: AbiPolicy | None = None) -> list[Finding]:
    """WA801-WA803 for ``new`` against the baseline ``old`` (see the module docstring)."""
    policy = policy or AbiPolicy()
    if policy.policy == "off":
        return []
    step = release_step(old.version, new.version)
    versions = f"{old.version} → {new.version}"
    why = _STEP_WORDS[step]
    oabi, nabi = wheel_abi(old.libraries), wheel_abi(new.libraries)
    named = surface_libraries(old) | surface_libraries(new)

    def graded(f: Finding, public: bool) -> Finding:
        sev = break_severity(step, policy.policy, public)
        if sev != "error":
            f.severity_override = sev
        return f

    findings: list[Finding] = []
    pairing = pair_libraries([la.binary for la in oabi.libraries.values()],
                             [la.binary for la in nabi.libraries.values()])
    for ob in pairing.removed:
        public = ob.path in named or policy.lists(ob.path)
        ident = f" (identity {ob.identity})" if ob.identity else ""
        findings.append(graded(Finding(
            "WA803", f"{ob.path}{ident} shipped in {old.version} and no longer ships in {new.version} ({why}): "
                     "a program or wheel linked against it fails to load",
            subject=ob.path, paths=[ob.path], rule="baseline",
            hint="ship the library again (or a compatible one under its name), or make the break a major release"),
            public))
    for ob, nb, mv in pairing.moved:
        public = ob.path in named or nb.path in named or policy.lists(ob.path) or policy.lists(nb.path)
        findings.append(graded(Finding(
            "WA803", f"{ob.path} moved to {nb.path} ({mv.why}) from {versions} ({why}): a consumer's "
                     "recorded dependency, install name or rpath still names the old place",
            subject=ob.path, paths=[ob.path, nb.path], rule="baseline",
            hint="keep the library where it was (or ship it in both places), or make the break a major release"),
            public))
    for ob, nb in pairing.pairs:
        public = ob.path in named or nb.path in named or policy.lists(ob.path) or policy.lists(nb.path)
        findings += [graded(f, public) for f in _compare_library(oabi.libraries[ob.path], nabi.libraries[nb.path],
                                                                 versions, why)]
    findings += _compare_modules(oabi, nabi, versions, why, lambda private: break_severity(step, policy.policy, not private))
    return findings


def _compare_library(o: LibraryAbi, n: LibraryAbi, versions: str, why: str) -> list[Finding]:
    out: list[Finding] = []
    where = o.path if o.path == n.path else f"{o.path} (now {n.path})"
    same = (o.identity or "").lower() == (n.identity or "").lower() if o.binary.format == "pe" else o.identity == n.identity
    if not same and o.identity:  # (Windows compares DLL names without case)
        out.append(Finding(
            "WA802", f"{where}: identity {o.identity} → {n.identity or '(none)'} from {versions} ({why}): "
                     "a consumer records the old one and the loader looks for it",
            subject=n.path, paths=[n.path], rule="baseline",
            hint="keep the identity (SONAME / install name / DLL name), or make the break a major release"))
    oex, nex = o.symbols(), n.symbols()
    gone = sorted(name for name in oex if name not in nex)
    if gone:
        out.append(Finding(
            "WA801", f"{where}: {messages.plural(len(gone), 'symbol')} exported by {versions.split(' → ')[0]} "
                     f"no longer exported by {versions.split(' → ')[1]} ({why}): {_few(gone)}",
            subject=n.path, paths=[n.path], symbols=gone, rule="baseline",
            hint="export the symbols again (or keep a compatible alias), or make the break a major release"))
    new_nodes = {v for vs in nex.values() for v in vs if v is not None}
    lost: dict[str, list[str]] = {}
    if new_nodes:  # (a library without version definitions binds any versioned reference)
        for name, vs in oex.items():
            if name in nex:
                for v in vs - nex[name]:
                    if v is not None:
                        lost.setdefault(v, []).append(name)
    if lost:
        nodes = sorted(lost)
        syms = sorted({s for names in lost.values() for s in names})
        node_text = ", ".join(f"{v} ({len(lost[v])})" for v in nodes)
        out.append(Finding(
            "WA802", f"{where}: {messages.plural(len(syms), 'symbol')} lost {'their' if len(syms) != 1 else 'its'} "
                     f"version node from {versions} ({why}): {node_text}: {_few(syms)}; a consumer that "
                     "bound them to that node fails to load",
            subject=n.path, paths=[n.path], symbols=[f"{s}@{v}" for v in nodes for s in sorted(lost[v])],
            rule="baseline",
            hint="keep the old version node (the version script's old node), or make the break a major release"))
    return out


def _compare_modules(o: WheelAbi, n: WheelAbi, versions: str, why: str, severity) -> list[Finding]:
    out = []
    for name, path in sorted(o.modules.items()):
        if name in n.modules:
            continue
        package = name.rpartition(".")[0]
        siblings = sorted(m for m in n.modules if m.rpartition(".")[0] == package and m not in o.modules)
        also = f"; new in {package or 'the top level'}: {', '.join(siblings)}" if siblings else ""
        private = is_private_module(name)
        f = Finding("WA803", f"extension module {name} ({path}) shipped in {versions.split(' → ')[0]} and is gone in "
                             f"{versions.split(' → ')[1]} ({why}){' (a private module)' if private else ''}{also}: "
                             f"`import {name}` fails",
                    subject=name, paths=[path], rule="baseline",
                    hint="ship the module again (or a shim under its name), or make the break a major release")
        sev = severity(private)
        if sev != "error":
            f.severity_override = sev
        out.append(f)
    return out
