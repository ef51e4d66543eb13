"""The rules file (SPEC section 3): loading, validation and the typed model.

TOML is parsed by :mod:`tomllib` (``tomli`` on Python 3.10); since neither reports positions,
the line of a table or key is recovered by locating its header or ``key =`` line in the text.
Every problem is a :class:`RulesError` that names the file, the line, the key and what was
expected; unknown keys are errors everywhere, with a suggestion.

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
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, Union

T = TypeVar("T")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from wheelaudit.ruleset.conditions import CONDITION_KEYS, KNOWN_OS, Condition, WheelTraits
from wheelaudit.ruleset.format import TABLES
from wheelaudit.model.finding import CODES
from wheelaudit.model.codes import CodeError, parse_code, parse_selector, parse_severities
from wheelaudit.model.globs import Glob, GlobError, NotGlob, SymbolPattern, linear_regex

__all__ = [
    "RulesError",
    "Ruleset",
    "LibrariesRule",
    "ComponentRule",
    "FileRule",
    "BinaryRule",
    "LinkageRule",
    "LimitsRule",
    "AbiRule",
    "ReleaseRule",
    "GlobLimit",
    "parse_size",
    "MetadataRule",
    "Waiver",
    "FINDING_CODES",
    "MAX_RULES_SIZE",
    "load_rules",
    "parse_rules",
    "ruleset_from_dict",
    "read_toml_file",
    "parse_toml_text",
]

#: The largest rules file (or pyproject.toml) wheelaudit reads, in bytes.
MAX_RULES_SIZE = 5 * 1024 * 1024

#: Finding codes of SPEC section 4 (from :mod:`wheelaudit.model.finding`, the one list of them).
#: Waivers, ``select`` and ``ignore`` must name one of these or a prefix of one.
FINDING_CODES: tuple[str, ...] = tuple(sorted(CODES))

# =============================================================================================
# Errors


def _clip(text: str, limit: int = 200) -> str:
    """``text`` shortened to about ``limit`` characters, its start and its end kept (names and
    values in messages come from the file)."""
    if len(text) <= limit:
        return text
    half = (limit - 30) // 2
    return text[:half] + f" ... ({len(text)} characters) ... " + text[-half:]


class RulesError(Exception):
    """An unreadable or invalid rules file.

    ``source`` is the file (as given), ``line`` the 1-based line or ``None``, ``key`` the dotted
    key (``component[2].strong-only``; ``None`` for a problem with the whole file) and
    ``message`` what is wrong. ``str()`` gives all of it on one line::

        rules/x.toml:14: component[2] "backend_mlx": key "strong_only": unknown key (did you mean "strong-only"?)
    """

    def __init__(
        self,
        message: str,
        *,
        source: str = "<string>",
        line: int | None = None,
        key: str | None = None,
        context: str | None = None,
        leaf: str | None = None,
        column: int | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        self.key = key
        #: The table the key sits in, for display (``component[2] "backend_mlx"``).
        self.context = context
        #: The key relative to ``context``, for display (``strong-only``).
        self.leaf = leaf if leaf is not None else (key if context is None else None)
        super().__init__(str(self))

    def __str__(self) -> str:
        out = self.source
        if self.line is not None:
            out += f":{self.line}"
        out += ": "
        if self.context:
            out += f"{_clip(self.context)}: "
        if self.leaf:
            out += f'key "{_clip(self.leaf)}": '
        return out + _clip(self.message, 2000)

    def __reduce__(self):
        return (
            _rebuild_error,
            (self.message, self.source, self.line, self.key, self.context, self.leaf, self.column),
        )


class RulesErrors(RulesError):
    """Several problems of one rules file (or ``[tool.wheelaudit]`` table), all reported at once.
    ``problems`` are the single :class:`RulesError` s in file order; the attributes of the first
    are this error's own, and ``str()`` gives one line per problem."""

    def __init__(self, problems: Sequence[RulesError]) -> None:
        self.problems = sorted(problems, key=lambda e: (e.line is None, e.line or 0))
        first = self.problems[0]
        super().__init__(first.message, source=first.source, line=first.line, key=first.key,
                         context=first.context, leaf=first.leaf, column=first.column)

    def __str__(self) -> str:
        return "\n".join(RulesError.__str__(p) for p in getattr(self, "problems", ())) or super().__str__()

    def __reduce__(self):
        return (RulesErrors, (self.problems,))


def raise_all(problems: Sequence[RulesError]) -> None:
    """Raise ``problems`` (none: nothing), one as itself, several as :class:`RulesErrors`."""
    flat: list[RulesError] = []
    for p in problems:
        for one in (p.problems if isinstance(p, RulesErrors) else [p]):
            if all(str(one) != str(q) for q in flat):  # (a table parsed again names its unknown keys again)
                flat.append(one)
    if len(flat) == 1:
        raise flat[0]
    if flat:
        raise RulesErrors(flat)


def _rebuild_error(message, source, line, key, context, leaf, column) -> RulesError:
    return RulesError(
        message, source=source, line=line, key=key, context=context, leaf=leaf, column=column
    )


# =============================================================================================
# Model


@dataclass
class LibrariesRule:
    """``[libraries]``: every native binary in ``scope`` must match one of ``expected``."""

    scope: list[Glob] | None = None
    expected: list[Glob] = field(default_factory=list)
    identity: Literal["filename", "off"] = "filename"
    when: Condition | None = None
    line: int | None = None
    source: str = "<string>"


