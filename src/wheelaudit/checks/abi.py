"""Python ABI and loadability (WA6xx): what makes a wheel's native code fail at import time.

Built-in checks, on by default, each a small pure function of the scanned
:class:`~wheelaudit.scanner.Wheel` returning findings. They read facts the readers established
(``Slice.exec_stack``, ``textrel``, ``debug_bytes``, ``signature``, dependencies, exports) and
the wheel's tags, parsed by :mod:`packaging.tags`:

- WA601 an abi3 wheel's extension uses CPython symbols outside the Stable ABI of its minimum version
- WA602 an extension module's file name (ABI / platform suffix) disagrees with the wheel's tags
- WA603 an extension module links libpython
- WA604 a binary carries full debug info
- WA606 an ELF library needs an executable stack (glibc 2.41+ refuses to dlopen it)
- WA607 an arm64 Mach-O slice has no code signature, or its page hashes disagree with its bytes
- WA608 an ELF library has text relocations
- WA609 an x86-64 binary needs an ISA level above the baseline its platform tag promises

(WA605, size budgets, lives elsewhere.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.checks.extension import is_extension_module
from wheelaudit.model.binary import MACHO_EXECUTABLE, MACHO_FLAT
from wheelaudit.model.finding import Finding
from wheelaudit.model.messages import human_size
from wheelaudit.model.wheel import Wheel
from wheelaudit.checks.base import Check, Family
from wheelaudit.platforms.tags import parse_platform

if TYPE_CHECKING:
    from packaging.tags import Tag

# ---- extension modules and their suffixes ----------------------------------------------------

#: CPython's EXT_SUFFIX on Linux and macOS: .cpython-311-x86_64-linux-gnu.so, .cpython-313t-darwin.so
_CPYTHON_SO = re.compile(r"\.cpython-(?P<ver>\d+)(?P<flags>[a-z]*)-(?P<plat>[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*)\.so$")
#: CPython's EXT_SUFFIX on Windows: .cp311-win_amd64.pyd, .cp313t-win_arm64.pyd
_CPYTHON_PYD = re.compile(r"\.cp(?P<ver>\d+)(?P<flags>[a-z]*)-(?P<plat>win32|win_amd64|win_arm64)\.pyd$")
#: PyPy's: .pypy310-pp73-x86_64-linux-gnu.so, .pypy310-pp73-darwin.so, .pypy310-pp73-win_amd64.pyd
_PYPY = re.compile(r"\.pypy(?P<ver>\d+)-pp(?P<pp>\d+)-(?P<plat>[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*)\.(?:so|pyd)$")

#: the architecture part of a Linux multiarch triplet, spelled as platform tags spell it
_TRIPLET_ARCH = {
    "x86_64": "x86_64", "i386": "i686", "i686": "i686", "aarch64": "aarch64", "arm": "armv7l",
    "powerpc64le": "ppc64le", "powerpc64": "ppc64", "s390x": "s390x", "riscv64": "riscv64",
    "loongarch64": "loongarch64",
}
_OS_NAMES = {"linux": "Linux", "macos": "macOS", "windows": "Windows", "ios": "iOS", "android": "Android"}
#: the operating systems whose importers accept a bare ``.so`` / ``.abi3.so`` module
_SO_OSES = frozenset({"linux", "macos", "ios", "android"})


@dataclass(frozen=True)
class Suffix:
    """What an extension module's file name says about where it loads.

    ``python``: the interpreter tag it needs (``cp311``, ``pp310``) or None for any version
    (``.abi3.so``, ``.so``, ``.pyd``); ``abi``: the ABI tag that goes with it (``cp311``,
    ``cp313t``, ``pypy310_pp73``) or None; ``os``: ``linux``/``macos``/``windows``, or a set of
    them for a suffix several accept; ``arch`` and ``libc`` (``gnu``/``musl``) from a Linux
    triplet or a Windows platform; ``text``: the suffix as written."""

    text: str
    os: frozenset[str]
    python: str | None = None
    abi: str | None = None
    arch: str | None = None
    libc: str | None = None
    windows_platform: str | None = None


def _platform_part(plat: str) -> tuple[frozenset[str], str | None, str | None, str | None]:
    """(os, arch, libc, windows platform) from the platform part of a suffix."""
    if plat == "darwin":
        return frozenset({"macos"}), None, None, None
    if plat in ("iphoneos", "iphonesimulator"):  # PEP 730: .cpython-313-iphoneos.so
        return frozenset({"ios"}), None, None, None
    if plat in ("win32", "win_amd64", "win_arm64"):
        arch = {"win32": "x86", "win_amd64": "amd64", "win_arm64": "arm64"}[plat]
        return frozenset({"windows"}), arch, None, plat
    parts = plat.split("-")
    if len(parts) >= 3 and parts[1] == "linux" and parts[2].startswith("android"):  # PEP 738
        return frozenset({"android"}), _TRIPLET_ARCH.get(parts[0], parts[0]), None, None
    if len(parts) >= 3 and parts[1] == "linux":
        libc = "musl" if parts[2].startswith("musl") else "gnu" if parts[2].startswith("gnu") else None
        return frozenset({"linux"}), _TRIPLET_ARCH.get(parts[0], parts[0]), libc, None
    return frozenset(), None, None, None


def module_suffix(name: str) -> Suffix | None:
    """The extension-module suffix of file name ``name``, or None when it has none an importer
    would accept (``libfoo.so.1``, ``foo.dylib``)."""
    m = _CPYTHON_SO.search(name)
    if m:
        os_, arch, libc, _ = _platform_part(m["plat"])
        return Suffix(m.group(0), os_, f"cp{m['ver']}", f"cp{m['ver']}{m['flags']}", arch, libc)
    m = _CPYTHON_PYD.search(name)
    if m:
        os_, arch, _libc, plat = _platform_part(m["plat"])
        return Suffix(m.group(0), os_, f"cp{m['ver']}", f"cp{m['ver']}{m['flags']}", arch, None, plat)
    m = _PYPY.search(name)
    if m:
        os_, arch, libc, plat = _platform_part(m["plat"])
        return Suffix(m.group(0), os_, f"pp{m['ver']}", f"pypy{m['ver']}_pp{m['pp']}", arch, libc, plat)
    if name.endswith(".abi3.so"):
        return Suffix(".abi3.so", _SO_OSES)
    if name.endswith(".so"):
        return Suffix(".so", _SO_OSES)
    if name.endswith(".pyd"):
        return Suffix(".pyd", frozenset({"windows"}))
    return None


def _describe_tags(tags: list[Tag]) -> str:
    pairs = sorted({f"{t.interpreter}-{t.abi}" for t in tags})
    return ", ".join(pairs) if pairs else "no tags"


def _default_build(suffix: Suffix) -> bool:
    """Whether ``suffix`` is the one the default build of its interpreter version imports, which
    is what a ``cpXY-none`` / ``ppXY-none`` tag installs on: CPython's without ABI flags
    (``.cpython-311-``; debug builds share it since 3.8; a free-threaded ``t`` suffix is not it),
    PyPy's (one ``ppNN`` per version)."""
    return suffix.abi == suffix.python or (suffix.python or "").startswith("pp")


