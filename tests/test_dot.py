"""``inspect --format dot``: the dependency graph for Graphviz, checked by Graphviz itself
(Debian's ``graphviz``, installed by scripts/setup.sh): ``dot -Tsvg`` accepts it and draws what
it says, whatever the names in the wheel."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from wheel.wheelfile import WheelFile

from wheelaudit.render.drawing.dot import quote, quote_tooltip

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules" / "executorch.toml"
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
#: a library name that would end the string and add a node and an edge if it were not escaped
HOSTILE = 'lib"];evil [label="pwn"]; x -> y [color=red &amp; {z}.so'

_NODE = re.compile(r'^\s+(w\d+_n\d+) \[label="((?:[^"\\]|\\.)*)"(.*)\];$')
_EDGE = re.compile(r"^\s+(w\d+_n\d+) -> (w\d+_n\d+) \[(.*)\];$")


@pytest.fixture(scope="module")
def graphviz() -> str:
    found = shutil.which("dot")
    if found is None:
        pytest.fail("Graphviz is missing; install it with: apt-get install -y graphviz (scripts/setup.sh does)",
                    pytrace=False)
    return found


def _inspect_dot(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "wheelaudit", "inspect", "--format", "dot", *map(str, args)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _svg(dot: str, source: str) -> ET.Element:
    proc = subprocess.run([dot, "-Tsvg"], input=source, capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    return ET.fromstring(proc.stdout)


def _parse(source: str) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str, str]]]:
    nodes, edges = {}, []
    for line in source.splitlines():
        if m := _NODE.match(line):
            nodes[m.group(1)] = (m.group(2), m.group(3))
        elif m := _EDGE.match(line):
            edges.append(m.groups())
    return nodes, edges


def test_dependency_graph_draws_resolved_unresolved_provided_and_system(fixture_wheels, graphviz):
    source = _inspect_dot(fixture_wheels["linux_rpath_shadowed"], "--rules", RULES)
    assert source.startswith("digraph wheelaudit {") and source.endswith("}\n")
    nodes, edges = _parse(source)
    by_label = {}
    for ident, (label, attrs) in nodes.items():
        by_label.setdefault(label, []).append((ident, attrs))
    # the shipped library and the name nothing resolves are two nodes, the second red and dashed
    (quantized, _), = by_label["libexecutorch_kernels_quantized.so\\nquantized_kernels"]
    shipped = [i for i, a in by_label["libexecutorch.so\\nbackend_registry, operator_registry, platform_layer"]]
    (unresolved, attrs), = by_label["libexecutorch.so"]
    assert "dashed" in attrs and "#cf222e" in attrs
    (edge,) = [e for e in edges if e[0] == quantized]
    assert edge[1] == unresolved and "style=dashed" in edge[2] and "#cf222e" in edge[2]
    # a resolved dependency points at the shipped file; torch's and the system's are their own nodes
    (c_ext, _), = by_label["_C.cpython-311-x86_64-linux-gnu.so"]
    targets = {nodes[b][0] for a, b, _ in edges if a == c_ext}
    assert {"libtorch.so\\n(torch)", "libc10.so\\n(torch)"} <= targets
    assert any(b == shipped[0] for a, b, _ in edges if a == c_ext)
    assert "libc.so.6" in {label for label, _ in nodes.values()}
    # and Graphviz draws exactly that: the red dashed edge included
    svg = _svg(graphviz, source)
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert texts.count("libexecutorch.so") == 2 and "(torch)" in texts
    drawn = {g.find(f"{SVG}title").text: g for g in svg.iter(f"{SVG}g") if g.get("class") == "edge"}
    path = drawn[f"{quantized}->{unresolved}"].find(f"{SVG}path")
    assert path.get("stroke") == "#cf222e" and path.get("stroke-dasharray")


def test_each_wheel_is_its_own_cluster_and_hostile_names_stay_text(fixture_wheels, graphviz, tmp_path):
    src = fixture_wheels["linux_clean"]
    hostile = tmp_path / src.name
    with zipfile.ZipFile(src) as zin, WheelFile(hostile, "w") as wf:
        for info in zin.infolist():
            if not info.filename.endswith("/RECORD"):
                wf.writestr(info.filename, zin.read(info))
        wf.writestr(f"executorch/lib/{HOSTILE}", zin.read("executorch/lib/libexecutorch_etdump.so"))
    source = _inspect_dot(hostile, fixture_wheels["macos_clean"])
    assert source.count("subgraph cluster_") == 2
    nodes, edges = _parse(source)
    assert len(nodes) == len(set(nodes)) and all(a in nodes and b in nodes for a, b, _ in edges)
    assert "evil" not in nodes and "x" not in nodes and "y" not in nodes
    svg = _svg(graphviz, source)
    clusters = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "cluster"]
    assert len(clusters) == 2
    assert HOSTILE in [t.text for t in svg.iter(f"{SVG}text")]  # the label, exactly as the wheel names it
    assert not [g for g in svg.iter(f"{SVG}g") if g.get("class") == "node" and g.find(f"{SVG}title").text == "evil"]


@pytest.mark.parametrize("name", [
    'a"b', "a\\", 'a\\"', "x\\N\\G\\E\\T\\H\\L\\l\\n\\r y", "&amp; &lt;x&gt; &#92;", '\\"]; evil [label="pwn',
    "line\nbreak\x00\x7f", "caf\u00e9 \u2192 \U0001f600",
])
def test_quoted_names_reach_graphviz_unchanged(graphviz, name):
    """What Graphviz shows of a quoted label and tooltip is the name (control characters as
    \\xNN escapes): no Graphviz escape (\\N, \\l), entity or DOT syntax survives quoting."""
    shown = re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", name)
    source = f"digraph g {{\n  n1 [label={quote(name)}, tooltip={quote_tooltip(name)}];\n  n2 [label={quote('a', 'b')}];\n}}\n"
    svg = _svg(graphviz, source)
    assert [t.text for t in svg.iter(f"{SVG}text")] == [shown, "a", "b"]
    tooltips = [a.get(f"{XLINK}title") for a in svg.iter(f"{SVG}a")]
    assert tooltips[0] == shown