@dataclass
class ComponentRule:
    """``[[component]]``: code that exactly one library must carry."""

    name: str
    symbols: list[SymbolPattern] = field(default_factory=list)
    strings: list[bytes] = field(default_factory=list)
    strong_only: bool = False
    owner: Glob | None = None
    required: bool | Condition = True
    exempt: list[Glob] = field(default_factory=list)
    when: Condition | None = None
    #: the CMake imported target a package config of the wheel must declare for the owner (WA705)
    cmake_target: str | None = None
    line: int | None = None
    source: str = "<string>"

    @property
    def symbol_entries(self) -> list[str]:
        """The ``symbols`` entries exactly as written."""
        return [s.entry for s in self.symbols]

    def is_required(self, traits: WheelTraits) -> bool:
        """Whether the component is required in a wheel with these traits."""
        if isinstance(self.required, Condition):
            return self.required.holds(traits)
        return bool(self.required)


@dataclass
class FileRule:
    """``[[file]]``: how many files match ``glob``, and where they sit."""

    name: str
    glob: Glob
    count: int | None = None
    min: int | None = None
    max: int | None = None
    beside: str | None = None
    when: Condition | None = None
    line: int | None = None
    source: str = "<string>"

    def bounds(self) -> tuple[int, int | None]:
        """``(least, most)`` matches allowed; ``most`` is ``None`` when unbounded."""
        if self.count is not None:
            return self.count, self.count
        if self.min is None and self.max is None:
            return 1, None
        return (self.min or 0), self.max


@dataclass
class BinaryRule:
    """``[[binary]]``: constraints on the binaries whose path matches ``path``."""

    name: str
    path: Glob
    count: int | None = None
    must_not_define: list[str] = field(default_factory=list)
    must_import: list[SymbolPattern] = field(default_factory=list)
    must_need: list[Glob] = field(default_factory=list)
    must_not_need: list[Glob] = field(default_factory=list)
    #: wheel-path globs (``!`` excludes): every shipped library they match must be a resolved dependency
    must_need_all: list[Glob] = field(default_factory=list)
    when: Condition | None = None
    line: int | None = None
    source: str = "<string>"


@dataclass
class MetadataRule:
    """``[[metadata]]``: constraints on the wheel's Requires-Dist, for the wheels ``when`` selects.

    ``forbid_requires`` are globs over canonical distribution names (PEP 503) that no requirement
    may name where it applies (its marker evaluated for the wheel's tags, with or without one of
    the wheel's extras); ``require`` are names that must be required everywhere the wheel installs,
    without an extra."""

    name: str
    forbid_requires: list[Glob] = field(default_factory=list)
    require: list[str] = field(default_factory=list)
    when: Condition | None = None
    line: int | None = None
    source: str = "<string>"


@dataclass
class LinkageRule:
    """``[linkage]``: where dependencies may resolve and which rpaths are acceptable."""

    allow_external: list[Glob] = field(default_factory=list)
    provided_by: dict[str, list[Glob]] = field(default_factory=dict)
    forbid_rpath: list[Glob] = field(default_factory=list)
    allow_rpath: list[Glob] = field(default_factory=list)
    #: dependencies a binary can do without (an ImportError fallback): unresolved, a warning
    optional: list[Glob] = field(default_factory=list)
    check: bool = True
    line: int | None = None
    source: str = "<string>"


@dataclass
class GlobLimit:
    """``[[limits.file-glob]]``: the largest each member matching ``glob`` may be (uncompressed)."""

    glob: Glob
    max: int
    line: int | None = None


@dataclass
class LimitsRule:
    """``[limits]``: size budgets, in bytes (None: no budget); WA605 when one is exceeded."""

    wheel_compressed: int | None = None
    wheel_uncompressed: int | None = None
    file: int | None = None
    files: int | None = None
    file_globs: list[GlobLimit] = field(default_factory=list)
    line: int | None = None
    source: str = "<string>"


@dataclass
class AbiRule:
    """``[abi]``: what ``check --baseline`` holds the release to (WA801-WA803)."""

    policy: Literal["semver", "strict", "off"] = "semver"
    public: list[Glob] = field(default_factory=list)  # library paths whose exports are promised
    line: int | None = None
    source: str = "<string>"

    def lists(self, path: str) -> bool:
        """Whether ``public`` names the library at ``path``."""
        return any(g.match(path) for g in self.public)


@dataclass
class ReleaseRule:
    """``[release]``: what ``check --release`` expects of one release's wheels (WA811-WA813)."""

    platforms: list[str] = field(default_factory=list)  # platform tags, each needs a wheel
    only: list[tuple[Glob, Condition]] = field(default_factory=list)  # platform-specific paths
    line: int | None = None
    source: str = "<string>"


@dataclass
class CMakeRule:
    """``[cmake]``: how a hand-written package config declares its targets (WA705)."""

    config: list[Glob] = field(default_factory=list)
    declares: Any = None  # named groups: name, library (an RE2 pattern: globs.linear_regex)
    namespace: str = ""
    line: int | None = None
    source: str = "<string>"


@dataclass
class Waiver:
    """``[[waive]]``: a known finding, accepted on purpose."""

    code: str
    target: Glob | None = None
    path: Glob | None = None
    reason: str = ""
    until: _dt.date | None = None
    when: Condition | None = None  # the wheels it applies to (e.g. a release series); elsewhere it is silent
    line: int | None = None
    source: str = "<string>"

    def lapsed(self, today: _dt.date | None = None) -> bool:
        """Whether ``until`` has passed (the waiver still holds on the ``until`` day itself)."""
        if self.until is None:
            return False
        return (today or _dt.date.today()) > self.until

    def covers(self, code: str, subject: str | None, paths: Iterable[str] = (),
               symbols: Iterable[str] = ()) -> bool:
        """Whether this waiver matches a finding with this code, subject, paths and symbols
        (ignoring ``until``): the code is the waiver's code, ``target`` (if given) matches the
        subject or one of the symbols, and ``path`` (if given) matches one of the paths or its
        file name. The one waiver matcher: evaluation marks findings with it."""
        if code != self.code:
            return False
        if self.target is not None and not ((subject is not None and self.target.match(subject))
                                            or any(self.target.match(s) for s in symbols)):
            return False
        if self.path is not None and not any(self.path.match(p) or self.path.match(p.rsplit("/", 1)[-1])
                                             for p in paths):
            return False
        return True