def _suffix_problem(suffix: Suffix, tags: list[Tag]) -> str | None:
    """Why ``suffix`` disagrees with ``tags``, or None."""
    if not tags:
        return None
    # the platform: the tags' operating systems (platform "any" says nothing)
    per_tag = [(t, traits_from_tags([t], "")) for t in tags]
    oses = {o for _t, tr in per_tag for o in tr.os}
    if oses and suffix.os and not suffix.os & oses:
        want = "/".join(sorted(_OS_NAMES[o] for o in suffix.os))
        have = "/".join(sorted(_OS_NAMES.get(o, o) for o in oses))
        return f"the suffix {suffix.text!r} is a {want} one, but the wheel is tagged for {have}"
    if suffix.windows_platform is not None and "windows" in oses:
        plats = {t.platform for t in tags}
        if suffix.windows_platform not in plats:
            return (f"the suffix {suffix.text!r} is for {suffix.windows_platform}, but the wheel is tagged "
                    f"{', '.join(sorted(plats))}")
    if suffix.libc is not None and "linux" in oses:
        linux = [t.platform for t, tr in per_tag if "linux" in tr.os]
        musl = all(parse_platform(p).family == "musllinux" for p in linux)
        glibc = all(parse_platform(p).family != "musllinux" for p in linux)
        if (suffix.libc == "musl" and glibc) or (suffix.libc == "gnu" and musl):
            return (f"the suffix {suffix.text!r} is for {suffix.libc} libc, but the wheel is tagged "
                    f"{', '.join(sorted(set(linux)))}")
    if suffix.arch is not None and suffix.windows_platform is None and suffix.os & oses & {"linux", "android"}:
        archs = {a for _t, tr in per_tag if tr.os & suffix.os for a in tr.arch}
        if archs and suffix.arch not in archs:
            return (f"the suffix {suffix.text!r} is for {suffix.arch}, but the wheel is tagged for "
                    f"{', '.join(sorted(archs))}")
    # the interpreter and ABI
    if suffix.python is not None:
        if any(t.interpreter == suffix.python and t.abi == suffix.abi for t in tags):
            return None
        if _default_build(suffix) and any(t.interpreter == suffix.python and t.abi == "none" for t in tags):
            return None  # cp311-none: CPython 3.11 with no ABI promise, whose build imports .cpython-311-*.so
        label = f"{suffix.python}-{suffix.abi}"
        if all(t.abi == "abi3" for t in tags):
            return (f"the suffix {suffix.text!r} loads only on {label}, but the wheel is an abi3 wheel "
                    f"({_describe_tags(tags)}) that claims every later version too; name it "
                    f"'.abi3.so' (Linux, macOS) or '.pyd' (Windows)")
        if all(t.abi == "none" for t in tags):
            return (f"the suffix {suffix.text!r} loads only on {label}, but the wheel is tagged "
                    f"{_describe_tags(tags)}, which claims every such Python")
        return f"the suffix {suffix.text!r} is for {label}, but the wheel is tagged {_describe_tags(tags)}"
    return None


