"""Reviewing a wheel by hand: the logic of ``dups``, ``diff`` and ``init`` (their command lines are in cli/)."""
