"""The words of messages, in one place: a few examples of many names, the "(+N more)" suffix,
plurals, shortened text and sizes.

Plain functions on plain values: no I/O, nothing of wheelaudit above ``model/``. A finding's
message, a renderer's line and a command's table all draw their wording from here, so that the same
thing reads the same way everywhere. (Text from a wheel is escaped by the renderers before it is
shortened: these functions count characters, they do not make them visible.)"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["examples", "human_size", "more", "plural", "shorten", "shorten_middle"]

ELLIPSIS = "\u2026"
_DECIMAL = (("GB", 10**9), ("MB", 10**6), ("KB", 10**3))
_BINARY = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def more(n: int, what: str = "", *, note: str = "") -> str:
    """`` (+N more)`` (`` (+N more paths)`` with ``what``, `` (+N more paths; how to see them)``
    with ``note``) when ``n`` is positive, else ``""``: the suffix of a list that shows only some
    of its items."""
    if n <= 0:
        return ""
    return f" (+{n} more{' ' + what if what else ''}{'; ' + note if note else ''})"


def examples(names: Iterable[str], limit: int = 3, *, sort: bool = True, sep: str = ", ", gap: str = "") -> str:
    """The first ``limit`` of ``names`` (sorted unless ``sort`` is false) joined by ``sep``, and
    how many were left out: ``a, b, c (+12 more)``. ``gap`` goes between the names and the suffix
    when some were left out (``", …"`` reads ``a, b, … (+12 more)``)."""
    items = sorted(names) if sort else list(names)
    left = len(items) - limit
    return sep.join(items[:limit]) + (gap + more(left) if left > 0 else "")


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 symbol``, ``0 symbols``, ``3 native libraries`` (``words`` for an irregular plural)."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, its end replaced by "…" where it is longer (a width
    of 1 or less leaves it whole)."""
    if width <= 1 or len(text) <= width:
        return text
    return text[: width - 1] + ELLIPSIS


def shorten_middle(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters (at least one), its middle replaced by "…"
    where it is longer: ``lib…name.so`` keeps the start and the end of a file name."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (width - 1 - head):]


def human_size(n: int, binary: bool = False, *, trim: bool = True) -> str:
    """``n`` bytes in the largest unit it reaches (up to GB or GiB) with one decimal: ``212.4 MB``;
    ``binary`` counts in KiB, MiB, GiB. With ``trim`` a zero decimal is dropped (``1 GiB``, a budget
    as written), without it every size above a kilobyte keeps its decimal (``1.0 GiB``, a column)."""
    for unit, size in (_BINARY if binary else _DECIMAL):
        if n >= size:
            text = f"{n / size:.1f}"
            return f"{text.removesuffix('.0') if trim else text} {unit}"
    return f"{n} B"
