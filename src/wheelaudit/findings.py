"""Findings: the stable codes of SPEC §4 and the record each check produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Code:
    code: str
    severity: Severity
    title: str


CODES: dict[str, Code] = {
    c.code: c
    for c in (
        Code("WA001", "error", "a native binary could not be parsed (truncated, malformed, unsupported)"),
        Code("WA002", "error", "the wheel's RECORD is missing, or a file's hash or size disagrees with it"),
        Code("WA003", "warning", "a rule matched nothing in this wheel: a check that examined nothing"),
        Code("WA004", "warning", "a waiver matched no finding, or lapsed"),
        Code("WA101", "error", "a native library in scope matches no expected name"),
        Code("WA102", "error", "identity (SONAME / install name) differs from the file name, or is absolute"),
        Code("WA201", "error", "a component is defined by more than one library"),
        Code("WA202", "error", "a required component is defined by no library"),
        Code("WA203", "error", "a component is defined by one library, but not its owner"),
        Code("WA204", "error", "the owner ships but defines none of the component's sentinels"),
        Code("WA205", "error", "some of a component's sentinels are defined and others are not"),
        Code("WA206", "warning", "the slices of a universal binary disagree about a component"),
        Code("WA301", "error", "a file rule's count is not met"),
        Code("WA302", "error", "a file is not beside its component's owner"),
        Code("WA303", "error", "a file ships though its component does not"),
        Code("WA401", "error", "a binary defines a component it must not"),
        Code("WA402", "error", "a binary does not import a symbol it must"),
        Code("WA403", "error", "a binary lacks a dependency it must have / has one it must not"),
        Code("WA501", "error", "a dependency resolves neither inside the wheel nor to an allowed external library"),
        Code("WA502", "error", "an rpath is absolute, empty, or forbidden"),
        Code("WA503", "error", "a binary's architectures do not match the wheel's platform tag"),
        Code("WA504", "error", "a binary needs a symbol version or OS version newer than the tag allows"),
        Code("WA505", "error", "a dependency is provided by a distribution that the wheel does not require"),
        Code("WA602", "error", "an extension module's file name (ABI / platform suffix) disagrees with the wheel's tags"),
        Code("WA603", "error", "an extension module links libpython"),
        Code("WA604", "warning", "a binary carries full debug info"),
        Code("WA606", "error", "an ELF library needs an executable stack (glibc 2.41+ refuses to dlopen it)"),
        Code("WA607", "error", "an arm64 Mach-O slice has no code signature, or its page hashes disagree with its bytes"),
        Code("WA608", "warning", "an ELF library has text relocations"),
    )
}

SEVERITY_RANK = {"warning": 1, "error": 2}


@dataclass
class Finding:
    """One thing a check found.

    ``subject`` is the component, file rule, binary rule or library path the finding is about
    (for component findings, the component's name). ``paths`` are paths inside the wheel.
    """

    code: str
    message: str
    subject: str = ""
    paths: list[str] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)
    rule: str = ""  # id of the rule that produced it ("component:backend_mlx", "names", ...)
    waived_by: str | None = None  # the waiver's reason when a [[waive]] accepted it

    @property
    def severity(self) -> Severity:
        return CODES[self.code].severity

    @property
    def waived(self) -> bool:
        return self.waived_by is not None

    def to_dict(self) -> dict:
        data = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "subject": self.subject,
            "paths": list(self.paths),
            "symbols": list(self.symbols),
        }
        if self.rule:
            data["rule"] = self.rule
        if self.waived_by is not None:
            data["waived"] = self.waived_by
        return data


def code_selected(code: str, select: list[str] | None, ignore: list[str] | None) -> bool:
    """``--select`` / ``--ignore`` semantics: codes or prefixes (``WA2``); ignore wins."""
    if select and not any(code.startswith(p) for p in select):
        return False
    if ignore and any(code.startswith(p) for p in ignore):
        return False
    return True


def examples(names: list[str] | set[str], limit: int = 3) -> str:
    """``a, b, c (+12 more)`` for messages."""
    items = sorted(names)
    shown = ", ".join(items[:limit])
    more = len(items) - limit
    return f"{shown} (+{more} more)" if more > 0 else shown