def check_suffixes(wheel) -> list[Finding]:
    """WA602: each extension module's suffix against the wheel's tags."""
    tags = list(wheel.binary_tags)
    out = []
    for b in wheel.libraries:
        if not b.ok or not b.loadable or not is_extension_module(b):
            continue
        suffix = module_suffix(b.name)
        if suffix is None:
            continue  # (a library that merely exports PyInit_*: no importer looks for it by suffix)
        problem = _suffix_problem(suffix, tags)
        if problem:
            out.append(Finding("WA602", f"{b.path}: {problem}; the interpreter the tags promise will not "
                                        f"import it", subject=b.path, paths=[b.path], rule="abi"))
    return out


# ---- libpython -------------------------------------------------------------------------------

_LIBPYTHON = re.compile(r"^libpython\d[\d.]*[a-z]*\.(?:so(?:\.[\d.]+)?|dylib)$")


def links_libpython(dependency: str) -> bool:
    """Whether a dependency name is libpython: ``libpython3.11.so.1.0``, ``@rpath/libpython3.12.dylib``,
    ``/Library/Frameworks/Python.framework/Versions/3.11/Python``."""
    base = dependency.rsplit("/", 1)[-1]
    if _LIBPYTHON.match(base):
        return True
    return bool(re.search(r"(?:^|/)Python3?\.framework/", dependency))


#: platform families whose extension modules link the interpreter's library by design: Android
#: (PEP 738: ``libpython3.X.so``, which auditwheel's android policy allows) and iOS (PEP 730:
#: CPython's iOS build links every extension module against ``Python.framework``)
_LIBPYTHON_BY_DESIGN = frozenset({"android", "ios"})


def check_libpython(wheel) -> list[Finding]:
    """WA603: extension modules (ELF, Mach-O) that link libpython. (PE modules must import
    ``python3X.dll``: that is how Windows works; so do Android's and iOS's link the interpreter's
    library: wheels tagged only for those are not checked.)"""
    out: list[Finding] = []
    from wheelaudit.platforms.tags import wheel_platforms

    plats = wheel_platforms(wheel)
    if plats and all(p.family in _LIBPYTHON_BY_DESIGN for p in plats):
        return out  # PEP 738 / PEP 730: there an extension module must link the interpreter's library
    for b in wheel.libraries:
        if not b.ok or not b.loadable or b.format not in ("elf", "macho") or not is_extension_module(b):
            continue
        deps = [d for s in b.slices for d in s.dependencies if links_libpython(d.name)]
        if not deps:
            continue
        names = list(dict.fromkeys(d.name for d in deps))
        how = "DT_NEEDED" if b.format == "elf" else "LC_LOAD_DYLIB"
        out.append(Finding(
            "WA603",
            f"{b.path}: links libpython ({how} {', '.join(names)}); an extension module takes the "
            f"interpreter's symbols from the process that imports it (statically linked Pythons have no "
            f"libpython, others would load a second copy). "
            + ("Link with -undefined dynamic_lookup instead of libpython" if b.format == "macho"
               else "Link without -lpython: the symbols stay undefined until the interpreter provides them"),
            subject=b.path, paths=[b.path], rule="abi"))
    return out


