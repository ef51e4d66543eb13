"""``wheelaudit diff OLD NEW``: libraries, owners, sizes, duplicates and linkage that changed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from wheelaudit.cli.common import add_jobs_option, add_output_options, output_stream
from wheelaudit.cli.common import add_verbosity_options


def add_parser(sub) -> None:
    p = sub.add_parser("diff", help="libraries, owners, sizes, duplicates and linkage that changed between two wheels",
                       description="Compare two wheels (two releases, or two builds of one release): libraries added, "
                                   "removed and renamed (same identity, the same name but for a repair tool's hash "
                                   "or a version, or same exports under a new path), size changes, "
                                   "namespaces and duplicate groups whose owners moved, new duplicates, dependency and "
                                   "rpath changes per library, data files added or removed. Exit 0.")
    p.add_argument("old", metavar="OLD", help="the earlier wheel (.whl or unpacked tree)")
    p.add_argument("new", metavar="NEW", help="the later wheel")
    add_output_options(p, ["text", "json"])
    p.add_argument("--all", action="store_true", help="text output: do not cut long lists")
    add_jobs_option(p)
    add_verbosity_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from wheelaudit.review.diff import diff_dict, diff_wheels, render_text
    from wheelaudit.render.text import use_color
    from wheelaudit.scanner import scan

    from wheelaudit.binary.budget import Budget

    budget = Budget()  # the run's one budget (wheelaudit.binary.budget)
    old = scan(Path(args.old), jobs=args.jobs, budget=budget)
    new = scan(Path(args.new), jobs=args.jobs, budget=budget)
    d = diff_wheels(old, new)
    with output_stream(args.output) as out:
        if args.format == "json":
            json.dump(diff_dict(d), out, indent=2)
            out.write("\n")
        else:
            render_text(d, out, use_color(out, args.color), limit=None if args.all else 20)
    return 0
