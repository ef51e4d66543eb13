"""The rulesets that ship inside the package (``wheelaudit/rulesets/*.toml``, the files of the
repository's ``rules/``), named on the command line by their stem: ``--rules executorch``.

A value that names an existing file is always that file; only a bare name (no folder, no
suffix) that is not a file is looked up here, so a project's own ``executorch`` file wins."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def names() -> list[str]:
    """The shipped rulesets' names, sorted."""
    folder = resources.files("wheelaudit") / "rulesets"
    if not folder.is_dir():
        return []
    return sorted(entry.name[: -len(".toml")] for entry in folder.iterdir() if entry.name.endswith(".toml"))


def find(value: str) -> Path | None:
    """The shipped ruleset ``value`` names (``executorch``), or None when ``value`` is a path (it
    names an existing file, or has a folder or a suffix) or names no shipped ruleset."""
    if Path(value).exists() or Path(value).name != value or Path(value).suffix:
        return None
    if value not in names():
        return None
    entry = resources.files("wheelaudit") / "rulesets" / f"{value}.toml"
    return Path(str(entry))  # (the package is installed as files: setuptools, no zip import)
