"""The model: plain data that flows between the stages (no I/O, no rules)."""
