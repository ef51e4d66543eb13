"""The rules file (SPEC section 3): read (TOML by :mod:`tomllib`, ``tomli`` on Python 3.10) and
assembled, table by table, into a :class:`~wheelaudit.ruleset.model.Ruleset`.

Every problem is a :class:`~wheelaudit.ruleset.errors.RulesError` that names the file, the line,
the key and what was expected; unknown keys are errors everywhere, with a suggestion; every
problem of a file is reported at once. The typed rules are :mod:`wheelaudit.ruleset.model`, where
a key is written :mod:`wheelaudit.ruleset.lines`, the getters :mod:`wheelaudit.ruleset.validate`,
each table :mod:`wheelaudit.ruleset.tables`.
"""

from __future__ import annotations

import os
import re
import sys
from functools import partial
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from wheelaudit.ruleset.errors import RulesError
from wheelaudit.ruleset.format import TABLES
from wheelaudit.ruleset.model import Ruleset
from wheelaudit.ruleset.tables import (
    Skip,
    array_of_tables,
    parse_abi,
    parse_binary,
    parse_cmake,
    parse_component,
    parse_fail_on,
    parse_file,
    parse_libraries,
    parse_limits,
    parse_linkage,
    parse_metadata,
    parse_release,
    parse_severity,
    parse_waiver,
    unknown_name,
)
from wheelaudit.ruleset.validate import Context, describe, fmt_path

__all__ = [
    "MAX_RULES_SIZE",
    "MAX_KEY_PARTS",
    "load_rules",
    "parse_rules",
    "ruleset_from_dict",
    "read_toml_file",
    "parse_toml_text",
]

#: The largest rules file (or pyproject.toml) wheelaudit reads, in bytes.
MAX_RULES_SIZE = 5 * 1024 * 1024

#: the top-level keys (declared once, with the schemas' descriptions, in ruleset/format.py)
_TOP_KEYS = TABLES[""].names


def _syntax_error(exc: Exception, source: str, text: str) -> RulesError:
    msg = str(exc)
    line = col = None
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", msg)
    if m:
        line, col = int(m.group(1)), int(m.group(2))
        msg = msg[: m.start()]
    else:
        m = re.search(r"\s*\(at end of document\)\s*$", msg)
        if m:
            line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
            msg = msg[: m.start()]
    where = f" (column {col})" if col is not None else ""
    return RulesError(f"TOML syntax error: {msg}{where}", source=source, line=line, column=col)


#: The most dotted parts one key may have (``a.b.c`` has 3). tomllib's cost grows with the
#: square of a key's depth (a 200 kB line of ``a.a.a...`` takes minutes), so deeper keys are
#: refused before parsing; a rules file needs five or six.
MAX_KEY_PARTS = 128


def _deepest_key(line: str) -> int:
    """The most dots in one stretch of ``line`` between ``= , { } [ ]``, outside strings and
    comments: the parts of its deepest key, less one. (A value such as ``1.5`` has one.)"""
    deepest = dots = 0
    quote = ""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c == '"' or c == "'":
            quote = c
        elif c == ".":
            dots += 1
            if dots > deepest:
                deepest = dots
        elif c in "=,{}[]":
            dots = 0
        elif c == "#":
            break
        i += 1
    return deepest


def _check_key_depth(text: str, source: str) -> None:
    if text.count(".") <= MAX_KEY_PARTS:
        return
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.count(".") > MAX_KEY_PARTS and _deepest_key(line) >= MAX_KEY_PARTS:
            raise RulesError(
                f"a key with more than {MAX_KEY_PARTS} dotted parts (tables nested that deep are not "
                "rules)",
                source=source,
                line=lineno,
            )


