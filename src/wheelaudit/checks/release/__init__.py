"""The release as a whole: a wheel against the last release's (``check --baseline``, WA801-WA804:
:mod:`.baseline`), and a release's wheels against each other (``check --release``, WA811-WA813:
:mod:`.cohort`). Both read the ABI and the pairing of :mod:`.abi`, which ``diff`` shares. Facts
only: nothing here opens a file."""

from wheelaudit.checks.base import Family

__all__ = ["FAMILY"]

#: the release's codes; their checks take several wheels, not one: run by
#: :func:`wheelaudit.api.audit_wheels` (``baseline.compare``, ``baseline.missing_counterpart``,
#: ``cohort.release_findings``), waived on the report entry they are about
FAMILY = Family("release", codes=("WA801", "WA802", "WA803", "WA804", "WA811", "WA812", "WA813"),
                run_by="wheelaudit.api.audit_wheels (check --baseline, check --release)")
