"""The checkout itself: what a merge or an edit can leave behind unnoticed by the other tests."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_MARKER = re.compile(rb"^(<{7} |>{7} |={7}$)", re.M)
_TEXT = {".py", ".md", ".toml", ".txt", ".yaml", ".yml", ".json", ".cfg", ".sh", ".rc", ".c", ".cpp", ".h", ".cmake", ".pc"}


def test_no_merge_conflict_markers():
    # (a conflict left inside a docstring or a Markdown file runs and renders without an error)
    left = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in (".git", ".venv", "bench") or "__pycache__" in rel.parts or not path.is_file():
            continue
        if path.suffix in _TEXT and _MARKER.search(path.read_bytes()):
            left.append(str(rel))
    assert left == []
