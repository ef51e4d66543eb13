"""An installed environment audited as one install (``check --env``): every distribution of a
site-packages scanned from the files its RECORD lists (:mod:`wheelaudit.archive.installed`: only
its native binaries are read) and merged as ``check --together`` merges wheels
(:func:`wheelaudit.scanner.together.merge_wheels`), so the same wheels give the same findings whether
they are given to ``--together`` or installed and given to ``--env``.

What differs from wheels, by the nature of an install:

- a distribution is named by its ``.dist-info`` folder (``mlx-0.20.0.dist-info``), its tags are
  its ``WHEEL`` file's ``Tag`` lines;
- two distributions whose RECORDs list the same path with different hashes are the WA002 of two
  wheels shipping it (one overwrote the other); the hashes compared are RECORD's, the file on
  disk being one;
- only what is read is held to RECORD: a native binary whose bytes differ from its RECORD row is
  a WA002, a pure-Python file is never opened;
- two ``.dist-info`` of one distribution (an interrupted upgrade) are a WA002; the highest
  version's files are audited.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from wheelaudit.archive.installed import (Environment, InstalledDist, NotAnEnvironment, installed_dists, locate,
                                          unlisted_native)
from wheelaudit.model.interest import Interest
from wheelaudit.model.defects import Defect
from wheelaudit.model.wheel import Wheel
from wheelaudit.scanner import scan
from wheelaudit.scanner.together import TogetherWheel, merge_wheels

__all__ = ["scan_environment", "NotAnEnvironment"]


def scan_environment(target: str | os.PathLike[str] | None, *, strings: Iterable[bytes] = (),
                     interest: Interest | None = None, jobs: int | None = None,
                     budget=None) -> tuple[TogetherWheel, list[str]]:
    """Scan the environment ``target`` means (:func:`wheelaudit.archive.installed.locate`; None:
    this interpreter's) as one install. Returns the merged tree, whose ``path`` is the
    site-packages folder and whose ``members`` are the distributions, and notes (what was
    skipped). Raises :class:`NotAnEnvironment` when there is nothing to audit."""
    env = locate(target)
    notes = env.notes
    dists: list[InstalledDist] = []
    problems: list[Defect] = []
    for site in env.sites:
        here = installed_dists(site, notes, problems)
        problems += unlisted_native(site, here)
        dists += here
    dists, twice = _one_version_each(dists)
    if not dists:
        raise NotAnEnvironment(f"{_where(env)}: no installed distribution with a RECORD to audit"
                               + (f" ({'; '.join(notes)})" if notes else ""))
    needles = tuple(strings)
    record: dict[Path, dict[str, tuple[str, str]]] = {}
    scanned: list[Wheel] = []
    for d in dists:
        record[d.path] = d.record
        sizes = {m.path: (m.size, m.size) for m in d.all_members}
        w = scan(d.path, strings=needles, interest=interest, jobs=jobs, source=d, budget=budget)
        w.sizes = sizes
        scanned.append(w)

    def digests(w: Wheel, paths: set[str]) -> dict[str, str]:
        rows = record.get(w.path, {})
        return {p: rows[p][0] for p in paths if p in rows}

    merged = merge_wheels(scanned, digests=digests)
    merged.path = env.path
    merged.defects += problems + twice
    return merged, notes


def _where(env: Environment) -> str:
    return " and ".join(str(s.path) for s in env.sites)


def _version(d: InstalledDist) -> tuple[int, Version | str]:
    text = (d.dist_info or "")[: -len(".dist-info")].rsplit("-", 1)[-1]
    try:
        return 1, Version(text)
    except InvalidVersion:
        return 0, text


def _one_version_each(dists: list[InstalledDist]) -> tuple[list[InstalledDist], list[Defect]]:
    """One ``.dist-info`` per distribution: the highest version's, and a WA002 defect for the others."""
    by: dict[str, list[InstalledDist]] = {}
    for d in dists:
        name = (d.dist_info or "")[: -len(".dist-info")].rsplit("-", 1)[0]
        by.setdefault(canonicalize_name(name), []).append(d)
    keep: list[InstalledDist] = []
    defects: list[Defect] = []
    for name, group in by.items():
        group.sort(key=_version)
        kept = group[-1]
        keep.append(kept)
        for other in group[:-1]:
            other.close()
            defects.append(Defect(
                "WA002",
                f"{name} is installed twice, as {other.dist_info} and {kept.dist_info} (an interrupted upgrade, or"
                f" two installers): their files overwrite each other and importers see either. The audit reads"
                f" {kept.dist_info}; reinstall {name} to leave one",
                subject=other.dist_info or "", paths=[f"{other.dist_info}/RECORD", f"{kept.dist_info}/RECORD"]))
    order = {id(d): i for i, d in enumerate(dists)}
    keep.sort(key=lambda d: order[id(d)])
    return keep, defects
