"""``check --release``: the wheels of one release against each other (WA811-WA813).

One distribution name and one version across the wheels (WA812); every platform of
``[release] platforms`` served by a wheel, and no wheel for a platform it does not list (WA813);
the same Python modules, extension modules (by import name) and shared libraries (by folder
and name less version, suffix and repair hash) on every platform, except what ``[release] only``
or a component's ``when`` declares platform-specific, and then exactly where the condition holds
(WA811). Facts only.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Sequence

from wheelaudit.checks.extension import is_extension_module
from wheelaudit.checks.release.abi import import_name
from wheelaudit.checks.release.names import library_stem, vendored_by
from wheelaudit.model.finding import Finding
from wheelaudit.model.messages import examples, plural
from wheelaudit.model.wheel import Wheel
from wheelaudit.model.traits import WheelTraits

#: how many module names a WA811 message shows per group (JSON lists all of them)
SHOWN = 6


def wheel_label(w: Wheel) -> str:
    """A wheel as a release engineer names it: its tags (``cp311-cp311-macosx_11_0_arm64``),
    from its file name when that is a wheel's, else its tags joined."""
    name = w.path.name
    if name.endswith(".whl") and name.count("-") >= 4:
        return "-".join(name[:-4].split("-")[-3:])
    return ".".join(map(str, w.tags)) or name


def _canonical(name: str) -> str:
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


def check_versions(wheels: Sequence[Wheel]) -> list[Finding]:
    """WA812: the wheels that disagree with the release's name and version (the most common
    pair; on a tie, the highest version)."""
    from packaging.version import InvalidVersion, Version

    def order(v: str):
        try:
            return (1, Version(v))
        except InvalidVersion:
            return (0, v)

    groups: dict[tuple[str, str], list[Wheel]] = {}
    for w in wheels:
        groups.setdefault((_canonical(w.name), w.version), []).append(w)
    if len(groups) < 2:
        return []
    count = Counter({k: len(v) for k, v in groups.items()})
    top = max(count, key=lambda k: (count[k], order(k[1])))
    out = []
    for (name, version), ws in sorted(groups.items()):
        if (name, version) == top:
            continue
        what = "version" if name == top[0] else "name and version" if version != top[1] else "name"
        out.append(Finding(
            "WA812", f"{plural(len(ws), 'wheel')} of {name} {version} in a release of {top[0]} {top[1]} "
                     f"({plural(len(groups[top]), 'wheel')}): the {what} differs: "
                     + ", ".join(w.path.name for w in ws),
            subject=f"{name} {version}", paths=[str(w.path) for w in ws], rule="release"))
    return out


def _serves(wheel_platform: str, listed: str) -> bool:
    """Whether a wheel of this platform tag installs on the listed platform: the same family and
    architecture, at a policy or OS version no newer than the listed one."""
    from wheelaudit.platforms.tags import parse_platform

    if wheel_platform == listed:
        return True
    w, p = parse_platform(wheel_platform), parse_platform(listed)
    if w.os is None or p.os is None or w.family != p.family:
        return False
    if not set(p.archs) <= set(w.archs) and w.arch_label != p.arch_label:
        return False
    return not w.version or not p.version or w.version <= p.version


def check_platforms(wheels: Sequence[Wheel], platforms: Sequence[str]) -> list[Finding]:
    """WA813: a listed platform no wheel serves (error); a wheel that serves no listed platform
    (warning)."""
    out = []
    plats = {id(w): w.platform_tags for w in wheels}
    for listed in platforms:
        if not any(_serves(p, listed) for w in wheels for p in plats[id(w)]):
            out.append(Finding("WA813", f"no wheel for {listed}, which [release] platforms lists "
                                        f"({plural(len(wheels), 'wheel')} given)",
                               subject=listed, rule="release"))
    for w in wheels:
        if plats[id(w)] and not any(_serves(p, listed) for p in plats[id(w)] for listed in platforms):
            f = Finding("WA813", f"{w.path.name} is for {', '.join(plats[id(w)])}, which [release] platforms "
                                 f"does not list ({', '.join(platforms)})",
                        subject=", ".join(plats[id(w)]), paths=[str(w.path)], rule="release",
                        hint="add the platform to [release] platforms, or do not upload the wheel")
            f.severity_override = "warning"
            out.append(f)
    return out


