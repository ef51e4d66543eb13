"""``wheelaudit init WHEEL_OR_DIR > rules.toml``: a starter ruleset from a known-good wheel."""

from __future__ import annotations

import argparse
from pathlib import Path

from wheelaudit.cli.common import add_jobs_option, output_stream
from wheelaudit.cli.common import add_verbosity_options


def add_parser(sub) -> None:
    p = sub.add_parser("init", help="print a starter ruleset inferred from a known-good wheel",
                       description="Print a starter TOML ruleset that holds of a known-good wheel: expected library "
                                   "names (repair hashes and versions as globs: libXau-*.so*) and identity, one "
                                   "[[component]] per namespace a single library defines "
                                   "(sentinels and owner), data files beside the libraries, and the linkage it needs "
                                   "from outside the wheel, each entry with a comment saying how it was inferred. "
                                   "`wheelaudit check` passes on the same wheel with it.")
    p.add_argument("wheel", metavar="WHEEL_OR_DIR", nargs="+",
                   help="a known-good wheel; several (or a folder of them): the wheels of one release, and rules "
                        "that hold of all of them, with a [release] table")
    p.add_argument("--output", "-o", metavar="FILE", help="write the rules to FILE instead of standard output")
    add_jobs_option(p)
    add_verbosity_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from wheelaudit.archive import expand_inputs
    from wheelaudit.review.init import release_ruleset, starter_ruleset
    from wheelaudit.scanner import scan

    paths = expand_inputs(args.wheel)
    wheels = [scan(Path(p), jobs=args.jobs) for p in paths]
    text = starter_ruleset(wheels[0]) if len(wheels) == 1 else release_ruleset(wheels)
    with output_stream(args.output) as out:
        out.write(text)
    return 0
