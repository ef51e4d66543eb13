"""What a path is: a ``.whl`` (read in place), an unpacked or installed tree, a folder of wheels,
or something refused (an sdist, a zip that is not a wheel)."""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from wheelaudit.model.defects import Defect
from wheelaudit.archive.errors import NotAWheel, NoWheels
from wheelaudit.archive.limits import MAX_MEMBERS
from wheelaudit.archive.members import MemberError, MemberReader
from wheelaudit.archive.metadata import WheelInfo, wheel_info
from wheelaudit.archive.record import RECORD_LIMIT, RecordChecker, parse_record
from wheelaudit.archive.zipdir import Member, read_zip_directory

#: file names of source distributions (refused: they hold no built code to audit)
SDIST_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")


class WheelSource:
    """An opened wheel: its members, its identity, and a reader for its members' bytes."""

    path: Path
    root: Path | None  # a tree's root; None for a .whl
    members: list[Member]
    refused: set[str]
    dist_info: str | None

    def __init__(self, path: Path, root: Path | None, members: list[Member], problems: list[Defect],
                 refused: set[str]) -> None:
        self.path, self.root, self.members, self.refused = path, root, members, refused
        self.by_path = {m.path: m for m in members}
        self.dist_info = dist_info_dir(m.path for m in members)
        self.reader = MemberReader(path, root)
        self._problems = problems

    @functools.cached_property
    def info(self) -> WheelInfo:
        """Name, version, tags and Requires-Dist (WHEEL and METADATA read on first use)."""
        return wheel_info(self.path, self.dist_info, self.read_text, self._problems)

    @property
    def is_zip(self) -> bool:
        return self.root is None

    def files(self) -> list[str]:
        return [m.path for m in self.members]

    def read_text(self, path: str, limit: int = 16 << 20) -> tuple[str | None, str | None]:
        """``(text, None)``, ``(None, None)`` when there is no such member, or ``(None, why)``."""
        m = self.by_path.get(path)
        if m is None:
            return None, None
        try:
            return self.reader.read_whole(m, limit).decode("utf-8", "replace"), None
        except MemberError as exc:
            return None, str(exc).removeprefix("cannot read: ")

    def record_checker(self) -> RecordChecker:
        where = f"{self.dist_info}/RECORD" if self.dist_info else None
        text, why = self.read_text(where, RECORD_LIMIT) if where else (None, None)
        if why is None and text is None and where in self.by_path:  # (larger than the limit)
            why = f"it is larger than {RECORD_LIMIT} bytes and was not read"
        return RecordChecker(self.dist_info, text, why, zip=self.is_zip, refused=self.refused)

    def close(self) -> None:
        self.reader.close()

    def __enter__(self) -> WheelSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def dist_info_dir(files: Iterable[str]) -> str | None:
    tops = dist_info_dirs(files)
    return tops[0] if tops else None


def dist_info_dirs(files: Iterable[str]) -> list[str]:
    return sorted({top for f in files if ".dist-info/" in f for top in (f.split("/", 1)[0],)
                   if top.endswith(".dist-info")})


def open_wheel(path: str | os.PathLike[str]) -> WheelSource:
    """Open a ``.whl`` file or an unpacked/installed tree. Raises :class:`NotAWheel` (an sdist, a
    zip without exactly one ``.dist-info`` directory, a tree that is not a wheel, ...)."""
    p = Path(path)
    if p.is_dir():
        try:
            root, members, problems = _tree_members(p)
        except OSError as exc:
            raise NotAWheel(f"{p}: cannot read directory ({exc})") from None
        return WheelSource(p, root, members, problems, set())
    if not p.exists():
        raise NotAWheel(f"{p}: no such file or directory")
    if not p.is_file():
        raise NotAWheel(f"{p}: not a file or directory")
    if p.name.lower().endswith(SDIST_SUFFIXES) or _starts_with(p, (b"\x1f\x8b", b"BZh", b"\xfd7zXZ")):
        raise NotAWheel(f"{p}: a source distribution (sdist), not a wheel: build the wheel and check that")
    directory = read_zip_directory(p)
    names = [m.path for m in directory.members]
    tops = dist_info_dirs(names)
    if len(tops) != 1:
        if not tops and _is_zip_sdist(names):
            raise NotAWheel(f"{p}: a source distribution (sdist, PKG-INFO at its top), not a wheel: "
                            "build the wheel and check that")
        raise NotAWheel(f"{p}: a wheel has exactly one *.dist-info directory, this zip has "
                        + (f"{len(tops)} ({', '.join(tops)})" if tops else "none"))
    return WheelSource(p, None, directory.members, directory.problems, directory.refused)


