"""Shared fixtures: native libraries and wheels built once per test session.

`fixture_libs` runs fixtures/build_fixtures.sh (see fixtures/README.md); `fixture_wheels`
builds every scenario wheel with fixtures/make_wheels.py. Building uses the system
toolchain (gcc g++ binutils clang lld llvm); when it is missing, the fixtures fail loudly
instead of skipping, so an audit test never passes vacuously.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
APT_HINT = "apt-get install -y gcc g++ binutils clang lld llvm"
_TOOLS = ("gcc", "g++", "ar", "strip", "clang")


def _check_toolchain() -> None:
    missing = [t for t in _TOOLS if shutil.which(t) is None]
    clang = shutil.which("clang")
    if clang:  # Debian keeps ld64.lld / llvm-lipo only in /usr/lib/llvm-N/bin, beside clang
        llvm_bin = Path(os.path.realpath(clang)).parent
        missing += [t for t in ("ld64.lld", "llvm-lipo", "llvm-ar")
                    if not (llvm_bin / t).exists() and shutil.which(t) is None]
    if missing:
        pytest.fail(
            f"fixture toolchain missing ({', '.join(missing)}); install it with: {APT_HINT}",
            pytrace=False,
        )


def _run_build(script: Path, out: Path) -> None:
    _check_toolchain()
    proc = subprocess.run(["sh", str(script), str(out)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(
            f"{script.name} failed (exit {proc.returncode}); the fixture toolchain is "
            f"gcc g++ binutils clang lld llvm ({APT_HINT}).\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}",
            pytrace=False,
        )


def _load_make_wheels():
    """Import fixtures/make_wheels.py (not a package) once, as module "make_wheels"."""
    return _load_module("make_wheels")


@pytest.fixture(scope="session")
def fixture_libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory with elf/ and macho/{arm64,x86_64,universal2}/ libraries (fixtures.md recipe)."""
    out = tmp_path_factory.mktemp("fixture_libs")
    _run_build(FIXTURES / "build_fixtures.sh", out)
    return out


PE_APT_HINT = "apt-get install -y clang lld llvm mingw-w64"
_PE_TOOLS = ("clang", "lld-link", "llvm-dlltool", "llvm-rc", "llvm-readobj", "llvm-objdump",
             "x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-g++", "i686-w64-mingw32-gcc")


@pytest.fixture(scope="session")
def pe_libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory with the Windows PE fixtures of fixtures/build_pe.sh (x.pyd, copy.dll, arm64.pyd,
    mingw.dll, small32.dll, small.exe). Fails, never skips, without the toolchain."""
    clang = shutil.which("clang")
    llvm_bin = Path(os.path.realpath(clang)).parent if clang else None
    missing = [t for t in _PE_TOOLS
               if shutil.which(t) is None and not (llvm_bin is not None and (llvm_bin / t).exists())]
    if missing:
        pytest.fail(f"PE fixture toolchain missing ({', '.join(missing)}); install it with: {PE_APT_HINT}",
                    pytrace=False)
    out = tmp_path_factory.mktemp("pe_libs")
    proc = subprocess.run(["sh", str(FIXTURES / "build_pe.sh"), str(out)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"build_pe.sh failed (exit {proc.returncode}); toolchain: {PE_APT_HINT}\n"
                    f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}", pytrace=False)
    return out


@pytest.fixture(scope="session")
def fixture_wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Scenario name -> path of a built .whl (see fixtures/README.md for the scenarios)."""
    _check_toolchain()
    mw = _load_make_wheels()
    out = tmp_path_factory.mktemp("fixture_wheels")
    try:
        return mw.build_all(out)
    except mw.BuildError as exc:  # toolchain present but a build step failed
        pytest.fail(f"{exc}\n(fixture toolchain: {APT_HINT})", pytrace=False)


@pytest.fixture(scope="session")
def fixture_build_dir(fixture_wheels: dict[str, Path]) -> Path:
    """The native libraries behind the wheels (build_executorch.sh output: elf/, macho/...)."""
    return next(iter(fixture_wheels.values())).parent.parent / "_build"


def _load_module(name: str):
    """Import fixtures/NAME.py (not a package) once, as module NAME."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, FIXTURES / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def audit_wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Scenario name -> path of a small WA6xx wheel (fixtures/make_audit_wheels.py, binaries by
    fixtures/build_audits.sh; also needs MinGW-w64 for the .pyd modules)."""
    _check_toolchain()
    if shutil.which("x86_64-w64-mingw32-gcc") is None:
        pytest.fail("fixture toolchain missing (x86_64-w64-mingw32-gcc); install it with: "
                    "apt-get install -y gcc-mingw-w64-x86-64", pytrace=False)
    maw = _load_module("make_audit_wheels")
    out = tmp_path_factory.mktemp("audit_wheels")
    try:
        return maw.build_all(out)
    except maw.BuildError as exc:
        pytest.fail(f"{exc}\n(fixture toolchain: {APT_HINT} gcc-mingw-w64-x86-64)", pytrace=False)


