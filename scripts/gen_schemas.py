#!/usr/bin/env python3
"""Regenerate the JSON Schemas of the rules format, shipped in the package, and the key reference
of docs/rules.md:

    src/wheelaudit/schemas/rules.schema.json    a rules file (rules/*.toml)
    src/wheelaudit/schemas/config.schema.json   the [tool.wheelaudit] table of a pyproject.toml
    docs/rules.md                               its "Every key" table, between two markers

from the one declaration of the format's tables and keys (wheelaudit.ruleset.format, which the
loader takes its key lists from) and the one code registry (wheelaudit.model.codes), so that the
schemas, the loader and the docs cannot drift apart. `--check` changes nothing and exits 1
when a schema is out of date (the test suite runs it).

    python scripts/gen_schemas.py [--check]

The schemas are JSON Schema Draft 7: the newest draft that validate-pyproject (fastjsonschema),
taplo / Even Better TOML and VS Code all read. They judge a file's shape; what needs more than
one key at a time or the file system (a glob's syntax, which component `beside` names, min <= max,
a calendar date, the file `rules = "..."` names) is judged by the loader alone
(`wheelaudit rules validate`), as docs/rules.md says.
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

from _regen_util import write_generated  # noqa: E402
from wheelaudit.model.codes import CODES, SEVERITIES, families  # noqa: E402
from wheelaudit.ruleset.conditions import KNOWN_OS  # noqa: E402
from wheelaudit.ruleset.format import CONFIG_BESIDE_RULES, KINDS, TABLES, Key, Table  # noqa: E402
from wheelaudit.model.globs import MAX_PATTERN_LENGTH  # noqa: E402
from wheelaudit.ruleset.tables import DIST_NAME_RE, SIZE_UNITS  # noqa: E402

DRAFT = "http://json-schema.org/draft-07/schema#"
BASE = "https://wheelaudit.invalid/schemas/"
OUT = ROOT / "src" / "wheelaudit" / "schemas"

Schema = dict[str, Any]


# -- codes (from the registry) ----------------------------------------------------------------

def _selectors() -> list[str]:
    """Every selector the registry accepts: each code and each family (WA5, WA50) it begins."""
    out: dict[str, None] = {}
    for code in CODES:
        for n in (3, 4, 5):
            out.setdefault(code[:n], None)
    return sorted(out)


def _selector_doc(sel: str) -> str:
    if sel in CODES:
        c = CODES[sel]
        return f"{c.code} {c.name} ({c.severity}): {c.summary}"
    codes = [c for c in CODES if c.startswith(sel)]
    title = families().get(sel)
    return f"{sel}: {title + ' — ' if title else ''}{', '.join(codes)}"


def _lenient(words: list[str]) -> str:
    """A pattern for ``words`` as the registry's parsers take them: any case, surrounding space."""
    def ci(word: str) -> str:
        return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)
    return r"^\s*(?:" + "|".join(ci(w) for w in words) + r")\s*$"


def _codes_schema(words: list[str], what: str) -> Schema:
    """One of ``words`` (completed and described by editors), or the same in other case with
    space around it (as the loader takes it)."""
    return {
        "type": "string",
        "anyOf": [
            {"enum": words, "x-taplo": {"docs": {"enumValues": [_selector_doc(w) for w in words]}}},
            {"pattern": _lenient(words)},
        ],
        "description": what,
    }


SELECTOR = _codes_schema(_selectors(), "a finding code (WA501) or code family (WA5, WA50); the codes are in docs/codes.md")
WHOLE_CODE = _codes_schema(sorted(CODES), "one whole finding code (WA501); the codes are in docs/codes.md")
LEVEL_LENIENT: Schema = {"type": "string", "anyOf": [{"enum": list(SEVERITIES)}, {"pattern": _lenient(list(SEVERITIES))}]}


# -- the kinds of value (from ruleset/format.py) ----------------------------------------------

