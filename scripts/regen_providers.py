#!/usr/bin/env python3
"""Regenerate ``src/wheelaudit/platforms/data/providers.json``: which distributions ship the native
libraries that other wheels link against (SPEC section 4, "Dependencies that other distributions
provide": WA501 / WA505).

Source: the providers' real wheels on PyPI -- torch, the NVIDIA CUDA wheels (CUDA 12's
``nvidia-*-cu12`` and CUDA 13's ``nvidia-*`` / ``nvidia-*-cu13``), the ``cuda-toolkit``
meta-distribution, Intel's OpenMP, MKL and TBB, triton, the SciPy OpenBLAS wheels and pyarrow.
Each is downloaded per platform family with ``pip download --no-deps --only-binary=:all:
--platform P --python-version 3.11 NAME==V`` into a temporary directory (or ``--download-dir``,
kept for the next run). Of each wheel only what is needed is read: the zip's file list, its
METADATA (``Requires-Dist``, ``Provides-Extra``) and, one member at a time, each native shared
library through wheelaudit's own readers (``wheelaudit.binary.read_binary``): its identity
(ELF ``DT_SONAME``, Mach-O ``LC_ID_DYLIB``; a PE DLL is known by its file name). Nothing
downloaded is extracted as a whole, imported or run. Python extension modules and executables
are left out (nobody links against them), and so are separate debug files (``.dbg``, ``.debug``)
and the libraries that auditwheel or delvewheel grafted into ``<name>.libs/`` (renamed copies,
private to the wheel). Where a family has no real wheel, NVIDIA publishes a pure ``0.0.0a0``
placeholder that pip falls back to: it is not read.

Written per distribution: the versions read per platform family; per family the libraries
(file name -> identity, path in the wheel, the versions read that ship it as a specifier); per
family and version the ``Requires-Dist`` strings (the loader evaluates their markers for the
consumer's environment); for a meta-distribution (no libraries, only requirements) its extras ->
the distributions they bring on each family. The header lists every wheel read with its sha256.
``drivers`` is hand-written: the GPU driver libraries that no wheel ships (users install the
driver outside Python), the "allowed externals".

Usage: python scripts/regen_providers.py [--only NAME ...] [--platform FAMILY ...]
       [--download-dir DIR] [--wheel W.whl ...] [--out PATH]
``--only`` / ``--platform`` regenerate part of the table and keep the rest of ``--out`` as it is.
``--wheel`` reads wheels already downloaded (nothing else is read or downloaded).
Run with the project's venv (wheelaudit must be importable).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _regen_util import PACKAGE, POLICYDATA, header, pip_download, write_json  # noqa: E402

sys.path.insert(0, str(PACKAGE.parent))
from packaging.markers import default_environment  # noqa: E402
from packaging.requirements import InvalidRequirement, Requirement  # noqa: E402
from packaging.specifiers import SpecifierSet  # noqa: E402
from packaging.utils import canonicalize_name, parse_wheel_filename  # noqa: E402
from packaging.version import Version  # noqa: E402

from wheelaudit.checks.extension import is_extension_module  # noqa: E402
from wheelaudit.platforms import policydata  # noqa: E402
from wheelaudit.platforms.tags import parse_platform  # noqa: E402
from wheelaudit.binary import MAGIC_SIZE, detect, read_binary  # noqa: E402

COMMAND = "python scripts/regen_providers.py"
PYTHON = "3.11"


def _manylinux(arch: str) -> list[str]:
    """Every manylinux tag up to glibc 2.39 (pip takes the tags as given: it does not widen)."""
    return ([f"manylinux_2_{minor}_{arch}" for minor in range(39, 16, -1)]
            + [f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}"])


# Platform family -> the platform tags pip is asked for, and the marker environment the
# family's Requires-Dist are read with.
FAMILIES: dict[str, dict] = {
    "linux-x86_64": {"pip": _manylinux("x86_64"),
                     "env": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
                             "os_name": "posix"}},
    "linux-aarch64": {"pip": _manylinux("aarch64"),
                      "env": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64",
                              "os_name": "posix"}},
    "macos-arm64": {"pip": [f"macosx_{major}_0_{arch}" for major in range(15, 10, -1)
                            for arch in ("arm64", "universal2")] + ["macosx_10_9_universal2"],
                    "env": {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64",
                            "os_name": "posix"}},
    "windows-x86_64": {"pip": ["win_amd64"],
                       "env": {"sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64",
                               "os_name": "nt"}},
}
LINUX = ["linux-x86_64", "linux-aarch64"]
CUDA = [*LINUX, "windows-x86_64"]
ALL = list(FAMILIES)

# Distribution -> (versions to read: None is the newest pip finds for the family; the families).
# CUDA 12's wheels carry a -cu12 suffix; CUDA 13's mostly none (nvidia-cuda-runtime,
# nvidia-cublas, ...), except cuDNN, NCCL, NVSHMEM and cuSPARSELt (-cu13).
_CU12 = ["nvidia-cuda-runtime-cu12", "nvidia-cublas-cu12", "nvidia-cudnn-cu12", "nvidia-cufft-cu12",
         "nvidia-curand-cu12", "nvidia-cusolver-cu12", "nvidia-cusparse-cu12", "nvidia-cusparselt-cu12",
         "nvidia-nccl-cu12", "nvidia-nvshmem-cu12", "nvidia-nvjitlink-cu12", "nvidia-nvtx-cu12",
         "nvidia-cuda-nvrtc-cu12", "nvidia-cuda-cupti-cu12", "nvidia-cufile-cu12"]
_CU13 = ["nvidia-cuda-runtime", "nvidia-cublas", "nvidia-cudnn-cu13", "nvidia-cufft", "nvidia-curand",
         "nvidia-cusolver", "nvidia-cusparse", "nvidia-cusparselt-cu13", "nvidia-nccl-cu13",
         "nvidia-nvshmem-cu13", "nvidia-nvjitlink", "nvidia-nvtx", "nvidia-cuda-nvrtc", "nvidia-cuda-cupti",
         "nvidia-cufile"]
DISTRIBUTIONS: dict[str, tuple[list[str | None], list[str]]] = {
    # torch 2.8 required the nvidia-*-cu12 wheels by name; the newest, cuda-toolkit[...] (CUDA 13)
    "torch": ([None, "2.8.0"], ALL),
    # the meta-distribution: its extras bring the CUDA wheels; 13.0.2 is what torch pins
    "cuda-toolkit": ([None, "13.0.2", "12.9.1"], CUDA),
    **{name: ([None], CUDA) for name in _CU12 + _CU13},
    "intel-openmp": ([None], ALL),
    "mkl": ([None], ALL),
    "tbb": ([None], ALL),
    "triton": ([None], LINUX),
    "scipy-openblas32": ([None], ALL),
    "scipy-openblas64": ([None], ALL),
    "pyarrow": ([None], ALL),
    # MLX's runtime and Metal kernels: mlx (and projects built on it) link @rpath/libmlx.dylib
    "mlx-metal": ([None], ["macos-arm64"]),
    # Qt's libraries for the PyQt bindings (PyQt5 requires PyQt5-Qt5, PyQt6 requires PyQt6-Qt6)
    "pyqt5-qt5": ([None], ALL),
    "pyqt6-qt6": ([None], ALL),
    # the bindings themselves ship modules only: kept for their requirements (a wheel that requires
    # PyQt5 gets the Qt that PyQt5 requires); Qt WebEngine's libraries for PyQtWebEngine
    "pyqt5": ([None], ALL),
    "pyqt6": ([None], ALL),
    "pyqtwebengine-qt5": ([None], ALL),
    "pyqt6-webengine-qt6": ([None], ALL),
    # PySide6's runtime: PySide6-Essentials requires shiboken6, whose library its modules link
    "shiboken6": ([None], ALL),
    # the cmeel family: robotics libraries packaged as wheels that all install into one prefix,
    # cmeel.prefix/ (eigenpy requires cmeel-boost, whose Boost its library links from there)
    **{name: ([None], ALL) for name in ("cmeel-boost", "cmeel-urdfdom", "cmeel-console-bridge", "cmeel-tinyxml2")},
    # Kivy's Windows dependencies: SDL2, GLEW, ANGLE and GStreamer in <prefix>/share/*/bin, which
    # kivy adds to the DLL search at import (Kivy requires them on win32; GStreamer with an extra)
    **{name: ([None], ["windows-x86_64"]) for name in ("kivy-deps.sdl2", "kivy-deps.glew", "kivy-deps.angle",
                                                        "kivy-deps.gstreamer")},
}

# GPU driver libraries: installed with the driver, outside Python; no wheel ships them (and
# none may: they must match the kernel module). Sources: NVIDIA's Linux driver README,
# "Installed Components" (download.nvidia.com/XFree86/Linux-x86_64/<version>/README/
# installedcomponents.html); the CUDA driver API (libcuda / nvcuda.dll) and NVML docs; the Video
# Codec SDK (libnvcuvid, libnvidia-encode / nvEncodeAPI64.dll); the Optical Flow SDK.
# ROCm has no driver-side user library to list: the amdgpu kernel driver is reached through
# ROCm's user-space runtime (libamdhip64, libhsa-runtime64), which ROCm wheels bundle.
DRIVERS = {
    "comment": ("GPU driver libraries that no wheel ships: users install them with the driver, outside "
                "Python; a dependency on one is an allowed external. Hand-written from NVIDIA's driver "
                "documentation (Linux README 'Installed Components'; CUDA driver API, NVML, Video Codec "
                "and Optical Flow SDKs). ROCm: none (its user-space runtime is bundled by ROCm wheels). "
                "Windows also: the OpenCL ICD loader (OpenCL.dll, which every GPU vendor's Windows driver "
                "installs; Khronos OpenCL-ICD-Loader README) and oneAPI Level Zero's loader (ze_loader.dll, "
                "installed with Intel's graphics and NPU drivers)."),
    "linux": ["libcuda.so.1", "libcudadebugger.so.1", "libnvcuvid.so.1", "libnvidia-encode.so.1",
              "libnvidia-ml.so.1", "libnvidia-nvvm.so.4", "libnvidia-opticalflow.so.1",
              "libnvidia-ptxjitcompiler.so.1", "libnvoptix.so.1"],
    "windows": ["nvcuda.dll", "nvcuvid.dll", "nvencodeapi64.dll", "nvml.dll", "nvofapi64.dll",
                "nvoptix.dll", "opencl.dll", "ze_loader.dll"],
    "macos": [],
}


# Third-party libraries a distribution vendors for its own use (Qt's multimedia backend bundles
# FFmpeg, Qt bundles ICU): they serve the wheels that require the distribution, but no other
# wheel is told to require a GUI toolkit for its FFmpeg ("private": offered to no wheel that does
# not require it). Hand-written: file-name globs per distribution.
_FFMPEG_ICU = ["libavcodec*", "libavformat*", "libavutil*", "libavdevice*", "libavfilter*", "libswresample*",
               "libswscale*", "avcodec-*.dll", "avformat-*.dll", "avutil-*.dll", "swresample-*.dll", "swscale-*.dll",
               "libicu*", "icu*.dll", "libssl*", "libcrypto*"]
VENDORED: dict[str, list[str]] = {
    "pyqt5-qt5": _FFMPEG_ICU, "pyqt6-qt6": _FFMPEG_ICU,
    "pyqtwebengine-qt5": _FFMPEG_ICU, "pyqt6-webengine-qt6": _FFMPEG_ICU,
}


def vendored(dist: str, name: str) -> bool:
    """Whether ``dist`` vendors the library ``name`` for its own use (:data:`VENDORED`)."""
    from fnmatch import fnmatchcase

    return any(fnmatchcase(name.lower(), g.lower()) for g in VENDORED.get(canonicalize_name(dist), ()))


# Compiler runtimes that providers vendor for themselves (torch ships libgomp.so.1 and
# libomp.dylib beside its own libraries): a wheel that requires the provider gets them, but no
# wheel is told to require a provider for them alone -- they come with the system's compiler
# runtime packages (libgomp1, libgfortran5; Homebrew's libomp) or are vendored by each wheel.
# Hand-written: GCC's libgomp, libgfortran, libquadmath, libatomic; LLVM's libomp. (On Windows
# the VC++ runtime is marked per library, "runtime": true, from windows.json.)
RUNTIME = {
    "linux": ["libatomic.so.1", "libgfortran.so.3", "libgfortran.so.4", "libgfortran.so.5", "libgomp.so.1",
              "libomp.so", "libomp.so.5", "libquadmath.so.0"],
    "macos": ["libgcc_s.1.1.dylib", "libgfortran.5.dylib", "libgomp.1.dylib", "libomp.dylib",
              "libquadmath.0.dylib"],
}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def family_of(wheel: Path) -> str | None:
    """The platform family of a wheel from its tags (None for a pure wheel: every family)."""
    tags = parse_wheel_filename(wheel.name)[3]
    for tag in tags:
        pt = parse_platform(tag.platform)
        if pt.os == "any":
            return None
        for arch in pt.archs:
            fam = {"linux": "linux", "macos": "macos", "windows": "windows"}.get(pt.os or "")
            arch = {"amd64": "x86_64", "arm64": "arm64"}.get(arch, arch)
            name = f"{fam}-{arch}"
            if name in FAMILIES:
                return name
    raise SystemExit(f"{wheel.name}: no platform family of this table ({', '.join(FAMILIES)})")


def read_wheel(wheel: Path) -> dict:
    """What one wheel tells: its METADATA's requirements and extras, and its shared libraries
    (file name -> identity and path), read one member at a time."""
    libraries: dict[str, dict] = {}
    with zipfile.ZipFile(wheel) as z:
        meta_name = next((n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1), None)
        if meta_name is None:
            raise SystemExit(f"{wheel.name}: no .dist-info/METADATA")
        meta = HeaderParser().parsestr(z.read(meta_name).decode("utf-8", "replace"))
        for info in z.infolist():
            if info.is_dir() or info.file_size < MAGIC_SIZE:
                continue
            if info.filename.split("/", 1)[0].endswith(".libs"):
                continue  # auditwheel / delvewheel grafts: renamed copies private to this wheel
            if info.filename.endswith((".dbg", ".debug")):
                continue  # separate debug information: never loaded
            with z.open(info) as f:
                if detect(f.read(MAGIC_SIZE)) is None:
                    continue
            binary = read_binary(z.read(info), info.filename)
            if binary is None or binary.error or binary.kind != "shared" or is_extension_module(binary):
                continue
            name = info.filename.rsplit("/", 1)[-1]
            identities = {s.identity for s in binary.slices if s.identity}
            runtime = False
            if binary.format == "pe":
                name, identity = name.lower(), name.lower()  # the loader compares DLL names case-blind
                origin = policydata.windows_dll_origin(name, binary.slices[0].arch if binary.slices else "", "10")
                if origin == "redistributable":
                    # the VC++ runtime the wheel carries for itself (Qt ships msvcp140.dll): it serves
                    # the wheels that require this distribution, but requiring it for the runtime
                    # alone would be no answer ("runtime": never offered to a wheel that does not)
                    runtime = True
                elif origin is not None:
                    continue  # a system DLL, CPython's or the UCRT (Qt ships d3dcompiler_47.dll)
            else:
                identity = sorted(identities)[0] if identities else None
            if name in libraries:
                continue  # the same file name twice (another directory): the first one answers
            libraries[name] = {"identity": identity, "path": info.filename, **({"runtime": True} if runtime else {})}
    return {
        "requires": meta.get_all("Requires-Dist") or [],
        "provides_extra": [canonicalize_name(e) for e in meta.get_all("Provides-Extra") or []],
        "libraries": libraries,
    }


def _env(family: str) -> dict[str, str]:
    env = dict(default_environment())
    env.update(FAMILIES[family]["env"])
    env.update(python_version=PYTHON, python_full_version=f"{PYTHON}.0", implementation_name="cpython",
               platform_python_implementation="CPython", implementation_version=f"{PYTHON}.0",
               platform_release="", platform_version="")
    return env


def extras_map(requires: list[str], provides: list[str], family: str) -> dict[str, list[str]]:
    """extra -> the distributions it adds on ``family`` (the markers evaluated with packaging)."""
    env = _env(family)
    out: dict[str, list[str]] = {}
    for extra in provides:
        names = set()
        for text in requires:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if req.marker is None:
                continue
            if req.marker.evaluate({**env, "extra": extra}) and not req.marker.evaluate({**env, "extra": ""}):
                names.add(canonicalize_name(req.name))
        if names:
            out[extra] = sorted(names)
    return out


def _specifier(seen: list[str], read: list[str]) -> str:
    """The versions read that ship a library, as a specifier: ``==V`` for one, else the range
    from the oldest to the newest (versions between two reads are assumed to ship it too)."""
    vs = sorted({Version(v) for v in seen})
    if len(vs) == 1:
        return f"=={vs[0]}"
    return str(SpecifierSet(f">={vs[0]},<={vs[-1]}"))


def download(dist: str, version: str | None, family: str, root: Path) -> Path | None:
    dest = root / canonicalize_name(dist) / family / (version or "newest")
    dest.mkdir(parents=True, exist_ok=True)
    requirement = dist + (f"=={version}" if version else "")
    try:
        return pip_download(requirement, dest, platforms=tuple(FAMILIES[family]["pip"]), python_version=PYTHON)
    except (subprocess.CalledProcessError, SystemExit) as exc:
        print(f"  {requirement} for {family}: no wheel ({exc})", file=sys.stderr)
        return None


def build(reads: dict[str, dict[str, dict[str, dict]]], wheels: list[dict], previous: dict | None,
          scope: set[tuple[str, str]]) -> dict:
    """The document from ``reads`` (distribution -> family -> version -> what read_wheel said);
    the header lists ``wheels`` and those of ``previous`` outside ``scope`` (the (distribution,
    family) pairs this run read)."""
    dists: dict[str, dict] = {}
    for dist, per_family in reads.items():
        entry: dict = {"read": {}, "libraries": {}, "requires": {}, "extras": {}}
        provides: set[str] = set()
        for family in sorted(per_family):
            per_version = per_family[family]
            versions = sorted(per_version, key=Version)
            entry["read"][family] = versions
            libs: dict[str, dict] = {}
            seen: dict[str, list[str]] = {}
            for version in versions:  # newest last: its identity and path answer
                for name, lib in per_version[version]["libraries"].items():
                    libs[name] = dict(lib)
                    seen.setdefault(name, []).append(version)
            for name, lib in libs.items():
                lib["versions"] = _specifier(seen[name], versions)
                lib.pop("private", None)
                if vendored(dist, name):
                    lib["private"] = True
            if libs:
                entry["libraries"][family] = dict(sorted(libs.items()))
            entry["requires"][family] = {v: per_version[v]["requires"] for v in versions}
            newest = per_version[versions[-1]]
            provides.update(newest["provides_extra"])
            extras = extras_map(newest["requires"], newest["provides_extra"], family)
            if extras:
                entry["extras"][family] = extras
        entry["kind"] = "provider" if entry["libraries"] else "meta"
        if entry["kind"] == "provider":
            entry["extras"] = {}  # the summary is a meta-distribution's; a provider's extras are in requires
        entry["provides_extra"] = sorted(provides)
        for key in ("libraries", "extras"):
            if not entry[key]:
                del entry[key]
        dists[canonicalize_name(dist)] = entry
    dists = dict(sorted(dists.items()))
    kept = [w for w in (previous["header"]["wheels"] if previous else [])
            if (canonicalize_name(parse_wheel_filename(w["file"])[0]), w["family"]) not in scope]
    all_wheels = sorted(kept + wheels, key=lambda w: (w["file"], w["family"]))
    upstream = ", ".join(f"{d} {'/'.join(sorted({v for vs in e['read'].values() for v in vs}, key=Version))}"
                         for d, e in dists.items())
    return {
        "header": header("the providers' wheels on PyPI (pip download --no-deps --only-binary=:all: --platform P "
                         f"--python-version {PYTHON}), read with wheelaudit.binary", upstream, COMMAND,
                         wheels=all_wheels),
        "comment": ("distributions: per distribution, 'read' (per platform family, the versions whose wheels were "
                    "read), 'libraries' (per family: file name -> identity (ELF SONAME, Mach-O install name, PE: "
                    "the lowercase DLL name), path in the wheel, and 'versions': the range of read versions that "
                    "ship it), 'requires' (per family and version read: the wheel's Requires-Dist, markers "
                    "unevaluated) and for a meta-distribution (kind 'meta': no libraries) 'extras' (per family: "
                    "extra -> the distributions it adds, markers evaluated for that family and Python "
                    f"{PYTHON}). A dependency resolves to a provider by its file name (Windows: case-blind). "
                    "drivers: libraries that users install with the GPU driver, outside Python. runtime: "
                    "compiler runtimes a provider vendors for itself (GCC's, LLVM's; the VC++ runtime is "
                    "marked per library): they serve its requirers and are offered to no other wheel. A "
                    "library marked 'private' is one the distribution vendors for its own use (Qt's FFmpeg "
                    "and ICU): likewise offered only to the wheels that require it."),
        "families": {f: {"pip_platforms": FAMILIES[f]["pip"], "marker_environment": FAMILIES[f]["env"]} for f in FAMILIES},
        "drivers": DRIVERS,
        "runtime": RUNTIME,
        "distributions": dists,
    }


def write(path: Path, doc: dict) -> None:
    """write_json's layout, but one distribution per line: a new release diffs as the lines of
    the distributions it changed."""
    dists = doc["distributions"]
    write_json(path, {k: v for k, v in doc.items() if k != "distributions"})
    lines = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
    assert lines[-1] == "}"
    body = [f"    {json.dumps(name)}: {json.dumps(entry, ensure_ascii=False, separators=(', ', ': '))}"
            for name, entry in dists.items()]
    lines[-2] += ","
    lines[-1:] = ['  "distributions": {', ",\n".join(body), "  }", "}"]
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == doc
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", metavar="NAME", help="read only this distribution (repeatable)")
    ap.add_argument("--platform", action="append", choices=sorted(FAMILIES), help="only this family (repeatable)")
    ap.add_argument("--download-dir", type=Path, help="keep the downloaded wheels here (and reuse them)")
    ap.add_argument("--wheel", action="append", type=Path, help="read this wheel, already downloaded (repeatable)")
    ap.add_argument("--out", type=Path, default=POLICYDATA / "providers.json")
    args = ap.parse_args(argv)
    previous = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else None
    reads: dict[str, dict[str, dict[str, dict]]] = {}
    wheels: list[dict] = []

    def take(wheel: Path, family: str | None) -> None:
        name, version = parse_wheel_filename(wheel.name)[:2]
        what = read_wheel(wheel)
        digest = _sha256(wheel)
        for fam in [family] if family else list(args.platform or FAMILIES):
            reads.setdefault(str(name), {}).setdefault(fam, {})[str(version)] = what
            wheels.append({"file": wheel.name, "family": fam, "sha256": digest, "size": wheel.stat().st_size})
        print(f"  read {wheel.name}: {len(what['libraries'])} libraries", file=sys.stderr)

    if args.wheel:
        for wheel in args.wheel:
            take(wheel, family_of(wheel))
    else:
        only = {canonicalize_name(n) for n in args.only or []}
        unknown = only - {canonicalize_name(d) for d in DISTRIBUTIONS}
        if unknown:
            ap.error(f"not in the table's list: {', '.join(sorted(unknown))}")
        with tempfile.TemporaryDirectory() as tmp:
            root = args.download_dir or Path(tmp)
            for dist, (versions, families) in DISTRIBUTIONS.items():
                if only and canonicalize_name(dist) not in only:
                    continue
                for family in families:
                    if args.platform and family not in args.platform:
                        continue
                    for version in versions:
                        wheel = download(dist, version, family, root)
                        if wheel is None:
                            continue
                        if version is None and parse_wheel_filename(wheel.name)[1].is_prerelease:
                            # NVIDIA's 0.0.0a0 pure wheels: a placeholder where no real wheel exists
                            print(f"  {dist} for {family}: only the placeholder {wheel.name}", file=sys.stderr)
                            continue
                        # a pure wheel serves every family: read once per family all the same
                        take(wheel, family)
                        if args.download_dir is None:
                            wheel.unlink()  # the disk holds one wheel at a time
    if not reads:
        raise SystemExit("nothing read")
    # The (distribution, family) pairs this run answers for; the rest of --out is kept as it was.
    if args.wheel:
        scope = {(canonicalize_name(n), f) for n, per_family in reads.items() for f in per_family}
    else:
        scope = {(canonicalize_name(d), f) for d, (_v, families) in DISTRIBUTIONS.items()
                 if not only or canonicalize_name(d) in only
                 for f in families if not args.platform or f in args.platform}
        if not only and not args.platform:
            previous = None  # a whole run: nothing is kept
    merged: dict[str, dict[str, dict[str, dict]]] = {}
    for name, old in (previous["distributions"] if previous else {}).items():
        for fam, versions in old["read"].items():
            if (name, fam) in scope:
                continue
            merged.setdefault(name, {})[fam] = {
                v: {"requires": old["requires"].get(fam, {}).get(v, []),
                    "provides_extra": old.get("provides_extra", []),
                    "libraries": {n: {k: x for k, x in lib.items() if k != "versions"}
                                  for n, lib in old.get("libraries", {}).get(fam, {}).items()
                                  if SpecifierSet(lib["versions"]).contains(v, prereleases=True)}}
                for v in versions}
    for name, per_family in reads.items():  # keyed by the wheel's own spelling
        for fam, per_version in per_family.items():
            merged.setdefault(canonicalize_name(name), {}).setdefault(fam, {}).update(per_version)
    doc = build(merged, wheels, previous, scope)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write(args.out, doc)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes; {len(doc['distributions'])} distributions, "
          f"{len(doc['header']['wheels'])} wheels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
