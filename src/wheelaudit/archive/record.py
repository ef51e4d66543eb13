"""RECORD: every member's hash and size checked against it (WA002)."""

from __future__ import annotations

import csv
import io

from wheelaudit.model.defects import Defect
from wheelaudit.model.messages import examples
from wheelaudit.archive.members import MemberData
from wheelaudit.archive.names import unsafe_member_name

#: the largest RECORD read (about 500,000 rows)
RECORD_LIMIT = 64 << 20
#: files RECORD lists and the wheel lacks, each a defect up to this many; past it, one defect
#: counts them and carries the first MAX_MISSING_PATHS paths
MAX_MISSING_NAMED = 20
MAX_MISSING_PATHS = 1000


def parse_record(text: str) -> dict[str, tuple[str, str]]:
    """RECORD rows as ``path -> (hash, size)`` (csv, as the wheel spec says).

    Raises :class:`ValueError` (naming the line) for text that is not CSV.
    """
    rows: dict[str, tuple[str, str]] = {}
    reader = csv.reader(io.StringIO(text))
    empty = ("", "")  # (one tuple for every row without hash and size: a RECORD of such rows stays small)
    try:
        for row in reader:
            if row:
                value = (row[1] if len(row) > 1 else "", row[2] if len(row) > 2 else "")
                rows[row[0]] = empty if value == empty else value
    except csv.Error as exc:
        raise ValueError(f"line {reader.line_num}: {exc}") from None
    return rows


class RecordChecker:
    """Checks each member read against RECORD (a WA002 defect each). ``text`` is RECORD's text, None
    when the wheel has none; ``why`` says why it could not be read."""

    EXEMPT = ("RECORD", "RECORD.jws", "RECORD.p7s")

    def __init__(self, dist_info: str | None, text: str | None, why: str | None = None, *,
                 zip: bool = True, refused: set[str] | frozenset[str] = frozenset()) -> None:
        self.defects: list[Defect] = []
        self.dist_info = dist_info
        self.zip = zip
        self.rows: dict[str, tuple[str, str]] | None = None
        where = f"{dist_info}/RECORD" if dist_info else "*.dist-info/RECORD"
        if why:
            self.defects.append(Defect("WA002", f"{where} cannot be read ({why}): no file can be verified",
                                         subject=where, paths=[where]))
        elif text is None:
            self.defects.append(Defect("WA002", f"the wheel has no RECORD ({where}): no file can be verified",
                                         subject=where, paths=[where]))
        else:
            try:
                self.rows = parse_record(text)
            except ValueError as exc:
                self.defects.append(Defect("WA002", f"{where} is not valid CSV ({exc}): no file can be verified",
                                             subject=where, paths=[where]))
        self.seen: set[str] = set(refused)  # not read, and said so already

    def check(self, md: MemberData) -> None:
        self.defects.extend(self.member_defects(md))

    def member_defects(self, md: MemberData) -> list[Defect]:
        """What RECORD says of one member read (and it is marked as seen)."""
        path = md.member.path
        self.seen.add(path)
        if md.error:
            return [Defect("WA002", f"{path}: {md.error}", subject=path, paths=[path])]
        out: list[Defect] = []
        if md.size != md.member.size:
            lie = (f"the zip directory declares {md.member.size} bytes but the member holds {md.size}" if self.zip
                   else f"{md.member.size} bytes when listed, {md.size} when read (it changed during the scan)")
            out.append(Defect("WA002", f"{path}: {lie}", subject=path, paths=[path]))
        if self.rows is None:
            return out
        if self.dist_info and path.startswith(self.dist_info + "/") and path.rsplit("/", 1)[1] in self.EXEMPT:
            return out
        row = self.rows.get(path)
        if row is None:
            out.append(Defect("WA002", f"{path} is not listed in RECORD", subject=path, paths=[path]))
            return out
        want_hash, want_size = row
        if not want_hash:
            out.append(Defect("WA002", f"{path} has no hash in RECORD", subject=path, paths=[path]))
            return out
        algo = want_hash.split("=", 1)[0]
        if algo != "sha256":
            out.append(Defect("WA002", f"{path}: RECORD uses hash {algo!r}; only sha256 is checked", subject=path,
                               paths=[path]))
        elif want_hash != md.digest:
            out.append(Defect("WA002", f"{path}: hash {md.digest} does not match RECORD's {want_hash}", subject=path,
                               paths=[path]))
        if want_size and want_size.isdigit() and int(want_size) != md.size:
            out.append(Defect("WA002", f"{path}: size {md.size} does not match RECORD's {want_size}", subject=path,
                               paths=[path]))
        return out

    def finish(self) -> list[Defect]:
        if self.rows is not None:
            missing = [p for p in self.rows if p not in self.seen and not p.endswith("/") and unsafe_member_name(p) is None
                       and not (p.endswith(".pyc") and "__pycache__" in p)]
            missing.sort()
            if len(missing) <= MAX_MISSING_NAMED:
                for p in missing:
                    self.defects.append(Defect("WA002", f"RECORD lists {p}, which the wheel does not contain",
                                                 subject=p, paths=[p]))
            else:  # (one defect, whatever the count: a RECORD of phantom rows cannot flood the report)
                where = f"{self.dist_info}/RECORD" if self.dist_info else "*.dist-info/RECORD"
                self.defects.append(Defect(
                    "WA002", f"RECORD lists {len(missing)} files that the wheel does not contain: "
                    f"{examples(missing, 5, sort=False)}", subject=where,
                    paths=missing[:MAX_MISSING_PATHS]))
        return self.defects
