"""WA506 over real wheels, with its coverage: per wheel, the findings, and for each binary slice
whether its imports were checked, or why not (the ELF closure member without export data, the
Mach-O / PE libraries outside the wheel). Network-free: give it wheels already downloaded.

Usage: python scripts/unbound_real_wheels.py WHEEL...
"""
from __future__ import annotations

import sys
from collections import Counter

from wheelaudit.checks import symbols as S
from wheelaudit.model.binary import MACHO_EXECUTABLE, MACHO_FLAT
from wheelaudit.checks.resolution import resolve_wheel
from wheelaudit.scanner import scan


def main(paths: list[str]) -> int:
    for path in paths:
        wheel = scan(path)
        resolved = resolve_wheel(wheel)
        found = S.check_unbound(wheel, resolved)
        exports = S._Exports({b.path: b for b in wheel.libraries})
        policy = S._elf_policy(wheel)
        checked = Counter()
        skipped = Counter()
        for b in wheel.libraries:
            if not b.ok or b.path not in resolved:
                continue
            for s in b.slices:
                if b.format == "elf":
                    got = S._elf_unbound(b, s, resolved, exports, policy)
                    if got is None:
                        skipped["elf: " + S._elf_scope(b, s, resolved, policy, exports).unknown.split(" (")[0]] += 1
                    else:
                        checked["elf slices"] += 1
                        checked["elf imports"] += len(s.imports)
                    continue
                by_dep = {(r.dependency.name.lower() if b.format == "pe" else r.dependency.name): r
                          for r in resolved[b.path].get(s.arch, [])}
                for lib, names in s.imports_from.items():
                    r = by_dep.get(lib.lower() if b.format == "pe" else lib)
                    if lib in (MACHO_FLAT, MACHO_EXECUTABLE):
                        skipped[f"{b.format}: {lib}"] += len(names)
                    elif r is not None and r.status == "inside":
                        checked[f"{b.format} imports bound inside the wheel"] += len(names)
                    else:
                        skipped[f"{b.format}: {r.status if r else 'no dependency'} library"] += len(names)
        print(f"== {wheel.filename if hasattr(wheel, 'filename') else path}: {len(found)} WA506")
        for f in found:
            print("  ", f.message[:400], "| symbols:", len(f.symbols))
        print("   checked:", dict(checked))
        print("   not checked:", dict(skipped.most_common(8)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
