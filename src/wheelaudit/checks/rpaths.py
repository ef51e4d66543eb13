"""WA502, the rpath entries judged by their consequence on a user's machine: every entry of every
ELF and Mach-O binary (empty, relative, absolute unless ``allow-rpath``, ``forbid-rpath``, where
any user can write, the build-machine shapes seen in released wheels, :data:`BUILD_MACHINE_SHAPES`),
weighed by the lookups of :mod:`wheelaudit.checks.resolution` that reach it. A check of the
``linkage`` family (:mod:`wheelaudit.checks.linkage` registers it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from wheelaudit.checks.links import Links
from wheelaudit.checks.resolution import Consulted, Resolution, Rules, SearchList
from wheelaudit.model.binary import Binary
from wheelaudit.model.finding import Finding, examples
from wheelaudit.model.globs import Glob
from wheelaudit.model.wheel import Wheel

__all__ = ["BUILD_MACHINE_SHAPES", "INTERPRETER_LOADED", "USER_WRITABLE", "external_rpaths"]

RULE = "linkage"

#: rpath shapes that name a build machine's tree (CI runners, build dirs, conda build envs)
BUILD_MACHINE_SHAPES: tuple[str, ...] = (
    "/__w/*",
    "/Users/runner/*",
    "*/_temp/*",
    "*/cmake-out/*",
    "*/cmake-out",
    "*/pip-out/*",
    "*/pip-out",
    "/home/*/*",
    "*conda_environment_*",
)

#: absolute LC_RPATH entries that are the OS's own (e.g. /usr/lib/swift): not WA502
_MACOS_SYSTEM_RPATHS: tuple[str, ...] = ("/usr/lib", "/usr/lib/*", "/System/Library/*")


def _is_relative_ok(entry: str, fmt: str) -> bool:
    if fmt == "elf":
        return entry.startswith(("$ORIGIN", "${ORIGIN}"))
    return entry.startswith(("@loader_path", "@executable_path", "@rpath"))


#: where a user without admin rights can place files: an rpath entry there that a lookup reaches
#: lets anyone with an account put a library in front of the wheel's own
USER_WRITABLE: tuple[str, ...] = ("/tmp", "/tmp/*", "/var/tmp", "/var/tmp/*", "/dev/shm", "/dev/shm/*",
                                  "/home/*", "/Users/*", "/run/user/*")

#: libraries every CPython process has loaded before it imports an extension: ld.so finds a
#: NEEDED of these among the loaded objects and searches no rpath for it
INTERPRETER_LOADED: tuple[str, ...] = ("libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
                                       "libutil.so.1", "ld-linux*.so.*", "ld64.so.*", "ld-musl-*.so.1",
                                       "libc.musl-*.so.1", "libc.so")

_KIND_LABEL = {"rpath": "DT_RPATH", "runpath": "DT_RUNPATH", "lc_rpath": "LC_RPATH"}


@dataclass(frozen=True)
class _RpathVerdict:
    """What one rpath entry means on a user's machine."""

    severity: str  # "error" | "warning"
    case: str  # a short sentence of why, shared by every entry of the same case


@cache
def _globs(patterns: tuple[str, ...]) -> tuple[Glob, ...]:
    """A module constant's globs, compiled once."""
    return tuple(Glob(p, cross_slash=True) for p in patterns)


@cache
def _piece(pattern: str) -> str:
    """The longest run of plain characters of a glob: text any match contains (a cheap test
    before the glob's own, for the many entries of a hostile binary)."""
    if "{" in pattern:  # (alternatives: no piece is required)
        return ""
    return max(re.split(r"[*?\[\]!]", pattern), key=len)


def _preloaded(name: str) -> bool:
    return any(g.match(name) for g in _globs(INTERPRETER_LOADED))


def _reach(resolved: dict[str, dict[str, list[Resolution]]], by_path: dict[str, Binary]
           ) -> dict[tuple[str, str, str], set[str]]:
    """rpath entry (binary, kind, entry) -> the statuses of the lookups that consult it."""
    reached: dict[tuple[str, str, str], set[str]] = {}
    spans: dict[tuple[int, str], tuple[SearchList, int]] = {}
    for path, per_arch in resolved.items():
        elf = by_path[path].format == "elf"
        for rs in per_arch.values():
            for r in rs:
                if elf and _preloaded(r.dependency.name):
                    continue
                status = "unresolved" if r.status == "unresolved" else "resolved"
                if isinstance(r.consulted, Consulted):  # (a shared list: its longest prefix per status)
                    key = (id(r.consulted.list), status)
                    have = spans.get(key)
                    if have is None or have[1] < r.consulted.n:
                        spans[key] = (r.consulted.list, r.consulted.n)
                    continue
                for entry in r.consulted:
                    reached.setdefault(entry, set()).add(status)
    for (_, status), (sl, n) in spans.items():
        for entry in Consulted(sl, n):
            reached.setdefault(entry, set()).add(status)
    return reached