@dataclass
class Ruleset:
    """A validated rules file."""

    version: int = 1
    name: str | None = None
    path: Path | None = None
    libraries: LibrariesRule | None = None
    components: list[ComponentRule] = field(default_factory=list)
    files: list[FileRule] = field(default_factory=list)
    binaries: list[BinaryRule] = field(default_factory=list)
    metadata: list[MetadataRule] = field(default_factory=list)
    linkage: LinkageRule | None = None
    cmake: CMakeRule | None = None
    limits: LimitsRule | None = None
    abi: AbiRule | None = None
    release: ReleaseRule | None = None
    waivers: list[Waiver] = field(default_factory=list)
    #: CLI defaults: codes or prefixes to report only / to drop, and the failing severity.
    select: list[str] | None = None
    ignore: list[str] | None = None
    fail_on: Literal["error", "warning"] | None = None
    #: severity overrides, per code or family (``severity = {WA502 = "error"}``)
    severity: dict[str, Literal["error", "warning"]] = field(default_factory=dict)
    source: str = "<string>"

    def strings(self) -> list[bytes]:
        """Every component string (de-duplicated, in file order): what the scanner looks for."""
        seen: dict[bytes, None] = {}
        for comp in self.components:
            for s in comp.strings:
                seen.setdefault(s, None)
        return list(seen)

    def symbol_patterns(self) -> list[SymbolPattern]:
        """Every symbol entry of the rules (components' symbols, binaries' ``must-import``), once."""
        pats: list[SymbolPattern] = []
        for comp in self.components:
            pats.extend(comp.symbols)
        for rule in self.binaries:
            pats.extend(rule.must_import)
        return list({p.entry: p for p in pats}.values())

    def interest(self) -> Interest:
        """What the symbol entries can match (:class:`wheelaudit.model.interest.Interest`): handed to the
        scan so that each worker keeps only the local symbols these rules can look at."""
        from wheelaudit.model.interest import interest_of

        return interest_of(self.symbol_patterns())

    def component(self, name: str) -> ComponentRule | None:
        """The component named ``name``, if any."""
        for comp in self.components:
            if comp.name == name:
                return comp
        return None

    def rule(self, rule_id: str, subject: str | None = None) -> Any:
        """The rule of this ruleset that a finding's ``rule`` id names (``names``,
        ``component:NAME``, ``file:NAME``, ``binary:NAME``, ``metadata:NAME``, ``linkage``,
        ``limits``, ``consumer`` for ``[cmake]``, ``waivers``), or None: a built-in check
        (``abi``, ``integrity``, ``linkage`` without a ``[linkage]`` table) or a rule it does not
        have. For ``waivers`` (WA004, whose subject is the waiver's code) the first waiver of that
        code. Its ``source`` and ``line`` say where it is written (reports point there)."""
        kind, _, name = rule_id.partition(":")
        if name:
            tables = {"component": self.components, "file": self.files, "binary": self.binaries,
                      "metadata": self.metadata}
            return next((r for r in tables.get(kind, ()) if r.name == name), None)
        if rule_id == "waivers":
            return next((w for w in self.waivers if subject is None or w.code == subject),
                        self.waivers[0] if self.waivers else None)
        return {"names": self.libraries, "linkage": self.linkage, "limits": self.limits,
                "consumer": self.cmake}.get(rule_id)


# =============================================================================================
# Locating tables and keys in the text (tomllib reports no positions)

_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_DOTTED = rf"{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART})*"
_KEY_RE = re.compile(rf"[ \t]*({_DOTTED})[ \t]*=")
_HEADER_RE = re.compile(rf"[ \t]*(\[\[?)[ \t]*({_DOTTED})[ \t]*(\]\]?)[ \t]*(?:#.*)?$")
_PART_RE = re.compile(_KEY_PART)
# What matters for finding lines: newlines, comments, strings (multi-line ones first) and brackets.
# Every alternative starts with a distinct character or literal, so matching is linear.
_TOKEN_RE = re.compile(
    r"\n"
    r"|#[^\n]*"
    r'|"""(?:[^"\\]|\\[\s\S]|""?(?!"))*"""(?:""?)?'
    r"|'''[\s\S]*?'''(?:''?)?"
    r'|"(?:[^"\\\n]|\\.)*"?'
    r"|'[^'\n]*'?"
    r"|[\[\]{}]"
)

PathPart = Union[str, int]  # a key, or a 0-based index into an array of tables
KeyPath = tuple[PathPart, ...]


def _split_key(dotted: str) -> tuple[str, ...]:
    parts = []
    for m in _PART_RE.finditer(dotted):
        p = m.group(0)
        if p[0] in "\"'":
            p = p[1:-1]
        parts.append(p)
    return tuple(parts)


