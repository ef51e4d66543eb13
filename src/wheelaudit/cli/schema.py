"""``wheelaudit schema rules|config|check|inspect``: print a JSON Schema wheelaudit ships."""

from __future__ import annotations

import argparse

from wheelaudit.cli.common import add_verbosity_options
from wheelaudit.schemas import NAMES


def add_parser(sub) -> None:
    p = sub.add_parser("schema", help="print a JSON Schema: rules, config ([tool.wheelaudit]), check or inspect "
                                      "(their --format json reports; report: check's)",
                       description="Print a JSON Schema (Draft 7 for rules and config) that wheelaudit ships: "
                                   "`rules` (a rules file), `config` (the [tool.wheelaudit] table of a "
                                   "pyproject.toml), `check` and `inspect` (their --format json reports; `report` "
                                   "is check's). "
                                   "Editors that read TOML schemas (taplo / Even Better TOML) complete and check "
                                   "rules files with it: wheelaudit schema rules > wheelaudit-rules.schema.json, "
                                   "then `#:schema ./wheelaudit-rules.schema.json` as a rules file's first line.")
    p.add_argument("name", choices=NAMES + ("report",), metavar="{" + ",".join(NAMES) + "}", help="which schema")
    p.add_argument("--output", "-o", metavar="FILE", help="write the schema to FILE instead of standard output")
    add_verbosity_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from wheelaudit.cli.common import output_stream
    from wheelaudit.schemas import schema_text

    with output_stream(args.output) as out:
        out.write(schema_text("check" if args.name == "report" else args.name))  # (report: check's)
    return 0
