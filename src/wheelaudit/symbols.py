"""Symbol names: demangling (with the ``cpp_demangle`` crate, never our own) and name matching.

Names are as the linker sees them, less Mach-O's leading underscore and any ELF ``@version``.
"""

from __future__ import annotations

from functools import lru_cache

import cpp_demangle


@lru_cache(maxsize=1 << 16)
def _demangle_cached(name: str) -> str:
    try:
        return _cxxfilt_style(cpp_demangle.demangle(name))
    except Exception:  # noqa: BLE001 - a name that is not valid Itanium stays as it is
        return name


def _cxxfilt_style(text: str) -> str:
    """``cpp_demangle`` writes a few special names its own way (``{vtable(X)}``); use the
    spelling of c++filt, which is what release engineers know and write in rules."""
    if not text.startswith("{") or not text.endswith(")}"):
        return text
    for head, phrase in (("{vtable(", "vtable for "), ("{vtt(", "VTT for ")):
        if text.startswith(head):
            return phrase + text[len(head):-2]
    head = "{virtual override thunk("
    if text.startswith(head):
        inner = text[len(head):-2]
        # "{offset(-8)}, X" (non-virtual), "{virtual offset(0, -24)}, X" (virtual), or two
        # offset blocks (covariant return)
        blocks = 0
        rest = inner
        while rest.startswith("{") and "}, " in rest:
            rest = rest[rest.index("}, ") + 3:]
            blocks += 1
        if blocks == 2:
            return "covariant return thunk to " + rest
        if blocks == 1:
            kind = "virtual thunk to " if inner.startswith("{virtual offset") else "non-virtual thunk to "
            return kind + rest
    return text


def demangle(name: str) -> str:
    """The demangled C++ form of ``name``; C names and unknown schemes come back unchanged.

    ``name`` is the undecorated name (``_ZN...``), i.e. without Mach-O's extra underscore.
    """
    if not name.startswith("_Z"):
        return name
    return _demangle_cached(name)


_SPECIAL_PREFIXES = (
    "vtable for ", "VTT for ", "construction vtable for ", "typeinfo for ", "typeinfo name for ",
    "guard variable for ", "non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
    "TLS init function for ", "TLS wrapper function for ", "reference temporary for ",
    "transaction clone for ",
)


def qualified_name(demangled: str) -> str:
    """The demangled name without a leading return type or special-name prefix.

    Template function instances demangle with their return type in front
    (``int mlx::core::size_of_dtype<float>()``) and special names with a phrase
    (``vtable for mlx::core::Foo``); SPEC §3 patterns name the qualified name, so the index
    also files each symbol under this form. Returns ``demangled`` unchanged when there is
    nothing to strip.
    """
    name = demangled
    # fast path, for nearly every name: no space before the first "(" or "<" means no return
    # type and no special-name phrase
    stop = len(name)
    for ch in "(<":
        k = name.find(ch)
        if k != -1 and k < stop:
            stop = k
    if name.find(" ", 0, stop) == -1 and not name.startswith("decltype("):
        return demangled
    for prefix in _SPECIAL_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    if name.startswith("decltype(auto) "):
        name = name[len("decltype(auto) "):]
    depth = 0
    cut = -1
    i, n = 0, len(name)
    while i < n:
        c = name[i]
        if c == "<":
            if not (name.endswith("operator", 0, i) or name.endswith("operator<", 0, i)):
                depth += 1
        elif c == ">":
            if not (name.endswith("operator", 0, i) or name.endswith("operator-", 0, i) or name.endswith("operator>", 0, i)):
                depth = max(0, depth - 1)
        elif c == "(" and depth == 0:
            if name.startswith("(anonymous namespace)", i):
                i += len("(anonymous namespace)")
                continue
            if not name.endswith("operator", 0, i):
                break
        elif c == " " and depth == 0 and not name.endswith("operator", 0, i) and not name.endswith(",", 0, i):
            cut = i
        i += 1
    return name[cut + 1:] if cut >= 0 else name