# ---- debug info ------------------------------------------------------------------------------

def check_debug_info(wheel) -> list[Finding]:
    """WA604: a binary that carries DWARF debug info, with the bytes it costs."""
    out = []
    for b in wheel.libraries:
        if not b.ok:
            continue
        total = sum(s.debug_bytes for s in b.slices)
        if not total:
            continue
        where = ".debug_* sections" if b.format == "elf" else "__DWARF"
        share = f"{100 * total / b.size:.0f}% of its {human_size(b.size, binary=True, trim=False)}" if b.size else ""
        if b.kind == "dsym":
            out.append(Finding(
                "WA604",
                f"{b.path}: is a debug companion (a .dSYM's DWARF file, which only a debugger reads and no "
                f"loader opens): {total:,} bytes of {where} shipped in the wheel; publish the .dSYM "
                f"separately (a release asset, a symbol server) or leave it out of the wheel",
                subject=b.path, paths=[b.path], rule="abi",
                hint="leave *.dSYM out of the wheel's files and ship it beside the release"))
            continue
        out.append(Finding(
            "WA604",
            f"{b.path}: carries full debug info: {total:,} bytes of {where}, {share}; "
            f"strip it ({'strip --strip-debug' if b.format == 'elf' else 'dsymutil, then strip -S'}) "
            f"or ship it separately",
            subject=b.path, paths=[b.path], rule="abi"))
    return out


# ---- executable stack, text relocations --------------------------------------------------------

def check_exec_stack(wheel) -> list[Finding]:
    """WA606: ELF libraries the loader would give an executable stack."""
    from wheelaudit.binary.elf.loadability import NO_GNU_STACK_NOTE

    out = []
    for b in wheel.libraries:
        if not b.ok or b.format != "elf" or b.kind != "shared":
            continue
        for s in b.slices:
            if not s.exec_stack:
                continue
            missing = NO_GNU_STACK_NOTE.format(arch=s.arch) in s.notes
            evidence = (f"it has no PT_GNU_STACK program header, and the {s.arch} ABI then defaults to an "
                        f"executable stack" if missing else "its PT_GNU_STACK segment has the X flag (RWE)")
            out.append(Finding(
                "WA606",
                f"{b.path}: needs an executable stack: {evidence}; glibc 2.41+ refuses to dlopen it "
                f"(\"cannot enable executable stack\"). Link with -Wl,-z,noexecstack, and find the object "
                f"without .note.GNU-stack (usually assembly)",
                subject=b.path, paths=[b.path], rule="abi"))
    return out


def check_textrel(wheel) -> list[Finding]:
    """WA608: ELF libraries with text relocations."""
    out = []
    for b in wheel.libraries:
        if not b.ok or b.format != "elf" or b.kind != "shared":
            continue
        if any(s.textrel for s in b.slices):
            out.append(Finding(
                "WA608",
                f"{b.path}: has text relocations (DT_TEXTREL / DF_TEXTREL in its dynamic section): the "
                f"loader must write to its code, which SELinux and hardened kernels refuse; build every "
                f"object with -fPIC",
                subject=b.path, paths=[b.path], rule="abi"))
    return out


# ---- x86-64 ISA level --------------------------------------------------------------------------

#: each level above the baseline: what it adds, and which CPUs lack it
_X86_LEVELS = {
    "x86-64-v2": ("CMPXCHG16B, LAHF/SAHF, POPCNT, SSE3, SSSE3, SSE4.1, SSE4.2",
                  "CPUs before Intel Nehalem (2008) and AMD Bulldozer (2011) cannot load it"),
    "x86-64-v3": ("AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, XSAVE",
                  "CPUs before Intel Haswell (2013) and AMD Excavator (2015), and Atom-class cores before "
                  "Gracemont (Pentium, Celeron), cannot load it"),
    "x86-64-v4": ("AVX-512 F, BW, CD, DQ, VL",
                  "CPUs without AVX-512 (most desktop and laptop Intel CPUs, AMD before Zen 4 in 2022) "
                  "cannot load it"),
}


