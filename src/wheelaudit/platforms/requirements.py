"""A wheel's requirements (``Requires-Dist``) as they apply where the wheel installs.

Requirements are parsed by :class:`packaging.requirements.Requirement` and their markers
evaluated by :mod:`packaging.markers`, never by hand. The environment a marker is evaluated in
comes from the wheel's tags alone (:func:`marker_environments`), never from the host running the
audit: a Windows wheel is judged as Windows sees it, on any machine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import Requirement
from packaging.tags import Tag, parse_tag
from packaging.utils import canonicalize_name

from wheelaudit.model.wheel import Requirements

__all__ = ["marker_environments", "Declared", "declared_requirements", "marker_extras", "as_requirements"]


def as_requirements(requires_dist: Iterable[str] | Requirements) -> Requirements:
    """A wheel's requirements as parsed once (:attr:`wheelaudit.model.wheel.Wheel.requirements`),
    or ``Requires-Dist`` lines given as strings, parsed now."""
    return requires_dist if isinstance(requires_dist, Requirements) else Requirements.of(list(requires_dist))

#: CPython 3 minor versions a tag that names only the major version (``py3``) may install on:
#: such a wheel is judged for each of them.
_PY3_MINORS = tuple(range(9, 15))

# python tag prefix -> (implementation_name, platform_python_implementation)
_IMPLEMENTATIONS = {"cp": ("cpython", "CPython"), "pp": ("pypy", "PyPy"), "gp": ("graalpy", "GraalVM"),
                    "py": ("cpython", "CPython")}

# os of wheelaudit.platforms.tags -> (sys_platform, platform_system, os_name)
_OS = {"linux": ("linux", "Linux", "posix"), "macos": ("darwin", "Darwin", "posix"),
       "windows": ("win32", "Windows", "nt")}

# platform_machine as each OS spells an architecture (Windows reports AMD64 / ARM64 / x86)
_WINDOWS_MACHINE = {"x86_64": "AMD64", "arm64": "ARM64", "x86": "x86", "i386": "x86", "arm": "ARM"}


def _pythons(interpreter: str) -> list[tuple[str, str, str]]:
    """(python_version, implementation_name, platform_python_implementation) for a python tag."""
    prefix, digits = interpreter[:2], interpreter[2:]
    impl = _IMPLEMENTATIONS.get(prefix, ("cpython", "CPython"))
    if not digits.isdigit():
        return []
    if len(digits) == 1:
        return [(f"{digits}.{m}", *impl) for m in _PY3_MINORS] if digits == "3" else []
    return [(f"{digits[0]}.{digits[1:]}", *impl)]


def _machines(platform: str) -> list[tuple[str | None, str]]:
    """(os, platform_machine) for a platform tag: one per architecture it runs on;
    ``[(None, "")]`` for ``any`` or a tag wheelaudit does not know."""
    from wheelaudit.platforms.tags import parse_platform  # (lazily: platforms loads policy data)

    pt = parse_platform(platform)
    if pt.os not in _OS or not pt.archs:
        return [(None, "")]
    if pt.os == "windows":
        return [(pt.os, _WINDOWS_MACHINE.get(a, a)) for a in pt.archs]
    if pt.os == "linux":
        return [(pt.os, pt.arch_label)]  # as uname spells it: x86_64, aarch64, armv7l, ppc64le
    return [(pt.os, a) for a in pt.archs]


def marker_environments(tags: Iterable[str | Tag]) -> list[dict[str, str]]:
    """The marker environments (PEP 508) a wheel with these tags installs into: one per
    distinct python version, implementation, OS and machine (a ``universal2`` tag gives two, a
    ``py3`` tag one per CPython 3 minor version of :data:`_PY3_MINORS`).

    Every key of PEP 508 is set, so that :meth:`packaging.markers.Marker.evaluate` never falls
    back to the host's values; what the tags cannot say is empty (``platform_release``,
    ``platform_version``, and the OS keys of an ``any`` wheel). ``extra`` is ``""``.
    """
    out: dict[tuple, dict[str, str]] = {}
    for item in tags:
        for tag in [item] if isinstance(item, Tag) else parse_tag(item):
            for py, impl, pimpl in _pythons(tag.interpreter):
                for os_name, machine in _machines(tag.platform):
                    key = (py, impl, os_name, machine)
                    if key in out:
                        continue
                    sys_platform, system, os_kind = _OS.get(os_name or "", ("", "", ""))
                    full = f"{py}.0"
                    out[key] = {
                        "implementation_name": impl, "implementation_version": full,
                        "platform_python_implementation": pimpl,
                        "python_version": py, "python_full_version": full,
                        "os_name": os_kind, "sys_platform": sys_platform, "platform_system": system,
                        "platform_machine": machine, "platform_release": "", "platform_version": "",
                        "extra": "",
                    }
    return list(out.values())


@dataclass(frozen=True)
class Declared:
    """One ``Requires-Dist`` line and where it applies: ``name`` is canonical (PEP 503);
    ``always`` it applies in every environment the wheel installs in without an extra;
    ``somewhere`` in at least one; ``extras`` are the wheel's own extras under which it applies
    (in at least one environment) though it does not without them."""

    text: str
    name: str
    always: bool
    somewhere: bool
    extras: tuple[str, ...] = ()


def _holds(req: Requirement, env: dict[str, str], extra: str) -> bool:
    if req.marker is None:
        return True
    try:
        return req.marker.evaluate({**env, "extra": extra})
    except (UndefinedComparison, UndefinedEnvironmentName, InvalidMarker, ValueError, TypeError):
        return False  # a marker packaging cannot evaluate there (hostile metadata) does not hold


def declared_requirements(requirements: Iterable[str] | Requirements, tags: Iterable[str | Tag],
                          extras: Iterable[str] = ()) -> tuple[list[Declared], list[str]]:
    """Each requirement of the wheel's (:attr:`wheelaudit.model.wheel.Wheel.requirements`),
    evaluated for the wheel's tags (and for each of ``extras``, the wheel's Provides-Extra, plus
    any extra a marker names), and the lines that cannot be parsed."""
    envs = marker_environments(tags) or [{}]
    declared: list[Declared] = []
    requirements = as_requirements(requirements)
    invalid = list(requirements.invalid)
    parsed = requirements.parsed
    names = {canonicalize_name(e) for e in extras}
    for _t, req in parsed:
        names |= {canonicalize_name(v) for v in marker_extras(req)}
    for text, req in parsed:
        always = all(_holds(req, env, "") for env in envs)
        somewhere = any(_holds(req, env, "") for env in envs)
        with_extra = tuple(sorted(e for e in names if not somewhere and any(_holds(req, env, e) for env in envs)))
        declared.append(Declared(text, canonicalize_name(req.name), always, somewhere, with_extra))
    return declared, invalid


def marker_extras(req: Requirement) -> list[str]:
    """The extras a requirement's marker compares ``extra`` with (``extra == "cuda"``), read from
    packaging's parsed marker (never by hand)."""
    out: list[str] = []
    if req.marker is None:
        return out

    def walk(node) -> None:
        if isinstance(node, list):
            for n in node:
                walk(n)
        elif isinstance(node, tuple) and len(node) == 3:
            lhs, _op, rhs = node
            if getattr(lhs, "value", None) == "extra":
                out.append(str(getattr(rhs, "value", "")))
            elif getattr(rhs, "value", None) == "extra":
                out.append(str(getattr(lhs, "value", "")))

    walk(getattr(req.marker, "_markers", []))
    return out
