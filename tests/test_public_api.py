"""The package's public names: each one in ``__all__`` resolves, lazily, in a fresh interpreter."""

import subprocess
import sys


def test_every_public_name_resolves():
    code = ("import wheelaudit\n"
            "missing = [n for n in wheelaudit.__all__ if not hasattr(wheelaudit, n)]\n"
            "ns = {}\nexec('from wheelaudit import *', ns)\n"
            "missing += [n for n in wheelaudit.__all__ if n not in ns]\n"
            "print(len(wheelaudit.__all__), missing)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    count, missing = out.split(" ", 1)
    assert missing.strip() == "[]" and int(count) >= 18
    # the function, not the package of the same name
    out = subprocess.run([sys.executable, "-c", "import wheelaudit, wheelaudit.scanner.read; print(callable(wheelaudit.scan))"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
