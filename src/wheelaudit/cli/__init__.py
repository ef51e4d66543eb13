"""The command line: one module per command (``add_parser(subparsers)``, ``run(args) -> int``);
:mod:`wheelaudit.cli.main.main` dispatches."""
