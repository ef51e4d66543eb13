"""The rules of a rules file, one check per table: ``[libraries]`` (WA101, WA102), ``[[component]]``
(WA201-WA206), ``[[file]]`` (WA301-WA303), ``[[binary]]`` (WA301, WA401-WA403), ``[[metadata]]``
(WA404); WA003 when a rule's glob matched nothing, so that the check examined nothing.

Each ``check_*`` function takes the :class:`~wheelaudit.checks.context.Context` and one rule and
returns findings; :data:`FAMILY` runs them over every rule of the ruleset, table by table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wheelaudit.model.finding import Finding, examples
from wheelaudit.model.globs import Glob, matches_list
from wheelaudit.checks.base import Check, Family
from wheelaudit.checks.context import EXAMPLES, Context, LibraryEvidence, origin_of, component_definers, is_exempt
from wheelaudit.checks.extension import is_extension_module

if TYPE_CHECKING:  # (annotations only: the rules' types)
    from wheelaudit.ruleset.model import BinaryRule, ComponentRule, FileRule, LibrariesRule, MetadataRule

__all__ = ["FAMILY", "check_libraries", "check_component", "check_file", "check_binary", "check_metadata",
           "check_requirements_parse"]


def _where(ctx: Context, path: str) -> str:
    """``path``, or ``path (wheel file)`` when wheels are audited together."""
    origin = origin_of(ctx, path)
    return f"{path} ({origin})" if origin else path


def _wheres(ctx: Context, paths) -> str:
    return ", ".join(_where(ctx, p) for p in paths)


def _glob_match(g: Glob, path: str) -> bool:
    return g.match(path) or ("/" not in g.pattern and g.match(path.rsplit("/", 1)[-1]))


# --------------------------------------------------------------------------------------------
# Checks


def check_libraries(ctx: Context, rule: LibrariesRule) -> list[Finding]:
    out: list[Finding] = []
    if not ctx.applies(rule.when):
        return out
    in_scope = [b for b in ctx.wheel.libraries
                if rule.scope is None or any(_glob_match(g, b.path) for g in rule.scope)]
    if rule.scope is not None and not in_scope:
        out.append(Finding("WA003", "[libraries] scope " + ", ".join(g.pattern for g in rule.scope)
                           + " matched no native binary: the name check examined nothing",
                           subject="libraries", rule="names"))
        return out
    for b in in_scope:
        if not any(_glob_match(g, b.path) for g in rule.expected):
            out.append(Finding(
                "WA101",
                f"{b.path} matches no expected name (expected one of: "
                + ", ".join(g.pattern for g in rule.expected[:6])
                + (f", +{len(rule.expected) - 6} more" if len(rule.expected) > 6 else "") + ")",
                subject=b.path, paths=[b.path], rule="names"))
    if rule.identity == "filename":
        for b in in_scope:
            if not b.ok or b.kind != "shared" or is_extension_module(b):
                continue  # a Python module is loaded by path, never linked by name: no identity needed
            for sl in b.slices:
                ident = sl.identity
                where = f" ({sl.arch} slice)" if b.universal else ""
                label = "install name" if b.format == "macho" else "SONAME"
                if not ident:
                    if b.format == "macho":
                        out.append(Finding("WA102", f"{b.path}{where} has no install name (LC_ID_DYLIB); expected @rpath/{b.name}",
                                           subject=b.path, paths=[b.path], rule="names"))
                    else:
                        out.append(Finding("WA102", f"{b.path}{where} has no SONAME; expected {b.name}",
                                           subject=b.path, paths=[b.path], rule="names"))
                    break
                base = ident.rsplit("/", 1)[-1]
                if ident.startswith("/"):
                    out.append(Finding("WA102", f"{b.path}{where} has an absolute {label} {ident}; expected a relative one such as @rpath/{b.name}",
                                       subject=b.path, paths=[b.path], rule="names"))
                    break
                if base != b.name:
                    out.append(Finding("WA102", f"{b.path}{where} has {label} {ident}, whose file name {base} differs from the file's name {b.name}",
                                       subject=b.path, paths=[b.path], rule="names"))
                    break
    return out


def check_component(ctx: Context, comp: ComponentRule) -> list[Finding]:
    out: list[Finding] = []
    if not ctx.applies(comp.when):
        return out
    rid = f"component:{comp.name}"
    definers = component_definers(ctx, comp)
    required = ctx.required(comp.required)
    shipped = [b for b in ctx.wheel.libraries if comp.owner is not None and _glob_match(comp.owner, b.path)]
    # an unreadable owner is WA001 already; it must not also read as "defines nothing"
    owners = [b.path for b in shipped if b.ok]
    unreadable = [b.path for b in shipped if not b.ok]
    owner_desc = comp.owner.pattern if comp.owner is not None else "(no owner given)"
    evidence_desc = "; ".join(e.describe() for e in definers.values())

    if len(definers) > 1:
        paths = sorted(definers)
        out.append(Finding(
            "WA201",
            f"component {comp.name} is defined by {len(paths)} libraries, expected "
            + (f"exactly one ({owner_desc})" if comp.owner is not None else "at most one")
            + f": {evidence_desc}. More than one definition means more than one {comp.name} in the process.",
            subject=comp.name, paths=paths, symbols=_syms(definers), rule=rid))
    if not definers:
        if owners:
            out.append(Finding(
                "WA204",
                f"{_wheres(ctx, owners)} ships but shows no evidence of component {comp.name}: none of its sentinels "
                f"({_sentinels_desc(comp)}) is defined there{_strong_note(comp)} — renamed, inlined or hidden?",
                subject=comp.name, paths=owners, symbols=[s.entry for s in comp.symbols][:EXAMPLES], rule=rid))
        elif unreadable:
            pass  # WA001 says the owner could not be read; nothing can be concluded about it
        elif required:
            out.append(Finding(
                "WA202",
                f"required component {comp.name} is defined by no library (sentinels: {_sentinels_desc(comp)});"
                f" its owner {owner_desc} does not ship",
                subject=comp.name, symbols=[s.entry for s in comp.symbols][:EXAMPLES], rule=rid))
        return out
    if comp.owner is not None:
        wrong = [p for p in definers if not _glob_match(comp.owner, p)]
        if len(definers) == 1 and wrong:
            out.append(Finding(
                "WA203",
                f"component {comp.name} is defined by {_where(ctx, wrong[0])} ({definers[wrong[0]].evidence()}),"
                f" not by its owner {owner_desc}" + ("" if owners else " (which does not ship)"),
                subject=comp.name, paths=wrong, symbols=_syms(definers), rule=rid))
        for o in owners:
            if o not in definers and not is_exempt(comp, o):
                out.append(Finding(
                    "WA204",
                    f"owner {_where(ctx, o)} ships but defines none of component {comp.name}'s sentinels ({_sentinels_desc(comp)})"
                    f"{_strong_note(comp)}; found instead in {_wheres(ctx, sorted(definers))}",
                    subject=comp.name, paths=[o], symbols=[s.entry for s in comp.symbols][:EXAMPLES], rule=rid))
    # WA205: some sentinels defined (anywhere among the definers), others nowhere
    if comp.symbols:
        defined: set[int] = set()
        for e in definers.values():
            defined |= e.sentinels
        if defined and len(defined) < len(comp.symbols):
            missing = [comp.symbols[i].entry for i in range(len(comp.symbols)) if i not in defined]
            present = [comp.symbols[i].entry for i in sorted(defined)]
            out.append(Finding(
                "WA205",
                f"component {comp.name} is partial: {examples(present, EXAMPLES)} defined (in {_wheres(ctx, sorted(definers))}),"
                f" but {examples(missing, EXAMPLES)} defined by no library{_strong_note(comp)}",
                subject=comp.name, paths=sorted(definers), symbols=missing, rule=rid))
    # WA206: slices of a universal binary disagree
    for path, e in sorted(ctx.evidence(comp).items()):
        if len(e.slices) > 1:
            shapes = {(frozenset(s.sentinels), bool(s.strings)) for s in e.slices}
            if len(shapes) > 1:
                desc = "; ".join(f"{s.arch}: " + (examples(s.symbols, EXAMPLES) if s.symbols else ("strings" if s.strings else "nothing"))
                                 for s in e.slices)
                out.append(Finding(
                    "WA206", f"the slices of {_where(ctx, path)} disagree about component {comp.name}: {desc}",
                    subject=comp.name, paths=[path], rule=rid))
    return out


def _syms(definers: dict[str, LibraryEvidence]) -> list[str]:
    return list(dict.fromkeys(s for e in definers.values() for s in e.symbols))[: EXAMPLES * 2]


def _sentinels_desc(comp: ComponentRule) -> str:
    parts = [s.entry for s in comp.symbols[:EXAMPLES]]
    if len(comp.symbols) > EXAMPLES:
        parts.append(f"+{len(comp.symbols) - EXAMPLES} more")
    parts += [f'string "{s.decode("utf-8", "replace")}"' for s in comp.strings[:2]]
    return ", ".join(parts)


def _strong_note(comp: ComponentRule) -> str:
    return " (weak definitions do not count: strong-only)" if comp.strong_only else ""


def _count_problem(n: int, count: int | None, lo: int | None, hi: int | None) -> str | None:
    if count is not None and n != count:
        return f"exactly {count}"
    if lo is not None and n < lo:
        return f"at least {lo}"
    if hi is not None and n > hi:
        return f"at most {hi}"
    return None


def check_file(ctx: Context, rule: FileRule) -> list[Finding]:
    out: list[Finding] = []
    if not ctx.applies(rule.when):
        return out
    rid = f"file:{rule.name}"
    matches = sorted(f for f in ctx.wheel.files if rule.glob.match(f))
    if rule.beside is not None:
        comp = _component(ctx, rule.beside)
        definers = component_definers(ctx, comp) if comp is not None and ctx.applies(comp.when) else {}
        if not definers:
            for m in matches:
                out.append(Finding(
                    "WA303", f"{_where(ctx, m)} ships, but component {rule.beside} (which it serves) does not ship in this wheel",
                    subject=rule.name, paths=[m], rule=rid))
            return out
        want = _count_problem(len(matches), rule.count, rule.min, rule.max)
        if want:
            out.append(Finding(
                "WA301", f"file rule {rule.name} ({rule.glob.pattern}): found {len(matches)}"
                + (f" ({_wheres(ctx, matches)})" if matches else "") + f", expected {want}",
                subject=rule.name, paths=matches, rule=rid))
        dirs = {p.rsplit("/", 1)[0] if "/" in p else "" for p in definers}
        for m in matches:
            d = m.rsplit("/", 1)[0] if "/" in m else ""
            if d not in dirs:
                out.append(Finding(
                    "WA302", f"{_where(ctx, m)} is not beside the library that carries component {rule.beside}: expected it in "
                    + " or ".join(f"{x or '.'}/" for x in sorted(dirs)) + f" (beside {_wheres(ctx, sorted(definers))})",
                    subject=rule.name, paths=[m] + sorted(definers), rule=rid))
        return out
    want = _count_problem(len(matches), rule.count, rule.min, rule.max)
    if want:
        out.append(Finding(
            "WA301", f"file rule {rule.name} ({rule.glob.pattern}): found {len(matches)}"
            + (f" ({_wheres(ctx, matches[:6])})" if matches else "") + f", expected {want}",
            subject=rule.name, paths=matches, rule=rid))
    elif not matches and rule.bounds()[1] != 0:  # (a rule that forbids a file is met when nothing matches)
        out.append(Finding("WA003", f"file rule {rule.name}: {rule.glob.pattern} matched nothing in this wheel",
                           subject=rule.name, rule=rid))
    return out


def check_binary(ctx: Context, rule: BinaryRule) -> list[Finding]:
    out: list[Finding] = []
    if not ctx.applies(rule.when):
        return out
    rid = f"binary:{rule.name}"
    targets = [b for b in ctx.wheel.libraries if _glob_match(rule.path, b.path)]
    if rule.count is not None and len(targets) != rule.count:
        out.append(Finding("WA301", f"binary rule {rule.name}: {len(targets)} binaries match {rule.path.pattern}"
                           + (f" ({', '.join(b.path for b in targets)})" if targets else "")
                           + f", expected exactly {rule.count}",
                           subject=rule.name, paths=[b.path for b in targets], rule=rid))
    if not targets:
        if rule.count is None:
            out.append(Finding("WA003", f"binary rule {rule.name}: {rule.path.pattern} matched no native binary",
                               subject=rule.name, rule=rid))
        return out
    for b in targets:
        if not b.ok:
            continue
        for cname in rule.must_not_define:
            comp = _component(ctx, cname)
            if comp is None:
                continue
            e = ctx.evidence(comp).get(b.path)
            if e is not None and e.any:
                out.append(Finding("WA401", f"{b.path} defines component {cname}, which it must not ({e.evidence()})",
                                   subject=rule.name, paths=[b.path], symbols=e.symbols[:EXAMPLES], rule=rid))
        if rule.must_import:
            imports = ctx.imports(b)
            for pat in rule.must_import:
                if imports.any(pat):
                    continue
                own = [s.demangled for sl in b.slices for s in ctx.exports(sl).find(pat, limit=EXAMPLES)]
                own += [s.demangled for sl in b.slices if sl.locals for s in ctx.locals(sl).find(pat, limit=EXAMPLES)]
                if own:
                    msg = (f"{b.path} must import {pat.entry} (undefined here, defined elsewhere) but defines its own copy: "
                           f"{examples(own, EXAMPLES)}")
                else:
                    msg = f"{b.path} does not import {pat.entry}, which it must (undefined here, defined elsewhere)"
                out.append(Finding("WA402", msg, subject=rule.name, paths=[b.path], symbols=[pat.entry], rule=rid))
        deps = [d.rsplit("/", 1)[-1] for d in b.dependencies]
        for g in rule.must_need:
            if not any(g.match(d) for d in deps):
                out.append(Finding("WA403", f"{b.path} does not depend on {g.pattern}, which it must; it depends on "
                                   + (", ".join(deps) or "nothing"), subject=rule.name, paths=[b.path], rule=rid))
        for g in rule.must_not_need:
            bad = [d for d in deps if g.match(d)]
            if bad:
                out.append(Finding("WA403", f"{b.path} depends on {', '.join(bad)}, which it must not ({g.pattern})",
                                   subject=rule.name, paths=[b.path], rule=rid))
        if rule.must_need_all:
            wanted = [x.path for x in ctx.wheel.libraries if x is not b and matches_list(rule.must_need_all, [x.path])]
            have = ctx.resolved(b)
            missing = [p for p in wanted if p not in have]
            if missing:
                out.append(Finding(
                    "WA403", f"{b.path} does not depend on {examples(missing, 6)}, which it must (must-need-all "
                    f"{', '.join(g.pattern for g in rule.must_need_all)}); a library nothing loads is never "
                    "registered", subject=rule.name, paths=[b.path] + missing, rule=rid))
    return out


def check_metadata(ctx: Context, rule: MetadataRule) -> list[Finding]:
    """WA404: the wheel's Requires-Dist, its markers evaluated for the wheel's tags
    (:mod:`wheelaudit.platforms.requirements`), against ``forbid-requires`` and ``require``."""
    out: list[Finding] = []
    if not ctx.applies(rule.when):
        return out
    from wheelaudit.platforms.requirements import declared_requirements

    rid = f"metadata:{rule.name}"
    declared, _invalid = declared_requirements(ctx.wheel.requirements, ctx.wheel.tags)  # (check_requirements_parse)
    when = f" (rule {rule.name}" + (f", for {rule.when.describe()}" if rule.when is not None else "") + ")"
    for d in declared:
        if not (d.somewhere or d.extras):
            continue  # its marker excludes every environment this wheel installs in
        bad = next((g.pattern for g in rule.forbid_requires if g.match(d.name)), None)
        if bad is None:
            continue
        where = ("" if d.always else " on some of the platforms it installs on") if d.somewhere \
            else f" with extra {', '.join(d.extras)}"
        out.append(Finding("WA404", f"the wheel requires {d.text!r}{where}, which it must not (forbid-requires {bad}){when}",
                           subject=rule.name, symbols=[d.name], rule=rid))
    for name in rule.require:
        mine = [d for d in declared if d.name == name]
        if any(d.always for d in mine):
            continue
        if mine:
            partial = next(d for d in mine)
            why = (f"only with extra {', '.join(partial.extras)}" if partial.extras and not partial.somewhere
                   else "only on some of the platforms it installs on" if partial.somewhere
                   else "under a marker that excludes this wheel")
            msg = f"the wheel requires {name} {why} ({partial.text!r}); it must require it everywhere, without an extra"
        else:
            msg = f"the wheel's METADATA has no Requires-Dist: {name}, which it must have"
        out.append(Finding("WA404", msg + when, subject=rule.name, symbols=[name], rule=rid))
    return out


def check_requirements_parse(ctx: Context, rules: list[MetadataRule]) -> list[Finding]:
    """WA404, once per line: a Requires-Dist that cannot be parsed, when a ``[[metadata]]`` rule
    applies to the wheel (no rule can judge it)."""
    applying = [r for r in rules if ctx.applies(r.when)]
    if not applying:
        return []
    from wheelaudit.platforms.requirements import declared_requirements

    _declared, invalid = declared_requirements(ctx.wheel.requirements, ctx.wheel.tags)
    names = ", ".join(r.name for r in applying)
    return [Finding("WA404", f"Requires-Dist {text!r} cannot be parsed, so the metadata rules ({names}) cannot judge it",
                    subject=applying[0].name, rule=f"metadata:{applying[0].name}") for text in invalid]


def _component(ctx: Context, name: str) -> ComponentRule | None:
    if ctx.ruleset is None:
        return None
    return next((c for c in ctx.ruleset.components if c.name == name), None)



# --------------------------------------------------------------------------------------------
# The family: each table of the ruleset, in the order of a report


def library_names(ctx: Context) -> list[Finding]:
    """``[libraries]``: every native library has an expected name and a sane identity."""
    rule = ctx.ruleset.libraries if ctx.ruleset is not None else None
    return check_libraries(ctx, rule) if rule is not None else []


def components(ctx: Context) -> list[Finding]:
    """``[[component]]``: each component defined once, by its owner."""
    return [f for comp in (ctx.ruleset.components if ctx.ruleset is not None else ())
            for f in check_component(ctx, comp)]


def data_files(ctx: Context) -> list[Finding]:
    """``[[file]]``: the counts of data files, and where they ship."""
    return [f for rule in (ctx.ruleset.files if ctx.ruleset is not None else ())
            for f in check_file(ctx, rule)]


def binary_rules(ctx: Context) -> list[Finding]:
    """``[[binary]]``: what a binary must (not) define, import and depend on."""
    return [f for rule in (ctx.ruleset.binaries if ctx.ruleset is not None else ())
            for f in check_binary(ctx, rule)]


def unparsable_requirements(ctx: Context) -> list[Finding]:
    """A Requires-Dist no ``[[metadata]]`` rule can judge."""
    return check_requirements_parse(ctx, ctx.ruleset.metadata) if ctx.ruleset is not None else []


def metadata_rules(ctx: Context) -> list[Finding]:
    """``[[metadata]]``: the requirements a wheel must (not) declare."""
    out: list[Finding] = []
    for rule in ctx.ruleset.metadata if ctx.ruleset is not None else ():
        out += check_metadata(ctx, rule)
    return out


FAMILY = Family("rules", checks=(
    Check(("WA003", "WA101", "WA102"), library_names),
    Check(("WA201", "WA202", "WA203", "WA204", "WA205", "WA206"), components),
    Check(("WA003", "WA301", "WA302", "WA303"), data_files),
    Check(("WA003", "WA301", "WA401", "WA402", "WA403"), binary_rules),
    Check(("WA404",), unparsable_requirements),
    Check(("WA404",), metadata_rules),
))
