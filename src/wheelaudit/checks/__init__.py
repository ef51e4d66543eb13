"""Checks, one module per code family (the target layout of issue #18): ``abi`` (WA6xx) and
``consumer`` (WA7xx) so far; the older families still live in ``wheelaudit.checks.evaluate`` and
``wheelaudit.checks.linkage`` until they move here."""
