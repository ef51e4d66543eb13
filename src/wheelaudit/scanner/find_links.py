"""``check --find-links DIR``: the wheels of a wheel's requirements, found in a local folder.

:func:`find_providers` looks in ``DIR`` (never on the network) for one wheel per requirement of
the checked wheel that applies where it installs, and :func:`with_providers` lays the checked
wheel out together with the wheels found (:func:`wheelaudit.scanner.together.merge_wheels`): a dependency the provider's real wheel ships
resolves there; one it does not ship is a WA501 that names the provider wheel and its version.
Only the checked wheel's findings are reported (:func:`keep_checked`).

Which requirements apply: ``Requires-Dist`` lines whose markers hold in every environment the
checked wheel's tags describe (:func:`wheelaudit.platforms.requirements.declared_requirements`),
without any extra (a requirement behind the wheel's own extra does not apply).

Which wheel satisfies a requirement: its distribution name (PEP 503), a version the specifier
contains (pre-releases allowed), and a platform the checked wheel's platform accepts. The
platform comparison is deliberately simple: each platform tag becomes (system, architecture)
pairs (:func:`wheelaudit.platforms.tags.parse_platform`: any manylinux / linux tag is "linux",
musllinux is its own system, a macOS ``universal2`` tag counts for x86_64 and arm64); a provider
whose pairs meet the checked wheel's is accepted, as is a pure (``any``) one. Glibc / macOS
versions and python / ABI tags are not compared. Among several wheels that satisfy one
requirement, the highest version is taken. A wheel in ``DIR`` of a required distribution that
fails any of these tests is ignored, with a note saying why; wheels of other distributions are
ignored silently (``DIR`` may be a whole wheelhouse).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from wheelaudit.model.finding import Finding
from wheelaudit.model.wheel import Wheel

__all__ = ["find_providers", "with_providers", "platform_keys", "describe", "keep_checked", "ORIGIN"]

ORIGIN = "from --find-links"


def platform_keys(tags) -> set[tuple[str, str]] | None:
    """(system, arch) pairs the tags (``Tag`` values or ``interpreter-abi-platform`` / platform
    strings) install on; None for a pure / unknown one (anywhere): the tag model's
    :func:`~wheelaudit.platforms.tags.install_keys`."""
    from wheelaudit.platforms.tags import install_keys  # (here: the policy data loads only when a tag is read)

    return install_keys(str(tag).split("-")[-1] for tag in tags)


def describe(name: str, version: str, path: Path) -> str:
    """How a message names a provider wheel: ``prov 1.0 (prov-1.0-….whl from --find-links)``."""
    return f"{name} {version} ({path.name} {ORIGIN})"


@dataclass
class _Candidate:
    path: Path
    name: str
    version: Version
    keys: set[tuple[str, str]] | None


def _candidates(directory: Path) -> list[_Candidate]:
    out: list[_Candidate] = []
    for p in sorted(directory.iterdir()):
        if not p.name.endswith(".whl") or not p.is_file():
            continue
        try:
            name, version, _build, tags = parse_wheel_filename(p.name)
        except InvalidWheelFilename:
            continue
        out.append(_Candidate(p, str(name), version, platform_keys(t.platform for t in tags)))
    return out


def find_providers(wheel: Wheel, directory: str | os.PathLike[str]) -> tuple[list[Path], list[str]]:
    """The wheels in ``directory`` that satisfy ``wheel``'s applying requirements (one per
    requirement, the highest version), and notes: one line per wheel of a required distribution
    that was ignored, saying why. See the module docstring for the tests applied."""
    from wheelaudit.platforms.requirements import declared_requirements
    from wheelaudit.platforms.tags import describe_install_keys

    directory = Path(directory)
    own = canonicalize_name(wheel.name) if wheel.name else ""
    declared, _invalid = declared_requirements(wheel.requirements, wheel.tags)
    parsed = dict(wheel.requirements.parsed)
    applying: dict[str, list[Requirement]] = {}
    not_applying: dict[str, str] = {}
    for d in declared:
        if d.name == own:
            continue
        if d.always:
            applying.setdefault(d.name, []).append(parsed[d.text])
        else:
            not_applying.setdefault(d.name, d.text)
    mine = platform_keys(wheel.tags)
    found: dict[str, _Candidate] = {}
    notes: list[str] = []
    who = wheel.path.name

    def ignore(c: _Candidate, why: str) -> None:
        notes.append(f"--find-links: ignored {c.path.name} for {who}: {why} (the provider table decides)")

    for c in _candidates(directory):
        cname = canonicalize_name(c.name)
        if cname == own:
            continue
        reqs = applying.get(cname)
        if reqs is None:
            if cname in not_applying:
                ignore(c, f"the requirement {not_applying[cname]} does not apply to the wheel's tags"
                          " without an extra")
            continue
        bad = [str(r) for r in reqs if not r.specifier.contains(c.version, prereleases=True)]
        if bad:
            ignore(c, f"{c.name} {c.version} does not satisfy {', '.join(bad)}")
            continue
        if mine is not None and c.keys is not None and not (mine & c.keys):
            ignore(c, f"its platform ({describe_install_keys(c.keys)}) is not the wheel's ({describe_install_keys(mine)})")
            continue
        best = found.get(cname)
        if best is None or c.version > best.version:
            found[cname] = c
    return [c.path for c in found.values()], notes


def keep_checked(findings: list[Finding], origins: dict[str, str], providers: set[str]) -> list[Finding]:
    """The findings of the checked wheel(s): those whose paths that some wheel ships do not all
    belong to a provider wheel (``providers``: their labels, as in ``origins``; a path no wheel
    ships, such as the missing file a provider's CMake export names, belongs to none), and, for
    findings without such paths, those whose message does not start with a provider's label (the
    members' own findings)."""
    out: list[Finding] = []
    for f in findings:
        shipped = [origins[p] for p in f.paths if p in origins]
        if shipped:
            if all(o in providers for o in shipped):
                continue
        elif any(f.message.startswith(f"{lab}: ") or f.message.startswith(f"{lab} ") for lab in providers):
            continue
        out.append(f)
    return out


def with_providers(members: list[Wheel], directory: str | os.PathLike[str], *, strings=(), interest=None,
                   jobs: int | None = None, budget=None) -> tuple[Wheel, set[str], list[str]]:
    """The checked wheel(s) ``members`` (already scanned) laid out with the provider wheels
    :func:`find_providers` finds for them: (the wheel to audit, the providers' labels, notes).

    With no provider found, a single member is returned as it is (nothing changes). With one
    checked wheel, the merged tree keeps its identity (path, name, version, tags, traits,
    Requires-Dist: the provider table and the rules see the checked wheel) and its own findings
    lose the ``file name:`` prefix that together gives members; with several (``--together``)
    the tree is the together tree of them all."""
    from wheelaudit.scanner import scan
    from wheelaudit.scanner.together import label, merge_wheels

    given: set[str] = {canonicalize_name(w.name) for w in members if w.name}
    found: dict[Path, None] = {}
    notes: list[str] = []
    for w in members:
        paths, more = find_providers(w, directory)
        notes += more
        for p in paths:
            found.setdefault(p, None)
    provider_wheels: list[Wheel] = []
    for p in found:
        pw = scan(p, strings=tuple(strings), interest=interest, jobs=jobs, budget=budget)
        if pw.name and canonicalize_name(pw.name) in given:
            continue
        given.add(canonicalize_name(pw.name) if pw.name else str(p))
        provider_wheels.append(pw)
    if not provider_wheels and len(members) == 1:
        return members[0], set(), notes
    merged = merge_wheels([*members, *provider_wheels])
    merged.found_providers = {canonicalize_name(pw.name): describe(pw.name, pw.version, pw.path)
                              for pw in provider_wheels}
    if len(members) == 1:
        w = members[0]
        merged.bare = label(w)
        merged.path, merged.name, merged.version = w.path, w.name, w.version
        merged.tags, merged.traits, merged.requires_dist = list(w.tags), w.traits, list(w.requires_dist)
    return merged, {label(pw) for pw in provider_wheels}, notes
