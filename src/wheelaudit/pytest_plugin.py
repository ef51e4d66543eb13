"""pytest plugin (entry point ``pytest11``); inert unless ``--wheelaudit`` is given."""
