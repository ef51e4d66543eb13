"""Plain-text renderers for a terminal: aligned tables, long lists cut with a count, colour on a TTY."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TextIO

from wheelaudit.model.finding import CODES, Finding
from wheelaudit.model.messages import examples, human_size, plural
from wheelaudit.model.report import Report
from wheelaudit.model.wheel import Wheel
from wheelaudit.render.escape import safe, visible

RESET = "\033[0m"
STYLES = {"error": "\033[31m", "warning": "\033[33m", "ok": "\033[32m", "dim": "\033[2m", "bold": "\033[1m"}


#: whether a text report shows what is not its substance (a clean wheel's OK line, notes, a
#: closing summary, explanations): not under ``--quiet`` (see :func:`findings_only`)
_ASIDES: ContextVar[bool] = ContextVar("wheelaudit_text_asides", default=True)


@contextlib.contextmanager
def findings_only(on: bool = True) -> Iterator[None]:
    """Within the block, text reports leave out their asides (``--quiet``)."""
    token = _ASIDES.set(not on)
    try:
        yield
    finally:
        _ASIDES.reset(token)


def aside(out: TextIO, text: str) -> None:
    """Write ``text``, a part of a text report that is not a finding (an OK line, a note, the
    summary), unless the report is to hold its findings only (``--quiet``)."""
    if _ASIDES.get():
        out.write(text)


def use_color(stream: TextIO, mode: str | bool = "auto") -> bool:
    """Whether a text report to ``stream`` is coloured: ``--color always`` / ``never`` decide;
    ``auto`` (the default) colours a TTY, never with ``NO_COLOR`` set (no-color.org), always with
    ``FORCE_COLOR`` set (as ruff does). ``True`` is ``never`` (the ``--no-color`` of the API)."""
    if mode is True or mode == "never":
        return False
    if mode == "always":
        return True
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def paint(text: str, style: str, color: bool) -> str:
    return f"{STYLES[style]}{text}{RESET}" if color else text


def table(rows: list[list[str]], header: list[str]) -> list[str]:
    """Left-aligned columns; the last column is not padded. Cells are :func:`visible` (names from
    a wheel: one line each)."""
    rows = [[visible(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for r in [header, *rows]:
        cells = [c.ljust(widths[i]) if i < len(r) - 1 else c for i, c in enumerate(r)]
        lines.append("  ".join(cells).rstrip())
    return lines


def cut(items: list[str], limit: int = 5) -> str:
    return examples(items, limit, sort=False, gap=", …")


def render_findings(wheel_name: str, findings: list[Finding], out: TextIO, color: bool = False) -> None:
    """The text block of each finding: ``wheel: CODE severity [subject]``, message, paths."""
    wheel_name = visible(wheel_name)
    for f in map(safe, findings):  # (what comes from the wheel: one line of visible characters)
        sev = paint(f.severity, f.severity, color)
        head = f"{wheel_name}: {paint(f.code, 'bold', color)} {sev}"
        if f.subject:
            head += f" [{f.subject}]"
        out.write(head + "\n")
        out.write(f"    {f.message}\n")
        for p in f.paths[:8]:
            out.write(f"    at {p}\n")
        if len(f.paths) > 8:
            out.write(f"    … and {len(f.paths) - 8} more\n")
        out.write(f"    hint: {hint(f)}\n")


def hint(f: Finding) -> str:
    """How to fix ``f`` in one line: its own hint, else its code's fix (every report format says it)."""
    return f.hint or CODES[f.code].fix


def together(wheel: Wheel) -> list[Wheel]:
    """The wheels ``check --together`` audited as this one install (their file names joined by
    ``+`` are its name), else []."""
    members = getattr(wheel, "members", None) or []
    if len(members) > 1 and wheel.path.name == "+".join(m.path.name for m in members):
        return members
    return []


def wheel_label(wheel: Wheel, f: Finding | None = None) -> str:
    """How a report names the wheel of finding ``f``: its file name; for wheels audited together,
    the wheels its paths come from, else how many were audited together (never every file name
    joined by ``+``)."""
    members = together(wheel)
    if not members:
        return wheel.path.name
    origins = getattr(wheel, "origins", {}) or {}
    labels = list(dict.fromkeys(origins[p] for p in (f.paths if f is not None else ()) if p in origins))
    return " + ".join(labels) if labels else f"{len(members)} wheels together"


def render_report(report: Report, out: TextIO, color: bool = False) -> None:
    for wr in report.wheels:
        name = wheel_label(wr.wheel)
        active = wr.active
        if not active:
            aside(out, f"{name}: {paint('OK', 'ok', color)}\n")
            continue
        for f in active:
            render_findings(wheel_label(wr.wheel, f), [f], out, color)
    for note in report.notes:
        aside(out, f"note: {note}\n")
    aside(out, summary_line(report, color) + "\n")


