"""A wheel read in place, a `wheel unpack` tree and an installed package give the same facts."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from wheelaudit.cli import main
from wheelaudit.scan import scan
from wheelaudit.wheelfile import NotAWheel, open_wheel


def facts(wheel):
    return {b.path: (b.format, b.kind, b.size, [(s.arch, s.identity, [d.name for d in s.dependencies],
                                                 [r.path for r in s.rpaths], sorted(x.name for x in s.exports),
                                                 sorted(s.imports)) for s in b.slices])
            for b in wheel.libraries}


@pytest.fixture(scope="module")
def layouts(fixture_wheels, tmp_path_factory):
    """macos_clean as a .whl, as a `wheel unpack` tree, and installed in a site-packages with an
    extra top-level directory (as auditwheel's ``pkg.libs``) and a second distribution beside it."""
    whl = fixture_wheels["macos_clean"]
    root = tmp_path_factory.mktemp("layouts")
    unpacked = root / "unpacked" / "executorch-1.6.0"
    with zipfile.ZipFile(whl) as zf:
        zf.extractall(unpacked)
    site = root / "site-packages"
    with zipfile.ZipFile(whl) as zf:
        zf.extractall(site)
    # a top-level directory of the same distribution, listed in its RECORD
    libs = site / "executorch.libs"
    libs.mkdir()
    (libs / "README").write_text("vendored\n")
    record = next(site.glob("executorch-*.dist-info")) / "RECORD"
    import base64
    import hashlib

    digest = base64.urlsafe_b64encode(hashlib.sha256(b"vendored\n").digest()).rstrip(b"=").decode()
    record.write_text(record.read_text() + f"executorch.libs/README,sha256={digest},9\n")
    # another distribution in the same site-packages must not be scanned
    other = site / "other"
    other.mkdir()
    (other / "libother.so").write_bytes((fixture_wheels["linux_clean"].parent / "x").as_posix().encode())
    (site / "__pycache__").mkdir()
    (site / "__pycache__" / "junk.pyc").write_bytes(b"\x7fELF not really")
    return {"whl": whl, "unpacked": unpacked, "installed": site / "executorch"}


def test_the_three_layouts_give_the_same_facts(layouts):
    ref = scan(layouts["whl"])
    assert ref.libraries and not ref.findings
    for kind in ("unpacked", "installed"):
        w = scan(layouts[kind])
        assert facts(w) == facts(ref), kind
        assert (w.name, w.version, w.tags) == (ref.name, ref.version, ref.tags), kind
        assert not w.findings, (kind, [f.message for f in w.findings])
    installed = scan(layouts["installed"])
    assert "executorch.libs/README" in installed.files  # the distribution's other top-level entry
    assert not any(f.startswith("other/") for f in installed.files)  # another distribution


def test_record_is_checked_in_a_tree_too(layouts, tmp_path):
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(layouts["unpacked"], tree)
    victim = tree / "executorch" / "lib" / "libexecutorch.dylib"
    victim.write_bytes(victim.read_bytes() + b"\0")
    w = scan(tree)
    msgs = [f.message for f in w.findings if f.code == "WA002"]
    assert any("libexecutorch.dylib" in m and "hash" in m for m in msgs)


def test_a_tree_that_is_not_a_wheel_is_exit_2(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "x.py").write_text("")
    with pytest.raises(NotAWheel):
        open_wheel(tmp_path / "pkg")
    assert main(["check", str(tmp_path / "pkg")]) == 2
    assert "neither an unpacked wheel nor an installed package" in capsys.readouterr().err


def test_nothing_is_extracted_to_disk(fixture_wheels, tmp_path, monkeypatch):
    """Reading a .whl writes no file: an audit hook records every open() for writing."""
    import sys
    import tempfile

    writes: list[str] = []

    def hook(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            if any(c in mode for c in "wax+") or flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                writes.append(os.fsdecode(args[0]))

    sys.addaudithook(hook)  # audit hooks cannot be removed: it only records
    start = len(writes)
    scan(fixture_wheels["macos_universal2"])
    mine = [p for p in writes[start:] if not p.startswith(tempfile.gettempdir())]
    assert mine == []
