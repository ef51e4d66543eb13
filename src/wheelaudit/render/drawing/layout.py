"""Geometry for the drawings of ``check --format html``, computed in Python so that the report
needs no script: a layered layout of a dependency graph and a squarified treemap.

Pure functions of their input: the same input gives the same coordinates (every choice is
sorted or tie-broken by name), so the report is byte-for-byte reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from wheelaudit.model.messages import shorten_middle

# --------------------------------------------------------------------------------------------
# Layered graph


@dataclass
class Placed:
    """A node of a laid-out graph: its column (dependency depth) and box."""

    key: str
    label: str
    layer: int
    x: float = 0.0
    y: float = 0.0
    width: float = 0.0
    height: float = 0.0


#: approximate advance of one character of the graph's 12px label font
CHAR_WIDTH = 6.6
NODE_HEIGHT = 24.0
NODE_GAP = 10.0
LAYER_GAP = 56.0
MARGIN = 12.0
MAX_LABEL = 44


def layers(nodes: Sequence[str], edges: Sequence[tuple[str, str]], last: Sequence[str] = ()) -> dict[str, int]:
    """Each node's layer: 0 for what nothing depends on, else one more than the deepest node that
    depends on it (longest path). A cycle is broken at its node first by name. The ``last``
    nodes (what lies outside: system libraries, unresolved names) all go one layer past the
    others."""
    inner = [n for n in nodes if n not in set(last)]
    inner_set = set(inner)
    preds: dict[str, set[str]] = {n: set() for n in inner}
    succs: dict[str, set[str]] = {n: set() for n in inner}
    for a, b in edges:
        if a in inner_set and b in inner_set and a != b:
            preds[b].add(a)
            succs[a].add(b)
    layer: dict[str, int] = {}
    waiting = {n: len(preds[n]) for n in inner}
    ready = sorted(n for n in inner if waiting[n] == 0)
    while len(layer) < len(inner):
        if not ready:  # a cycle: break it at its first node by name
            ready = [min(n for n in inner if n not in layer)]
        ready.sort()
        n = ready.pop(0)
        if n in layer:
            continue
        layer[n] = max((layer[p] + 1 for p in preds[n] if p in layer), default=0)
        for s in sorted(succs[n]):
            waiting[s] -= 1
            if waiting[s] == 0 and s not in layer:
                ready.append(s)
    outside = max(layer.values(), default=-1) + 1
    for n in last:
        layer[n] = outside
    return layer


def layout_graph(nodes: dict[str, str], edges: Sequence[tuple[str, str]], last: Sequence[str] = ()
                 ) -> tuple[dict[str, Placed], float, float]:
    """Place ``nodes`` (key -> label) in columns by :func:`layers`, left to right, each column
    ordered to keep edges short (two barycentre sweeps, ties by label). Returns the placed nodes
    and the drawing's width and height."""
    keys = sorted(nodes)
    layer = layers(keys, edges, [k for k in sorted(last) if k in nodes])
    placed = {k: Placed(k, shorten_middle(nodes[k], MAX_LABEL), layer[k]) for k in keys}
    columns: dict[int, list[str]] = {}
    for k in keys:
        columns.setdefault(layer[k], []).append(k)
    for col in columns.values():
        col.sort(key=lambda k: (nodes[k], k))
    preds: dict[str, list[str]] = {k: [] for k in keys}
    for a, b in edges:
        if a in nodes and b in nodes and a != b:
            preds[b].append(a)
    for _ in range(2):
        for li in sorted(columns)[1:]:
            pos = {k: i for col in columns.values() for i, k in enumerate(col)}

            def centre(k: str, pos: dict[str, int] = pos, li: int = li) -> tuple[float, str, str]:
                ps = [pos[p] for p in preds[k] if layer[p] < layer[k]]
                return (sum(ps) / len(ps) if ps else float(len(columns[li])), nodes[k], k)

            columns[li].sort(key=centre)
    # geometry: columns as wide as their widest label, centred vertically
    heights = {li: len(col) * NODE_HEIGHT + (len(col) - 1) * NODE_GAP for li, col in columns.items()}
    total_h = max(heights.values(), default=0.0) + 2 * MARGIN
    x = MARGIN
    for li in sorted(columns):
        col = columns[li]
        width = max(len(placed[k].label) for k in col) * CHAR_WIDTH + 16
        y = MARGIN + (total_h - 2 * MARGIN - heights[li]) / 2
        for k in col:
            p = placed[k]
            p.x, p.y, p.width, p.height = x, y, width, NODE_HEIGHT
            y += NODE_HEIGHT + NODE_GAP
        x += width + LAYER_GAP
    total_w = x - LAYER_GAP + MARGIN if columns else 2 * MARGIN
    return placed, total_w, total_h