class _Locator:
    """Finds the line of a table or key path in TOML text."""

    def __init__(self, text: str) -> None:
        self.lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
        structural = self._structural_lines(text)
        # blocks: (header line, resolved path); block 0 is the root table. A resolved path holds
        # 0-based indices after arrays of tables: [component.when] after the second
        # [[component]] is ("component", 1, "when").
        self.blocks: list[tuple[int, KeyPath]] = [(1, ())]
        self.block_keys: list[list[tuple[int, tuple[str, ...]]]] = [[]]
        counts: dict[tuple[str, ...], int] = {}
        self.block_of: dict[KeyPath, int] = {(): 0}  # resolved table path -> block
        self.first_under: dict[KeyPath, int] = {}  # path -> first header line at or under it
        for lineno in structural:
            line = self.lines[lineno - 1]
            m = _HEADER_RE.match(line)
            if m and (m.group(1) == "[[") == (m.group(3) == "]]"):
                parts = _split_key(m.group(2))
                is_array = m.group(1) == "[["
                resolved: list[PathPart] = []
                for i in range(len(parts)):
                    resolved.append(parts[i])
                    prefix = parts[: i + 1]
                    last = i == len(parts) - 1
                    if last and is_array:
                        counts[prefix] = counts.get(prefix, 0) + 1
                        resolved.append(counts[prefix] - 1)
                    elif prefix in counts:
                        resolved.append(counts[prefix] - 1)
                bpath = tuple(resolved)
                self.block_of.setdefault(bpath, len(self.blocks))
                for k in range(1, len(bpath) + 1):
                    self.first_under.setdefault(bpath[:k], lineno)
                self.blocks.append((lineno, bpath))
                self.block_keys.append([])
                continue
            k = _KEY_RE.match(line)
            if k:
                self.block_keys[-1].append((lineno, _split_key(k.group(1))))

    @staticmethod
    def _structural_lines(text: str) -> list[int]:
        """Line numbers (1-based) that start outside any string and any bracket."""
        out: list[int] = []
        n = len(text)
        line = 1
        depth = 0
        pos = 0
        line_start = True
        search = _TOKEN_RE.search
        while True:
            if line_start:
                line_start = False
                if depth == 0 and pos < n:
                    out.append(line)
                    eol = text.find("\n", pos)
                    eol = n if eol < 0 else eol
                    if eol > pos and text[eol - 1] == "\r":
                        eol -= 1
                    if _HEADER_RE.match(text, pos, eol):
                        pos = eol  # a header's brackets are not value brackets
            m = search(text, pos)
            if m is None:
                break
            tok = m.group(0)
            pos = m.end()
            c = tok[0]
            if c == "\n":
                line += 1
                line_start = True
            elif c in "[{":
                depth += 1
            elif c in "]}":
                depth = max(0, depth - 1)
            elif c in "\"'":
                line += tok.count("\n")  # multi-line strings
            # comments need nothing
        return out

    def locate(self, path: KeyPath) -> int | None:
        """The line of ``path``: its header, its ``key =`` line, or the nearest enclosing one."""
        path = tuple(path)
        best_block = best_len = 0
        for j in range(len(path), -1, -1):
            if path[:j] in self.block_of:
                best_block, best_len = self.block_of[path[:j]], j
                break
        line, _ = self.blocks[best_block]
        rest = list(path[best_len:])
        if not rest:
            return line if best_block else None
        # a key of this block: longest dotted-key match
        found: int | None = None
        used = 0
        str_rest: list[str] = []
        for p in rest:
            if isinstance(p, int):
                break
            str_rest.append(p)
        for kline, kparts in self.block_keys[best_block]:
            m = len(kparts)
            if m <= len(str_rest) and tuple(str_rest[:m]) == kparts and m > used:
                found, used = kline, m
        if found is None:
            # a key given only as headers ([[components]], [libraries.when])
            under = self.first_under.get(path)
            if under is not None:
                return under
            return line if best_block else None
        # deeper keys inside an inline table: search forward, within this block
        end = (
            self.blocks[best_block + 1][0] - 1
            if best_block + 1 < len(self.blocks)
            else len(self.lines)
        )
        col = 0
        for p in rest[used:]:
            if isinstance(p, int):
                break
            pat = re.compile(
                rf"(?:^|[\s{{,.]){re.escape(p)}[ \t]*[=.]|[\"']{re.escape(p)}[\"'][ \t]*[=.]"
            )
            hit = None
            for ln in range(found, end + 1):
                text = self.lines[ln - 1]
                m = pat.search(text, col if ln == found else 0)
                if m:
                    hit = (ln, m.end())
                    break
            if hit is None:
                break
            found, col = hit
        return found


# =============================================================================================
# Reading TOML


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


def read_toml_file(path: str | Path) -> tuple[str, dict[str, Any]]:
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


# =============================================================================================
# Validation


def _describe(v: Any) -> str:
    if isinstance(v, bool):
        return f"boolean {'true' if v else 'false'}"
    if isinstance(v, int):
        return f"integer {v}"
    if isinstance(v, float):
        return f"float {v}"
    if isinstance(v, str):
        s = v if len(v) <= 40 else v[:37] + "..."
        return 'string "' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return f"array of {len(v)} item{'s' if len(v) != 1 else ''}"
    if isinstance(v, dict):
        return "table"
    if isinstance(v, _dt.datetime):
        return f"datetime {v.isoformat()}"
    if isinstance(v, _dt.date):
        return f"date {v.isoformat()}"
    if isinstance(v, _dt.time):
        return f"time {v.isoformat()}"
    return type(v).__name__


def _suggest(word: str, choices: Iterable[str]) -> str | None:
    choices = list(choices)
    norm = word.replace("_", "-").lower()
    for c in choices:
        if c == norm:
            return c
    import difflib  # (only for a rules file with a mistake: not imported before a check's first worker)

    hits = difflib.get_close_matches(norm, choices, n=1, cutoff=0.6)
    return hits[0] if hits else None


def _fmt_path(path: KeyPath) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p + 1}]"
        else:
            if out:
                out += "."
            out += p if re.fullmatch(r"[A-Za-z0-9_-]+", p) else '"' + p + '"'
    return out


_ARRAY_TABLES = ("component", "file", "binary", "metadata", "waive")


