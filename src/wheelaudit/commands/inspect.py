"""``wheelaudit inspect``: every native binary with its facts."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import add_jobs_option, add_output_options, output_stream


def add_parser(sub) -> None:
    p = sub.add_parser("inspect", help="list native binaries with their facts",
                       description="Every native binary of a wheel: format, architectures, kind, size, identity, "
                                   "dependencies (and where each resolves), rpaths, symbol counts.")
    p.add_argument("wheel", metavar="WHEEL_OR_DIR")
    add_output_options(p, ["text", "json"])
    p.add_argument("--symbols", action="store_true", help="also list exported and imported symbols")
    p.add_argument("--rules", "-r", metavar="FILE",
                   help="rules whose [linkage] table (provided-by, allow-external) informs where dependencies resolve")
    add_jobs_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..render import json as json_render
    from ..render import text as text_render
    from ..scan import scan

    from ..linkage import resolution_table
    from .check import resolve_rules

    ruleset = resolve_rules(args.rules)
    wheel = scan(Path(args.wheel), jobs=args.jobs)
    resolutions = resolution_table(wheel, ruleset.linkage if ruleset is not None else None)
    with output_stream(args.output) as out:
        if args.format == "json":
            json_render.render_inspect([wheel], out, symbols=args.symbols, resolutions=resolutions)
        else:
            text_render.render_inspect([wheel], out, color=text_render.use_color(out, args.no_color),
                                       symbols=args.symbols, resolutions=resolutions)
    return 0
