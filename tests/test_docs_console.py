"""The console blocks of README.md and docs/*.md are real: each ``$ command`` runs on the fixture
wheels, in a folder laid out as the docs say (``good/``, ``fused/``, ``dup/``, ``tampered/`` and
every scenario of ``fixtures/make_wheels.py`` by its own name; ``rules/`` of this repository), and
what it prints (standard output and standard error, as a terminal shows them) must be what the
block shows.

Elision, as the docs write it: a line that is only ``…`` stands for any number of lines (none
too); a ``…`` inside a line stands for any text in that line; trailing spaces do not count.

A document sets up what its blocks need with HTML comments, read in order:

- ``<!-- file: PATH -->`` right before a fenced block writes the block to PATH in the folder
  (``<!-- file: PATH append -->`` appends it);
- ``<!-- file: PATH from DOC -->`` anywhere writes PATH as DOC's file marks leave it (``from DOC
  first``: as its first one does), before the document's blocks run;
- ``<!-- console: not run (REASON) -->`` right before a console block leaves it out, saying why.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent

#: the folders the docs name, for the scenarios fixtures/make_wheels.py builds
ALIASES = {"good": "macos_clean", "fused": "macos_fused", "dup": "macos_dup_delegate", "tampered": "linux_tampered"}

_FENCE = re.compile(r"(?P<marks>(?:<!--[^\n]*-->\n)*)```(?P<lang>[\w-]*)\n(?P<body>.*?)\n```", re.S)
_FILE = re.compile(r"<!-- file: (?P<path>\S+)(?P<append> append)? -->")
_FROM = re.compile(r"<!-- file: (?P<path>\S+) from (?P<doc>\S+?)(?P<first> first)? -->")
_SKIP = re.compile(r"<!-- console: not run \((?P<why>[^)]+)\) -->")


def blocks(doc: Path) -> list[tuple[int, str, str, str]]:
    """(line, language, body, marks) of each fenced block of ``doc``, in order."""
    text = doc.read_text(encoding="utf-8")
    return [(text[: m.start("lang")].count("\n") + 1, m["lang"], m["body"], m["marks"]) for m in _FENCE.finditer(text)]


def files(doc: Path, first: bool = False) -> dict[str, str]:
    """The files ``doc``'s file marks write, as they end (``first``: each as its first mark leaves it)."""
    out: dict[str, str] = {}
    for _, _, body, marks in blocks(doc):
        for mark in _FILE.finditer(marks):
            if first and mark["path"] in out:
                continue
            out[mark["path"]] = (out.get(mark["path"], "") if mark["append"] else "") + body + "\n"
    return out


def sessions(body: str) -> list[tuple[str, list[str]]]:
    """``$ command`` lines of a console block, each with the lines it shows."""
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in line.rstrip().split("…")) + r"\Z")


def matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` lines as ``expected`` shows them, with the elision rules of this module."""
    expected = [e.rstrip() for e in expected]
    actual = [a.rstrip() for a in actual]
    pats = [None if e.strip() == "…" else _pattern(e) for e in expected]
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[i, j]
        if i == len(pats):
            ok = j == len(actual)
        elif pats[i] is None:
            ok = go(i + 1, j) or (j < len(actual) and go(i, j + 1))
        else:
            ok = j < len(actual) and bool(pats[i].match(actual[j])) and go(i + 1, j + 1)
        memo[i, j] = ok
        return ok

    return go(0, 0)


def _cases() -> list:
    return [pytest.param(doc, id=str(doc.relative_to(ROOT))) for doc in DOCS
            if any(lang == "console" and not _SKIP.search(marks) for _, lang, _, marks in blocks(doc))]


@pytest.fixture(scope="module")
def wheels_root(fixture_wheels) -> Path:
    """The folder holding one folder per scenario (as ``make_wheels.py /tmp/docs-wheels`` makes)."""
    return next(iter(fixture_wheels.values())).parent.parent


def _workspace(tmp_path: Path, wheels_root: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    for scenario in wheels_root.iterdir():
        if scenario.is_dir() and not scenario.name.startswith("_"):
            (ws / scenario.name).symlink_to(scenario)
    for alias, scenario in ALIASES.items():
        (ws / alias).symlink_to(wheels_root / scenario)
    (ws / "dist").symlink_to(wheels_root / "macos_clean")
    shutil.copytree(ROOT / "rules", ws / "rules")
    return ws


def run_session(command: str, ws: Path, wheels_root: Path) -> list[str]:
    command = command.replace("(abridged)", "").replace("/tmp/docs-wheels", str(wheels_root))
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEELAUDIT_") and k not in
           ("CI", "NO_COLOR", "FORCE_COLOR", "GITHUB_ACTIONS")}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", COLUMNS="100", TERM="dumb")
    p = subprocess.run(["bash", "-c", command], cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=300)
    return p.stdout.splitlines()


@pytest.mark.parametrize("doc", _cases())
def test_console_blocks_show_what_the_tool_prints(doc: Path, tmp_path: Path, wheels_root: Path) -> None:
    ws = _workspace(tmp_path, wheels_root)
    for mark in _FROM.finditer(doc.read_text(encoding="utf-8")):
        text = files(ROOT / mark["doc"], first=bool(mark["first"]))[mark["path"]]
        (ws / mark["path"]).parent.mkdir(parents=True, exist_ok=True)
        (ws / mark["path"]).write_text(text, encoding="utf-8")
    ran = 0
    wrong: list[str] = []
    for line, lang, body, marks in blocks(doc):
        for mark in _FILE.finditer(marks):
            target = ws / mark["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "a" if mark["append"] else "w", encoding="utf-8") as fh:
                fh.write(body + "\n")
        if lang != "console" or _SKIP.search(marks):
            continue
        for command, expected in sessions(body):
            actual = run_session(command, ws, wheels_root)
            ran += 1
            if not matches(expected, actual):
                wrong.append(f"{doc.name}:{line}: $ {command}\n--- the block shows\n" + "\n".join(expected)
                             + "\n--- the tool prints\n" + "\n".join(actual))
    assert not wrong, "\n\n".join(wrong)
    assert ran


def test_elision_rules() -> None:
    assert matches(["a", "…", "d"], ["a", "b", "c", "d"]) and matches(["a", "…", "d"], ["a", "d"])
    assert matches(["x … y"], ["x 1 2 y"]) and not matches(["x … y"], ["x 1 2 z"])
    assert not matches(["a", "b"], ["a", "b", "c"]) and not matches(["a"], [])
    assert matches(["  …", "z"], ["q", "r", "z"])


def test_an_edited_block_fails(tmp_path: Path, wheels_root: Path) -> None:
    """The README's `inspect` block matches the tool; edited back to what it said before the
    providers were known (`→ unresolved`), it no longer does."""
    ws = _workspace(tmp_path, wheels_root)
    body = next(body for _, lang, body, _ in blocks(ROOT / "README.md") if lang == "console")
    ((command, expected),) = sessions(body)[:1]
    actual = run_session(command, ws, wheels_root)
    assert matches(expected, actual)
    stale = [re.sub(r"→ provided by torch.*", "→ unresolved", line) for line in expected]
    assert stale != expected and not matches(stale, actual)
