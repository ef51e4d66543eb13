"""The registry of checks (src/wheelaudit/checks/registry.py) and the code table
(src/wheelaudit/model/codes.py) agree: every code is owned by exactly one family, no family
declares an unknown code, each check raises only the codes it declares, and no finding is made
outside checks/. Also the scaffold of a new check (scripts/new_check.py), run as a contributor
runs it."""
from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from wheelaudit import load_rules, scan
from wheelaudit.checks.context import Context
from wheelaudit.checks.registry import FAMILIES, WHEEL_FAMILIES, family_of
from wheelaudit.model.codes import CODES
from wheelaudit.scanner.together import merge_wheels

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "wheelaudit"
RULES = ROOT / "rules" / "executorch.toml"


def test_every_code_is_owned_by_exactly_one_family():
    owners = Counter(code for family in FAMILIES for code in family.codes)
    assert sorted(set(owners) - set(CODES)) == [], "a family declares a code the code table does not have"
    assert sorted(set(CODES) - set(owners)) == [], "a code of the table is owned by no family"
    assert sorted(code for code, n in owners.items() if n > 1) == [], "a code is owned by more than one family"
    assert family_of("WA506").name == "symbols" and family_of("WA004").name == "waivers"
    with pytest.raises(KeyError):
        family_of("WA999")


def test_a_family_owns_the_codes_its_checks_declare_and_lives_in_its_module():
    import importlib

    for family in FAMILIES:
        declared = {code for check in family.checks for code in check.codes}
        assert declared <= set(CODES), family.name
        if family.owns and family.checks:
            assert set(family.codes) == declared, family.name
        elif not family.owns:  # (it orders checks of codes other families own)
            assert family.codes == () and declared and all(family_of(c) is not family for c in declared)
        assert family.checks or family.run_by, f"{family.name}: no checks and no word on who runs it"
        module = importlib.import_module(f"wheelaudit.checks.{family.name}")
        assert module.FAMILY is family, f"{family.name} is not declared by checks/{family.name}"
    names = [c.name for f in FAMILIES for c in f.checks]
    assert not [n for n in names if n.startswith(("_wa", "wa"))], "a check is named for its code, not what it checks"


@pytest.fixture(scope="module")
def scanned(fixture_wheels):
    return [scan(path) for _name, path in sorted(fixture_wheels.items())]


def test_each_check_raises_only_the_codes_it_declares(scanned):
    """Every check of the registry over every fixture wheel, and over trees of wheels installed
    together, with the ExecuTorch rules and with none: a finding whose code its check does not
    declare is a registry that lies."""
    rules = load_rules(RULES)
    linux = [w for w in scanned if "manylinux" in w.path.name]
    macos = [w for w in scanned if "macosx" in w.path.name]
    # each Linux scenario with a macOS wheel renamed to another distribution (one install holds
    # one version of a distribution): the members' own findings and WA503 for the pair
    trees = [merge_wheels([w, dataclasses.replace(macos[0], name="other-dist")]) for w in linux]
    raised: set[str] = set()
    for ruleset in (rules, None):
        for wheel in [*scanned, *trees]:
            ctx = Context(wheel, ruleset)
            for family in WHEEL_FAMILIES:
                for check in family.checks:
                    codes = {f.code for f in check.run(ctx)}
                    assert codes <= set(check.codes), f"{family.name}.{check.name} raised {sorted(codes)} on {wheel.path.name}"
                    raised |= codes
    assert len(raised) > 10 and "WA503" in raised  # (real findings were judged, the trees' too)


def _finding_calls(path: Path) -> list[int]:
    """Lines of ``path`` that make a finding with a literal code: ``Finding("WA…", ...)``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Finding":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("WA"):
                out.append(node.lineno)
    return out


def test_no_finding_is_made_outside_checks():
    outside = {str(p.relative_to(PACKAGE)): lines for p in sorted(PACKAGE.rglob("*.py"))
               if p.relative_to(PACKAGE).parts[0] != "checks" and (lines := _finding_calls(p))}
    assert outside == {}, "findings are raised by the families of checks/ only (the reading stages record Defects)"
    inside = [p for p in (PACKAGE / "checks").rglob("*.py") if _finding_calls(p)]
    assert len(inside) >= 8  # (the scan sees the calls it looks for)


def _new_check(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "new_check.py"), *args],
                          capture_output=True, text=True, timeout=120)


def test_the_scaffold_prints_every_stub_of_a_new_check():
    p = _new_check("WA610", "abi", "an ELF library needs static TLS", "--name", "static-tls")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert 'Code("WA610", "static-tls", "error",' in out and "CODES, after WA609" in out
    assert '"WA610": (' in out  # the explanation
    assert "def static_tls(wheel: Wheel) -> list[Finding]:" in out and "src/wheelaudit/checks/abi.py" in out
    assert '(("WA610",), static_tls),' in out
    assert "scripts/gen_codes_doc.py" in out and "CHANGELOG.md" in out and "test_golden.py" in out
    # a rules check reads the context; a [linkage] one the shared resolution
    assert "def metadata_extra(ctx: Context) -> list[Finding]:" in _new_check(
        "WA405", "rules", "metadata extra", "--name", "metadata-extra").stdout
    assert "links: Links" in _new_check("WA508", "linkage", "a linkage thing").stdout


@pytest.mark.parametrize("args, why", [
    (("WA501", "linkage", "x"), "WA501 is taken"),
    (("WA5", "linkage", "x"), "is not a code"),
    (("WA610", "release", "x"), "runs no checks of its own"),
    (("WA610", "nonesuch", "x"), "is no family"),
])
def test_the_scaffold_refuses_what_cannot_be_added(args, why):
    p = _new_check(*args)
    assert p.returncode == 2 and why in p.stderr and p.stdout == ""
