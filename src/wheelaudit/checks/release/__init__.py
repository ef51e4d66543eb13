"""The release as a whole: a wheel against the last release's (``check --baseline``, WA801-WA804:
:mod:`.baseline`), and a release's wheels against each other (``check --release``, WA811-WA813:
:mod:`.cohort`). Both read the ABI and the pairing of :mod:`.abi`, which ``diff`` shares. Facts
only: nothing here opens a file."""
