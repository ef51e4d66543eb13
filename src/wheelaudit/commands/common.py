"""Options and helpers shared by several commands."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO


def add_output_options(p: argparse.ArgumentParser, formats: list[str]) -> None:
    p.add_argument("--format", choices=formats, default="text", help="output format (default: text)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of standard output")
    p.add_argument("--no-color", action="store_true", help="no colour, even on a terminal (NO_COLOR is honoured too)")


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
        try:
            seconds = float(values)  # type: ignore[arg-type]
        except ValueError:
            parser.error(f"{option_string}: {values!r} is not a number of seconds")
        if not seconds > 0:
            parser.error(f"{option_string}: the bound must be more than 0 seconds")
        os.environ["WHEELAUDIT_BINARY_TIMEOUT"] = repr(seconds)
        setattr(namespace, self.dest, seconds)


def add_jobs_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", "-j", type=_positive_int, default=None, metavar="N",
                   help="worker processes reading the wheel (default: one per core, in-process for a small "
                        "wheel; 1: in-process)")
    p.add_argument("--binary-timeout", action=_TimeoutAction, default=None, metavar="SECONDS",
                   help="report a binary that takes longer than this to read as WA001 and go on "
                        "(default: $WHEELAUDIT_BINARY_TIMEOUT, else 120)")


@contextlib.contextmanager
def output_stream(path: str | None) -> Iterator[TextIO]:
    if not path:
        yield sys.stdout
        return
    from ..cli import UsageError

    target = Path(path)
    try:
        fh = open(target, "w", encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    with fh:
        yield fh


def split_codes(values: list[str] | None) -> list[str] | None:
    """``--select WA2,WA301 --select WA4`` → ["WA2", "WA301", "WA4"]; validated."""
    if not values:
        return None
    from ..cli import UsageError

    out = []
    for v in values:
        for code in v.split(","):
            code = code.strip().upper()
            if not code:
                continue
            if not (code.startswith("WA") and code[2:].isdigit() and len(code) <= 5) and code != "WA":
                raise UsageError(f"{code!r} is not a finding code or prefix (like WA201 or WA2)")
            out.append(code)
    return out or None

