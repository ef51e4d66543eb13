"""The JSON Schemas wheelaudit ships: of its reports (``check``, ``inspect``: SPEC §5) and of
the rules format (``rules``: a rules file, ``config``: the ``[tool.wheelaudit]`` table of a
pyproject.toml). The latter two are generated from the one declaration of the format
(:mod:`wheelaudit.ruleset.format`) by ``scripts/gen_schemas.py``; ``wheelaudit schema NAME``
prints any of them."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["NAMES", "schema_text", "schema", "rules_schema", "config_schema"]

#: the schemas shipped, by the name ``wheelaudit schema`` takes
NAMES = ("rules", "config", "check", "inspect")


def schema_text(name: str) -> str:
    """The text of the schema ``name`` (one of :data:`NAMES`), as shipped."""
    if name not in NAMES:
        raise ValueError(f"no schema named {name!r} (one of {', '.join(NAMES)})")
    return resources.files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")


def schema(name: str) -> dict[str, Any]:
    """The schema ``name`` (one of :data:`NAMES`) as a dict."""
    return json.loads(schema_text(name))


def rules_schema() -> dict[str, Any]:
    """The schema of a rules file (JSON Schema Draft 7)."""
    return schema("rules")


def config_schema(tool_name: str = "wheelaudit") -> dict[str, Any]:
    """The schema of ``[tool.wheelaudit]`` (JSON Schema Draft 7): validate-pyproject's
    ``validate_pyproject.tool_schema`` entry point, which passes the tool's name."""
    return schema("config")
