"""Each table of a rules file read into its typed rule (:mod:`wheelaudit.ruleset.model`), with
the getters of :class:`~wheelaudit.ruleset.validate.Context`.

Conventions (also in the README):

* ``component[2]`` in a message is the *second* ``[[component]]`` table (1-based).
* A key that takes a list (``expected``, ``symbols``, ``strings``, ``exempt``, ``must-need``,
  ``select``, ...) also accepts a single string.
* ``required`` defaults to ``true``; a ``[[file]]`` with none of ``count``/``min``/``max``
  means ``min = 1``; ``identity`` defaults to ``"filename"``.
* ``exempt``, ``allow-external``, ``provided-by``, ``forbid-rpath``, ``allow-rpath`` and the
  waiver's ``target`` and ``path`` are matched with ``*`` crossing ``/`` (they are applied to
  full paths and to basenames alike); every other path glob keeps ``*`` within a directory.
"""

from __future__ import annotations

import datetime as _dt
import re
from functools import partial
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from wheelaudit.model.codes import CodeError, parse_severities
from wheelaudit.ruleset.conditions import Condition
from wheelaudit.ruleset.errors import RulesError
from wheelaudit.ruleset.format import TABLES
from wheelaudit.model.globs import Glob, GlobError, linear_regex
from wheelaudit.ruleset.lines import KeyPath
from wheelaudit.ruleset.model import (
    AbiRule,
    BinaryRule,
    CMakeRule,
    ComponentRule,
    FileRule,
    GlobLimit,
    LibrariesRule,
    LimitsRule,
    LinkageRule,
    MetadataRule,
    ReleaseRule,
    Waiver,
)
from wheelaudit.ruleset.validate import Context, canonical_glob, describe

__all__ = ["parse_size", "SIZE_UNITS", "DIST_NAME_RE"]

# (the keys each table takes are declared once, with the schemas' descriptions, in ruleset/format.py)
_LIBRARIES_KEYS = TABLES["libraries"].names
_COMPONENT_KEYS = TABLES["component"].names
_CMAKE_KEYS = TABLES["cmake"].names
_FILE_KEYS = TABLES["file"].names
_BINARY_KEYS = TABLES["binary"].names
_METADATA_KEYS = TABLES["metadata"].names
_LINKAGE_KEYS = TABLES["linkage"].names
_LIMITS_KEYS = TABLES["limits"].names
_FILE_GLOB_KEYS = TABLES["limits.file-glob"].names
_WAIVE_KEYS = TABLES["waive"].names

