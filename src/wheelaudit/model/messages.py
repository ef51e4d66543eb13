"""Wording shared by the findings, the renderers and the progress lines: plain functions of
plain values."""

from __future__ import annotations

__all__ = ["human_size"]


def human_size(n: int) -> str:
    """A byte count as people read it: ``512 B``, ``1.5 KiB``, ``3.2 GiB`` (binary units, one
    decimal past bytes)."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover
