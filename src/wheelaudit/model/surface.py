"""The consumer surface as plain data: what a C++ or C project reads to link a wheel's libraries.

Nothing here reads a file. Every type is a plain, picklable dataclass.

Paths are resolved against where the wheel's members land once installed (:class:`Layout`):
a path the surface names is a :class:`Ref`, which says whether it lies inside the installed wheel
(and which member or directory it is), is an absolute path of the build machine, or could not be
resolved (an unknown variable, a generator expression).
"""

from __future__ import annotations

import bisect
import posixpath
import re
from dataclasses import dataclass, field
from typing import Literal

RefKind = Literal["wheel", "absolute", "unresolved"]

#: where the wheel is installed, as a virtual absolute path: the environment's prefix and its
#: site-packages (a real install has ``lib/pythonX.Y/site-packages``: the same depth)
PREFIX = "/<prefix>"
SITE = PREFIX + "/lib/python3/site-packages"

_WINDOWS_ABS = re.compile(r"^[A-Za-z]:[/\\]")
_PLACEHOLDER = re.compile(r"@[A-Za-z_][A-Za-z0-9_]*@")  # an unconfigured configure_file() variable


@dataclass(frozen=True)
class Ref:
    """A path named by the consumer surface.

    ``kind``: ``"wheel"`` when it lies in the installed wheel's prefix (``member`` is then the
    wheel path of the file or directory it names, or None when it names no member: it lies in the
    environment outside this wheel's files; ``exists`` says whether a member file or directory is
    there); ``"absolute"`` for an absolute path of the build machine; ``"unresolved"`` when a
    variable or generator expression could not be resolved. ``text`` is the path as resolved
    (``<site-packages>/...`` for the installed prefix).
    """

    text: str
    kind: RefKind
    member: str | None = None
    exists: bool = False
    is_dir: bool = False


@dataclass
class ImportedTarget:
    """An ``add_library(ns::t <TYPE> IMPORTED)`` target and its properties.

    ``files`` maps a configuration (``"RELEASE"``, ``""`` for ``IMPORTED_LOCATION`` without one)
    to the file it names; ``implibs`` likewise for ``IMPORTED_IMPLIB``; ``sonames`` to
    ``IMPORTED_SONAME``. ``export_file`` is the wheel path of the file that declared it; ``live``
    is True when a package config that ``find_package`` loads reaches that file.
    """

    name: str
    type: str
    export_file: str
    live: bool = False
    files: dict[str, Ref] = field(default_factory=dict)
    implibs: dict[str, Ref] = field(default_factory=dict)
    sonames: dict[str, str] = field(default_factory=dict)
    include_dirs: list[Ref] = field(default_factory=list)
    #: INTERFACE_LINK_LIBRARIES items: target names and flags as strings, paths as Refs
    link_libraries: list[str | Ref] = field(default_factory=list)
    #: INTERFACE_COMPILE_OPTIONS / INTERFACE_LINK_OPTIONS / INTERFACE_LINK_DIRECTORIES paths
    other_paths: list[Ref] = field(default_factory=list)
    #: the files that set its properties (the export file and its per-configuration files)
    defined_in: list[str] = field(default_factory=list)


@dataclass
class ConfigVariable:
    """A variable a package config sets to a path (``Foo_INCLUDE_DIRS``); ``checked`` when set
    with ``set_and_check`` (the config stops with a fatal error when the path does not exist)."""

    config: str
    name: str
    ref: Ref
    checked: bool = False


@dataclass
class PackageConfig:
    """A ``*Config.cmake`` / ``*-config.cmake`` file and what it reaches."""

    path: str
    package: str
    includes: list[str] = field(default_factory=list)  # wheel paths of files reached (transitively)
    unresolved_includes: list[str] = field(default_factory=list)  # include() arguments not followed
    variables: list[ConfigVariable] = field(default_factory=list)


@dataclass
class PkgConfigFile:
    """A ``.pc`` file with its variables expanded (``${pcfiledir}`` resolved)."""

    path: str
    name: str  # the package name pkg-config knows it by (file name less .pc)
    variables: dict[str, str] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)
    libs: list[str] = field(default_factory=list)  # Libs, split, expanded
    libs_private: list[str] = field(default_factory=list)
    cflags: list[str] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)  # package names (version constraints dropped)
    requires_private: list[str] = field(default_factory=list)
    lib_dirs: list[Ref] = field(default_factory=list)  # -L
    include_dirs: list[Ref] = field(default_factory=list)  # -I
    libraries: list[str] = field(default_factory=list)  # -l names
    files: list[Ref] = field(default_factory=list)  # library files named directly in Libs
    other_paths: list[Ref] = field(default_factory=list)  # paths in other flags (-F, -Wl,-rpath,...)


@dataclass
class Surface:
    """Everything a wheel offers a C++/C consumer."""

    targets: list[ImportedTarget] = field(default_factory=list)
    configs: list[PackageConfig] = field(default_factory=list)
    export_files: dict[str, bool] = field(default_factory=dict)  # export file -> live
    pkgconfig: list[PkgConfigFile] = field(default_factory=list)
    #: files that could not be read as the format they claim to be: (path, why)
    problems: list[tuple[str, str]] = field(default_factory=list)
    #: the text of every CMake file read (for the ``[cmake] declares`` patterns of the rules)
    texts: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def empty(self) -> bool:
        return not (self.targets or self.configs or self.pkgconfig or self.problems)

    def target(self, name: str) -> ImportedTarget:
        """The target named ``name`` (the live one when there are several)."""
        found = sorted((t for t in self.targets if t.name == name), key=lambda t: not t.live)
        if not found:
            raise KeyError(name)
        return found[0]

    @property
    def orphans(self) -> list[str]:
        return sorted(p for p, live in self.export_files.items() if not live)


