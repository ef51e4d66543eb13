"""``wheelaudit rules validate FILE...``: every problem of rules files and ``[tool.wheelaudit]``
tables, one ``file:line: key: message`` line each (the pre-commit hook's entry)."""

from __future__ import annotations

import argparse
from pathlib import Path

from wheelaudit.cli.common import add_verbosity_options


def add_parser(sub) -> None:
    p = sub.add_parser("rules", help="work with rules files (validate)",
                       description="Work with rules files. `wheelaudit rules validate FILE...` checks them.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    v = actions.add_parser(
        "validate", help="report every problem of rules files and [tool.wheelaudit] tables",
        description="Validate rules files and pyproject.toml files (their [tool.wheelaudit] table, and the rules "
                    "file its `rules` key names) with the loader `check` uses, and report every problem of "
                    "every file as FILE:LINE: KEY: MESSAGE. A file named pyproject.toml is read for its "
                    "[tool.wheelaudit] table (one without it is fine); any other file is a rules file. "
                    "Exit 0 when all are valid, 1 when a problem is found, 2 when a file does not exist.")
    v.add_argument("files", metavar="FILE", nargs="+", help="rules files (.toml) and pyproject.toml files")
    add_verbosity_options(v)  # (-q: no line for a valid file)
    v.set_defaults(run=run, format="text")  # (a text report, which -qq leaves unwritten)


def validate(path: Path) -> tuple[list[str], str]:
    """The problems of one file (``file:line: key: message`` lines, none when it is valid) and,
    for a valid file, what it holds."""
    from wheelaudit.ruleset.config import rules_from_pyproject
    from wheelaudit.ruleset.errors import RulesError
    from wheelaudit.ruleset.load import load_rules

    try:
        if path.name == "pyproject.toml":
            rules = rules_from_pyproject(path)
            if rules is None:
                return [], "no [tool.wheelaudit] table"
            if rules.path is not None and rules.path != path:
                return [], f"[tool.wheelaudit] names {rules.path}"
            return [], "[tool.wheelaudit] holds the rules"
        load_rules(path)
        return [], "valid rules"
    except RulesError as exc:
        return [str(p) for p in getattr(exc, "problems", [exc])], ""


def run(args: argparse.Namespace) -> int:
    from wheelaudit.cli.common import UsageError, output_stream
    from wheelaudit.model.messages import plural
    from wheelaudit.render.text import aside

    paths = [Path(f) for f in args.files]
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file")
        if path.is_dir():
            raise UsageError(f"{path}: a directory, not a rules file or pyproject.toml")
    seen: set[str] = set()
    bad_files = problems = 0
    results = []  # (every file validated before a line is written: the verdict is known first)
    for path in paths:
        lines, note = validate(path)
        fresh = [line for line in lines if line not in seen]  # (a rules file named twice, or by a pyproject)
        seen.update(fresh)
        results.append((path, lines, fresh, note))
        if lines:
            bad_files += 1
            problems += len(fresh)
    verdict = 1 if bad_files else 0
    with output_stream(None, verdict) as out:
        for path, lines, fresh, note in results:
            for line in fresh:
                out.write(line + "\n")
            if not lines:
                aside(out, f"{path}: ok ({note})\n")
        if bad_files:
            out.write(f"{plural(problems, 'problem')} in {bad_files} of {len(paths)} "
                      f"file{'s' if len(paths) != 1 else ''}\n")
    return verdict