class _Ctx:
    def __init__(
        self, data: Mapping[str, Any], source: str, text: str | None, prefix: tuple[str, ...]
    ) -> None:
        self.data = data
        self.source = source
        self.prefix = prefix
        self.locator = _Locator(text) if text is not None else None
        #: problems found so far; validation goes on past each one so that all are reported
        self.problems: list[RulesError] = []

    def attempt(self, parse: Callable[[], T]) -> T | None:
        """``parse()``, or None with its problem kept (validation goes on)."""
        try:
            return parse()
        except RulesError as exc:
            self.problems.append(exc)
            return None

    def each_key(self, path: KeyPath, item: Any, parse: Callable[[Any], T]) -> T | None:
        """``parse(item)`` for a table at ``path``, finding every problem of it: a key whose
        value is wrong is kept as a problem and left out, and the table parsed again without it
        (its keys are independent), until it parses or a problem is not one key's. None when the
        table has problems."""
        if not isinstance(item, dict):
            return self.attempt(lambda: parse(item))
        item = dict(item)
        removed: set[str] = set()
        own: list[RulesError] = []
        stand_ins = _stand_ins(path)
        while True:
            try:
                result = parse(item)
            except RulesError as exc:
                key = self._key_under(path, exc, list(item) + sorted(removed) + sorted(stand_ins))
                if key in removed:  # (the complaint that a key left out is missing)
                    break
                own.append(exc)
                if key is not None and key not in item and key in stand_ins:
                    # a required key is missing: a valid stand-in lets the other keys be judged
                    item[key] = stand_ins.pop(key)
                    removed.add(key)
                    continue
                if key is None or key not in item:
                    break
                del item[key]
                removed.add(key)
                continue
            if not own:
                return result
            break
        self.problems.extend(own)
        return None

    def _key_under(self, path: KeyPath, exc: RulesError, keys: Sequence[str]) -> str | None:
        """The key of the table at ``path`` that ``exc`` is about, if it is about one."""
        if exc.key is None:
            return None
        for k in keys:
            dotted = _fmt_path(self.prefix + tuple(path) + (k,))
            if exc.key == dotted or exc.key.startswith(dotted + ".") or exc.key.startswith(dotted + "["):
                return k
        return None

    def finish(self) -> None:
        """Raise every problem found (see :func:`raise_all`)."""
        raise_all(self.problems)

    def line(self, path: KeyPath) -> int | None:
        if self.locator is None:
            return None
        return self.locator.locate(self.prefix + tuple(path))

    def error(self, path: KeyPath, message: str) -> RulesError:
        full = self.prefix + tuple(path)
        key = _fmt_path(full) if full else None
        context = None
        leaf: str | None = _fmt_path(full) if full else None
        # the table part: "component[2] "name"", "libraries", "tool.wheelaudit"
        if path and path[0] in _ARRAY_TABLES and len(path) >= 2 and isinstance(path[1], int):
            context = _fmt_path(self.prefix + tuple(path[:2]))
            entry = self.data.get(path[0])
            if isinstance(entry, list) and path[1] < len(entry):
                item = entry[path[1]]
                if isinstance(item, dict) and isinstance(item.get("name"), str):
                    context += f' "{item["name"]}"'
            leaf = _fmt_path(tuple(path[2:])) or None
        elif path and path[0] in ("libraries", "linkage", "limits") and len(path) >= 2:
            context = _fmt_path(self.prefix + (path[0],))
            leaf = _fmt_path(tuple(path[1:]))
        elif self.prefix:
            context = _fmt_path(self.prefix)
            leaf = _fmt_path(tuple(path)) or None
        return RulesError(
            message, source=self.source, line=self.line(path), key=key, context=context, leaf=leaf
        )

    # -- typed getters ------------------------------------------------------------------------

    def table(
        self,
        value: Any,
        path: KeyPath,
        allowed: Sequence[str],
        required: Sequence[str] = (),
        what: str = "a table",
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(path, f"expected {what}, got {_describe(value)}")
        unknown = [k for k in value if k not in allowed]
        for k in unknown:
            hint = _suggest(k, allowed)
            if hint:
                msg = f'unknown key (did you mean "{hint}"?)'
            else:
                msg = "unknown key (known keys: " + ", ".join(allowed) + ")"
            self.problems.append(self.error(tuple(path) + (k,), msg))
        for k in required:
            if k not in value:
                raise self.error(tuple(path) + (k,), "missing (this key is required)")
        return {k: v for k, v in value.items() if k not in unknown} if unknown else value

    def string(self, value: Any, path: KeyPath, *, empty_ok: bool = False) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"expected a string, got {_describe(value)}")
        if not empty_ok and not value.strip():
            raise self.error(path, "expected a non-empty string")
        return value

    def boolean(self, value: Any, path: KeyPath) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"expected true or false, got {_describe(value)}")
        return value

    def count(self, value: Any, path: KeyPath) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, f"expected a non-negative integer, got {_describe(value)}")
        if value < 0:
            raise self.error(path, f"expected a non-negative integer, got {_describe(value)}")
        return value

    def strings(self, value: Any, path: KeyPath, what: str = "strings") -> list[str]:
        """A string or a list of strings (each non-empty)."""
        expected = f"a string or a list of {what}"
        if isinstance(value, str):
            items = [value]
        elif isinstance(value, list):
            items = value
        else:
            raise self.error(path, f"expected {expected}, got {_describe(value)}")
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise self.error(
                    path, f"expected {expected}, got {_describe(item)} as item {i + 1}"
                )
            if not item.strip():
                raise self.error(path, f"item {i + 1} is an empty string")
        return list(items)

    def glob(self, value: Any, path: KeyPath, *, cross_slash: bool = False) -> Glob:
        pattern = self.string(value, path)
        try:
            return Glob(pattern, cross_slash=cross_slash)
        except GlobError as exc:
            raise self.error(path, exc.message) from None

    def globs(self, value: Any, path: KeyPath, *, cross_slash: bool = False, negatable: bool = False) -> list[Glob]:
        """A glob or a list of globs; with ``negatable`` one that starts with ``!`` matches what
        the rest does not (a :class:`NotGlob`)."""
        out = []
        for i, pattern in enumerate(self.strings(value, path, "globs")):
            try:
                if negatable and pattern.startswith("!"):
                    if not pattern[1:]:
                        raise GlobError("a lone '!' negates nothing", pattern)
                    out.append(NotGlob(Glob(pattern[1:], cross_slash=cross_slash)))  # type: ignore[arg-type]
                    continue
                out.append(Glob(pattern, cross_slash=cross_slash))
            except GlobError as exc:
                prefix = f"item {i + 1}: " if isinstance(value, list) else ""
                raise self.error(path, prefix + exc.message) from None
        return out

    def symbols(self, value: Any, path: KeyPath) -> list[SymbolPattern]:
        out = []
        for i, entry in enumerate(self.strings(value, path, "symbol names")):
            try:
                out.append(SymbolPattern(entry))
            except GlobError as exc:
                prefix = f"item {i + 1}: " if isinstance(value, list) else ""
                raise self.error(path, prefix + exc.message) from None
        return out

    def code(self, value: Any, path: KeyPath, item: int | None = None, *, whole: bool = False) -> str:
        """A code selector (``WA501``, ``WA5``), or with ``whole`` one whole code; parsed by the
        one registry (:mod:`wheelaudit.model.codes`)."""
        where = f"item {item + 1}: " if item is not None else ""
        try:
            return parse_code(value) if whole else parse_selector(value)
        except CodeError as exc:
            raise self.error(path, f"{where}{exc}") from None

    def codes(self, value: Any, path: KeyPath) -> list[str]:
        if isinstance(value, str):
            return [self.code(value, path)]
        if not isinstance(value, list):
            raise self.error(
                path, f"expected a finding code or a list of codes, got {_describe(value)}"
            )
        return [self.code(v, path, i) for i, v in enumerate(value)]

    def condition(self, value: Any, path: KeyPath) -> Condition:
        table = self.table(value, path, CONDITION_KEYS, what="a condition table")
        kwargs: dict[str, tuple[Glob, ...]] = {}
        for key in CONDITION_KEYS:
            if key not in table:
                continue
            kpath = tuple(path) + (key,)
            value = table[key]
            if key == "name":
                # distribution names compare canonically (PEP 503): "mlx_metal" is "mlx-metal"
                value = self.strings(value, kpath, "globs")
                value = [_canonical_glob(v) for v in value]
            globs = self.globs(value, kpath, negatable=True)
            if key == "os":
                for g in (getattr(g, "inner", g) for g in globs):
                    if g.is_literal and g.pattern not in KNOWN_OS:
                        hint = _suggest(g.pattern.lower(), KNOWN_OS)
                        msg = f'unknown os "{g.pattern}" (expected {", ".join(KNOWN_OS)})'
                        if hint:
                            msg = f'unknown os "{g.pattern}" (did you mean "{hint}"?)'
                        raise self.error(kpath, msg)
            kwargs[key] = tuple(globs)
        return Condition(**kwargs)


