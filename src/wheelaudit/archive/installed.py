"""An installed environment: which ``site-packages`` a path means, and each distribution installed
there, opened like an unpacked wheel whose members are the files its ``RECORD`` lists.

Nothing is executed: an interpreter's path is only a place in a file system. Its
``site-packages`` is derived from where it lives (``<prefix>/bin/python3.11`` ->
``<prefix>/lib/python3.11/site-packages``; ``<prefix>/Scripts/python.exe`` or
``<prefix>/python.exe`` -> ``<prefix>/Lib/site-packages``), the version from its file name or the
venv's ``pyvenv.cfg``. A symbolic link is not followed (a venv's ``bin/python`` links to its base
interpreter, whose packages are not the venv's).

Of an installed distribution only what can be native is opened: the files its RECORD lists are
``lstat``-ed, those whose suffix says Python or text (:data:`NEVER_NATIVE`) are never opened, the
others have their first bytes looked at, and only native binaries become members to read. A
distribution of pure Python costs its RECORD, WHEEL and METADATA.

What RECORD says and the disk does not agree with (what cannot be audited is a finding, never a
pass or a note alone):

- no RECORD, or one that is a link, over its size limit, or cannot be read or parsed: the
  distribution is not audited, a WA002;
- a file RECORD lists that is not installed: one WA002 per distribution, naming the files;
- a path that leaves the install prefix (``../../../../etc/x``, an absolute path): not read, a
  note (a ``pip install --target`` folder's scripts do); one that stays inside it (``../../../bin/tool`` from ``lib/python3.11/site-packages``) is
  a file of the install, named by that relative path (as the linkage checks name a wheel's
  ``.data/scripts`` member once installed);
- a listed path that is a symbolic link or not a regular file: not read, a note, and a WA002 when
  its name is a native binary's (``.so``, ``.dylib``, ``.pyd``, ...);
- a native binary (by its name: ``.so``, ``.dylib``, ``.pyd``, ...) in a distribution's folders
  that no RECORD lists (:func:`unlisted_native`): not audited, a WA002.
"""

from __future__ import annotations

import configparser
import os
import posixpath
import re
import stat
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from wheelaudit.archive.errors import NotAWheel
from wheelaudit.archive.names import unsafe_member_name
from wheelaudit.archive.record import RECORD_LIMIT, RecordChecker
from wheelaudit.archive.source import WheelSource, read_small_file
from wheelaudit.archive.zipdir import Member
from wheelaudit.binary import MAGIC_SIZE, detect
from wheelaudit.model.defects import Defect
from wheelaudit.model.messages import examples, plural

__all__ = ["NotAnEnvironment", "Site", "Environment", "InstalledDist", "locate", "installed_dists", "NEVER_NATIVE"]

#: suffixes of files that are never opened to see whether they are native (Python, its bytecode
#: and stubs, text and metadata formats)
NEVER_NATIVE = frozenset({
    ".py", ".pyc", ".pyo", ".pyi", ".pyx", ".pxd", ".pxi", ".pth", ".typed",
    ".txt", ".md", ".rst", ".json", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".csv", ".html", ".css",
    ".js", ".h", ".hpp", ".c", ".cc", ".cpp", ".cmake", ".pc",
})

_PY_DIR = re.compile(r"python(\d+)\.(\d+)t?")


class NotAnEnvironment(NotAWheel):
    """The path is not a site-packages, a venv or an interpreter whose site-packages exists."""


@dataclass(frozen=True)
class Site:
    """A folder on ``sys.path`` holding ``*.dist-info``; ``prefix`` the install prefix above it,
    which RECORD's ``..`` paths may reach into and never leave."""

    path: Path
    prefix: Path


@dataclass
class Environment:
    """What ``check --env`` audits: one or more site folders (purelib and platlib), as one install."""

    sites: list[Site]
    notes: list[str] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.sites[0].path


