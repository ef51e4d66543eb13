"""The rules: ``load`` (read and validate a rules file, every problem at once, into the typed
model), ``config`` (``[tool.wheelaudit]``), ``globs`` and ``conditions`` (the languages rules
are written in)."""
