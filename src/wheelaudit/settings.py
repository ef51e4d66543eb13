"""The ``WHEELAUDIT_*`` environment variables: each one read and validated here, nowhere else.

A bad value is a :class:`SettingError` naming the variable (a usage error, exit 2): a gate whose
time bound or switches silently fall back to something else is not the gate that was set up.
An empty variable counts as unset. A ``WHEELAUDIT_`` variable this version does not know is
reported as a warning (it may belong to a newer version, or be a typo), never ignored in silence.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping

#: the default bound on reading one binary, in seconds
DEFAULT_BINARY_TIMEOUT = 120.0

_BOOLEAN = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}

#: name -> what it takes, for messages and the docs
KNOWN = {
    "WHEELAUDIT_BINARY_TIMEOUT": "a number of seconds greater than 0 (the bound on reading one binary)",
    "WHEELAUDIT_PROGRESS": "0 or 1 (never / always draw the progress bar on a terminal; unset: unless CI is set)",
    "WHEELAUDIT_PROGRESS_DELAY": "a number of seconds, 0 or more (how long a run goes before the bar appears)",
    "WHEELAUDIT_DEBUG": "0 or 1 (show the traceback of an internal error)",
    "WHEELAUDIT_FORCE_WORKERS": "0 or 1 (read even a small wheel with worker processes)",
}


class SettingError(ValueError):
    """A setting (an environment variable or the option that stands for it) with a bad value."""


#: the longest time bound accepted (a day): more is a typo, and past what the system timer holds
MAX_SECONDS = 86_400.0


def seconds(text: str, what: str) -> float:
    """``text`` as a time bound: a finite number greater than 0 and at most :data:`MAX_SECONDS`.
    ``what`` names the setting."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise SettingError(f"{what}: {text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and value > 0):
        raise SettingError(f"{what}: {text!r} is not a number of seconds greater than 0")
    if value > MAX_SECONDS:
        raise SettingError(f"{what}: {text!r} is more than {MAX_SECONDS:g} seconds (a day)")
    return value


def _get(name: str, env: Mapping[str, str] | None) -> str | None:
    value = (os.environ if env is None else env).get(name, "")
    return value.strip() or None


def flag(name: str, default: bool, env: Mapping[str, str] | None = None) -> bool:
    """A boolean variable (1/0, true/false, yes/no, on/off)."""
    value = _get(name, env)
    if value is None:
        return default
    try:
        return _BOOLEAN[value.lower()]
    except KeyError:
        raise SettingError(f"{name}: {value!r} is not 0 or 1 (nor true/false, yes/no, on/off)") from None


#: how long a run goes before the progress bar appears, in seconds
DEFAULT_PROGRESS_DELAY = 1.0


def progress(env: Mapping[str, str] | None = None) -> bool | None:
    """$WHEELAUDIT_PROGRESS: True (draw the bar on a terminal even where CI is set), False
    (never), None (unset: the bar's own judgement)."""
    return None if _get("WHEELAUDIT_PROGRESS", env) is None else flag("WHEELAUDIT_PROGRESS", True, env)


def progress_delay(env: Mapping[str, str] | None = None) -> float:
    """$WHEELAUDIT_PROGRESS_DELAY: seconds (0 or more) before the bar appears, else
    :data:`DEFAULT_PROGRESS_DELAY`."""
    text = _get("WHEELAUDIT_PROGRESS_DELAY", env)
    if text is None:
        return DEFAULT_PROGRESS_DELAY
    try:
        value = float(text)
    except ValueError:
        raise SettingError(f"WHEELAUDIT_PROGRESS_DELAY: {text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and value >= 0):
        raise SettingError(f"WHEELAUDIT_PROGRESS_DELAY: {text!r} is not a number of seconds, 0 or more")
    return value


def binary_timeout(value: float | None = None, env: Mapping[str, str] | None = None) -> float:
    """The bound on reading one binary: ``value``, else $WHEELAUDIT_BINARY_TIMEOUT, else
    :data:`DEFAULT_BINARY_TIMEOUT`."""
    if value is not None:
        return seconds(str(value), "binary timeout")
    text = _get("WHEELAUDIT_BINARY_TIMEOUT", env)
    return DEFAULT_BINARY_TIMEOUT if text is None else seconds(text, "WHEELAUDIT_BINARY_TIMEOUT")


def check_environment(env: Mapping[str, str] | None = None) -> list[str]:
    """Validate every ``WHEELAUDIT_*`` variable; raise :class:`SettingError` for the first bad
    value, return warnings for the names this version does not know."""
    env = os.environ if env is None else env
    problems = []
    for _name, check in (("WHEELAUDIT_BINARY_TIMEOUT", lambda: binary_timeout(env=env)),
                         ("WHEELAUDIT_PROGRESS", lambda: progress(env)),
                         ("WHEELAUDIT_PROGRESS_DELAY", lambda: progress_delay(env)),
                         ("WHEELAUDIT_DEBUG", lambda: flag("WHEELAUDIT_DEBUG", False, env)),
                         ("WHEELAUDIT_FORCE_WORKERS", lambda: flag("WHEELAUDIT_FORCE_WORKERS", False, env))):
        try:
            check()
        except SettingError as exc:
            problems.append(str(exc))
    if problems:
        raise SettingError("; ".join(problems))
    warnings = []
    for name in sorted(n for n in env if n.startswith("WHEELAUDIT_") and n not in KNOWN):
        close = difflib.get_close_matches(name, list(KNOWN), n=1)
        hint = f" (did you mean {close[0]}?)" if close else f" (known: {', '.join(KNOWN)})"
        warnings.append(f"{name} is not a setting of this wheelaudit and has no effect{hint}")
    return warnings
