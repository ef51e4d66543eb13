"""GNU symbol versions: the version definitions and requirements of the dynamic table."""

from __future__ import annotations

from wheelaudit.binary import MalformedBinary
from wheelaudit.binary.elf.dynamic import Dynamic
from wheelaudit.binary.elf.constants import (
    DT_VERDEF,
    DT_VERDEFNUM,
    DT_VERNEED,
    DT_VERNEEDNUM,
    SHT_GNU_VERDEF,
    SHT_GNU_VERNEED,
    VER_FLG_BASE,
)


class Versions(Dynamic):
    """The GNU symbol versions: definitions (``DT_VERDEF``) and requirements (``DT_VERNEED``)."""

    def read_versions(self) -> tuple[dict[int, str | None], list[str]]:
        """``{version index: name (None for the base version)}`` and the required version names."""
        index: dict[int, str | None] = {}
        needs: set[str] = set()
        by_type = {s[1]: s for s in self.sections}
        e = self.e
        if DT_VERDEF in self.tags:
            off, _ = self.map_addr(self.tags[DT_VERDEF], "DT_VERDEF")
            count = self.tags.get(DT_VERDEFNUM)
            if count is None and SHT_GNU_VERDEF in by_type:
                count = by_type[SHT_GNU_VERDEF][7]  # sh_info
            self.walk_versions(off, count, 20, "version definition (DT_VERDEF)",
                               lambda o: self._verdef(o, index))
        if DT_VERNEED in self.tags:
            off, _ = self.map_addr(self.tags[DT_VERNEED], "DT_VERNEED")
            count = self.tags.get(DT_VERNEEDNUM)
            if count is None and SHT_GNU_VERNEED in by_type:
                count = by_type[SHT_GNU_VERNEED][7]  # sh_info
            seen_aux: set[int] = set()  # bounds the whole walk: each record is read once

            def verneed(o: int) -> int:
                _v, cnt, _file, aux, nxt = self.unpack(e + "HHIII", o, "version requirement (DT_VERNEED)")
                a = o + aux
                for k in range(cnt):
                    if a in seen_aux:
                        raise MalformedBinary(f"version requirement entries overlap at 0x{a:x}")
                    seen_aux.add(a)
                    _h, _fl, other, name, anext = self.unpack(e + "IHHII", a, "version requirement entry (vernaux)")
                    vname = self.dyn_string(name, "version requirement name")
                    needs.add(vname)
                    index.setdefault(other & 0x7FFF, vname)
                    if anext == 0:
                        if k != cnt - 1:
                            raise MalformedBinary(
                                f"version requirement at 0x{o:x} claims {cnt} entries but its chain ends after {k + 1}"
                            )
                        break
                    a += anext
                return nxt

            self.walk_versions(off, count, 16, "version requirement (DT_VERNEED)", verneed)
        return index, sorted(needs)

    def _verdef(self, o: int, index: dict[int, str | None]) -> int:
        _v, flags, ndx, cnt, _hash, aux, nxt = self.unpack(self.e + "HHHHIII", o, "version definition (DT_VERDEF)")
        if cnt:
            name, _anext = self.unpack(self.e + "II", o + aux, "version definition name (verdaux)")
            index[ndx & 0x7FFF] = None if flags & VER_FLG_BASE else self.dyn_string(name, "version definition name")
        return nxt

    def walk_versions(self, off: int, count: int | None, entsize: int, what: str, step) -> None:
        limit = self.size // entsize
        if count is not None and count > limit:
            raise MalformedBinary(f"{what} claims {count} entries; the {self.size}-byte file holds at most {limit}")
        n = 0
        while count is None or n < count:  # offsets only grow (vd_next/vn_next are unsigned)
            nxt = step(off)
            n += 1
            if nxt == 0:
                if count is not None and n < count:
                    raise MalformedBinary(f"{what} claims {count} entries but its chain ends after {n}")
                break
            if count is None and n >= limit:
                raise MalformedBinary(f"{what} chain is longer than the file could hold")
            off += nxt
