"""The consumer surface as plain data: what a C++ or C project reads to link a wheel's libraries.

Nothing here reads a file. Every type is a plain, picklable dataclass.

Paths are resolved against where the wheel's members land once installed (:class:`Layout`):
a path the surface names is a :class:`Ref`, which says whether it lies inside the installed wheel
(and which member or directory it is), is an absolute path of the build machine, or could not be
resolved (an unknown variable, a generator expression).
"""

from __future__ import annotations

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
    ``purelib`` / ``platlib`` in site-packages.
    """

    def __init__(self, files: list[str]) -> None:
        self.installed: dict[str, str] = {}  # member -> installed path
        self.members: dict[str, str] = {}  # installed path -> member
        self.dirs: dict[str, str] = {}  # installed directory -> member directory
        for f in files:
            inst = self.install_path(f)
            self.installed[f] = inst
            self.members.setdefault(inst, f)
            d, md = posixpath.dirname(inst), posixpath.dirname(f)
            while d != PREFIX and d.startswith(PREFIX + "/") and d not in self.dirs:
                self.dirs[d] = md
                d, md = posixpath.dirname(d), posixpath.dirname(md)

    @staticmethod
    def install_path(member: str) -> str:
        parts = member.split("/")
        if len(parts) >= 3 and parts[0].endswith(".data"):
            scheme, rest = parts[1], "/".join(parts[2:])
            if scheme == "data":
                return posixpath.join(PREFIX, rest)
            if scheme == "headers":
                return posixpath.join(PREFIX, "include", parts[0][: -len(".data")].split("-")[0], rest)
            if scheme == "scripts":
                return posixpath.join(PREFIX, "bin", rest)
            return posixpath.join(SITE, rest)
        return posixpath.join(SITE, member)

    def ref(self, text: str) -> Ref:
        """Classify a path as written (variables already expanded)."""
        if "\0" in text or "$<" in text or "${" in text or "$ENV{" in text or _PLACEHOLDER.search(text):
            return Ref(display(text), "unresolved")
        if text.startswith(PREFIX + "/") or text == PREFIX:
            norm = posixpath.normpath(text)
            if not (norm == PREFIX or norm.startswith(PREFIX + "/")):
                return Ref(display(text), "wheel")  # climbs out of the environment: nothing there
            if norm in self.members:
                return Ref(display(norm), "wheel", self.members[norm], True, False)
            if norm in self.dirs:
                return Ref(display(norm), "wheel", self.dirs[norm], True, True)
            member = None
            if norm.startswith(SITE + "/"):
                member = norm[len(SITE) + 1:]
            return Ref(display(norm), "wheel", member, False)
        if text.startswith("/") or _WINDOWS_ABS.match(text) or text.startswith("\\\\"):
            return Ref(text, "absolute")
        return Ref(text, "unresolved")


def display(path: str) -> str:
    """A virtual installed path as shown to users."""
    if path.startswith(SITE):
        return "<site-packages>" + path[len(SITE):]
    return path.replace("\0", "?")