#: a distribution name as PEP 508 writes it (also the JSON Schemas' pattern, scripts/gen_schemas.py)
DIST_NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def array_of_tables(ctx: Context, data: Mapping[str, Any], key: str, lenient: bool = False) -> list[dict[str, Any]]:
    """The array of tables ``key``. ``lenient``: an item that is not a table is a problem kept
    in ``ctx`` (the caller skips it) rather than raised."""
    value = data.get(key, [])
    if isinstance(value, dict):
        raise ctx.error((key,), f"expected an array of tables ([[{key}]]), got a single table ([{key}])")
    if not isinstance(value, list):
        raise ctx.error((key,), f"expected an array of tables ([[{key}]]), got {describe(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            problem = ctx.error((key, i), f"expected a table, got {describe(item)}")
            if not lenient:
                raise problem
            ctx.problems.append(problem)
    return value


def unknown_name(ctx: Context, path: KeyPath, name: str, known: Sequence[str]) -> RulesError:
    import difflib

    hint = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if hint:
        return ctx.error(path, f'no component is named "{name}" (did you mean "{hint[0]}"?)')
    if known:
        return ctx.error(
            path, f'no component is named "{name}" (components: {", ".join(known)})'
        )
    return ctx.error(path, f'no component is named "{name}" (the rules define no component)')


def parse_libraries(ctx: Context, value: Any) -> LibrariesRule:
    if isinstance(value, list):
        raise ctx.error(("libraries",), "expected a table ([libraries]), got an array ([[libraries]])")
    t = ctx.table(value, ("libraries",), _LIBRARIES_KEYS, required=TABLES["libraries"].required)
    p: KeyPath = ("libraries",)
    identity = "filename"
    if "identity" in t:
        identity = ctx.string(t["identity"], p + ("identity",))
        if identity not in ("filename", "off"):
            raise ctx.error(
                p + ("identity",), f'expected "filename" or "off", got {describe(identity)}'
            )
    return LibrariesRule(
        scope=ctx.globs(t["scope"], p + ("scope",)) if "scope" in t else None,
        expected=ctx.globs(t["expected"], p + ("expected",)),
        identity=identity,  # type: ignore[arg-type]
        when=ctx.condition(t["when"], p + ("when",)) if "when" in t else None,
        line=ctx.line(p),
        source=ctx.source,
    )


def parse_component(ctx: Context, i: int, value: dict[str, Any]) -> ComponentRule:
    p: KeyPath = ("component", i)
    t = ctx.table(value, p, _COMPONENT_KEYS, required=TABLES["component"].required)
    name = ctx.string(t["name"], p + ("name",))
    symbols = ctx.symbols(t["symbols"], p + ("symbols",)) if "symbols" in t else []
    strings: list[bytes] = []
    if "strings" in t:
        for s in ctx.strings(t["strings"], p + ("strings",)):
            b = s.encode("utf-8")
            if b not in strings:
                strings.append(b)
    required: bool | Condition = True
    if "required" in t:
        r = t["required"]
        if isinstance(r, bool):
            required = r
        elif isinstance(r, dict):
            required = ctx.condition(r, p + ("required",))
        else:
            raise ctx.error(
                p + ("required",),
                f"expected true, false or a condition table, got {describe(r)}",
            )
    rule = ComponentRule(
        name=name,
        symbols=symbols,
        strings=strings,
        strong_only=ctx.boolean(t["strong-only"], p + ("strong-only",))
        if "strong-only" in t
        else False,
        owner=ctx.glob(t["owner"], p + ("owner",)) if "owner" in t else None,
        required=required,
        exempt=ctx.globs(t["exempt"], p + ("exempt",), cross_slash=True) if "exempt" in t else [],
        when=ctx.condition(t["when"], p + ("when",)) if "when" in t else None,
        cmake_target=ctx.string(t["cmake-target"], p + ("cmake-target",)) if "cmake-target" in t else None,
        line=ctx.line(p),
        source=ctx.source,
    )
    if not symbols and not strings:  # (after every key's own check: a problem of no one key)
        key = "symbols" if "symbols" in t else ("strings" if "strings" in t else None)
        raise ctx.error(
            p + ((key,) if key else ()),
            'a component needs at least one entry in "symbols" or "strings"',
        )
    return rule


def parse_cmake(ctx: Context, value: Any) -> CMakeRule:
    if isinstance(value, list):
        raise ctx.error(("cmake",), "expected a table ([cmake]), got an array ([[cmake]])")
    p: KeyPath = ("cmake",)
    t = ctx.table(value, p, _CMAKE_KEYS, required=TABLES["cmake"].required)
    text = ctx.string(t["declares"], p + ("declares",))
    try:
        declares = linear_regex(text)
    except GlobError as exc:
        raise ctx.error(p + ("declares",), str(exc)) from None
    if "name" not in declares.groupindex:
        raise ctx.error(p + ("declares",), "the regular expression needs a named group (?P<name>...)")
    return CMakeRule(
        config=ctx.globs(t["config"], p + ("config",)),
        declares=declares,
        namespace=ctx.string(t["namespace"], p + ("namespace",), empty_ok=True) if "namespace" in t else "",
        line=ctx.line(p),
        source=ctx.source,
    )


def parse_file(ctx: Context, i: int, value: dict[str, Any]) -> FileRule:
    p: KeyPath = ("file", i)
    t = ctx.table(value, p, _FILE_KEYS, required=TABLES["file"].required)
    glob = ctx.glob(t["glob"], p + ("glob",))
    count = ctx.count(t["count"], p + ("count",)) if "count" in t else None
    lo = ctx.count(t["min"], p + ("min",)) if "min" in t else None
    hi = ctx.count(t["max"], p + ("max",)) if "max" in t else None
    name = ctx.string(t["name"], p + ("name",)) if "name" in t else glob.pattern
    beside = ctx.string(t["beside"], p + ("beside",)) if "beside" in t else None
    when = ctx.condition(t["when"], p + ("when",)) if "when" in t else None
    if count is not None and (lo is not None or hi is not None):
        which = "min" if lo is not None else "max"
        raise ctx.error(p + (which,), '"count" excludes "min" and "max": give one or the other')
    if lo is not None and hi is not None and lo > hi:
        raise ctx.error(p + ("max",), f"max ({hi}) is less than min ({lo})")
    if count is None and lo is None and hi is None:
        lo = 1
    return FileRule(
        name=name,
        glob=glob,
        count=count,
        min=lo,
        max=hi,
        beside=beside,
        when=when,
        line=ctx.line(p),
        source=ctx.source,
    )


def parse_binary(ctx: Context, i: int, value: dict[str, Any]) -> BinaryRule:
    p: KeyPath = ("binary", i)
    t = ctx.table(value, p, _BINARY_KEYS, required=TABLES["binary"].required)
    path = ctx.glob(t["path"], p + ("path",))
    return BinaryRule(
        name=ctx.string(t["name"], p + ("name",)) if "name" in t else path.pattern,
        path=path,
        count=ctx.count(t["count"], p + ("count",)) if "count" in t else None,
        must_not_define=ctx.strings(t["must-not-define"], p + ("must-not-define",), "component names")
        if "must-not-define" in t
        else [],
        must_import=ctx.symbols(t["must-import"], p + ("must-import",))
        if "must-import" in t
        else [],
        must_need=ctx.globs(t["must-need"], p + ("must-need",)) if "must-need" in t else [],
        must_not_need=ctx.globs(t["must-not-need"], p + ("must-not-need",))
        if "must-not-need" in t
        else [],
        must_need_all=ctx.globs(t["must-need-all"], p + ("must-need-all",), cross_slash=True, negatable=True)
        if "must-need-all" in t
        else [],
        when=ctx.condition(t["when"], p + ("when",)) if "when" in t else None,
        line=ctx.line(p),
        source=ctx.source,
    )


def parse_metadata(ctx: Context, i: int, value: dict[str, Any]) -> MetadataRule:
    p: KeyPath = ("metadata", i)
    t = ctx.table(value, p, _METADATA_KEYS)
    if "forbid-requires" not in t and "require" not in t:
        # (keyed to forbid-requires: when a bad value was left out, the complaint is that value's alone)
        raise ctx.error(p + ("forbid-requires",), 'missing: a [[metadata]] rule needs "forbid-requires" or "require" (or both)')
    forbid: list[Glob] = []
    if "forbid-requires" in t:
        names = ctx.strings(t["forbid-requires"], p + ("forbid-requires",), "globs")
        forbid = ctx.globs([canonical_glob(n) for n in names], p + ("forbid-requires",))
    require: list[str] = []
    if "require" in t:
        for n in ctx.strings(t["require"], p + ("require",), "distribution names"):
            if not DIST_NAME_RE.fullmatch(n):
                raise ctx.error(p + ("require",), f'"{n}" is not a valid distribution name')
            require.append(canonical_glob(n))
    return MetadataRule(
        name=ctx.string(t["name"], p + ("name",)) if "name" in t else f"metadata[{i + 1}]",
        forbid_requires=forbid,
        require=require,
        when=ctx.condition(t["when"], p + ("when",)) if "when" in t else None,
        line=ctx.line(p),
        source=ctx.source,
    )


def parse_abi(ctx: Context, value: Any) -> AbiRule:
    p: KeyPath = ("abi",)
    if isinstance(value, list):
        raise ctx.error(p, "expected a table ([abi]), got an array ([[abi]])")
    t = ctx.table(value, p, TABLES["abi"].names)
    rule = AbiRule(line=ctx.line(p), source=ctx.source)
    if "policy" in t:
        choices = TABLES["abi"].keys[0].choices
        if t["policy"] not in choices:
            raise ctx.error(p + ("policy",), f"expected one of {', '.join(map(repr, choices))}, got {describe(t['policy'])}")
        rule.policy = t["policy"]
    if "public" in t:
        rule.public = ctx.globs(t["public"], p + ("public",))
    return rule


def parse_release(ctx: Context, value: Any) -> ReleaseRule:
    p: KeyPath = ("release",)
    if isinstance(value, list):
        raise ctx.error(p, "expected a table ([release]), got an array ([[release]])")
    t = ctx.table(value, p, TABLES["release"].names)
    rule = ReleaseRule(line=ctx.line(p), source=ctx.source)
    if "platforms" in t:
        from wheelaudit.platforms.tags import parse_platform

        rule.platforms = ctx.strings(t["platforms"], p + ("platforms",), "platform tags")
        for tag in rule.platforms:
            if parse_platform(tag).os is None:
                raise ctx.error(p + ("platforms",), f'"{tag}" is not a platform tag wheelaudit knows '
                                                    '(manylinux_2_28_x86_64, macosx_14_0_arm64, win_amd64, ...)')
    if "only" in t:
        only = t["only"]
        if not isinstance(only, dict):
            raise ctx.error(p + ("only",), f"expected a table of globs and conditions, got {describe(only)}")
        for pattern, cond in only.items():
            kp = p + ("only", pattern)
            rule.only.append((ctx.glob(pattern, kp), ctx.condition(cond, kp)))
    return rule


def parse_linkage(ctx: Context, value: Any) -> LinkageRule:
    if isinstance(value, list):
        raise ctx.error(("linkage",), "expected a table ([linkage]), got an array ([[linkage]])")
    p: KeyPath = ("linkage",)
    t = ctx.table(value, p, _LINKAGE_KEYS)
    provided: dict[str, list[Glob]] = {}
    if "provided-by" in t:
        pb = t["provided-by"]
        if not isinstance(pb, dict):
            raise ctx.error(
                p + ("provided-by",),
                "expected a table of distribution names to lists of globs, "
                f"got {describe(pb)}",
            )
        for dist, globs in pb.items():
            dpath = p + ("provided-by", dist)
            if not DIST_NAME_RE.fullmatch(dist):
                raise ctx.error(dpath, f'"{dist}" is not a valid distribution name')
            provided[dist] = ctx.globs(globs, dpath, cross_slash=True)
    return LinkageRule(
        allow_external=ctx.globs(t["allow-external"], p + ("allow-external",), cross_slash=True)
        if "allow-external" in t
        else [],
        provided_by=provided,
        forbid_rpath=ctx.globs(t["forbid-rpath"], p + ("forbid-rpath",), cross_slash=True)
        if "forbid-rpath" in t
        else [],
        allow_rpath=ctx.globs(t["allow-rpath"], p + ("allow-rpath",), cross_slash=True)
        if "allow-rpath" in t
        else [],
        optional=ctx.globs(t["optional"], p + ("optional",), cross_slash=True) if "optional" in t else [],
        check=ctx.boolean(t["check"], p + ("check",)) if "check" in t else True,
        line=ctx.line(p),
        source=ctx.source,
    )


#: size units of the rules file (decimal and binary), in bytes
SIZE_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
_SIZE_RE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*")
_SIZE_HINT = 'an integer (bytes) or a string like "200 MB" (units B, KB, MB, GB, KiB, MiB, GiB)'


def parse_size(value: Any) -> int | None:
    """``value`` as a number of bytes: a non-negative integer, or ``"N UNIT"`` with a unit of
    :data:`SIZE_UNITS` spelled as there (``Mb`` is not ``MB``; ``N`` may have decimals, the
    result is rounded down); None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if not isinstance(value, str):
        return None
    m = _SIZE_RE.fullmatch(value)
    if m is None or m.group(2) not in SIZE_UNITS:
        return None
    from decimal import Decimal

    return int(Decimal(m.group(1)) * SIZE_UNITS[m.group(2)])


def _size(ctx: Context, value: Any, path: KeyPath) -> int:
    n = parse_size(value)
    if n is None:
        raise ctx.error(path, f"expected {_SIZE_HINT}, got {describe(value)}")
    return n


def parse_limits(ctx: Context, value: Any) -> LimitsRule:
    """``[limits]``: every bad key is kept as its own problem (``ctx.attempt``), the rest parsed."""
    p: KeyPath = ("limits",)
    if isinstance(value, list):
        raise ctx.error(p, "expected a table ([limits]), got an array ([[limits]])")
    t = ctx.table(value, p, _LIMITS_KEYS)
    rule = LimitsRule(line=ctx.line(p), source=ctx.source)
    ok = True
    for key in ("wheel-compressed", "wheel-uncompressed", "file"):
        if key in t:
            n = ctx.attempt(partial(_size, ctx, t[key], p + (key,)))
            ok = ok and n is not None
            setattr(rule, key.replace("-", "_"), n)
    if "files" in t:
        rule.files = ctx.attempt(lambda: ctx.count(t["files"], p + ("files",)))
        ok = ok and rule.files is not None
    if "file-glob" in t:
        globs = t["file-glob"]
        if isinstance(globs, dict):
            raise ctx.error(p + ("file-glob",), "expected an array of tables ([[limits.file-glob]]), "
                                                "got a single table ([limits.file-glob])")
        if not isinstance(globs, list):
            raise ctx.error(p + ("file-glob",),
                            f"expected an array of tables ([[limits.file-glob]]), got {describe(globs)}")
        for i, item in enumerate(globs):
            ip = p + ("file-glob", i)

            def one(item: Any = item, ip: KeyPath = ip) -> GlobLimit:
                g = ctx.table(item, ip, _FILE_GLOB_KEYS, required=TABLES["limits.file-glob"].required)
                glob = ctx.attempt(lambda: ctx.glob(g["glob"], ip + ("glob",)))
                most = ctx.attempt(lambda: _size(ctx, g["max"], ip + ("max",)))
                if glob is None or most is None:
                    raise Skip
                return GlobLimit(glob, most, ctx.line(ip))

            try:
                gl = ctx.attempt(one)
            except Skip:
                gl = None
            ok = ok and gl is not None
            if gl is not None:
                rule.file_globs.append(gl)
    if not ok:
        raise Skip
    return rule


class Skip(Exception):
    """A table whose problems are already kept in ``ctx.problems``."""


def parse_waiver(ctx: Context, i: int, value: dict[str, Any]) -> Waiver:
    p: KeyPath = ("waive", i)
    t = ctx.table(value, p, _WAIVE_KEYS, required=TABLES["waive"].required)
    until = None
    if "until" in t:
        u = t["until"]
        if isinstance(u, str):
            try:
                u = _dt.date.fromisoformat(u)
            except ValueError:
                raise ctx.error(
                    p + ("until",), f"expected a date like 2027-06-30, got {describe(t['until'])}"
                ) from None
        if isinstance(u, _dt.datetime) or not isinstance(u, _dt.date):
            raise ctx.error(p + ("until",), f"expected a date like 2027-06-30, got {describe(u)}")
        until = u
    return Waiver(
        code=ctx.code(t["code"], p + ("code",), whole=True),
        target=ctx.glob(t["target"], p + ("target",), cross_slash=True) if "target" in t else None,
        path=ctx.glob(t["path"], p + ("path",), cross_slash=True) if "path" in t else None,
        reason=ctx.string(t["reason"], p + ("reason",)).strip(),
        until=until,
        when=ctx.condition(t["when"], p + ("when",)) if "when" in t else None,
        line=ctx.line(p),
        source=ctx.source,
    )


def parse_severity(ctx: Context, value: Any, path: KeyPath) -> dict[str, Literal["error", "warning"]]:
    """``severity = {WA502 = "error", WA6 = "warning"}``: per code or family."""
    if not isinstance(value, dict):
        raise ctx.error(path, f'expected a table of codes and severities, like {{WA502 = "error"}}, got {describe(value)}')
    out: dict[str, Literal["error", "warning"]] = {}
    for key, level in value.items():
        try:
            out.update(parse_severities({key: level}))
        except CodeError as exc:
            ctx.problems.append(ctx.error(tuple(path) + (key,), str(exc)))
    return out


def parse_fail_on(ctx: Context, value: Any, path: KeyPath) -> Literal["error", "warning"]:
    if value not in ("error", "warning") or not isinstance(value, str):
        raise ctx.error(path, f'expected "error" or "warning", got {describe(value)}')
    return value  # type: ignore[return-value]
