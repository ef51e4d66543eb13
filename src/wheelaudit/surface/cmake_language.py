"""The CMake language (cmake-language(7)) as tokens: command invocations with their bracket,
quoted and unquoted arguments, comments skipped; where each block (``if``, ``foreach``, ...)
opens, branches and closes; CMake lists."""

from __future__ import annotations

import re
from dataclasses import dataclass

from wheelaudit.surface.errors import SurfaceError

__all__ = ["Arg", "Command", "tokenize", "tokenize_prefix", "block_structure", "split_list", "OPENS", "CLOSES"]

#: block commands and what closes them; elseif/else are middles of if only
OPENS = {"if": "endif", "function": "endfunction", "macro": "endmacro", "while": "endwhile", "foreach": "endforeach"}
CLOSES = {v: k for k, v in OPENS.items()}


@dataclass(frozen=True)
class Arg:
    text: str
    quoted: bool  # quoted or bracket argument: one argument, never split on ';'
    bracket: bool = False  # bracket argument: no variable references


@dataclass(frozen=True)
class Command:
    name: str  # lower case
    args: tuple[Arg, ...]
    line: int


_ESCAPE = re.compile(r"\\(.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", ";": "\\;", "\n": ""}


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


#: one token of the CMake language at a time (cmake-language(7)); brackets are closed by hand
_TOKEN = re.compile(r"""
    (?P<sp>[ \t\r\n]+)
  | (?P<bc>\#\[(?P<bcf>=*)\[)
  | (?P<lc>\#[^\n]*)
  | (?P<q>"(?:\\.|[^"\\])*")
  | (?P<bo>\[(?P<bof>=*)\[)
  | (?P<lp>\()
  | (?P<rp>\))
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*(?=[ \t]*\())
  | (?P<uq>(?:\\.|[^ \t\r\n()\#"\\])+)
""", re.S | re.X)


def tokenize(text: str) -> list[Command]:
    """The command invocations of a CMake file. Raises :class:`SurfaceError` on malformed text."""
    out, error = tokenize_prefix(text)
    if error is not None:
        raise error
    return out


def tokenize_prefix(text: str) -> tuple[list[Command], SurfaceError | None]:
    """The command invocations of a CMake file up to its first syntax error, and that error (None
    when there is none): what can be read of a malformed file is still read."""
    try:
        return _tokenize(text, []), None
    except _Malformed as exc:
        return exc.commands, exc.error


class _Malformed(Exception):
    def __init__(self, error: SurfaceError, commands: list[Command]) -> None:
        self.error, self.commands = error, commands


def _tokenize(text: str, out: list[Command]) -> list[Command]:
    try:
        return _tokenize_raw(text, out)
    except SurfaceError as exc:
        raise _Malformed(exc, _with_lines(text, out)) from None


def _with_lines(text: str, out: list[Command]) -> list[Command]:
    """``out`` (offsets in ``line``) with line numbers, in one pass."""
    if not out:
        return out
    lines, last, count = [], 0, 1
    for c in out:
        count += text.count("\n", last, c.line)
        last = c.line
        lines.append(Command(c.name, c.args, count))
    return lines


def _tokenize_raw(text: str, out: list[Command]) -> list[Command]:
    n = len(text)
    pos = 0
    name: str | None = None  # the command whose arguments are being read
    depth = 0
    args: list[Arg] = []
    cmd_pos = 0
    match = _TOKEN.match

    def line_at(p: int) -> int:
        return text.count("\n", 0, p) + 1

    while pos < n:
        m = match(text, pos)
        if m is None:
            what = "a malformed argument" if name is not None else f"{text[pos:pos + 20]!r}"
            raise SurfaceError(f"line {line_at(pos)}: unexpected {what}")
        kind = m.lastgroup
        assert kind is not None  # (every alternative of _TOKEN is a named group)
        end = m.end()
        if kind == "sp" or kind == "lc":
            pos = end
            continue
        if kind in ("bc", "bo"):
            fill = m.group("bcf" if kind == "bc" else "bof")
            close = text.find("]" + fill + "]", end)
            if close < 0:
                raise SurfaceError(f"line {line_at(pos)}: unterminated bracket {'comment' if kind == 'bc' else 'argument'}")
            if kind == "bo":
                if name is None:
                    raise SurfaceError(f"line {line_at(pos)}: expected a command, found a bracket argument")
                body = text[end:close]
                if body.startswith("\r\n"):
                    body = body[2:]
                elif body.startswith("\n"):
                    body = body[1:]
                args.append(Arg(body, True, True))
            pos = close + len(fill) + 2
            continue
        if name is None:
            if kind != "id":
                raise SurfaceError(f"line {line_at(pos)}: expected a command, found {text[pos:pos + 20]!r}")
            name, cmd_pos = m.group("id").lower(), pos
            pos = text.index("(", end) + 1
            depth, args = 1, []
            continue
        if kind == "lp":
            depth += 1
            args.append(Arg("(", False))
        elif kind == "rp":
            depth -= 1
            if depth == 0:
                out.append(Command(name, tuple(args), cmd_pos))
                name = None
            else:
                args.append(Arg(")", False))
        elif kind == "q":
            body = m.group("q")[1:-1]
            args.append(Arg(_unescape(body) if "\\" in body else body, True))
        else:  # an unquoted argument (an identifier is one too, inside the parentheses)
            body = m.group(kind)
            args.append(Arg(_unescape(body) if "\\" in body else body, False))
        pos = end
    if name is not None:
        raise SurfaceError(f"line {line_at(cmd_pos)}: command {name}: unbalanced parentheses")
    return _with_lines(text, out)


def block_structure(commands: list[Command]) -> dict[int, tuple[list[int], int]]:
    """Opening command index -> (indices of its elseif/else, index of its closing command), in one
    pass. A block is closed by the next closing command of its own kind at its own depth, counted
    in that kind only (what CMake's parser does for well-formed files; the reader's answer for the
    others); an opener without its closer has no entry."""
    stacks: dict[str, list[int]] = {k: [] for k in OPENS}
    middles: dict[int, list[int]] = {}
    out: dict[int, tuple[list[int], int]] = {}
    for j, c in enumerate(commands):
        name = c.name
        if name in OPENS:
            stacks[name].append(j)
        elif name in CLOSES:
            stack = stacks[CLOSES[name]]
            if stack:
                opener = stack.pop()
                out[opener] = (middles.pop(opener, []), j)
        elif name in ("elseif", "else") and stacks["if"]:
            middles.setdefault(stacks["if"][-1], []).append(j)
    return out


def split_list(value: str) -> list[str]:
    """A CMake list: items split on unescaped ';', empty items dropped."""
    items = re.split(r"(?<!\\);", value)
    return [i.replace("\\;", ";") for i in items if i != ""]
