"""Checks, one module per code family (the target layout of issue #18; the older families still
live in ``wheelaudit.evaluate`` and ``wheelaudit.linkage`` until they move here)."""
