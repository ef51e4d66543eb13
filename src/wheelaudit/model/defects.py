"""Damage found while reading: plain records the reading stages (``archive/``, ``scan/``) write
on the wheel, and that one family of checks (:mod:`wheelaudit.checks.integrity`) turns into
findings. A reading stage never raises a finding: it records what it could not read or what
disagrees, in words, and goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wheelaudit.model.finding import Finding

__all__ = ["Defect", "Overwrite"]


@dataclass(frozen=True)
class Defect:
    """Something damaged in what was read: ``code`` is the integrity code it is reported under
    (WA001: a native binary that cannot be read; WA002: the archive, RECORD, WHEEL or METADATA,
    an installed environment), ``message`` says what, ``subject`` and ``paths`` where (paths
    inside the wheel, or files of an installed environment)."""

    code: str
    message: str
    subject: str = ""
    paths: Sequence[str] = ()

    def to_dict(self) -> dict:
        """As a finding of the JSON output (``inspect`` shows what was read outside any evaluation,
        so with no rule id)."""
        return Finding(self.code, self.message, subject=self.subject, paths=list(self.paths)).to_dict()


@dataclass(frozen=True)
class Overwrite:
    """Two wheels installed together ship one installed path with different contents: the copy
    of ``kept`` (the wheel given first, by its label) stays, ``other``'s is overwritten.
    ``kept_path`` and ``other_path`` are the paths inside each wheel (they differ when a
    ``.data`` scheme puts a member where the other wheel has it)."""

    installed: str
    kept: str
    kept_path: str
    other: str
    other_path: str
