"""Checks: facts in, findings out; a check never opens a file. One module per family of codes,
each with its ``FAMILY`` (the codes it owns and its checks); :mod:`wheelaudit.checks.registry`
lists the families in the order of a report, and :func:`wheelaudit.checks.evaluate.evaluate` runs
them. Every finding of wheelaudit is raised here."""
