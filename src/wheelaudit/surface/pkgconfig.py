"""pkg-config ``.pc`` files, read as text (never by running pkg-config).

The format (pkg-config(1), pkgconf): ``name=value`` variables and ``Field: value`` fields, one per
line, ``#`` comments, ``\\`` continues a line; ``${var}`` expands a variable defined above (and
``${pcfiledir}``, the file's own directory). ``Libs``/``Libs.private``/``Cflags`` are split like a
shell's words. ``Requires`` names other packages, with optional version constraints.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable

from wheelaudit.surface.errors import SurfaceError
from wheelaudit.model.surface import PREFIX, SITE, Layout, PkgConfigFile, looks_like_path

MAX_VALUE = 1 << 20

_LINE = re.compile(r"^([A-Za-z0-9_.]+)\s*([=:])(.*)$", re.S)
_VAR = re.compile(r"\$\{([^${}]*)\}")
_UNKNOWN = "\0"
_VERSION_OP = {"=", "==", "!=", "<", "<=", ">", ">="}


def _expand(value: str, variables: dict[str, str]) -> str:
    for _ in range(64):
        new = _VAR.sub(lambda m: variables.get(m.group(1), _UNKNOWN), value)
        if len(new) > MAX_VALUE:
            raise SurfaceError("a variable expands beyond the bound")
        if new == value:
            return new.replace("$$", "$")
        value = new
    raise SurfaceError("variable references nest beyond the bound")


def _split(value: str) -> list[str]:
    try:
        return shlex.split(value, comments=False, posix=True)
    except ValueError:
        return value.split()


def _shown(text: str) -> str:
    return text.replace(SITE, "<site-packages>").replace(PREFIX, "<prefix>").replace(_UNKNOWN, "?")


def _requires(value: str) -> list[str]:
    out: list[str] = []
    skip_version = False
    for tok in re.split(r"[\s,]+", value.strip()):
        if not tok:
            continue
        if tok in _VERSION_OP:
            skip_version = True
            continue
        if skip_version:
            skip_version = False
            continue
        out.append(tok)
    return out


def parse_pc(text: str, path: str, layout: Layout) -> PkgConfigFile:
    """One .pc file. Raises :class:`SurfaceError` on text that is not one."""
    inst = Layout.install_path(path)
    variables: dict[str, str] = {"pcfiledir": posixpath.dirname(inst)}
    fields: dict[str, str] = {}
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending += raw[:-1]
            continue
        logical.append(pending + raw)
        pending = ""
    if pending:
        logical.append(pending)
    for line in logical:
        # a comment runs to the end of the line, unless the '#' is escaped
        line = re.sub(r"(?<!\\)#.*", "", line).replace("\\#", "#").strip()
        if not line:
            continue
        m = _LINE.match(line)
        if not m:
            raise SurfaceError(f"not a variable or a field: {line[:60]!r}")
        key, sep, value = m.group(1), m.group(2), m.group(3).strip()
        value = _expand(value, variables)
        if sep == "=":
            variables.setdefault(key, value)  # pkgconf: the first definition wins
        else:
            fields[key] = value
    pc = PkgConfigFile(path=path, name=posixpath.basename(path)[: -len(".pc")], variables=variables, fields=fields)
    pc.libs = _split(fields.get("Libs", ""))
    pc.libs_private = _split(fields.get("Libs.private", ""))
    pc.cflags = _split(fields.get("Cflags", ""))
    pc.requires = _requires(fields.get("Requires", ""))
    pc.requires_private = _requires(fields.get("Requires.private", ""))
    for item in pc.libs + pc.libs_private:
        if item.startswith("-L") and len(item) > 2:
            pc.lib_dirs.append(layout.ref(item[2:]))
        elif item.startswith("-l") and len(item) > 2:
            pc.libraries.append(item[2:])
        elif item.startswith("-F") and len(item) > 2:
            pc.other_paths.append(layout.ref(item[2:]))
        elif item.startswith("-Wl,-rpath,"):
            pc.other_paths.extend(layout.ref(p) for p in item[len("-Wl,-rpath,"):].split(",") if p)
        elif not item.startswith("-") and (looks_like_path(item) or _UNKNOWN in item):
            pc.files.append(layout.ref(item))
    for item in pc.cflags:
        if item.startswith("-I") and len(item) > 2:
            pc.include_dirs.append(layout.ref(item[2:]))
        elif item.startswith("-isystem") and len(item) > len("-isystem"):
            pc.include_dirs.append(layout.ref(item[len("-isystem"):]))
        elif item.startswith("-F") and len(item) > 2:
            pc.other_paths.append(layout.ref(item[2:]))
    # what the user reads: the installed prefix shown as such (the Refs above keep the resolution)
    pc.variables = {k: _shown(v) for k, v in variables.items()}
    pc.libs, pc.libs_private, pc.cflags = ([_shown(x) for x in xs] for xs in (pc.libs, pc.libs_private, pc.cflags))
    return pc


def read_pkgconfig(files: list[str], read_text: Callable[[str], str | None],
                   layout: Layout) -> tuple[list[PkgConfigFile], dict[str, str]]:
    """Every ``.pc`` file of the wheel, and the problems (path -> why) of those that are not."""
    out: list[PkgConfigFile] = []
    problems: dict[str, str] = {}
    for f in sorted(f for f in files if f[-3:] == ".pc"):
        text = read_text(f)
        if text is None:
            problems[f] = "could not be read as text"
            continue
        try:
            out.append(parse_pc(text, f, layout))
        except SurfaceError as exc:
            problems[f] = str(exc)
    return out, problems
