"""WA701-WA705: the C++ consumer surface (CMake targets, package configs, pkg-config files).

Pure functions over the model of :mod:`wheelaudit.surface`, the wheel's file list and each native
library's identity (SONAME / install name: ``Binary.identity``). Each finding's severity mirrors
what a consumer meets (SPEC §4): an error where ``find_package`` / the consumer's build fails, a
warning where nothing loads the file (an orphan export file) or the consequence is harmless
(a missing ``-I``, an absolute include directory).

    from wheelaudit.surface import read_surface
    from wheelaudit.checks.consumer import check_surface

    surface = read_surface(files, read_text)
    findings = check_surface(surface, files, {b.path: b.identity for b in wheel.libraries})
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wheelaudit.model.finding import Finding, Severity
from wheelaudit.model.messages import examples
from wheelaudit.model.globs import Glob
from wheelaudit.model.surface import Declaration, ImportedTarget, PkgConfigFile, Ref, Surface
from wheelaudit.checks.base import Check, Family

if TYPE_CHECKING:
    from wheelaudit.checks.context import Context

__all__ = ["FAMILY", "check_surface", "missing_files", "absolute_paths", "soname_mismatches", "missing_includes",
           "undeclared_targets", "CMakeComponent", "Declaration"]

_LIB_SUFFIXES = (".so", ".a", ".dylib", ".tbd")


def _sev(live: bool) -> Severity:
    return "error" if live else "warning"


def _where(t: ImportedTarget) -> str:
    return f"of {t.export_file}" + ("" if t.live else ", an export file no package config includes (nothing loads it),")


def check_surface(surface: Surface, files: Iterable[str], identities: Mapping[str, str | None], *,
                  components: Sequence[Any] = (), declarations: Sequence[Declaration] | None = None
                  ) -> list[Finding]:
    """WA701-WA704 over ``surface``; WA705 too when ``components`` are given (see
    :func:`undeclared_targets`)."""
    files = list(files)
    out = missing_files(surface, files) + absolute_paths(surface) + soname_mismatches(surface, files, identities)
    out += missing_includes(surface)
    if components:
        out += undeclared_targets(components, files, surface, declarations or [])
    return out


# -- WA701 ----------------------------------------------------------------------------------------

def missing_files(surface: Surface, files: Iterable[str]) -> list[Finding]:
    """WA701: an imported target's ``IMPORTED_LOCATION`` / ``IMPORTED_IMPLIB`` or a path in its
    link interface, or a ``.pc`` file's library, names a file the wheel does not ship."""
    shipped = set(files)
    out: list[Finding] = []
    for t in surface.targets:
        named: list[tuple[str, Ref]] = [(f"IMPORTED_LOCATION{_suffix(c)}", r) for c, r in t.files.items()]
        named += [(f"IMPORTED_IMPLIB{_suffix(c)}", r) for c, r in t.implibs.items()]
        named += [("INTERFACE_LINK_LIBRARIES", r) for r in t.link_libraries if isinstance(r, Ref)]
        for prop, ref in named:
            if ref.kind != "wheel" or ref.exists:
                continue
            if prop.startswith("INTERFACE"):
                consequence = "a consumer's build stops: no rule to make that file"
            else:
                consequence = ("find_package stops: \"The imported target ... references the file ... but this file "
                               "does not exist\"")
            out.append(Finding(
                "WA701",
                f"imported target {t.name} {_where(t)} names {ref.text} in {prop}, which the wheel does not ship"
                + (f"; {consequence}" if t.live else ""),
                subject=t.name, paths=[t.export_file] + ([ref.member] if ref.member else []),
                rule="consumer", severity_override=_sev(t.live)))
    for pc in surface.pkgconfig:
        for ref in pc.files:
            if ref.kind == "wheel" and not ref.exists:
                out.append(Finding(
                    "WA701", f"{pc.path}: Libs names {ref.text}, which the wheel does not ship; a consumer's link fails",
                    subject=pc.path, paths=[pc.path] + ([ref.member] if ref.member else []), rule="consumer",
                    severity_override="error"))
        out += _unsatisfied_l(pc, shipped)
    return out


