"""The interpreter of the few CMake commands that package configs and generated export files use
to name files (``set``, ``list(APPEND)``, ``file(GLOB)``, ``foreach``, ``if``, ``include``,
``add_library(... IMPORTED)``, ``set_target_properties``, ...): one package config run from a fresh
scope, never by CMake; anything else is skipped, function and macro bodies are not run.

Every bound is checked: include depth, files per package config, blocks open at once, the length
of an expanded value; the commands run and the characters expanded are drawn from the run's
Budget."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Protocol

from wheelaudit.model.globs import Glob, GlobError
from wheelaudit.surface.cmake_language import OPENS, Arg, Command, split_list
from wheelaudit.surface.errors import SurfaceError
from wheelaudit.model.surface import ConfigVariable, ImportedTarget, Layout, Ref, display, looks_like_path

if TYPE_CHECKING:
    from wheelaudit.binary.budget import Budget


class Files(Protocol):
    """What a run reads through (the reader of a wheel's CMake files,
    :class:`wheelaudit.surface.cmake.CMakeReader`): each file's commands and block structure, read
    once for all the runs, where the files land, the platform and the run's budget."""

    platform: str | None
    layout: Layout
    budget: Budget

    def commands(self, member: str) -> list[Command]: ...

    def structure(self, commands: list[Command]) -> dict[int, tuple[list[int], int]]: ...

MAX_DEPTH = 16  # nested include()s
MAX_FILES = 256  # files read per package config
MAX_NESTING = 100  # blocks (if, foreach) open at once, includes counted through
MAX_VALUE = 1 << 20  # characters in one expanded value
MAX_ITEMS = 10_000  # items of one foreach
# (the commands run and the characters expanded are drawn from the run's one Budget, over all the
# package configs of the run: binary/budget.py)

# ---------------------------------------------------------------------------------------------
# evaluation

