"""Plain data, no I/O."""
