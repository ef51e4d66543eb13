"""The one error of the consumer surface's readers."""

from __future__ import annotations

__all__ = ["SurfaceError"]


class SurfaceError(ValueError):
    """A consumer-surface file could not be read (malformed, or beyond a bound)."""
