"""The rules: ``load`` (read a rules file and assemble it, every problem at once) into the typed
``model``, with ``lines`` (where in the text a key is), ``validate`` (the typed getters),
``tables`` (one reader per table) and ``errors`` (``RulesError``); ``config``
(``[tool.wheelaudit]``), ``format`` (the tables and keys, declared once), ``globs`` and
``conditions`` (the languages rules are written in)."""
