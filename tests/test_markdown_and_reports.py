"""``--format markdown`` (a job summary) and ``--report FORMAT=FILE`` (several reports from one
scan), through the command line's entry point (tests/test_action.py runs it as a process)."""
from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

from wheelaudit.cli.main import main
from wheelaudit.model.finding import Finding
from wheelaudit.model.report import Report, WheelReport
from wheelaudit.render import markdown
from wheelaudit.scanner import scan

RULES = """\
version = 1

[[component]]
name = "backend_mlx"
symbols = ["executorch::backends::mlx::MLXBackend::init"]
strong-only = true
owner = "executorch/lib/libexecutorch_backend_mlx.*"
required = false
"""
WAIVE = RULES + """
[[waive]]
code = "WA201"
target = "backend_mlx"
reason = "kept | for <now>"
"""


@pytest.fixture
def wheelaudit(monkeypatch, capsys):
    """The command line in ``cwd``: (exit status, standard output, standard error)."""

    def run(cwd: Path, *args) -> SimpleNamespace:
        monkeypatch.chdir(cwd)
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return run


def test_markdown_table_verdict_and_waived(tmp_path, fixture_wheels, wheelaudit):
    (tmp_path / "rules.toml").write_text(RULES)
    (tmp_path / "waived.toml").write_text(WAIVE)
    wheel = fixture_wheels["macos_dup_delegate"]
    proc = wheelaudit(tmp_path, "check", wheel, "--rules", "rules.toml", "--format", "markdown")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == "### wheelaudit: failed"
    assert lines[2] == "failed: 1 error, 0 warnings in 1 wheel (rules: rules.toml; fail-on error)"
    header = lines.index("| Code | Severity | Wheel | Member | Message | Hint |")
    assert lines[header + 1] == "| --- | --- | --- | --- | --- | --- |"
    row = lines[header + 2].split(" | ")
    assert row[0] == "| WA201" and row[1] == "error" and row[2] == f"`{wheel.name}`"
    assert row[3].startswith("`executorch/") and row[3].endswith("(+1 more)")
    assert "backend\\_mlx" in row[4]  # Markdown markup in a message is escaped
    assert row[5] == "link the component into one library only and let the others depend on it |"
    assert f"- `{wheel.name}`: 1 finding" in lines
    # the waived finding moves to a folded table with its reason, escaped
    proc = wheelaudit(tmp_path, "check", wheel, "--rules", "waived.toml", "--format", "markdown")
    assert proc.returncode == 0
    assert proc.stdout.startswith("### wheelaudit: passed") and "No findings." in proc.stdout
    assert "<details><summary>Waived (1)</summary>" in proc.stdout
    waived_row = next(line for line in proc.stdout.splitlines() if line.startswith("| WA201 "))
    assert waived_row.endswith("| kept \\| for &lt;now&gt; |")


def test_markdown_cells_cannot_break_the_table(fixture_wheels):
    wheel = scan(fixture_wheels["macos_clean"])
    hostile = Finding("WA301", "a | b\nnext `line` <script>*x*", subject="s", paths=["pkg/a|b`c.so"])
    rows = [Finding("WA604", "m", subject=f"s{i}", paths=[f"p{i}"]) for i in range(markdown.MAX_ROWS + 5)]
    long = Finding("WA604", "y" * 2000, subject="long")
    out = io.StringIO()
    markdown.render_report(Report([WheelReport(wheel, [hostile, long, *rows])]), out)
    text = out.getvalue()
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert all(line.count(" | ") == 5 for line in table)  # six cells each, whatever the message holds
    first = table[2]  # (after the header and its rule)
    assert "a \\| b<br>next \\`line\\` &lt;script&gt;\\*x\\*" in first and "pkg/a\\|b\\`c.so" in first
    assert len(table) == 2 + markdown.MAX_ROWS
    assert f"… and {len(rows) + 2 - markdown.MAX_ROWS} more" in text
    assert "y" * (markdown.MAX_MESSAGE - 1) + "…" in text and "y" * markdown.MAX_MESSAGE not in text


def test_one_scan_writes_every_report(tmp_path, fixture_wheels, wheelaudit):
    (tmp_path / "rules.toml").write_text(RULES)
    wheel = fixture_wheels["macos_dup_delegate"]
    proc = wheelaudit(tmp_path, "check", wheel, "--rules", "rules.toml", "--format", "github",
                      "--report", "sarif=w.sarif", "--report", "json=w.json",
                      "--report", "junit=w.xml", "--report", "markdown=w.md", "--report", "text=w.txt")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("::error ")
    assert json.loads((tmp_path / "w.sarif").read_text())["version"] == "2.1.0"
    assert json.loads((tmp_path / "w.json").read_text())["summary"] == {"errors": 1, "warnings": 0, "waived": 0}
    assert ET.parse(tmp_path / "w.xml").getroot().get("failures") == "1"
    assert (tmp_path / "w.md").read_text().startswith("### wheelaudit: failed")
    text = (tmp_path / "w.txt").read_text()
    assert "\033[" not in text and "WA201" in text
    # each file is what --format FMT --output FILE writes
    again = wheelaudit(tmp_path, "check", wheel, "--rules", "rules.toml", "--format", "json", "--output", "o.json")
    assert again.returncode == 1
    assert (tmp_path / "o.json").read_text() == (tmp_path / "w.json").read_text()


@pytest.mark.parametrize("args,message", [
    (["--report", "yaml=x"], "'yaml' is not a format"),
    (["--report", "sarif"], "expected FORMAT=FILE"),
    (["--report", "sarif=-"], "--report writes to a file"),
    (["--report", "sarif=a.sarif", "--report", "json=a.sarif"], "--report sarif writes that file already"),
    (["--output", "a.json", "--report", "json=a.json"], "--output writes that file already"),
])
def test_report_usage_errors_before_the_scan(tmp_path, args, message, wheelaudit):
    proc = wheelaudit(tmp_path, "check", tmp_path / "missing.whl", *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "missing.whl" not in proc.stderr  # refused before any input was looked at
    assert not any(tmp_path.iterdir())


def test_an_unwritable_report_is_exit_2_after_a_passing_check(tmp_path, fixture_wheels, wheelaudit):
    proc = wheelaudit(tmp_path, "check", fixture_wheels["macos_clean"], "--ignore", "WA5",
                      "--report", f"sarif={tmp_path / 'no' / 'such' / 'dir.sarif'}")
    assert proc.returncode == 2
    assert "cannot write the report to" in proc.stderr
