#!/usr/bin/env python3
"""Print the stubs of a new check: its code's entry in the one code table, its explanation, its
function in its family's module, its registration, and the steps that follow (CONTRIBUTING.md,
"Add a check"). Changes no file: paste each stub where it says.

    python scripts/new_check.py WA610 abi "an ELF library needs a TLS model the loader refuses"
    python scripts/new_check.py WA610 abi "..." --name static-tls --severity warning

Exits 2, with the reason, for a code that is malformed or taken, or a family that runs no checks
of its own over a wheel.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from wheelaudit.checks.registry import FAMILIES, WHEEL_FAMILIES  # noqa: E402
from wheelaudit.model.codes import CODES  # noqa: E402

_CODE = re.compile(r"WA[0-9]{3}")


def _slug(title: str) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words[:4]) or "new-check"


def _previous(code: str) -> str | None:
    """The registered code the new one goes after (the table is in code order)."""
    before = [c for c in CODES if c < code]
    return before[-1] if before else None


def stubs(code: str, family: str, title: str, name: str, severity: str) -> str:
    """The text printed for a new ``code`` of ``family``; raises ValueError with the reason when
    the code or the family cannot take it."""
    if not _CODE.fullmatch(code):
        raise ValueError(f"{code!r} is not a code: WA and three digits (WA610)")
    if code in CODES:
        raise ValueError(f"{code} is taken: {CODES[code].name} ({CODES[code].summary})")
    runnable = {f.name: f for f in WHEEL_FAMILIES if f.checks and f.owns}
    if family not in runnable:
        others = ", ".join(sorted(runnable))
        known = {f.name for f in FAMILIES}
        why = "runs no checks of its own over a wheel" if family in known else "is no family"
        raise ValueError(f"{family!r} {why}; a new check goes into one of: {others}")
    func = name.replace("-", "_")
    module = importlib.import_module(f"wheelaudit.checks.{family}")
    path = f"src/wheelaudit/checks/{family}.py"
    after = _previous(code)
    judges = getattr(module, "JUDGES", None)
    if judges:
        params = list(inspect.signature(judges[0][1]).parameters)
        if len(params) == 2:  # a check of the [linkage] table: the shared resolution
            signature = f"def {func}(wheel: Wheel, links: Links) -> list[Finding]:"
            reads = "wheel.libraries, links.resolved, links.loaded"
        else:
            signature = f"def {func}(wheel: Wheel) -> list[Finding]:"
            reads = "wheel.libraries, wheel.tags"
        register = f'    (("{code}",), {func}),   # in JUDGES, where its findings belong in a report'
    else:
        signature = f"def {func}(ctx: Context) -> list[Finding]:"
        reads = "ctx.wheel, ctx.ruleset"
        register = f'    Check(("{code}",), {func}),   # in FAMILY\'s checks, where its findings belong in a report'
    return f"""\
# 1. src/wheelaudit/model/codes.py, CODES, {'after ' + after if after else 'first'}:
        Code("{code}", "{name}", "{severity}",
             "{title}",
             fix="TODO: what to do about it, in one line"),

# 2. src/wheelaudit/model/codes.py, _EXPLAIN (why it matters; one concrete case):
    "{code}": ("TODO: why a finding of {code} matters to the people who install the wheel",
              "TODO: one concrete case"),

# 3. {path}: the check, named for what it checks; it reads facts and opens no file
{signature}
    \"\"\"{code}: {title}.\"\"\"
    out: list[Finding] = []
    # read {reads}; one Finding("{code}", message, subject=..., paths=[...], rule=...) per case
    return out

# 4. {path}: register it
{register}

# 5. then:
#    python scripts/gen_codes_doc.py          (docs/codes.md, generated from the code table)
#    a fixture wheel with the defect, built from source (fixtures/), and its golden report
#    (UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py, reviewed as a diff)
#    a line under "## [Unreleased]" in CHANGELOG.md
#    python -m pytest -q tests/test_registry.py tests/test_codes_registry.py
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("code", help="the new code, e.g. WA610")
    p.add_argument("family", help="the family module of checks/ it belongs to, e.g. abi")
    p.add_argument("title", help="the code's one-line summary")
    p.add_argument("--name", help="the code's short name (default: from the title), e.g. static-tls")
    p.add_argument("--severity", choices=("error", "warning"), default="error")
    args = p.parse_args(argv)
    name = args.name or _slug(args.title)
    try:
        text = stubs(args.code, args.family, args.title, name, args.severity)
    except ValueError as exc:
        print(f"new_check: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