def _python_module(path: str) -> str | None:
    """The import name of a Python source file of the wheel (``pkg/sub/mod.py`` → ``pkg.sub.mod``),
    None for anything else (metadata, data, scripts)."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if len(parts) > 2 and parts[0].endswith(".data") and parts[1] in ("platlib", "purelib"):
        parts = parts[2:]
    if parts[0].endswith((".dist-info", ".data")) or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def contents(w: Wheel) -> dict[str, tuple[str, str]]:
    """What must ship everywhere, keyed so that platforms compare: ``module:pkg.mod`` (Python
    source), ``extension:pkg._ext`` (import name), ``library:pkg/lib/libcore`` (folder and name
    less version, suffix and repair hash; vendored libraries left out) → (kind, a path of it)."""
    out: dict[str, tuple[str, str]] = {}
    for f in w.files:
        mod = _python_module(f)
        if mod is not None:
            out[f"module:{mod}"] = ("Python module", f)
    for b in w.libraries:
        if b.kind in ("executable", "object") or vendored_by(b) is not None:
            continue
        if is_extension_module(b) and import_name(b.path):
            out[f"extension:{import_name(b.path)}"] = ("extension module", b.path)
            continue
        stem = library_stem(b.name)
        # (lib prefix aside: libfoo.so on Linux and macOS is foo.dll on Windows)
        key = posixpath.join(b.directory, stem[3:] if stem.startswith("lib") else stem)
        out[f"library:{key}"] = ("shared library", b.path)
    return out


def check_contents(wheels: Sequence[Wheel],
                   declared: Callable[[str], list[Callable[[WheelTraits], bool]]]) -> list[Finding]:
    """WA811 (see the module docstring). ``declared(path)``: the conditions under which rules
    declare a path to ship (empty when none declares it platform-specific); it is expected
    where any of them holds."""
    if len(wheels) < 2:
        return []
    per = [contents(w) for w in wheels]
    keys = sorted(set().union(*per))
    groups: dict[tuple[tuple[int, ...], str], list[tuple[str, str]]] = {}
    for key in keys:
        have = tuple(i for i, c in enumerate(per) if key in c)
        kind, path = next(per[i][key] for i in have)
        if len(have) == len(wheels):
            continue
        paths = [per[i][key][1] for i in have]
        conds = [c for p in paths for c in declared(p)]
        note = ""
        if conds:
            expected = tuple(i for i, w in enumerate(wheels) if any(c(w.traits) for c in conds))
            if expected == have:
                continue
            note = "declared platform-specific, but ships where its condition does not hold or lacks where it does"
        groups.setdefault((have, note), []).append((key.split(":", 1)[1], path))
    out = []
    labels = [wheel_label(w) for w in wheels]
    for (have, note), items in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        lack = [labels[i] for i in range(len(wheels)) if i not in have]
        names = [n for n, _ in items]
        shown = examples(names, SHOWN, sort=False)
        msg = (f"{shown} ship{'s' if len(names) == 1 else ''} in {', '.join(labels[i] for i in have) or 'no wheel'} "
               f"and not in {', '.join(lack) or 'none'}")
        if note:
            msg += f" ({note})"
        out.append(Finding("WA811", msg, subject=names[0] if len(names) == 1 else f"{len(names)} modules",
                           paths=[p for _, p in items], symbols=names, rule="release"))
    return out


def release_findings(wheels: Sequence[Wheel], platforms: Sequence[str],
                     declared: Callable[[str], list[Callable[[WheelTraits], bool]]]) -> list[Finding]:
    """WA811-WA813 over one release's wheels."""
    out = check_versions(wheels)
    if platforms:
        out += check_platforms(wheels, platforms)
    out += check_contents(wheels, declared)
    return out
