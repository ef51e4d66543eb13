"""A wheel's traits (:class:`~wheelaudit.model.traits.WheelTraits`, what conditions select on),
derived from its tags through the one platform-tag model (:mod:`wheelaudit.platforms.tags`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from wheelaudit.model.traits import WheelTraits

if TYPE_CHECKING:
    from packaging.tags import Tag

__all__ = ["traits_from_tags"]


def _platform_os_arch(platform: str) -> tuple[str | None, tuple[str, ...]]:
    """The os and architectures one platform tag names (``(None, ())`` for ``any`` and tags
    wheelaudit does not know), from the one platform-tag model (:mod:`wheelaudit.platforms.tags`)."""
    from wheelaudit.platforms.tags import parse_platform  # (here: the policy data loads only when a tag is read)

    pt = parse_platform(platform)
    if pt.os is None or pt.os == "any":
        return None, ()
    return pt.os, pt.arch_names


def _canonical(name: str) -> str:
    # (imported here: packaging.utils pulls in packaging.tags, logging, subprocess and platform,
    # which `check` would otherwise import before its first worker starts)
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


def traits_from_tags(tags: Iterable[Tag], version: str, name: str = "") -> WheelTraits:
    """The traits of a wheel with these tags (e.g. from :func:`packaging.utils.parse_wheel_filename`
    or the ``Tag:`` lines of ``WHEEL``), this distribution version and (optionally) this
    distribution name.

    Platform tags that wheelaudit does not know (``pyodide_*``, ...) still count for
    ``platform`` conditions but give no ``os`` or ``arch``.
    """
    platforms: dict[str, None] = {}
    pythons: dict[str, None] = {}
    oses: set[str] = set()
    archs: set[str] = set()
    for tag in tags:
        platforms.setdefault(tag.platform, None)
        pythons.setdefault(tag.interpreter, None)
        os_name, arch = _platform_os_arch(tag.platform)
        if os_name:
            oses.add(os_name)
        archs.update(arch)
    return WheelTraits(
        platforms=tuple(sorted(platforms)),
        os=frozenset(oses),
        arch=frozenset(archs),
        version=str(version),
        pythons=tuple(sorted(pythons)),
        name=_canonical(name) if name else "",
    )
