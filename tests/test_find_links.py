"""`check --find-links DIR`: the real wheels of a wheel's requirements decide which of its
dependencies they provide (fixtures/build_providers.py: ``prov`` ships libprov.so.1, ``cons``
needs it)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from wheel.wheelfile import WheelFile

from wheelaudit.cli.main import main
from wheelaudit.model.finding import Finding
from wheelaudit.scanner import scan
from wheelaudit.scanner.find_links import find_providers, keep_checked, platform_keys

LIB = "prov/lib/libprov.so.1"
EXT = "cons/_ext.cpython-311-x86_64-linux-gnu.so"


def copy_wheel(src: Path, dest_dir: Path, *, drop: tuple[str, ...] = (), version: str | None = None,
               tag: str | None = None, add: dict[str, bytes] | None = None) -> Path:
    """A copy of the wheel ``src`` without the members ``drop``, at another version and/or
    platform tag, with members ``add`` (a correct RECORD, written by WheelFile)."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    name, old_version, rest = src.name.split("-", 2)
    new_version = version or old_version
    rest = f"{tag}.whl" if tag else rest
    dest = dest_dir / f"{name}-{new_version}-{rest}"
    old_info, new_info = f"{name}-{old_version}.dist-info", f"{name}-{new_version}.dist-info"
    with zipfile.ZipFile(src) as zin, WheelFile(dest, "w") as wf:
        for info in zin.infolist():
            if info.filename in drop or info.filename.endswith("/RECORD"):
                continue
            data = zin.read(info)
            arc = info.filename.replace(old_info, new_info)
            if arc.endswith(".dist-info/METADATA") and version:
                data = data.replace(f"Version: {old_version}\n".encode(), f"Version: {version}\n".encode())
            if arc.endswith(".dist-info/WHEEL") and tag:
                data = b"".join(line + b"\n" for line in data.splitlines() if not line.startswith(b"Tag:"))
                data += f"Tag: {tag}\n".encode()
            wf.writestr(arc, data)
        for arc, data in (add or {}).items():
            wf.writestr(arc, data)
    return dest


def check(capsys, *args: str) -> tuple[int, dict, str]:
    rc = main(["check", *args, "--format", "json"])
    out = capsys.readouterr().out
    rc_text = main(["check", *args])
    text = capsys.readouterr().out
    assert rc == rc_text
    return rc, json.loads(out), text


def findings(report: dict) -> list[dict]:
    return [f for w in report["wheels"] for f in w["findings"]]


def test_the_provider_found_resolves_the_dependency(provider_wheels, tmp_path, capsys):
    links = tmp_path / "links"
    copy_wheel(provider_wheels["provider"], links)
    consumer = str(provider_wheels["consumer_requires"])
    rc, alone, _ = check(capsys, consumer)
    assert rc == 1 and [f["code"] for f in findings(alone)] == ["WA501"]  # the table does not know prov
    rc, report, text = check(capsys, consumer, "--find-links", str(links))
    assert rc == 0, text
    assert not [f for f in findings(report) if f["code"] in ("WA501", "WA505")]
    w = report["wheels"][0]
    assert (w["path"], w["name"], w["version"]) == (consumer, "cons", "1.0")  # the checked wheel, not "cons+prov"
    assert "note:" not in text


def test_a_provider_that_lacks_the_library_is_named_in_wa501(provider_wheels, tmp_path, capsys):
    links = tmp_path / "links"
    lacking = copy_wheel(provider_wheels["provider"], links, drop=(LIB,), version="1.2")
    rc, report, text = check(capsys, str(provider_wheels["consumer_requires"]), "--find-links", str(links))
    assert rc == 1
    (f,) = findings(report)
    assert f["code"] == "WA501" and f["subject"] == "libprov.so.1" and f["paths"] == [EXT]
    assert f"prov 1.2 ({lacking.name} from --find-links) does not ship libprov.so.1" in f["message"]


