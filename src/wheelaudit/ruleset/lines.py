"""Where in the TOML text a table or key is written: :mod:`tomllib` reports no positions, so the
line of a table or key is recovered by locating its header or ``key =`` line in the text."""

from __future__ import annotations

import re

__all__ = ["Locator", "KeyPath", "PathPart"]

_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_DOTTED = rf"{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART})*"
_KEY_RE = re.compile(rf"[ \t]*({_DOTTED})[ \t]*=")
_HEADER_RE = re.compile(rf"[ \t]*(\[\[?)[ \t]*({_DOTTED})[ \t]*(\]\]?)[ \t]*(?:#.*)?$")
_PART_RE = re.compile(_KEY_PART)
# What matters for finding lines: newlines, comments, strings (multi-line ones first) and brackets.
# Every alternative starts with a distinct character or literal, so matching is linear.
_TOKEN_RE = re.compile(
    r"\n"
    r"|#[^\n]*"
    r'|"""(?:[^"\\]|\\[\s\S]|""?(?!"))*"""(?:""?)?'
    r"|'''[\s\S]*?'''(?:''?)?"
    r'|"(?:[^"\\\n]|\\.)*"?'
    r"|'[^'\n]*'?"
    r"|[\[\]{}]"
)

PathPart = str | int  # a key, or a 0-based index into an array of tables
KeyPath = tuple[PathPart, ...]


def _split_key(dotted: str) -> tuple[str, ...]:
    parts = []
    for m in _PART_RE.finditer(dotted):
        p = m.group(0)
        if p[0] in "\"'":
            p = p[1:-1]
        parts.append(p)
    return tuple(parts)


class Locator:
    """Finds the line of a table or key path in TOML text."""

    def __init__(self, text: str) -> None:
        self.lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
        structural = self._structural_lines(text)
        # blocks: (header line, resolved path); block 0 is the root table. A resolved path holds
        # 0-based indices after arrays of tables: [component.when] after the second
        # [[component]] is ("component", 1, "when").
        self.blocks: list[tuple[int, KeyPath]] = [(1, ())]
        self.block_keys: list[list[tuple[int, tuple[str, ...]]]] = [[]]
        counts: dict[tuple[str, ...], int] = {}
        self.block_of: dict[KeyPath, int] = {(): 0}  # resolved table path -> block
        self.first_under: dict[KeyPath, int] = {}  # path -> first header line at or under it
        for lineno in structural:
            line = self.lines[lineno - 1]
            m = _HEADER_RE.match(line)
            if m and (m.group(1) == "[[") == (m.group(3) == "]]"):
                parts = _split_key(m.group(2))
                is_array = m.group(1) == "[["
                resolved: list[PathPart] = []
                for i in range(len(parts)):
                    resolved.append(parts[i])
                    prefix = parts[: i + 1]
                    last = i == len(parts) - 1
                    if last and is_array:
                        counts[prefix] = counts.get(prefix, 0) + 1
                        resolved.append(counts[prefix] - 1)
                    elif prefix in counts:
                        resolved.append(counts[prefix] - 1)
                bpath = tuple(resolved)
                self.block_of.setdefault(bpath, len(self.blocks))
                for k in range(1, len(bpath) + 1):
                    self.first_under.setdefault(bpath[:k], lineno)
                self.blocks.append((lineno, bpath))
                self.block_keys.append([])
                continue
            key = _KEY_RE.match(line)
            if key:
                self.block_keys[-1].append((lineno, _split_key(key.group(1))))

    @staticmethod
    def _structural_lines(text: str) -> list[int]:
        """Line numbers (1-based) that start outside any string and any bracket."""
        out: list[int] = []
        n = len(text)
        line = 1
        depth = 0
        pos = 0
        line_start = True
        search = _TOKEN_RE.search
        while True:
            if line_start:
                line_start = False
                if depth == 0 and pos < n:
                    out.append(line)
                    eol = text.find("\n", pos)
                    eol = n if eol < 0 else eol
                    if eol > pos and text[eol - 1] == "\r":
                        eol -= 1
                    if _HEADER_RE.match(text, pos, eol):
                        pos = eol  # a header's brackets are not value brackets
            m = search(text, pos)
            if m is None:
                break
            tok = m.group(0)
            pos = m.end()
            c = tok[0]
            if c == "\n":
                line += 1
                line_start = True
            elif c in "[{":
                depth += 1
            elif c in "]}":
                depth = max(0, depth - 1)
            elif c in "\"'":
                line += tok.count("\n")  # multi-line strings
            # comments need nothing
        return out

    def locate(self, path: KeyPath) -> int | None:
        """The line of ``path``: its header, its ``key =`` line, or the nearest enclosing one."""
        path = tuple(path)
        best_block = best_len = 0
        for j in range(len(path), -1, -1):
            if path[:j] in self.block_of:
                best_block, best_len = self.block_of[path[:j]], j
                break
        line, _ = self.blocks[best_block]
        rest = list(path[best_len:])
        if not rest:
            return line if best_block else None
        # a key of this block: longest dotted-key match
        found: int | None = None
        used = 0
        str_rest: list[str] = []
        for p in rest:
            if isinstance(p, int):
                break
            str_rest.append(p)
        for kline, kparts in self.block_keys[best_block]:
            m = len(kparts)
            if m <= len(str_rest) and tuple(str_rest[:m]) == kparts and m > used:
                found, used = kline, m
        if found is None:
            # a key given only as headers ([[components]], [libraries.when])
            under = self.first_under.get(path)
            if under is not None:
                return under
            return line if best_block else None
        # deeper keys inside an inline table: search forward, within this block
        end = (
            self.blocks[best_block + 1][0] - 1
            if best_block + 1 < len(self.blocks)
            else len(self.lines)
        )
        col = 0
        for p in rest[used:]:
            if isinstance(p, int):
                break
            pat = re.compile(
                rf"(?:^|[\s{{,.]){re.escape(p)}[ \t]*[=.]|[\"']{re.escape(p)}[\"'][ \t]*[=.]"
            )
            hit = None
            for ln in range(found, end + 1):
                text = self.lines[ln - 1]
                km = pat.search(text, col if ln == found else 0)
                if km:
                    hit = (ln, km.end())
                    break
            if hit is None:
                break
            found, col = hit
        return found