def parse_toml_text(text: str, source: str = "<string>") -> dict[str, Any]:
    """Parse TOML text with :mod:`tomllib`; any problem is a :class:`RulesError`."""
    if len(text) > MAX_RULES_SIZE:
        raise RulesError(
            f"the file is larger than {MAX_RULES_SIZE // (1024 * 1024)} MB", source=source
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    _check_key_depth(text, source)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(exc, source, text) from None
    except RecursionError:
        raise RulesError("TOML values are nested too deeply", source=source) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise RulesError(f"a TOML value cannot be read: {exc}", source=source) from None


def read_toml_file(path: str | os.PathLike[str]) -> tuple[str, dict[str, Any]]:
    """Read and parse a TOML file: ``(text, data)``. Missing, unreadable, too large (over
    :data:`MAX_RULES_SIZE`), non-UTF-8 or malformed files raise :class:`RulesError`."""
    source = str(path)
    p = Path(path)
    try:
        if p.is_dir():
            raise RulesError("is a directory, not a TOML file", source=source)
        size = p.stat().st_size
        if size > MAX_RULES_SIZE:
            raise RulesError(
                f"the file is {size} bytes; at most {MAX_RULES_SIZE} bytes "
                f"({MAX_RULES_SIZE // (1024 * 1024)} MB) are read",
                source=source,
            )
        with open(p, "rb") as fh:
            data = fh.read(MAX_RULES_SIZE + 1)
    except FileNotFoundError:
        raise RulesError("no such file", source=source) from None
    except OSError as exc:
        raise RulesError(f"cannot read: {exc.strerror or exc}", source=source) from None
    if len(data) > MAX_RULES_SIZE:
        raise RulesError(
            f"the file is larger than {MAX_RULES_SIZE // (1024 * 1024)} MB", source=source
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RulesError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded", source=source,
            line=line,
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, parse_toml_text(text, source)


def ruleset_from_dict(
    data: dict[str, Any],
    source: str,
    text: str | None = None,
    *,
    table: str | None = None,
    require_version: bool = True,
    path: str | os.PathLike[str] | None = None,
    extra_keys: Sequence[str] = (),
) -> Ruleset:
    """Validate parsed TOML ``data`` into a :class:`Ruleset`.

    ``source`` names the file in messages; ``text`` (the TOML text ``data`` came from) lets
    messages give lines. ``table`` is the dotted key the ruleset sits under in that text
    (``"tool.wheelaudit"`` for the inline pyproject form), ``require_version=False`` makes
    ``version`` optional (default 1), and ``extra_keys`` are top-level keys to accept and
    ignore (the caller handles them).
    """
    prefix = tuple(table.split(".")) if table else ()
    ctx = Context(data, source, text, prefix)
    try:
        return _ruleset(ctx, data, require_version, path, extra_keys)
    except RecursionError:
        raise RulesError("values are nested too deeply", source=source) from None


def _ruleset(
    ctx: Context,
    data: Mapping[str, Any],
    require_version: bool,
    path: str | os.PathLike[str] | None,
    extra_keys: Sequence[str],
) -> Ruleset:
    if not isinstance(data, dict):
        raise ctx.error((), f"expected a table, got {describe(data)}")
    ctx.table(data, (), tuple(_TOP_KEYS) + tuple(extra_keys))
    if "version" not in data:
        if require_version:  # (kept, and the rest read as version 1: every problem at once)
            ctx.problems.append(RulesError(
                'missing: a rules file must say which format it is written in; add "version = 1"',
                source=ctx.source,
                line=1 if ctx.locator is not None else None,
                key=fmt_path(ctx.prefix + ("version",)),
                context=fmt_path(ctx.prefix) or None,
                leaf="version",
            ))
        version = 1
    else:
        version = data["version"]
        if isinstance(version, bool) or not isinstance(version, int):  # (kept; the rest read as version 1)
            ctx.problems.append(ctx.error(("version",), f"expected the integer 1, got {describe(version)}"))
            version = 1
        if version != 1:
            raise ctx.error(
                ("version",),
                f"unsupported rules version {version}: this wheelaudit reads version 1",
            )
    rs = Ruleset(version=version, source=ctx.source, path=Path(path) if path is not None else None)
    # Every problem is kept and validation goes on (ctx.attempt, ctx.each_key): one run names them all.
    if "name" in data:
        rs.name = ctx.attempt(lambda: ctx.string(data["name"], ("name",)))
    if "select" in data:
        rs.select = ctx.attempt(lambda: ctx.codes(data["select"], ("select",)))
    if "ignore" in data:
        rs.ignore = ctx.attempt(lambda: ctx.codes(data["ignore"], ("ignore",)))
    if "fail-on" in data:
        rs.fail_on = ctx.attempt(lambda: parse_fail_on(ctx, data["fail-on"], ("fail-on",)))
    if "severity" in data:
        rs.severity = ctx.attempt(lambda: parse_severity(ctx, data["severity"], ("severity",))) or {}
    if "libraries" in data:
        rs.libraries = ctx.each_key(("libraries",), data["libraries"], lambda v: parse_libraries(ctx, v))

    def entries(key: str) -> list[tuple[int, dict[str, Any]]]:
        items = ctx.attempt(lambda: array_of_tables(ctx, data, key, lenient=True)) or []
        return [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]

    seen: dict[str, int] = {}
    for i, item in entries("component"):
        comp = ctx.each_key(("component", i), item, partial(parse_component, ctx, i))
        if comp is None:
            if isinstance(item.get("name"), str):
                seen.setdefault(item["name"], i)  # (known by name, so that others may refer to it)
            continue
        if comp.name in seen:
            j = seen[comp.name]
            other = f"component[{j + 1}]"
            line = ctx.line(("component", j))
            if line is not None:
                other += f", line {line}"
            ctx.problems.append(ctx.error(
                ("component", i, "name"), f'duplicate component name "{comp.name}" (also {other})'
            ))
            continue
        seen[comp.name] = i
        rs.components.append(comp)
    names = list(seen)  # (every component the file defines by name, valid or not)

    for i, item in entries("file"):
        f = ctx.each_key(("file", i), item, partial(parse_file, ctx, i))
        beside = f.beside if f is not None else item.get("beside")
        if isinstance(beside, str) and beside not in seen:  # (checked in a file rule with problems too)
            ctx.problems.append(unknown_name(ctx, ("file", i, "beside"), beside, names))
            continue
        if f is not None:
            rs.files.append(f)

    for i, item in entries("binary"):
        b = ctx.each_key(("binary", i), item, partial(parse_binary, ctx, i))
        named = b.must_not_define if b is not None else item.get("must-not-define")
        named = [n for n in named if isinstance(n, str)] if isinstance(named, list) else []
        unknown = [n for n in named if n not in seen]
        for name in unknown:
            ctx.problems.append(unknown_name(ctx, ("binary", i, "must-not-define"), name, names))
        if b is not None and not unknown:
            rs.binaries.append(b)

    for i, item in entries("metadata"):
        m = ctx.each_key(("metadata", i), item, partial(parse_metadata, ctx, i))
        if m is not None:
            rs.metadata.append(m)

    if "linkage" in data:
        rs.linkage = ctx.each_key(("linkage",), data["linkage"], lambda v: parse_linkage(ctx, v)) or rs.linkage
    if "limits" in data:
        try:
            rs.limits = ctx.attempt(lambda: parse_limits(ctx, data["limits"]))
        except Skip:
            pass
    if "cmake" in data:
        rs.cmake = ctx.each_key(("cmake",), data["cmake"], lambda v: parse_cmake(ctx, v)) or rs.cmake
    if "abi" in data:
        rs.abi = ctx.each_key(("abi",), data["abi"], lambda v: parse_abi(ctx, v)) or rs.abi
    if "release" in data:
        rs.release = ctx.each_key(("release",), data["release"], lambda v: parse_release(ctx, v)) or rs.release

    for i, item in entries("waive"):
        w = ctx.each_key(("waive", i), item, partial(parse_waiver, ctx, i))
        if w is not None:
            rs.waivers.append(w)
    ctx.finish()
    return rs


def parse_rules(
    text: str, source: str = "<string>", *, path: str | Path | None = None
) -> Ruleset:
    """Parse and validate rules from TOML text. ``source`` names it in messages."""
    data = parse_toml_text(text, source)
    if text.startswith("\ufeff"):
        text = text[1:]
    return ruleset_from_dict(data, source, text, path=path)


def load_rules(path: str | os.PathLike[str]) -> Ruleset:
    """Load and validate a rules file (SPEC section 3). Every problem is a :class:`RulesError`."""
    text, data = read_toml_file(path)
    return ruleset_from_dict(data, str(path), text, path=path)