@pytest.fixture(scope="session")
def provider_wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Issue #26's provider / consumer wheels: scenario -> path (see fixtures/build_providers.py):
    ``provider`` ships libprov.so.1; ``consumer_requires``, ``consumer_no_requirement``,
    ``consumer_extra``, ``consumer_marker`` need it."""
    _check_toolchain()
    _load_make_wheels()  # build_providers imports it by that name
    bp = _load_module("build_providers")
    out = tmp_path_factory.mktemp("provider_wheels")
    try:
        return bp.build_provider_wheels(out)
    except bp.BuildError as exc:
        pytest.fail(f"{exc}\n(fixture toolchain: {APT_HINT})", pytrace=False)


@pytest.fixture(scope="session")
def platform_libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fixtures/build_platforms.sh output: one library per ELF machine / ARM float ABI / Mach-O
    platform, and x86_64 libraries that need fcntl64@GLIBC_2.28 and ZLIB_1.2.9."""
    _check_toolchain()
    clang = shutil.which("clang")
    llvm_bin = Path(os.path.realpath(clang)).parent if clang else Path("/nonexistent")
    missing = [t for t in ("ld.lld", "objdump", "readelf")
               if not (llvm_bin / t).exists() and shutil.which(t) is None]
    if missing:
        pytest.fail(f"fixture toolchain missing ({', '.join(missing)}); install it with: {APT_HINT}", pytrace=False)
    out = tmp_path_factory.mktemp("platform_libs")
    _run_build(FIXTURES / "build_platforms.sh", out)
    return out


@pytest.fixture(scope="session")
def platform_wheels(platform_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Scenario name -> wheel (fixtures/make_platform_wheels.py SCENARIOS)."""
    return _load_module("make_platform_wheels").build_all(platform_libs, tmp_path_factory.mktemp("platform_wheels"))


@pytest.fixture(scope="session")
def unbound_libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fixtures/build_unbound.sh output: elf/, macho/, pe/ providers (as linked, and doctored)
    and the extension module that imports from them."""
    if shutil.which("x86_64-w64-mingw32-gcc") is None:
        pytest.fail(f"fixture toolchain missing (x86_64-w64-mingw32-gcc); install it with: "
                    f"{APT_HINT} gcc-mingw-w64-x86-64", pytrace=False)
    out = tmp_path_factory.mktemp("unbound_libs")
    _run_build(FIXTURES / "build_unbound.sh", out)
    return out


@pytest.fixture(scope="session")
def unbound_wheels(unbound_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Scenario name -> wheel (fixtures/make_unbound_wheels.py SCENARIOS)."""
    return _load_module("make_unbound_wheels").build_all(unbound_libs, tmp_path_factory.mktemp("unbound_wheels"))


@pytest.fixture(scope="session")
def release_wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Scenario name -> wheel of fixtures/make_release_wheels.py (libraries by
    fixtures/build_release.sh: gcc, clang + ld64.lld, MinGW-w64)."""
    if shutil.which("x86_64-w64-mingw32-g++") is None:
        pytest.fail(f"fixture toolchain missing (x86_64-w64-mingw32-g++); install it with: "
                    f"{APT_HINT} g++-mingw-w64-x86-64", pytrace=False)
    libs = tmp_path_factory.mktemp("release_libs")
    _run_build(FIXTURES / "build_release.sh", libs)
    return _load_module("make_release_wheels").build_all(libs, tmp_path_factory.mktemp("release_wheels"))


@pytest.fixture(scope="session")
def surface_wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Scenario name -> wheel of fixtures/make_surface_wheels.py (libraries and package configs
    built by real CMake, fixtures/build_cmake.sh)."""
    missing = [t for t in ("cmake", "make", "gcc", "pkg-config") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"fixture tools missing ({', '.join(missing)}); install them with: apt-get install -y "
                    "cmake make pkg-config gcc", pytrace=False)
    return _load_module("make_surface_wheels").build_all(tmp_path_factory.mktemp("surface"))


@pytest.fixture(scope="session")
def pe_wheels(pe_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Scenario name -> wheel of fixtures/make_pe_wheels.py (the PE fixtures of build_pe.sh)."""
    _load_make_wheels()  # make_pe_wheels imports it by that name
    return _load_module("make_pe_wheels").build_all(pe_libs, tmp_path_factory.mktemp("pe_wheels"))


@pytest.fixture(scope="session")
def case_wheels(fixture_build_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Scenario name -> wheel of fixtures/make_case_wheels.py (a universal binary of two different
    libraries, an abi3 module outside the Stable ABI)."""
    _load_make_wheels()  # make_case_wheels imports it by that name
    mcw = _load_module("make_case_wheels")
    try:
        return mcw.build_all(fixture_build_dir, tmp_path_factory.mktemp("case_wheels"))
    except mcw.BuildError as exc:
        pytest.fail(f"{exc}\n(fixture toolchain: {APT_HINT})", pytrace=False)