def test_a_provider_of_an_excluded_version_is_ignored_and_noted(provider_wheels, tmp_path, capsys):
    links = tmp_path / "links"
    old = copy_wheel(provider_wheels["provider"], links, version="0.5")
    rc, report, text = check(capsys, str(provider_wheels["consumer_requires"]), "--find-links", str(links))
    assert rc == 1 and [f["code"] for f in findings(report)] == ["WA501"]  # as without --find-links
    assert "--find-links" not in findings(report)[0]["message"]
    notes = [line for line in text.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and old.name in notes[0] and "prov 0.5 does not satisfy prov>=1.0" in notes[0]
    assert report["notes"] == [notes[0].removeprefix("note: ")]  # the JSON report carries it too


def test_the_highest_satisfying_version_is_taken(provider_wheels, tmp_path):
    links = tmp_path / "links"
    copy_wheel(provider_wheels["provider"], links, version="0.9")
    copy_wheel(provider_wheels["provider"], links, version="1.1")
    best = copy_wheel(provider_wheels["provider"], links, version="2.0")
    found, notes = find_providers(scan(provider_wheels["consumer_requires"]), links)
    assert found == [best]
    assert len(notes) == 1 and "prov 0.9 does not satisfy" in notes[0]


@pytest.mark.parametrize("scenario, why", [
    ("consumer_extra", 'extra == "accel" does not apply'),
    ("consumer_marker", 'sys_platform == "darwin" does not apply'),
])
def test_a_requirement_that_does_not_apply_finds_nothing(provider_wheels, tmp_path, scenario, why):
    links = tmp_path / "links"
    copy_wheel(provider_wheels["provider"], links)
    found, notes = find_providers(scan(provider_wheels[scenario]), links)
    assert found == [] and len(notes) == 1 and why in notes[0]


def test_no_requirement_no_note(provider_wheels, tmp_path):
    links = tmp_path / "links"
    copy_wheel(provider_wheels["provider"], links)
    assert find_providers(scan(provider_wheels["consumer_no_requirement"]), links) == ([], [])


def test_a_provider_for_another_platform_is_ignored(provider_wheels, tmp_path):
    links = tmp_path / "links"
    other = copy_wheel(provider_wheels["provider"], links, tag="py3-none-macosx_11_0_arm64")
    found, notes = find_providers(scan(provider_wheels["consumer_requires"]), links)
    assert found == [] and len(notes) == 1 and other.name in notes[0] and "macos arm64" in notes[0]


def test_platform_families():
    assert platform_keys(["cp311-cp311-manylinux_2_28_x86_64"]) & platform_keys(["py3-none-linux_x86_64"])
    assert platform_keys(["cp311-cp311-manylinux_2_28_x86_64"]) & platform_keys(["manylinux2014_x86_64"])
    assert not platform_keys(["cp311-cp311-manylinux_2_28_x86_64"]) & platform_keys(["manylinux_2_28_aarch64"])
    assert not platform_keys(["cp311-cp311-manylinux_2_28_x86_64"]) & platform_keys(["musllinux_1_2_x86_64"])
    assert platform_keys(["cp311-cp311-macosx_11_0_arm64"]) & platform_keys(["macosx_10_9_universal2"])
    assert platform_keys(["py3-none-any"]) is None


def test_the_providers_own_findings_are_not_reported(provider_wheels, tmp_path, capsys):
    # a provider that ships libprov.so.1 and a binary of its own that cannot load (a copy of the
    # consumer's module, whose RUNPATH leads nowhere from prov/): its WA501 is prov's, not cons's
    with zipfile.ZipFile(provider_wheels["consumer_requires"]) as z:
        ext = z.read(EXT)
    links = tmp_path / "links"
    broken = copy_wheel(provider_wheels["provider"], links, add={"prov/sub/_bad.so": ext})
    rc, own, _ = check(capsys, str(broken))
    assert any(f["code"] == "WA501" and f["paths"] == ["prov/sub/_bad.so"] for f in findings(own))
    rc, report, text = check(capsys, str(provider_wheels["consumer_requires"]), "--find-links", str(links))
    assert rc == 0 and findings(report) == [], text


def test_keep_checked():
    origins = {"a/x.so": "a.whl", "p/y.so": "p.whl"}
    fs = [Finding("WA501", "m", paths=["p/y.so"]), Finding("WA501", "m", paths=["a/x.so", "p/y.so"]),
          Finding("WA001", "p.whl: broken"), Finding("WA001", "a.whl: broken")]
    assert [f.message for f in keep_checked(fs, origins, {"p.whl"})] == ["m", "a.whl: broken"]
    # a provider's finding that also names a file no wheel ships (the library its CMake export
    # names) is still the provider's; one that names only such files stays reported
    fs = [Finding("WA701", "p's export", paths=["p/share/cmake/PTargets.cmake", "p/lib/libmissing.a"]),
          Finding("WA701", "a's export", paths=["a/share/cmake/ATargets.cmake", "a/lib/libmissing.a"]),
          Finding("WA701", "nobody's", paths=["x/lib/libmissing.a"])]
    origins |= {"p/share/cmake/PTargets.cmake": "p.whl", "a/share/cmake/ATargets.cmake": "a.whl"}
    assert [f.message for f in keep_checked(fs, origins, {"p.whl"})] == ["a's export", "nobody's"]


def test_find_links_must_be_a_folder(provider_wheels, tmp_path, capsys):
    assert main(["check", str(provider_wheels["consumer_requires"]), "--find-links", str(tmp_path / "nope")]) == 2


def test_the_real_wheel_overrules_the_provider_table(tmp_path, capsys):
    """A consumer of libtbb.so.12 that requires tbb: the provider table says tbb ships it (no
    finding); a tbb wheel found in --find-links that does not ship it decides (WA501)."""
    import shutil
    import subprocess

    from wheel.wheelfile import WheelFile

    if shutil.which("gcc") is None:
        pytest.fail("gcc is missing: apt-get install gcc", pytrace=False)
    (tmp_path / "tbb.c").write_text("int tbb_version(void) { return 12; }\n")
    (tmp_path / "ext.c").write_text("int tbb_version(void);\nint PyInit__ext(void) { return tbb_version(); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libtbb.so.12", "-o", str(tmp_path / "libtbb.so.12"),
                    str(tmp_path / "tbb.c")], check=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(tmp_path / "ext.so"), str(tmp_path / "ext.c"),
                    str(tmp_path / "libtbb.so.12")], check=True)

    def wheel(directory: Path, name: str, version: str, members: dict[str, Path], requires: str = "") -> Path:
        tag = "cp311-cp311-manylinux_2_28_x86_64" if name == "cons" else "py2.py3-none-manylinux_2_28_x86_64"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{name}-{version}-{tag}.whl"
        with WheelFile(path, "w") as wf:
            meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + (f"Requires-Dist: {requires}\n" if requires else "")
            wf.writestr(f"{name}-{version}.dist-info/METADATA", meta)
            wf.writestr(f"{name}-{version}.dist-info/WHEEL",
                        f"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: {tag}\n")
            for arc, src in members.items():
                wf.write(str(src), arc)
        return path

    consumer = str(wheel(tmp_path / "dist", "cons", "1.0", {EXT: tmp_path / "ext.so"}, requires="tbb>=2021"))
    rc, report, _ = check(capsys, consumer)
    assert rc == 0 and findings(report) == []  # the table decides: tbb provides it
    links = tmp_path / "links"
    lacking = wheel(links, "tbb", "2023.2.0", {"tbb-2023.2.0.data/data/lib/README": tmp_path / "tbb.c"})
    rc, report, _ = check(capsys, consumer, "--find-links", str(links))
    assert rc == 1
    (f,) = findings(report)
    assert f["code"] == "WA501" and f"tbb 2023.2.0 ({lacking.name} from --find-links) does not ship" in f["message"]


