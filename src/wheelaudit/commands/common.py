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


def add_jobs_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="binaries parsed in parallel (default: the number of cores)")


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


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")
