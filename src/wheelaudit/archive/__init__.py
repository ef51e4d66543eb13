"""Opening a wheel: the zip directory (read with :mod:`zipfile`'s public API), the member reader,
wheel / tree / sdist recognition, RECORD and METADATA."""

from __future__ import annotations

from wheelaudit.archive.errors import NotAWheel
from wheelaudit.archive.limits import MAX_MEMBER_SIZE, MAX_MEMBERS, MAX_RATIO, MAX_TOTAL_RATIO, MEMORY_LIMIT
from wheelaudit.archive.members import MemberData, MemberError, MemberReader, record_hash
from wheelaudit.archive.names import unsafe_member_name
from wheelaudit.archive.record import RecordChecker, parse_record
from wheelaudit.archive.source import WheelSource, expand_inputs, open_wheel
from wheelaudit.archive.zipdir import Member, ZipDirectory, read_zip_directory

__all__ = ["NotAWheel", "Member", "MemberData", "MemberError", "MemberReader", "RecordChecker", "WheelSource",
           "expand_inputs", "open_wheel", "read_zip_directory", "ZipDirectory", "parse_record", "record_hash", "unsafe_member_name",
           "MAX_MEMBER_SIZE", "MAX_MEMBERS", "MAX_RATIO", "MAX_TOTAL_RATIO", "MEMORY_LIMIT"]
