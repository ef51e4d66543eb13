"""The provider table (policydata/providers.json, issue #26): its shape, known facts from the
real wheels it was generated from, the resolution of a wheel's requirements to providers, the
regeneration script on a wheel built here, and the provider / consumer fixture wheels.

Nothing here downloads (the regeneration is fed a fixture wheel with ``--wheel`` and
``PIP_NO_INDEX``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from wheelaudit.platforms import policydata
from wheelaudit.platforms.providers import ProviderEntry, driver_library, providers_of, required_provider
from wheelaudit.binary import read_binary

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "regen_providers.py"

LINUX = "cp311-cp311-manylinux_2_28_x86_64"
LINUX_ARM = "cp311-cp311-manylinux_2_28_aarch64"
MACOS = "cp311-cp311-macosx_11_0_arm64"
WINDOWS = "cp311-cp311-win_amd64"


def _platform(tag: str) -> str:
    return tag.rsplit("-", 1)[-1]


def _names(entries: list[ProviderEntry]) -> set[str]:
    return {e.distribution for e in entries if not e.extras_path}


# --------------------------------------------------------------------------------------------
# the shipped data


@pytest.fixture(scope="module")
def data() -> dict:
    return policydata.load("providers")


def test_the_header_names_every_wheel_read_with_its_digest(data):
    h = data["header"]
    assert {"source", "upstream_version", "generated", "command", "wheels"} <= set(h)
    assert h["command"].startswith("python scripts/regen_providers.py")
    assert h["wheels"]
    files = set()
    for w in h["wheels"]:
        parse_wheel_filename(w["file"])  # a real wheel file name
        assert re.fullmatch(r"[0-9a-f]{64}", w["sha256"]) and w["size"] > 0
        assert w["family"] in data["families"]
        files.add((canonicalize_name(parse_wheel_filename(w["file"])[0]), str(parse_wheel_filename(w["file"])[1]),
                   w["family"]))
    # every version the table says it read is a wheel the header lists, and the other way round
    read = {(d, v, f) for d, e in data["distributions"].items() for f, vs in e["read"].items() for v in vs}
    assert read == files


def test_every_distribution_is_well_formed(data):
    families = set(data["families"])
    for name, dist in data["distributions"].items():
        assert name == canonicalize_name(name)
        assert dist["kind"] in ("provider", "meta"), name
        assert (dist["kind"] == "provider") == bool(dist.get("libraries")), name
        assert set(dist["read"]) <= families and dist["read"], name
        for family, versions in dist["read"].items():
            assert versions == sorted(versions, key=Version), name
            assert set(dist["requires"][family]) == set(versions), name
            for texts in dist["requires"][family].values():
                for text in texts:
                    Requirement(text)
        for family, libs in dist.get("libraries", {}).items():
            assert family in dist["read"], (name, family)
            for file_name, lib in libs.items():
                assert lib["path"].rsplit("/", 1)[-1].lower() == file_name.lower(), (name, file_name)
                if family.startswith("windows-"):
                    assert file_name == file_name.lower() == lib["identity"]
                spec = SpecifierSet(lib["versions"])
                assert any(spec.contains(v, prereleases=True) for v in dist["read"][family]), (name, file_name)
        for family, extras in dist.get("extras", {}).items():
            assert dist["kind"] == "meta" and family in dist["read"]
            assert set(extras) <= set(dist["provides_extra"])
            for names in extras.values():
                assert names == sorted({canonicalize_name(n) for n in names})


def test_the_drivers_are_hand_written_per_os(data):
    drivers = data["drivers"]
    assert drivers["comment"]
    assert "libcuda.so.1" in drivers["linux"] and "nvcuda.dll" in drivers["windows"]
    # a driver library is never also a wheel's: that would make the verdict ambiguous
    for name, dist in data["distributions"].items():
        for family, libs in dist.get("libraries", {}).items():
            os_name = family.split("-", 1)[0]
            assert not {n.lower() for n in drivers[os_name]} & {n.lower() for n in libs}, name


def test_the_table_covers_what_the_issue_names(data):
    dists = data["distributions"]
    for name in ("torch", "cuda-toolkit", "nvidia-cuda-runtime-cu12", "nvidia-cublas-cu12", "nvidia-cudnn-cu12",
                 "nvidia-nccl-cu12", "nvidia-cuda-runtime", "nvidia-cublas", "intel-openmp", "mkl", "tbb"):
        assert name in dists, name
    assert dists["cuda-toolkit"]["kind"] == "meta"
    assert set(dists["torch"]["read"]) == set(data["families"])  # torch: every family


def test_the_data_stays_small():
    path = Path(policydata.__file__).parent / "data" / "providers.json"
    assert path.stat().st_size < 2_000_000


# --------------------------------------------------------------------------------------------
# known facts


@pytest.mark.parametrize("tag", [LINUX, LINUX_ARM])
def test_libcudart_12_is_nvidia_cuda_runtime_cu12s(tag):
    entries = providers_of("libcudart.so.12", _platform(tag))
    assert "nvidia-cuda-runtime-cu12" in _names(entries)
    (entry,) = [e for e in entries if e.distribution == "nvidia-cuda-runtime-cu12"]
    assert entry.identity == "libcudart.so.12" and entry.path.endswith("/libcudart.so.12")
    assert entry.shipped_by == "nvidia-cuda-runtime-cu12"


def test_libcudart_13_is_nvidia_cuda_runtimes_and_cuda_toolkits_cudart_extra():
    entries = providers_of("libcudart.so.13", "manylinux_2_28_x86_64")
    assert "nvidia-cuda-runtime" in _names(entries)
    via = {e.extras_path for e in entries if e.distribution == "cuda-toolkit"}
    assert ("cuda-toolkit[cudart]",) in via
    assert all(e.shipped_by == "nvidia-cuda-runtime" for e in entries)


def test_libc10_is_torchs_on_every_platform():
    assert "torch" in _names(providers_of("libc10.so", "manylinux_2_28_x86_64"))
    assert "torch" in _names(providers_of("libc10.so", "manylinux_2_28_aarch64"))
    # Mach-O: asked with the load command's path; the install name is @rpath-relative
    (entry,) = [e for e in providers_of("@rpath/libc10.dylib", "macosx_11_0_arm64") if e.distribution == "torch"]
    assert entry.identity == "@rpath/libc10.dylib"
    # Windows: DLL names compare case-blind
    assert "torch" in _names(providers_of("C10.DLL", "win_amd64"))
    # and a library of one platform is not another's
    assert providers_of("libc10.so", "macosx_11_0_arm64") == []


def test_torch_libraries_cover_the_issues_names():
    for name in ("libtorch.so", "libtorch_cpu.so", "libtorch_python.so", "libshm.so", "libc10.so"):
        assert "torch" in _names(providers_of(name, "manylinux_2_28_x86_64")), name
    assert "torch" in _names(providers_of("libtorch_cuda.so", "manylinux_2_28_x86_64"))


def test_gpu_driver_libraries_are_allowed_externals_and_nobodys():
    assert driver_library("libcuda.so.1", "manylinux_2_17_x86_64")
    assert driver_library("libnvidia-ml.so.1", "manylinux_2_28_aarch64")
    assert driver_library("NVCUDA.dll", "win_amd64")
    assert not driver_library("libcuda.so.1", "win_amd64")  # another OS's name
    assert not driver_library("libcudart.so.12", "manylinux_2_17_x86_64")  # a wheel's
    assert not driver_library("libcuda.so.1", "any")
    assert providers_of("libcuda.so.1", "manylinux_2_17_x86_64") == []


def test_a_platform_the_data_does_not_cover_has_no_providers():
    assert providers_of("libc10.so", "musllinux_1_2_ppc64le") == []
    assert providers_of("libc10.so", "any") == []
    assert required_provider("libc10.so", ["torch"], ["cp311-cp311-linux_riscv64"], "3.11") == []


# --------------------------------------------------------------------------------------------
# a wheel's requirements -> the provider


def test_a_requirement_provides_a_library_to_a_wheel_of_its_platform():
    (p,) = required_provider("libc10.so", ["numpy", "torch>=2"], [LINUX], "3.11")
    assert p.requirement == "torch>=2" and p.entry.distribution == "torch" and p.extra is None
    assert not p.transitive and p.entry.extras_path == ()


def test_a_marker_is_evaluated_for_the_wheels_platform():
    req = ['torch>=2; sys_platform == "linux"']
    assert [p.entry.distribution for p in required_provider("libc10.so", req, [LINUX], "3.11")] == ["torch"]
    # the same requirement does not apply to a macOS wheel: torch there provides nothing to it
    assert required_provider("@rpath/libc10.dylib", req, [MACOS], "3.11") == []
    assert required_provider("@rpath/libc10.dylib", ["torch>=2"], [MACOS], "3.11")


def test_python_version_markers_use_the_given_python():
    req = ['torch; python_version >= "3.12"']
    assert required_provider("libc10.so", req, [LINUX], "3.12")
    assert required_provider("libc10.so", req, [LINUX], "3.11") == []


def test_a_requirement_must_hold_on_every_platform_tag_of_the_wheel():
    req = ['torch; platform_machine == "x86_64"']
    assert required_provider("libc10.so", req, [LINUX], "3.11")
    # one wheel for both Linux machines: on aarch64 the requirement is not there
    assert required_provider("libc10.so", req, [LINUX, LINUX_ARM], "3.11") == []
    assert required_provider("libc10.so", req, ["cp311-cp311-manylinux_2_28_x86_64.manylinux_2_28_aarch64"],
                             "3.11") == []


def test_a_requirement_behind_the_wheels_own_extra_says_which():
    req = ['torch; extra == "gpu"']
    assert required_provider("libc10.so", req, [LINUX], "3.11") == []  # extras not told: it never applies
    (p,) = required_provider("libc10.so", req, [LINUX], "3.11", extras=["gpu", "docs"])
    assert p.extra == "gpu" and p.entry.distribution == "torch"
    # a requirement that applies anyway is not "behind" an extra
    (p,) = required_provider("libc10.so", ['torch; extra == "gpu" or sys_platform == "linux"'], [LINUX], "3.11",
                             extras=["gpu"])
    assert p.extra is None


def test_a_meta_distributions_extras_are_followed_through_the_table():
    (p,) = required_provider("libcudart.so.13", ["cuda-toolkit[cudart]==13.0.2"], [LINUX], "3.11")
    assert p.entry.distribution == "cuda-toolkit" and p.entry.shipped_by == "nvidia-cuda-runtime"
    assert p.entry.extras_path == ("cuda-toolkit[cudart]",) and p.entry.identity == "libcudart.so.13"
    assert p.entry.versions == "==13.0.2"
    # the bare meta-distribution brings no library; another extra brings others
    assert required_provider("libcudart.so.13", ["cuda-toolkit==13.0.2"], [LINUX], "3.11") == []
    assert required_provider("libcudart.so.13", ["cuda-toolkit[curand]==13.0.2"], [LINUX], "3.11") == []
    # the version asked for decides which CUDA: 12.9's extras bring the -cu12 wheels
    (p,) = required_provider("libcudart.so.12", ["cuda-toolkit[cudart]==12.9.1"], [LINUX], "3.11")
    assert p.entry.shipped_by == "nvidia-cuda-runtime-cu12"
    assert required_provider("libcudart.so.12", ["cuda-toolkit[cudart]==13.0.2"], [LINUX], "3.11") == []


def test_a_meta_distributions_markers_are_evaluated_for_the_consumer():
    # cuda-toolkit's extras hold on Linux and Windows only
    assert required_provider("cudart64_13.dll", ["cuda-toolkit[cudart]>=13"], [WINDOWS], "3.11")
    assert required_provider("libcudart.so.13", ["cuda-toolkit[cudart]>=13"], [MACOS], "3.11") == []


def test_a_providers_own_requirements_count_only_when_asked():
    assert required_provider("libcudart.so.13", ["torch==2.14.1"], [LINUX], "3.11") == []
    found = required_provider("libcudart.so.13", ["torch==2.14.1"], [LINUX], "3.11", transitive=True)
    assert found and all(p.transitive and p.entry.shipped_by == "nvidia-cuda-runtime" for p in found)
    assert found[0].entry.extras_path[0] == "torch"


def test_unparsable_requirements_are_skipped():
    assert required_provider("libc10.so", ["torch >= = 2", "torch"], [LINUX], "3.11")[0].requirement == "torch"


def test_a_marker_that_cannot_be_evaluated_does_not_hold():
    # packaging refuses to order a version against a non-version: no traceback, no provider
    assert required_provider("libc10.so", ['torch; python_version < "abc"'], [LINUX], "3.11") == []


# --------------------------------------------------------------------------------------------
# the regeneration script, fed a wheel built here (no network)


def _run_regen(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PIP_NO_INDEX": "1"}
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_regen_reads_a_providers_wheel(provider_wheels, tmp_path):
    out = tmp_path / "providers.json"
    _run_regen("--wheel", str(provider_wheels["provider"]), "--out", str(out))
    doc = json.loads(out.read_text())
    (wheel,) = doc["header"]["wheels"]
    assert wheel["file"] == provider_wheels["provider"].name and wheel["family"] == "linux-x86_64"
    import hashlib
    assert wheel["sha256"] == hashlib.sha256(provider_wheels["provider"].read_bytes()).hexdigest()
    prov = doc["distributions"]["prov"]
    assert prov["kind"] == "provider" and prov["read"] == {"linux-x86_64": ["1.0"]}
    assert prov["libraries"] == {"linux-x86_64": {"libprov.so.1": {
        "identity": "libprov.so.1", "path": "prov/lib/libprov.so.1", "versions": "==1.0"}}}
    assert doc["drivers"]["linux"] and doc["families"]


def test_regen_leaves_out_extension_modules(provider_wheels, tmp_path):
    out = tmp_path / "providers.json"
    _run_regen("--wheel", str(provider_wheels["consumer_extra"]), "--out", str(out))
    cons = json.loads(out.read_text())["distributions"]["cons"]
    assert cons["kind"] == "meta" and "libraries" not in cons  # its only binary is an extension module
    assert cons["requires"]["linux-x86_64"]["1.0"] == ['prov>=1.0; extra == "accel"']
    assert cons["provides_extra"] == ["accel"]


def test_regen_of_one_distribution_keeps_the_rest_of_the_table(provider_wheels, tmp_path):
    out = tmp_path / "providers.json"
    _run_regen("--wheel", str(provider_wheels["provider"]), "--out", str(out))
    _run_regen("--wheel", str(provider_wheels["consumer_requires"]), "--out", str(out))
    doc = json.loads(out.read_text())
    assert set(doc["distributions"]) == {"prov", "cons"}
    assert {w["file"] for w in doc["header"]["wheels"]} == {provider_wheels["provider"].name,
                                                           provider_wheels["consumer_requires"].name}
    assert doc["distributions"]["prov"]["libraries"]["linux-x86_64"]["libprov.so.1"]["identity"] == "libprov.so.1"


@pytest.mark.network
@pytest.mark.slow
def test_shipped_entries_are_what_the_newest_wheels_give(tmp_path):
    """Fails when upstream moved on: regenerate and commit (small wheels only; the header says
    what the rest was read from)."""
    out = tmp_path / "providers.json"
    out.write_text((Path(policydata.__file__).parent / "providers.json").read_text())
    subprocess.run([sys.executable, str(SCRIPT), "--only", "nvidia-cuda-runtime-cu12", "--only", "cuda-toolkit",
                    "--out", str(out)], check=True, timeout=900)
    fresh = json.loads(out.read_text())["distributions"]
    shipped = policydata.load("providers")["distributions"]
    for name in ("nvidia-cuda-runtime-cu12", "cuda-toolkit"):
        assert fresh[name] == shipped[name], name


# --------------------------------------------------------------------------------------------
# the fixture wheels of issue #26


def _members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as z:
        return {n: z.read(n) for n in z.namelist()}


def _metadata(wheel: Path):
    members = _members(wheel)
    (name,) = [n for n in members if n.endswith(".dist-info/METADATA")]
    return HeaderParser().parsestr(members[name].decode())


def test_the_provider_wheel_ships_libprov(provider_wheels):
    members = _members(provider_wheels["provider"])
    b = read_binary(members["prov/lib/libprov.so.1"], "prov/lib/libprov.so.1")
    assert b is not None and b.error is None and b.kind == "shared"
    (s,) = b.slices
    assert s.identity == "libprov.so.1" and "prov_answer" in {e.name for e in s.exports}
    assert _metadata(provider_wheels["provider"])["Name"] == "prov"


@pytest.mark.parametrize("scenario, requires, extras", [
    ("consumer_requires", ["prov>=1.0"], []),
    ("consumer_no_requirement", [], []),
    ("consumer_extra", ['prov>=1.0; extra == "accel"'], ["accel"]),
    ("consumer_marker", ['prov>=1.0; sys_platform == "darwin"'], []),
])
def test_each_consumer_needs_libprov_and_requires_it_as_it_claims(provider_wheels, scenario, requires, extras):
    wheel = provider_wheels[scenario]
    name, _version, _build, tags = parse_wheel_filename(wheel.name)
    assert name == "cons" and {t.platform for t in tags} == {"manylinux_2_28_x86_64"}
    ext = "cons/_ext.cpython-311-x86_64-linux-gnu.so"
    b = read_binary(_members(wheel)[ext], ext)
    (s,) = b.slices
    assert [d.name for d in s.dependencies] == ["libprov.so.1"]
    assert [r.path for r in s.rpaths] == ["$ORIGIN/../prov/lib"]
    assert "prov_answer" in s.imports
    meta = _metadata(wheel)
    assert (meta.get_all("Requires-Dist") or []) == requires
    assert (meta.get_all("Provides-Extra") or []) == extras
    if scenario == "consumer_marker":  # the marker does not hold for the wheel's platform
        assert not Requirement(requires[0]).marker.evaluate({"sys_platform": "linux"})


def test_the_fixture_wheels_have_a_correct_record(provider_wheels):
    for wheel in provider_wheels.values():
        members = _members(wheel)
        (record,) = [n for n in members if n.endswith(".dist-info/RECORD")]
        listed = {line.split(",")[0] for line in members[record].decode().splitlines() if line}
        assert listed == set(members)
