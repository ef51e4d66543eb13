"""What opening a wheel can refuse."""

from __future__ import annotations


class NotAWheel(Exception):
    """The path is not a wheel (or cannot be read as one): a usage error, exit 2."""


class NoWheels(NotAWheel):
    """A folder given as the wheels holds nothing at all (an empty ``dist/``): exit 2, "no wheels
    found"."""
