"""``wheelaudit inspect``: every native binary with its facts."""

from __future__ import annotations

import argparse
import sys

from wheelaudit.cli.common import add_jobs_option, add_output_options, output_stream
from wheelaudit.cli.common import add_verbosity_options


def add_parser(sub) -> None:
    p = sub.add_parser("inspect", help="list native binaries with their facts",
                       description="Every native binary of a wheel: format, architectures, kind, size, identity, "
                                   "dependencies (and where each resolves), rpaths, symbol counts. --format dot: the "
                                   "dependency graph for Graphviz.")
    p.add_argument("wheels", nargs="+", metavar="WHEEL_OR_DIR",
                   help=".whl files, folders of .whl files, or unpacked / installed trees")
    add_output_options(p, ["text", "json", "dot"])
    p.add_argument("--symbols", action="store_true", help="also list exported and imported symbols")
    p.add_argument("--rules", "-r", metavar="FILE",
                   help="rules whose [linkage] table (provided-by, allow-external) informs where dependencies resolve")
    add_jobs_option(p)
    add_verbosity_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from wheelaudit.render import json as json_render
    from wheelaudit.render import text as text_render
    from wheelaudit.scanner import scan

    from wheelaudit.checks.resolution import resolution_table
    from wheelaudit.cli.check import resolve_rules

    from wheelaudit.archive import expand_inputs

    ruleset = resolve_rules(args.rules)
    linkage = ruleset.linkage if ruleset is not None else None
    from wheelaudit.binary.budget import Budget

    budget = Budget()  # the run's one budget (wheelaudit.binary.budget)
    wheels = [scan(p, jobs=args.jobs, budget=budget) for p in expand_inputs(args.wheels)]
    for note in budget.notes.values():  # (what it cut, said once)
        print(f"wheelaudit: note: {note}", file=sys.stderr)
    if args.format == "dot":
        from wheelaudit.checks.describe import describe_libraries
        from wheelaudit.render.drawing import dot

        described = [(w, describe_libraries(w, ruleset)) for w in wheels]
        with output_stream(args.output, budget=budget) as out:
            dot.render_inspect(described, out)
        return 0
    tables = [resolution_table(w, linkage) for w in wheels]  # (keyed by paths inside one wheel)
    with output_stream(args.output, budget=budget) as out:
        if args.format == "json":
            import json

            doc = json_render.inspect_dict(wheels[:1], symbols=args.symbols, resolutions=tables[0])
            for w, table in zip(wheels[1:], tables[1:], strict=True):
                doc["wheels"] += json_render.inspect_dict([w], symbols=args.symbols, resolutions=table)["wheels"]
            json.dump(doc, out, indent=2)
            out.write("\n")
        else:
            color = text_render.use_color(out, args.color)
            for i, (w, table) in enumerate(zip(wheels, tables, strict=True)):
                if i:
                    out.write("\n")
                text_render.render_inspect([w], out, color=color, symbols=args.symbols, resolutions=table)
    return 0
