"""Built-in checks, one module per code family (issue #18 layout): ``abi`` (WA6xx) so far; the
others still live in ``wheelaudit.evaluate`` and ``wheelaudit.linkage`` until the move."""
