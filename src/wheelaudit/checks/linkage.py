"""Linkage: will the libraries find each other once installed? The ``linkage`` family: WA501
(a dependency that resolves nowhere), WA502 (:mod:`wheelaudit.checks.rpaths`), WA505 (a provider
the wheel does not require, alone or installed together with others), WA507 (a stale vendored
C++ runtime). They judge the resolution of :mod:`wheelaudit.checks.resolution`, shared with the
``symbols`` (WA506) and ``platform`` (WA503, WA504) families as :class:`wheelaudit.checks.links.Links`;
the ``[linkage]`` table turns all of them off.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from wheelaudit.platforms import tags as platforms

from wheelaudit.platforms import policydata, providers
from wheelaudit.load import is_extension_module, load_model
from wheelaudit.model.finding import Finding, Severity, examples
from wheelaudit.model import messages
from wheelaudit.model.wheel import Wheel
from wheelaudit.checks import platform, symbols
from wheelaudit.checks.abi import links_libpython
from wheelaudit.checks.base import Family
from wheelaudit.checks.links import Links, links, on_links
from wheelaudit.checks.resolution import Resolution, Rules, required_dists
from wheelaudit.checks.rpaths import external_rpaths

if TYPE_CHECKING:
    from wheelaudit.ruleset.model import LinkageRule

__all__ = ["FAMILY", "JUDGES", "LOAD_ERRORS", "check_linkage", "members_not_required", "optional_candidates"]

RULE = "linkage"

#: candidates named in a WA501 message (the rest are counted)
MAX_TRIED = 8


# --------------------------------------------------------------------------------------------
# Findings


def _loaded_first(wheel: Wheel, name: str, paths: list[str], loaded: Collection[str]) -> str | None:
    """A binary of the wheel named ``name`` when none of ``paths`` is loaded by the system's loader
    (:func:`wheelaudit.checks.extension.loaded_binaries`: they are opened by path, as plugins
    are by their host): loaded first, it serves them. None otherwise."""
    if not paths or any(p in loaded for p in paths):
        return None
    return _shipped_as(wheel, name)


def _shipped_as(wheel: Wheel, name: str) -> str | None:
    """The path of a readable binary of the wheel named ``name`` (case-blind on Windows), if any."""
    base = posixpath.basename(name)
    names = getattr(wheel, "_shipped_names", None)
    if names is None or names[0] is not wheel.libraries:  # (built once: asked once per failing name)
        exact: dict[str, str] = {}
        blind: dict[str, str] = {}
        for b in wheel.libraries:
            if b.ok:
                exact.setdefault(b.name, b.path)
                if b.format == "pe":
                    blind.setdefault(b.name.lower(), b.path)
        names = (wheel.libraries, exact, blind)
        try:
            object.__setattr__(wheel, "_shipped_names", names)
        except (AttributeError, TypeError):
            pass
    return names[1].get(base) or names[2].get(base.lower())


def unresolved_dependencies(wheel: Wheel, links: Links) -> list[Finding]:
    """WA501, one per unresolved dependency: every binary that needs it in ``paths``, the route
    tried (of the first) in the message."""
    rules, resolved, loaded = links.rules, links.resolved, links.loaded
    by_path = {b.path: b for b in wheel.libraries}
    model = load_model(wheel)

    # dependency name -> binary -> (resolution, archs)
    failing: dict[str, dict[str, tuple[Resolution, list[str]]]] = {}
    for path, per_arch in resolved.items():
        extension = path in model.extensions
        for arch, rs in per_arch.items():
            for r in rs:
                if r.status != "unresolved":
                    continue
                if extension and links_libpython(r.dependency.name):
                    continue  # one cause, one finding: WA603 says it
                mine = failing.setdefault(r.dependency.name, {})
                if path in mine:
                    mine[path][1].append(arch)
                else:
                    mine[path] = (r, [arch])
    out: list[Finding] = []
    for name, needers in failing.items():
        paths = list(needers)
        first = paths[0]
        r, archs = needers[first]
        b = by_path[first]
        where = f" ({'/'.join(archs)} slice{'s' if len(archs) > 1 else ''})" if b.universal else ""
        who = f"{first}{where}" if len(paths) == 1 else f"{first}{where} and {len(paths) - 1} more"
        msg = f"{who} need{'s' if len(paths) == 1 else ''} {name}, which resolves neither inside the wheel nor to an allowed external library"
        if r.reason:
            msg += f": {r.reason}"
        if r.tried:
            shown = r.tried[:MAX_TRIED]
            more = len(r.tried) - len(shown)
            msg += ("; tried" + (f" (for {first})" if len(paths) > 1 else "") + " "
                    + "; ".join(shown) + messages.more(more))
        if r.hint:
            msg += f"; {r.hint}"
        msg += f". Allowed externals: {rules.externals_desc(b)}"
        optional = by_path_only = False
        reused: str | None = None
        origin = policydata.windows_dll_origin(name, b.slices[0].arch if b.slices else "") if b.format == "pe" else None
        debug = origin == "debug-runtime"
        if rules.declared_optional(name):
            optional = True
            msg += " (declared optional in [linkage] optional: the binary has a fallback)"
        elif (guard := _optional_needers(wheel, paths)) is not None:
            optional = True
            msg += f" ({guard})"
        elif r.since_windows is not None:
            optional = True
        elif debug:
            pass  # (the debug runtime is on no machine: whoever loads the binary, it fails)
        elif (host := _loaded_first(wheel, name, paths, loaded)) is not None:
            optional = True
            reused = host
            msg += (f" (the wheel ships {host}, and nothing in the wheel links "
                    f"{'this binary' if len(paths) == 1 else 'these binaries'}: loaded by path (a plugin its "
                    f"host loads, ctypes), {'it finds' if len(paths) == 1 else 'they find'} {posixpath.basename(name)} "
                    "when that is already loaded, as the loader reuses a loaded library of that name)")
        elif not any(p in loaded for p in paths) and origin != "redistributable" and not any(
                providers.compiler_runtime(name, plat) for plat in platforms.platform_strings(wheel.tags)):
            # (a machine has an accelerator's runtime or a database client by design, or not; a
            # compiler's runtime -- VC++, libgomp, libomp -- every load of the binary needs)
            optional = by_path_only = True
            one = len(paths) == 1
            msg += (f" (nothing in the wheel links {'this binary' if one else 'these binaries'} and no importer "
                    f"takes {'it' if one else 'them'}: loaded by path, by a host that loads plugins or by ctypes, "
                    f"which may load {'it' if one else 'them'} only where {posixpath.basename(name)} is installed; where "
                    f"{'it is' if one else 'they are'} loaded without it, the load fails)")
        if not optional and (elsewhere := _shipped_as(wheel, name)) is not None:
            msg += (f" (the wheel ships {elsewhere}: the loader reuses it only when a module that finds it was "
                    f"imported first in the process)")
        hint = ""
        if reused is not None:
            hint = (f"nothing to do if {reused} is always loaded first (the package imports it before loading "
                    f"{'this binary' if len(paths) == 1 else 'these binaries'}); else give "
                    f"{'it' if len(paths) == 1 else 'them'} a search path that finds it")
        elif debug:
            hint = "rebuild it in a Release configuration (/MD, not /MDd): it then links the runtime users have"
        elif r.since_windows is not None:
            hint = (f"nothing to do where the project supports Windows {r.since_windows} and later only (say so in its"
                    f" install notes, or with [linkage] allow-external); else avoid {posixpath.basename(name)}")
        elif by_path_only:
            hint = (f"nothing to do if the code that loads {'it' if len(paths) == 1 else 'them'} copes with a failed load "
                    f"(Qt skips a plugin it cannot load; a backend chosen per machine); else ship {posixpath.basename(name)}")
        elif optional:
            hint = "nothing is required: the package runs without it; vendor the library to make the module usable"
        elif origin == "redistributable":
            hint = (f"ship {posixpath.basename(name)} in the wheel (delvewheel repair vendors it); a project whose install "
                    f"instructions require the Visual C++ Redistributable declares that instead: "
                    f"[linkage] allow-external = [\"{posixpath.basename(name).lower()}\"]")
        route = model.route(b)
        if route:  # (the context the lookup was judged in: how the binary is loaded, what is there)
            msg += f" [{first}: {route}]"
        out.append(Finding("WA501", msg, subject=name, paths=paths, rule=RULE,
                           severity_override="warning" if optional else None, hint=hint))
    return out


#: the codes of a load error that an optional extension module's fallback makes harmless
LOAD_ERRORS = ("WA501", "WA505")


def optional_candidates(wheel: Wheel, findings: list[Finding]) -> list[str]:
    """The extension modules among the binaries that the unwaived load errors (WA501, WA505) of
    ``findings`` name: those whose being optional would change a verdict."""
    named = {p for f in findings if f.code in LOAD_ERRORS and f.severity == "error" and not f.waived for p in f.paths}
    return sorted(b.path for b in wheel.libraries if b.path in named and is_extension_module(b))


def _optional_needers(wheel: Wheel, paths: list[str]) -> str | None:
    """When every binary of ``paths`` is an optional extension module (``Wheel.optional_modules``),
    the words that say so, else None."""
    known = getattr(wheel, "optional_modules", None) or {}
    if not paths or not all(p in known for p in paths):
        return None
    where = ", ".join(dict.fromkeys(known[p] for p in paths))
    return (f"optional: the package imports {'it' if len(paths) == 1 else 'each of them'} only where a failed "
            f"import is caught, as at {where}, and runs without {'it' if len(paths) == 1 else 'them'}")


def _optional_hint(dist: str) -> str:
    return (f"nothing is required: the package runs without it; to let users have it, offer an extra "
            f"(Requires-Dist: {dist}; extra == \"...\")")


def _table_providers_not_required(wheel: Wheel, resolved: dict[str, dict[str, list[Resolution]]], rules: Rules,
                                   loaded: Collection[str]) -> list[Finding]:
    """One WA505 per distribution the provider table names but the wheel does not require:
    every library it would provide, every binary that needs one."""
    need: dict[str, tuple[list[str], list[str], str, list[str]]] = {}
    for path, per_arch in resolved.items():
        for rs in per_arch.values():
            for r in rs:
                if r.status == "provided" and r.required is False and r.dist:
                    libs, paths, note, _extras = need.setdefault(r.dist, ([], [], r.external or "", r.extras))
                    if r.dependency.name not in libs:
                        libs.append(r.dependency.name)
                    if path not in paths:
                        paths.append(path)
    out = []
    for dist, (libs, paths, note, extras) in need.items():
        guard = _optional_needers(wheel, paths)
        if not guard and not any(p in loaded for p in paths):
            guard = (f"nothing in the wheel links {'this binary' if len(paths) == 1 else 'these binaries'} and no "
                     "importer takes them: loaded by path, by code that may load them only where the libraries "
                     "are installed")
        severity: Severity | None = "warning" if guard or all(map(rules.declared_optional, libs)) else None
        need_s = f"{examples(paths, 2)} need{'s' if len(paths) == 1 else ''} {examples(libs, 6)}, {note}: "
        if extras:  # the project made them opt-in: `pip install NAME[extra]` brings them
            extra = next((x for x in extras if x in dist), extras[0])  # (kivy[gstreamer] for kivy-deps-gstreamer)
            spelled = f"{getattr(wheel, 'name', '') or 'the wheel'}[{extra}]"
            message = (f"installed without {'one of them' if len(extras) > 1 else 'it'} they are unloadable "
                       f"(`pip install {spelled}` brings them)" + (f" ({guard})" if guard else ""))
            hint = (f"require {dist} outright; or, where {spelled} is how users get this feature and the package "
                    f"imports {'the module' if len(paths) == 1 else 'these modules'} only when it is used, "
                    f"declare {'it' if len(libs) == 1 else 'them'} in [linkage] optional")
        else:
            message = ("`pip install` of this wheel alone leaves them unloadable"
                       + (f" ({guard})" if guard else f"; add Requires-Dist: {dist}"))
            hint = (_optional_hint(dist) if guard else
                    f"add Requires-Dist: {dist} (with the version range the wheel was built against)")
        out.append(Finding("WA505", need_s + message, subject=dist, paths=paths, symbols=[], rule=RULE, hint=hint,
                           severity_override=severity))
    return out


def providers_not_required(wheel: Wheel, links: Links) -> list[Finding]:
    """WA505: a dependency a distribution provides (the provider table, ``provided-by``) that the
    wheel does not require."""
    resolved = links.resolved
    plain, extra_only = required_dists(wheel)
    out: list[Finding] = _table_providers_not_required(wheel, resolved, links.rules, links.loaded)
    for path, per_arch in resolved.items():
        need: dict[str, list[str]] = {}
        for rs in per_arch.values():
            for r in rs:
                if r.status == "provided" and r.dist is not None and r.required is None:
                    lst = need.setdefault(r.dist, [])
                    if r.dependency.name not in lst:
                        lst.append(r.dependency.name)
        for dist, deps in need.items():
            cname = canonicalize_name(dist)
            if cname in plain:
                continue
            extra = extra_only.get(cname)
            why = (f"the wheel requires {dist} only with extra {', '.join(sorted(set(extra)))}" if extra
                   else f"the wheel's METADATA has no Requires-Dist: {dist}")
            guard = _optional_needers(wheel, [path])
            out.append(Finding(
                "WA505",
                f"{path} needs {examples(deps, 4)}, provided by the distribution {dist} (provided-by), but {why}"
                + (f" ({guard})" if guard else f"; add Requires-Dist: {dist}"),
                subject=path, paths=[path], rule=RULE, severity_override="warning" if guard else None,
                hint=_optional_hint(dist) if guard else ""))
    return out


def _version(text: str | None) -> tuple[int, ...] | None:
    try:
        return tuple(int(x) for x in (text or "").split(".")[:2]) or None
    except ValueError:
        return None


#: the MSVC toolset from which code needs a msvcp140.dll at least as new (std::mutex's constexpr
#: constructor; an older runtime crashes it: delvewheel#54, llvmlite#1297)
_MUTEX_ABI = (14, 40)


def stale_vendored_runtimes(wheel: Wheel, links: Links) -> list[Finding]:
    """WA507: a vendored msvcp140*.dll older than the toolset (PE linker version) of a binary that
    imports it."""
    resolved = links.resolved
    by_path = {b.path: b for b in wheel.libraries}
    out: list[Finding] = []
    stale: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for path, per_arch in resolved.items():
        for arch, rs in per_arch.items():
            for r in rs:
                if r.status != "inside" or not posixpath.basename(r.dependency.name).lower().startswith("msvcp140"):
                    continue
                runtime = by_path.get(r.path or "")
                rs_slice = runtime.slices[0] if runtime is not None and runtime.slices else None
                have = _version(getattr(rs_slice, "file_version", None))
                importer = next((s for s in by_path[path].slices if s.arch == arch), None)
                need = _version(getattr(importer, "linker_version", None))
                if have and need and have < need:
                    stale.setdefault(r.path or "", []).append((path, need))
    for runtime_path, users in stale.items():
        have = _version(by_path[runtime_path].slices[0].file_version) or ()
        newest = max(n for _, n in users)
        severity = "error" if have < _MUTEX_ABI <= newest else "warning"
        why = (" (code built with 14.40 or later crashes in std::mutex with an older runtime)"
               if severity == "error" else "")
        out.append(Finding(
            "WA507",
            f"{runtime_path} (version {'.'.join(map(str, have))}) is older than the toolset "
            f"{'.'.join(map(str, newest))} that linked {examples([p for p, _ in users], 3)}{why}",
            subject=runtime_path, paths=[runtime_path] + sorted({p for p, _ in users}), rule=RULE,
            severity_override=severity))  # type: ignore[arg-type]
    return out


# --------------------------------------------------------------------------------------------
# A dependency satisfied by another wheel: the needing wheel must require the providing one


def members_not_required(needs: dict[tuple[str, str], list[tuple[str, str]]], origins: dict[str, str],
                         wheels: Sequence[Wheel], labels: Sequence[str]) -> list[Finding]:
    """WA505 for wheels installed together (``wheels``, named by ``labels``; ``origins``: the
    wheel of every path): a binary of one wheel that needs a library another wheel ships
    (``needs``, :func:`wheelaudit.checks.resolution.cross_wheel_links`), where the needing wheel does not require the
    providing one."""
    by_label = dict(zip(labels, wheels, strict=True))
    out: list[Finding] = []
    for (path, dst), deps in sorted(needs.items()):
        src = origins[path]
        needer, provider = by_label[src], by_label[dst]
        plain, extra_only = required_dists(needer)
        dist = canonicalize_name(provider.name)
        if dist in plain:
            continue
        extras = extra_only.get(dist)
        why = (f"{needer.name} requires {provider.name} only with extra {', '.join(sorted(set(extras)))}" if extras
               else f"{needer.name}'s METADATA has no Requires-Dist: {provider.name}")
        shown = examples([f"{d} (-> {t})" for d, t in deps], 3)
        out.append(Finding(
            "WA505",
            f"{path} ({src}) needs {shown}, which {dst} ships; here the wheels are installed together, but"
            f" {why}, so installing {needer.name} without it breaks. Add Requires-Dist: {provider.name}",
            subject=path, paths=[path] + sorted({t for _d, t in deps}), rule="linkage"))
    return out


# --------------------------------------------------------------------------------------------
# The family


#: the checks of this family: (codes, judge), in the order of a report
JUDGES: tuple[tuple[tuple[str, ...], Callable[[Wheel, Links], list[Finding]]], ...] = (
    (("WA501",), unresolved_dependencies),
    (("WA502",), external_rpaths),
    (("WA505",), providers_not_required),
    (("WA507",), stale_vendored_runtimes),
)
FAMILY = Family("linkage", checks=tuple(on_links(codes, judge) for codes, judge in JUDGES))


def check_linkage(wheel: Wheel, rule: LinkageRule | None = None, resolved: dict[str, dict[str, list[Resolution]]] | None = None) -> list[Finding]:
    """Every check of the ``[linkage]`` table over ``wheel``, in the order of a report: this
    family's (WA501, WA502, WA505, WA507), :mod:`wheelaudit.checks.symbols`' (WA506) and
    :mod:`wheelaudit.checks.platform`'s (WA503, WA504).

    ``rule`` is the ruleset's ``[linkage]`` table (:class:`wheelaudit.ruleset.model.LinkageRule`) or
    None for the defaults, which need no configuration. ``check = false`` turns all of it off.
    ``resolved``: :func:`wheelaudit.checks.resolution.resolve_wheel` of the same wheel and rule, when the caller has it already.
    """
    shared = links(wheel, rule, resolved)
    if shared is None:
        return []
    out: list[Finding] = []
    for judges in (JUDGES, symbols.JUDGES, platform.JUDGES):
        for _codes, judge in judges:
            out += judge(wheel, shared)
    return out
