"""What a person sees (issue #23 item 7): the progress bar on a terminal only, and ``-q`` / ``-v``.

Black-box: the installed ``wheelaudit`` script in a subprocess, its standard error (and for some
tests its standard output) on a real pseudo-terminal (``os.openpty``), read back and replayed
through a small terminal model (carriage return, erase to the end of the line, newline) to see
what is left on the screen. ``WHEELAUDIT_PROGRESS_DELAY=0`` (a documented setting) makes the bar
appear at once, so a small fixture wheel shows it.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from wheelaudit.cli.main import main

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminals as on Linux")

WHEELAUDIT = shutil.which("wheelaudit", path=str(Path(sys.executable).parent)) or shutil.which("wheelaudit")
#: what the bar writes while it is drawn: the label (the wheel's name, cut in its middle to fit),
#: the bar, the percentage
BAR = re.compile(rb"\rscanning ([^\r\n\x1b]*?)  \[[#.]{10,30}\] +\d+%")
#: the pseudo-terminal's width (the bar must fit: a line that wraps cannot be taken back)
COLUMNS = 80


def _env(**extra: str) -> dict[str, str]:
    """The user's environment less what changes the display (CI sets CI; a developer may have
    WHEELAUDIT_* set), plus ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS") and not k.startswith("WHEELAUDIT_")}
    env.update({"NO_COLOR": "1", "TERM": "xterm", "COLUMNS": "200", "WHEELAUDIT_PROGRESS_DELAY": "0"})
    env.update(extra)
    return env


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The command with its output on pipes (not a terminal)."""
    assert WHEELAUDIT, "the wheelaudit console script is not installed"
    return subprocess.run([WHEELAUDIT, *args], capture_output=True, text=True, env=env or _env(), cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=120)


def on_tty(*args: str, env: dict[str, str] | None = None, stdout=None, interrupt: bool = False,
           cwd: Path | None = None) -> tuple[int, bytes]:
    """Run the command with standard error on a pseudo-terminal (and standard output too unless
    ``stdout`` is given); return its exit status and every byte the terminal received. With
    ``interrupt``, SIGINT goes to its process group (as Ctrl-C does) once the bar is drawn."""
    assert WHEELAUDIT, "the wheelaudit console script is not installed"
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    try:
        proc = subprocess.Popen([WHEELAUDIT, *args], stdin=subprocess.DEVNULL,
                                stdout=slave if stdout is None else stdout, stderr=slave,
                                env=env or _env(), cwd=cwd, start_new_session=True)
    finally:
        os.close(slave)
    got = bytearray()
    sent = False
    try:
        while True:
            ready, _, _ = select.select([master], [], [], float(os.environ.get("PTY_SAFETY", "60")))
            if not ready:  # (a safety net against a hung child, not a measurement)
                proc.kill()
                pytest.fail(f"no output for a minute; got so far: {bytes(got)!r}")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal has closed it
                break
            if not chunk:
                break
            got += chunk
            if interrupt and not sent and BAR.search(got):
                os.killpg(proc.pid, signal.SIGINT)
                sent = True
    finally:
        os.close(master)
        code = proc.wait(timeout=60)
    if interrupt:
        assert sent, f"the bar never appeared: {bytes(got)!r}"
    return code, bytes(got)


def screen(raw: bytes) -> list[str]:
    """The lines a terminal of :data:`COLUMNS` columns shows after receiving ``raw``: ``\\r`` goes
    back to the start of the line, ``ESC [ K`` erases from the cursor to its end, ``\\n`` starts
    the next, and a character past the last column goes on the next line (autowrap); other
    escape sequences (none are expected with NO_COLOR) are dropped. Trailing empty lines are
    left out."""
    lines, col = [""], 0
    text = raw.decode("utf-8", "replace")
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\x1b":
            m = re.match(r"\x1b\[[0-9;?]*([A-Za-z])", text[i:])
            assert m, f"an escape sequence the model does not know: {text[i:i + 10]!r}"
            if m.group(1) == "K":
                lines[-1] = lines[-1][:col]
            i += m.end()
            continue
        if c == "\r":
            col = 0
        elif c == "\n":
            lines.append("")
            col = 0
        else:
            if col == COLUMNS:
                lines.append("")
                col = 0
            line = lines[-1].ljust(col)
            lines[-1] = line[:col] + c + line[col + 1:]
            col += 1
        i += 1
    while lines and not lines[-1]:
        lines.pop()
    return lines


@pytest.fixture(scope="module")
def clean(fixture_wheels) -> Path:
    return fixture_wheels["linux_clean"]


@pytest.fixture(scope="module")
def tampered(fixture_wheels) -> Path:
    return fixture_wheels["linux_tampered"]


# ---------------------------------------------------------------------------------------------
# The progress bar


def test_bar_on_a_terminal_is_erased_before_the_report(clean):
    expected = run("check", str(clean))
    assert expected.returncode == 0 and expected.stderr == ""
    code, raw = on_tty("check", str(clean))
    assert code == 0
    assert BAR.search(raw), raw  # it was drawn ...
    assert raw.count(b"\r\x1b[K") >= 1  # ... and erased
    # ... so the screen holds the report alone, from its first column
    assert screen(raw) == screen(expected.stdout.encode())


def test_bar_for_each_wheel_of_a_folder(fixture_wheels, tmp_path):
    dist = tmp_path / "dist"
    dist.mkdir()
    for scenario in ("linux_clean", "macos_clean"):
        shutil.copy(fixture_wheels[scenario], dist)
    code, raw = on_tty("check", str(dist), stdout=subprocess.DEVNULL)
    assert code == 0
    labels = {m.group(1).decode() for m in BAR.finditer(raw)}
    for wheel in dist.iterdir():  # (the label's end: the platform tag)
        assert any(label.endswith(wheel.name[-20:]) for label in labels), (wheel.name, labels)
    assert screen(raw) == []  # standard error ends clean


def test_no_bar_into_a_file(clean, tmp_path):
    # (into a pipe: every run() of this module sees an empty standard error)
    # WHEELAUDIT_PROGRESS=1 allows the bar where CI is set: still never into a file
    env = _env(WHEELAUDIT_PROGRESS="1")
    err = tmp_path / "stderr.txt"
    with open(err, "wb") as fh:
        p = subprocess.run([WHEELAUDIT, "check", str(clean)], stdout=subprocess.DEVNULL, stderr=fh, env=env)
    assert p.returncode == 0 and err.read_bytes() == b""


@pytest.mark.parametrize("extra, args, drawn", [
    ({"CI": "true"}, [], False),  # a CI runner's pseudo-terminal is still a log (as cargo judges)
    ({"CI": "true", "WHEELAUDIT_PROGRESS": "1"}, [], True),  # unless asked for
    ({"TERM": "dumb"}, [], False),  # it cannot erase a line
    ({}, ["-q"], False),
    ({}, ["-v"], True),
])
def test_when_the_bar_is_drawn_on_a_terminal(clean, extra, args, drawn):
    code, raw = on_tty("check", str(clean), *args, env=_env(**extra), stdout=subprocess.DEVNULL)
    assert code == 0
    assert bool(BAR.search(raw)) is drawn, raw


def test_machine_format_on_a_terminal_is_clean_json(clean, tmp_path):
    # standard error on a terminal and the JSON redirected: a person watching gets the bar, the
    # file gets the report alone
    out = tmp_path / "report.json"
    with open(out, "wb") as fh:
        code, raw = on_tty("check", str(clean), "--format", "json", stdout=fh)
    assert code == 0 and BAR.search(raw)
    assert json.loads(out.read_text())["summary"]["errors"] == 0
    # both on the terminal: the bar is gone before the first byte of the JSON
    code, raw = on_tty("check", str(clean), "--format", "json")
    assert code == 0 and BAR.search(raw)
    assert screen(raw) == screen(out.read_bytes())


def long_tree(root: Path, sizes: list[int]) -> Path:
    """An unpacked wheel of sparse files of zeros (they take no disk space): reading its 3 GiB or
    more goes on long after a signal sent the moment the bar appears."""
    (root / "big-1.0.dist-info").mkdir(parents=True)
    (root / "big-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: big\nVersion: 1.0\n")
    (root / "big-1.0.dist-info" / "WHEEL").write_text("Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
                                                      "Tag: cp311-cp311-manylinux_2_28_x86_64\n")
    (root / "big").mkdir()
    for i, size in enumerate(sizes):
        with open(root / "big" / f"zeros{i:03}.bin", "wb") as fh:
            fh.truncate(size)
    return root


@pytest.mark.parametrize("jobs, sizes", [
    ("1", [15 << 20] * 200),  # in-process
    ("1", [4 << 30]),  # in-process, a member over 16 MiB: hashed on a helper thread
    ("2", [15 << 20] * 200),  # worker processes
])
def test_sigint_mid_bar_leaves_the_line_clean(tmp_path, jobs, sizes):
    tree = long_tree(tmp_path / "big", sizes)
    code, raw = on_tty("check", str(tree), "--jobs", jobs, interrupt=True)
    assert code == 128 + signal.SIGINT
    assert BAR.search(raw)
    assert screen(raw) == ["wheelaudit: stopped by SIGINT"]


# ---------------------------------------------------------------------------------------------
# --quiet and --verbose: the command line's own entry point, in this process (nothing here draws
# a bar: its standard error is not a terminal)


def cli(*args: str) -> tuple[int, str, str]:
    """``wheelaudit ARGS``: exit status, standard output, standard error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_quiet_check_prints_findings_only(clean, tampered, tmp_path):
    code, full, _ = cli("check", str(tampered))
    assert code == 1 and "failed:" in full
    code, quiet, err = cli("check", "-q", str(tampered))
    assert code == 1 and err == ""
    heads = [line for line in quiet.splitlines() if not line.startswith("    ")]
    assert heads and all(": WA" in line for line in heads), quiet
    assert quiet == "".join(line + "\n" for line in full.splitlines()
                            if not line.startswith(("failed:", "passed:", "note:")))
    # a clean wheel: nothing at all (no OK line, no summary)
    assert cli("check", "--quiet", str(clean)) == (0, "", "")
    # -qq: nothing, the exit status answers (in a real process too)
    silent = run("check", "-qq", str(tampered))
    assert (silent.returncode, silent.stdout, silent.stderr) == (1, "", "")
    # a report written to --output is whole, and errors are never silenced
    report = tmp_path / "report.txt"
    assert cli("check", "-qq", str(tampered), "-o", str(report)) == (1, "", "")
    assert report.read_text() == full
    also = tmp_path / "also.txt"
    assert cli("check", "-q", str(tampered), "--report", f"text={also}") == (1, quiet, "")
    assert also.read_text() == full
    code, _, err = cli("check", "-qq", str(tmp_path / "nothing.whl"))
    assert code == 2 and "no such file" in err


def test_quiet_and_verbose_never_change_a_machine_format(tampered):
    for fmt, flag in (("json", "-qq"), ("sarif", "-q"), ("junit", "-v"), ("github", "-qq")):
        code, plain, _ = cli("check", str(tampered), "--format", fmt)
        assert cli("check", flag, str(tampered), "--format", fmt)[:2] == (code, plain), (fmt, flag)


def test_quiet_manual_commands_drop_their_summaries(clean, fixture_wheels):
    w = str(clean)
    _, full, _ = cli("owners", w, "xnn_*")
    assert full.endswith("\n1 of 1 pattern matched\n")
    assert cli("owners", "-q", w, "xnn_*") == (0, full.removesuffix("\n1 of 1 pattern matched\n"), "")
    assert cli("owners", "-qq", w, "xnn_*") == (0, "", "")  # as grep -q
    assert cli("owners", "-qq", w, "no_such_*") == (1, "", "")
    dup = str(fixture_wheels["macos_dup_delegate"])
    _, full, _ = cli("dups", dup)
    assert "defined by more than one library:" in full.splitlines()[-1]
    assert cli("dups", "-q", dup) == (0, full[:full.rindex("\n\n") + 1], "")
    _, full, _ = cli("diff", w, w)
    assert full.endswith("no change in libraries, owners, duplicates or data files\n")
    assert cli("diff", "-q", w, w) == (0, full[:full.rindex("no change")], "")
    m = str(fixture_wheels["linux_glibc234"])
    _, full, _ = cli("diff", w, m)
    assert " unchanged; " in full.splitlines()[-1]
    assert cli("diff", "-q", w, m) == (0, full[:full.rindex("\n\n") + 1], "")


def test_verbose_tells_each_wheel_and_binary_read(clean):
    _, plain, _ = cli("check", str(clean))
    code, out, err = cli("check", "-v", str(clean))
    assert code == 0 and out == plain  # the report is the same; the telling is on stderr
    libs = json.loads(cli("inspect", str(clean), "--format", "json")[1])["wheels"][0]["libraries"]
    assert libs
    assert f"reading {clean}" in err
    for lib in libs:
        assert re.search(rf"^    {re.escape(lib['path'])}: ELF (shared library|bundle|executable) \(x86_64\), ",
                         err, re.M), (lib["path"], err)


def test_verbose_tells_where_the_rules_came_from(clean, tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "sub").mkdir()
    monkeypatch.chdir(project / "sub")

    def rules_line(*extra: str) -> str:
        code, _, err = cli("check", "-v", str(clean), *extra)
        assert code == 0, err
        return next(line for line in err.splitlines() if line.startswith("rules: "))

    line = rules_line()
    assert "no pyproject.toml in" in line and "repository root" in line
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert f"{project / 'pyproject.toml'} has no [tool.wheelaudit] table" in rules_line()
    (project / "ci").mkdir()
    (project / "ci" / "rules.toml").write_text("version = 1\nname = 'x'\n")
    (project / "pyproject.toml").write_text("[tool.wheelaudit]\nrules = 'ci/rules.toml'\n")
    assert rules_line() == (f"rules: {project / 'ci' / 'rules.toml'} (named by [tool.wheelaudit] rules in "
                            f"{project / 'pyproject.toml'})")
    (project / "pyproject.toml").write_text("[tool.wheelaudit]\nname = 'inline'\n")
    assert rules_line() == f"rules: the [tool.wheelaudit] table of {project / 'pyproject.toml'}"
    assert rules_line("--rules", "../ci/rules.toml") == "rules: ../ci/rules.toml (--rules)"


@pytest.fixture(scope="module")
def other(tmp_path_factory) -> Path:
    """A second distribution (an unpacked pure wheel), for --together."""
    root = tmp_path_factory.mktemp("other") / "other"
    (root / "other-1.0.dist-info").mkdir(parents=True)
    (root / "other-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: other\nVersion: 1.0\n")
    (root / "other-1.0.dist-info" / "WHEEL").write_text("Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    (root / "other").mkdir()
    (root / "other" / "__init__.py").write_text("")
    return root


@pytest.mark.parametrize("command", [
    ["check", "{w}"], ["check", "--together", "{w}", "{o}"], ["inspect", "{w}"], ["owners", "{w}", "xnn_*"],
    ["dups", "{w}"], ["dups", "--together", "{w}", "{o}"], ["diff", "{w}", "{o}"], ["init", "{w}"],
])
def test_every_command_takes_quiet_and_verbose(clean, other, command):
    args = [a.format(w=clean, o=other) for a in command]
    code, plain, _ = cli(*args)
    code_v, out_v, err_v = cli(args[0], "-v", *args[1:])
    assert (code_v, out_v) == (code, plain)
    for path in {clean, other} & {Path(a) for a in args}:
        assert f"reading {path}" in err_v
    code_q, _, err_q = cli(args[0], "-q", *args[1:])
    assert code_q == code and err_q == ""
    code, _, err = cli(args[0], "-q", "-v", *args[1:])
    assert code == 2 and "not allowed with" in err


def test_rules_and_schema_take_them_too(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("version = 1\nname = 'x'\nunknown-key = 1\n")
    good = Path(__file__).resolve().parent.parent / "rules" / "executorch.toml"
    code, full, _ = cli("rules", "validate", str(good), str(bad))
    assert code == 1 and f"{good}: ok" in full
    assert cli("rules", "validate", "-q", str(good), str(bad)) == (1, full.replace(f"{good}: ok (valid rules)\n", ""), "")
    assert cli("rules", "validate", "-qq", str(good), str(bad)) == (1, "", "")
    schema = cli("schema", "rules")
    assert cli("schema", "-qq", "rules") == cli("schema", "-v", "rules") == schema


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_a_bad_progress_delay_is_a_usage_error(clean, monkeypatch, value):
    monkeypatch.setenv("WHEELAUDIT_PROGRESS_DELAY", value)
    code, out, err = cli("check", str(clean))
    assert (code, out) == (2, "") and "WHEELAUDIT_PROGRESS_DELAY" in err
