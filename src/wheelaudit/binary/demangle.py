"""Demangling C++ names (packages, never our own).

Itanium names (``_Z...``) demangle with the ``cpp_demangle`` crate (behind
:mod:`~wheelaudit.binary.demangle_guard`); MSVC names (``?...``, Windows DLLs) with LLVM's Microsoft
demangler from ``pycxxfilt`` (abi3 wheels for CPython 3.11 and later). Without pycxxfilt (on
Python 3.10) an MSVC name stays as it is: it still matches a rule entry spelled mangled.

This module knows names only (no Symbol, no rule); it installs :func:`demangle` as the model's lazy
demangler (``Symbol.demangled``: :func:`wheelaudit.model.binary.use_demangler`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING

import cpp_demangle

from wheelaudit.binary.demangle_guard import (GUARD_LENGTH, MAX_BATCH, TIMEOUT, guarded_demangle, guarded_demangle_many,
                                              suspicious)
from wheelaudit.binary.symbols import SymbolTable
from wheelaudit.children import ForkFailed
from wheelaudit.model.binary import Binary, Symbol, use_demangler

if TYPE_CHECKING:
    from wheelaudit.binary.budget import Budget


@lru_cache(maxsize=1 << 16)
def _demangle_cached(name: str) -> str:
    try:
        if suspicious(name):  # could explode: demangle it in a capped worker
            out = guarded_demangle(name)
            return name if out is None else _cxxfilt_style(out)
        return _cxxfilt_style(cpp_demangle.demangle(name))
    except ForkFailed:  # (the run cannot go on: exit 2, not a name silently left mangled)
        raise
    except Exception:  # noqa: BLE001 - a name that is not valid Itanium stays as it is
        return name


#: what the capped worker answered for names demangled within a run's budget (the memo of
#: _demangle_cached for such names): later reads of the name, lazy ones included, find it here
_guarded: dict[str, str] = {}


def _budgeted(name: str, budget: Budget) -> str:
    """A name that could explode, demangled within what the run's budget has left for the capped
    worker (never more than its bound per name). A name it does not get to stays mangled, and
    the budget says so once."""
    known = _guarded.get(name)
    if known is not None:
        return known
    allowance = budget.demangling()
    if allowance <= 0:
        budget.cut("demangle", "C++ names that could demangle to gigabytes were left mangled: the run's "
                   f"{budget.demangle_limit:g} s for them is spent")
        _remember(name, name)
        return name
    t0 = time.monotonic()
    try:
        out = guarded_demangle(name, min(TIMEOUT, allowance))
    finally:
        budget.spend_demangling(time.monotonic() - t0)
    result = name if out is None else _cxxfilt_style(out)
    _remember(name, result)
    return result


def _remember(name: str, result: str) -> None:
    # (a name left mangled stays so in this process: it is one that could explode)
    if len(_guarded) >= 1 << 16:
        _guarded.clear()
    _guarded[name] = result


# A name of a joined table (NUL-separated) that starts with the mangling prefix and is at least
# GUARD_LENGTH long, found by the regex engine instead of a split of every name: after its NUL (a
# literal prefix, which the engine searches for instead of trying every position), or at the
# table's start; per prefix (``__Z``: Mach-O's leading underscore)
_TAIL = {head: rb"[^\0]{%d,}" % (GUARD_LENGTH - len(head)) for head in (b"_Z", b"__Z")}
_AFTER_NUL = {head: re.compile(rb"\0" + head + tail) for head, tail in _TAIL.items()}
_AT_START = {head: re.compile(head + tail) for head, tail in _TAIL.items()}


def _long_names(table: SymbolTable | Iterable[Symbol]) -> Iterator[str]:
    """The names of a symbol table long enough to be demangled by the capped worker."""
    if isinstance(table, SymbolTable):
        head = b"__Z" if table.underscore else b"_Z"
        first = _AT_START[head].match(table.blob)
        if first is not None:
            yield first.group()[len(head) - 2:].decode("utf-8", "backslashreplace")
        for m in _AFTER_NUL[head].finditer(table.blob):  # (NUL and head dropped, "_Z" kept)
            yield m.group()[len(head) - 1:].decode("utf-8", "backslashreplace")
    else:
        for sym in table:
            if len(sym.name) >= GUARD_LENGTH and sym.name[:2] == "_Z":
                yield sym.name


def prepare_binary(b: Binary, budget: Budget) -> None:
    """:func:`prepare` for every name of ``b``'s symbol tables (exports, locals, imports) that
    could explode when demangled."""
    for sl in b.slices:
        prepare(_long_names(sl.exports), budget)
        prepare(_long_names(sl.locals), budget)
        prepare((n for n in sl.imports if len(n) >= GUARD_LENGTH), budget)


def prepare(names: Iterable[str], budget: Budget) -> None:
    """Demangle, within ``budget``, the names among ``names`` that could explode, before anything
    reads them lazily (a Symbol's ``demangled``): those reads then find the answer, or the name
    left mangled once the budget is spent, instead of each taking the worker's bound.

    The names go to the capped worker in batches, one round trip each; a batch that fails as a
    whole (too slow, too large, the worker died) is asked again one name at a time, so that each
    name gets the answer it gets alone."""
    batch: list[str] = []
    size = 0
    for name in names:
        if name[:2] == "_Z" and name not in _guarded and suspicious(name):
            batch.append(name)
            size += len(name)
            if size >= MAX_BATCH:
                _budgeted_batch(batch, budget)
                batch, size = [], 0
    if batch:
        _budgeted_batch(batch, budget)


def _budgeted_batch(names: list[str], budget: Budget) -> None:
    names = list(dict.fromkeys(n for n in names if n not in _guarded))
    if len(names) <= 1:
        for name in names:
            _budgeted(name, budget)
        return
    allowance = budget.demangling()
    if allowance <= 0:
        for name in names:
            _budgeted(name, budget)  # (each left mangled, the budget's note said once)
        return
    t0 = time.monotonic()
    try:
        outs = guarded_demangle_many(names, min(TIMEOUT, allowance))
    finally:
        budget.spend_demangling(time.monotonic() - t0)
    if outs is None:
        for name in names:
            _budgeted(name, budget)
        return
    for name, out in zip(names, outs, strict=True):
        _remember(name, name if out is None else _cxxfilt_style(out))


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


try:  # LLVM's MSVC demangler; its wheels are cp311-abi3 (see pyproject.toml)
    from pycxxfilt import msvc_demangle as _msvc_demangle
except ImportError:  # pragma: no cover - Python 3.10
    _msvc_demangle = None  # type: ignore[assignment]

#: an MSVC name longer than this is left as it is (MSVC itself hashes names past 4,096 bytes,
#: so a longer one is not a compiler's; the bound keeps the demangler's work linear and small)
MAX_MSVC_NAME = 8192
#: the access and calling-convention words LLVM's MSVC demangler writes before the return type
_MSVC_PREFIXES = ("public: ", "protected: ", "private: ")
_MSVC_WORDS = re.compile(r"\b(?:__cdecl|__stdcall|__fastcall|__thiscall|__vectorcall|__clrcall|__ptr64) ?")


@lru_cache(maxsize=1 << 16)
def _msvc_cached(name: str) -> str:
    try:
        out = _msvc_demangle(name) if _msvc_demangle is not None and len(name) <= MAX_MSVC_NAME else None
    except Exception:  # noqa: BLE001 - a name that is not valid MSVC stays as it is
        return name
    if not out:
        return name
    return _msvc_style(out)


def _msvc_style(text: str) -> str:
    """LLVM's undname output less what is not part of the name as rules write it: the access
    specifier, ``static``/``virtual`` and the calling convention
    (``public: static int __cdecl ns::f(int)`` -> ``int ns::f(int)``), as ``undname`` does with
    its "no access specifiers / no calling convention" flags; :func:`qualified_name` then strips
    the return type like an Itanium template function's."""
    for p in _MSVC_PREFIXES:
        if text.startswith(p):
            text = text[len(p):]
            break
    for p in ("static ", "virtual "):
        if text.startswith(p):
            text = text[len(p):]
    return _MSVC_WORDS.sub("", text).rstrip()


def is_mangled(name: str) -> bool:
    """A C++ name in a scheme :func:`demangle` reads: Itanium (``_Z``) or MSVC (``?``)."""
    return name[:2] == "_Z" or name[:1] == "?"


def demangle(name: str, budget: Budget | None = None) -> str:
    """The demangled C++ form of ``name``; C names and unknown schemes come back unchanged.

    ``name`` is the undecorated name (``_ZN...``), i.e. without Mach-O's extra underscore, or
    an MSVC decorated name (``?f@ns@@YAHH@Z``). ``budget``: the run's; a name that could
    explode is then demangled within what it has left (else within the worker's bound per name).
    """
    if name.startswith("_Z"):
        if name in _guarded:
            return _guarded[name]
        if budget is not None and suspicious(name):
            return _budgeted(name, budget)
        return _demangle_cached(name)
    if name.startswith("?"):
        return _msvc_cached(name)
    return name


use_demangler(demangle)
