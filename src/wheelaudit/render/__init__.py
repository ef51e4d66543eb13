"""Renderers, side by side: each turns a Report (check) or scanned wheels (inspect) into text.

``RENDERERS`` maps a ``--format`` name to a function ``(report, stream, color) -> None``;
adding a format (SARIF, GitHub, JUnit) is adding a module and a line here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ..report import Report

Renderer = Callable[["Report", TextIO, bool], None]


def _load() -> dict[str, Renderer]:
    from . import json as json_, text

    table: dict[str, Renderer] = {"text": text.render_report, "json": json_.render_report}
    for name, module in (("sarif", "sarif"), ("github", "github"), ("junit", "junit")):
        try:
            mod = __import__(f"{__name__}.{module}", fromlist=["render_report"])
        except ModuleNotFoundError:
            continue
        table[name] = mod.render_report
    return table


def renderer(name: str) -> Renderer:
    table = _load()
    if name not in table:
        raise KeyError(name)
    return table[name]


#: the ``--format`` names, known without importing the renderers (the command line is built
#: before a check's first worker starts: JSON, XML and five modules spared there, 12 ms)
FORMATS = ("text", "json", "sarif", "github", "junit")


def formats() -> list[str]:
    return list(FORMATS)
