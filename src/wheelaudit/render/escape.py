"""What comes from a wheel, made safe to show: the one escaping helper of the line-oriented
outputs (text, GitHub annotations, JUnit, Markdown, SARIF messages).

Member names, dependency names, rpaths, symbols and every message built from them come from the
wheel, and a wheel can put anything in them: a line break followed by ``::error …`` is a
workflow command to GitHub Actions, a terminal escape repaints or hides the log, a
right-to-left override makes ``os.so`` read as another name. :func:`visible` writes every such
character as an escape (``\\n``, ``\\x1b``, ``\\u202e``), so what comes from a wheel is always
one line of visible characters; :func:`safe` applies it to every field of a finding. Each
renderer applies it in one place (where a finding, or a name, enters its output); the
renderers' own line breaks and colours are theirs and untouched. JSON keeps the names exact
(its encoder escapes control characters); HTML has its own ``esc`` for markup.
"""

from __future__ import annotations

import dataclasses
import re

from wheelaudit.model.finding import Finding

#: C0 and C1 controls, DEL, line and paragraph separators, bidirectional controls
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def visible(text: str, keep_breaks: bool = False) -> str:
    """``text`` with every control, separator and direction-changing character escaped; with
    ``keep_breaks``, CR and LF are left for the caller's own escaping (GitHub's ``%0A``)."""
    if not _UNSAFE.search(text):
        return text
    if keep_breaks:
        return _UNSAFE.sub(lambda m: m.group() if m.group() in "\r\n" else _escape(m), text)
    return _UNSAFE.sub(_escape, text)


def safe(f: Finding, keep_breaks: bool = False) -> Finding:
    """A copy of ``f`` whose every text field is :func:`visible`."""
    def v(text: str) -> str:
        return visible(text, keep_breaks)

    return dataclasses.replace(
        f, message=v(f.message), subject=v(f.subject), paths=[v(p) for p in f.paths],
        symbols=[v(s) for s in f.symbols], hint=v(f.hint), waived_by=None if f.waived_by is None else v(f.waived_by))
