"""CPU types (``<mach/machine.h>``) and the architecture names they are given."""

from __future__ import annotations

CPU_ARCH_ABI64 = 0x01000000
CPU_ARCH_ABI64_32 = 0x02000000
CPU_TYPE_X86 = 7
CPU_TYPE_ARM = 12
CPU_TYPE_POWERPC = 18
CPU_TYPE_X86_64 = CPU_TYPE_X86 | CPU_ARCH_ABI64
CPU_TYPE_ARM64 = CPU_TYPE_ARM | CPU_ARCH_ABI64
CPU_TYPE_ARM64_32 = CPU_TYPE_ARM | CPU_ARCH_ABI64_32
CPU_TYPE_POWERPC64 = CPU_TYPE_POWERPC | CPU_ARCH_ABI64
CPU_SUBTYPE_MASK = 0xFF000000  # capability bits (e.g. arm64e's pointer-auth ABI version)
_ARM_SUBTYPES = {5: "armv4t", 6: "armv6", 7: "armv5", 9: "armv7", 11: "armv7s", 12: "armv7k",
                 14: "armv6m", 15: "armv7m", 16: "armv7em"}


def arch_name(cputype: int, cpusubtype: int) -> str:
    """The architecture name (as ``lipo`` spells the family) of a cputype/cpusubtype pair."""
    cputype &= 0xFFFFFFFF
    sub = cpusubtype & ~CPU_SUBTYPE_MASK & 0xFFFFFFFF
    if cputype == CPU_TYPE_ARM64:
        if sub == 2:
            return "arm64e"
        if sub in (0, 1):  # CPU_SUBTYPE_ARM64_ALL, _V8
            return "arm64"
    elif cputype == CPU_TYPE_X86_64:
        return "x86_64h" if sub == 8 else "x86_64"
    elif cputype == CPU_TYPE_X86:
        return "i386"
    elif cputype == CPU_TYPE_ARM64_32:
        return "arm64_32"
    elif cputype == CPU_TYPE_ARM:
        if sub in _ARM_SUBTYPES:
            return _ARM_SUBTYPES[sub]
    elif cputype == CPU_TYPE_POWERPC:
        return "ppc"
    elif cputype == CPU_TYPE_POWERPC64:
        return "ppc64"
    return f"cpu_{cputype}_{sub}"