def check_isa_level(wheel) -> list[Finding]:
    """WA609: an x86-64 binary whose GNU property note needs an ISA level above the baseline that
    its wheel's manylinux / musllinux x86_64 tag promises (glibc's loader checks the note: ``CPU
    ISA level is lower than required``; musl's does not, and the code then faults on the first
    instruction the CPU lacks). Every loadable ELF binary counts, as auditwheel's check does."""
    from wheelaudit.platforms.tags import wheel_platforms

    tags = sorted(p.tag for p in wheel_platforms(wheel)
                  if p.family in ("manylinux", "musllinux") and "x86_64" in p.archs)
    if not tags:
        return []
    out = []
    for b in wheel.libraries:
        if not b.ok or not b.loadable or b.format != "elf" or b.kind == "object":
            continue
        level = next((s.x86_isa_needed for s in b.slices if s.arch == "x86_64" and s.x86_isa_needed in _X86_LEVELS),
                     None)
        if level is None:
            continue
        adds, who = _X86_LEVELS[level]
        if any(t.startswith("manylinux") for t in tags):
            fails = (f"glibc 2.33 and later refuse to load it on a CPU without {level} (\"CPU ISA level is lower "
                     f"than required\"): {who}")
        else:
            fails = (f"musl's loader does not read the note, so on a CPU without {level} the process dies of an "
                     f"illegal instruction where it first runs such code: {who.replace('cannot load it', 'cannot run it')}")
        out.append(Finding(
            "WA609",
            f"{b.path}: needs {level} ({adds}): its .note.gnu.property sets GNU_PROPERTY_X86_ISA_1_NEEDED "
            f"to {level}, but {', '.join(tags)} promises only the x86-64 baseline. {fails}",
            subject=b.path, paths=[b.path], rule="abi"))
    return out


# ---- code signatures ---------------------------------------------------------------------------

_ARM64 = ("arm64", "arm64e")


def check_signatures(wheel) -> list[Finding]:
    """WA607: arm64 Mach-O slices without a code signature, or whose page hashes disagree."""
    out = []
    for b in wheel.libraries:
        if not b.ok or b.format != "macho":
            continue
        for s in b.slices:
            if s.arch not in _ARM64 or s.kind in ("object", "dsym") or s.signature in (None, "valid"):
                continue
            if s.platform not in (None, "macos", "maccatalyst"):
                continue  # iOS & co.: the app's build signs every embedded binary with its own identity
            where = f"{b.path} [{s.arch}]" if b.universal else b.path
            if s.signature == "absent":
                what = ("has no code signature (no LC_CODE_SIGNATURE); macOS on Apple silicon kills the "
                        "process that loads unsigned arm64 code. Sign it (codesign -s - , or link with a "
                        "linker that signs ad hoc)")
            else:
                what = (f"its code signature disagrees with its bytes: {s.signature_detail}; macOS kills the "
                        f"process that loads it. Re-sign after editing (codesign -f -s -)")
            out.append(Finding("WA607", f"{where}: {what}", subject=b.path, paths=[b.path], rule="abi"))
    return out


# ---- the Stable ABI ---------------------------------------------------------------------------

_PYTHON_DLL = re.compile(r"^python3\d+t?\.dll$", re.I)


def _abi3_floor(tags: Iterable[Tag]) -> tuple[int, int] | None:
    """The minimum Python of a wheel's abi3 tags (``cp39-abi3``: 3.9; the highest cpXY among
    them, as abi3audit reads it), or None when the wheel is not abi3."""
    floors = []
    for tag in tags:
        if tag.abi == "abi3" and tag.interpreter.startswith("cp") and tag.interpreter[2:].isdigit():
            digits = tag.interpreter[2:]
            floors.append((int(digits[0]), int(digits[1:] or 0)))
    return max(floors) if floors else None


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def _interpreter(library: str) -> bool:
    """Whether imports bound to ``library`` (a PE DLL, a Mach-O install name or lookup) are the
    interpreter's: ``python3.dll``/``python3X.dll``, libpython, a flat or main-executable lookup."""
    return (library in (MACHO_FLAT, MACHO_EXECUTABLE) or bool(_PYTHON_DLL.match(library))
            or library.lower() == "python3.dll" or links_libpython(library))


