"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

``::error file=<path in wheel>,title=<code> <subject>::<message>`` (``::warning`` for warnings;
the message's last line is the finding's ``hint:``, as in the text report),
escaped the way the Actions toolkit escapes them: in the message ``%`` → ``%25``, CR → ``%0D``,
LF → ``%0A``; in properties also ``:`` → ``%3A`` and ``,`` → ``%2C``. Waived findings are not
annotated (they are accepted); the closing summary line counts them. The ``file`` property is
the path inside the wheel: GitHub links it when the repository has a file there and shows the
annotation on the run either way.
"""

from __future__ import annotations

from typing import TextIO

from wheelaudit.model.finding import Finding
from wheelaudit.model.messages import more
from wheelaudit.model.report import Report
from wheelaudit.render import text
from wheelaudit.render.escape import safe, visible


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(f: Finding, wheel_name: str) -> str:
    # (what comes from the wheel: controls escaped here, line breaks as the toolkit does, below)
    f, wheel_name = safe(f, keep_breaks=True), visible(wheel_name, keep_breaks=True)
    level = "error" if f.severity == "error" else "warning"
    props = []
    if f.paths:
        props.append(f"file={escape_property(f.paths[0])}")
    title = f"{f.code} {f.subject}".strip() if f.subject else f.code
    props.append(f"title={escape_property(title)}")
    message = f"{wheel_name}: {f.message}"
    if len(f.paths) > 1:
        message += "\n" + "\n".join(f"at {p}" for p in f.paths[:20])
        if len(f.paths) > 20:
            message += "\n…" + more(len(f.paths) - 20, "paths")
    message += f"\nhint: {text.hint(f)}"  # (the annotation's last line, as in the text report)
    return f"::{level} {','.join(props)}::{escape_data(message)}"


def summary_line(report: Report) -> str:
    """The text renderer's summary line, prefixed for a CI log: ``wheelaudit passed: …``."""
    return "wheelaudit " + text.summary_line(report)


def render_report(report: Report, out: TextIO, color: bool = False) -> None:
    for wr in report.wheels:
        for f in wr.active:
            out.write(command(f, text.wheel_label(wr.wheel, f)) + "\n")
    out.write(summary_line(report) + "\n")
