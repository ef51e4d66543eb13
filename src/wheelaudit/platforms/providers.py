"""Libraries that other distributions provide (WA501 / WA505), from ``providers.json``.

A wheel may leave a library out when a distribution it requires ships it (torch's ``libc10.so``,
the NVIDIA CUDA wheels, OpenMP, MKL, TBB) or when it is a GPU driver library that no wheel may
ship (``libcuda.so.1``). The table is data (``platforms/data/providers.json``, read from the real
wheels by ``scripts/regen_providers.py``); this module answers who provides a library on a
platform tag, and which requirement of a wheel brings it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache, cache
from typing import Any

from packaging.markers import Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, parse_tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from wheelaudit.platforms.policydata import load
from wheelaudit.model.wheel import Requirements
from wheelaudit.platforms.requirements import as_requirements
from wheelaudit.platforms.tags import parse_platform


__all__ = ["ProviderEntry", "Provision", "providers_of", "driver_library", "required_provider", "ships_any", "compiler_runtime"]



@dataclass(frozen=True)
class ProviderEntry:
    """A distribution that, installed, puts a library where a consumer can load it.

    ``distribution``: the canonical name to require; ``versions``: a specifier over the versions
    read (of ``distribution``) that provide it; ``extras_path``: for a meta-distribution, the
    steps from it to the wheel that ships the library, each ``"name[extra]"`` (``()`` when
    ``distribution`` ships it itself); ``shipped_by``: the distribution whose wheel holds the
    file; ``identity``: the library's SONAME / install name / DLL name; ``path``: where the
    shipping wheel keeps it."""

    distribution: str
    versions: str
    extras_path: tuple[str, ...] = ()
    shipped_by: str = ""
    identity: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class Provision:
    """The answer of :func:`required_provider`: the wheel's requirement ``requirement`` (its
    Requires-Dist text) brings ``entry.shipped_by``, which ships the library. ``extra``: the
    wheel's own extra that the requirement hangs on (None: it applies without one);
    ``transitive``: reached through a provider's own (non-extra) requirements."""

    requirement: str
    entry: ProviderEntry
    extra: str | None = None
    transitive: bool = False


#: how deep requirements are followed through meta-distributions (cycles stop earlier)
_MAX_DEPTH = 4
#: the Python whose markers providers_of evaluates a meta-distribution's requirements for
_PYTHON = "3.11"


def _families(platform_tag: str) -> list[str]:
    """The platform families of providers.json that a platform tag runs on (universal2: both
    macOS families); empty for a tag the data does not cover."""
    pt = parse_platform(platform_tag)
    os_name = {"linux": "linux", "macos": "macos", "windows": "windows"}.get(pt.os or "")
    if os_name is None:
        return []
    return [f"{os_name}-{arch}" for arch in pt.archs]


def _environments(platform_tag: str, python_version: str) -> list[tuple[str, dict[str, str]]]:
    """(family, marker environment) for CPython ``python_version`` on ``platform_tag``: one per
    architecture the tag runs on that providers.json has data for."""
    families = load("providers")["families"]
    full = python_version if python_version.count(".") >= 2 else f"{python_version}.0"
    out = []
    for family in _families(platform_tag):
        if family not in families:
            continue  # no data: nothing is known to provide anything there
        env = dict(families[family]["marker_environment"])
        env.update(python_version=".".join(full.split(".")[:2]), python_full_version=full,
                   implementation_name="cpython", platform_python_implementation="CPython",
                   implementation_version=full, platform_release="", platform_version="", extra="")
        out.append((family, env))
    return out


def _holds(marker: Marker | None, env: dict[str, str], extra: str) -> bool:
    """Whether a requirement's marker holds in ``env`` with ``extra``; a marker that cannot be
    evaluated there (a comparison packaging refuses, in hostile metadata) does not hold."""
    if marker is None:
        return True
    try:
        return marker.evaluate({**env, "extra": extra})
    except (UndefinedComparison, UndefinedEnvironmentName, ValueError, TypeError):
        return False


@lru_cache(maxsize=1 << 16)
def _applies(text: str, env: tuple[tuple[str, str], ...], extra: str) -> bool:
    """:func:`_holds` for the requirement line ``text`` in the environment ``env`` (its items):
    evaluated once, since the same lines are walked for every library asked about."""
    return _holds(_requirement(text).marker, dict(env), extra)


def _library_key(name: str, family: str) -> str:
    base = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    return base.lower() if family.startswith("windows-") else base


def _distribution(name: str) -> dict[str, Any] | None:
    return load("providers")["distributions"].get(canonicalize_name(name))


def _versions_for(dist: dict[str, Any], family: str, specifier: SpecifierSet | None) -> list[str]:
    """The versions read on ``family`` that ``specifier`` admits; when it admits none, the newest
    read (the data's best knowledge of a release it has not seen)."""
    read = dist["read"].get(family, [])
    if specifier is None or not read:
        return list(read)
    admitted = [v for v in read if specifier.contains(v, prereleases=True)]
    return admitted or [max(read, key=Version)]