# (the keys each table takes are declared once, with the schemas' descriptions, in ruleset/format.py)
_TOP_KEYS = TABLES[""].names
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


#: a valid value of each kind of required key, put in for a missing one so that the rest of its
#: table is judged in the same run (the table still counts as invalid)
_STAND_IN = {"text": "_", "glob": "*", "globs": ["*"], "code": "WA001", "size": 1}


def _stand_ins(path: KeyPath) -> dict[str, Any]:
    """Stand-ins for the required keys of the table at ``path`` (``("component", 0)``)."""
    from wheelaudit.ruleset.format import TABLES

    table = TABLES.get(str(path[0])) if path else None
    if table is None:
        return {}
    return {k.name: _STAND_IN[k.kind] for k in table.keys if k.required and k.kind in _STAND_IN}


def _array_of_tables(ctx: _Ctx, data: Mapping[str, Any], key: str, lenient: bool = False) -> list[dict[str, Any]]:
    """The array of tables ``key``. ``lenient``: an item that is not a table is a problem kept
    in ``ctx`` (the caller skips it) rather than raised."""
    value = data.get(key, [])
    if isinstance(value, dict):
        raise ctx.error((key,), f"expected an array of tables ([[{key}]]), got a single table ([{key}])")
    if not isinstance(value, list):
        raise ctx.error((key,), f"expected an array of tables ([[{key}]]), got {_describe(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            problem = ctx.error((key, i), f"expected a table, got {_describe(item)}")
            if not lenient:
                raise problem
            ctx.problems.append(problem)
    return value


def _unknown_name(ctx: _Ctx, path: KeyPath, name: str, known: Sequence[str]) -> RulesError:
    import difflib

    hint = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if hint:
        return ctx.error(path, f'no component is named "{name}" (did you mean "{hint[0]}"?)')
    if known:
        return ctx.error(
            path, f'no component is named "{name}" (components: {", ".join(known)})'
        )
    return ctx.error(path, f'no component is named "{name}" (the rules define no component)')


def _parse_libraries(ctx: _Ctx, value: Any) -> LibrariesRule:
    if isinstance(value, list):
        raise ctx.error(("libraries",), "expected a table ([libraries]), got an array ([[libraries]])")
    t = ctx.table(value, ("libraries",), _LIBRARIES_KEYS, required=TABLES["libraries"].required)
    p: KeyPath = ("libraries",)
    identity = "filename"
    if "identity" in t:
        identity = ctx.string(t["identity"], p + ("identity",))
        if identity not in ("filename", "off"):
            raise ctx.error(
                p + ("identity",), f'expected "filename" or "off", got {_describe(identity)}'
            )
    return LibrariesRule(
        scope=ctx.globs(t["scope"], p + ("scope",)) if "scope" in t else None,
        expected=ctx.globs(t["expected"], p + ("expected",)),
        identity=identity,  # type: ignore[arg-type]
        when=ctx.condition(t["when"], p + ("when",)) if "when" in t else None,
        line=ctx.line(p),
        source=ctx.source,
    )


def _parse_component(ctx: _Ctx, i: int, value: dict[str, Any]) -> ComponentRule:
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
                f"expected true, false or a condition table, got {_describe(r)}",
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


def _parse_cmake(ctx: _Ctx, value: Any) -> CMakeRule:
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


def _parse_file(ctx: _Ctx, i: int, value: dict[str, Any]) -> FileRule:
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


def _parse_binary(ctx: _Ctx, i: int, value: dict[str, Any]) -> BinaryRule:
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


def _canonical_glob(pattern: str) -> str:
    """A distribution-name glob in canonical form (PEP 503: lower case, one ``-`` for each run of
    ``-_.``), as conditions' ``name`` does; a glob with a ``[...]`` set is left as written."""
    return pattern if "[" in pattern else re.sub(r"[-_.]+", "-", pattern).lower()


def _parse_metadata(ctx: _Ctx, i: int, value: dict[str, Any]) -> MetadataRule:
    p: KeyPath = ("metadata", i)
    t = ctx.table(value, p, _METADATA_KEYS)
    if "forbid-requires" not in t and "require" not in t:
        # (keyed to forbid-requires: when a bad value was left out, the complaint is that value's alone)
        raise ctx.error(p + ("forbid-requires",), 'missing: a [[metadata]] rule needs "forbid-requires" or "require" (or both)')
    forbid: list[Glob] = []
    if "forbid-requires" in t:
        names = ctx.strings(t["forbid-requires"], p + ("forbid-requires",), "globs")
        forbid = ctx.globs([_canonical_glob(n) for n in names], p + ("forbid-requires",))
    require: list[str] = []
    if "require" in t:
        for n in ctx.strings(t["require"], p + ("require",), "distribution names"):
            if not DIST_NAME_RE.fullmatch(n):
                raise ctx.error(p + ("require",), f'"{n}" is not a valid distribution name')
            require.append(_canonical_glob(n))
    return MetadataRule(
        name=ctx.string(t["name"], p + ("name",)) if "name" in t else f"metadata[{i + 1}]",
        forbid_requires=forbid,
        require=require,
        when=ctx.condition(t["when"], p + ("when",)) if "when" in t else None,
        line=ctx.line(p),
        source=ctx.source,
    )


def _parse_abi(ctx: _Ctx, value: Any) -> AbiRule:
    p: KeyPath = ("abi",)
    if isinstance(value, list):
        raise ctx.error(p, "expected a table ([abi]), got an array ([[abi]])")
    t = ctx.table(value, p, TABLES["abi"].names)
    rule = AbiRule(line=ctx.line(p), source=ctx.source)
    if "policy" in t:
        choices = TABLES["abi"].keys[0].choices
        if t["policy"] not in choices:
            raise ctx.error(p + ("policy",), f"expected one of {', '.join(map(repr, choices))}, got {_describe(t['policy'])}")
        rule.policy = t["policy"]
    if "public" in t:
        rule.public = ctx.globs(t["public"], p + ("public",))
    return rule


def _parse_release(ctx: _Ctx, value: Any) -> ReleaseRule:
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
            raise ctx.error(p + ("only",), f"expected a table of globs and conditions, got {_describe(only)}")
        for pattern, cond in only.items():
            kp = p + ("only", pattern)
            rule.only.append((ctx.glob(pattern, kp), ctx.condition(cond, kp)))
    return rule


def _parse_linkage(ctx: _Ctx, value: Any) -> LinkageRule:
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
                f"got {_describe(pb)}",
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


def _size(ctx: _Ctx, value: Any, path: KeyPath) -> int:
    n = parse_size(value)
    if n is None:
        raise ctx.error(path, f"expected {_SIZE_HINT}, got {_describe(value)}")
    return n


def _parse_limits(ctx: _Ctx, value: Any) -> LimitsRule:
    """``[limits]``: every bad key is kept as its own problem (``ctx.attempt``), the rest parsed."""
    p: KeyPath = ("limits",)
    if isinstance(value, list):
        raise ctx.error(p, "expected a table ([limits]), got an array ([[limits]])")
    t = ctx.table(value, p, _LIMITS_KEYS)
    rule = LimitsRule(line=ctx.line(p), source=ctx.source)
    ok = True
    for key in ("wheel-compressed", "wheel-uncompressed", "file"):
        if key in t:
            n = ctx.attempt(lambda key=key: _size(ctx, t[key], p + (key,)))
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
                            f"expected an array of tables ([[limits.file-glob]]), got {_describe(globs)}")
        for i, item in enumerate(globs):
            ip = p + ("file-glob", i)

            def one(item: Any = item, ip: KeyPath = ip) -> GlobLimit:
                g = ctx.table(item, ip, _FILE_GLOB_KEYS, required=TABLES["limits.file-glob"].required)
                glob = ctx.attempt(lambda: ctx.glob(g["glob"], ip + ("glob",)))
                most = ctx.attempt(lambda: _size(ctx, g["max"], ip + ("max",)))
                if glob is None or most is None:
                    raise _Skip
                return GlobLimit(glob, most, ctx.line(ip))

            try:
                gl = ctx.attempt(one)
            except _Skip:
                gl = None
            ok = ok and gl is not None
            if gl is not None:
                rule.file_globs.append(gl)
    if not ok:
        raise _Skip
    return rule