NON_EMPTY: Schema = {"type": "string", "pattern": r"\S"}
GLOB: Schema = {"type": "string", "pattern": r"\S", "maxLength": MAX_PATTERN_LENGTH}
NOT_GLOB: Schema = {**GLOB, "not": {"const": "!"}}
OS_GLOB: Schema = {**NOT_GLOB, "anyOf": [
    {"enum": list(KNOWN_OS)},
    {"enum": [f"!{os}" for os in KNOWN_OS]},
    {"pattern": r"[*?\[]"},  # a glob over the os names; a literal must be one of them
]}
SYMBOL: Schema = {"type": "string", "pattern": r"^\S(?:[\s\S]*\S)?$", "maxLength": MAX_PATTERN_LENGTH,
                  "not": {"pattern": r"^\*+$"}}
DIST_NAME: Schema = {"type": "string", "pattern": "^" + DIST_NAME_RE.pattern + "$"}
SIZE: Schema = {"anyOf": [
    {"type": "integer", "minimum": 0},
    {"type": "string", "pattern": r"^\s*\d+(?:\.\d+)?\s*(?:" + "|".join(SIZE_UNITS) + r")\s*$"},
]}
# (a TOML date: a string to taplo, a date object to validate-pyproject, which no JSON type names)
DATE: Schema = {"not": {"type": ["integer", "number", "boolean", "array", "object", "null"]},
                "pattern": r"^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])$"}


def _one_or_list(item: Schema) -> Schema:
    return {"anyOf": [item, {"type": "array", "items": item}]}


def _ref(name: str) -> Schema:
    return {"$ref": f"#/definitions/{name.replace('.', '-')}"}


def _value(key: Key) -> Schema:
    """The schema of ``key``'s value, from its kind."""
    k = key.kind
    simple: dict[str, Schema] = {
        "version": {"type": "integer", "const": 1},
        "text": NON_EMPTY,
        "text-or-empty": {"type": "string"},
        "path": NON_EMPTY,
        "bool": {"type": "boolean"},
        "count": {"type": "integer", "minimum": 0},
        "size": SIZE,
        "date": DATE,
        "regex": {"type": "string", "pattern": r"\(\?P<name>"},
        "strings": _one_or_list(NON_EMPTY),
        "glob": GLOB,
        "globs": _one_or_list(GLOB),
        "not-globs": _one_or_list(NOT_GLOB),
        "os-globs": _one_or_list(OS_GLOB),
        "symbols": _one_or_list(SYMBOL),
        "dist-names": _one_or_list(DIST_NAME),
        "selectors": _one_or_list(_ref("selector")),
        "code": _ref("code"),
        "level": {"type": "string", "enum": list(SEVERITIES)},
        "condition": _ref("condition"),
        "required": {"anyOf": [{"type": "boolean"}, _ref("condition")]},
        "table": _ref(key.table or ""),
        "tables": {"type": "array", "items": _ref(key.table or "")},
    }
    if k in simple:
        out = dict(simple[k])
    elif k == "choice":
        out = {"type": "string", "enum": list(key.choices)}
    elif k == "severities":
        out = {
            "type": "object",
            "properties": {s: {**_ref("severity"), "description": _selector_doc(s)} for s in _selectors()},
            "patternProperties": {SELECTOR["anyOf"][1]["pattern"]: _ref("severity")},
            "additionalProperties": False,
        }
    elif k == "provided-by":
        out = {"type": "object", "patternProperties": {DIST_NAME["pattern"]: _one_or_list(GLOB)},
               "additionalProperties": False}
    elif k == "platform-only":
        out = {"type": "object", "propertyNames": {"minLength": 1}, "additionalProperties": _ref("condition")}
    else:  # pragma: no cover - every kind of KINDS is handled above
        raise SystemExit(f"gen_schemas: no schema for kind {k!r} ({KINDS.get(k)})")
    out["description"] = key.doc
    return out


# Constraints between keys of one table that a schema can state (the loader states them too).
_BETWEEN: dict[str, Schema] = {
    "component": {"anyOf": [  # at least one entry in symbols or strings
        {"required": ["symbols"], "properties": {"symbols": {"minItems": 1}}},
        {"required": ["strings"], "properties": {"strings": {"minItems": 1}}},
    ]},
    "file": {"not": {"anyOf": [{"required": ["count", "min"]}, {"required": ["count", "max"]}]}},
    "metadata": {"anyOf": [{"required": ["forbid-requires"]}, {"required": ["require"]}]},
}


