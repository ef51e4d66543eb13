"""Validation of parsed TOML: the :class:`Context` of one rules file (where a key is, what a
problem says, every problem kept so that all are reported at once) and its typed getters (a
string, a list of globs, a code selector, a condition, ...). The tables themselves are read by
:mod:`wheelaudit.ruleset.tables`."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from wheelaudit.model.codes import CodeError, parse_code, parse_selector
from wheelaudit.ruleset.conditions import CONDITION_KEYS, KNOWN_OS, Condition
from wheelaudit.ruleset.errors import RulesError, raise_all
from wheelaudit.ruleset.format import TABLES
from wheelaudit.model.globs import Glob, GlobError, NotGlob, SymbolPattern
from wheelaudit.ruleset.lines import KeyPath, Locator

__all__ = ["Context", "describe", "suggest", "fmt_path", "canonical_glob"]

T = TypeVar("T")


def describe(v: Any) -> str:
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


def suggest(word: str, choices: Iterable[str]) -> str | None:
    choices = list(choices)
    norm = word.replace("_", "-").lower()
    for c in choices:
        if c == norm:
            return c
    import difflib  # (only for a rules file with a mistake: not imported before a check's first worker)

    hits = difflib.get_close_matches(norm, choices, n=1, cutoff=0.6)
    return hits[0] if hits else None


def fmt_path(path: KeyPath) -> str:
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


class Context:
    def __init__(
        self, data: Mapping[str, Any], source: str, text: str | None, prefix: tuple[str, ...]
    ) -> None:
        self.data = data
        self.source = source
        self.prefix = prefix
        self.locator = Locator(text) if text is not None else None
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
            dotted = fmt_path(self.prefix + tuple(path) + (k,))
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
        key = fmt_path(full) if full else None
        context = None
        leaf: str | None = fmt_path(full) if full else None
        # the table part: "component[2] "name"", "libraries", "tool.wheelaudit"
        if path and path[0] in _ARRAY_TABLES and len(path) >= 2 and isinstance(path[1], int):
            context = fmt_path(self.prefix + tuple(path[:2]))
            entry = self.data.get(path[0])
            if isinstance(entry, list) and path[1] < len(entry):
                item = entry[path[1]]
                if isinstance(item, dict) and isinstance(item.get("name"), str):
                    context += f' "{item["name"]}"'
            leaf = fmt_path(tuple(path[2:])) or None
        elif path and path[0] in ("libraries", "linkage", "limits") and len(path) >= 2:
            context = fmt_path(self.prefix + (path[0],))
            leaf = fmt_path(tuple(path[1:]))
        elif self.prefix:
            context = fmt_path(self.prefix)
            leaf = fmt_path(tuple(path)) or None
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
            raise self.error(path, f"expected {what}, got {describe(value)}")
        unknown = [k for k in value if k not in allowed]
        for k in unknown:
            hint = suggest(k, allowed)
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
            raise self.error(path, f"expected a string, got {describe(value)}")
        if not empty_ok and not value.strip():
            raise self.error(path, "expected a non-empty string")
        return value

    def boolean(self, value: Any, path: KeyPath) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"expected true or false, got {describe(value)}")
        return value

    def count(self, value: Any, path: KeyPath) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, f"expected a non-negative integer, got {describe(value)}")
        if value < 0:
            raise self.error(path, f"expected a non-negative integer, got {describe(value)}")
        return value

    def strings(self, value: Any, path: KeyPath, what: str = "strings") -> list[str]:
        """A string or a list of strings (each non-empty)."""
        expected = f"a string or a list of {what}"
        if isinstance(value, str):
            items = [value]
        elif isinstance(value, list):
            items = value
        else:
            raise self.error(path, f"expected {expected}, got {describe(value)}")
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise self.error(
                    path, f"expected {expected}, got {describe(item)} as item {i + 1}"
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
        out: list[Glob] = []
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
                path, f"expected a finding code or a list of codes, got {describe(value)}"
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
                value = [canonical_glob(v) for v in value]
            globs = self.globs(value, kpath, negatable=True)
            if key == "os":
                for g in (getattr(g, "inner", g) for g in globs):
                    if g.is_literal and g.pattern not in KNOWN_OS:
                        hint = suggest(g.pattern.lower(), KNOWN_OS)
                        msg = f'unknown os "{g.pattern}" (expected {", ".join(KNOWN_OS)})'
                        if hint:
                            msg = f'unknown os "{g.pattern}" (did you mean "{hint}"?)'
                        raise self.error(kpath, msg)
            kwargs[key] = tuple(globs)
        return Condition(**kwargs)


#: a valid value of each kind of required key, put in for a missing one so that the rest of its
#: table is judged in the same run (the table still counts as invalid)
_STAND_IN = {"text": "_", "glob": "*", "globs": ["*"], "code": "WA001", "size": 1}


def _stand_ins(path: KeyPath) -> dict[str, Any]:
    """Stand-ins for the required keys of the table at ``path`` (``("component", 0)``)."""
    table = TABLES.get(str(path[0])) if path else None
    if table is None:
        return {}
    return {k.name: _STAND_IN[k.kind] for k in table.keys if k.required and k.kind in _STAND_IN}


def canonical_glob(pattern: str) -> str:
    """A distribution-name glob in canonical form (PEP 503: lower case, one ``-`` for each run of
    ``-_.``), as conditions' ``name`` does; a glob with a ``[...]`` set is left as written."""
    return pattern if "[" in pattern else re.sub(r"[-_.]+", "-", pattern).lower()