def _ships(dist: dict[str, Any], family: str, library: str, specifier: SpecifierSet | None) -> dict[str, Any] | None:
    """The library record when one of the versions ``specifier`` picks ships ``library``."""
    lib = dist.get("libraries", {}).get(family, {}).get(_library_key(library, family))
    if lib is None:
        return None
    versions = SpecifierSet(lib["versions"])
    if any(versions.contains(v, prereleases=True) for v in _versions_for(dist, family, specifier)):
        return lib
    return None


@cache
def _requirement(text: str) -> Requirement:
    """A Requires-Dist line of the table, parsed once (the table's few hundred lines are walked
    for every library asked about)."""
    return Requirement(text)


def _routes(name: str, extras: frozenset[str], specifier: SpecifierSet | None, library: str, family: str,
            env: dict[str, str], transitive: bool, depth: int = 0,
            seen: frozenset[str] = frozenset()) -> list[tuple[tuple[str, ...], str, dict[str, Any], bool]]:
    """Every way requiring ``name[extras] specifier`` brings ``library`` on ``family``:
    (the "name[extra]" steps through meta-distributions, the shipping distribution, its
    library record, whether a provider's own requirements were followed)."""
    key = canonicalize_name(name)
    dist = _distribution(key)
    if dist is None or key in seen or depth > _MAX_DEPTH:
        return []
    lib = _ships(dist, family, library, specifier)
    if lib is not None:
        return [((), key, lib, False)]
    if dist.get("kind") != "meta" and not transitive:
        return []
    out = []
    env_items = tuple(sorted(env.items()))
    for version in _versions_for(dist, family, specifier):
        for text in dist["requires"].get(family, {}).get(version, []):
            try:
                req = _requirement(text)
            except InvalidRequirement:
                continue
            for extra in sorted(extras | {""}):
                if not _applies(text, env_items, extra):
                    continue
                if extra and _applies(text, env_items, ""):
                    continue  # applies without the extra: found with extra ""
                step = f"{key}[{extra}]" if extra else key
                for path, shipper, found, trans in _routes(
                        req.name, frozenset(canonicalize_name(e) for e in req.extras), req.specifier or None,
                        library, family, env, transitive, depth + 1, seen | {key}):
                    out.append(((step, *path), shipper, found, trans or dist.get("kind") != "meta"))
    unique: dict[tuple[tuple[str, ...], str], tuple[tuple[str, ...], str, dict[str, Any], bool]] = {}
    for route in out:
        unique.setdefault((route[0], route[1]), route)
    return list(unique.values())


def _reachable(name: str, family: str) -> set[str]:
    """The distributions a route of :func:`_routes` from ``name`` can step to on ``family``,
    whatever the versions, extras and markers: the names its requirements and those of the
    meta-distributions among them give, and so on (a superset of every route's steps)."""
    seen: set[str] = set()
    todo = [canonicalize_name(name)]
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        dist = _distribution(key)
        if dist is None or dist.get("kind") != "meta":
            continue  # (with transitive=False a route through it ends here)
        for texts in dist["requires"].get(family, {}).values():
            for text in texts:
                try:
                    todo.append(canonicalize_name(_requirement(text).name))
                except InvalidRequirement:
                    continue
    return seen


def providers_of(library_name: str, platform_tag: str) -> list[ProviderEntry]:
    """The distributions that provide ``library_name`` (a file name, or a load path whose last
    component is one: ``@rpath/libc10.dylib``) to a binary of ``platform_tag``: those whose
    wheels ship it (``extras_path`` empty), then meta-distributions whose extras bring one of
    those (``cuda-toolkit`` with ``("cuda-toolkit[cudart]",)``). Empty when nobody known does,
    or the data has no such platform. For a multi-architecture tag (universal2), the union."""
    return list(_providers_of(library_name, platform_tag))


@lru_cache(maxsize=4096)
def _providers_of(library_name: str, platform_tag: str) -> tuple[ProviderEntry, ...]:
    data = load("providers")
    out: dict[tuple, ProviderEntry] = {}
    for family in _families(platform_tag):
        key = _library_key(library_name, family)
        shipping = set()
        for name, dist in data["distributions"].items():
            lib = dist.get("libraries", {}).get(family, {}).get(key)
            if lib is not None and not _runtime(lib, key, family):  # (a compiler runtime: for requirers only)
                shipping.add(name)
                entry = ProviderEntry(name, lib["versions"], (), name, lib.get("identity"), lib.get("path"))
                out.setdefault((name, ()), entry)
        for name, dist in data["distributions"].items():
            if dist.get("kind") != "meta" or not shipping & _reachable(name, family):
                continue  # (a route ends at a distribution that ships the library)
            env = dict(_environments(platform_tag, _PYTHON)).get(family)
            if env is None:
                continue
            for extra in ["", *dist.get("provides_extra", [])]:
                step = f"{name}[{extra}]" if extra else name
                versions = []
                routes: dict = {}
                for version in dist["read"].get(family, []):
                    found = _routes(name, frozenset({extra} - {""}), SpecifierSet(f"=={version}"), library_name,
                                    family, env, transitive=False)
                    found = [r for r in found if r[0] and r[0][0] == step]
                    if found:
                        versions.append(version)
                        for r in found:
                            routes.setdefault(r[0], r)
                for path, shipper, lib, _t in routes.values():
                    vs = sorted(versions, key=Version)
                    spec = f"=={vs[0]}" if len(vs) == 1 else f">={vs[0]},<={vs[-1]}"
                    out.setdefault((name, path), ProviderEntry(name, spec, path, shipper, lib.get("identity"),
                                                                lib.get("path")))
    return tuple(out.values())