def _table(t: Table, keys: tuple[Key, ...] | None = None) -> Schema:
    keys = t.keys if keys is None else keys
    out: Schema = {"type": "object", "description": t.doc,
                   "properties": {k.name: _value(k) for k in keys}, "additionalProperties": False}
    required = [k.name for k in keys if k.required]
    if required:
        out["required"] = required
    out.update(_BETWEEN.get(t.name, {}))
    return out


def _definitions() -> Schema:
    tables = {t.name.replace(".", "-"): _table(t) for t in TABLES.values() if t.name}
    return {**tables, "selector": SELECTOR, "code": WHOLE_CODE, "severity": LEVEL_LENIENT}


def rules_schema() -> Schema:
    top = _table(TABLES[""])
    return {"$schema": DRAFT, "$id": BASE + "rules.schema.json",
            "title": "wheelaudit rules file (version 1)", **top, "definitions": _definitions()}


def config_schema() -> Schema:
    # the inline form: a ruleset whose version is optional; the other form: rules = "path" and
    # only the keys that may sit beside it
    inline = tuple(replace(k, doc=k.doc + " (optional here, default 1)", required=False) if k.name == "version" else k
                   for k in TABLES[""].keys)
    rules = replace(CONFIG_BESIDE_RULES[0], required=False)
    schema = _table(Table("tool.wheelaudit", "[tool.wheelaudit]", (
        'wheelaudit\'s configuration: rules = "path" (with select, ignore, fail-on and severity beside it, '
        "which override the file's), or the ruleset itself, inline"), (rules, *inline)))
    return {"$schema": DRAFT, "$id": BASE + "config.schema.json", "title": "[tool.wheelaudit]", **schema,
            "if": {"required": ["rules"]},
            "then": {"propertyNames": {"enum": [k.name for k in CONFIG_BESIDE_RULES]}},
            "definitions": _definitions()}


def _text(schema: Schema) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


# -- the key reference of docs/rules.md (the same descriptions as the schemas') --------------------

DOC = ROOT / "docs" / "rules.md"
BEGIN = "<!-- generated by scripts/gen_schemas.py from src/wheelaudit/ruleset/format.py: do not edit -->"
END = "<!-- end of generated key reference -->"


def _cell(text: str) -> str:
    """``text`` in a Markdown table cell: ``|`` and ``*`` (globs) taken literally."""
    return text.replace("|", "\\|").replace("*", "\\*")


def _value_doc(key: Key) -> str:
    if key.kind == "choice":
        return " or ".join(f'`"{c}"`' for c in key.choices)
    if key.kind in ("table", "tables"):
        return f"`{TABLES[key.table or ''].written}`"
    return _cell(KINDS[key.kind])


def key_reference() -> str:
    rows = ["| table | key | value | meaning |", "|---|---|---|---|"]
    for t in TABLES.values():
        where = f"`{t.written}`" if t.name else "top level"
        if t.name == "condition":
            where = "condition (`when`, `required`)"
        for k in t.keys:
            req = " (required)" if k.required else ""
            rows.append(f"| {where} | `{k.name}`{req} | {_value_doc(k)} | {_cell(k.doc)} |")
    rows.append("| `[tool.wheelaudit]` | `rules` | " + KINDS["path"] + " | " + CONFIG_BESIDE_RULES[0].doc
                + "; beside it only " + ", ".join(f"`{k.name}`" for k in CONFIG_BESIDE_RULES[1:]) + " |")
    return "\n".join([BEGIN, *rows, END])


def _docs_page() -> str:
    text = DOC.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"gen_schemas: {DOC.relative_to(ROOT)} has no generated key reference ({BEGIN})")
    head, rest = text.split(BEGIN, 1)
    return head + key_reference() + rest.split(END, 1)[1]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    targets = {OUT / "rules.schema.json": _text(rules_schema()), OUT / "config.schema.json": _text(config_schema()),
               DOC: _docs_page()}
    return write_generated(targets, "gen_schemas.py", check)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
