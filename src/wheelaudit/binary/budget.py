"""What one run may spend on the work its inputs decide: one :class:`Budget` per run.

Invariant: the work a run does on what a wheel (or a rules file) decides is bounded by the run's
one budget, never by a limit per item times the number of items. Every stage that does such work
draws on the same object, handed down explicitly by the run (``api.audit``, the commands), never
found through a module global:

* **time**: ``deadline`` (monotonic clock, seconds; None: no bound on the run as a whole). A
  binary's own time bound is cut to what is left (:meth:`Budget.bound`);
* **steps**: commands the CMake reader runs, over all the package configs of the run;
* **characters**: what is built from the input beyond its own size (CMake values expanded,
  demangled names), over the whole run (the memory part);
* **demangling seconds**: the time the capped demangler may take over all the names of the run
  that could explode (a name it does not get to stays mangled);
* **output**: the characters of the report (a name of a megabyte listed thousands of times
  would write gigabytes): past it the report is cut, with a line that says so.

A spent allowance stops that work where it is, and the cut is said once (:meth:`Budget.cut`,
:attr:`Budget.notes`), never silently. A forked worker spends a copy of the budget: the deadline
is shared (the clock is the system's), the counters are per process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

#: commands the CMake reader may run in one run, all package configs together
RUN_STEPS = 400_000
#: characters a run may build from its inputs (expanded CMake values, demangled names)
RUN_CHARS = 256 << 20
#: seconds the capped demangler may spend in one run, all names together
RUN_DEMANGLE_SECONDS = 5.0
#: characters of the report a run may write
RUN_OUTPUT = 256 << 20


class BudgetSpent(Exception):
    """An allowance of the run's budget is spent; ``str(exc)`` says which."""


@dataclass
class Budget:
    seconds: float | None = None
    steps: int = RUN_STEPS
    chars: int = RUN_CHARS
    demangle_seconds: float = RUN_DEMANGLE_SECONDS
    output: int = RUN_OUTPUT
    deadline: float | None = field(default=None, init=False)
    #: what was cut, once each, in order (kind -> the sentence that says so)
    notes: dict[str, str] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.demangle_limit = self.demangle_seconds
        self.limit_output = self.output
        if self.seconds is not None:
            self.deadline = time.monotonic() + self.seconds

    # ---- time --------------------------------------------------------------------------------
    def left(self) -> float | None:
        """Seconds left to the run (None: no bound), never below 0."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def bound(self, seconds: float) -> float:
        """A per-item time bound cut to what the run has left (at least a millisecond, so that
        a timer is still armed)."""
        left = self.left()
        return seconds if left is None else max(0.001, min(seconds, left))

    # ---- counted allowances ------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Spend ``n`` steps; :class:`BudgetSpent` once none are left."""
        self.steps -= n
        if self.steps < 0:
            raise BudgetSpent(self.cut("steps", f"more than {RUN_STEPS:,} CMake commands run in all"))

    def build(self, n: int) -> None:
        """Spend ``n`` characters built from the input; :class:`BudgetSpent` once none are left."""
        self.chars -= n
        if self.chars < 0:
            raise BudgetSpent(self.cut("chars", f"more than {RUN_CHARS:,} characters built from the input in all"))

    def demangling(self) -> float:
        """Seconds the capped demangler may still take (0: names that could explode stay mangled)."""
        left = self.left()
        return max(0.0, self.demangle_seconds if left is None else min(self.demangle_seconds, left))

    def spend_demangling(self, seconds: float) -> None:
        self.demangle_seconds -= seconds

    def cut(self, kind: str, sentence: str) -> str:
        """Record that the ``kind`` allowance cut some work (the first sentence of each kind is
        kept); returns ``sentence``."""
        self.notes.setdefault(kind, sentence)
        return sentence
