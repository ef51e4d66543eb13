"""``--format markdown``: the verdict and a table of findings, for a CI job summary.

GitHub shows a step's ``$GITHUB_STEP_SUMMARY`` (Markdown) on the run's page; the action writes
this there, and it serves as a merge-request note or a release checklist elsewhere. A heading
with the verdict, the text renderer's summary line, then one table row per finding that is not
waived: code, severity, wheel, member (the first path inside the wheel, with a count of the
others), message and hint (how to fix it). Waived findings follow in a folded table with their reasons, then one line
per wheel. Every cell is escaped (``|``, HTML, line breaks), long messages are cut and the
tables stop after :data:`MAX_ROWS` rows with a count, so a report stays far below GitHub's
1 MiB summary limit.
"""

from __future__ import annotations

import html
from typing import TextIO

from wheelaudit.model.finding import Finding
from wheelaudit.model.messages import more, plural, shorten
from wheelaudit.model.report import Report
from wheelaudit.render import text
from wheelaudit.render.escape import visible

#: rows of each table before the rest is counted
MAX_ROWS = 500
#: characters of a message in a cell
MAX_MESSAGE = 600


#: Markdown's inline markup, escaped with a backslash (GFM escapes any ASCII punctuation so)
_MARKUP = str.maketrans({c: "\\" + c for c in "\\`*_[]~|"})


def cell(value: str, limit: int | None = None) -> str:
    """``value`` as the text of a table cell: HTML and Markdown markup escaped (``|`` too),
    lines joined with ``<br>``."""
    value = "\n".join(visible(line) for line in value.split("\n"))  # (a wheel's controls shown)
    if limit is not None:
        value = shorten(value, limit)
    value = html.escape(value, quote=False).translate(_MARKUP)
    return "<br>".join(line.strip() for line in value.splitlines()) if value else ""


def code_cell(value: str) -> str:
    """``value`` as inline code (escaped text when it holds a backtick or a line break)."""
    if not value:
        return ""
    if "`" in value or "\n" in value or "\r" in value:
        return cell(value)
    return "`" + visible(value).replace("|", "\\|") + "`"


def member(f: Finding) -> str:
    if not f.paths:
        return ""
    return code_cell(f.paths[0]) + more(len(f.paths) - 1)


def _table(out: TextIO, header: list[str], rows: list[list[str]]) -> None:
    out.write("| " + " | ".join(header) + " |\n")
    out.write("|" + "|".join(" --- " for _ in header) + "|\n")
    for row in rows[:MAX_ROWS]:
        out.write("| " + " | ".join(row) + " |\n")
    if len(rows) > MAX_ROWS:
        out.write(f"\n… and {len(rows) - MAX_ROWS} more (the JSON or SARIF report has every finding)\n")


def render_report(report: Report, out: TextIO, color: bool = False) -> None:
    verdict = "passed" if report.ok else "failed"
    out.write(f"### wheelaudit: {verdict}\n\n")
    out.write(cell(text.summary_line(report)) + "\n\n")
    active = [(text.wheel_label(wr.wheel, f), f) for wr in report.wheels for f in wr.active]
    waived = [(text.wheel_label(wr.wheel, f), f) for wr in report.wheels for f in wr.findings if f.waived]
    if active:
        _table(out, ["Code", "Severity", "Wheel", "Member", "Message", "Hint"],
               [[f.code, f.severity, code_cell(name), member(f), cell(f.message, MAX_MESSAGE),
                 cell(text.hint(f), MAX_MESSAGE)] for name, f in active])
        out.write("\n")
    else:
        out.write("No findings.\n\n")
    if waived:
        out.write(f"<details><summary>Waived ({len(waived)})</summary>\n\n")
        _table(out, ["Code", "Severity", "Wheel", "Member", "Message", "Reason"],
               [[f.code, f.severity, code_cell(name), member(f), cell(f.message, MAX_MESSAGE), cell(f.waived_by or "")]
                for name, f in waived])
        out.write("\n</details>\n\n")
    for wr in report.wheels:
        n = len(wr.active)
        state = "OK" if not n else plural(n, 'finding')
        out.write(f"- {code_cell(wr.wheel.path.name)}: {state}\n")
    for note in report.notes:
        out.write(f"\nNote: {cell(note)}\n")
