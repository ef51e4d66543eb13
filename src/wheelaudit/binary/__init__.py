"""Native binary readers side by side (issue #18's ``binary/``; the format readers still live in
``wheelaudit.readers`` until the move). ``codesign``: Mach-O code signature verification."""
