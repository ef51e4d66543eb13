"""Nothing from a wheel is ever executed, imported or dlopen'ed; nothing is written.

Two independent checks (SECURITY.md explains the guarantee):

1. **Statically**, the source of ``src/wheelaudit`` (its AST) has no way to run anything: no
   ``subprocess``, ``os.system``/``popen``/``exec*``/``spawn*``, no ``ctypes``/``cffi``, no
   ``exec``/``eval``/``compile``, no import of a computed module name outside the package, no
   ``sys.path`` change, no ``zipfile`` extraction, no unpickling (but of the pool's own pipe), no
   file opened for writing (but the ``--output`` report), no writable mapping.
2. **At run time**, an audit hook (``fuzz/guard.py``) watches every command on the fixture wheels
   and on an unpacked wheel full of traps (an ``__init__.py``, a ``.pth`` file, a
   ``sitecustomize.py`` and an extension module that would leave a mark if they ever ran): no
   process but wheelaudit's own workers, no library loaded, no import or code object from the
   wheel, no file written anywhere (the report on stdout), no network.
"""

from __future__ import annotations

import ast
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "wheelaudit"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz.guard import Guard  # noqa: E402
from wheelaudit.cli.main import main  # noqa: E402

FORBIDDEN_MODULES = {
    "subprocess", "ctypes", "_ctypes", "cffi", "runpy", "code", "codeop", "pty", "webbrowser", "socket",
    "http.client", "urllib.request", "ftplib", "smtplib", "tarfile", "zipimport", "site", "imp", "pkgutil",
    "marshal", "importlib.util", "importlib.machinery", "importlib.abc", "distutils", "setuptools", "pip",
}


def _forbidden_module(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES)
FORBIDDEN_CALLS = {  # attribute calls: (object name, attribute)
    ("os", "system"), ("os", "popen"), ("os", "fork"), ("os", "forkpty"), ("os", "posix_spawn"),
    ("os", "posix_spawnp"), ("os", "startfile"), ("os", "chdir"), ("os", "chmod"), ("os", "symlink"),
    ("os", "remove"), ("os", "unlink"), ("os", "rename"), ("os", "replace"), ("os", "mkdir"),
    ("os", "makedirs"), ("shutil", "rmtree"), ("shutil", "copy"), ("shutil", "copyfile"), ("shutil", "move"),
    ("shutil", "unpack_archive"), ("tempfile", "mkstemp"), ("tempfile", "mkdtemp"),
    ("tempfile", "NamedTemporaryFile"), ("marshal", "loads"), ("pickle", "load"),
}
FORBIDDEN_BUILTINS = {"exec", "eval", "compile", "execfile", "breakpoint"}
FORBIDDEN_METHODS = {"extract", "extractall", "load_module", "exec_module", "dlopen"}
#: the only places allowed to do one of the above, with why
ALLOWED = {
    ("scanner/pool.py", "pickle.loads"): "the worker pool unpickles what its own worker pickled, from its own pipe",
    ("children.py", "os.fork"): "the one fork: the worker pool's workers and the guarded demangler's worker "
                                "(which run only wheelaudit's own reading and demangling code)",
    ("cli.py", "open-write"): "os.devnull, after a broken pipe",
    ("cli/common.py", "open-write"): "the report, to the --output file the user named",
}


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return "?"


def _relative_import(call: ast.Call) -> bool:
    """``importlib.import_module(".x" or f".{...}", __package__/__name__)`` or
    ``__import__(f"{__name__}.{...}", ...)``: a module of this package, by a name it built."""
    if not call.args:
        return False
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        head = first.value
    elif isinstance(first, ast.JoinedStr) and first.values:
        v0 = first.values[0]
        if isinstance(v0, ast.FormattedValue):
            ok = isinstance(v0.value, ast.Name) and v0.value.id in ("__name__", "__package__")
            nxt = first.values[1] if len(first.values) > 1 else None
            return ok and isinstance(nxt, ast.Constant) and str(nxt.value).startswith(".")
        head = str(v0.value) if isinstance(v0, ast.Constant) else ""
    else:
        return False
    if not head.startswith("."):
        return False
    pkg = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "package"), None)
    return isinstance(pkg, ast.Name) and pkg.id in ("__package__", "__name__")