def _bound_elsewhere(sl) -> set[str]:
    """Names the slice imports from a library that is not the interpreter (PE and two-level
    Mach-O name the library of each import): that library's own, whatever they are called
    (shiboken6.abi3.dll exports ``PyDateTimeAPI``, ``PyRun_String`` shims of its own)."""
    by_library = getattr(sl, "imports_from", None) or {}
    mine = {n for lib, names in by_library.items() if _interpreter(lib) for n in names}
    return {n for lib, names in by_library.items() if not _interpreter(lib) for n in names} - mine


def check_stable_abi(wheel) -> list[Finding]:
    """WA601: an extension module of an abi3 wheel imports a CPython symbol that the Stable ABI
    of the wheel's minimum version does not have: one added later (``cp39-abi3`` importing a
    3.10 function), or one that is not in it at all (a private ``_Py*``, a ``Py*`` outside the
    limited API). Imports only: what a module defines is its own. On Windows, importing from a
    versioned ``python3X.dll`` instead of ``python3.dll`` ties the module to that version.
    The Stable ABI is CPython's ``Misc/stable_abi.toml`` (platforms/data/stable_abi.json)."""
    from wheelaudit.platforms.policydata import stable_abi_symbol

    floor = _abi3_floor(wheel.binary_tags)
    if floor is None:
        return []
    label = f"{floor[0]}.{floor[1]}"
    out: list[Finding] = []
    for b in wheel.libraries:
        if not b.ok or not b.loadable or not is_extension_module(b):
            continue
        newer: dict[str, str] = {}
        outside: set[str] = set()
        dlls: set[str] = set()
        for sl in b.slices:
            for dll in getattr(sl, "imports_from", {}) or {}:
                if _PYTHON_DLL.match(dll):
                    dlls.add(dll)
            theirs = _bound_elsewhere(sl)
            for name in sl.imports:
                if not name.startswith(("Py", "_Py")) or name.startswith("PyInit_") or name in theirs:
                    continue
                added = stable_abi_symbol(name)
                if added is None:
                    outside.add(name)
                elif _version(added) > floor:
                    newer[name] = added
        if not (newer or outside or dlls):
            continue
        parts = []
        if newer:
            shown = sorted(newer, key=lambda n: (_version(newer[n]), n))
            parts.append("added to the Stable ABI after " + label + ": "
                         + ", ".join(f"{n} ({newer[n]})" for n in shown[:6])
                         + (f" and {len(shown) - 6} more" if len(shown) > 6 else ""))
        if outside:
            shown = sorted(outside)
            parts.append("not in the Stable ABI: " + ", ".join(shown[:6])
                         + (f" and {len(shown) - 6} more" if len(shown) > 6 else ""))
        if dlls:
            parts.append(f"imports from {', '.join(sorted(dlls))} instead of python3.dll")
        out.append(Finding(
            "WA601",
            f"{b.path} is tagged abi3 for Python {label} and later, but uses CPython symbols "
            + "; ".join(parts) + ": it fails to import (or misbehaves) on other Python versions",
            subject=b.path, paths=[b.path], symbols=sorted(newer) + sorted(outside), rule="abi",
            hint=("build with Py_LIMITED_API set to the tag's version (0x030900f0 for cp39) and use only "
                  "limited-API functions, or raise the wheel's abi3 tag to the version that added them")))
    return out


#: the checks that hold a binary to its wheel's tags (wheels merged by ``--together``: each member's own)
TAG_CHECKS = (check_stable_abi, check_suffixes)

#: the checks of this family: (codes, judge), in code order (the order of a report); all on by default
JUDGES: tuple[tuple[tuple[str, ...], Callable[[Wheel], list[Finding]]], ...] = (
    (("WA601",), check_stable_abi),
    (("WA602",), check_suffixes),
    (("WA603",), check_libpython),
    (("WA604",), check_debug_info),
    (("WA606",), check_exec_stack),
    (("WA607",), check_signatures),
    (("WA608",), check_textrel),
    (("WA609",), check_isa_level),
)
FAMILY = Family("abi", checks=tuple(Check.on_wheel(codes, judge) for codes, judge in JUDGES))


def check_abi(wheel: Wheel) -> list[Finding]:
    """Every WA6xx built-in check over ``wheel``, in code order."""
    findings: list[Finding] = []
    for _codes, judge in JUDGES:
        findings += judge(wheel)
    return findings