def _rpath_verdict(entry: str, fmt: str, rules: Rules, reached: set[str]) -> _RpathVerdict | None:
    """The verdict on one rpath entry, by its consequence (None: nothing to report).

    error: a rule forbids it, or a lookup that succeeds reaches it and it points where a user
    without admin rights can place files (then anyone can put a library before the wheel's own).
    warning: every other absolute entry (a build tree: harmless while it does not exist on the
    user's machine, but it leaks the build machine and slows every load) and entries no lookup
    reaches. An entry reached only by lookups that fail is reported with that WA501."""
    forbid = next((g.pattern for g in rules.forbid_rpath if g.match(entry)), None)
    if forbid:
        return _RpathVerdict("error", f"forbidden by the rules (forbid-rpath {forbid})")
    if any(g.match(entry) for g in rules.allow_rpath):
        return None
    if fmt == "macho" and any(g.match(entry) for g in _globs(_MACOS_SYSTEM_RPATHS)):
        return None  # /usr/lib/swift and the like: the OS's own directories
    relative = entry and not entry.startswith("/")
    if relative and _is_relative_ok(entry, fmt):
        shape = next((g.pattern for g in _globs(BUILD_MACHINE_SHAPES) if _piece(g.pattern) in entry and g.match(entry)), None)
        if shape:
            return _RpathVerdict("warning", f"inside the installed tree but shaped like a build directory ({shape}),"
                                            " which the wheel does not ship")
        return None
    writable = entry == "" or relative or any(g.match(entry) for g in _globs(USER_WRITABLE))
    if writable:
        where = ("the current directory" if entry == "" or relative else
                 "a directory where any user can place files")
        origin = fmt == "macho" and entry.startswith(("$ORIGIN", "${ORIGIN}"))
        if origin:
            where = ("dyld does not expand $ORIGIN (ld.so's spelling; dyld's is @loader_path): a directory "
                     "relative to the current directory")
        if "resolved" in reached:
            return _RpathVerdict("error", f"{where}, searched before the library looked for is found: "
                                          "anyone who can write there can make this binary load other code")
        if "unresolved" in reached:
            if origin:  # (a porting mistake, never meant: an error whatever the WA501 of the lookup is)
                return _RpathVerdict("error", f"{where}, searched by a lookup that finds nothing else: anyone "
                                              "who can write there can make this binary load other code")
            return None  # the WA501 of that dependency names the route, this entry with it
        return _RpathVerdict("warning", f"{where}, but no lookup of this binary reaches it")
    if reached:
        return _RpathVerdict("warning", "an absolute directory of the build machine; the loader looks there "
                                        "first, harmless where it does not exist")
    return _RpathVerdict("warning", "an absolute directory of the build machine that no lookup reaches")


def external_rpaths(wheel: Wheel, links: Links) -> list[Finding]:
    """WA502 by consequence (:func:`_rpath_verdict`), one finding per cause: the entries of one
    verdict in one binary together, and the binaries with the same entries and verdict together."""
    rules, resolved = links.rules, links.resolved
    by_path = {b.path: b for b in wheel.libraries}
    reached = _reach(resolved, by_path)
    # binary -> (severity, case) -> [(kind, entry)]
    per_binary: dict[str, dict[tuple[str, str], list[tuple[str, str]]]] = {}
    for b in wheel.libraries:
        if not b.ok or b.format not in ("elf", "macho"):
            continue
        seen: set[tuple[str, str]] = set()
        for s in b.slices:
            for r in s.rpaths:
                if (r.kind, r.path) in seen:
                    continue
                seen.add((r.kind, r.path))
                v = _rpath_verdict(r.path, b.format, rules, reached.get((b.path, r.kind, r.path), set()))
                if v is not None:
                    per_binary.setdefault(b.path, {}).setdefault((v.severity, v.case), []).append((r.kind, r.path))
    groups: dict[tuple[str, str, tuple[tuple[str, str], ...]], list[str]] = {}
    for path, verdicts in per_binary.items():
        for (severity, case), entries in verdicts.items():
            groups.setdefault((severity, case, tuple(entries)), []).append(path)
    out: list[Finding] = []
    for (severity, case, shared), paths in groups.items():
        shown = ", ".join(f"{_KIND_LABEL[k]} '{e}'" for k, e in shared)
        who = paths[0] if len(paths) == 1 else f"{len(paths)} binaries ({examples(paths, 2)})"
        plural = "entries" if len(shared) > 1 else "entry"
        out.append(Finding("WA502", f"{who}: rpath {plural} {shown}: {case}",
                           subject=shared[0][1] if len(shared) == 1 else shown, paths=sorted(paths),
                           rule=RULE, severity_override=severity))  # type: ignore[arg-type]
    return out
