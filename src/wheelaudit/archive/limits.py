"""Bounds on what a wheel may claim (hostile input: zip bombs, absurd directories)."""

from __future__ import annotations

#: refuse members whose declared size is beyond this (zip bombs); a wheel member of 8 GiB is absurd
MAX_MEMBER_SIZE = 8 << 30
#: refuse compression ratios beyond this for members over RATIO_FLOOR bytes (zip bombs)
MAX_RATIO = 1000
RATIO_FLOOR = 16 << 20
#: refuse a zip directory (or a tree) with more entries than this
MAX_MEMBERS = 500_000
#: refuse a wheel whose members together inflate past this ratio once they exceed TOTAL_RATIO_FLOOR
#: bytes (many members each under the per-member bomb check; real wheels are about 3 to 5)
MAX_TOTAL_RATIO = 100
TOTAL_RATIO_FLOOR = 1 << 30
#: native members up to this size are kept in memory; larger ones in an anonymous temporary file
MEMORY_LIMIT = 64 << 20
