"""Renderers, side by side: each turns a Report (check) or scanned wheels (inspect) into text.

:func:`renderer` gives the function ``(report, stream, color) -> None`` of a ``--format`` name,
from the module of that name; adding a format is adding a module and its name to
:data:`FORMATS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from wheelaudit.model.report import Report

Renderer = Callable[["Report", TextIO, bool], None]


def renderer(name: str) -> Renderer:
    """The renderer of the ``--format`` ``name`` (its module, named after it, imported alone:
    the others' imports would come after the scan, with one core idle); KeyError for an
    unknown name."""
    if name not in FORMATS:
        raise KeyError(name)
    from importlib import import_module

    try:
        module = import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{name}":
            raise KeyError(name) from None
        raise
    return module.render_report


#: the ``--format`` names, known without importing the renderers (the command line is built
#: before a check's first worker starts: JSON, XML and the renderers' imports spared there)
FORMATS = ("text", "json", "sarif", "github", "junit", "html", "markdown")


def formats() -> list[str]:
    return list(FORMATS)
