"""Fuzz targets: one function per input surface, ``bytes -> outcome``.

A target returns a short outcome label ("parsed", "malformed", "not-a-wheel", ...) and lets
any *unexpected* exception escape: that is a crash. Expected exceptions are the documented
failures of each surface: :class:`~wheelaudit.binary.MalformedBinary` for the binary readers,
:class:`~wheelaudit.archive.NotAWheel` for the wheel reader, :class:`~wheelaudit.ruleset.errors.RulesError`
for the rules loader, :class:`~wheelaudit.model.globs.GlobError` for patterns.

Targets:

``elf`` / ``macho`` / ``pe``
    the reader's ``parse(data, needles)`` directly (a reader bug is a crash here even though
    ``read_binary`` would contain it as a WA001 finding), then ``read_binary`` (never raises).
``wheel``
    the bytes written as a ``.whl``, then ``scan`` + ``audit`` against a small ruleset + the
    text and JSON renderers: the whole ``wheelaudit check`` path short of argument parsing.
``rules``
    the bytes written as a rules file, ``load_rules``, and, when it loads, an ``audit`` of a
    fixed, pre-scanned wheel with it.
``glob``
    the bytes split into a pattern and a text: ``Glob`` (both slash modes) and
    ``SymbolPattern`` compiled and matched.
``names``
    the bytes as a symbol name: ``symbols.demangle``, ``qualified_name``, a few patterns.
``surface``
    the bytes split at NUL into a package config, an export file and a ``.pc`` file of one wheel:
    ``surface.cmake_language.tokenize`` (raises only ``SurfaceError``), ``read_surface`` for each platform
    (never raises) and the WA7xx checks over the result.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .mutate import RULES_TEXT, tiny_wheel

NEEDLES = (b"Failed to load the default metallib", b"XnnpackBackend", b"mlx::core")



class Workspace:
    """A private temporary directory for the inputs that must be files (wheels, rules)."""

    def __init__(self, seed_wheels: list[Path] | None = None) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="wheelaudit-fuzz-"))
        self.seed_wheels = list(seed_wheels or [])
        self._rules = None
        self._wheel = None

    def file(self, name: str, data: bytes) -> Path:
        """Write an input file (not watched: the harness's own write, not the code's)."""
        from .guard import paused

        path = self.dir / name
        with paused(), open(path, "wb") as fh:
            fh.write(data)
        return path

    def rules(self):
        if self._rules is None:
            from wheelaudit.ruleset.load import parse_rules

            self._rules = parse_rules(RULES_TEXT, "<fuzz rules>")
        return self._rules

    def wheel(self):
        """A scanned wheel for the ``rules`` target (the first seed wheel, else a tiny one)."""
        if self._wheel is None:
            from wheelaudit.scanner import scan

            path = next((p for p in self.seed_wheels if p.suffix == ".whl"), None)
            if path is None:

                path = self.file("tiny-1.0-py3-none-any.whl", tiny_wheel([]))
            self._wheel = scan(path, strings=[b"Failed to load the default metallib"])
        return self._wheel


# -- binary readers ----------------------------------------------------------------------------
def _reader(fmt: str) -> Callable[[bytes, Workspace], str]:
    def target(data: bytes, ws: Workspace) -> str:
        from wheelaudit.binary import MalformedBinary, read_binary
        from wheelaudit.binary import elf, macho, pe

        reader = {"elf": elf, "macho": macho, "pe": pe}[fmt]
        try:
            slices = reader.parse(data, NEEDLES)
            outcome = "parsed"
            for s in slices:  # touch every fact (lazy columns, demangled names)
                for sym in s.exports:
                    _ = (sym.name, sym.demangled, sym.binding, sym.type)
                _ = (len(s.imports), len(s.locals), s.identity, s.dependencies, s.rpaths, s.notes)
        except MalformedBinary as exc:
            if not str(exc):
                raise AssertionError("MalformedBinary without a reason") from None
            outcome = "malformed"
        b = read_binary(data, f"lib/x.{fmt}", NEEDLES)  # must never raise
        if b is not None and b.error is not None and not b.error:
            raise AssertionError("WA001 without a reason")
        return outcome

    target.__name__ = fmt
    return target


elf = _reader("elf")
macho = _reader("macho")
pe = _reader("pe")


# -- the wheel reader, end to end ----------------------------------------------------------------
def wheel(data: bytes, ws: Workspace) -> str:
    from wheelaudit.api import audit_wheels
    from wheelaudit.render import renderer
    from wheelaudit.scanner import scan
    from wheelaudit.archive import NotAWheel

    path = ws.file("fuzz-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", data)
    rules = ws.rules()
    try:
        w = scan(path, strings=rules.strings(), jobs=1)
    except NotAWheel as exc:
        if not str(exc):
            raise AssertionError("NotAWheel without a message") from None
        return "not-a-wheel"
    report = audit_wheels([w], rules)
    for fmt in ("text", "json"):
        renderer(fmt)(report, io.StringIO(), False)
    return f"exit-{report.exit_code}"


# -- the rules loader ------------------------------------------------------------------------------
def rules(data: bytes, ws: Workspace) -> str:
    from wheelaudit.api import audit_wheels
    from wheelaudit.ruleset.errors import RulesError
    from wheelaudit.ruleset.load import load_rules

    path = ws.file("rules.toml", data)
    try:
        rs = load_rules(path)
    except RulesError as exc:
        if not str(exc):
            raise AssertionError("RulesError without a message") from None
        return "invalid"
    audit_wheels([ws.wheel()], rs)
    return "valid"


# -- patterns --------------------------------------------------------------------------------------
def glob(data: bytes, ws: Workspace) -> str:
    from wheelaudit.model.globs import Glob, GlobError, SymbolPattern

    text = data.decode("utf-8", "replace")
    pattern, _, subject = text.partition("\n")
    outcome = []
    for cross in (False, True):
        try:
            g = Glob(pattern, cross_slash=cross)
            outcome.append("match" if g.match(subject) else "no")
            g.match(subject[::-1])
        except GlobError:
            outcome.append("error")
    try:
        sp = SymbolPattern(pattern)
        outcome.append("match" if sp.matches(subject) else "no")
    except GlobError:
        outcome.append("error")
    return "/".join(outcome)


def names(data: bytes, ws: Workspace) -> str:
    from wheelaudit.model.globs import SymbolPattern
    from wheelaudit.binary.demangle import demangle
    from wheelaudit.binary.symbols import qualified_name

    name = data.decode("utf-8", "backslashreplace")
    d = demangle(name)
    q = qualified_name(d)
    for entry in ("executorch::*", "mlx::core::add", "*::init"):
        SymbolPattern(entry).matches(d)
        SymbolPattern(entry).matches(q)
    return "demangled" if d != name else "plain"


#: where the surface target's three texts sit in its wheel
SURFACE_FILES = ("p/lib/cmake/P/PConfig.cmake", "p/lib/cmake/P/PTargets.cmake", "p/lib/pkgconfig/p.pc")


def surface(data: bytes, ws: Workspace) -> str:
    from wheelaudit.checks.consumer import CMakeComponent, check_surface
    from wheelaudit.surface import read_surface
    from wheelaudit.surface.cmake_language import tokenize
    from wheelaudit.surface.declarations import read_declarations
    from wheelaudit.surface.errors import SurfaceError

    texts = dict(zip(SURFACE_FILES, data.decode("utf-8", "replace").split("\0", 2), strict=False))
    outcome = []
    for text in texts.values():
        try:
            tokenize(text)
            outcome.append("ok")
        except SurfaceError:
            outcome.append("malformed")
    files = list(texts) + ["p/lib/libp.so", "p/include/p.h"]
    for platform in (None, "linux", "macos", "windows"):
        s = read_surface(files, texts.get, platform=platform)
        decl = read_declarations(files, texts.get, ["**/*.cmake"], r"add_library\(\s*(?P<name>[\w:]+)", "")
        check_surface(s, files, {"p/lib/libp.so": "libp.so"},
                      components=[CMakeComponent("p", "p::p", "p/lib/libp.*")], declarations=decl)
    return "/".join(outcome)


# -- the second hostile round's shapes (fuzz/shapes.py) ------------------------------------------
#
# Besides "no crash, no hang, nothing forbidden", these targets check what the gate must never do
# on their shapes; an input that breaks it comes back as an outcome starting with "hole:", which
# the runner counts (and saves) like a crash.
def fat(data: bytes, ws: Workspace) -> str:
    """A universal header: the reader, then ``read_binary`` under a native member's name (such a
    member is never taken for a Java class file)."""
    from wheelaudit.binary import MalformedBinary, read_binary
    from wheelaudit.binary import macho

    try:
        for s in macho.parse(data, NEEDLES):
            _ = (s.arch, s.identity, s.dependencies, s.rpaths, len(s.exports), len(s.imports))
        outcome = "parsed"
    except MalformedBinary as exc:
        if not str(exc):
            raise AssertionError("MalformedBinary without a reason") from None
        outcome = "malformed"
    if data[:4] in (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf") and read_binary(data, "pkg/lib/libx.dylib", NEEDLES) is None:
        return "hole:native member taken for a class file"
    return outcome


def smuggle(data: bytes, ws: Workspace) -> str:
    """A wheel with local headers its central directory does not list (or that disagree with it),
    flagged by the first byte: such a wheel is never audited clean (WA002, or not a wheel)."""
    from wheelaudit.api import audit_wheels
    from wheelaudit.archive import NotAWheel
    from wheelaudit.scanner import scan

    flag, zdata = (data[0], data[1:]) if data else (0, b"")
    path = ws.file("fuzz-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", zdata)
    try:
        w = scan(path, strings=ws.rules().strings(), jobs=1)
    except NotAWheel as exc:
        if not str(exc):
            raise AssertionError("NotAWheel without a message") from None
        return "not-a-wheel"
    report = audit_wheels([w], ws.rules())
    codes = {f.code for r in report.wheels for f in r.findings}
    codes |= {d.code for d in w.defects}
    if flag == 1 and "WA002" not in codes:
        return "hole:smuggled local header without WA002"
    return "wa002" if "WA002" in codes else f"exit-{report.exit_code}"


def paths(data: bytes, ws: Workspace) -> str:
    """A wheel of libraries with long search-path lists and many dependencies: the whole audit."""
    return wheel(data, ws)


def cmake(data: bytes, ws: Workspace) -> str:
    """The first line a ``[cmake] declares`` regular expression, the rest CMake package configs
    (separated by NUL) of one wheel: ``read_surface`` for each platform, the declarations, the
    WA7xx checks."""
    from wheelaudit.binary.budget import Budget
    from wheelaudit.checks.consumer import CMakeComponent, check_surface
    from wheelaudit.model.globs import GlobError, linear_regex
    from wheelaudit.surface import read_surface
    from wheelaudit.surface.declarations import read_declarations

    text = data.decode("utf-8", "replace")
    declares, _, rest = text.partition("\n")
    try:
        rx = linear_regex(declares)  # as the rules loader compiles it
    except GlobError:
        rx = linear_regex(r"add_library\(\s*(?P<name>[\w:]+)")
    texts = {f"p/lib/cmake/P{i}/P{i}Config.cmake": t for i, t in enumerate(rest.split("\0"))}
    files = list(texts) + ["p/lib/libp.so"]
    outcome = "read"
    for platform in (None, "linux"):
        # (a smaller budget than a run's: the same limits reached sooner, more inputs a second)
        s = read_surface(files, texts.get, platform=platform, budget=Budget(steps=20_000, chars=4 << 20))
        decl = read_declarations(files, texts.get, ["**/*Config.cmake"], rx, "")
        findings = check_surface(s, files, {"p/lib/libp.so": "libp.so"},
                                 components=[CMakeComponent("p", "p::p", "p/lib/libp.*")], declarations=decl)
        outcome = "findings" if findings else outcome
    return outcome


#: the GitHub workflow commands planted by fuzz/shapes.py's CONTROL_PIECES, at the start of a line
_PLANTED = None


def control(data: bytes, ws: Workspace) -> str:
    """A wheel whose member and dependency names carry newlines, escapes and workflow commands:
    the whole audit and every renderer. No output holds a raw escape (ESC), no line of it starts
    a planted workflow command, and the JUnit report is well-formed XML."""
    global _PLANTED
    import re
    import xml.etree.ElementTree as ET

    from wheelaudit.api import audit_wheels
    from wheelaudit.archive import NotAWheel
    from wheelaudit.render import FORMATS, renderer
    from wheelaudit.scanner import scan

    from .shapes import MARK

    if _PLANTED is None:
        _PLANTED = re.compile(r"^\s*::(?:error title=|warning file=|notice::|add-mask::|stop-commands::|group::)" + MARK,
                              re.M)
    path = ws.file("fuzz-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", data)
    try:
        w = scan(path, strings=ws.rules().strings(), jobs=1)
    except NotAWheel:
        return "not-a-wheel"
    report = audit_wheels([w], ws.rules())
    holes = []
    import contextlib

    for fmt in FORMATS:
        buf = io.StringIO()
        with contextlib.redirect_stderr(io.StringIO()):  # (SARIF's note on where results are placed)
            renderer(fmt)(report, buf, False)
        out = buf.getvalue()
        if "\x1b" in out:
            holes.append(f"{fmt}: ESC")
        if fmt in ("text", "github", "markdown", "junit", "html") and _PLANTED.search(out):
            holes.append(f"{fmt}: workflow command")
        if fmt == "junit":
            try:
                ET.fromstring(out)
            except ET.ParseError:
                holes.append("junit: not XML")
    if holes:
        return "hole:" + ", ".join(holes)
    return f"exit-{report.exit_code}"


TARGETS: dict[str, Callable[[bytes, Workspace], str]] = {
    "elf": elf, "macho": macho, "pe": pe, "wheel": wheel, "rules": rules, "glob": glob, "names": names,
    "surface": surface, "fat": fat, "smuggle": smuggle, "paths": paths, "cmake": cmake, "control": control,
}


def load_target(name: str) -> Callable[[bytes, Workspace], str]:
    if name not in TARGETS:
        raise SystemExit(f"unknown target {name!r}; known: {', '.join(TARGETS)}")
    return TARGETS[name]


def cleanup(ws: Workspace) -> None:
    for p in ws.dir.iterdir():
        try:
            p.unlink()
        except OSError:
            pass
    try:
        os.rmdir(ws.dir)
    except OSError:
        pass