class _Skip(Exception):
    """A table whose problems are already kept in ``ctx.problems``."""


def _parse_waiver(ctx: _Ctx, i: int, value: dict[str, Any]) -> Waiver:
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
                    p + ("until",), f"expected a date like 2027-06-30, got {_describe(t['until'])}"
                ) from None
        if isinstance(u, _dt.datetime) or not isinstance(u, _dt.date):
            raise ctx.error(p + ("until",), f"expected a date like 2027-06-30, got {_describe(u)}")
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


def _parse_severity(ctx: _Ctx, value: Any, path: KeyPath) -> dict[str, Literal["error", "warning"]]:
    """``severity = {WA502 = "error", WA6 = "warning"}``: per code or family."""
    if not isinstance(value, dict):
        raise ctx.error(path, f'expected a table of codes and severities, like {{WA502 = "error"}}, got {_describe(value)}')
    out: dict[str, Literal["error", "warning"]] = {}
    for key, level in value.items():
        try:
            out.update(parse_severities({key: level}))
        except CodeError as exc:
            ctx.problems.append(ctx.error(tuple(path) + (key,), str(exc)))
    return out


def _parse_fail_on(ctx: _Ctx, value: Any, path: KeyPath) -> Literal["error", "warning"]:
    if value not in ("error", "warning") or not isinstance(value, str):
        raise ctx.error(path, f'expected "error" or "warning", got {_describe(value)}')
    return value  # type: ignore[return-value]