def prefix_of(site: Path) -> Path:
    """``<prefix>/lib/python3.X/site-packages`` and ``<prefix>/Lib/site-packages`` (Windows) name
    their prefix; any other folder (a ``pip install --target`` folder) is its own prefix."""
    parent = site.parent
    if site.name in ("site-packages", "dist-packages"):
        if (_PY_DIR.fullmatch(parent.name) or parent.name == "python3") and parent.parent.name in ("lib", "lib64"):
            return parent.parent.parent
        if parent.name.lower() == "lib":
            return parent.parent
    return site


def _has_dist_info(folder: Path) -> bool:
    try:
        return any(c.name.endswith(".dist-info") and c.is_dir() for c in folder.iterdir())
    except OSError:
        return False


def _venv_version(prefix: Path) -> str | None:
    """``3.11`` from a venv's ``pyvenv.cfg`` (``version_info`` or ``version``), else None."""
    raw = read_small_file(prefix / "pyvenv.cfg", 64 << 10)  # (not a FIFO, a device, a sparse giant)
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string("[venv]\n" + text)
    except configparser.Error:
        return None
    for key in ("version_info", "version"):
        value = parser.get("venv", key, fallback="")
        m = re.match(r"\s*(\d+)\.(\d+)", value)
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    return None


def _sites_under(prefix: Path, version: str | None) -> list[Path]:
    """The site folders of a prefix: ``lib[64]/python3.X/site-packages`` (for ``version`` when
    known), ``Lib/site-packages``, Debian's ``lib/python3/dist-packages``; the same folder
    reached twice (``lib64`` a link to ``lib``) once."""
    found: list[Path] = []
    for lib in ("lib", "lib64"):
        base = prefix / lib
        if not base.is_dir():
            continue
        for d in sorted(base.iterdir()):
            m = _PY_DIR.fullmatch(d.name)
            if m and (version is None or f"{m.group(1)}.{m.group(2)}" == version) and (d / "site-packages").is_dir():
                found.append(d / "site-packages")
        if (base / "python3" / "dist-packages").is_dir():
            found.append(base / "python3" / "dist-packages")
    if (prefix / "Lib" / "site-packages").is_dir():
        found.append(prefix / "Lib" / "site-packages")
    out: list[Path] = []
    for p in found:
        if not any(_same(p, q) for q in out):
            out.append(p)
    return out


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _one_version(prefix: Path, sites: list[Path], what: str) -> list[Path]:
    versions = sorted({s.parent.name for s in sites if _PY_DIR.fullmatch(s.parent.name)})
    if len(versions) > 1:
        raise NotAnEnvironment(
            f"{what}: {prefix} holds the site-packages of several Pythons ({', '.join(versions)}): name one"
            f" (the interpreter {prefix}/bin/{versions[0]}, or its site-packages folder)")
    return sites