_VAR_REF = re.compile(r"\$(ENV|CACHE)?\{([^${}]*)\}")
UNKNOWN = "\0"  # what an undefined variable expands to: marks a value as unresolved
_FALSE = {"", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"}
_TRUE = {"1", "ON", "YES", "TRUE", "Y"}
_LIB_TYPES = {"SHARED", "STATIC", "MODULE", "UNKNOWN", "INTERFACE", "OBJECT"}
_GENEX_KEEP = re.compile(r"^\$<(?:LINK_ONLY|INSTALL_INTERFACE):(.*)>$", re.S)
_GENEX_DROP = re.compile(r"^\$<BUILD_INTERFACE:.*>$", re.S)


_COMPARE = {"STREQUAL", "EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL", "STRLESS", "STRGREATER",
            "VERSION_EQUAL", "VERSION_LESS", "VERSION_GREATER", "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL"}


def _compare(op: str, left: str, right: str) -> bool | None:
    """``if(a OP b)`` for the comparisons CMake defines, None when the operands do not fit."""
    if op == "STREQUAL":
        return left == right
    if op == "STRLESS":
        return left < right
    if op == "STRGREATER":
        return left > right
    a: tuple[float, ...] | tuple[int, ...]
    b: tuple[float, ...] | tuple[int, ...]
    try:
        if op.startswith("VERSION_"):
            a = tuple(int(x) for x in left.split(".")[:8]) if left else (0,)
            b = tuple(int(x) for x in right.split(".")[:8]) if right else (0,)
            n = max(len(a), len(b))
            a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
            op = op[len("VERSION_"):]
        else:
            if len(left) > 40 or len(right) > 40:
                return None
            a, b = (float(left),), (float(right),)
    except ValueError:
        return None
    return {"EQUAL": a == b, "LESS": a < b, "GREATER": a > b, "LESS_EQUAL": a <= b,
            "GREATER_EQUAL": a >= b}[op]


class _Return(Exception):
    pass


def _glob(pattern: str, recurse: bool) -> Glob:
    """A ``file(GLOB)`` pattern as a :class:`~wheelaudit.model.globs.Glob` (CMake's globs have no braces:
    they are literal here)."""
    escaped = pattern.replace("\\", "\\\\").replace("{", "\\{").replace("}", "\\}")
    try:
        return Glob(escaped, cross_slash=recurse)
    except GlobError as exc:
        raise SurfaceError(f"file(GLOB): {exc}") from None


#: what CMake defines for the platform a consumer builds on: a wheel for one OS is consumed on
#: that OS, so its configs' ``if(WIN32)`` / ``if(APPLE)`` branches are decided by the wheel's tags
PLATFORM_VARIABLES: dict[str, dict[str, str]] = {
    "linux": {"UNIX": "1", "LINUX": "1", "APPLE": "", "WIN32": "", "MSVC": "", "MINGW": "", "CYGWIN": "",
              "ANDROID": "", "IOS": "", "CMAKE_SYSTEM_NAME": "Linux", "CMAKE_SHARED_LIBRARY_PREFIX": "lib",
              "CMAKE_SHARED_LIBRARY_SUFFIX": ".so", "CMAKE_STATIC_LIBRARY_PREFIX": "lib",
              "CMAKE_STATIC_LIBRARY_SUFFIX": ".a"},
    "macos": {"UNIX": "1", "APPLE": "1", "LINUX": "", "WIN32": "", "MSVC": "", "MINGW": "", "CYGWIN": "",
              "ANDROID": "", "IOS": "", "CMAKE_SYSTEM_NAME": "Darwin", "CMAKE_SHARED_LIBRARY_PREFIX": "lib",
              "CMAKE_SHARED_LIBRARY_SUFFIX": ".dylib", "CMAKE_STATIC_LIBRARY_PREFIX": "lib",
              "CMAKE_STATIC_LIBRARY_SUFFIX": ".a"},
    "windows": {"WIN32": "1", "UNIX": "", "APPLE": "", "LINUX": "", "CYGWIN": "", "ANDROID": "", "IOS": "",
                "CMAKE_SYSTEM_NAME": "Windows", "CMAKE_SHARED_LIBRARY_PREFIX": "",
                "CMAKE_SHARED_LIBRARY_SUFFIX": ".dll", "CMAKE_STATIC_LIBRARY_PREFIX": "",
                "CMAKE_STATIC_LIBRARY_SUFFIX": ".lib"},
}


class Run:
    """One package config (or one orphan export file) run from a fresh scope."""

    def __init__(self, reader: Files, root: str, live: bool) -> None:
        self.reader = reader
        self.live = live
        self.vars: dict[str, str] = dict(PLATFORM_VARIABLES.get(reader.platform or "", {}))
        self.targets: dict[str, ImportedTarget] = {}
        self.reached: list[str] = []
        self.unresolved_includes: list[str] = []
        self.variables: list[ConfigVariable] = []
        self.budget = reader.budget
        self.nesting = 0
        self.depth = 0
        self.root = root
        self.stack: list[str] = []

    # -- values ---------------------------------------------------------------------------

    def expand(self, text: str) -> str:
        for _ in range(64):
            if "{" not in text:
                return text
            new = _VAR_REF.sub(self._lookup, text)
            if len(new) > MAX_VALUE:
                raise SurfaceError("variables expand beyond the bound")
            self.budget.build(len(new))
            if new == text:
                return text
            text = new
        raise SurfaceError("variable references nest beyond the bound")

    def _lookup(self, m: re.Match[str]) -> str:
        if m.group(1):  # $ENV{...}, $CACHE{...}: the consumer's
            return UNKNOWN
        return self.vars.get(m.group(2), UNKNOWN)

    def args(self, cmd: Command) -> list[str]:
        out: list[str] = []
        for a in cmd.args:
            if a.bracket:
                out.append(a.text)
            elif a.quoted:
                out.append(self.expand(a.text).replace("\\;", ";"))
            else:
                out.extend(split_list(self.expand(a.text)))
        return out

    def ref(self, text: str) -> Ref:
        return self.reader.layout.ref(text)

    # -- running --------------------------------------------------------------------------

    def run_file(self, member: str) -> None:
        if self.depth >= MAX_DEPTH:
            raise SurfaceError(f"includes nest deeper than {MAX_DEPTH}")
        if len(self.reached) >= MAX_FILES:
            raise SurfaceError(f"more than {MAX_FILES} files included")
        commands = self.reader.commands(member)
        inst = self.reader.layout.install_path(member)
        saved = (self.vars.get("CMAKE_CURRENT_LIST_FILE"), self.vars.get("CMAKE_CURRENT_LIST_DIR"))
        self.vars["CMAKE_CURRENT_LIST_FILE"] = inst
        self.vars["CMAKE_CURRENT_LIST_DIR"] = posixpath.dirname(inst)
        if member not in self.reached:
            self.reached.append(member)
        self.stack.append(member)
        self.depth += 1
        try:
            self.block(commands, 0, len(commands), certain=True)
        except _Return:
            pass
        finally:
            self.depth -= 1
            self.stack.pop()
            for key, value in zip(("CMAKE_CURRENT_LIST_FILE", "CMAKE_CURRENT_LIST_DIR"), saved, strict=False):
                if value is None:
                    self.vars.pop(key, None)
                else:
                    self.vars[key] = value

    @property
    def current(self) -> str:
        return self.stack[-1]

    def _match_end(self, commands: list[Command], i: int, end: int) -> tuple[list[int], int]:
        """Indices of the middle keywords (elseif/else) of the block opened at ``i`` and of its
        closing one, which must come before ``end``."""
        found = self.reader.structure(commands).get(i)
        if found is None or found[1] >= end:
            raise SurfaceError(f"line {commands[i].line}: {commands[i].name}() without {OPENS[commands[i].name]}()")
        return found

    def block(self, commands: list[Command], i: int, end: int, certain: bool) -> None:
        if self.nesting >= MAX_NESTING:
            raise SurfaceError(f"line {commands[i - 1].line if i else 1}: blocks nest deeper than {MAX_NESTING}")
        self.nesting += 1
        try:
            self._block(commands, i, end, certain)
        finally:
            self.nesting -= 1

    def _block(self, commands: list[Command], i: int, end: int, certain: bool) -> None:
        step = self.budget.step
        while i < end:
            step()
            cmd = commands[i]
            name = cmd.name
            if name == "if":
                mids, close = self._match_end(commands, i, end)
                bounds = [i] + mids + [close]
                for k in range(len(bounds) - 1):
                    head = commands[bounds[k]]
                    if head.name == "else":
                        verdict: bool | None = True
                    else:
                        verdict = self.condition(head)
                    if verdict is False:
                        continue
                    self.block(commands, bounds[k] + 1, bounds[k + 1], certain and verdict is True)
                    if verdict is True:
                        break
                i = close + 1
                continue
            if name in ("function", "macro", "while"):
                _, close = self._match_end(commands, i, end)
                i = close + 1
                continue
            if name == "foreach":
                _, close = self._match_end(commands, i, end)
                args = self.args(cmd)
                if args:
                    var, items = args[0], self.foreach_items(args[1:])
                    if items is not None:
                        for item in items:
                            self.vars[var] = item
                            self.block(commands, i + 1, close, certain)
                i = close + 1
                continue
            if name == "return":
                if certain:
                    raise _Return()
                i += 1
                continue
            handler = getattr(self, "cmd_" + name, None)
            if handler is not None:
                handler(self.args(cmd), cmd)
            i += 1

    def foreach_items(self, args: list[str]) -> list[str] | None:
        if args and args[0] == "RANGE":
            return None
        if args and args[0] == "IN":
            items: list[str] = []
            mode = None
            for a in args[1:]:
                if a in ("LISTS", "ITEMS", "ZIP_LISTS"):
                    mode = a
                elif mode == "LISTS":
                    value = self.vars.get(a)
                    if value is None:
                        return None
                    items.extend(split_list(value))
                elif mode == "ITEMS":
                    items.append(a)
                else:
                    return None
        else:
            items = args
        if any(UNKNOWN in x for x in items):
            return None
        if len(items) > MAX_ITEMS:
            raise SurfaceError("a foreach() over more items than the bound")
        return items

    # -- conditions -----------------------------------------------------------------------

    def condition(self, cmd: Command) -> bool | None:
        """True / False when decidable from what is known, None when not (both ways are taken)."""
        raw = list(cmd.args)
        if any(a.text in ("(", ")") and not a.quoted for a in raw):
            return None
        groups: list[list[Arg]] = [[]]
        ops: list[str] = []
        for a in raw:
            if not a.quoted and a.text in ("AND", "OR"):
                ops.append(a.text)
                groups.append([])
            else:
                groups[-1].append(a)
        values = [self._simple(g) for g in groups]
        result = values[0]
        for op, v in zip(ops, values[1:], strict=False):
            if op == "AND":
                result = False if (result is False or v is False) else (None if None in (result, v) else True)
            else:
                result = True if (result is True or v is True) else (None if None in (result, v) else False)
        return result

    def _operand(self, a: Arg) -> str | None:
        text = a.text if a.bracket else self.expand(a.text)
        if UNKNOWN in text:
            return None
        if not a.quoted and text in self.vars:
            value = self.vars[text]
            return None if UNKNOWN in value else value
        return text

    def _simple(self, args: list[Arg]) -> bool | None:
        negate = False
        while args and not args[0].quoted and args[0].text == "NOT":
            negate, args = not negate, args[1:]
        v = self._decide(args)
        return None if v is None else (v != negate)

    def _decide(self, args: list[Arg]) -> bool | None:
        if len(args) == 2 and not args[0].quoted:
            op = args[0].text
            operand = args[1].text if args[1].bracket else self.expand(args[1].text)
            if UNKNOWN in operand:
                return None
            if op == "TARGET":
                # the package's own targets as this run defined them (a consumer's first
                # find_package() sees none of them yet)
                return operand in self.targets
            if op == "DEFINED":
                return operand in self.vars
            if op == "EXISTS":
                ref = self.ref(operand)
                return ref.exists if ref.kind == "wheel" else None
            return None
        if len(args) == 3 and not args[1].quoted and args[1].text in _COMPARE:
            left, right = self._operand(args[0]), self._operand(args[2])
            if left is None or right is None:
                return None
            return _compare(args[1].text, left, right)
        if len(args) == 1:
            a = args[0]
            text = a.text if a.bracket else self.expand(a.text)
            if UNKNOWN in text:
                return None
            up = text.upper()
            if up in _TRUE:
                return True
            if up in _FALSE or up.endswith("-NOTFOUND"):
                return False
            if a.quoted:
                return None
            if text in self.vars:
                value = self.vars[text].upper()
                if UNKNOWN in value:
                    return None
                return not (value in _FALSE or value.endswith("-NOTFOUND"))
            return None
        return None

    # -- commands -------------------------------------------------------------------------

    def cmd_set(self, args: list[str], cmd: Command) -> None:
        if not args:
            return
        values = args[1:]
        if "CACHE" in values:
            values = values[: values.index("CACHE")]
            if args[0] in self.vars:  # a cache entry does not override a normal variable
                return
        if values and values[-1] == "PARENT_SCOPE":
            values = values[:-1]
        if values:
            self.vars[args[0]] = ";".join(values)
        else:
            self.vars.pop(args[0], None)
        if self.live and values and "INCLUDE" in args[0].upper() and not args[0].startswith("_"):
            for item in split_list(";".join(values)):
                if "/" in item:
                    self._variable(ConfigVariable(self.current, args[0], self.ref(item)))

    def _variable(self, v: ConfigVariable) -> None:
        if not any(x.name == v.name and x.ref == v.ref for x in self.variables):
            self.variables.append(v)

    def cmd_set_and_check(self, args: list[str], cmd: Command) -> None:
        if len(args) >= 2:
            self.vars[args[0]] = args[1]
            if self.live:
                self._variable(ConfigVariable(self.current, args[0], self.ref(args[1]), checked=True))

    def cmd_unset(self, args: list[str], cmd: Command) -> None:
        if args:
            self.vars.pop(args[0], None)

    def cmd_get_filename_component(self, args: list[str], cmd: Command) -> None:
        if len(args) < 3:
            return
        var, value, mode = args[0], args[1], args[2]
        if UNKNOWN in value:
            self.vars[var] = UNKNOWN
            return
        if mode in ("PATH", "DIRECTORY"):
            result = posixpath.dirname(value.rstrip("/")) if value.rstrip("/") else ""
            if value.endswith("/") and value.rstrip("/"):
                result = value.rstrip("/")
        elif mode in ("ABSOLUTE", "REALPATH"):
            base = value
            if not base.startswith("/"):
                base = posixpath.join(self.vars.get("CMAKE_CURRENT_SOURCE_DIR", UNKNOWN), base)
            result = posixpath.normpath(base) if UNKNOWN not in base else UNKNOWN
        elif mode == "NAME":
            result = posixpath.basename(value)
        elif mode in ("NAME_WE", "NAME_WLE"):
            b = posixpath.basename(value)
            result = b.split(".", 1)[0] if mode == "NAME_WE" else b.rsplit(".", 1)[0]
        elif mode in ("EXT", "LAST_EXT"):
            b = posixpath.basename(value)
            result = ("." + b.split(".", 1)[1]) if "." in b else ""
        else:
            result = UNKNOWN
        self.vars[var] = result

    def cmd_list(self, args: list[str], cmd: Command) -> None:
        if len(args) >= 2 and args[0] in ("APPEND", "PREPEND"):
            items = split_list(self.vars.get(args[1], ""))
            items = items + args[2:] if args[0] == "APPEND" else args[2:] + items
            self.vars[args[1]] = ";".join(items)

    def cmd_file(self, args: list[str], cmd: Command) -> None:
        if len(args) >= 3 and args[0] == "REAL_PATH":  # file(REAL_PATH path out [BASE_DIRECTORY dir])
            path, out = args[1], args[2]
            base = args[args.index("BASE_DIRECTORY") + 1] if "BASE_DIRECTORY" in args[3:-1] else \
                self.vars.get("CMAKE_CURRENT_SOURCE_DIR", UNKNOWN)
            full = path if path.startswith("/") else posixpath.join(base, path)
            self.vars[out] = UNKNOWN if UNKNOWN in full else posixpath.normpath(full)
            return
        if len(args) < 2 or args[0] not in ("GLOB", "GLOB_RECURSE"):
            return
        var, rest = args[1], args[2:]
        relative = None
        patterns = []
        skip = False
        for k, a in enumerate(rest):
            if skip:
                skip = False
                continue
            if a in ("LIST_DIRECTORIES", "RELATIVE"):
                skip = True
                if a == "RELATIVE" and k + 1 < len(rest):
                    relative = rest[k + 1]
                continue
            if a in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"):
                continue
            patterns.append(a)
        if any(UNKNOWN in p for p in patterns) or not all(p.startswith("/") for p in patterns):
            self.vars[var] = UNKNOWN
            return
        found: set[str] = set()
        for p in patterns:
            p = posixpath.normpath(p)
            g = _glob(p, args[0] == "GLOB_RECURSE")
            # the candidates: what lies under the pattern's literal leading directories
            literal = re.split(r"[*?\[]", p, maxsplit=1)[0]
            base = literal.rsplit("/", 1)[0] if "/" in literal else ""
            found.update(inst for inst in self.reader.layout.installed_under(base) if g.match(inst))
        result = sorted(found)
        if relative and UNKNOWN not in relative:
            result = [posixpath.relpath(r, relative) for r in result]
        self.vars[var] = ";".join(result)

    def cmd_include(self, args: list[str], cmd: Command) -> None:
        if not args:
            return
        target = args[0]
        if UNKNOWN in target:
            self.unresolved_includes.append(display(target))
            return
        candidates = []
        if target.startswith("/"):
            candidates.append(posixpath.normpath(target))
        elif "/" not in target and not target.endswith(".cmake"):
            # a module: CMAKE_MODULE_PATH first, then CMake's own modules (not the wheel's)
            for d in split_list(self.vars.get("CMAKE_MODULE_PATH", "")):
                if d.startswith("/") and UNKNOWN not in d:
                    candidates.append(posixpath.normpath(posixpath.join(d, target + ".cmake")))
            if not candidates:
                return
        else:  # relative to the consumer's source directory: not a file of the wheel
            self.unresolved_includes.append(target)
            return
        for c in candidates:
            member = self.reader.layout.member(c)
            if member is not None:
                self.run_file(member)
                return
        if "/" in target:
            self.unresolved_includes.append(display(candidates[0]))

    def cmd_add_library(self, args: list[str], cmd: Command) -> None:
        if len(args) < 2 or "IMPORTED" not in args[1:]:
            return
        name = args[0]
        if UNKNOWN in name or name in self.targets:
            return
        kind = next((a for a in args[1:] if a in _LIB_TYPES), "UNKNOWN")
        t = ImportedTarget(name=name, type=kind, export_file=self.current, live=self.live,
                           defined_in=[self.current])
        self.targets[name] = t

    def _touch(self, t: ImportedTarget) -> None:
        if self.current not in t.defined_in:
            t.defined_in.append(self.current)

    def cmd_set_target_properties(self, args: list[str], cmd: Command) -> None:
        if "PROPERTIES" not in args:
            return
        k = args.index("PROPERTIES")
        names, props = args[:k], args[k + 1:]
        for name in names:
            t = self.targets.get(name)
            if t is None:
                continue
            self._touch(t)
            for j in range(0, len(props) - 1, 2):
                self.apply(t, props[j], props[j + 1], append=False)

    def cmd_set_property(self, args: list[str], cmd: Command) -> None:
        if not args or args[0] != "TARGET" or "PROPERTY" not in args:
            return
        k = args.index("PROPERTY")
        names = [a for a in args[1:k] if a not in ("APPEND", "APPEND_STRING")]
        append = "APPEND" in args[1:k]
        if k + 1 >= len(args):
            return
        prop, values = args[k + 1], args[k + 2:]
        for name in names:
            t = self.targets.get(name)
            if t is not None:
                self._touch(t)
                self.apply(t, prop, ";".join(values), append=append)

    def _target_command(self, args: list[str], prop: str) -> None:
        if not args or args[0] not in self.targets:
            return
        t = self.targets[args[0]]
        self._touch(t)
        items = [a for a in args[1:] if a not in ("INTERFACE", "PUBLIC", "PRIVATE", "SYSTEM", "BEFORE", "AFTER",
                                                   "LINK_INTERFACE_LIBRARIES", "LINK_PUBLIC", "LINK_PRIVATE")]
        self.apply(t, prop, ";".join(items), append=True)

    def cmd_target_link_libraries(self, args: list[str], cmd: Command) -> None:
        self._target_command(args, "INTERFACE_LINK_LIBRARIES")

    def cmd_target_include_directories(self, args: list[str], cmd: Command) -> None:
        self._target_command(args, "INTERFACE_INCLUDE_DIRECTORIES")

    def cmd_target_link_directories(self, args: list[str], cmd: Command) -> None:
        self._target_command(args, "INTERFACE_LINK_DIRECTORIES")

    def cmd_target_link_options(self, args: list[str], cmd: Command) -> None:
        self._target_command(args, "INTERFACE_LINK_OPTIONS")

    def cmd_target_compile_options(self, args: list[str], cmd: Command) -> None:
        self._target_command(args, "INTERFACE_COMPILE_OPTIONS")

    def apply(self, t: ImportedTarget, prop: str, value: str, append: bool) -> None:
        items = split_list(value)
        cfg = ""
        for base in ("IMPORTED_LOCATION", "IMPORTED_IMPLIB", "IMPORTED_SONAME"):
            if prop == base or prop.startswith(base + "_"):
                cfg = prop[len(base) + 1:]
                if not value:
                    return
                if base == "IMPORTED_LOCATION":
                    t.files[cfg] = self.ref(value)
                elif base == "IMPORTED_IMPLIB":
                    t.implibs[cfg] = self.ref(value)
                else:
                    t.sonames[cfg] = display(value)
                return
        if prop in ("INTERFACE_INCLUDE_DIRECTORIES", "INTERFACE_SYSTEM_INCLUDE_DIRECTORIES"):
            refs = [self.ref(x) for x in (_strip_genex(i) for i in items) if x is not None]
            t.include_dirs = (t.include_dirs if append else []) + [r for r in refs if r not in t.include_dirs]
        elif prop == "INTERFACE_LINK_LIBRARIES" or prop.startswith("IMPORTED_LINK_INTERFACE_LIBRARIES"):
            new = [link_item(x, self.reader.layout) for x in (_strip_genex(i) for i in items) if x is not None]
            if prop == "INTERFACE_LINK_LIBRARIES" and not append:
                t.link_libraries = new
            else:
                t.link_libraries = t.link_libraries + [x for x in new if x not in t.link_libraries]
        elif prop == "INTERFACE_LINK_DIRECTORIES":
            t.other_paths += [self.ref(x) for x in (_strip_genex(i) for i in items) if x is not None]
        elif prop in ("INTERFACE_COMPILE_OPTIONS", "INTERFACE_LINK_OPTIONS"):
            for i in items:
                p = flag_path(i)
                if p is not None:
                    t.other_paths.append(self.ref(p))


def _strip_genex(item: str) -> str | None:
    """``$<LINK_ONLY:x>`` / ``$<INSTALL_INTERFACE:x>`` -> x; ``$<BUILD_INTERFACE:...>`` -> None."""
    if _GENEX_DROP.match(item):
        return None
    m = _GENEX_KEEP.match(item)
    return m.group(1) if m else item


_FLAG_PATH = re.compile(r"^(?:-[ILF]|-isystem|-iframework|-Wl,-rpath,|-Wl,-L|-Wl,-F)(.+)$")


def flag_path(item: str) -> str | None:
    """The path inside a flag (``-I/x``, ``-Wl,-rpath,/x``), or an item that is itself a path."""
    m = _FLAG_PATH.match(item)
    if m and looks_like_path(m.group(1)):
        return m.group(1)
    if looks_like_path(item):
        return item
    return None


def link_item(item: str, layout: Layout) -> str | Ref:
    """An INTERFACE_LINK_LIBRARIES item: a path becomes a Ref; target names and flags stay."""
    if looks_like_path(item) or UNKNOWN in item and "/" in item:
        return layout.ref(item)
    return item
