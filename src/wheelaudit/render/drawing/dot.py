"""``inspect --format dot``: the dependency graph of each inspected wheel, for Graphviz.

One ``digraph``, one cluster per wheel. Nodes are the wheel's native binaries and the libraries
they need from outside it; edges are DT_NEEDED / LC_LOAD_*_DYLIB / PE imports, a resolved one
pointing at the shipped file it resolves to. Outside the wheel: a system library is grey, a
library another distribution provides is blue and dashed, an unresolved one is red and dashed,
an absent optional one orange and dashed; an optional load (Mach-O weak, PE delay-load) is a
dotted edge.

Invariants: node identifiers are generated (``w1_n3``), never taken from a name; every name from
a wheel is a quoted DOT string with backslashes, quotes, ``&`` and control characters escaped, so
nothing in a wheel can end a string, add an attribute or a statement, or become a Graphviz
escape (``\\N``, ``\\l``) or entity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TextIO

from wheelaudit.model.library import LibraryFacts
from wheelaudit.model.wheel import Wheel
from wheelaudit.model.messages import human_size

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _escape(text: str, backslash: str) -> str:
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # (undecodable bytes, shown)
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return text.replace("\\", backslash).replace('"', '\\"').replace("&", "&amp;")


def quote(*lines: str) -> str:
    """``lines`` as one double-quoted DOT string that Graphviz shows as written, a line each
    (a ``label``: Graphviz reads ``\\`` as one backslash there)."""
    return '"' + "\\n".join(_escape(line, "\\\\") for line in lines) + '"'


def quote_tooltip(text: str) -> str:
    """``text`` as a double-quoted DOT string for a ``tooltip``, which Graphviz unescapes twice
    (object names first, then escapes): each backslash is written four times, so that ``\\N``
    in a name stays text instead of becoming the node's identifier."""
    return '"' + _escape(text, "\\" * 4) + '"'


#: node attributes for a dependency outside the wheel, by how it resolves
_OUTSIDE = {
    "external": 'style="rounded,filled", fillcolor="#eaeef2", color="#8c959f"',
    "provided": 'style="rounded,dashed", color="#3b82c4", fontcolor="#0b4f8a"',
    "weak-absent": 'style="rounded,dashed,filled", fillcolor="#fff8c5", color="#bf8700"',
    "unresolved": 'style="rounded,dashed,filled", fillcolor="#ffebe9", color="#cf222e", fontcolor="#cf222e", penwidth=1.6',
}
_EDGE = {
    "inside": 'color="#24292f"',
    "external": 'color="#8c959f"',
    "provided": 'color="#3b82c4"',
    "weak-absent": 'color="#bf8700", style=dashed',
    "unresolved": 'color="#cf222e", style=dashed, penwidth=1.6',
}
_STATUS = {"external": "system library", "provided": "provided by another distribution",
           "weak-absent": "optional, absent", "unresolved": "unresolved"}


def render_inspect(wheels: Sequence[tuple[Wheel, list[LibraryFacts]]], out: TextIO) -> None:
    """``wheels``: each inspected wheel with its libraries as
    :func:`wheelaudit.checks.describe.describe_libraries` describes them."""
    out.write("digraph wheelaudit {\n")
    out.write('  graph [rankdir=LR, fontname="Helvetica", fontsize=12, nodesep=0.25, ranksep=0.6];\n')
    out.write('  node [shape=box, style=rounded, fontname="Helvetica", fontsize=11, height=0.3];\n')
    out.write('  edge [fontname="Helvetica", fontsize=9, arrowsize=0.7];\n')
    for i, (wheel, libs) in enumerate(wheels, 1):
        _cluster(i, wheel, libs, out)
    out.write("}\n")


def _cluster(i: int, wheel: Wheel, libs: list[LibraryFacts], out: TextIO) -> None:
    out.write(f"  subgraph cluster_{i} {{\n")
    out.write(f"    label={quote(wheel.path.name)};\n")
    ids: dict[tuple[str, str], str] = {}

    def node(key: tuple[str, str]) -> str:
        if key not in ids:
            ids[key] = f"w{i}_n{len(ids) + 1}"
        return ids[key]

    for lib in libs:  # (sorted by path)
        attrs = [f"label={quote(lib.path.rsplit('/', 1)[-1])}",
                 f"tooltip={quote_tooltip(f'{lib.path} ({human_size(lib.size, binary=True, trim=False)})')}"]
        if lib.components:
            attrs[0] = f"label={quote(lib.path.rsplit('/', 1)[-1], ', '.join(m.name for m in lib.components))}"
        if lib.error:
            attrs.append('color="#cf222e", style="rounded,bold"')
        out.write(f"    {node(('lib', lib.path))} [{', '.join(attrs)}];\n")
    shipped = {lib.path for lib in libs}
    outside: dict[tuple[str, str], str] = {}
    edges: list[str] = []
    for lib in libs:
        src = node(("lib", lib.path))
        for d in lib.dependencies:
            if d.status == "inside" and d.path in shipped:
                dst = node(("lib", d.path))
            else:
                key = (d.status, d.name)
                if key not in outside:
                    label = quote(d.name, f"({d.dist})") if d.dist else quote(d.name)
                    outside[key] = (f"label={label}, tooltip={quote_tooltip(d.where or _STATUS.get(d.status, d.status))}, "
                                    + _OUTSIDE.get(d.status, _OUTSIDE["unresolved"]))
                dst = node(key)
            attrs = [_EDGE.get(d.status, _EDGE["unresolved"])]
            if d.kind in ("weak", "delay") and d.status in ("inside", "external", "provided"):
                attrs.append("style=dotted")
            if len(lib.archs) > 1 and len(d.archs) < len(lib.archs):
                attrs.append(f"label={quote('/'.join(d.archs))}")
            edges.append(f"    {src} -> {dst} [{', '.join(attrs)}];\n")
    for key in sorted(outside):
        out.write(f"    {node(key)} [{outside[key]}];\n")
    for e in edges:
        out.write(e)
    out.write("  }\n")
