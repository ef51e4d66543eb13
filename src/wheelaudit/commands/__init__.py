"""One module per command: ``add_parser(subparsers)`` registers it, ``run(args)`` runs it."""
