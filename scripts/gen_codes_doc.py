#!/usr/bin/env python3
"""Regenerate docs/codes.md, the reference of the finding codes, from the one registry
(wheelaudit.model.codes). The README links to it and carries no copy of the table.
`--check` changes nothing and exits 1 when the page is out of date (the test suite runs it).

    python scripts/gen_codes_doc.py [--check]
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

from _regen_util import write_generated  # noqa: E402
from wheelaudit.model.codes import CODES, families  # noqa: E402


def codes_page() -> str:
    out = ["# Finding codes", "",
           "Generated from `src/wheelaudit/model/codes.py` by `python scripts/gen_codes_doc.py`; do not edit.",
           "",
           "Every code has a default severity; `severity = {WA502 = \"error\"}` in a rules file or in",
           "`[tool.wheelaudit]` changes it. `--select` / `--ignore` (and the same keys of the rules file,",
           "`[tool.wheelaudit]` and the pytest options) take whole codes or code families (`WA5`, `WA50`):",
           "anything else is a usage error (exit 2), so a typo never opens the gate. A waiver names one",
           "whole code. `wheelaudit explain CODE` says what a code means, why it matters, how to fix it",
           "and gives an example.", ""]
    for family, title in families().items():
        out += [f"## {family}xx — {title}", ""]
        out += ["| code | name | severity | meaning |", "|---|---|---|---|"]
        for c in CODES.values():
            if c.family == family:
                out.append(f'| <a id="{c.anchor}"></a>{c.code} | `{c.name}` | {c.severity} | {c.summary} |')
        out.append("")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    targets = {ROOT / "docs" / "codes.md": codes_page()}
    return write_generated(targets, "gen_codes_doc.py", check)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