class Layout:
    """Where each member of a wheel lands once installed, and back.

    Members land under site-packages, except a wheel's ``<name>.data/<scheme>/`` trees: ``data``
    lands in the environment's prefix, ``headers`` under ``include/``, ``scripts`` under ``bin/``,
    ``purelib`` / ``platlib`` in site-packages. Nothing is computed per member up front but a sort
    (a wheel has thousands of members and its surface names a few dozen paths).
    """

    def __init__(self, files: list[str]) -> None:
        self.files = set(files)
        self._sorted = sorted(self.files)
        #: installed path -> member, for the members of ``<name>.data/`` trees (few)
        self._data = {self.install_path(f): f for f in files if ".data/" in f and _scheme(f) is not None}
        self._data_sorted = sorted(self._data)

    @staticmethod
    def install_path(member: str) -> str:
        scheme = _scheme(member)
        if scheme is None:
            return SITE + "/" + member
        top, kind, rest = member.split("/", 2)
        if kind == "data":
            return PREFIX + "/" + rest
        if kind == "headers":
            return PREFIX + "/include/" + top[: -len(".data")].split("-")[0] + "/" + rest
        if kind == "scripts":
            return PREFIX + "/bin/" + rest
        return SITE + "/" + rest

    def member(self, installed: str) -> str | None:
        """The member installed at ``installed`` (a normalized virtual path), or None."""
        if installed.startswith(SITE + "/"):
            m = installed[len(SITE) + 1:]
            if m in self.files and _scheme(m) is None:
                return m
        return self._data.get(installed)

    def directory(self, installed: str) -> str | None:
        """The member directory installed at ``installed`` ("" for site-packages itself), or None
        when no member lies under it."""
        if installed == SITE or (SITE.startswith(installed + "/")):
            return ""
        if installed.startswith(SITE + "/"):
            d = installed[len(SITE) + 1:]
            if _any_under(self._sorted, d + "/"):
                return d
        found = _first_under(self._data_sorted, installed + "/")
        if found is not None:
            member = self._data[found]
            return member[: len(member) - (len(found) - len(installed))]
        return None

    def installed_under(self, installed_dir: str) -> list[str]:
        """The installed paths of every member under ``installed_dir`` (at any depth), sorted."""
        out = []
        if installed_dir == SITE or installed_dir.startswith(SITE + "/"):
            d = installed_dir[len(SITE) + 1:]
            prefix = d + "/" if d else ""
            out = [SITE + "/" + m for m in _all_under(self._sorted, prefix) if _scheme(m) is None]
        elif SITE.startswith(installed_dir + "/") or installed_dir in ("", "/"):
            out = [SITE + "/" + m for m in self._sorted if _scheme(m) is None]
        out += _all_under(self._data_sorted, installed_dir.rstrip("/") + "/")
        return sorted(out)

    def ref(self, text: str) -> Ref:
        """Classify a path as written (variables already expanded)."""
        if "\0" in text or "$<" in text or "${" in text or "$ENV{" in text or _PLACEHOLDER.search(text):
            return Ref(display(text), "unresolved")
        if text.startswith(PREFIX + "/") or text == PREFIX:
            norm = posixpath.normpath(text)
            if not (norm == PREFIX or norm.startswith(PREFIX + "/")):
                return Ref(display(text), "wheel")  # climbs out of the environment: nothing there
            member = self.member(norm)
            if member is not None:
                return Ref(display(norm), "wheel", member, True, False)
            d = self.directory(norm)
            if d is not None:
                return Ref(display(norm), "wheel", d, True, True)
            return Ref(display(norm), "wheel", norm[len(SITE) + 1:] if norm.startswith(SITE + "/") else None, False)
        if text.startswith("/") or _WINDOWS_ABS.match(text) or text.startswith("\\\\"):
            return Ref(text, "absolute")
        return Ref(text, "unresolved")


def _scheme(member: str) -> str | None:
    """The scheme of a ``<name>.data/<scheme>/...`` member, None for any other."""
    top, sep, rest = member.partition("/")
    if sep and top.endswith(".data") and "/" in rest:
        return rest.split("/", 1)[0]
    return None


def _first_under(items: list[str], prefix: str) -> str | None:
    i = bisect.bisect_left(items, prefix)
    return items[i] if i < len(items) and items[i].startswith(prefix) else None


def _any_under(items: list[str], prefix: str) -> bool:
    return _first_under(items, prefix) is not None


def _all_under(items: list[str], prefix: str) -> list[str]:
    i = bisect.bisect_left(items, prefix)
    out = []
    while i < len(items) and items[i].startswith(prefix):
        out.append(items[i])
        i += 1
    return out


def looks_like_path(item: str) -> bool:
    """An absolute path, as opposed to an MSVC option (``/EHsc``: one slash), a flag or a name."""
    if item.startswith("/"):
        return item.count("/") >= 2 or item.startswith("/<prefix>")
    return bool(_WINDOWS_ABS.match(item)) or item.startswith("\\\\")


def display(path: str) -> str:
    """A virtual installed path as shown to users."""
    if path.startswith(SITE):
        return "<site-packages>" + path[len(SITE):]
    return path.replace("\0", "?")


@dataclass(frozen=True)
class Declaration:
    """A target a hand-written package config declares (see
    :func:`wheelaudit.surface.declarations.read_declarations`): ``library`` is the base name
    (``executorch_backend_mlx`` for ``libexecutorch_backend_mlx.so``)."""

    target: str
    library: str
    config: str
