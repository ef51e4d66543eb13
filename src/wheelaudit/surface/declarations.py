"""The targets a hand-written package config declares, found by the ``[cmake]`` table's
``declares`` regex (a config that no interpreter could follow)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from wheelaudit.model.globs import Glob, linear_regex
from wheelaudit.surface.errors import SurfaceError
from wheelaudit.model.surface import Declaration

__all__ = ["read_declarations"]


def read_declarations(files: Iterable[str], read_text: Callable[[str], str | None], config: Iterable[str],
                      declares, namespace: str = "") -> list[Declaration]:
    """Targets a hand-written package config declares, found by the ``[cmake]`` table's
    ``declares`` regex (named groups ``name`` and ``library``) in each file that a ``config`` glob
    matches. A text is compiled by RE2 (:func:`~wheelaudit.model.globs.linear_regex`: linear
    matching); a compiled pattern is used as it is."""
    rx = linear_regex(declares) if isinstance(declares, str) else declares
    globs = [Glob(c) if isinstance(c, str) else c for c in config]
    out = []
    for f in sorted(files):
        if not any(g.match(f) for g in globs):
            continue
        text = read_text(f)
        if text is None:
            continue
        # comments are text the regex should not see (a commented-out declaration declares nothing)
        try:
            text = "\n".join(_strip_comment(line) for line in text.splitlines())
        except SurfaceError:
            continue
        for m in rx.finditer(text):
            groups = m.groupdict()
            name, library = groups.get("name"), groups.get("library")
            if name:
                out.append(Declaration(namespace + name, library or "", f))
    return out


def _strip_comment(line: str) -> str:
    """The line less a ``#`` line comment outside a quoted argument."""
    quoted = False
    for i, c in enumerate(line):
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif c == "#" and not quoted:
            return line[:i]
    return line
