"""The dyld export trie (``LC_DYLD_EXPORTS_TRIE``, ``LC_DYLD_INFO[_ONLY]``): two walks of the same
trie, a fast one that decides nothing and the exact one that has every check and its message."""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate, repeat

from wheelaudit.binary import MalformedBinary
from wheelaudit.binary import _columns as _C
from wheelaudit.binary import symbols as _symbols
from wheelaudit.binary.macho.constants import (
    CODE_FLAGS,
    EXPORT_SYMBOL_FLAGS_KIND_MASK,
    EXPORT_SYMBOL_FLAGS_REEXPORT,
    EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER,
    EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION,
    MAX_NAME,
    MAX_TRIE_DEPTH,
)
from wheelaudit.binary.macho.image import ImageBase, uleb
from wheelaudit.model.binary import Symbol

_EXPORT_CODES = ((_symbols.symbol_code("global", "data"), _symbols.symbol_code("global", "func")),
                 (_symbols.symbol_code("weak", "data"), _symbols.symbol_code("weak", "func")))

# the export trie's fast path (_walk_trie, ExportTrie.lane_codes). A terminal it decodes in bulk is kept as
# its first 1 + size bytes, a "lane" once zero-padded to 8: size (1..7), flags (one byte, neither
# re-export nor stub-and-resolver), the address (an ULEB128 that must fill the rest exactly)
_LANE_FLAGS_SLOW = 0x80 | EXPORT_SYMBOL_FLAGS_REEXPORT | EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER
_LANE_PLACEHOLDER = b"\x02\x00\x00"  # (a valid lane for address 0) of a terminal decoded one by one
_HIGH_BIT = bytes(b >> 7 for b in range(256))
#: _CONT_AT[j][size]: 1 where byte j (2..7) of a lane must have the continuation bit (size 1: no
#: address at all, never valid)
_CONT_AT = [bytes(1 if size == 1 else int(j < size) for size in range(256)) for j in range(8)]
#: export code by (address in a section with instructions) << 3 | (flags & 7)
_CODE_BY_KEY = bytes(_EXPORT_CODES[bool(key & EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION)]
                     [bool(key & 8 and not key & EXPORT_SYMBOL_FLAGS_KIND_MASK)] for key in range(16)) + bytes(240)