def _suffix(cfg: str) -> str:
    return f"_{cfg}" if cfg else ""


def _unsatisfied_l(pc: PkgConfigFile, shipped: set[str]) -> list[Finding]:
    """``-lfoo`` with ``-L`` directories in the wheel: the linker wants ``libfoo.so`` (or ``.a``,
    ``.dylib``) in one of them; a versioned ``libfoo.so.1`` alone does not do. Reported only when the
    wheel ships a library of that name somewhere (else ``-lfoo`` is a system library: ``-lm``)."""
    dirs = [r.member for r in pc.lib_dirs if r.kind == "wheel" and r.member is not None]
    if not dirs:
        return []
    out = []
    basenames: dict[str, list[str]] = {}
    for f in shipped:
        basenames.setdefault(posixpath.basename(f), []).append(f)
    for name in pc.libraries:
        stem = f"lib{name}"
        if any(posixpath.join(d, stem + s) in shipped for d in dirs for s in _LIB_SUFFIXES):
            continue
        near = sorted(p for b, ps in basenames.items() for p in ps
                      if b.startswith(stem + ".") and (".so" in b or b.endswith((".dylib", ".a"))))
        if not near:
            continue
        out.append(Finding(
            "WA701",
            f"{pc.path}: -l{name} finds no {stem}.so or {stem}.a in its -L directories "
            f"({', '.join(r.text for r in pc.lib_dirs)}); the wheel ships {', '.join(near[:3])}, which the linker "
            f"does not take for -l{name}",
            subject=pc.path, paths=[pc.path] + near[:3], rule="consumer", severity_override="error"))
    return out


# -- WA702 ----------------------------------------------------------------------------------------

def absolute_paths(surface: Surface) -> list[Finding]:
    """WA702: an absolute path of the build machine. An error for a library or object file a
    link step needs; a warning for include directories, frameworks and flags, and for anything an
    orphan export file names. One finding per path, naming every place."""
    found: dict[str, dict[str, Any]] = {}

    def note(ref: Ref, where: str, path: str, link: bool) -> None:
        if ref.kind != "absolute":
            return
        entry = found.setdefault(ref.text, {"where": [], "paths": [], "error": False})
        if where not in entry["where"]:
            entry["where"].append(where)
        if path not in entry["paths"]:
            entry["paths"].append(path)
        entry["error"] = entry["error"] or link

    for t in surface.targets:
        live = t.live
        for c, r in list(t.files.items()) + list(t.implibs.items()):
            note(r, f"{t.name} IMPORTED_LOCATION{_suffix(c)}", t.export_file, live)
        for item in t.link_libraries:
            if isinstance(item, Ref):
                note(item, f"{t.name} INTERFACE_LINK_LIBRARIES", t.export_file,
                     live and ".framework" not in item.text)
        for r in t.include_dirs:
            note(r, f"{t.name} INTERFACE_INCLUDE_DIRECTORIES", t.export_file, False)
        for r in t.other_paths:
            note(r, f"{t.name} link/compile options", t.export_file, False)
    for cfg in surface.configs:
        for v in cfg.variables:
            note(v.ref, f"{cfg.path} {v.name}", v.config, False)
    for pc in surface.pkgconfig:
        for r in pc.files:
            note(r, f"{pc.path} Libs", pc.path, ".framework" not in r.text)
        for r in pc.lib_dirs + pc.include_dirs + pc.other_paths:
            note(r, f"{pc.path} flags", pc.path, False)
    out = []
    for text, e in sorted(found.items()):
        kind = "a library a consumer links" if e["error"] else "a path"
        out.append(Finding(
            "WA702",
            f"the consumer surface names {text}, an absolute path of the build machine ({kind}): "
            + examples(e["where"], 5, sort=False, sep="; "),
            subject=text, paths=e["paths"], rule="consumer", severity_override="error" if e["error"] else "warning"))
    return out


# -- WA703 ----------------------------------------------------------------------------------------