def _write_mode(call: ast.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None:
        return False
    if not isinstance(mode, ast.Constant):
        return True  # a computed mode: flag it
    return any(ch in str(mode.value) for ch in "wax+")


def source_problems() -> list[str]:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Import):
                for a in node.names:
                    if _forbidden_module(a.name):
                        problems.append(f"{where}: import {a.name}")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mod = node.module
                if _forbidden_module(mod) or any(_forbidden_module(f"{mod}.{a.name}") for a in node.names):
                    problems.append(f"{where}: from {mod} import ...")
                if mod == "os" and any(a.name.startswith(("exec", "spawn", "system", "popen", "fork")) for a in node.names):
                    problems.append(f"{where}: from os import {', '.join(a.name for a in node.names)}")
            elif isinstance(node, ast.Call):
                fn = node.func
                name = _name(fn)
                if isinstance(fn, ast.Name) and fn.id in FORBIDDEN_BUILTINS:
                    problems.append(f"{where}: {fn.id}()")
                elif name in ("importlib.import_module", "__import__") and not _relative_import(node):
                    problems.append(f"{where}: {name}() of a name from outside the package")
                elif isinstance(fn, ast.Attribute):
                    base = _name(fn.value).split(".")[-1]
                    key = (base, fn.attr)
                    if (key in FORBIDDEN_CALLS or (base == "os" and fn.attr.startswith(("exec", "spawn")))) \
                            and (rel, f"{base}.{fn.attr}") not in ALLOWED:
                        problems.append(f"{where}: {base}.{fn.attr}()")
                    elif key == ("pickle", "loads") and (rel, "pickle.loads") not in ALLOWED:
                        problems.append(f"{where}: pickle.loads()")
                    elif fn.attr in FORBIDDEN_METHODS:
                        problems.append(f"{where}: .{fn.attr}()")
                    elif _name(fn.value) in ("sys.path",) and fn.attr in ("append", "insert", "extend"):
                        problems.append(f"{where}: sys.path.{fn.attr}()")
                    elif fn.attr == "mmap" and any(isinstance(k.value, ast.Attribute) and k.value.attr in
                                                   ("ACCESS_WRITE", "ACCESS_DEFAULT") for k in node.keywords):
                        problems.append(f"{where}: writable mmap")
                if name in ("open", "io.open", "builtins.open") and _write_mode(node) and (rel, "open-write") not in ALLOWED:
                    problems.append(f"{where}: open() for writing")
                if isinstance(fn, ast.Attribute) and fn.attr in ("write_text", "write_bytes", "touch", "mkdir",
                                                                 "unlink", "symlink_to", "hardlink_to", "chmod"):
                    problems.append(f"{where}: Path.{fn.attr}()")
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if _name(t) in ("sys.path", "sys.meta_path", "sys.path_hooks", "builtins.__import__"):
                        problems.append(f"{where}: assignment to {_name(t)}")
    return problems


def test_the_source_cannot_run_anything():
    problems = source_problems()
    assert problems == [], "\n".join(problems)


