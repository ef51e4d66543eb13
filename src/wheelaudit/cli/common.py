"""Options and helpers shared by several commands."""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

if TYPE_CHECKING:
    from wheelaudit.model.codes import Severity


class UsageError(Exception):
    """A problem with what the user asked for: printed, exit 2."""


def add_output_options(p: argparse.ArgumentParser, formats: list[str]) -> None:
    p.add_argument("--format", choices=formats, default="text", help="output format (default: text)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of standard output ('-': standard output)")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                   help="colour in a text report: auto (the default: on a terminal, unless NO_COLOR is set; "
                        "FORCE_COLOR forces it), always, never")
    p.add_argument("--no-color", dest="color", action="store_const", const="never", help="the same as --color never")


def add_report_option(p: argparse.ArgumentParser, formats: list[str]) -> None:
    """``--report FORMAT=FILE``, repeatable: the same report written once more, in another format,
    to a file (one scan for the annotations, the SARIF file and the job summary of a CI step)."""

    def target(text: str) -> tuple[str, str]:
        fmt, sep, path = text.partition("=")
        fmt = fmt.strip()
        if not sep or not path:
            raise argparse.ArgumentTypeError(f"{text!r}: expected FORMAT=FILE (e.g. sarif=wheelaudit.sarif)")
        if fmt not in formats:
            raise argparse.ArgumentTypeError(f"{fmt!r} is not a format (choose from {', '.join(formats)})")
        if path == "-":
            raise argparse.ArgumentTypeError("standard output takes --format; --report writes to a file")
        return fmt, path

    p.add_argument("--report", action="append", type=target, default=[], metavar="FORMAT=FILE",
                   help="also write the report in FORMAT to FILE, from the same scan (repeatable): "
                        "--report sarif=wheelaudit.sarif --report markdown=summary.md")


def check_report_targets(reports: list[tuple[str, str]], output: str | None) -> None:
    """A usage error when two reports (``--report`` or ``--output``) would write one file."""
    seen: dict[Path, str] = {}
    if output and output != "-":
        seen[Path(output).resolve()] = "--output"
    for fmt, path in reports:
        where = Path(path).resolve()
        if where in seen:
            raise UsageError(f"--report {fmt}={path}: {seen[where]} writes that file already")
        seen[where] = f"--report {fmt}"


def write_reports(report, reports: list[tuple[str, str]]) -> None:
    """Write ``report`` in each ``(format, file)`` of ``--report``."""
    from wheelaudit.render import renderer

    for fmt, path in reports:
        with output_stream(path, report.exit_code) as out:
            renderer(fmt)(report, out, False)


