"""``wheelaudit dups``: symbols defined by more than one library, as candidate components.

The list a release engineer reads to write ``[[component]]`` rows: exported definitions
(demangled) that several libraries carry, grouped by namespace / prefix (``mlx::core``, ``xnn_``),
strong duplicates (second copies of code) first, weak-only ones (inline functions, templates)
after them and labelled so, each sorted by how much is duplicated. Exit 0 (it is a report).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, TextIO

from wheelaudit.cli.common import add_jobs_option, add_output_options, output_stream
from wheelaudit.cli.common import add_verbosity_options
from wheelaudit.model.messages import more, plural, shorten

if TYPE_CHECKING:
    from wheelaudit.model.wheel import Wheel

#: groups shown in text output per section unless --all
DEFAULT_LIMIT = 15


def add_parser(sub) -> None:
    p = sub.add_parser("dups", help="symbols defined by more than one library, grouped into candidate components",
                       description="Exported symbols (demangled) defined by more than one library, grouped by "
                                   "namespace (C++: the first two :: levels) or prefix (C: up to the first _, or the "
                                   "first word of a camelCase name; Fortran names together), strong duplicates first, "
                                   "weak-only ones (inline functions, templates) after them; each group with its "
                                   "libraries, example symbols and a sentinel pattern for a [[component]] row. Linker "
                                   "boilerplate (_init, _edata, __bss_start, ELF version nodes, PyInit_*) is left "
                                   "out. Exit 0.")
    p.add_argument("wheels", nargs="+", metavar="WHEEL_OR_DIR",
                   help="wheels, folders of wheels or trees: each on its own, or as one install with --together")
    p.add_argument("--together", action="store_true",
                   help="the wheels as one install: duplicates across all of them, each library with its wheel")
    add_output_options(p, ["text", "json"])
    p.add_argument("--min-count", type=int, default=1, metavar="N",
                   help="only groups with at least N duplicated symbols (default: 1)")
    p.add_argument("--all", action="store_true",
                   help=f"show every group (text output shows the first {DEFAULT_LIMIT} of each kind)")
    p.add_argument("--examples", type=int, default=3, metavar="N", help="example symbols per group (default: 3)")
    add_jobs_option(p)
    add_verbosity_options(p)
    p.set_defaults(run=run)


def dups_dict(wheel: Wheel, groups) -> dict[str, Any]:
    from wheelaudit import __version__
    from wheelaudit.review.dups import wheel_dict
    from wheelaudit.model.report import SCHEMA_VERSION

    strong = [g for g in groups if g.strength == "strong"]
    return {
        "schema": SCHEMA_VERSION,
        "tool": {"name": "wheelaudit", "version": __version__},
        "wheel": wheel_dict(wheel),
        "summary": {
            "symbols": sum(g.count for g in groups),
            "strong_symbols": sum(g.count for g in strong),
            "groups": len(groups),
            "strong_groups": len(strong),
            "weak_groups": len(groups) - len(strong),
        },
        "groups": [_with_origins(g.to_dict(), wheel) for g in groups],
    }


def _with_origins(group: dict[str, Any], wheel: Wheel) -> dict[str, Any]:
    """With --together: each library of a group names the wheel it comes from."""
    origins = getattr(wheel, "origins", None)
    if origins:
        for lib in group["libraries"]:
            lib["wheel"] = origins.get(lib["path"])
    return group


def _short(origin: str) -> str:
    """``executorch-1.5.1-cp311-cp311-macosx_14_0_arm64.whl`` → ``executorch-1.5.1`` (a column)."""
    return "-".join(origin.split("-")[:2]) if origin.endswith(".whl") else origin


def _wheels_of(g, wheel: Wheel) -> int:
    origins = getattr(wheel, "origins", None) or {}
    return len({origins.get(lib.path) for lib in g.libraries})


STRONG_HEAD = ("Strong duplicates: code that more than one library defines strongly. Each is a second copy "
               "(two registries, two thread pools): a candidate [[component]] with one owner.")
WEAK_HEAD = ("Weak-only duplicates: defined weakly by all but at most one library (inline functions, template "
             "instantiations). They usually matter less; a weak copy does not make a library an owner.")


def render_text(wheel: Wheel, groups, out: TextIO, color: bool, limit: int | None, examples: int) -> None:
    from wheelaudit.render.escape import visible
    from wheelaudit.review.dups import term_width
    from wheelaudit.render.text import aside, paint, table

    width = term_width()
    strong = [g for g in groups if g.strength == "strong"]
    weak = [g for g in groups if g.strength == "weak"]
    total = sum(g.count for g in groups)
    out.write(paint(wheel.path.name, "bold", color) + f"  {wheel.name} {wheel.version}  "
              f"{len(wheel.libraries)} native binar{'y' if len(wheel.libraries) == 1 else 'ies'}\n")
    if not groups:
        aside(out, paint("no symbol is defined by more than one library", "ok", color) + "\n")
        return
    for title, head, items, style in (("strong", STRONG_HEAD, strong, "error"), ("weak", WEAK_HEAD, weak, "warning")):
        if not items:
            continue
        import textwrap

        wrapped = textwrap.fill(head, width=min(width, 100))
        out.write("\n" + paint(wrapped, style if title == "strong" else "dim", color) + "\n\n")
        shown = items if limit is None else items[:limit]
        together = bool(getattr(wheel, "origins", None))
        rows = [[g.key, str(g.count), str(len(g.libraries))] + ([str(_wheels_of(g, wheel))] if together else [])
                + [g.pattern] for g in shown]
        for line in table(rows, ["group", "symbols", "libraries"] + (["wheels"] if together else []) + ["sentinel"]):
            out.write("  " + shorten(visible(line), width - 2) + "\n")
        if len(items) > len(shown):
            out.write("  " + paint("…" + more(len(items) - len(shown), f"{title} groups", note="--all or --format json shows them"),
                                   "dim", color) + "\n")
        for g in shown:
            out.write("\n  " + paint(g.key, "bold", color)
                      + f"  {plural(g.count, 'symbol')} in {len(g.libraries)} libraries"
                      + f"  sentinel: {g.pattern}\n")
            lib_rows = [[lib.path, str(lib.symbols), str(lib.strong) if lib.strong else "-"]
                        + ([_short(wheel.origins.get(lib.path, "?"))] if together else []) for lib in g.libraries]
            for line in table(lib_rows, ["library", "defines", "strongly"] + (["wheel"] if together else [])):
                out.write("    " + shorten(visible(line), width - 4) + "\n")
            names = [s.name for s in g.symbols]
            for i, n in enumerate(names[:examples]):
                out.write(("    e.g. " if i == 0 else "         ") + shorten(visible(n), width - 9) + "\n")
            if len(names) > examples:
                out.write("         " + paint("…" + more(len(names) - examples), "dim", color) + "\n")
    aside(out, f"\n{plural(total, 'symbol')} defined by more than one library: "
              f"{plural(len(strong), 'strong group')} "
              f"({sum(g.count for g in strong)} symbols), {len(weak)} weak-only group{'s' if len(weak) != 1 else ''} "
              f"({sum(g.count for g in weak)} symbols)\n")


def run(args: argparse.Namespace) -> int:
    from wheelaudit.cli.common import UsageError
    from wheelaudit.review.dups import find_duplicates
    from wheelaudit.render.text import use_color
    from wheelaudit.scanner import scan

    if args.min_count < 1:
        raise UsageError("--min-count must be 1 or more")
    if args.examples < 0:
        raise UsageError("--examples must be 0 or more")
    from wheelaudit.archive import expand_inputs

    paths = expand_inputs(args.wheels)
    if args.together:
        from wheelaudit.scanner.together import scan_together

        wheels: list[Wheel] = [scan_together(paths, jobs=args.jobs)]
    else:
        from wheelaudit.binary.budget import Budget

        budget = Budget()  # the run's one budget (wheelaudit.binary.budget)
        wheels = [scan(p, jobs=args.jobs, budget=budget) for p in paths]
    with output_stream(args.output) as out:
        docs = []
        for i, wheel in enumerate(wheels):
            groups = find_duplicates(wheel, min_count=args.min_count)
            if args.format == "json":
                docs.append(dups_dict(wheel, groups))
                continue
            if i:
                out.write("\n")
            render_text(wheel, groups, out, use_color(out, args.color), None if args.all else DEFAULT_LIMIT,
                        args.examples)
        if docs:  # (several wheels: a list of the one-wheel documents)
            json.dump(docs[0] if len(docs) == 1 else docs, out, indent=2)
            out.write("\n")
    return 0
