"""CMake package configs and export files, read as text and never run.

A small reader of the CMake language (the tokens of cmake-language(7): bracket, quoted and
unquoted arguments, comments) and an interpreter of the few commands that generated export files
and package configs use to name files: ``set``, ``unset``, ``get_filename_component``,
``list(APPEND)``, ``file(GLOB)``, ``foreach``, ``if`` (conditions it can decide; both ways when it
cannot), ``include``, ``add_library(... IMPORTED)``, ``set_target_properties``, ``set_property``,
``target_link_libraries`` / ``target_include_directories`` and ``set_and_check``. Anything else is
skipped. Function and macro bodies are not run.

A package config (``*Config.cmake``, ``*-config.cmake``) is what ``find_package`` loads; every file
it includes, directly or through files it includes, is reached, with the variables it sets itself
and ``CMAKE_CURRENT_LIST_DIR`` / ``CMAKE_CURRENT_LIST_FILE`` resolved. An export file (one that
declares an imported target) that no config reaches is an orphan: it is read on its own, and its
targets are marked not live.

The language is :mod:`~wheelaudit.surface.cmake_language`'s, the interpreter
:mod:`~wheelaudit.surface.cmake_run`'s; a hand-written config's declarations are
:mod:`~wheelaudit.surface.declarations`'. Hostile text: every problem is a :class:`SurfaceError`; include depth, files and commands run per
package config, and the length of an expanded value are bounded.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable

from wheelaudit.binary.budget import Budget, BudgetSpent
from wheelaudit.surface.cmake_language import Command, block_structure, tokenize_prefix
from wheelaudit.surface.cmake_run import Run
from wheelaudit.surface.errors import SurfaceError
from wheelaudit.model.surface import ImportedTarget, Layout, PackageConfig

__all__ = ["CMakeReader", "read_cmake", "is_config_name", "package_name"]


def is_config_name(name: str) -> bool:
    """``XConfig.cmake`` / ``x-config.cmake``: the files ``find_package(X CONFIG)`` loads."""
    return (name.endswith("Config.cmake") and len(name) > len("Config.cmake")) or (
        name.endswith("-config.cmake") and len(name) > len("-config.cmake"))


def package_name(name: str) -> str:
    for suffix in ("Config.cmake", "-config.cmake"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


class CMakeReader:
    """Reads every CMake file of a wheel (see the module's docstring)."""

    def __init__(self, files: list[str], read_text: Callable[[str], str | None], layout: Layout,
                 platform: str | None = None, budget: Budget | None = None) -> None:
        self.files = files
        self.platform = platform
        self.read_text = read_text
        self.layout = layout
        self.budget = budget if budget is not None else Budget()
        self._commands: dict[str, list[Command]] = {}
        self._structure: dict[int, dict[int, tuple[list[int], int]]] = {}
        self.problems: dict[str, str] = {}
        self.texts: dict[str, str] = {}
        self.result: tuple[list[ImportedTarget], list[PackageConfig], dict[str, bool]] = ([], [], {})

    def commands(self, member: str) -> list[Command]:
        """The commands of ``member``; of a malformed one, those before its first syntax error (the
        error is kept in ``problems``): a config with a syntax error still shows what it declares."""
        cached = self._commands.get(member)
        if cached is not None:
            return cached
        if member in self.problems:
            raise SurfaceError(self.problems[member])
        text = self.read_text(member)
        if text is None:
            self.problems[member] = "could not be read as text"
            raise SurfaceError(self.problems[member])
        self.texts[member] = text
        cmds, error = tokenize_prefix(text)
        if error is not None:
            self.problems[member] = str(error)
        self._commands[member] = cmds
        return cmds

    def structure(self, commands: list[Command]) -> dict[int, tuple[list[int], int]]:
        """:func:`block_structure` of a file's commands, found once per file."""
        found = self._structure.get(id(commands))
        if found is None:
            found = self._structure[id(commands)] = block_structure(commands)
        return found

    def read(self) -> tuple[list[ImportedTarget], list[PackageConfig], dict[str, bool]]:
        cmake_files = sorted(f for f in self.files if f[-6:] == ".cmake")
        configs: list[PackageConfig] = []
        targets: dict[tuple[str, str], ImportedTarget] = {}
        reached: set[str] = set()
        for f in cmake_files:
            base = posixpath.basename(f)
            if not is_config_name(base):
                continue
            run = Run(self, f, live=True)
            try:
                run.run_file(f)
            except (SurfaceError, BudgetSpent) as exc:
                self.problems.setdefault(f, str(exc))
            pc = PackageConfig(path=f, package=package_name(base), includes=[r for r in run.reached if r != f],
                               unresolved_includes=run.unresolved_includes, variables=run.variables)
            configs.append(pc)
            reached.update(run.reached)
            for t in run.targets.values():
                targets.setdefault((t.name, t.export_file), t)
        export_files: dict[str, bool] = {t.export_file: True for t in targets.values()}
        for f in cmake_files:
            if f in reached or is_config_name(posixpath.basename(f)):
                continue
            text = self.read_text(f)
            if text is None or "IMPORTED" not in text or "add_library" not in text.lower():
                continue
            try:
                cmds = self.commands(f)
            except SurfaceError:
                continue
            if not any(c.name == "add_library" and any(a.text == "IMPORTED" for a in c.args) for c in cmds):
                continue
            run = Run(self, f, live=False)
            try:
                run.run_file(f)
            except (SurfaceError, BudgetSpent) as exc:
                self.problems.setdefault(f, str(exc))
            for t in run.targets.values():
                if (t.name, t.export_file) not in targets:
                    targets[(t.name, t.export_file)] = t
                    export_files.setdefault(t.export_file, False)
            export_files.setdefault(f, False)
            reached.update(run.reached)
        return list(targets.values()), configs, export_files


def read_cmake(files: Iterable[str], read_text: Callable[[str], str | None],
               layout: Layout | None = None, platform: str | None = None, budget: Budget | None = None) -> CMakeReader:
    """Read every CMake file of a wheel: the reader's ``result`` is (targets, package configs,
    export files -> live); ``problems`` (path -> why) and ``texts`` (path -> text) are kept.
    ``budget``: the run's (a fresh one when None)."""
    files = list(files)
    reader = CMakeReader(files, read_text, layout or Layout(files), platform, budget)
    reader.result = reader.read()
    return reader