def add_verbosity_options(p: argparse.ArgumentParser) -> None:
    """``--quiet`` / ``-q`` and ``--verbose`` / ``-v``, the same on every command (applied by
    :func:`console`)."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("--quiet", "-q", action="count", default=0,
                       help="less on the terminal: -q shows a text report's findings only (no OK lines, notes, "
                            "summary or progress bar), -qq nothing (the exit status answers); a machine --format "
                            "and an --output FILE are never cut")
    group.add_argument("--verbose", "-v", action="count", default=0,
                       help="also tell on standard error what is read: the rules file and how it was found, each "
                            "wheel, each native binary with its format and kind")


def verbosity(args: argparse.Namespace) -> int:
    """-2 (``-qq``), -1 (``-q``), 0, or 1 (``-v``; more ``-v`` tell no more)."""
    quiet, verbose = getattr(args, "quiet", 0) or 0, getattr(args, "verbose", 0) or 0
    return max(-2, -quiet) if quiet else min(1, verbose)


#: how much a text report to standard output shows (see :func:`console`): -2 nothing (``-qq``, a
#: text ``--format``), -1 its findings only (``-q``), 0 all of it
_CUT: ContextVar[int] = ContextVar("wheelaudit_cut", default=0)


@contextlib.contextmanager
def console(args: argparse.Namespace) -> Iterator[None]:
    """How a command talks to a person, applied once around every command (``cli/main.py``)
    from its ``-q`` / ``-v`` (:func:`verbosity`):

    * 0: the text report whole, the progress bar at a terminal (:mod:`wheelaudit.scanner.progress`);
    * ``-q``: no progress bar, and a text report to standard output without its asides
      (:func:`wheelaudit.render.text.aside`: a clean wheel's OK line, notes, the closing summary):
      its findings only (applied by :func:`output_stream`, which knows where a report goes);
    * ``-qq``: as ``-q``, and a text report to standard output is not written at all;
    * ``-v``: as 0, and on standard error the rules file and how it was found, each wheel read and
      each native binary in it (:func:`wheelaudit.scanner.progress.trace`).

    Only what a person reads at the terminal changes: a machine format (``--format`` other than
    text, ``init``'s rules) and a report written to ``--output FILE`` are whole, and warnings and
    errors on standard error are never silenced."""
    from wheelaudit.scanner.progress import showing

    level = verbosity(args)
    if level <= -2 and getattr(args, "format", None) != "text":
        level = -1  # (a machine format is written whole: -qq only takes the bar away)
    with showing(bar=False if level < 0 else None, trace=_tell if level > 0 else None):
        token = _CUT.set(min(level, 0))
        try:
            yield
        finally:
            _CUT.reset(token)


def _tell(line: str) -> None:
    """A ``--verbose`` line, on standard error."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def trace_rules(start: Path, rules_arg: str | None, ruleset, origin: Path | None) -> None:
    """``--verbose``: which rules a command uses and how they were found (``--rules``, else
    ``[tool.wheelaudit]`` in the nearest ``pyproject.toml``, else none): the answer to "why was
    my rules file not used"."""
    from wheelaudit.scanner.progress import trace, tracing

    if not tracing():
        return
    if rules_arg:
        trace(f"rules: {rules_arg} (--rules)")
        return
    from wheelaudit.ruleset.config import find_pyproject

    pyproject = find_pyproject(start)
    if pyproject is None:
        trace(f"rules: none, built-in checks only (no --rules, and no pyproject.toml in {start} or a folder "
              "above it, up to the repository root)")
    elif ruleset is None:
        trace(f"rules: none, built-in checks only (no --rules, and {pyproject} has no [tool.wheelaudit] table)")
    elif origin is not None and origin != pyproject:
        trace(f"rules: {origin} (named by [tool.wheelaudit] rules in {pyproject})")
    else:
        trace(f"rules: the [tool.wheelaudit] table of {pyproject}")


class _Capped(io.TextIOBase):
    """A report's stream that draws on the run's output allowance: past it, one line says the
    report is cut there and the rest is dropped (the exit status is the findings' as ever)."""

    def __init__(self, fh: TextIO, budget) -> None:
        self.fh, self.budget = fh, budget
        self.cut: str | None = None

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(getattr(self.fh, "isatty", lambda: False)())

    def flush(self) -> None:
        self.fh.flush()

    def write(self, s: str) -> int:
        if self.cut is None:
            left = self.budget.output
            if len(s) <= left:
                self.fh.write(s)
                self.budget.output = left - len(s)
            else:
                self.cut = self.budget.cut(
                    "output", f"the report is cut after {self.budget.limit_output:,} characters (the run's output budget)")
                self.fh.write(s[:left] + f"\n[{self.cut}]\n")
                self.budget.output = 0
        return len(s)


class _Nowhere(io.TextIOBase):
    """A report's stream under ``-qq``: everything written is dropped."""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        return len(s)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


class _TimeoutAction(argparse.Action):
    """``--binary-timeout S``: the bound on reading one binary. Kept in the environment
    (WHEELAUDIT_BINARY_TIMEOUT), where every scan of the run and its workers read it."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from wheelaudit.settings import SettingError
        from wheelaudit.settings import seconds as parse_seconds

        try:
            seconds = parse_seconds(values, option_string)
        except SettingError as exc:
            parser.error(str(exc))
        os.environ["WHEELAUDIT_BINARY_TIMEOUT"] = repr(seconds)
        setattr(namespace, self.dest, seconds)


def add_jobs_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", "-j", type=_positive_int, default=None, metavar="N",
                   help="worker processes reading the wheel (default: one per core, in-process for a small "
                        "wheel; 1: in-process)")
    p.add_argument("--binary-timeout", action=_TimeoutAction, default=None, metavar="SECONDS",
                   help="report a binary that takes longer than this to read as WA001 and go on "
                        "(default: $WHEELAUDIT_BINARY_TIMEOUT, else 120)")


class ReaderGone(Exception):
    """Standard output's reader stopped reading (``wheelaudit inspect x.whl | head``) during a
    command that is not a gate: the command ends quietly with ``code``, the status it had
    reached (0, or the verdict of ``owners`` / ``rules validate``)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class OutputFailed(Exception):
    """The report could not be written. ``code`` is the exit status: never lower than the
    findings warrant (1 where there were findings), 2 where nothing could be reported."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so that the interpreter's last flush of a broken
    standard output raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


@contextlib.contextmanager
def output_stream(path: str | None, verdict: int = 0, budget=None, *, gate: bool = False) -> Iterator[TextIO]:
    """Where the report goes: ``path``, else standard output. ``verdict`` is the exit status
    the command has reached (0 or 1); if the report cannot be written (a closed standard
    output, a broken pipe, an unwritable ``--output``) :class:`OutputFailed` carries 1 where
    the verdict was 1, else 2, and one line saying why. A broken pipe on standard output (its
    reader stopped early, as ``head`` does) is no failure of a command that is not a ``gate``
    (everything but ``check``): :class:`ReaderGone` ends it quietly with ``verdict``.
    ``budget``: the run's (:mod:`wheelaudit.binary.budget`), whose output allowance the report
    draws on."""
    if budget is not None:
        with output_stream(path, verdict, gate=gate) as fh:
            capped = _Capped(fh, budget)
            yield cast(TextIO, capped)  # (a text stream: what a renderer writes to)
            if capped.cut:
                print(f"wheelaudit: note: {capped.cut}", file=sys.stderr)
        return
    if path == "-":  # (the usual spelling of standard output)
        path = None
    cut = _CUT.get()
    if path is None and cut <= -2:  # (-qq: the exit status answers)
        yield cast(TextIO, _Nowhere())
        return
    if cut < 0:  # (-q: a text report to standard output holds its findings only; a file, all)
        from wheelaudit.render.text import findings_only

        with findings_only(path is None), _opened(path, verdict, gate) as fh:
            yield fh
        return
    with _opened(path, verdict, gate) as fh:
        yield fh


@contextlib.contextmanager
def _opened(path: str | None, verdict: int, gate: bool = True) -> Iterator[TextIO]:
    """``path`` opened for writing, else standard output; failures as :func:`output_stream` says."""
    where = path or "standard output"
    try:
        if path:
            fh: TextIO = open(Path(path), "w", encoding="utf-8")  # noqa: SIM115
        else:
            fh = sys.stdout
            if fh is None:  # started with descriptor 1 closed
                raise OSError(errno.EBADF, "it is closed")
        try:
            yield fh
            fh.flush()
        finally:
            if path:
                fh.close()
    except OSError as exc:
        if not path:
            silence_stdout()
            if not gate and isinstance(exc, BrokenPipeError):
                raise ReaderGone(verdict) from None
        raise OutputFailed(f"cannot write the report to {where}: {exc.strerror or exc}",
                           1 if verdict == 1 else 2) from None


def split_codes(values: list[str] | None) -> tuple[str, ...] | None:
    """``--select WA2,WA301 --select WA4`` -> ("WA2", "WA301", "WA4"); an unknown code or
    family is a usage error."""
    from wheelaudit.model.codes import CodeError, parse_selectors

    try:
        return parse_selectors(values)
    except CodeError as exc:
        raise UsageError(str(exc)) from None


def split_severities(values: list[str] | None) -> dict[str, Severity]:
    """``--severity WA502=error,WA6=warning`` -> {"WA502": "error", "WA6": "warning"}."""
    from wheelaudit.model.codes import CodeError, parse_severities

    try:
        return parse_severities(values)
    except CodeError as exc:
        raise UsageError(f"--severity: {exc}") from None