def render_statistics(report: Report, out: TextIO, color: bool = False) -> None:
    """``check --statistics``: the findings that are not waived counted by code, most first (as
    ``ruff --statistics`` counts them), then the summary line."""
    counts: dict[str, int] = {}
    for wr in report.wheels:
        for f in wr.active:
            counts[f.code] = counts.get(f.code, 0) + 1
    rows = [[str(n), code, CODES[code].name, CODES[code].severity]
            for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    for line in table(rows, ["count", "code", "name", "default"]) if rows else []:
        out.write(line + "\n")
    for note in report.notes:
        aside(out, f"note: {visible(note)}\n")
    aside(out, summary_line(report, color) + "\n")


def summary_line(report: Report, color: bool = False) -> str:
    """``passed: 0 errors, 1 warning in 1 wheel (rules: …; fail-on error)``."""
    s = report.summary()
    n = sum(len(together(wr.wheel)) or 1 for wr in report.wheels)  # (wheels audited together count each)
    parts = [plural(s['errors'], 'error'), plural(s['warnings'], 'warning')]
    if s["waived"]:
        parts.append(f"{s['waived']} waived")
    rules = f"rules: {report.rules_path}" if report.rules_path else "built-in checks only (no rules file)"
    verdict = paint("passed", "ok", color) if report.ok else paint("failed", "error", color)
    return f"{verdict}: {', '.join(parts)} in {plural(n, 'wheel')} ({rules}; fail-on {report.fail_on})"


def render_inspect(wheels: list[Wheel], out: TextIO, color: bool = False, symbols: bool = False,
                   resolutions: dict | None = None) -> None:
    """Each wheel: its binaries' table, then each binary's facts, dependencies and where they
    resolve (asides: ``-q`` keeps the table, unreadable binaries and findings)."""

    def more(text: str) -> None:
        aside(out, text)

    for w in wheels:
        out.write(paint(f"{w.path.name}", "bold", color) + f"  {w.name} {w.version}  tags: {', '.join(map(str, w.tags)) or '-'}\n")
        if not w.libraries:
            out.write("  no native binaries\n")
        rows = []
        for b in w.libraries:
            if not b.ok:
                rows.append([visible(b.path), b.format, "?", b.kind, human_size(b.size, binary=True, trim=False), paint("unreadable", "error", color), "-", "-", "-", "-"])
                continue
            sl0 = b.slices[0]
            rows.append([
                visible(b.path), b.format, ",".join(b.archs), b.kind, human_size(b.size, binary=True, trim=False), visible(b.identity or "-"),
                str(len(b.dependencies)), "/".join(str(s.exports_count) for s in b.slices),
                "/".join(str(s.imports_count) for s in b.slices), str(len(b.rpaths)),
            ])
            del sl0
        if rows:
            for line in table(rows, ["path", "format", "archs", "kind", "size", "identity", "deps", "exports", "imports", "rpaths"]):
                out.write("  " + line + "\n")
        for b in w.libraries:
            if not b.ok:
                out.write(f"\n  {paint(visible(b.path), 'bold', color)}: {paint('WA001', 'error', color)} {visible(b.error or '')}\n")
                continue
            more(f"\n  {paint(visible(b.path), 'bold', color)}\n")
            for sl in b.slices:
                prefix = f"    [{sl.arch}] " if b.universal else "    "
                facts = []
                if sl.linker_version is not None:  # a PE slice
                    facts.append(f"subsystem {sl.subsystem} {sl.min_os}")
                    facts.append(f"linker {sl.linker_version}")
                    if sl.file_version:
                        facts.append(f"file version {sl.file_version}")
                    if sl.debug_path:
                        facts.append(f"pdb {sl.debug_path}")
                elif sl.min_os:
                    os_words = {"ios": "iOS", "ios-simulator": "iOS simulator", "maccatalyst": "Mac Catalyst",
                                "tvos": "tvOS", "watchos": "watchOS"}.get(sl.platform or "macos", "macOS")
                    facts.append(f"min {os_words} {sl.min_os}")
                if sl.float_abi:
                    facts.append(f"{sl.float_abi}-float")
                if sl.needs_versions:
                    facts.append("needs " + _highest_versions(sl.needs_versions))
                if sl.x86_isa_needed:
                    facts.append(f"needs {sl.x86_isa_needed}")
                facts.append("stripped" if sl.stripped else f"{len(sl.locals)} local symbols")
                if sl.debug_bytes:
                    facts.append(f"debug info {human_size(sl.debug_bytes, binary=True, trim=False)}")
                if sl.exec_stack:
                    facts.append("executable stack")
                if sl.textrel:
                    facts.append("text relocations")
                if sl.signature is not None:
                    facts.append(f"signature {sl.signature}"
                                 + (f" ({sl.signature_detail})" if sl.signature_detail else ""))
                more(prefix + "; ".join(facts) + "\n")
                res = (resolutions or {}).get(b.path, {}).get(sl.arch, {})
                for d in sl.dependencies:
                    kind = "" if d.kind in ("needed", "load", "import") else f" ({d.kind})"
                    shown = ""
                    if d.name in res:
                        where = res[d.name]
                        if where is None:
                            shown = "  → " + paint("unresolved", "error", color)
                        elif where == f"external: {d.name}":
                            shown = "  → external (allowed)"
                        else:
                            shown = f"  → {visible(where)}"
                    more(f"{prefix}  dep {visible(d.name)}{kind}{shown}\n")
                for r in sl.rpaths:
                    more(f"{prefix}  {r.kind} {r.path!r}\n")
                for note in sl.notes:
                    more(f"{prefix}  note: {visible(note)}\n")
                if symbols:
                    for s in sl.exports:
                        flag = "W" if s.weak else "T" if s.type == "func" else "D"
                        more(f"{prefix}  {flag} {visible(s.demangled)}\n")
                    if sl.imports_from:  # PE: each name under the DLL it comes from
                        for dll, names in sl.imports_from.items():
                            for n in names:
                                more(f"{prefix}  U {visible(n)} ({visible(dll)})\n")
                    else:
                        for n in sl.imports:
                            more(f"{prefix}  U {visible(n)}\n")
                    for n, target in sl.forwarders.items():
                        more(f"{prefix}  F {visible(n)} -> {visible(target)}\n")
        _render_surface(w, out, color)
        for f in w.defects:
            out.write(f"\n  {paint(f.code, 'error', color)} {visible(f.message)}\n")
        out.write("\n")


def _shown_ref(ref, identities: dict | None = None) -> str:
    """A path of the consumer surface: the member it names, or the text, and what is wrong with it."""
    if ref.kind == "wheel" and ref.member is not None:
        text = ref.member if ref.exists else f"{ref.member} (not in the wheel)"
        if identities is not None and ref.member in identities:
            text += f"  identity {identities[ref.member] or '-'}"
        return text
    return {"absolute": f"{ref.text} (absolute)", "unresolved": f"{ref.text} (unresolved)"}.get(
        ref.kind, f"{ref.text} (outside the wheel)")


def _render_surface(w: Wheel, out: TextIO, color: bool) -> None:
    """``inspect``: the consumer surface, each target with its type, file, identity, live or orphan;
    each package config with what it reaches; each .pc with its libs and cflags."""
    s = w.surface
    if s is None:
        return
    ids = {b.path: b.identity for b in w.libraries}
    out.write(f"\n  {paint('consumer surface', 'bold', color)} (CMake / pkg-config, read as text)\n")
    for c in s.configs:
        out.write(f"    config {c.path}  package {c.package}\n")
        for inc in c.includes:
            out.write(f"      includes {inc}\n")
        for inc in c.unresolved_includes:
            out.write(f"      includes {inc} (not followed)\n")
    for t in s.targets:
        state = "live" if t.live else paint("orphan", "warning", color)
        out.write(f"    target {t.name}  {t.type}  {state}  in {t.export_file}\n")
        for cfg, ref in sorted(t.files.items()):
            soname = t.sonames.get(cfg, t.sonames.get(""))
            out.write(f"      file{'[' + cfg + ']' if cfg else ''} {_shown_ref(ref, ids)}"
                      + (f"  IMPORTED_SONAME {soname}" if soname else "") + "\n")
        for ref in t.include_dirs:
            out.write(f"      include {_shown_ref(ref)}\n")
        links = [x if isinstance(x, str) else _shown_ref(x) for x in t.link_libraries]
        if links:
            out.write(f"      links {'; '.join(links)}\n")
    for p in s.pkgconfig:
        out.write(f"    pkg-config {p.name}  {p.path}\n")
        out.write(f"      libs {' '.join(p.libs) or '-'}\n")
        if p.libs_private:
            out.write(f"      libs.private {' '.join(p.libs_private)}\n")
        out.write(f"      cflags {' '.join(p.cflags) or '-'}\n")
        if p.requires:
            out.write(f"      requires {' '.join(p.requires)}\n")
    for path, why in s.problems:
        out.write(f"    {paint('unreadable', 'warning', color)} {path}: {why}\n")


def _highest_versions(versions: list[str]) -> str:
    """``GLIBC_2.34, GLIBCXX_3.4.30``: the highest version per prefix."""
    best: dict[str, tuple[tuple[int, ...], str]] = {}
    for v in versions:
        prefix, _, num = v.partition("_")
        try:
            key = tuple(int(x) for x in num.split("."))
        except ValueError:
            continue
        if prefix not in best or key > best[prefix][0]:
            best[prefix] = (key, v)
    return ", ".join(v for _, v in sorted(best.values(), key=lambda x: x[1])) or ", ".join(versions)