def test_the_source_check_is_not_vacuous(tmp_path, monkeypatch):
    """The checker finds each forbidden construct when it is there."""
    bad = tmp_path / "wheelaudit"
    bad.mkdir()
    (bad / "bad.py").write_text(
        "import subprocess\nimport ctypes\nimport importlib\nimport os, sys, zipfile, pickle\n"
        "os.system('x')\nos.execv('a', [])\neval('1')\nexec('1')\n"
        "importlib.import_module(name)\n__import__('os')\nzipfile.ZipFile('w').extractall('.')\n"
        "sys.path.insert(0, '.')\nopen('x', 'w')\npickle.loads(b'')\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "SRC", bad)
    found = "\n".join(source_problems())
    for what in ("import subprocess", "import ctypes", "os.system()", "os.execv()", "eval()", "exec()",
                 "importlib.import_module() of a name", "__import__() of a name", ".extractall()",
                 "sys.path.insert()", "open() for writing", "pickle.loads()"):
        assert what in found, what


# =============================================================================================
# at run time


TRAP = "open({marker!r}, 'w').write('executed')\n"


@pytest.fixture()
def trapped_tree(fixture_wheels, tmp_path) -> tuple[Path, Path]:
    """An unpacked wheel with code that leaves a marker file if anything ever runs it."""
    marker = tmp_path / "MARKER"
    tree = tmp_path / "unpacked"
    with zipfile.ZipFile(fixture_wheels["linux_clean"]) as zf:
        zf.extractall(tree)
    pkg = tree / "executorch"
    (pkg / "__init__.py").write_text(TRAP.format(marker=str(marker)))
    (tree / "evil.pth").write_text(f"import os; {TRAP.format(marker=str(marker))}")
    (tree / "sitecustomize.py").write_text(TRAP.format(marker=str(marker)))
    (tree / "conftest.py").write_text(TRAP.format(marker=str(marker)))
    return tree, marker


def _watched(argv: list[str], foreign: list[Path], capsys) -> tuple[int, Guard]:
    guard = Guard(allowed=[Path(tempfile.gettempdir())], foreign=foreign)
    with guard.watch():
        rc = main(argv)
    capsys.readouterr()
    return rc, guard


def test_a_full_check_runs_nothing_and_writes_nothing(fixture_wheels, tmp_path, capsys):
    from fuzz.mutate import tiny_wheel

    wheels = sorted(fixture_wheels.values())
    other = tmp_path / "other-1.0-py3-none-any.whl"
    other.write_bytes(tiny_wheel([("other/__init__.py", b"")], dist="other-1.0", tag="py3-none-any"))
    foreign = sorted({w.parent for w in wheels} | {tmp_path})
    rules = str(ROOT / "rules" / "executorch.toml")
    for argv in (["check", *map(str, wheels), "--rules", rules],
                 ["check", *map(str, wheels), "--format", "json"],
                 ["check", str(fixture_wheels["macos_clean"]), str(other), "--together"],
                 ["check", str(fixture_wheels["macos_clean"]), "--format", "sarif", "--jobs", "2"],
                 ["inspect", str(fixture_wheels["macos_universal2"]), "--symbols", "--format", "json"],
                 ["owners", str(fixture_wheels["macos_dup_delegate"]), "executorch::*"],
                 ["dups", str(fixture_wheels["macos_dup_delegate"])],
                 ["diff", str(fixture_wheels["linux_clean"]), str(fixture_wheels["linux_partial"])],
                 ["init", str(fixture_wheels["macos_clean"])]):
        rc, guard = _watched(argv, foreign, capsys)
        assert rc in (0, 1), argv
        assert guard.violations == [], (argv, guard.violations)
        assert guard.writes_inside == [], (argv, guard.writes_inside)  # no spool: no member over 64 MiB
        assert guard.events_seen > 0
        assert all(p == "fork" or "multiprocessing" in p for p in guard.processes), guard.processes


def test_an_unpacked_wheel_full_of_traps_is_only_read(trapped_tree, capsys):
    tree, marker = trapped_tree
    modules_before = set(sys.modules)
    for argv in (["check", str(tree), "--rules", str(ROOT / "rules" / "executorch.toml")],
                 ["inspect", str(tree), "--symbols"], ["dups", str(tree)], ["init", str(tree)]):
        rc, guard = _watched(argv, [tree], capsys)
        assert rc in (0, 1), argv
        assert guard.violations == [], (argv, guard.violations)
    assert not marker.exists()
    assert not any(m == "executorch" or m.startswith("executorch.") or m == "sitecustomize"
                   for m in set(sys.modules) - modules_before)
    assert not any(str(tree) in str(p) for p in sys.path)


def test_the_audit_hook_sees_what_it_must(trapped_tree, tmp_path):
    """Positive control: the same hook flags an import from the wheel, a program, a library and
    a write, when they happen."""
    tree, marker = trapped_tree
    guard = Guard(allowed=[tmp_path / "allowed"], foreign=[tree])
    sys.path.insert(0, str(tree))
    try:
        with guard.watch():
            import importlib

            try:
                importlib.import_module("sitecustomize_trap_absent")
            except ImportError:
                pass
            spec_path = tree / "executorch" / "__init__.py"
            compile(spec_path.read_text(), str(spec_path), "exec")
            import ctypes

            ctypes.CDLL(None)
            import subprocess

            subprocess.run(["true"], check=False)
            (tmp_path / "written.txt").write_text("x")
            shutil.copyfile(spec_path, tmp_path / "copied.py")
    finally:
        sys.path.remove(str(tree))
    events = {v.event for v in guard.violations}
    assert {"compile", "ctypes.dlopen", "subprocess.Popen", "open"} <= events, guard.violations
    assert any("written.txt" in v.detail for v in guard.violations)
    assert not marker.exists()
