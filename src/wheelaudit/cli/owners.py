"""``wheelaudit owners``: which libraries define, and which import, symbols matching patterns.

Patterns follow SPEC §3 symbol matching (demangled C++ or C names, ``*`` wildcards, a name
continued by ``(``, ``@``, ``::`` or ``<`` matches). Definitions are counted apart: strong
exports, weak exports (inline functions, templates: a weak copy is not an owner) and local
symbols of unstripped binaries (evidence of code compiled with hidden visibility). With
``--strings`` the patterns are byte strings and the answer is which binaries contain them.
Exit 0 when anything matched, 1 when nothing did.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from wheelaudit.cli.common import add_jobs_option, add_output_options, output_stream
from wheelaudit.cli.common import add_verbosity_options
from wheelaudit.model.messages import more, plural, shorten

if TYPE_CHECKING:
    from wheelaudit.model.wheel import Wheel


def add_parser(sub) -> None:
    p = sub.add_parser("owners", help="which libraries define / import symbols matching patterns",
                       description="Which libraries define (strong, weak, local) and which import symbols matching "
                                   "the patterns (SPEC §3 matching: demangled names, * wildcards). With --strings, "
                                   "which binaries contain the byte strings. Exit 0 when anything matched, 1 when "
                                   "nothing did, 2 on a usage error.")
    p.add_argument("first", metavar="WHEEL_OR_DIR")
    p.add_argument("args", nargs="+", metavar="PATTERN",
                   help="more wheels (arguments that end in .whl or name an existing file or folder), then symbol "
                        'patterns ("mlx::core::*", "xnn_create_runtime_v4"), or byte strings with --strings')
    p.add_argument("--strings", action="store_true", help="treat the patterns as byte strings to look for in the binaries")
    p.add_argument("--examples", type=int, default=3, metavar="N", help="example names shown per library (default: 3)")
    add_output_options(p, ["text", "json"])
    add_jobs_option(p)
    add_verbosity_options(p)
    p.set_defaults(run=run)


# --------------------------------------------------------------------------------------------
# Model


@dataclass
class Definer:
    path: str
    strong: list[str] = field(default_factory=list)
    weak: list[str] = field(default_factory=list)
    local: list[str] = field(default_factory=list)

    def to_dict(self, examples: int) -> dict[str, Any]:
        return {"path": self.path, "strong": len(self.strong), "weak": len(self.weak), "local": len(self.local),
                "examples": {"strong": self.strong[:examples], "weak": self.weak[:examples], "local": self.local[:examples]}}


@dataclass
class Importer:
    path: str
    names: list[str] = field(default_factory=list)

    def to_dict(self, examples: int) -> dict[str, Any]:
        return {"path": self.path, "count": len(self.names), "examples": self.names[:examples]}


@dataclass
class SymbolOwners:
    pattern: str
    definers: list[Definer]
    importers: list[Importer]

    @property
    def matched(self) -> bool:
        return bool(self.definers or self.importers)


@dataclass
class StringCarriers:
    pattern: str
    binaries: list[tuple[str, list[str]]]  # (path, archs that contain it; all of them when thin)

    @property
    def matched(self) -> bool:
        return bool(self.binaries)


def symbol_owners(wheel: Wheel, patterns: list[str]) -> list[SymbolOwners]:
    """For each pattern, the libraries that define and those that import a matching symbol."""
    from wheelaudit.model.globs import SymbolPattern
    from wheelaudit.checks.index import SymbolIndex
    from wheelaudit.binary.demangle import demangle
    from wheelaudit.binary.symbols import qualified_name

    pats = [SymbolPattern(p) for p in patterns]
    libs = [b for b in wheel.libraries if b.ok]
    exports = {b.path: [SymbolIndex(sl.exports) for sl in b.slices] for b in libs}
    locals_ = {b.path: [SymbolIndex(sl.locals) for sl in b.slices if sl.locals] for b in libs}
    imports = {b.path: sorted({(demangle(n), n) for sl in b.slices for n in sl.imports}) for b in libs}
    out = []
    for pat in pats:
        definers: list[Definer] = []
        importers: list[Importer] = []
        for b in libs:
            weak_all: dict[str, bool] = {}
            for idx in exports[b.path]:
                for s in idx.find(pat):
                    prev = weak_all.get(s.demangled)
                    weak_all[s.demangled] = s.weak if prev is None else (prev and s.weak)
            local_names: set[str] = set()
            for idx in locals_[b.path]:
                local_names.update(s.demangled for s in idx.find(pat))
            local_names -= set(weak_all)
            if weak_all or local_names:
                definers.append(Definer(b.path, strong=sorted(n for n, w in weak_all.items() if not w),
                                        weak=sorted(n for n, w in weak_all.items() if w), local=sorted(local_names)))
            used = [d for d, raw in imports[b.path]
                    if pat.matches(d) or (raw != d and (pat.matches(raw) or pat.matches(qualified_name(d))))]
            if used:
                importers.append(Importer(b.path, sorted(set(used))))
        definers.sort(key=lambda d: (-len(d.strong), -len(d.local), -len(d.weak), d.path))
        importers.sort(key=lambda i: (-len(i.names), i.path))
        out.append(SymbolOwners(pat.entry, definers, importers))
    return out


def string_carriers(wheel: Wheel, patterns: list[str]) -> list[StringCarriers]:
    out = []
    for p in patterns:
        needle = p.encode("utf-8")
        found = []
        for b in wheel.libraries:
            if not b.ok:
                continue
            archs = [sl.arch for sl in b.slices if needle in sl.strings]
            if archs:
                found.append((b.path, archs))
        out.append(StringCarriers(p, found))
    return out


# --------------------------------------------------------------------------------------------
# Rendering


def _libs(n: int) -> str:
    return f"{n} librar{'y' if n == 1 else 'ies'}"


def render_symbols_text(wheel: Wheel, results: list[SymbolOwners], out: TextIO, color: bool, examples: int) -> None:
    from wheelaudit.review.dups import term_width
    from wheelaudit.render.text import aside, paint

    width = term_width()
    out.write(paint(wheel.path.name, "bold", color) + f"  {wheel.name} {wheel.version}\n")
    for r in results:
        out.write("\n" + paint(r.pattern, "bold", color) + "\n")
        if not r.matched:
            out.write("  " + paint("no library defines or imports a matching symbol", "dim", color) + "\n")
            continue
        if r.definers:
            strong = sum(1 for d in r.definers if d.strong)
            head = f"  defined by {_libs(len(r.definers))}"
            if len(r.definers) > 1 and strong:
                head += f" ({strong} strongly)"
            out.write(head + ":\n")
            rows = []
            for d in r.definers:
                rows.append([d.path, str(len(d.strong)) if d.strong else "-", str(len(d.weak)) if d.weak else "-",
                             str(len(d.local)) if d.local else "-"])
            _write_table(out, rows, ["library", "strong", "weak", "local"], width, color,
                         [[*d.strong, *(f"{n} (weak)" for n in d.weak), *(f"{n} (local)" for n in d.local)]
                          for d in r.definers], examples)
        else:
            out.write("  defined by no library (exported or local)\n")
        if r.importers:
            out.write(f"  imported by {_libs(len(r.importers))}:\n")
            rows = [[i.path, str(len(i.names))] for i in r.importers]
            _write_table(out, rows, ["library", "symbols"], width, color, [i.names for i in r.importers], examples)
        else:
            out.write("  imported by no library\n")
    matched = sum(1 for r in results if r.matched)
    aside(out, f"\n{matched} of {plural(len(results), 'pattern')} matched\n")


def _write_table(out: TextIO, rows: list[list[str]], header: list[str], width: int, color: bool,
                 all_examples: list[list[str]], examples: int) -> None:
    """An aligned table of libraries and counts; under each row, up to ``examples`` example
    names (cut to the terminal's width), then a count of the rest."""
    from wheelaudit.render.escape import visible
    from wheelaudit.render.text import paint, table

    lines = table(rows, header)
    out.write("    " + paint(lines[0], "dim", color) + "\n")
    room = max(20, width - 8)
    for line, ex in zip(lines[1:], all_examples, strict=True):
        out.write("    " + line + "\n")
        for e in ex[:examples]:
            out.write("        " + shorten(visible(e), room) + "\n")
        if len(ex) > examples:
            out.write("        " + paint("…" + more(len(ex) - examples), "dim", color) + "\n")


def render_strings_text(wheel: Wheel, results: list[StringCarriers], out: TextIO, color: bool) -> None:
    from wheelaudit.render.escape import visible
    from wheelaudit.render.text import aside, paint

    out.write(paint(wheel.path.name, "bold", color) + f"  {wheel.name} {wheel.version}\n")
    for r in results:
        out.write("\n" + paint(json.dumps(r.pattern), "bold", color) + "\n")
        if not r.binaries:
            out.write("  " + paint("no binary contains it", "dim", color) + "\n")
            continue
        out.write(f"  found in {len(r.binaries)} binar{'y' if len(r.binaries) == 1 else 'ies'}:\n")
        for path, archs in r.binaries:
            b = wheel.library(path)
            where = f"  ({', '.join(archs)} slice{'s' if len(archs) > 1 else ''} of {len(b.slices)})" if b.universal and len(archs) < len(b.slices) else ""
            out.write(f"    {visible(path)}{where}\n")
    matched = sum(1 for r in results if r.matched)
    aside(out, f"\n{matched} of {plural(len(results), 'string')} found\n")


def owners_dict(wheel: Wheel, results: list[Any], strings: bool, examples: int) -> dict[str, Any]:
    from wheelaudit import __version__
    from wheelaudit.review.dups import wheel_dict
    from wheelaudit.model.report import SCHEMA_VERSION

    if strings:
        pats = [{"pattern": r.pattern, "binaries": [{"path": p, "archs": a} for p, a in r.binaries]} for r in results]
    else:
        pats = [{"pattern": r.pattern, "definers": [d.to_dict(examples) for d in r.definers],
                 "importers": [i.to_dict(examples) for i in r.importers]} for r in results]
    return {
        "schema": SCHEMA_VERSION,
        "tool": {"name": "wheelaudit", "version": __version__},
        "wheel": wheel_dict(wheel),
        "mode": "strings" if strings else "symbols",
        "patterns": pats,
        "matched": any(r.matched for r in results),
    }


def run(args: argparse.Namespace) -> int:
    from wheelaudit.cli.common import UsageError
    from wheelaudit.model.globs import GlobError, SymbolPattern
    from wheelaudit.render.text import use_color
    from wheelaudit.scanner import scan

    if args.examples < 0:
        raise UsageError("--examples must be 0 or more")
    wheel_args, args.patterns = split_wheels_and_patterns([args.first, *args.args])
    from wheelaudit.archive import expand_inputs

    paths = expand_inputs(wheel_args)
    if args.strings:
        if any(not p for p in args.patterns):
            raise UsageError("an empty string matches everything; give the bytes to look for")
    else:
        for p in args.patterns:
            try:
                SymbolPattern(p)
            except GlobError as exc:
                raise UsageError(str(exc)) from None
    scanned = []
    for path in paths:
        if args.strings:
            wheel = scan(path, strings=[p.encode("utf-8") for p in args.patterns], jobs=args.jobs)
            results: list[Any] = string_carriers(wheel, args.patterns)
        else:
            wheel = scan(path, jobs=args.jobs)
            results = symbol_owners(wheel, args.patterns)
        scanned.append((wheel, results))
    verdict = 0 if any(r.matched for _, results in scanned for r in results) else 1
    with output_stream(args.output, verdict) as out:
        if args.format == "json":  # (several wheels: a list of the one-wheel documents)
            docs = [owners_dict(w, rs, args.strings, max(args.examples, 20)) for w, rs in scanned]
            json.dump(docs[0] if len(docs) == 1 else docs, out, indent=2)
            out.write("\n")
        else:
            for i, (wheel, results) in enumerate(scanned):
                if i:
                    out.write("\n")
                if args.strings:
                    render_strings_text(wheel, results, out, use_color(out, args.color))
                else:
                    render_symbols_text(wheel, results, out, use_color(out, args.color), args.examples)
    return verdict


def split_wheels_and_patterns(values: list[str]) -> tuple[list[str], list[str]]:
    """``owners WHEEL_OR_DIR... PATTERN...``: the leading arguments that end in ``.whl`` or name
    an existing file or folder are the wheels, the rest the patterns (a pattern never names a
    path that exists; to look for such a name, run from another folder). Usage error when either
    part is empty or a wheel follows a pattern."""
    from wheelaudit.cli.common import UsageError

    def is_wheel(v: str) -> bool:
        return v.endswith(".whl") or os.path.exists(v)

    n = 0
    while n < len(values) and is_wheel(values[n]):
        n += 1
    wheels, patterns = values[:n], values[n:]
    if not wheels:
        raise UsageError("owners: give at least one wheel (a .whl file or a folder) before the patterns")
    if not patterns:
        raise UsageError("owners: give at least one pattern after the wheels")
    stray = [v for v in patterns if v.endswith(".whl")]
    if stray:
        raise UsageError(f"owners: {stray[0]} comes after a pattern; put every wheel before the patterns")
    return wheels, patterns