class ExportTrie(ImageBase):
    """The dyld export trie: the exports, in trie order."""

    def read_trie(self, trie_off: int, trie_size: int, notes: list[str]) -> Sequence[Symbol]:
        """The exports listed by the trie, in trie (preorder) order.

        Two walks of the same trie: ``_walk_trie`` is the fast one and decides nothing: on anything
        it does not expect (a bound exceeded, an encoding it does not decode, a node reached twice...)
        it gives up and ``walk_trie_exact``, the reference walk with every check and message, reads
        the trie again. Both give the same exports whenever the fast walk finishes.
        """
        if trie_size == 0:
            return []
        self.check_range(trie_off, trie_size, "export trie")
        trie = bytes(self.data[self.base + trie_off : self.base + trie_off + trie_size])
        try:
            walked = _walk_trie(trie)
        except (IndexError, ValueError, MalformedBinary):  # out of the trie, unterminated label, bad ULEB128
            walked = None
        if walked is not None:
            names, lanes, slow, reexports = walked
            if not names:
                codes: bytes | None = b""
            elif max(map(len, names)) > MAX_NAME:
                codes = None
            else:
                codes = self.lane_codes(lanes)
            if codes is not None:
                if slow:  # terminals the walk decoded itself: (index, flags, address)
                    is_func = self.code_rule()[1]
                    fixed = bytearray(codes)
                    for i, flags, address in slow:
                        func = not flags & EXPORT_SYMBOL_FLAGS_KIND_MASK and is_func(self.image_base + address)
                        fixed[i] = _EXPORT_CODES[bool(flags & EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION)][func]
                    codes = bytes(fixed)
                if reexports:
                    notes.append(f"{reexports} re-exported symbol(s) (EXPORT_SYMBOL_FLAGS_REEXPORT) not listed")
                return _export_table(names, codes)
        return self.walk_trie_exact(trie, notes)

    def code_rule(self) -> tuple[list[int], Callable[[int], bool]]:
        """(points, is_func): ``is_func(address)`` tells whether an (absolute) address lies in a section
        with instructions; ``points`` are the image-relative addresses, ascending, where its answer
        changes (False below the first one, then alternately True and False)."""
        spans = sorted((addr, addr + size, bool(flags & CODE_FLAGS)) for addr, size, flags in self.sections if size)
        starts = [a for a, _, _ in spans]

        def is_func(address: int) -> bool:
            k = bisect_right(starts, address) - 1
            return bool(k >= 0 and address < spans[k][1] and spans[k][2])

        points = []
        func = False
        for p in sorted({p for a, e, _ in spans for p in (a, e)}):  # constant between these
            if is_func(p) != func:
                func = not func
                points.append(p - self.image_base)
        return points, is_func

    def lane_codes(self, lanes: list[bytes]) -> bytes | None:
        """The export codes of ``_walk_trie``'s terminals, computed on all of them at once, or None
        if one of them is not size, flags, then an address ULEB128 filling the rest exactly.

        The lanes, zero-padded to 8 bytes, are one big integer: the checks are done a byte column
        at a time (``bytes.translate``), the ULEB128s decoded with shifts and masks over every lane
        at once, and the section test ("address >= point", for each point where the answer changes)
        is an addition whose sign bit is that answer (addresses have at most 42 bits here).
        """
        n = len(lanes)
        raw = b"".join(map(bytes.ljust, lanes, repeat(8, n), repeat(b"\0", n)))
        sizes = raw[0::8]
        for j in range(2, 8):
            if raw[j::8].translate(_HIGH_BIT) != sizes.translate(_CONT_AT[j]):
                return None
        from_bytes = int.from_bytes
        whole = from_bytes(raw, "little")
        ones = from_bytes(b"\1\0\0\0\0\0\0\0" * n, "little")  # 1 in every lane
        addresses = 0
        low7 = ones * 0x7F
        for k in range(6):  # address byte k (lane byte 2 + k): 7 bits to bit 7k
            addresses |= (whole >> (16 + k)) & (low7 << (7 * k))
        points = self.code_rule()[0]
        sign = 1 << 63
        if len(points) <= 16:
            func = 0  # bit 0 of a lane: the parity of the points <= its address
            for p in points:
                if p <= 0:
                    func ^= ones
                elif p < sign:
                    func ^= ((addresses + ones * (sign - p)) >> 63) & ones
        else:
            values = array("Q")
            values.frombytes(addresses.to_bytes(8 * n, "little"))
            if sys.byteorder != "little":
                values.byteswap()
            parity = bytearray(8 * n)
            parity[0::8] = bytes(k & 1 for k in map(bisect_right, repeat(points), values))
            func = from_bytes(parity, "little")
        keys = (func << 3) | ((whole >> 8) & (ones * 7))
        return keys.to_bytes(8 * n, "little")[0::8].translate(_CODE_BY_KEY)

    def walk_trie_exact(self, trie: bytes, notes: list[str]) -> Sequence[Symbol]:
        """Walk the export trie iteratively (explicit stack, each node visited at most once)."""
        end = len(trie)
        what = self.where + "export trie"
        found: list[tuple[bytes, int, int]] = []  # (raw name, flags, address)
        found_append = found.append
        trie_find = trie.find
        reexports = 0
        seen = bytearray(end)  # node offsets visited: a node reached twice means a cycle
        # name bytes a sane trie can expand to (a terminal costs at least ~6 trie bytes)
        name_budget = 256 * end + (16 << 20)
        path = bytearray()
        # pending nodes: (offset, length of the parent's name, edge label, depth). A node is
        # popped once; its children are pushed (each parsed once), so the work is linear in the
        # trie's size whatever its shape.
        stack: list[tuple[int, int, bytes, int]] = [(0, 0, b"", 0)]
        pop, push = stack.pop, stack.extend
        while stack:
            node, parent_len, label, depth = pop()
            if node >= end:
                raise MalformedBinary(f"{what}: child node offset {node} is past the trie ({end} bytes)")
            if seen[node]:
                raise MalformedBinary(f"{what}: node at offset {node} is reached twice "
                                      f"(cyclic or shared node)")
            seen[node] = 1
            del path[parent_len:]
            path += label
            if len(path) > MAX_NAME:
                raise MalformedBinary(f"{what}: symbol name longer than {MAX_NAME} bytes")
            byte = trie[node]
            if byte < 0x80:
                terminal_size, pos = byte, node + 1
            else:
                terminal_size, pos = uleb(trie, node, end, what)
            children_at = pos + terminal_size
            if children_at >= end:
                raise MalformedBinary(f"{what}: node at offset {node}: terminal information "
                                      f"({terminal_size} bytes) runs past the trie")
            if terminal_size:
                byte = trie[pos]
                if byte < 0x80:
                    flags, pos = byte, pos + 1
                else:
                    flags, pos = uleb(trie, pos, children_at, what)
                if flags & EXPORT_SYMBOL_FLAGS_REEXPORT:
                    reexports += 1
                else:
                    address, pos = uleb(trie, pos, children_at, what)
                    if flags & EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER:
                        uleb(trie, pos, children_at, what)
                    name_budget -= len(path)
                    if name_budget < 0:
                        raise MalformedBinary(f"{what}: names expand to more than the trie can hold "
                                              f"(hostile prefix sharing)")
                    found_append((bytes(path), flags, address))
            nchildren = trie[children_at]
            if nchildren:
                if depth >= MAX_TRIE_DEPTH:
                    raise MalformedBinary(f"{what}: deeper than {MAX_TRIE_DEPTH} levels")
                depth += 1
                name_len = len(path)
                pos = children_at + 1
                children = []
                for _ in range(nchildren):
                    label_end = trie_find(b"\0", pos, end)
                    if label_end < 0:
                        raise MalformedBinary(f"{what}: edge label at offset {pos} is not NUL-terminated")
                    label = trie[pos:label_end]
                    # the child's offset (ULEB128, inline: this runs once per edge)
                    pos = label_end + 1
                    child = shift = 0
                    while True:
                        if pos >= end:
                            raise MalformedBinary(f"{what}: truncated ULEB128 at offset {pos}")
                        byte = trie[pos]
                        pos += 1
                        child |= (byte & 0x7F) << shift
                        if byte < 0x80:
                            break
                        shift += 7
                        if shift >= 70:
                            raise MalformedBinary(f"{what}: overlong ULEB128 (more than 10 bytes) "
                                                  f"at offset {pos - 10}")
                    children.append((child, name_len, label, depth))
                children.reverse()  # popped in trie order
                push(children)
        if reexports:
            notes.append(f"{reexports} re-exported symbol(s) (EXPORT_SYMBOL_FLAGS_REEXPORT) not listed")

        # addresses -> func/data through the section table (addresses are image-relative)
        is_func = self.code_rule()[1]
        image_base = self.image_base
        codes = bytearray()
        for _raw, flags, address in found:
            func = False
            if not flags & EXPORT_SYMBOL_FLAGS_KIND_MASK:  # regular (not thread-local, not absolute)
                func = is_func(image_base + address)
            weak = flags & EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION
            codes.append(_EXPORT_CODES[bool(weak)][func])
        names = [f[0] for f in found]
        return _export_table(names, bytes(codes))