def _starts_with(p: Path, magics: tuple[bytes, ...]) -> bool:
    try:
        with open(p, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return False
    return head.startswith(magics)


def _is_zip_sdist(names: list[str]) -> bool:
    """PKG-INFO at the top of the archive, or at the top of its one top-level directory."""
    return any(n == "PKG-INFO" or (n.count("/") == 1 and n.endswith("/PKG-INFO")) for n in names)


def _tree_members(path: Path) -> tuple[Path, list[Member], list[Defect]]:
    """The regular files of a tree, walked without recursion (any depth), in a stable order. A
    folder that cannot be listed or an entry that cannot be looked at (no permission, a path past
    the system's limit) is a WA002 finding: what cannot be audited is never a silent pass."""
    root, only = _dir_root(path)
    members: list[Member] = []
    problems: list[Defect] = []

    def cannot(rel: str, what: str, exc: OSError) -> None:
        problems.append(Defect("WA002", f"{rel or '.'}: cannot {what} ({exc.strerror or exc}); what it holds "
                                "was not audited", subject=rel or ".", paths=[rel] if rel else []))

    stack = [""]  # folders to list, relative to root (POSIX)
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            cannot(rel_dir, "list this folder", exc)
            continue
        subdirs = []
        for e in entries:
            rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
            if only is not None and not rel_dir and e.name not in only:
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError as exc:
                cannot(rel, "look at this entry", exc)
                continue
            if stat.S_ISDIR(st.st_mode):
                if e.name != "__pycache__":
                    subdirs.append(rel)
            elif stat.S_ISREG(st.st_mode):
                members.append(Member(rel, st.st_size, st.st_size))
                if len(members) > MAX_MEMBERS:
                    raise NotAWheel(f"{path}: more than {MAX_MEMBERS} files")
            # (links in an installed tree are not wheel members)
        stack.extend(reversed(subdirs))  # (depth first, in name order: as a top-down os.walk)
    return root, members, problems


def read_small_file(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (links followed) of at most ``limit``
    bytes, else None. Never blocks (a FIFO, a device such as ``/dev/zero``, are not regular files,
    and the file is opened non-blocking) and never reads more than ``limit`` bytes (a sparse file
    that claims gigabytes is refused by its size)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # (swapped since the first look)
                return None
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(limit + 1)
        finally:
            os.close(fd)
    except OSError:
        return None
    return data if len(data) <= limit else None


def _dir_root(path: Path) -> tuple[Path, set[str] | None]:
    """The tree to scan, and (for an installed package) the top-level names that belong to it."""
    if any(p.suffix == ".dist-info" for p in path.iterdir() if p.is_dir()):
        return path, None
    parent = path.parent
    for dist in sorted(parent.glob("*.dist-info")):
        raw = read_small_file(dist / "RECORD", RECORD_LIMIT)
        if raw is None:
            continue
        try:
            tops = {p.split("/", 1)[0] for p in parse_record(raw.decode("utf-8", "replace"))}
        except ValueError:
            continue
        if path.name in tops:
            # the distribution's files are every top-level entry its RECORD lists (numpy and
            # numpy.libs), not only the one named
            return parent, {t for t in tops if t and t != ".."} | {dist.name}
    if not any(path.iterdir()) and path.suffix != ".whl":  # (an empty dist/; not an unpacked wheel's folder)
        raise NoWheels(f"{path}: no wheels found (the folder is empty)")
    raise NotAWheel(f"{path}: no *.whl file in it, a directory without a *.dist-info, and no RECORD in {parent} "
                    "lists it: neither an unpacked wheel nor an installed package")


def _record_lists(dist_info: Path, names: list[str]) -> bool:
    """Whether the RECORD of ``dist_info`` lists each of ``names`` (files at the tree's top)."""
    raw = read_small_file(dist_info / "RECORD", RECORD_LIMIT)
    if raw is None:
        return False
    try:
        listed = set(parse_record(raw.decode("utf-8", "replace")))
    except ValueError:
        return False
    return all(n in listed for n in names)


def expand_inputs(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The wheels that command-line paths mean: a folder that holds ``.whl`` files and is not
    itself a wheel (no ``*.dist-info`` inside, which an unpacked or installed tree has) means
    those wheels, sorted by name; every other path means itself."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            try:
                children = sorted(p.iterdir())
            except OSError as exc:
                raise NotAWheel(f"{p}: cannot read directory ({exc.strerror or exc})") from None
            wheels = [c for c in children if c.suffix == ".whl" and c.is_file()]
            trees = [c.name for c in children if c.suffix == ".dist-info" and c.is_dir()]
            if wheels and trees and not _record_lists(p / trees[0], [w.name for w in wheels]):
                # (a stray .dist-info must not hide the wheels beside it; an unpacked wheel that
                # ships .whl files lists them in its RECORD)
                raise NotAWheel(f"{p}: holds wheels ({wheels[0].name}{', ...' if len(wheels) > 1 else ''}) and "
                                f"{trees[0]}, whose RECORD does not list them: it is both a folder of wheels and "
                                "an unpacked wheel; name the wheels one by one, or remove the stray folder")
            if wheels and not trees:
                out.extend(wheels)
                continue
        out.append(p)
    return out
