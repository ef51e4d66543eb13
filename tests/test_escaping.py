"""What comes from a wheel never writes into a CI log: a dependency name with a line break, a
GitHub workflow command and a terminal escape is shown escaped in every line-oriented output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz.mutate import tiny_wheel  # noqa: E402
from wheelaudit.cli.main import main  # noqa: E402

TAG = "cp311-cp311-manylinux_2_28_x86_64"
EVIL = "libx.so\n::error title=pwned::owned\x1b[2J\u202e"


@pytest.fixture(scope="module")
def evil_wheel(tmp_path_factory) -> Path:
    """An extension module built by gcc whose DT_NEEDED names a library called EVIL (not in the
    wheel: WA501 names it, an error since the module is imported by name)."""
    d = tmp_path_factory.mktemp("evil")
    (d / "dep.c").write_text("int dep(void) { return 1; }\n")
    (d / "main.c").write_text("int dep(void);\nint entry(void) { return dep(); }\n"
                              "void *PyInit_mod(void) { return (void *)0; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,-soname,{EVIL}", "-o", str(d / "libdep.so"), str(d / "dep.c")],
                   check=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(d / "libmain.so"), str(d / "main.c"), str(d / "libdep.so")],
                   check=True)
    wheel = d / f"fuzz-1.0-{TAG}.whl"
    wheel.write_bytes(tiny_wheel([("pkg/mod.cpython-311-x86_64-linux-gnu.so", (d / "libmain.so").read_bytes())], tag=TAG))
    return wheel


@pytest.mark.parametrize("fmt", ["text", "github", "junit", "markdown", "sarif", "html"])
def test_a_wheel_cannot_write_into_the_ci_log(evil_wheel, capsys, fmt):
    rc = main(["check", str(evil_wheel), "--format", fmt, "--select", "WA501"])
    out, _err = capsys.readouterr()
    assert rc == 1
    assert "owned" in out  # (the finding is there, its name shown)
    for line in out.splitlines():
        assert not line.lstrip().startswith("::error title=pwned"), line
    assert "\x1b" not in out and "\u202e" not in out
    if fmt == "text":
        assert "libx.so\\n::error title=pwned::owned\\x1b[2J\\u202e" in out
    if fmt == "github":
        assert "libx.so%0A%3A%3Aerror title=pwned%3A%3Aowned\\x1b[2J\\u202e" in out or \
               "libx.so%0A::error title=pwned::owned\\x1b[2J\\u202e" in out, out


def test_inspect_shows_the_name_escaped(evil_wheel, capsys):
    assert main(["inspect", str(evil_wheel)]) == 0
    out, _ = capsys.readouterr()
    assert "dep libx.so\\n::error title=pwned::owned\\x1b[2J\\u202e" in out
    assert "\x1b" not in out and not any(ln.startswith("::") for ln in out.splitlines())


@pytest.mark.parametrize("cmd", [["owners", "entry"], ["dups"], ["diff"]])
def test_the_other_commands_show_names_escaped(evil_wheel, capsys, cmd):
    args = [*cmd, str(evil_wheel)] + ([str(evil_wheel)] if cmd == ["diff"] else [])
    main(args)
    out, _ = capsys.readouterr()
    assert "\x1b" not in out and not any(ln.lstrip().startswith("::error") for ln in out.splitlines()), out


@pytest.mark.parametrize("fmt", ["text", "github", "junit", "markdown", "html"])
def test_a_member_name_cannot_write_into_the_ci_log(tmp_path, capsys, fmt):
    # (a finding's path is the member's name: in a table cell, inline code, an annotation's file)
    bad = "pkg/x\x1b[2J\u202e.so"
    wheel = tmp_path / f"fuzz-1.0-{TAG}.whl"
    wheel.write_bytes(tiny_wheel([(bad, b"\x7fELF" + b"\0" * 60)], tag=TAG))
    assert main(["check", str(wheel), "--format", fmt, "--select", "WA001"]) == 1
    out, _err = capsys.readouterr()
    assert "\x1b" not in out and "\u202e" not in out