def locate(target: str | os.PathLike[str] | None) -> Environment:
    """The environment ``target`` means: None for the running interpreter's purelib and platlib
    (``sysconfig.get_paths()``); a folder holding ``*.dist-info`` (a site-packages, a ``pip
    install --target`` folder); a venv or prefix root; an interpreter's path (never run). Raises
    :class:`NotAnEnvironment` saying what was looked for."""
    if target is None:
        paths = sysconfig.get_paths()
        found: list[Path] = []
        for key in ("purelib", "platlib"):
            p = Path(paths[key])
            if p.is_dir() and not any(_same(p, q) for q in found):
                found.append(p)
        if not found:
            raise NotAnEnvironment(f"this interpreter's site-packages ({paths['purelib']}) does not exist")
        prefix = Path(paths["data"])
        return Environment([Site(p, prefix if _inside(p, prefix) else p) for p in found])
    raw = Path(os.path.abspath(target))  # (absolute, links kept: a venv's python links elsewhere)
    if raw.is_dir():
        if _has_dist_info(raw):
            return Environment([Site(raw, prefix_of(raw))])
        sites = _sites_under(raw, _venv_version(raw))
        if sites:
            return Environment([Site(s, raw) for s in _one_version(raw, sites, str(target))])
        raise NotAnEnvironment(
            f"{target}: no *.dist-info in it, and no lib/python3.X/site-packages or Lib/site-packages under it:"
            " neither a site-packages folder nor a venv")
    if raw.is_file():
        folder = raw.parent
        prefix = folder.parent if folder.name in ("bin", "Scripts") else folder
        m = _PY_DIR.match(raw.name)
        version = f"{m.group(1)}.{m.group(2)}" if m else _venv_version(prefix)
        sites = _sites_under(prefix, version)
        if not sites:
            want = f"python{version}" if version else "python3.X"
            raise NotAnEnvironment(
                f"{target}: taken as an interpreter (it is not run), but its prefix {prefix} has no"
                f" lib/{want}/site-packages or Lib/site-packages")
        return Environment([Site(s, prefix) for s in _one_version(prefix, sites, str(target))])
    raise NotAnEnvironment(f"{target}: no such file or directory")


def _inside(p: Path, prefix: Path) -> bool:
    try:
        p.relative_to(prefix)
        return True
    except ValueError:
        return False


# --------------------------------------------------------------------------------------------
# the distributions of a site


class InstalledDist(WheelSource):
    """One installed distribution as a wheel source rooted at its site folder: ``files()`` are the
    installed files its RECORD lists, ``members`` (what a scan reads) only its native binaries.
    ``record`` is its RECORD, path -> (hash, size), keyed by the paths ``files()`` uses."""

    def __init__(self, site: Site, dist_info: str, checker: RecordChecker,
                 files: list[Member], native: list[Member], problems: list[Defect]) -> None:
        super().__init__(site.path / dist_info, site.path, native, problems, set())
        self.site = site
        self.dist_info = dist_info
        self.all_members = files
        self.by_path = {m.path: m for m in files}
        self._checker = checker
        assert checker.rows is not None
        self.record = checker.rows

    def files(self) -> list[str]:
        return [m.path for m in self.all_members]

    def record_checker(self) -> RecordChecker:
        """RECORD parsed once; the files not read (not native, or not installed: said once per
        distribution) are marked seen, so that only what is read is held to it."""
        self._checker.seen.update(self.record)
        self._checker.seen.difference_update(m.path for m in self.members)
        return self._checker


