"""``wheelaudit explain [CODE...]``: what a finding code means, why it matters, how to fix it and
an example, from the one code registry (:mod:`wheelaudit.model.codes`); no code: every code, one
line each."""

from __future__ import annotations

import argparse

from wheelaudit.cli.common import add_verbosity_options


def add_parser(sub) -> None:
    p = sub.add_parser("explain", help="what a finding code means, why it matters and how to fix it",
                       description="Explain finding codes: what each means, why it matters, how to fix it, and an "
                                   "example. CODE is a whole code (WA501) or a family (WA5: each of its codes). "
                                   "Without a CODE, list every code with its name, default severity and meaning.")
    p.add_argument("codes", nargs="*", metavar="CODE", help="finding codes or families (WA501, WA5)")
    add_verbosity_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from wheelaudit.cli.common import UsageError, output_stream
    from wheelaudit.model.codes import CODES, CodeError, expand, explain

    try:
        codes = [code for value in args.codes for part in value.split(",") if part.strip()
                 for code in expand(part)]
    except CodeError as exc:
        raise UsageError(str(exc)) from None
    with output_stream(None) as out:
        if not codes:
            width = max(len(c.name) for c in CODES.values())
            for c in CODES.values():
                out.write(f"{c.code}  {c.name:<{width}}  {c.severity:<7}  {c.summary}\n")
            return 0
        for i, code in enumerate(dict.fromkeys(codes)):
            if i:
                out.write("\n")
            out.write(explain(code).text())
    return 0