def ruleset_from_dict(
    data: dict[str, Any],
    source: str,
    text: str | None = None,
    *,
    table: str | None = None,
    require_version: bool = True,
    path: str | Path | None = None,
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
    ctx = _Ctx(data, source, text, prefix)
    try:
        return _ruleset(ctx, data, require_version, path, extra_keys)
    except RecursionError:
        raise RulesError("values are nested too deeply", source=source) from None


def _ruleset(
    ctx: _Ctx,
    data: Mapping[str, Any],
    require_version: bool,
    path: str | Path | None,
    extra_keys: Sequence[str],
) -> Ruleset:
    if not isinstance(data, dict):
        raise ctx.error((), f"expected a table, got {_describe(data)}")
    ctx.table(data, (), tuple(_TOP_KEYS) + tuple(extra_keys))
    if "version" not in data:
        if require_version:  # (kept, and the rest read as version 1: every problem at once)
            ctx.problems.append(RulesError(
                'missing: a rules file must say which format it is written in; add "version = 1"',
                source=ctx.source,
                line=1 if ctx.locator is not None else None,
                key=_fmt_path(ctx.prefix + ("version",)),
                context=_fmt_path(ctx.prefix) or None,
                leaf="version",
            ))
        version = 1
    else:
        version = data["version"]
        if isinstance(version, bool) or not isinstance(version, int):  # (kept; the rest read as version 1)
            ctx.problems.append(ctx.error(("version",), f"expected the integer 1, got {_describe(version)}"))
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
        rs.fail_on = ctx.attempt(lambda: _parse_fail_on(ctx, data["fail-on"], ("fail-on",)))
    if "severity" in data:
        rs.severity = ctx.attempt(lambda: _parse_severity(ctx, data["severity"], ("severity",))) or {}
    if "libraries" in data:
        rs.libraries = ctx.each_key(("libraries",), data["libraries"], lambda v: _parse_libraries(ctx, v))

    def entries(key: str) -> list[tuple[int, dict[str, Any]]]:
        items = ctx.attempt(lambda: _array_of_tables(ctx, data, key, lenient=True)) or []
        return [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]

    seen: dict[str, int] = {}
    for i, item in entries("component"):
        comp = ctx.each_key(("component", i), item, lambda v, i=i: _parse_component(ctx, i, v))
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
        f = ctx.each_key(("file", i), item, lambda v, i=i: _parse_file(ctx, i, v))
        beside = f.beside if f is not None else item.get("beside")
        if isinstance(beside, str) and beside not in seen:  # (checked in a file rule with problems too)
            ctx.problems.append(_unknown_name(ctx, ("file", i, "beside"), beside, names))
            continue
        if f is not None:
            rs.files.append(f)

    for i, item in entries("binary"):
        b = ctx.each_key(("binary", i), item, lambda v, i=i: _parse_binary(ctx, i, v))
        named = b.must_not_define if b is not None else item.get("must-not-define")
        named = [n for n in named if isinstance(n, str)] if isinstance(named, list) else []
        unknown = [n for n in named if n not in seen]
        for name in unknown:
            ctx.problems.append(_unknown_name(ctx, ("binary", i, "must-not-define"), name, names))
        if b is not None and not unknown:
            rs.binaries.append(b)

    for i, item in entries("metadata"):
        m = ctx.each_key(("metadata", i), item, lambda v, i=i: _parse_metadata(ctx, i, v))
        if m is not None:
            rs.metadata.append(m)

    if "linkage" in data:
        rs.linkage = ctx.each_key(("linkage",), data["linkage"], lambda v: _parse_linkage(ctx, v)) or rs.linkage
    if "limits" in data:
        try:
            rs.limits = ctx.attempt(lambda: _parse_limits(ctx, data["limits"]))
        except _Skip:
            pass
    if "cmake" in data:
        rs.cmake = ctx.each_key(("cmake",), data["cmake"], lambda v: _parse_cmake(ctx, v)) or rs.cmake
    if "abi" in data:
        rs.abi = ctx.each_key(("abi",), data["abi"], lambda v: _parse_abi(ctx, v)) or rs.abi
    if "release" in data:
        rs.release = ctx.each_key(("release",), data["release"], lambda v: _parse_release(ctx, v)) or rs.release

    for i, item in entries("waive"):
        w = ctx.each_key(("waive", i), item, lambda v, i=i: _parse_waiver(ctx, i, v))
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


def load_rules(path: "str | os.PathLike[str]") -> Ruleset:
    """Load and validate a rules file (SPEC section 3). Every problem is a :class:`RulesError`."""
    text, data = read_toml_file(path)
    return ruleset_from_dict(data, str(path), text, path=path)
