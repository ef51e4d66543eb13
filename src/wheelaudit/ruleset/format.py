"""The rules format as data: every table, every key, its kind and one line about it.

The one declaration of which keys each table of a rules file (and ``[tool.wheelaudit]``) takes
and which of them are required. The loader (:mod:`wheelaudit.ruleset.tables`) takes its key lists
from here; ``scripts/gen_schemas.py`` makes the shipped JSON Schemas
(``wheelaudit/schemas/rules.schema.json``, ``config.schema.json``) from here and from the code
registry (:mod:`wheelaudit.model.codes`), so the two cannot drift apart. Meaning beyond a key's
shape (a glob's syntax, which component ``beside`` names, ``min`` not above ``max``) is the
loader's alone: the schema judges shape, the loader judges everything.

A key's ``kind`` is one of :data:`KINDS`; a key whose kind is ``table`` or ``tables`` names the
table it holds (``[libraries]``, ``[[component]]``) in ``table``.
"""

from __future__ import annotations

from dataclasses import dataclass

from wheelaudit.ruleset.conditions import CONDITION_KEYS, KNOWN_OS

__all__ = ["Key", "Table", "KINDS", "TABLES", "CONDITION", "CONFIG_BESIDE_RULES"]

#: The kinds of value a key takes (what the loader's typed getters accept):
KINDS = {
    "version": "the integer 1",
    "text": "a non-empty string",
    "text-or-empty": "a string (may be empty)",
    "path": "the path of a rules file, relative to the pyproject.toml",
    "choice": "one of the key's choices",
    "bool": "true or false",
    "count": "a non-negative integer",
    "size": 'a size: a non-negative integer (bytes) or "N UNIT" (B, KB, MB, GB, KiB, MiB, GiB)',
    "date": "a date, 2027-06-30",
    "regex": "a regular expression (RE2: no backreferences or lookaround) with a named group (?P<name>...)",
    "strings": "a string or a list of non-empty strings",
    "glob": "a glob",
    "globs": "a glob or a list of globs",
    "not-globs": "a glob or a list of globs; one starting with ! matches what the rest does not",
    "os-globs": "an os (" + ", ".join(KNOWN_OS) + ") or a glob over them, or a list; ! negates",
    "symbols": "a symbol entry or a list of them (C names or demangled C++ names, * a wildcard)",
    "dist-names": "a distribution name or a list of them",
    "selectors": "a finding code or code family (WA501, WA5), or a list of them",
    "code": "one whole finding code (WA501)",
    "level": 'a severity: "error" or "warning"',
    "severities": 'a table of codes or families and severities: { WA502 = "error" }',
    "condition": "a condition table: platform, os, arch, version, python, name",
    "required": "true, false or a condition table",
    "provided-by": "a table of distribution names and the library globs each provides",
    "platform-only": "a table of wheel-path globs, each with a condition table: { \"pkg/_mlx*\" = { os = \"macos\" } }",
    "table": "a table",
    "tables": "an array of tables",
}


@dataclass(frozen=True)
class Key:
    """One key of a table: its ``name`` as written, its ``kind`` (:data:`KINDS`), one line of
    ``doc``, whether it is ``required``, the ``choices`` of a ``choice`` and the ``table`` a
    ``table`` or ``tables`` key holds."""

    name: str
    kind: str
    doc: str
    required: bool = False
    choices: tuple[str, ...] = ()
    table: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: unknown kind {self.kind!r}")