def installed_dists(site: Site, notes: list[str], problems: list[Defect] | None = None) -> list[InstalledDist]:
    """Every ``*.dist-info`` of ``site`` opened, sorted by name; a distribution that cannot be
    audited is a WA002 in ``problems``; what is only worth saying is in ``notes``."""
    problems = [] if problems is None else problems
    try:
        entries = sorted(site.path.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise NotAnEnvironment(f"{site.path}: cannot read directory ({exc.strerror or exc})") from None
    out: list[InstalledDist] = []
    eggs = [e.name for e in entries if e.name.endswith(".egg-info")]
    if eggs:
        notes.append(f"{site.path}: {len(eggs)} .egg-info distribution{'s' if len(eggs) != 1 else ''} not audited"
                     f" (no RECORD says which files are theirs): {examples(eggs, 5)}")
    for e in entries:
        if e.name.endswith(".dist-info") and e.is_dir():
            d = open_installed(site, e.name, notes, skips=problems)
            if d is not None:
                out.append(d)
    return out


def open_installed(site: Site, dist_info: str, notes: list[str],
                   skips: list[Defect] | None = None) -> InstalledDist | None:
    """One installed distribution, or None (a WA002 in ``skips``) when its RECORD is missing,
    not a regular file, over its limit or unreadable: its files cannot be told, so none is audited."""
    record = site.path / dist_info / "RECORD"

    def skipped(why: str) -> None:
        if skips is not None:
            skips.append(Defect("WA002", f"{dist_info} is not audited: {why}", subject=f"{dist_info}/RECORD",
                                    paths=[f"{dist_info}/RECORD"]))

    try:
        st = record.lstat()
        if stat.S_ISLNK(st.st_mode):
            skipped("its RECORD is a symbolic link, which is not followed: which files are its own is not known")
            return None
        if not stat.S_ISREG(st.st_mode):
            raise FileNotFoundError
        if st.st_size > RECORD_LIMIT:
            skipped(f"its RECORD is larger than {RECORD_LIMIT} bytes and was not read")
            return None
        data = read_small_file(record, RECORD_LIMIT)
        if data is None:
            raise OSError("not a regular file of at most the limit")
        text = data.decode("utf-8", "replace")
    except FileNotFoundError:
        skipped("it has no RECORD (installed by a tool that writes none, or removed): which files are its own "
                "is not known")
        return None
    except OSError as exc:
        skipped(f"its RECORD cannot be read ({exc.strerror or exc})")
        return None
    checker = RecordChecker(dist_info, text, zip=False)
    if checker.rows is None:
        why = checker.defects[0].message if checker.defects else "not valid CSV"
        skipped(f"its RECORD cannot be used ({why})")
        return None
    checker.defects.clear()

    depth = _depth(site)
    base = str(site.path)
    files: list[Member] = []
    native: list[Member] = []
    missing: list[str] = []
    outside: list[str] = []
    odd: list[str] = []
    editable = False
    listed: set[str] = set()
    for raw in list(checker.rows):
        if raw.endswith("/"):
            continue
        rel = _installed_path(raw, depth)
        if rel is None:
            outside.append(raw)
            continue
        if rel in listed:  # (two spellings of one path: ./a and a)
            continue
        listed.add(rel)
        if rel != raw:
            checker.rows.setdefault(rel, checker.rows[raw])
        if posixpath.basename(rel).startswith("__editable__"):
            editable = True
        try:
            st = os.lstat(os.path.join(base, rel))
        except OSError:
            if not (rel.endswith(".pyc") and "__pycache__" in rel):  # (bytecode: compiled or not)
                missing.append(rel)
            continue
        if not stat.S_ISREG(st.st_mode):
            odd.append(rel)
            continue
        m = Member(rel, st.st_size, st.st_size)
        files.append(m)
        if _may_be_native(rel, dist_info) and _is_native(os.path.join(base, rel)):
            native.append(m)

    problems: list[Defect] = []
    if missing:
        where_record = f"{dist_info}/RECORD"
        problems.append(Defect(
            "WA002",
            f"RECORD lists {plural(len(missing), 'file')} that {'are' if len(missing) != 1 else 'is'}"
            f" not installed: {examples(missing, 5)} (removed after installing, or another distribution's"
            " uninstall took them): the installed distribution no longer matches its RECORD",
            subject=where_record, paths=sorted(missing)))
    if outside:  # (a `pip install --target` folder's scripts: the RECORD path leaves the folder)
        shown = [p if p.isprintable() else repr(p) for p in outside]
        notes.append(f"{dist_info}: {len(outside)} RECORD path{'s' if len(outside) != 1 else ''} outside the install"
                     f" prefix {site.prefix} not read: {examples(shown, 3)}")
    from wheelaudit.binary import native_name

    odd_native = [p for p in odd if native_name(p)]
    if odd_native:  # (a library that is a link, or not a file: not audited)
        problems.append(Defect(
            "WA002", f"{dist_info}: {len(odd_native)} native binar{'ies' if len(odd_native) != 1 else 'y'} RECORD lists"
            f" {'are' if len(odd_native) != 1 else 'is'} not a regular file (a link?), not audited:"
            f" {examples(odd_native, 3)}", subject=f"{dist_info}/RECORD", paths=sorted(odd_native)))
    if odd:
        notes.append(f"{dist_info}: {len(odd)} RECORD path{'s' if len(odd) != 1 else ''} not a regular file (a link?) not"
                     f" read: {examples(odd, 3)}")
    if editable:
        notes.append(f"{dist_info}: installed in editable mode: its code lives in its source tree, which is not audited")
    return InstalledDist(site, dist_info, checker, files, native, problems)


def _depth(site: Site) -> int:
    """How many folders the site lies below its prefix (how far ``..`` may climb)."""
    try:
        return len(site.path.relative_to(site.prefix).parts)
    except ValueError:
        return 0


def _installed_path(raw: str, depth: int) -> str | None:
    """RECORD's path relative to the site, normalised; None when it leaves the prefix."""
    if unsafe_member_name(raw) is None:
        return raw
    if not raw or "\x00" in raw or raw.startswith("/") or raw[1:2] == ":" or "\\" in raw:
        return None
    norm = posixpath.normpath(raw)
    parts = norm.split("/")
    ups = 0
    while ups < len(parts) and parts[ups] == "..":
        ups += 1
    if ups > depth or ".." in parts[ups:] or norm in (".", ""):
        return None
    return norm


def _may_be_native(rel: str, dist_info: str) -> bool:
    if rel.startswith(dist_info + "/"):
        return False
    suffix = posixpath.splitext(rel)[1].lower()
    return suffix not in NEVER_NATIVE


def _is_native(path: str) -> bool:
    """Whether the first bytes of ``path`` announce ELF, Mach-O or PE (only they are read)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(MAGIC_SIZE)
    except OSError:
        return False
    return len(head) >= 4 and detect(head, path) is not None



def unlisted_native(site: Site, dists: list[InstalledDist], limit: int = 500_000) -> list[Defect]:
    """WA002 for the native binaries (by name) in the site folder that no RECORD lists: a library
    installed or swapped in behind the installer's back, or one a RECORD omits, is never audited,
    so it is said. The folder is listed (no file is opened), without recursion, skipping the
    ``.dist-info`` folders; at most ``limit`` entries are looked at, and a cut is said too."""
    from wheelaudit.binary import native_name

    listed: set[str] = set()
    for d in dists:
        listed.update(m.path for m in d.all_members)
        listed.update(d.record)
    found: list[str] = []
    unlistable: list[str] = []
    seen = 0
    stack = [""]
    while stack and seen < limit:
        rel_dir = stack.pop()
        try:
            with os.scandir(site.path / rel_dir if rel_dir else site.path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:  # (what cannot be listed cannot be audited: said, never dropped)
            unlistable.append(f"{rel_dir or '.'} ({exc.strerror or exc})")
            continue
        subdirs = []
        for e in entries:
            seen += 1
            rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__" and not (not rel_dir and e.name.endswith(".dist-info")):
                        subdirs.append(rel)
                elif native_name(e.name) and rel not in listed:
                    found.append(rel)
            except OSError:
                continue
        stack.extend(reversed(subdirs))
    out: list[Defect] = []
    if found:
        out.append(Defect(
            "WA002", f"{len(found)} native binar{'ies' if len(found) != 1 else 'y'} in {site.path} that no RECORD "
            f"lists: {examples(found, 5)} (copied in or swapped after installing, or "
            "a RECORD that omits it): not audited", subject=found[0], paths=found[:1000]))
    if unlistable:
        out.append(Defect("WA002", f"{site.path}: {plural(len(unlistable), 'folder')} "
                           f"cannot be listed, so what {'they hold' if len(unlistable) != 1 else 'it holds'} is not "
                           f"audited: {examples(unlistable, 3)}", subject=str(site.path)))
    if stack and seen >= limit:
        out.append(Defect("WA002", f"{site.path}: more than {limit} entries; the "
                           "search for native binaries no RECORD lists stopped there", subject=str(site.path)))
    return out
