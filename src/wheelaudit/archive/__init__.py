"""Opening a wheel: the zip directory (read with :mod:`zipfile`'s public API), the member reader,
wheel / tree / sdist recognition, RECORD and METADATA."""

from __future__ import annotations

from .errors import NotAWheel
from .limits import MAX_MEMBER_SIZE, MAX_MEMBERS, MAX_RATIO, MAX_TOTAL_RATIO, MEMORY_LIMIT
from .members import MemberData, MemberError, MemberReader, record_hash
from .names import unsafe_member_name
from .record import RecordChecker, parse_record
from .source import WheelSource, expand_inputs, open_wheel
from .zipdir import Member, ZipDirectory, read_zip_directory

__all__ = ["NotAWheel", "Member", "MemberData", "MemberError", "MemberReader", "RecordChecker", "WheelSource",
           "expand_inputs", "open_wheel", "read_zip_directory", "ZipDirectory", "parse_record", "record_hash", "unsafe_member_name",
           "MAX_MEMBER_SIZE", "MAX_MEMBERS", "MAX_RATIO", "MAX_TOTAL_RATIO", "MEMORY_LIMIT"]
