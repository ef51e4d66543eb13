"""Which member names are safe to install."""

from __future__ import annotations


def unsafe_member_name(name: str) -> str | None:
    """Why a zip member name is unsafe, or None when it is fine."""
    if (name and name[0] not in "/." and "//" not in name and "/." not in name and "\\" not in name
            and "\x00" not in name and name[1:2] != ":"):
        return None  # (every component there and starting with another character than '.')
    if not name:
        return "is empty"
    if "\x00" in name:
        return "contains a NUL byte"
    if "\\" in name:
        return "contains a backslash"
    if name.startswith("/"):
        return "is an absolute path"
    if len(name) >= 2 and name[1] == ":":
        return "has a drive letter"
    parts = name.split("/")
    if ".." in parts:
        return "climbs out of the wheel with '..'"
    if parts[-1] == "":  # a directory entry ("dir/")
        parts.pop()
    if any(part in ("", ".") for part in parts):
        return "has an empty or '.' path component (it would install under another name)"
    return None
