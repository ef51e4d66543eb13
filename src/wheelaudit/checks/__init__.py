"""Checks: the model and the rules in, findings out. Each module raises the codes of its family
(docs/architecture.md lists them); a check never opens a file."""