@dataclass(frozen=True)
class Table:
    """A table of the format: its ``name`` (``""`` for the top level, ``"limits.file-glob"``
    for a table inside another), how it is ``written`` in a file, one line of ``doc`` and its
    ``keys`` in the order messages list them."""

    name: str
    written: str
    doc: str
    keys: tuple[Key, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The keys' names: what the loader accepts in this table."""
        return tuple(k.name for k in self.keys)

    @property
    def required(self) -> tuple[str, ...]:
        """The keys that must be given."""
        return tuple(k.name for k in self.keys if k.required)


_WHEN = "the wheels this rule applies to (a condition); elsewhere it is skipped"

_CONDITION_DOCS = {
    "platform": 'globs over the wheel\'s platform tags ("macosx_*_arm64", "manylinux*_x86_64", "any")',
    "os": "the operating systems the tags name: " + ", ".join(KNOWN_OS),
    "arch": 'the architectures as the tags spell them ("x86_64", "aarch64", "arm64"); universal2 is arm64 and x86_64',
    "version": 'globs over the distribution version ("*+cu*", "1.5.*")',
    "python": 'globs over the python tags ("cp311", "cp3*")',
    "name": 'globs over the canonical distribution name ("mlx-metal")',
}

#: A condition table (``when``, and ``required`` when it is a table): every key given must hold.
CONDITION = Table(
    "condition", "{ os = \"macos\", arch = \"arm64\" }",
    "a condition: every key given must hold for the wheel (a value is a glob or a list of globs, any may match)",
    tuple(Key(k, "os-globs" if k == "os" else "not-globs", _CONDITION_DOCS[k]) for k in CONDITION_KEYS),
)

_TABLES = (
    Table("", "", "a wheelaudit rules file (version 1): what a correct wheel of one project looks like", (
        Key("version", "version", "the format the file is written in: 1", required=True),
        Key("name", "text", "the project's name, shown in reports"),
        Key("select", "selectors", "codes or families to report only (the command line overrides them)"),
        Key("ignore", "selectors", "codes or families never to report (the command line overrides them)"),
        Key("fail-on", "level", 'the lowest severity that fails the run (default "error")'),
        Key("severity", "severities", 'per-code or per-family severity overrides: { WA502 = "error", WA6 = "warning" }'),
        Key("libraries", "table", "every native binary in scope must match one of the expected names", table="libraries"),
        Key("component", "tables", "code that exactly one library must carry", table="component"),
        Key("file", "tables", "data files that travel with code: how many, and beside which library", table="file"),
        Key("binary", "tables", "constraints on the binaries whose path matches a glob", table="binary"),
        Key("metadata", "tables", "constraints on the wheel's Requires-Dist", table="metadata"),
        Key("linkage", "table", "where dependencies may resolve and which rpaths are acceptable", table="linkage"),
        Key("cmake", "table", "how a hand-written CMake package config declares its targets (WA705)", table="cmake"),
        Key("limits", "table", "size budgets (WA605 when one is exceeded)", table="limits"),
        Key("waive", "tables", "a known finding, accepted on purpose", table="waive"),
        Key("abi", "table", "what check --baseline holds the release to (WA801-WA803)", table="abi"),
        Key("release", "table", "what check --release expects of one release's wheels (WA811-WA813)", table="release"),
    )),
    Table("libraries", "[libraries]", "every native binary in scope must match one of the expected names (WA101); identity (WA102)", (
        Key("scope", "globs", "the binaries the table is about (default: every native binary of the wheel)"),
        Key("expected", "globs", "the names the binaries in scope may have", required=True),
        Key("identity", "choice", 'each shared library\'s SONAME / install name must equal its file name ("filename", the default) or is not checked ("off")',
            choices=("filename", "off")),
        Key("when", "condition", _WHEN),
    )),
    Table("component", "[[component]]", "code that exactly one library must carry (WA201-WA206)", (
        Key("name", "text", "the component's name, unique in the file", required=True),
        Key("symbols", "symbols", "sentinels: a library that defines one carries the component"),
        Key("strings", "strings", "evidence where symbols are hidden: text only the component's code carries"),
        Key("strong-only", "bool", "weak (inline) definitions do not count as evidence"),
        Key("owner", "glob", "the library that must carry the component"),
        Key("required", "required", "whether some library must carry it: true (default), false, or a condition"),
        Key("exempt", "globs", "libraries whose definitions never count"),
        Key("when", "condition", _WHEN),
        Key("cmake-target", "text", "the CMake imported target a package config of the wheel must declare for the owner (WA705)"),
    )),
    Table("file", "[[file]]", "data files that travel with code (WA301-WA303)", (
        Key("name", "text", "the rule's name in reports (default: its glob)"),
        Key("glob", "glob", "the files the rule counts", required=True),
        Key("count", "count", "exactly this many must match (excludes min and max)"),
        Key("min", "count", "at least this many must match"),
        Key("max", "count", "at most this many may match"),
        Key("beside", "text", "the component whose library's directory each match must sit in"),
        Key("when", "condition", _WHEN),
    )),
    Table("binary", "[[binary]]", "constraints on the binaries whose path matches a glob (WA401-WA403)", (
        Key("name", "text", "the rule's name in reports (default: its path glob)"),
        Key("path", "glob", "the binaries the constraints apply to", required=True),
        Key("count", "count", "how many binaries must match (WA301)"),
        Key("must-not-define", "strings", "components (by name) the binaries must not carry (WA401)"),
        Key("must-import", "symbols", "symbols the binaries must import, not define (WA402)"),
        Key("must-need", "globs", "dependency basenames the binaries must have (WA403)"),
        Key("must-not-need", "globs", "dependency basenames the binaries must not have (WA403)"),
        Key("must-need-all", "not-globs", "wheel paths: every shipped library they match must be a resolved dependency (WA403)"),
        Key("when", "condition", _WHEN),
    )),
    Table("metadata", "[[metadata]]", 'constraints on the wheel\'s Requires-Dist (WA404); needs "forbid-requires" or "require"', (
        Key("name", "text", "the rule's name in reports and pytest items"),
        Key("when", "condition", _WHEN),
        Key("forbid-requires", "globs", "distribution-name globs no requirement may name where it applies"),
        Key("require", "dist-names", "distributions that must be required everywhere the wheel installs, without an extra"),
    )),
    Table("linkage", "[linkage]", "where dependencies may resolve and which rpaths are acceptable (WA501-WA505)", (
        Key("allow-external", "globs", "dependencies that may resolve outside the wheel, on top of the platform's defaults"),
        Key("provided-by", "provided-by", "libraries another distribution ships; the wheel must require it (WA505)"),
        Key("forbid-rpath", "globs", "rpath entries that are always an error (WA502)"),
        Key("allow-rpath", "globs", "absolute rpath entries accepted on purpose"),
        Key("optional", "globs", "dependencies a binary can do without (an ImportError fallback): unresolved, a warning"),
        Key("check", "bool", "false turns the linkage checks off"),
    )),
    Table("cmake", "[cmake]", "how a hand-written CMake package config declares its targets (WA705)", (
        Key("config", "globs", "the package config files, each read as text", required=True),
        Key("declares", "regex", "a regular expression that finds each declared target: named groups name and library", required=True),
        Key("namespace", "text-or-empty", 'the prefix of the targets\' names ("executorch::")'),
    )),
    Table("limits", "[limits]", "size budgets; each one exceeded is a WA605", (
        Key("wheel-compressed", "size", "the size of the .whl file"),
        Key("wheel-uncompressed", "size", "the members' sizes added up, as installed"),
        Key("file", "size", "the largest any one member may be, uncompressed"),
        Key("files", "count", "the number of members"),
        Key("file-glob", "tables", "a budget for each member a glob matches", table="limits.file-glob"),
    )),
    Table("limits.file-glob", "[[limits.file-glob]]", "a budget for each member a glob matches", (
        Key("glob", "glob", "the members the budget applies to (full paths)", required=True),
        Key("max", "size", "the largest each matching member may be, uncompressed", required=True),
    )),
    Table("waive", "[[waive]]", "a known finding, accepted on purpose; it stays in every report with its reason", (
        Key("code", "code", "the finding's code (one whole code)", required=True),
        Key("target", "glob", "a glob over the finding's subject or one of its symbols"),
        Key("path", "glob", "a glob over one of the finding's paths (or a path's file name)"),
        Key("reason", "text", "why the finding is accepted", required=True),
        Key("until", "date", "the last day the waiver holds; past it the waiver lapses (WA004)"),
        Key("when", "condition", "the wheels the waiver applies to; elsewhere it is silent"),
    )),
    Table("abi", "[abi]", "what check --baseline holds the release to (WA801-WA803)", (
        Key("policy", "choice", '"semver" (default: breaks allowed in a major release and a minor one below 1.0), '
                                '"strict" (every break an error) or "off" (WA801-WA803 off)',
            choices=("semver", "strict", "off")),
        Key("public", "globs", "libraries whose exports are the project's promise, besides those the consumer surface names"),
    )),
    Table("release", "[release]", "what check --release expects of one release's wheels (WA811-WA813)", (
        Key("platforms", "strings", "the platform tags each of which needs a wheel (WA813)"),
        Key("only", "platform-only", "wheel-path globs of modules and libraries that ship on some platforms only, each with its condition (WA811)"),
    )),
    CONDITION,
)

#: Every table of the format by name (``""`` is the top level of a rules file).
TABLES: dict[str, Table] = {t.name: t for t in _TABLES}

#: ``[tool.wheelaudit]`` with ``rules = "path"``: the keys that may sit beside it (they override
#: the rules file's own). Without ``rules`` the table is a ruleset, inline (``version`` optional).
CONFIG_BESIDE_RULES: tuple[Key, ...] = (
    Key("rules", "path", "the project's rules file, relative to this pyproject.toml", required=True),
    *(k for k in TABLES[""].keys if k.name in ("select", "ignore", "fail-on", "severity")),
)

