"""ELF reader: ELF32/ELF64, little and big endian, read with :mod:`struct` only.

Reads just the tables the facts need (program headers, the dynamic table, the dynamic symbol
table with its string table and GNU version tables, and ``.symtab`` when present), each sliced
out of ``data`` on its own, so a large library costs a few table-sized copies, not a file-sized
one. The loader's view comes first: the dynamic table through ``PT_DYNAMIC``, table addresses
mapped to file offsets through ``PT_LOAD``. Section headers are the fallback when there is no
such view, and a cross-check when there is (a disagreement becomes a ``Slice.notes`` entry).
A segment is mapped as the loader maps it, in whole pages: the rest of its last page past
``p_filesz`` holds the file's bytes unless the segment has a zero-filled part (:meth:`Image.page_tail`).

Every offset, size and count is checked against the file before use; anything out of range
raises :class:`MalformedBinary` with the reason. Every walk is bounded.

The jobs: :mod:`.image` (headers and address mapping), :mod:`.dynamic` (the dynamic table),
:mod:`.versions` (GNU symbol versions), :mod:`.symbols` (the symbol tables), :mod:`.loadability`
(executable stack, ISA level, ARM float ABI, debug info); :mod:`.constants` holds the format's numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from wheelaudit.binary import Buffer, MalformedBinary, find_strings
from wheelaudit.binary.budget import Budget
from wheelaudit.binary.elf.constants import (
    DT_NEEDED,
    DT_RPATH,
    DT_RUNPATH,
    DT_SONAME,
    EM_386,
    EM_ARM,
    EM_X86_64,
    ET_EXEC,
    ET_REL,
    PT_INTERP,
)
from wheelaudit.binary.elf.image import arch_name
from wheelaudit.binary.elf.loadability import Loadability
from wheelaudit.binary.elf.symbols import SymbolTables
from wheelaudit.binary.elf.versions import Versions
from wheelaudit.model.binary import Dependency, Kind, Rpath, Slice

__all__ = ["parse", "MalformedBinary"]


def parse(data: Buffer, needles: Sequence[bytes] = (), budget: Budget | None = None) -> list[Slice]:
    """Facts of one ELF file (always one slice). Raises :class:`MalformedBinary`. ``budget``: the
    run's, which names that could explode are demangled within."""
    return [Reader(data, budget).read(needles)]


class Reader(Versions, SymbolTables, Loadability):
    """One ELF file read into its :class:`Slice`: each table by the module of its job."""

    def read(self, needles: Sequence[bytes]) -> Slice:
        self.read_header()
        self.read_dynamic()
        kind: Kind
        if self.e_type == ET_REL:
            kind = "object"
        elif self.e_type == ET_EXEC or any(s[0] == PT_INTERP for s in self.segments):
            kind = "executable"
        else:
            kind = "shared"
        identity = None
        deps: list[Dependency] = []
        rpaths: list[Rpath] = []
        for tag, val in self.dyn:
            if tag == DT_NEEDED:
                deps.append(Dependency(self.dyn_string(val, "DT_NEEDED"), "needed"))
            elif tag == DT_RPATH or tag == DT_RUNPATH:
                kind_: Literal["rpath", "runpath"] = "rpath" if tag == DT_RPATH else "runpath"
                for entry in self.dyn_string(val, f"DT_{kind_.upper()}").split(":"):
                    rpaths.append(Rpath(entry, kind_))  # empty entries kept: they are findings
        if DT_SONAME in self.tags:
            identity = self.dyn_string(self.tags[DT_SONAME], "DT_SONAME")
        version_index, needs = self.read_versions() if self.dyn else ({}, [])
        exports, imports = self.read_dynsym(version_index)
        local_syms = self.read_symtab()
        arm_arch, float_abi = self.arm_facts() if self.e_machine == EM_ARM else (None, None)
        arch = arm_arch or arch_name(self.e_machine, self.is64, self.little)
        return Slice(
            arch=arch,
            kind=kind,
            identity=identity,
            dependencies=deps,
            rpaths=rpaths,
            needs_versions=needs,
            import_versions=self.import_versions,
            weak_imports=self.weak_imports,
            float_abi=float_abi,
            stripped=local_syms is None,
            exports=exports,
            imports=imports,
            locals=local_syms or [],
            strings=find_strings(self.data, needles),
            offset=0,
            size=self.size,
            notes=self.notes,
            exec_stack=self.exec_stack(kind, arch),
            textrel=self.textrel(),
            debug_bytes=self.debug_bytes(),
            x86_isa_needed=self.x86_isa_needed() if self.e_machine in (EM_386, EM_X86_64) else None,
        )
