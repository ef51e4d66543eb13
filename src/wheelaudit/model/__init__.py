"""The model: plain data that flows between the stages, and the one registry of finding codes
(``codes.py``); no I/O."""