def _walk_trie(trie: bytes) -> tuple[list[bytes], list[bytes], list[tuple[int, int, int]], int] | None:
    """The export trie's fast walk: (names, lanes, slow, re-export count), or None to leave the trie
    to ``ExportTrie.walk_trie_exact``, which has the checks and their messages (the caller also hands it
    the trie on IndexError, ValueError, MalformedBinary).

    Same preorder walk, with what costs per node cut down: each name is its parent's name plus
    the edge label (no shared buffer to truncate and copy), a terminal is kept as its raw bytes for
    ``ExportTrie.lane_codes`` (``slow`` lists those decoded here: (index, flags, address), their lane a
    placeholder), and checks are folded into what the walk does anyway:

    * out of the trie: indexing past the end raises IndexError (an unterminated label: ValueError);
    * a node reached twice: ``marks`` is the trie with each visited node's first byte set to 0xFF,
      which sends a second visit (and a real 0xFF, left to the exact walk) off the common paths;
    * memory: each node with children is charged its name once per child plus its child list, so
      the names, held and pending, never add up to more than the exact walk's name budget
      (which therefore cannot run out either);
    * names longer than MAX_NAME: left to the caller (the longest name is a leaf's, every leaf is
      listed or checked here).
    """
    end = len(trie)
    names: list[bytes] = []
    lanes: list[bytes] = []
    slow: list[tuple[int, int, int]] = []
    names_append, lanes_append = names.append, lanes.append
    trie_index = trie.index
    marks = bytearray(trie)
    budget = 256 * end + (16 << 20)
    reexports = 0
    # pending nodes: (offset, parent's name, edge label, depth), popped in trie order
    stack: list[tuple[int, bytes, bytes, int]] = []
    pop, insert = stack.pop, stack.insert
    node, parent, label, depth = 0, b"", b"", 0
    while True:
        size = marks[node]
        marks[node] = 0xFF
        name = parent + label
        if not size:
            children_at = node + 1
        elif size < 8 and not trie[node + 1] & _LANE_FLAGS_SLOW:
            children_at = node + 1 + size
            names_append(name)
            lanes_append(trie[node:children_at])
        else:
            if size == 0xFF:  # visited (or a first byte 0xFF)
                return None
            if size < 0x80:
                pos = node + 1
            else:
                size, pos = uleb(trie, node, end, "")
            children_at = pos + size
            if children_at >= end:
                return None
            flags, pos = uleb(trie, pos, children_at, "")
            if flags & EXPORT_SYMBOL_FLAGS_REEXPORT:
                reexports += 1
                if len(name) > MAX_NAME:
                    return None
            else:
                address, pos = uleb(trie, pos, children_at, "")
                if flags & EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER:
                    uleb(trie, pos, children_at, "")
                slow.append((len(names), flags, address))
                names_append(name)
                lanes_append(_LANE_PLACEHOLDER)
        nchildren = trie[children_at]
        if nchildren:
            if depth >= MAX_TRIE_DEPTH:
                return None
            depth += 1
            pos = children_at + 1
            k = len(stack)  # children inserted here, each before the previous one: popped in order
            for _ in range(nchildren):
                label_end = trie_index(0, pos)
                b0 = trie[label_end + 1]  # the child's offset: ULEB128 of 1 to 4 bytes inline
                if b0 < 0x80:
                    insert(k, (b0, name, trie[pos:label_end], depth))
                    pos = label_end + 2
                    continue
                b1 = trie[label_end + 2]
                if b1 < 0x80:
                    insert(k, (b0 & 0x7F | b1 << 7, name, trie[pos:label_end], depth))
                    pos = label_end + 3
                    continue
                b2 = trie[label_end + 3]
                if b2 < 0x80:
                    insert(k, (b0 & 0x7F | (b1 & 0x7F) << 7 | b2 << 14, name, trie[pos:label_end], depth))
                    pos = label_end + 4
                    continue
                b3 = trie[label_end + 4]
                if b3 < 0x80:  # a trie over 2 MiB
                    insert(k, (b0 & 0x7F | (b1 & 0x7F) << 7 | (b2 & 0x7F) << 14 | b3 << 21, name, trie[pos:label_end],
                               depth))
                    pos = label_end + 5
                    continue
                child, after = uleb(trie, label_end + 1, end, "")
                insert(k, (child, name, trie[pos:label_end], depth))
                pos = after
            budget -= len(name) * nchildren + pos - children_at
            if budget < 0:
                return None
        elif not size and len(name) > MAX_NAME:  # a leaf without terminal information
            return None
        try:
            node, parent, label, depth = pop()
        except IndexError:
            break
    return names, lanes, slow, reexports


def _export_table(names: list[bytes], codes: bytes) -> _symbols.SymbolTable:
    """The exports as a SymbolTable: the names joined into one string table (demangled on use)."""
    blob = b"\0".join(names) + b"\0"
    offsets = _C.u32_array(accumulate((len(r) + 1 for r in names[:-1]), initial=0)) if names else _C.u32_array(())
    table = _symbols.SymbolTable(blob, offsets, codes, underscore=True, ascending=True)  # (offsets of joined names)
    table._tails = {}  # each name is a string of its own  # noqa: SLF001
    return table