def soname_mismatches(surface: Surface, files: Iterable[str], identities: Mapping[str, str | None]) -> list[Finding]:
    """WA703: ``IMPORTED_SONAME`` differs from the SONAME / install name of the library that
    ``IMPORTED_LOCATION`` names; or, with no ``IMPORTED_SONAME``, that library's own identity names
    no file of the wheel (a consumer records it and the loader will not find it)."""
    names = {posixpath.basename(f) for f in files}
    out = []
    for t in surface.targets:
        for cfg, ref in t.files.items():
            if ref.kind != "wheel" or not ref.exists or ref.member is None:
                continue
            ident = identities.get(ref.member)
            if not ident:
                continue
            soname = t.sonames.get(cfg, t.sonames.get(""))
            base = posixpath.basename(ident)
            unfound = base not in names
            tail = (f"; no file of the wheel is named {base}: a consumer's binary records {ident} and the loader "
                    f"will not find it" if unfound else "")
            if soname is not None and soname != ident:
                out.append(Finding(
                    "WA703", f"imported target {t.name} {_where(t)} says IMPORTED_SONAME{_suffix(cfg)} {soname}, "
                    f"but {ref.member} identifies itself as {ident}" + tail,
                    subject=t.name, paths=[t.export_file, ref.member], rule="consumer",
                    severity_override=_sev(t.live)))
            elif soname is None and unfound and not ident.startswith("@") and "/" not in ident:
                out.append(Finding(
                    "WA703", f"imported target {t.name} {_where(t)} names {ref.member}, whose identity is {ident}"
                    + tail, subject=t.name, paths=[t.export_file, ref.member], rule="consumer",
                    severity_override=_sev(t.live)))
    return out


# -- WA704 ----------------------------------------------------------------------------------------

def missing_includes(surface: Surface) -> list[Finding]:
    """WA704: an include directory inside the wheel's prefix that the wheel does not ship. An
    error in a live imported target (CMake refuses to generate its consumers) and in a config's
    ``set_and_check`` (the config stops); a warning in other config variables, ``.pc`` Cflags and
    orphan export files (a missing ``-I`` is ignored by compilers)."""
    out = []

    def missing(r: Ref) -> bool:
        return r.kind == "wheel" and r.member is not None and not r.exists

    for t in surface.targets:
        for r in t.include_dirs:
            if missing(r):
                out.append(Finding(
                    "WA704", f"imported target {t.name} {_where(t)} has {r.text} in INTERFACE_INCLUDE_DIRECTORIES, "
                    "which the wheel does not ship" + ("; CMake stops generating every consumer: \"Imported target "
                                                      "includes non-existent path\"" if t.live else ""),
                    subject=t.name, paths=[t.export_file, r.member or r.text], rule="consumer",
                    severity_override=_sev(t.live)))
    for cfg in surface.configs:
        for v in cfg.variables:
            if missing(v.ref):
                out.append(Finding(
                    "WA704", f"{v.config} sets {v.name} to {v.ref.text}, which the wheel does not ship"
                    + ("; set_and_check stops find_package with a fatal error" if v.checked else ""),
                    subject=v.name, paths=[v.config, v.ref.member or v.ref.text], rule="consumer",
                    severity_override="error" if v.checked else "warning"))
    for pc in surface.pkgconfig:
        for r in pc.include_dirs:
            if missing(r):
                out.append(Finding(
                    "WA704", f"{pc.path}: Cflags names -I{r.text}, which the wheel does not ship",
                    subject=pc.path, paths=[pc.path, r.member or r.text], rule="consumer",
                    severity_override="warning"))
    return out


# -- WA705 ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CMakeComponent:
    """What WA705 needs of a ``[[component]]``: its name, ``cmake-target`` and ``owner`` glob."""

    name: str
    cmake_target: str
    owner: Glob | str


def _library_base(path: str) -> str:
    b = posixpath.basename(path)
    for suffix in (".so", ".dylib", ".dll", ".lib", ".a"):
        if suffix in b:
            b = b[: b.index(suffix)]
            break
    return b[3:] if b.startswith("lib") else b


