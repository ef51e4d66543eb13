"""The facts a scan establishes about each native binary: one model for ELF, Mach-O and PE.

Readers (``wheelaudit.binary``) produce these; rules are evaluated over them. Nothing here
opens a file or knows about rules. Every type is a plain, picklable dataclass so that scans can
run in worker processes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

Format = Literal["elf", "macho", "pe"]
#: "dsym": a Mach-O debug companion (MH_DSYM, ``*.dSYM/Contents/Resources/DWARF/*``), which no
#: loader ever opens
Kind = Literal["shared", "bundle", "executable", "object", "dsym"]
SymbolType = Literal["func", "data", "other"]
Binding = Literal["global", "weak", "local"]
DependencyKind = Literal["needed", "load", "weak", "reexport", "upward", "lazy", "import", "delay"]
RpathKind = Literal["rpath", "runpath", "lc_rpath"]


@dataclass(frozen=True)
class Symbol:
    """A defined symbol.

    ``name`` is the name as the linker sees it, less Mach-O's leading underscore and less any ELF
    ``@version`` suffix; ``demangled`` is the C++-demangled form (equal to ``name`` for C names).
    ``demangled`` is computed from ``name`` on first use (readers leave it out: a big library
    has hundreds of thousands of symbols and a rule looks at a handful); it takes no part in
    equality or hashing, being a function of ``name``.
    """

    name: str
    demangled: str = field(default=None, compare=False)  # type: ignore[assignment]
    binding: Binding = "global"
    type: SymbolType = "other"
    version: str | None = None  # ELF symbol version (e.g. "GLIBC_2.2.5"), if any

    @property
    def weak(self) -> bool:
        """A weak definition (ELF STB_WEAK, Mach-O weak definition): replaceable at load time."""
        return self.binding == "weak"


def _no_demangler(name: str) -> str:
    raise RuntimeError("Symbol.demangled read before wheelaudit.binary (the demangler) was imported")


#: what ``Symbol.demangled`` is computed with when a reader left it unset: the readers' stage
#: installs its demangler (:func:`use_demangler`) when :mod:`wheelaudit.binary` is imported,
#: which every producer of symbols imports; the model itself demangles nothing
_demangler: Callable[[str], str] = _no_demangler


def use_demangler(demangle: Callable[[str], str]) -> None:
    """Install the function that ``Symbol.demangled`` demangles an unset name with."""
    global _demangler
    _demangler = demangle


class _LazyDemangled:
    """``Symbol.demangled``: kept in the instance ``__dict__`` like a plain field (so pickling,
    ``vars()`` and the readers' fast constructors see an ordinary dataclass), demangled from
    ``name`` when it is read while still unset (None)."""

    def __get__(self, obj: Symbol | None, objtype: type | None = None) -> str | None:
        if obj is None:
            return None
        d = obj.__dict__
        value = d.get("demangled")
        if value is None:
            value = d["demangled"] = _demangler(d["name"])
        return value

    def __set__(self, obj: Symbol, value: str | None) -> None:
        obj.__dict__["demangled"] = value


Symbol.demangled = _LazyDemangled()  # type: ignore[assignment]  # after @dataclass: the field keeps its default


def _symbol_factory():
    """The one way readers build a :class:`Symbol` in bulk (a big library has hundreds of
    thousands). Invariant: it returns an object equal to ``Symbol(name, demangled, binding,
    type, version)`` in every field, hash and ``vars()``; it fills the instance ``__dict__`` at
    once instead of the frozen dataclass's one ``object.__setattr__`` per field, and is used only
    when a probe at import proves that invariant (else the real constructor is)."""
    new = object.__new__

    def make(name: str, binding: Binding = "global", type_: SymbolType = "other", version: str | None = None,
             demangled: str | None = None) -> Symbol:
        sym = new(Symbol)
        sym.__dict__.update(name=name, demangled=demangled, binding=binding, type=type_, version=version)
        return sym

    def slow(name: str, binding: Binding = "global", type_: SymbolType = "other", version: str | None = None,
             demangled: str | None = None) -> Symbol:
        return Symbol(name, demangled, binding, type_, version)  # type: ignore[arg-type]

    try:
        probe, real = make("_Z1fv", "weak", "func", "V", "f()"), slow("_Z1fv", "weak", "func", "V", "f()")
        if (probe == real and vars(probe) == vars(real) and hash(probe) == hash(real)
                and not hasattr(Symbol, "__slots__") and not hasattr(Symbol, "__post_init__")
                and list(Symbol.__dataclass_fields__) == ["name", "demangled", "binding", "type", "version"]):
            return make
    except Exception:  # noqa: BLE001 - any surprise: the real constructor
        pass
    return slow


#: ``make_symbol(name, binding, type, version=None, demangled=None) -> Symbol``
make_symbol = _symbol_factory()


@dataclass(frozen=True)
class Dependency:
    """A library the binary asks the loader for (DT_NEEDED, LC_LOAD_*_DYLIB, PE import).

    ``kind`` for PE: ``import`` (the import directory: loaded with the image) or ``delay`` (the
    delay-import directory: loaded on the first call into it, so its absence shows only then).
    """

    name: str
    kind: DependencyKind = "needed"

    @property
    def optional(self) -> bool:
        """A dependency whose absence at load time is not an error: a Mach-O weak load, a PE
        delay-load import (it fails only when a function of it is first called)."""
        return self.kind in ("weak", "delay")


@dataclass(frozen=True)
class Rpath:
    """One run-time search path entry, with where it came from."""

    path: str
    kind: RpathKind


#: ``Slice.imports_from`` keys of Mach-O imports bound to no dependency by name
MACHO_FLAT = "(flat lookup)"
MACHO_EXECUTABLE = "(main executable)"
MACHO_SELF = "(this image)"


@dataclass
class Slice:
    """The facts of one architecture: the whole file for a thin binary, one slice of a universal one."""

    arch: str
    kind: Kind = "shared"
    identity: str | None = None  # ELF DT_SONAME / Mach-O LC_ID_DYLIB / PE export directory DLL name
    dependencies: list[Dependency] = field(default_factory=list)
    rpaths: list[Rpath] = field(default_factory=list)
    min_os: str | None = None  # Mach-O LC_BUILD_VERSION / LC_VERSION_MIN_* minos, "11.0"; PE subsystem version "6.0"
    sdk: str | None = None
    needs_versions: list[str] = field(default_factory=list)  # ELF verneed: "GLIBC_2.28", ...
    #: ELF: undefined dynamic symbol -> the version node it requires (its vernaux name,
    #: ``{"fcntl64": "GLIBC_2.28"}``); versioned imports only
    import_versions: dict[str, str] = field(default_factory=dict)
    #: ELF (STB_WEAK undefined) and Mach-O (N_WEAK_REF): imports the loader leaves null when no
    #: library defines them, instead of failing the load; a subset of ``imports``
    weak_imports: list[str] = field(default_factory=list)
    #: ELF 32-bit ARM: "hard" (float arguments in VFP registers: armhf) or "soft" (in core
    #: registers: armel), from e_flags or .ARM.attributes; None when neither says
    float_abi: str | None = None
    #: Mach-O: the platform the deployment target is for ("macos", "ios", "ios-simulator", ...)
    #: and the load command ``min_os`` comes from ("LC_BUILD_VERSION", "LC_VERSION_MIN_MACOSX")
    platform: str | None = None
    min_os_command: str | None = None
    stripped: bool = True  # no local symbol table to read
    exports: Sequence[Symbol] = field(default_factory=list)  # defined, global or weak, exported (a list or a SymbolTable)
    imports: list[str] = field(default_factory=list)  # undefined references (names, undecorated)
    locals: Sequence[Symbol] = field(default_factory=list)  # defined, not exported (unstripped only)
    strings: frozenset[bytes] = frozenset()  # which of the requested byte strings occur here
    offset: int = 0  # where the slice starts in the file (0 for thin binaries)
    size: int = 0  # slice size in bytes
    notes: list[str] = field(default_factory=list)  # reader remarks worth showing (limits hit, ...)
    # PE only (None / empty elsewhere; imports_from: Mach-O too):
    #: PE: DLL -> names imported from it ("#12": by ordinal). Mach-O (two-level namespace): the
    #: install name of the dependency each import's library ordinal names -> its names; the
    #: ordinals that name no dependency are the keys MACHO_FLAT (flat lookup: -flat_namespace,
    #: -undefined dynamic_lookup), MACHO_EXECUTABLE (the main executable) and MACHO_SELF
    imports_from: dict[str, list[str]] = field(default_factory=dict)
    forwarders: dict[str, str] = field(default_factory=dict)  # export name -> "NTDLL.RtlAllocateHeap" (not in exports)
    subsystem: str | None = None  # "windows_gui", "windows_cui", ...
    linker_version: str | None = None  # optional header Major/MinorLinkerVersion, "14.38"
    debug_path: str | None = None  # CodeView PDB path of the debug directory
    file_version: str | None = None  # VS_FIXEDFILEINFO of the version resource, "14.38.33130.0"
    #: PE: an IL-only .NET assembly that does not require 32 bits (AnyCPU): the CLR, not the
    #: Windows loader, runs it, on any architecture and under Mono or .NET on other systems
    managed: bool = False
    product_version: str | None = None
    # -- loadability facts (the WA6xx checks) --------------------------------------------------
    #: ELF: whether the loader gives this image an executable stack: PT_GNU_STACK's PF_X, or
    #: without PT_GNU_STACK the ABI's default (executable except on aarch64 and loongarch64);
    #: None where that does not apply (Mach-O, PE, relocatable objects, no program headers)
    exec_stack: bool | None = None
    #: ELF: the dynamic table asks for relocations in read-only segments (DT_TEXTREL or DF_TEXTREL)
    textrel: bool = False
    #: ELF x86: the ISA level its GNU property note says the image needs (GNU_PROPERTY_X86_ISA_1_NEEDED,
    #: its highest level: "x86-64-baseline", "x86-64-v2", "x86-64-v3", "x86-64-v4"); None without one
    x86_isa_needed: str | None = None
    #: bytes of DWARF debug info the file carries: ELF, the non-allocated ``.debug_*`` /
    #: ``.zdebug_*`` sections when ``.debug_info`` is among them; Mach-O, the ``__DWARF``
    #: segment (or sections); 0 when there is none
    debug_bytes: int = 0
    #: Mach-O code signature: "valid" (every page hash of each CodeDirectory agrees with the
    #: bytes), "invalid", "absent" (no LC_CODE_SIGNATURE); None when not applicable (ELF, PE,
    #: object files) or not verifiable (an unsupported layout: see ``notes``)
    signature: str | None = None
    #: with ``signature == "invalid"``: what disagrees, as evidence ("page 3 [0x3000, 0x4000)
    #: in __TEXT: SHA-256 ... != ..."); otherwise None
    signature_detail: str | None = None
    #: with ``signature == "invalid"`` because of a page hash: the index of the first page that
    #: disagrees (pages of 2^pageSize bytes from the slice start); otherwise None
    signature_page: int | None = None

    @property
    def exports_count(self) -> int:
        """Number of exported definitions."""
        return len(self.exports)

    @property
    def imports_count(self) -> int:
        """Number of undefined references."""
        return len(self.imports)


@dataclass
class Binary:
    """A native binary found in a wheel, identified by its magic bytes."""

    path: str  # POSIX path inside the wheel (or relative to the scanned directory)
    format: Format
    size: int
    kind: Kind = "shared"
    slices: list[Slice] = field(default_factory=list)
    error: str | None = None  # set when the binary could not be parsed (finding WA001)

    @property
    def name(self) -> str:
        """File name (the last path component)."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def directory(self) -> str:
        """Directory inside the wheel ('' at the root)."""
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""

    @property
    def archs(self) -> list[str]:
        """Architectures, one per slice."""
        return [s.arch for s in self.slices]

    @property
    def loadable(self) -> bool:
        """False for a file that no platform loader ever opens, whatever its name: a Mach-O debug
        companion (``kind == "dsym"``). Its facts are shown; no loader verdict is given on it."""
        return self.kind != "dsym"

    @property
    def universal(self) -> bool:
        """True for a universal (fat) binary with several slices."""
        return len(self.slices) > 1

    @property
    def ok(self) -> bool:
        """False when the binary could not be parsed (see ``error``)."""
        return self.error is None

    # Conveniences for assertions in tests (``wheel.library(p).rpaths == ["@loader_path"]``):
    # the union over slices, in first-seen order.

    @property
    def identity(self) -> str | None:
        return next((s.identity for s in self.slices if s.identity), None)

    @property
    def dependencies(self) -> list[str]:
        return list(dict.fromkeys(d.name for s in self.slices for d in s.dependencies))

    @property
    def rpaths(self) -> list[str]:
        return list(dict.fromkeys(r.path for s in self.slices for r in s.rpaths))

    @property
    def exports(self) -> list[str]:
        """Demangled names of the exported definitions."""
        return sorted({x.demangled for s in self.slices for x in s.exports})

    @property
    def imports(self) -> list[str]:
        return sorted({x for s in self.slices for x in s.imports})
