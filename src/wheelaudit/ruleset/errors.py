"""The problems of a rules file: :class:`RulesError` (one, with its file, line and key) and
:class:`RulesErrors` (all of one file's, reported at once)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["RulesError", "RulesErrors", "raise_all"]


def _clip(text: str, limit: int = 200) -> str:
    """``text`` shortened to about ``limit`` characters, its start and its end kept (names and
    values in messages come from the file)."""
    if len(text) <= limit:
        return text
    half = (limit - 30) // 2
    return text[:half] + f" ... ({len(text)} characters) ... " + text[-half:]


class RulesError(Exception):
    """An unreadable or invalid rules file.

    ``source`` is the file (as given), ``line`` the 1-based line or ``None``, ``key`` the dotted
    key (``component[2].strong-only``; ``None`` for a problem with the whole file) and
    ``message`` what is wrong. ``str()`` gives all of it on one line::

        rules/x.toml:14: component[2] "backend_mlx": key "strong_only": unknown key (did you mean "strong-only"?)
    """

    def __init__(
        self,
        message: str,
        *,
        source: str = "<string>",
        line: int | None = None,
        key: str | None = None,
        context: str | None = None,
        leaf: str | None = None,
        column: int | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        self.key = key
        #: The table the key sits in, for display (``component[2] "backend_mlx"``).
        self.context = context
        #: The key relative to ``context``, for display (``strong-only``).
        self.leaf = leaf if leaf is not None else (key if context is None else None)
        super().__init__(str(self))

    def __str__(self) -> str:
        out = self.source
        if self.line is not None:
            out += f":{self.line}"
        out += ": "
        if self.context:
            out += f"{_clip(self.context)}: "
        if self.leaf:
            out += f'key "{_clip(self.leaf)}": '
        return out + _clip(self.message, 2000)

    def __reduce__(self):
        return (
            _rebuild_error,
            (self.message, self.source, self.line, self.key, self.context, self.leaf, self.column),
        )


class RulesErrors(RulesError):
    """Several problems of one rules file (or ``[tool.wheelaudit]`` table), all reported at once.
    ``problems`` are the single :class:`RulesError` s in file order; the attributes of the first
    are this error's own, and ``str()`` gives one line per problem."""

    def __init__(self, problems: Sequence[RulesError]) -> None:
        self.problems = sorted(problems, key=lambda e: (e.line is None, e.line or 0))
        first = self.problems[0]
        super().__init__(first.message, source=first.source, line=first.line, key=first.key,
                         context=first.context, leaf=first.leaf, column=first.column)

    def __str__(self) -> str:
        return "\n".join(RulesError.__str__(p) for p in getattr(self, "problems", ())) or super().__str__()

    def __reduce__(self):
        return (RulesErrors, (self.problems,))


def raise_all(problems: Sequence[RulesError]) -> None:
    """Raise ``problems`` (none: nothing), one as itself, several as :class:`RulesErrors`."""
    flat: list[RulesError] = []
    for p in problems:
        for one in (p.problems if isinstance(p, RulesErrors) else [p]):
            if all(str(one) != str(q) for q in flat):  # (a table parsed again names its unknown keys again)
                flat.append(one)
    if len(flat) == 1:
        raise flat[0]
    if flat:
        raise RulesErrors(flat)


def _rebuild_error(message, source, line, key, context, leaf, column) -> RulesError:
    return RulesError(
        message, source=source, line=line, key=key, context=context, leaf=leaf, column=column
    )