def undeclared_targets(components: Sequence[Any], files: Iterable[str], surface: Surface,
                       declarations: Sequence[Declaration]) -> list[Finding]:
    """WA705: a component with ``cmake-target`` whose owner ships, but that no package config
    declares (no live imported target of that name, no ``[cmake] declares`` match), or declares for
    another library than the owner.

    ``components``: objects with ``name``, ``cmake_target`` (None: not checked) and ``owner`` (a
    :class:`~wheelaudit.model.globs.Glob` or a glob string), e.g. :class:`CMakeComponent` or the
    ruleset's ``ComponentRule``."""
    files = list(files)
    out = []
    live: dict[str, list[ImportedTarget]] = {}
    for t in surface.targets:
        if t.live:
            live.setdefault(t.name, []).append(t)
    declared: dict[str, list[Declaration]] = {}
    for d in declarations:
        declared.setdefault(d.target, []).append(d)
    for comp in components:
        target = getattr(comp, "cmake_target", None)
        owner = getattr(comp, "owner", None)
        if not target or owner is None:
            continue
        glob = owner if isinstance(owner, Glob) else Glob(str(owner))
        owners = [f for f in files if glob.match(f)]
        if not owners:
            continue
        owner_bases = {_library_base(f) for f in owners}
        generated = live.get(target, [])
        hand = declared.get(target, [])
        if not generated and not hand:
            configs = sorted({c.path for c in surface.configs} | {d.config for d in declarations})
            out.append(Finding(
                "WA705",
                f"component {comp.name}: {', '.join(owners)} ships, but no package config declares {target}"
                + (f" (configs: {', '.join(configs)})" if configs else " (the wheel has no package config)")
                + f"; a consumer linking {target} stops generating: the target was not found",
                subject=comp.name, paths=owners + configs, rule=f"component:{comp.name}", severity_override="error"))
            continue
        wrong = []
        for t in generated:
            locs = [r.member for r in t.files.values() if r.kind == "wheel" and r.member]
            if locs and not any(glob.match(m) for m in locs):
                wrong.append(f"{t.export_file} for {', '.join(sorted(set(locs)))}")
        for d in hand:
            if d.library not in owner_bases:
                wrong.append(f"{d.config} for lib{d.library}")
        if wrong and len(wrong) == len(generated) + len(hand):
            out.append(Finding(
                "WA705", f"component {comp.name}: {target} is declared for another library than its owner "
                f"({', '.join(owners)}): {'; '.join(wrong)}",
                subject=comp.name, paths=owners, rule=f"component:{comp.name}", severity_override="error"))
    return out


# -- the pipeline's entry point -------------------------------------------------------------------

def evaluate_consumer(wheel: Any, ruleset: Any = None) -> list[Finding]:
    """WA701-WA705 for a scanned wheel (:class:`wheelaudit.scanner.Wheel`, whose ``surface`` the scan
    read) under ``ruleset`` (its components' ``cmake-target`` and its ``[cmake]`` table; None: WA705
    is not checked)."""
    surface = getattr(wheel, "surface", None)
    components = []
    if ruleset is not None:
        components = [c for c in ruleset.components if c.cmake_target and c.owner is not None
                      and (c.when is None or c.when.holds(wheel.traits))]
    if surface is None:
        if not components:
            return []
        from wheelaudit.surface import Surface

        surface = Surface()
    identities = {b.path: b.identity for b in wheel.libraries}
    declarations: list[Declaration] = []
    cmake = getattr(ruleset, "cmake", None)
    if components and cmake is not None and cmake.declares is not None:
        from wheelaudit.surface.declarations import read_declarations

        declarations = read_declarations(wheel.files, surface.texts.get, cmake.config, cmake.declares, cmake.namespace)
    return check_surface(surface, wheel.files, identities, components=components, declarations=declarations)


def consumer_surface(ctx: Context) -> list[Finding]:
    """WA701-WA705: the wheel's CMake and pkg-config files, and the components' ``cmake-target``."""
    return evaluate_consumer(ctx.wheel, ctx.ruleset)


FAMILY = Family("consumer", checks=(Check(("WA701", "WA702", "WA703", "WA704", "WA705"), consumer_surface),))
