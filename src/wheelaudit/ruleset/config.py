"""Finding the rules of a project: ``[tool.wheelaudit]`` in the nearest ``pyproject.toml``.

Two forms are accepted::

    [tool.wheelaudit]
    rules = "rules/executorch.toml"   # relative to the pyproject's directory
    fail-on = "warning"               # optional: select / ignore / fail-on override the file's

or the ruleset itself, inline (``version`` optional there, default 1)::

    [tool.wheelaudit]
    name = "executorch"
    [[tool.wheelaudit.component]]
    name = "backend_mlx"
    ...
"""

from __future__ import annotations

from pathlib import Path

from wheelaudit.ruleset.format import CONFIG_BESIDE_RULES
from wheelaudit.ruleset.errors import RulesError
from wheelaudit.ruleset.load import load_rules, read_toml_file, ruleset_from_dict
from wheelaudit.ruleset.model import Ruleset
from wheelaudit.ruleset.tables import parse_fail_on, parse_severity
from wheelaudit.ruleset.validate import Context, describe

__all__ = ["find_rules", "find_pyproject", "rules_from_pyproject", "RulesError"]

_TABLE = "tool.wheelaudit"
#: the keys that may sit beside ``rules = "..."`` (declared in ruleset/format.py)
_OVERRIDES = tuple(k.name for k in CONFIG_BESIDE_RULES if k.name != "rules")


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` in ``start`` (a directory; for a file, its directory)
    or one of its parents. The walk stops after a directory that holds ``.git`` or ``.hg``
    (the repository root), so a stray ``pyproject.toml`` above the project is never used."""
    here = Path(start).absolute()
    if not here.is_dir():
        here = here.parent
    for d in (here, *here.parents):
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            return candidate
        if (d / ".git").exists() or (d / ".hg").exists():
            return None
    return None


def rules_from_pyproject(pyproject: Path) -> Ruleset | None:
    """The ruleset ``pyproject`` configures, or ``None`` when it has no ``[tool.wheelaudit]``."""
    source = str(pyproject)
    text, data = read_toml_file(pyproject)
    tool = data.get("tool")
    if not isinstance(tool, dict) or "wheelaudit" not in tool:
        return None
    table = tool["wheelaudit"]
    ctx = Context(table if isinstance(table, dict) else {}, source, text, ("tool", "wheelaudit"))
    if not isinstance(table, dict):
        raise ctx.error((), f"expected a table ([tool.wheelaudit]), got {describe(table)}")

    if "rules" not in table:
        return ruleset_from_dict(
            table, source, text, table=_TABLE, require_version=False, path=pyproject
        )

    # every problem of the table and of the rules file it names, in one run
    for key in table:
        if key != "rules" and key not in _OVERRIDES:
            ctx.problems.append(ctx.error(
                (key,),
                'only "select", "ignore", "fail-on" and "severity" may sit beside "rules"; '
                "put the rules themselves in the rules file",
            ))
    select = ctx.attempt(lambda: ctx.codes(table["select"], ("select",))) if "select" in table else None
    ignore = ctx.attempt(lambda: ctx.codes(table["ignore"], ("ignore",))) if "ignore" in table else None
    fail_on = ctx.attempt(lambda: parse_fail_on(ctx, table["fail-on"], ("fail-on",))) if "fail-on" in table else None
    severity = ctx.attempt(lambda: parse_severity(ctx, table["severity"], ("severity",))) if "severity" in table else None
    rules = ctx.attempt(lambda: _referenced_rules(ctx, pyproject, table["rules"]))
    ctx.finish()
    assert rules is not None
    if select is not None:
        rules.select = select
    if ignore is not None:
        rules.ignore = ignore
    if fail_on is not None:
        rules.fail_on = fail_on
    if severity:
        rules.severity = {**rules.severity, **severity}
    return rules


def _referenced_rules(ctx: Context, pyproject: Path, ref: object) -> Ruleset:
    """The rules file that ``rules = "..."`` names, loaded."""
    if not isinstance(ref, str) or not ref.strip():
        raise ctx.error(("rules",), "expected the path of a rules file (a string)")
    rules_path = Path(ref).expanduser()
    if not rules_path.is_absolute():
        rules_path = pyproject.parent / rules_path
    if not rules_path.exists():  # (a shipped ruleset by name: rules = "executorch")
        from wheelaudit.ruleset import shipped

        rules_path = shipped.find(ref) or rules_path
    if not rules_path.is_file():
        what = "is not a file" if rules_path.exists() else "does not exist"
        raise ctx.error(("rules",), f'the rules file "{rules_path}" {what}')
    return load_rules(rules_path)


def find_rules(start: Path) -> tuple[Ruleset | None, Path | None]:
    """The project's rules, found from ``start`` (a directory).

    Returns ``(ruleset, where)``: ``where`` is the rules file that ``rules = "..."`` names,
    or the ``pyproject.toml`` itself for inline rules. ``(None, None)`` when there is no
    ``pyproject.toml`` or it has no ``[tool.wheelaudit]`` table. Problems are
    :class:`~wheelaudit.ruleset.errors.RulesError` naming the pyproject (or the rules file).
    """
    pyproject = find_pyproject(start)
    if pyproject is None:
        return None, None
    rules = rules_from_pyproject(pyproject)
    if rules is None:
        return None, None
    return rules, rules.path if rules.path is not None else pyproject