# --------------------------------------------------------------------------------------------
# Treemap


@dataclass
class Tile:
    """A rectangle of the treemap: a folder (``children``) or a file; ``lumped`` counts the
    files of a folder too small to draw, shown together as one tile."""

    path: str
    size: int
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0
    children: list[Tile] = field(default_factory=list)
    folder: bool = False
    lumped: int = 0
    depth: int = 0


#: a folder's label band, and the smallest tile worth drawing (in square pixels)
LABEL_BAND = 15.0
PAD = 2.0
MIN_AREA = 30.0


def _worst(row: list[float], side: float) -> float:
    s = sum(row)
    if s <= 0 or side <= 0:
        return float("inf")
    return max(max(side * side * r / (s * s), (s * s) / (side * side * r)) for r in row)


def squarify(sizes: Sequence[float], x: float, y: float, w: float, h: float) -> list[tuple[float, float, float, float]]:
    """Rectangles for ``sizes`` (sorted largest first by the caller) filling the box, each as
    close to a square as the squarified algorithm (Bruls, Huizing, van Wijk) gets it."""
    total = sum(sizes)
    if total <= 0 or w <= 0 or h <= 0:
        return [(x, y, 0.0, 0.0) for _ in sizes]
    scale = w * h / total
    areas = [s * scale for s in sizes]
    out: list[tuple[float, float, float, float]] = []
    i = 0
    while i < len(areas):
        side = min(w, h)
        row = [areas[i]]
        i += 1
        while i < len(areas) and _worst(row + [areas[i]], side) <= _worst(row, side):
            row.append(areas[i])
            i += 1
        s = sum(row)
        if w >= h:  # a column at the left
            cw = s / h if h else 0.0
            cy = y
            for a in row:
                rh = a / cw if cw else 0.0
                out.append((x, cy, cw, rh))
                cy += rh
            x += cw
            w -= cw
        else:  # a row at the top
            rh = s / w if w else 0.0
            cx = x
            for a in row:
                rw = a / rh if rh else 0.0
                out.append((cx, y, rw, rh))
                cx += rw
            y += rh
            h -= rh
    return out


def _tree(sizes: dict[str, int]) -> Tile:
    root = Tile("", 0, folder=True)
    folders: dict[str, Tile] = {"": root}
    for path in sorted(sizes):
        parts = path.split("/")
        parent = root
        for i in range(1, len(parts)):
            key = "/".join(parts[:i])
            t = folders.get(key)
            if t is None:
                t = folders[key] = Tile(key, 0, folder=True)
                parent.children.append(t)
            parent = t
        parent.children.append(Tile(path, max(0, sizes[path])))

    def total(t: Tile) -> int:
        if t.folder:
            t.size = sum(total(c) for c in t.children)
        return t.size

    total(root)
    return root


def _place(t: Tile, x: float, y: float, w: float, h: float, depth: int) -> None:
    t.x, t.y, t.w, t.h, t.depth = x, y, w, h, depth
    if not t.folder:
        return
    band = LABEL_BAND if (t.path and h > 2.5 * LABEL_BAND and w > 40) else (0.0 if not t.path else PAD)
    ix, iy = x + (PAD if t.path else 0.0), y + band
    iw, ih = w - (2 * PAD if t.path else 0.0), h - band - (PAD if t.path else 0.0)
    kids = sorted((c for c in t.children if c.size > 0), key=lambda c: (-c.size, c.path))
    if iw <= 1 or ih <= 1 or not kids:  # no room inside: the folder is drawn as one tile
        t.lumped = sum(1 for _ in _files(t))
        t.children = []
        return
    scale = iw * ih / t.size
    shown = [c for c in kids if c.size * scale >= MIN_AREA]
    rest = [c for c in kids if c.size * scale < MIN_AREA]
    if rest:
        lump = Tile(t.path + "/" if t.path else "", sum(c.size for c in rest),
                    lumped=sum(len(list(_files(c))) for c in rest))
        shown = shown + [lump]
    rects = squarify([c.size for c in shown], ix, iy, iw, ih)
    t.children = shown
    for c, (cx, cy, cw, ch) in zip(shown, rects, strict=True):
        _place(c, cx, cy, cw, ch, depth + 1)


def _files(t: Tile):
    if not t.folder:
        yield t
        return
    for c in t.children:
        yield from _files(c)


def treemap(sizes: dict[str, int], width: float, height: float) -> Tile:
    """The folders and files of ``sizes`` (path inside the wheel -> bytes) as nested tiles in a
    ``width`` x ``height`` box; files too small to see are lumped per folder."""
    root = _tree(sizes)
    _place(root, 0.0, 0.0, width, height, 0)
    return root
