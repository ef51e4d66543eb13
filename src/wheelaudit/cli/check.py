"""``wheelaudit check``: the release gate."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from wheelaudit.cli.common import (add_jobs_option, add_output_options, add_report_option, check_report_targets,
                                   output_stream, split_codes, split_severities, write_reports)
from wheelaudit.cli.common import add_verbosity_options

if TYPE_CHECKING:
    from wheelaudit.ruleset.load import Ruleset


def add_parser(sub) -> None:
    from wheelaudit.render import formats

    p = sub.add_parser("check", help="audit wheels against a rules file (the release gate)",
                       description="Audit wheels against rules; exit 0 when nothing at or above --fail-on is found, "
                                   "1 when something is, 2 on a usage or input error.")
    p.add_argument("wheels", nargs="*", metavar="WHEEL_OR_DIR", help=".whl files, folders of .whl files (dist/), or unpacked / installed trees")
    p.add_argument("--rules", "-r", metavar="FILE",
                   help="rules file, or the name of a shipped ruleset (executorch, mlx, runtimes) (default: "
                        "[tool.wheelaudit] in the nearest pyproject.toml, else built-in checks only)")
    add_output_options(p, formats())
    add_report_option(p, formats())
    p.add_argument("--select", action="append", metavar="CODES", help="only these codes or prefixes (WA2,WA301)")
    p.add_argument("--ignore", action="append", metavar="CODES", help="never these codes or prefixes")
    p.add_argument("--fail-on", choices=["error", "warning"], default=None,
                   help="lowest severity that fails the run (default: error)")
    p.add_argument("--severity", action="append", metavar="CODE=LEVEL",
                   help="change a code's (or family's) severity: WA502=error,WA604=warning (on top of the rules' own)")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when findings fail the check (2 still means it could not run)")
    p.add_argument("--statistics", action="store_true",
                   help="text report: the findings counted by code instead of each finding")
    add_jobs_option(p)
    add_verbosity_options(p)
    p.add_argument("--together", action="store_true",
                   help="treat the wheels as one install: components and linkage across them")
    p.add_argument("--find-links", metavar="DIR",
                   help="wheels of the checked wheels' requirements, found in this folder (never on the network):"
                        " a required distribution's real wheel decides which of their dependencies it provides")
    p.add_argument("--env", nargs="?", const=True, default=None, metavar="PATH_OR_PYTHON",
                   help="audit what is installed, as one install: a site-packages, a venv, or an interpreter's"
                        " path (never run); no value: this interpreter's environment")
    p.add_argument("--baseline", action="append", nargs="+", metavar="OLD_WHEEL_OR_DIR",
                   help="the last release's wheels (or another build of this one): each wheel is compared with the "
                        "baseline wheel of its platform and Python tags: exports, identities, libraries and "
                        "extension modules that are gone (WA801-WA804); give it after the wheels")
    p.add_argument("--release", action="store_true",
                   help="the wheels are one release: one name and version, every platform of [release] platforms, "
                        "the same modules and libraries on every platform (WA811-WA813)")
    p.set_defaults(run=run)


def resolve_rules(rules_arg: str | None) -> Ruleset | None:
    """The ruleset from ``--rules``, else from pyproject.toml discovery, else None."""
    from wheelaudit.cli.common import UsageError, trace_rules
    from wheelaudit.ruleset.config import find_rules
    from wheelaudit.ruleset.load import load_rules

    if rules_arg:
        from wheelaudit.ruleset import shipped

        path = shipped.find(rules_arg) or Path(rules_arg)
        if not path.is_file():
            bare = path.name == rules_arg and not path.suffix and not path.exists()  # (meant a shipped one?)
            raise UsageError(f"rules file {path} {'is not a file' if path.exists() else 'does not exist'}"
                             + (f" (shipped rulesets, by name: {', '.join(shipped.names())})" if bare else ""))
        ruleset: Ruleset | None = load_rules(path)
        origin: Path | None = None
    else:
        ruleset, origin = find_rules(Path.cwd())
    trace_rules(Path.cwd(), rules_arg, ruleset, origin)  # (--verbose)
    return ruleset


def run(args: argparse.Namespace) -> int:
    from wheelaudit.archive import expand_inputs
    from wheelaudit.scanner import scan

    check_report_targets(args.report, args.output)
    if args.statistics and args.format != "text":
        from wheelaudit.cli.common import UsageError

        raise UsageError(f"--statistics counts the findings of a text report, not of --format {args.format}")
    ruleset = resolve_rules(args.rules)
    select = split_codes(args.select)
    ignore = split_codes(args.ignore)
    severity = split_severities(args.severity)
    strings = ruleset.strings() if ruleset is not None else []
    from wheelaudit.model.interest import Interest

    interest = Interest.for_rules(ruleset)
    paths = expand_inputs(args.wheels)
    notes: list[str] = []
    providers: set[str] = set()  # labels of the wheels found with --find-links
    if args.find_links and not Path(args.find_links).is_dir():
        from wheelaudit.cli.common import UsageError

        raise UsageError(f"--find-links {args.find_links}: not a folder")
    from wheelaudit.binary.budget import Budget

    budget = Budget()  # the run's one budget (wheelaudit.binary.budget)
    if args.env is not None or not paths:  # (an installed environment: wheelaudit.scanner.installed)
        wheels, notes = _environment(args, paths, strings, interest, budget)
    elif args.together:
        from wheelaudit.scanner.together import scan_together

        if args.find_links:
            from wheelaudit.scanner.find_links import with_providers

            members = [scan(p, strings=strings, interest=interest, jobs=args.jobs, budget=budget) for p in paths]
            merged, providers, notes = with_providers(members, args.find_links, strings=strings,
                                                      interest=interest, jobs=args.jobs, budget=budget)
            wheels = [merged]
        else:
            wheels = [scan_together(paths, strings=strings, interest=interest, jobs=args.jobs, budget=budget)]
    else:
        wheels = [scan(p, strings=strings, interest=interest, jobs=args.jobs, budget=budget) for p in paths]
        if args.find_links:
            from wheelaudit.scanner.find_links import with_providers

            checked = []
            for w in wheels:
                merged, found, more = with_providers([w], args.find_links, strings=strings,
                                                     interest=interest, jobs=args.jobs, budget=budget)
                checked.append(merged)
                providers |= found
                notes += more
            wheels = checked
    from wheelaudit.api import audit_wheels
    from wheelaudit.render import renderer

    baseline = None
    if args.baseline:
        from wheelaudit.scanner.baseline import scan_abi

        if args.env is not None or args.together:
            from wheelaudit.cli.common import UsageError

            raise UsageError("--baseline compares wheels with wheels: not with --env or --together")
        baseline = [scan_abi(p, jobs=args.jobs) for p in expand_inputs([b for group in args.baseline for b in group])]
    if args.release and (args.env is not None or args.together):
        from wheelaudit.cli.common import UsageError

        raise UsageError("--release checks a release's wheels against each other: not with --env or --together")
    report = audit_wheels(wheels, ruleset, select=select, ignore=ignore, fail_on=args.fail_on, severity=severity,
                          baseline=baseline, release=args.release)
    report.notes += list(budget.notes.values())  # (what the run's budget cut, said once)
    if args.env is not None:
        report.notes += notes
    if args.find_links:
        from wheelaudit.scanner.find_links import keep_checked

        for wr in report.wheels:
            wr.findings = keep_checked(wr.findings, wr.wheel.origins, providers)
        report.notes += list(dict.fromkeys(notes))
    render = renderer(args.format)
    with output_stream(args.output, report.exit_code, budget, gate=True) as out:
        color = False
        if args.format == "text":
            from wheelaudit.render.text import use_color

            color = use_color(out, args.color)
            if args.statistics:
                from wheelaudit.render.text import render_statistics as render
        render(report, out, color)
    write_reports(report, args.report)
    if args.output and args.output != "-":  # (the verdict on the terminal too, not only in the file)
        from wheelaudit.render.text import aside, summary_line

        with output_stream(None, report.exit_code, gate=True) as out:
            aside(out, f"{summary_line(report)}\nwrote the {args.format} report to {args.output}\n")
    return 0 if args.exit_zero and report.exit_code == 1 else report.exit_code


def _environment(args: argparse.Namespace, paths: list[Path], strings, interest, budget=None) -> tuple[list, list[str]]:
    """``--env [PATH_OR_PYTHON]``: the environment scanned as one install, and its notes."""
    from wheelaudit.cli.main import UsageError
    from wheelaudit.scanner.installed import NotAnEnvironment, scan_environment

    if args.env is None:
        raise UsageError("give the wheels to check (WHEEL_OR_DIR...), or --env for an installed environment")
    if paths or args.together or args.find_links:
        raise UsageError("--env audits an installed environment on its own: give it no wheels, --together or --find-links")
    try:
        merged, notes = scan_environment(None if args.env is True else args.env, strings=strings,
                                         interest=interest, jobs=args.jobs, budget=budget)
    except NotAnEnvironment as exc:
        raise UsageError(f"--env: {exc}") from None
    return [merged], notes