def _runtime_names(family: str) -> list[str]:
    """The compiler runtimes known by name on ``family``'s OS (providers.json ``runtime``)."""
    return load("providers").get("runtime", {}).get(family.split("-", 1)[0], [])


def _runtime(lib: dict[str, Any], key: str, family: str) -> bool:
    """Whether a provider's library is one it vendors for its own use: a compiler runtime (the
    VC++ runtime marked per library; GCC's and LLVM's by name) or a third-party library marked
    ``private`` (a GUI toolkit's FFmpeg): offered to no wheel that does not require it."""
    return bool(lib.get("runtime")) or bool(lib.get("private")) or key in _runtime_names(family)


def compiler_runtime(name: str, platform_tag: str) -> bool:
    """Whether ``name`` is a compiler runtime by name on ``platform_tag``'s OS (GCC's libgomp,
    libgfortran, ...; LLVM's libomp): every load of a binary that links it needs it."""
    families = _families(platform_tag)
    return bool(families) and _library_key(name, families[0]) in _runtime_names(families[0])


def ships_any(distribution: str, library_names: Iterable[str], platform_tag: str) -> bool:
    """Whether ``distribution``'s wheels for ``platform_tag`` ship a library of one of these names
    (a wheel that ships Qt's libraries itself does not take another distribution's copy of one)."""
    dist = _distribution(distribution)
    if dist is None:
        return False
    for family in _families(platform_tag):
        libs = dist.get("libraries", {}).get(family, {})
        if any(_library_key(n, family) in libs for n in library_names):
            return True
    return False


def driver_library(name: str, platform_tag: str) -> bool:
    """Whether ``name`` is a GPU driver library on ``platform_tag``'s OS (``libcuda.so.1``,
    ``libnvidia-ml.so.1``, ``nvcuda.dll``): installed with the driver, outside Python, shipped by
    no wheel -- an allowed external."""
    drivers = load("providers")["drivers"]
    families = _families(platform_tag)
    if not families:
        return False
    os_name = families[0].split("-", 1)[0]
    return _library_key(name, families[0]) in {_library_key(n, families[0]) for n in drivers.get(os_name, [])}


def required_provider(library_name: str, requires_dist: Iterable[str] | Requirements, tags: Iterable[str | Tag],
                      python_version: str, extras: Iterable[str] = (),
                      transitive: bool = False) -> list[Provision]:
    """Which of a wheel's requirements provide ``library_name`` to it.

    ``requires_dist``: the wheel's Requires-Dist strings, or parsed
    (:attr:`wheelaudit.model.wheel.Wheel.requirements`); ``tags``: its tags (``cp311-cp311-
    manylinux_2_28_x86_64`` strings or :class:`packaging.tags.Tag`; their platforms count);
    ``python_version``: the CPython version to evaluate markers for (``"3.11"``);
    ``extras``: the wheel's own extras (its Provides-Extra) -- a requirement that hangs on one
    of them is answered with ``extra`` set. A requirement counts when its marker holds in every
    environment the wheel installs in (each platform tag, each architecture of a universal2
    tag); its ``[extras]`` count; a meta-distribution's extras are followed through the table.
    ``transitive``: follow a provider's own requirements too (torch -> the CUDA wheels).
    Requirements that cannot be parsed are skipped (the metadata checks report them)."""
    platforms: dict[str, None] = {}
    for item in tags:
        for tag in [item] if isinstance(item, Tag) else parse_tag(item):
            platforms.setdefault(tag.platform, None)
    envs = [pair for platform in platforms for pair in _environments(platform, python_version)]
    if not envs:
        return []
    own_extras = [""] + sorted({canonicalize_name(e) for e in extras})
    out: list[Provision] = []
    for text, req in as_requirements(requires_dist).parsed:
        for extra in own_extras:
            if not all(_holds(req.marker, env, extra) for _f, env in envs):
                continue
            if extra and all(_holds(req.marker, env, "") for _f, env in envs):
                continue  # it applies without the extra
            per_env = [_routes(req.name, frozenset(canonicalize_name(e) for e in req.extras),
                               req.specifier or None, library_name, family, env, transitive)
                       for family, env in envs]
            if not all(per_env):
                continue  # some environment the wheel installs in gets no provider
            name = canonicalize_name(req.name)
            for path, shipper, lib, trans in per_env[0]:
                # a direct provider: the versions that ship it; through a meta-distribution: the
                # versions the wheel asks for
                versions = str(req.specifier) if path else lib["versions"]
                entry = ProviderEntry(name, versions, path, shipper, lib.get("identity"), lib.get("path"))
                out.append(Provision(text, entry, extra or None, trans))
            break
    return out
