"""Wheels installed together: several wheels laid out as one ``site-packages``.

Many release failures only show when two wheels share a process: PyTorch and scikit-learn each
bundling an OpenMP runtime (``OMP: Error #15``), ExecuTorch's statically bundled MLX beside
``mlx-metal``'s ``libmlx.dylib``. :func:`scan_together` scans each wheel and merges the results
into one :class:`TogetherWheel`, which every check then treats like one wheel:

- libraries and files are unioned (their paths are already relative to site-packages; ``.data``
  members land where the installer puts them); a component defined once in each wheel has two
  definers, WA201, and messages name the wheel of each path (:attr:`Wheel.origins`);
- linkage resolves inside the merged tree, so a dependency of one wheel that another wheel ships
  is found there (no ``provided-by`` needed); when it is, the needing wheel must *require* the
  providing one (WA505), or installing it alone breaks;
- ``beside`` and file counts see every wheel's files;
- each wheel keeps its own scan defects (WA001, WA002) and its own platform and tag checks
  (WA503, WA504, WA601, WA602: a binary is held to the tags of the wheel it ships in, not to
  another wheel's), each message prefixed with the wheel's file name;
- two wheels that ship the same path with different contents are recorded (:attr:`TogetherWheel.overwritten`,
  a WA002: one overwrites the other at install, whose RECORD then no longer matches); identical
  copies are one file once installed and are not reported; the tree keeps the copy of the wheel
  given first;
- wheels that no platform can install together (a macOS wheel with a Linux one) are a WA503.

The merge records facts only: the findings are made when the tree is evaluated, by
:mod:`wheelaudit.checks.together`.

The same distribution given twice (two versions of one project) is not an install: it raises
:class:`NotTogether` (a :class:`~wheelaudit.archive.NotAWheel`, exit 2 on the command line).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from packaging.utils import canonicalize_name

from wheelaudit.model.traits import WheelTraits
from wheelaudit.model.interest import Interest
from wheelaudit.checks.resolution import cross_wheel_links, installed_path
from wheelaudit.model.defects import Overwrite
from wheelaudit.model.together import TogetherWheel
from wheelaudit.model.wheel import Wheel
from wheelaudit.scanner import scan
from wheelaudit.archive import NotAWheel, open_wheel
from wheelaudit.archive.load_order import ImportEvents

__all__ = ["scan_together", "merge_wheels", "TogetherWheel", "NotTogether"]


#: ``(wheel, paths) -> {path: "sha256=..."}``: the hashes of a wheel's members that another wheel ships too
Digests = Callable[[Wheel, set[str]], dict[str, str]]


class NotTogether(NotAWheel):
    """The paths cannot be laid out as one install (the same distribution twice, no paths)."""


def label(w: Wheel) -> str:
    """How findings name a member: its file name (``torch-2.14.1-cp311-…whl``)."""
    return w.path.name or str(w.path)


def scan_together(paths: Sequence[str | os.PathLike[str]], *, strings: Iterable[bytes] = (),
                  interest: Interest | None = None, jobs: int | None = None, budget=None) -> TogetherWheel:
    """Scan each wheel (``.whl`` or unpacked tree) and merge them into one install.

    ``strings``, ``interest``, ``jobs`` and ``budget`` (the run's) are passed to :func:`wheelaudit.scan`. Raises
    :class:`~wheelaudit.archive.NotAWheel` for a path that is not a wheel and
    :class:`NotTogether` when the wheels cannot be one install (the same distribution twice).
    """
    if not paths:
        raise NotTogether("no wheels given")
    needles = tuple(strings)
    scanned: list[Wheel] = []
    seen: dict[str, Wheel] = {}
    for p in paths:
        w = scan(p, strings=needles, interest=interest, jobs=jobs, budget=budget)
        _check_distinct(w, seen)
        scanned.append(w)
    return merge_wheels(scanned)


def _common_interest(interests: list[Interest | None]) -> Interest | None:
    """What every member's tables answer: None (all kept) when no member was narrowed."""
    narrowed = [i for i in interests if i is not None]
    if not narrowed:
        return None
    if all(i == narrowed[0] for i in narrowed):
        return narrowed[0]
    return Interest(frozenset.intersection(*(i.hints for i in narrowed)), all(i.all_mangled for i in narrowed),
                    all(i.everything for i in narrowed))


def _check_distinct(w: Wheel, seen: dict[str, Wheel]) -> None:
    key = canonicalize_name(w.name) if w.name else str(w.path)
    other = seen.get(key)
    if other is not None:
        raise NotTogether(
            f"{other.path} and {w.path} are both the distribution {w.name or key}"
            f" ({other.version or '?'} and {w.version or '?'}): one install holds one version of a"
            " distribution, so they cannot be audited together")
    seen[key] = w


def merge_wheels(wheels: Sequence[Wheel], *, digests: Digests | None = None) -> TogetherWheel:
    """Merge already scanned wheels (:func:`wheelaudit.scan`) into one install; see the module
    docstring for what is kept and what is recorded. The wheels are not modified.
    ``digests(wheel, paths)``: the RECORD-style hashes of a wheel's members where two wheels ship
    the same path (default: read again from each wheel; installed distributions, which share
    the one file on disk, answer from their RECORD)."""
    if not wheels:
        raise NotTogether("no wheels given")
    seen: dict[str, Wheel] = {}
    for w in wheels:
        _check_distinct(w, seen)
    labels = [label(w) for w in wheels]

    # the installed tree: installed path -> (member index, archive path)
    owner: dict[str, tuple[int, str]] = {}
    shadowed: dict[tuple[int, str], list[tuple[int, str]]] = {}  # kept (i, path) -> dropped copies
    for i, w in enumerate(wheels):
        for f in w.files:
            inst = installed_path(f)
            if inst in owner:
                shadowed.setdefault(owner[inst], []).append((i, f))
            else:
                owner[inst] = (i, f)
    dropped: set[tuple[int, str]] = set()
    overwritten = _collisions(wheels, labels, shadowed, dropped, digests or _digests) if shadowed else []

    files: list[str] = []
    libraries = []
    origins: dict[str, str] = {}
    sizes: dict[str, tuple[int, int]] = {}
    for i, (w, lab) in enumerate(zip(wheels, labels, strict=True)):
        for f in w.files:
            if (i, f) not in dropped:
                files.append(f)
                if f in w.sizes:
                    sizes.setdefault(f, w.sizes[f])
                origins.setdefault(f, lab)
        for b in w.libraries:
            if (i, b.path) not in dropped:
                libraries.append(b)
                origins.setdefault(b.path, lab)

    tags = list(dict.fromkeys(t for w in wheels for t in w.tags))
    traits = WheelTraits(
        platforms=tuple(sorted({p for w in wheels for p in w.traits.platforms})),
        os=frozenset(o for w in wheels for o in w.traits.os),
        arch=frozenset(a for w in wheels for a in w.traits.arch),
        version="+".join(w.version for w in wheels),
        pythons=tuple(sorted({p for w in wheels for p in w.traits.pythons})),
        name="+".join(canonicalize_name(w.name) for w in wheels if w.name),
    )
    first = wheels[0].path
    path = first if len(wheels) == 1 else first.parent / "+".join(labels)
    merged = TogetherWheel(
        path=path,
        name="+".join(w.name for w in wheels),
        version="+".join(w.version for w in wheels),
        tags=tags,
        traits=traits,
        files=sorted(files),
        libraries=sorted(libraries, key=lambda b: b.path),
        requires_dist=list(dict.fromkeys(r for w in wheels for r in w.requires_dist)),
        strings=tuple(dict.fromkeys(s for w in wheels for s in w.strings)),
        interest=_common_interest([w.interest for w in wheels]),
        origins=origins,
        members=list(wheels),
        surface=_merged_surface(wheels, sorted(files)),
        sizes=sizes,
        # a folder a package adds to the DLL search at import time serves the whole process once
        # that package is imported (torchvision imports torch, whose torch/lib it then loads from)
        dll_directories=list(dict.fromkeys(d for w in wheels for d in w.dll_directories)),
        preloaded_dlls=list(dict.fromkeys(d for w in wheels for d in w.preloaded_dlls)),
        import_events=ImportEvents.merged(w.import_events for w in wheels),
        labels=labels,
        overwritten=overwritten,
    )
    merged.cross_links = cross_wheel_links(merged)
    return merged


def _merged_surface(wheels: Sequence[Wheel], files: list[str]):
    """The members' consumer surfaces side by side, None when no member has one. Each was read
    against its own wheel; a path inside the installed prefix that its wheel does not ship is
    looked up again in the install the wheels make together (``files``): a target of one wheel
    may name a library another wheel ships (executorch's config naming torch's ``libc10``)."""
    surfaces = [w.surface for w in wheels if w.surface is not None]
    if not surfaces:
        return None
    from wheelaudit.surface import Surface
    from wheelaudit.model.surface import SITE, Layout, Ref

    layout = Layout(files)

    def again(ref):
        if not isinstance(ref, Ref) or ref.kind != "wheel" or ref.exists or not ref.text.startswith("<site-packages>/"):
            return ref
        found = layout.ref(SITE + ref.text[len("<site-packages>"):])
        return found if found.exists else ref

    out = Surface()  # (copies: the members' own surfaces stay as their wheels read them)
    for s in surfaces:
        out.targets += [replace(t, files={c: again(r) for c, r in t.files.items()},
                                implibs={c: again(r) for c, r in t.implibs.items()},
                                include_dirs=[again(r) for r in t.include_dirs],
                                link_libraries=[again(r) for r in t.link_libraries],
                                other_paths=[again(r) for r in t.other_paths]) for t in s.targets]
        out.configs += [replace(c, variables=[replace(v, ref=again(v.ref)) for v in c.variables])
                        for c in s.configs]
        out.export_files.update(s.export_files)
        out.pkgconfig += [replace(pc, lib_dirs=[again(r) for r in pc.lib_dirs],
                                  include_dirs=[again(r) for r in pc.include_dirs]) for pc in s.pkgconfig]
        out.problems += s.problems
        out.texts.update(s.texts)
    return out


# --------------------------------------------------------------------------------------------
# The same path in two wheels


def _digests(w: Wheel, members: Iterable[str]) -> dict[str, str]:
    """RECORD-style sha256 of the given members of ``w``, read again from the wheel."""
    want = set(members)
    out: dict[str, str] = {}
    try:
        with open_wheel(w.path) as src:
            for m in src.members:
                if m.path in want:
                    md = src.reader.read(m)
                    out[m.path] = md.digest if md.error is None else f"unreadable: {md.error}"
    except (NotAWheel, OSError) as exc:  # pragma: no cover - the wheel was just read
        for p in want:
            out.setdefault(p, f"unreadable: {exc}")
    return out


def _collisions(wheels: Sequence[Wheel], labels: list[str], shadowed: dict[tuple[int, str], list[tuple[int, str]]],
                dropped: set[tuple[int, str]], digests: Digests) -> list[Overwrite]:
    """The paths installed twice with different contents (the dropped copies added to ``dropped``)."""
    per_wheel: dict[int, set[str]] = {}
    for kept, others in shadowed.items():
        for i, p in [kept, *others]:
            per_wheel.setdefault(i, set()).add(p)
    hashes = {i: digests(wheels[i], ps) for i, ps in per_wheel.items()}
    out: list[Overwrite] = []
    for (ki, kp), others in sorted(shadowed.items()):
        inst = installed_path(kp)
        for oi, op in others:
            dropped.add((oi, op))
            a, b = hashes[ki].get(kp), hashes[oi].get(op)
            if a is not None and a == b and not a.startswith("unreadable"):
                continue  # the same bytes: one file once installed
            out.append(Overwrite(inst, labels[ki], kp, labels[oi], op))
    return out
