#!/usr/bin/env python3
"""Regenerate the code tables from the one registry (wheelaudit.model.codes).

Writes docs/codes.md and the table between the `<!-- codes:start -->` / `<!-- codes:end -->`
markers of README.md. `--check` changes nothing and exits 1 when either is out of date (the test
suite runs it).

    python scripts/gen_codes_doc.py [--check]
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from wheelaudit.model.codes import CODES, families, markdown_table  # noqa: E402

START, END = "<!-- codes:start -->", "<!-- codes:end -->"


def codes_page() -> str:
    out = ["# Finding codes", "",
           "Generated from `src/wheelaudit/model/codes.py` by `python scripts/gen_codes_doc.py`; do not edit.",
           "",
           "Every code has a default severity; `severity = {WA502 = \"error\"}` in a rules file or in",
           "`[tool.wheelaudit]` changes it. `--select` / `--ignore` (and the same keys of the rules file,",
           "`[tool.wheelaudit]` and the pytest options) take whole codes or code families (`WA5`, `WA50`):",
           "anything else is a usage error (exit 2), so a typo never opens the gate. A waiver names one",
           "whole code.", ""]
    for family, title in families().items():
        out += [f"## {family}xx — {title}", ""]
        out += ["| code | name | severity | meaning |", "|---|---|---|---|"]
        for c in CODES.values():
            if c.family == family:
                out.append(f'| <a id="{c.anchor}"></a>{c.code} | `{c.name}` | {c.severity} | {c.summary} |')
        out.append("")
    return "\n".join(out)


def readme_with_table(text: str) -> str:
    if START not in text or END not in text:
        raise SystemExit(f"README.md has no {START} ... {END} markers")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{markdown_table()}{END}{tail}"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    targets = {ROOT / "docs" / "codes.md": codes_page(),
               ROOT / "README.md": readme_with_table((ROOT / "README.md").read_text(encoding="utf-8"))}
    stale = [p for p, text in targets.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if check:
        for p in stale:
            print(f"{p.relative_to(ROOT)} is out of date: run python scripts/gen_codes_doc.py", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_text(targets[p], encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
