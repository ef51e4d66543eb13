"""``check --format html``: one self-contained HTML file to look at.

The summary; the findings grouped by code (name, summary, hint); for each wheel its native
libraries (size, components, dependencies and where they resolve), their dependency graph and a
treemap of the members' sizes, both inline SVG laid out in Python (:mod:`wheelaudit.render.drawing.layout`);
for wheels audited together, which wheel ships what.

Invariants: nothing is fetched (no URL in any ``src`` or ``href``, a Content-Security-Policy of
``default-src 'none'`` with inline styles only) and nothing runs (no script); every text that
comes from a wheel, the rules or a finding is HTML-escaped; the output is a function of the
report alone (sorted, no clock), so two runs give the same bytes.
"""

from __future__ import annotations

import html
import re
from typing import TextIO

from wheelaudit import __version__
from wheelaudit.model.codes import CODES, SEVERITY_RANK
from wheelaudit.model.finding import Finding
from wheelaudit.model.library import LibraryFacts
from wheelaudit.model.report import Report, WheelReport
from wheelaudit.render.drawing import layout
from wheelaudit.model.messages import human_size, plural, shorten_middle

_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return {"\n": "\\n", "\r": "\\r"}.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def esc(value: object) -> str:
    """``value`` as HTML text or attribute value: markup characters escaped, control
    characters and undecodable bytes shown as escapes (nothing a browser would drop or
    misread)."""
    text = str(value).encode("utf-8", "backslashreplace").decode("utf-8")
    text = _CONTROL.sub(_escape, text)
    return html.escape(text, quote=True)


def _num(v: float) -> str:
    """A coordinate, rounded (stable text, small files)."""
    return f"{v:.1f}".removesuffix(".0")


CSS = """
:root{--err:#c62828;--warn:#a35f00;--ok:#2e7d32;--ink:#1f2328;--dim:#59636e;--line:#d1d9e0;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:#fff}
main{max-width:1240px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:22px;margin:0}
h2{font-size:18px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:20px 0 6px}
h2 code{font-size:inherit}
code,.mono{font-family:ui-monospace,"SFMono-Regular","DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}
.summary{display:flex;flex-wrap:wrap;gap:16px 32px;align-items:center;padding:14px 18px;border-radius:8px;background:var(--bg);border:1px solid var(--line)}
.summary.failed{border-left:6px solid var(--err)}
.summary.passed{border-left:6px solid var(--ok)}
.verdict{font-size:20px;font-weight:700;letter-spacing:.04em;text-transform:uppercase}
.failed .verdict{color:var(--err)} .passed .verdict{color:var(--ok)}
.counts{display:flex;gap:10px;margin:0;padding:0;list-style:none}
.counts li{padding:2px 10px;border-radius:12px;background:#fff;border:1px solid var(--line)}
.counts .n{font-weight:700}
.counts .error .n{color:var(--err)} .counts .warning .n{color:var(--warn)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:10px 0 0}
dl.facts dt{color:var(--dim)} dl.facts dd{margin:0}
ul.wheels{margin:0;padding:0;list-style:none}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;vertical-align:1px}
.badge.error{background:var(--err)} .badge.warning{background:var(--warn)} .badge.waived{background:#8c959f}
details.code{border:1px solid var(--line);border-radius:8px;margin:10px 0;background:#fff}
details.code>summary{padding:8px 12px;cursor:pointer;background:var(--bg);border-radius:8px}
details.code[open]>summary{border-bottom:1px solid var(--line);border-radius:8px 8px 0 0}
.codename{font-weight:600} .codesum{color:var(--dim)} .count{float:right;color:var(--dim)}
ol.findings{margin:0;padding:4px 12px 4px 34px}
ol.findings>li{padding:8px 0;border-bottom:1px dashed var(--line)}
ol.findings>li:last-child{border-bottom:0}
.finding.waived{opacity:.65}
.meta{color:var(--dim);font-size:13px}
.message{margin:2px 0;overflow-wrap:anywhere}
.hint{margin:4px 0 0;padding:4px 8px;background:#eef6ff;border-left:3px solid #57a0e6;border-radius:4px}
ul.paths{margin:4px 0;padding-left:18px} ul.paths li{overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{text-align:left;vertical-align:top;padding:5px 8px;border-bottom:1px solid var(--line)}
th{background:var(--bg);font-weight:600}
td.num{text-align:right;white-space:nowrap}
td.lib{overflow-wrap:anywhere}
.comp{display:inline-block;margin:1px 4px 1px 0;padding:0 6px;border-radius:4px;background:#ddf4ff;border:1px solid #8cc7f0;font-size:12px}
.comp.exempt{background:#f6f8fa;border-style:dashed}
ul.deps{margin:0;padding:0;list-style:none} ul.deps li{overflow-wrap:anywhere}
.st{display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:5px;vertical-align:0}
.st.inside{background:#24292f} .st.external{background:#afb8c1} .st.provided{background:#3b82c4}
.st.unresolved{background:var(--err)} .st.weak-absent{background:#d4a72c}
.dep.unresolved{color:var(--err);font-weight:600}
.where{color:var(--dim)}
.flag{color:var(--err);font-weight:700}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:4px 0;color:var(--dim);font-size:13px}
.legend .sw{display:inline-block;width:14px;height:10px;margin-right:5px;border:1px solid #57606a;vertical-align:-1px}
.scroll{overflow:auto;border:1px solid var(--line);border-radius:8px;background:#fff}
.scroll svg{display:block} .scroll.graph{max-height:85vh} svg.fit{max-width:100%;height:auto}
svg text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;fill:var(--ink)}
svg .n rect{fill:#fff;stroke:#24292f;stroke-width:1.2}
svg .n.bad rect{stroke:var(--err);stroke-width:2.2}
svg .n.external rect{fill:#eaeef2;stroke:#afb8c1}
svg .n.provided rect{fill:#ddf4ff;stroke:#3b82c4;stroke-dasharray:5 3}
svg .n.unresolved rect{fill:#ffebe9;stroke:var(--err);stroke-dasharray:5 3;stroke-width:1.6}
svg .n.weak-absent rect{fill:#fff8c5;stroke:#d4a72c;stroke-dasharray:5 3}
svg .n.unresolved text{fill:var(--err);font-weight:600}
svg .e{fill:none;stroke-width:1.3}
svg .e.inside{stroke:#24292f} svg .e.external{stroke:#c4ccd4} svg .e.provided{stroke:#3b82c4}
svg .e.unresolved{stroke:var(--err);stroke-dasharray:6 4;stroke-width:1.8}
svg .e.weak-absent{stroke:#d4a72c;stroke-dasharray:6 4}
svg .e.optional{stroke-dasharray:2 3}
svg .t rect{stroke:#fff;stroke-width:.8}
svg .t.folder>rect{fill:#eaeef2;stroke:#8c959f;stroke-width:.8}
svg .t text{font-size:11px;pointer-events:none}
svg .t.folder>text{fill:#424a53;font-weight:600}
.k-native{fill:#f0883e} .k-python{fill:#6cb6ff} .k-meta{fill:#afb8c1} .k-data{fill:#7ee2a8} .k-lump{fill:#d0d7de}
.o0{fill:#6cb6ff} .o1{fill:#f0883e} .o2{fill:#7ee2a8} .o3{fill:#d2a8ff} .o4{fill:#ffb3c1} .o5{fill:#e3b341} .o6{fill:#76e3ea} .o7{fill:#c9d1d9}
footer{margin-top:32px;color:var(--dim);font-size:12px}
"""

#: what the status of a dependency is called in the report
STATUS_TEXT = {
    "inside": "shipped in the wheel",
    "external": "system library (allowed outside the wheel)",
    "provided": "provided by another distribution",
    "weak-absent": "optional, absent",
    "unresolved": "unresolved",
}

_ORIGIN_CLASSES = 8


def render_report(report: Report, out: TextIO, color: bool = False) -> None:
    out.write(document(report))


def document(report: Report) -> str:
    """The whole HTML document of ``report``."""
    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<meta name=\"generator\" content=\"wheelaudit ", esc(__version__), "\">\n",
        "<title>", esc(_title(report)), "</title>\n<style>", CSS, "</style>\n</head>\n<body>\n<main>\n",
        _summary(report),
        _findings(report),
    ]
    for i, wr in enumerate(report.wheels):
        parts.append(_wheel(wr, i))
    parts.append(f"<footer>Made by wheelaudit {esc(__version__)}; a self-contained file: "
                 "nothing in it is fetched or run.</footer>\n</main>\n</body>\n</html>\n")
    return "".join(parts)


def _title(report: Report) -> str:
    names = ", ".join(wr.wheel.path.name for wr in report.wheels)
    return f"wheelaudit: {'passed' if report.ok else 'failed'} — {names}"


# --------------------------------------------------------------------------------------------
# Summary


def _summary(report: Report) -> str:
    s = report.summary()
    verdict = "passed" if report.ok else "failed"
    rules = (f"<code>{esc(report.rules_path)}</code>" + (f" ({esc(report.rules_name)})" if report.rules_name else "")
             if report.rules_path else "built-in checks only (no rules file)")
    wheels = "".join(f"<li><a href=\"#wheel-{i + 1}\"><code>{esc(wr.wheel.path.name)}</code></a>"
                     f" — {plural(len(wr.active), 'finding')}</li>"
                     for i, wr in enumerate(report.wheels))
    rows = [("Wheels", f"<ul class=\"wheels\">{wheels}</ul>"), ("Rules", rules), ("Fail on", esc(report.fail_on))]
    if report.select:
        rows.append(("Select", esc(", ".join(report.select))))
    if report.ignore:
        rows.append(("Ignore", esc(", ".join(report.ignore))))
    facts = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    return (
        f"<header class=\"summary {verdict}\" id=\"summary\">\n"
        f"<div><h1>wheelaudit report</h1><div class=\"verdict\">{verdict}</div></div>\n"
        "<ul class=\"counts\">"
        f"<li class=\"error\"><span class=\"n\">{s['errors']}</span> error{'' if s['errors'] == 1 else 's'}</li>"
        f"<li class=\"warning\"><span class=\"n\">{s['warnings']}</span> warning{'' if s['warnings'] == 1 else 's'}</li>"
        f"<li class=\"waived\"><span class=\"n\">{s['waived']}</span> waived</li></ul>\n"
        f"<dl class=\"facts\">{facts}</dl>\n</header>\n"
        + (f"<h3>Notes</h3><ul>{notes}</ul>\n" if notes else "")
    )


# --------------------------------------------------------------------------------------------
# Findings, grouped by code


def _finding_key(item: tuple[int, Finding]) -> tuple:
    i, f = item
    return (f.waived, -SEVERITY_RANK[f.severity], i, f.subject, list(f.paths), f.message)


def _findings(report: Report) -> str:
    by_code: dict[str, list[tuple[int, Finding]]] = {}
    for i, wr in enumerate(report.wheels):
        for f in wr.findings:
            by_code.setdefault(f.code, []).append((i, f))
    out = ["<section id=\"findings\">\n<h2>Findings</h2>\n"]
    if not by_code:
        out.append("<p>No findings.</p>\n</section>\n")
        return "".join(out)

    def order(code: str) -> tuple:
        items = by_code[code]
        active = [f for _, f in items if not f.waived]
        worst = max((SEVERITY_RANK[f.severity] for f in active), default=0)
        return (-worst, code)

    several = len(report.wheels) > 1
    for code in sorted(by_code, key=order):
        c = CODES[code]
        items = sorted(by_code[code], key=_finding_key)
        active = [f for _, f in items if not f.waived]
        sev = max((f.severity for f in active), key=lambda s: SEVERITY_RANK[s], default=None)
        badge = f"<span class=\"badge {sev}\">{sev}</span>" if sev else "<span class=\"badge waived\">waived</span>"
        out.append(
            f"<details class=\"code\" id=\"{esc(c.anchor)}\" open>\n<summary>{badge} <code>{esc(code)}</code> "
            f"<span class=\"codename\">{esc(c.name)}</span> — <span class=\"codesum\">{esc(c.summary)}</span>"
            f"<span class=\"count\">{plural(len(items), 'finding')}</span></summary>\n<ol class=\"findings\">\n")
        for i, f in items:
            out.append(_finding(f, report.wheels[i].wheel.path.name if several else None))
        out.append("</ol>\n</details>\n")
    out.append("</section>\n")
    return "".join(out)


def _finding(f: Finding, wheel: str | None) -> str:
    meta = [f"<span class=\"badge {'waived' if f.waived else f.severity}\">{'waived' if f.waived else f.severity}</span>"]
    if wheel:
        meta.append(f"<code>{esc(wheel)}</code>")
    if f.subject:
        meta.append(f"[<code>{esc(f.subject)}</code>]")
    if f.rule:
        meta.append(f"rule {esc(f.rule)}")
    parts = [f"<li class=\"finding{' waived' if f.waived else ''}\">\n<div class=\"meta\">{' '.join(meta)}</div>\n",
             f"<p class=\"message\">{esc(f.message)}</p>\n"]
    if f.paths:
        parts.append("<ul class=\"paths\">" + "".join(f"<li><code>{esc(p)}</code></li>" for p in f.paths) + "</ul>\n")
    if f.symbols:
        shown = f.symbols[:50]
        more = f"<li>… and {len(f.symbols) - 50} more</li>" if len(f.symbols) > 50 else ""
        parts.append(f"<details><summary>{plural(len(f.symbols), 'symbol')}</summary><ul class=\"paths\">"
                     + "".join(f"<li><code>{esc(s)}</code></li>" for s in shown) + more + "</ul></details>\n")
    parts.append(f"<p class=\"hint\"><b>Hint:</b> {esc(f.hint or CODES[f.code].fix)}</p>\n")
    if f.waived:
        parts.append(f"<p class=\"meta\">Waived: {esc(f.waived_by)}</p>\n")
    parts.append("</li>\n")
    return "".join(parts)


# --------------------------------------------------------------------------------------------
# One wheel


def _wheel(wr: WheelReport, index: int) -> str:
    w = wr.wheel
    libs = wr.libraries
    flagged = {p for f in wr.active for p in f.paths}
    sizes = {path: size for path, (_, size) in w.sizes.items()}
    facts = [("Distribution", f"{esc(w.name)} {esc(w.version)}"),
             ("Tags", esc(", ".join(map(str, w.tags))) or "—"),
             ("Files", f"{len(w.files)} ({esc(human_size(sum(sizes.values()), binary=True, trim=False))} uncompressed)")]
    if w.archive_size is not None:
        facts.append(("Wheel file", esc(human_size(w.archive_size, binary=True, trim=False))))
    facts.append(("Native libraries", str(len(libs) or len(w.libraries))))
    facts.append(("Findings", f"{len(wr.active)} ({len(wr.findings) - len(wr.active)} waived)"))
    out = [f"<section class=\"wheel\" id=\"wheel-{index + 1}\">\n<h2><code>{esc(w.path.name)}</code></h2>\n",
           "<dl class=\"facts\">" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>\n"]
    members = getattr(w, "members", None)
    if members:
        out.append(_together(w, members))
    if libs:
        out.append(_graph(libs, flagged, index))
    out.append(_treemap(w, libs, sizes, index, members))
    out.append(_libraries(libs, flagged, bool(members), len(w.libraries)))
    out.append("</section>\n")
    return "".join(out)


def _together(w, members) -> str:
    """Which wheel of a ``--together`` set ships what."""
    rows = []
    for i, m in enumerate(sorted(members, key=lambda m: m.path.name)):
        label = m.path.name
        mine = sorted(p for p, origin in w.origins.items() if origin == label)
        natives = sorted(b.path for b in m.libraries)
        size = sum(s for _, s in m.sizes.values())
        lib_list = "".join(f"<li><code>{esc(p)}</code></li>" for p in natives)
        lib_list = (f"<details{' open' if len(natives) <= 12 else ''}><summary>{plural(len(natives), 'native library', 'native libraries')}"
                    f"</summary><ul class=\"paths\">{lib_list}</ul></details>" if natives else "—")
        rows.append(
            f"<tr><td><svg width=\"12\" height=\"12\" aria-hidden=\"true\"><rect class=\"o{_origin_class(i)}\" "
            f"width=\"12\" height=\"12\"/></svg> <code>{esc(label)}</code><div class=\"meta\">{esc(m.name)} "
            f"{esc(m.version)}</div></td><td class=\"num\">{len(mine)} of {len(m.files)}</td>"
            f"<td class=\"num\">{esc(human_size(size, binary=True, trim=False))}</td><td>{lib_list}</td></tr>\n")
    return ("<h3>Wheels in this install</h3>\n<table><thead><tr><th>Wheel</th><th>Files in the install</th>"
            "<th>Size</th><th>Native libraries</th></tr></thead><tbody>\n" + "".join(rows) + "</tbody></table>\n")


def _origin_class(i: int) -> int:
    return i % _ORIGIN_CLASSES


def _libraries(libs: list[LibraryFacts], flagged: set[str], together: bool, shipped: int) -> str:
    if not libs:
        said = ("No native libraries." if not shipped else
                f"{plural(shipped, 'native library', 'native libraries')}, not described: this report was built "
                "without the audit's library facts (wheelaudit.api.audit_wheels makes them).")
        return f"<h3>Native libraries</h3>\n<p>{said}</p>\n"
    head = "<th>Library</th>" + ("<th>Wheel</th>" if together else "") + \
        "<th>Format</th><th>Size</th><th>Components</th><th>Dependencies</th>"
    rows = []
    for lib in libs:
        flag = " <span class=\"flag\" title=\"named by a finding\">●</span>" if lib.path in flagged else ""
        cells = [f"<td class=\"lib\"><code>{esc(lib.path)}</code>{flag}"
                 + (f"<div class=\"meta\">identity <code>{esc(lib.identity)}</code></div>" if lib.identity else "")
                 + "</td>"]
        if together:
            cells.append(f"<td><code>{esc(lib.origin or '')}</code></td>")
        fmt = f"{esc(lib.format)} {esc(lib.kind)}<div class=\"meta\">{esc(', '.join(lib.archs))}</div>"
        cells.append(f"<td>{fmt}</td>")
        cells.append(f"<td class=\"num\">{esc(human_size(lib.size, binary=True, trim=False))}</td>")
        if lib.error:
            cells.append(f"<td colspan=\"2\" class=\"dep unresolved\">unreadable: {esc(lib.error)}</td>")
        else:
            comps = "".join(
                f"<span class=\"comp{' exempt' if m.exempt else ''}\" title=\"{esc(', '.join(m.evidence))}"
                f"{' (exempt)' if m.exempt else ''}\">{esc(m.name)}</span>" for m in lib.components) or "—"
            cells.append(f"<td>{comps}</td>")
            deps = []
            for d in lib.dependencies:
                where = ""
                if d.status == "inside" and d.path and d.path != d.name:
                    where = f" <span class=\"where\">→ {esc(d.path)}</span>"
                elif d.status != "inside":
                    where = f" <span class=\"where\">({esc(_short_status(d))})</span>"
                archs = (f" <span class=\"where\">[{esc('/'.join(d.archs))} only]</span>"
                         if len(set(d.archs)) < len(set(lib.archs)) else "")
                deps.append(f"<li class=\"dep {d.status}\" title=\"{esc(d.where or STATUS_TEXT[d.status])}; {esc(d.kind)}\">"
                            f"<span class=\"st {d.status}\"></span><code>{esc(d.name)}</code>{where}{archs}</li>")
            cells.append(f"<td><ul class=\"deps\">{''.join(deps)}</ul></td>" if deps else "<td>—</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>\n")
    return (f"<h3>Native libraries</h3>\n<table><thead><tr>{head}</tr></thead><tbody>\n"
            + "".join(rows) + "</tbody></table>\n")


def _short_status(d) -> str:
    """A dependency outside the wheel in a word or two (the full text is its tooltip)."""
    if d.status == "external":
        return "system"
    if d.status == "provided":
        return f"from {d.dist}" if d.dist else "provided"
    return STATUS_TEXT[d.status]


# --------------------------------------------------------------------------------------------
# Dependency graph


def _node_key(status: str, name: str) -> str:
    return f"{status}:{name}"


def _graph(libs: list[LibraryFacts], flagged: set[str], index: int) -> str:
    nodes: dict[str, str] = {}
    kinds: dict[str, str] = {}
    titles: dict[str, str] = {}
    for lib in libs:
        key = _node_key("lib", lib.path)
        nodes[key] = lib.path.rsplit("/", 1)[-1]
        kinds[key] = "lib"
        titles[key] = f"{lib.path} ({human_size(lib.size, binary=True, trim=False)})" + (
            f"; components: {', '.join(m.name for m in lib.components)}" if lib.components else "")
    edges: list[tuple[str, str, str, bool]] = []  # (from, to, status, optional)
    outside: list[str] = []
    for lib in libs:
        src = _node_key("lib", lib.path)
        for d in lib.dependencies:
            if d.status == "inside" and d.path and _node_key("lib", d.path) in nodes:
                dst = _node_key("lib", d.path)
            else:
                dst = _node_key(d.status, d.name)
                if dst not in nodes:
                    nodes[dst] = d.name + (f" ({d.dist})" if d.dist else "")
                    kinds[dst] = d.status
                    titles[dst] = f"{d.name}: {d.where or STATUS_TEXT[d.status]}"
                    outside.append(dst)
            edges.append((src, dst, d.status, d.kind in ("weak", "delay")))
    edges = sorted(set(edges))
    placed, width, height = layout.layout_graph(nodes, [(a, b) for a, b, _, _ in edges], outside)
    fit = " class=\"fit\"" if width <= 1.5 * TREEMAP_WIDTH else ""  # (shrunk to the page; larger ones scroll)
    svg = [f"<svg{fit} width=\"{_num(width)}\" height=\"{_num(height)}\" "
           f"viewBox=\"0 0 {_num(width)} {_num(height)}\" role=\"img\" aria-label=\"dependency graph\">\n<defs>"]
    for status in ("inside", "external", "provided", "unresolved", "weak-absent"):
        svg.append(f"<marker id=\"a{index + 1}-{status}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
                   f"markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
                   f"<path d=\"M0,0L10,5L0,10z\" fill=\"{_ARROW[status]}\"/></marker>")
    svg.append("</defs>\n")
    for a, b, status, optional in edges:
        p, q = placed[a], placed[b]
        x1, y1 = p.x + p.width, p.y + p.height / 2
        x2, y2 = q.x, q.y + q.height / 2
        if x2 <= x1:  # a cycle's back edge: around the right of the source
            x2, y2 = q.x + q.width, q.y + q.height / 2
            path = (f"M{_num(x1)},{_num(y1)} C{_num(x1 + 40)},{_num(y1)} {_num(x2 + 40)},{_num(y2)} "
                    f"{_num(x2)},{_num(y2)}")
        else:
            mid = (x1 + x2) / 2
            path = f"M{_num(x1)},{_num(y1)} C{_num(mid)},{_num(y1)} {_num(mid)},{_num(y2)} {_num(x2)},{_num(y2)}"
        cls = f"e {status}" + (" optional" if optional else "")
        svg.append(f"<path class=\"{cls}\" d=\"{path}\" marker-end=\"url(#a{index + 1}-{status})\"/>\n")
    for key in sorted(placed):
        p = placed[key]
        kind = kinds[key]
        cls = "n" + ("" if kind == "lib" else f" {kind}") + (" bad" if kind == "lib" and key[4:] in flagged else "")
        svg.append(f"<g class=\"{cls}\"><title>{esc(titles[key])}</title>"
                   f"<rect x=\"{_num(p.x)}\" y=\"{_num(p.y)}\" width=\"{_num(p.width)}\" height=\"{_num(p.height)}\" rx=\"5\"/>"
                   f"<text x=\"{_num(p.x + 8)}\" y=\"{_num(p.y + p.height / 2 + 4)}\">{esc(p.label)}</text></g>\n")
    svg.append("</svg>")
    legend = ("<div class=\"legend\">"
              "<span><span class=\"sw\" style=\"background:#fff;border-color:#24292f\"></span>shipped library</span>"
              "<span><span class=\"sw\" style=\"background:#fff;border:2px solid #c62828\"></span>named by a finding</span>"
              "<span><span class=\"sw\" style=\"background:#eaeef2;border-color:#afb8c1\"></span>system library</span>"
              "<span><span class=\"sw\" style=\"background:#ddf4ff;border:1px dashed #3b82c4\"></span>provided by another distribution</span>"
              "<span><span class=\"sw\" style=\"background:#fff8c5;border:1px dashed #d4a72c\"></span>optional, absent</span>"
              "<span><span class=\"sw\" style=\"background:#ffebe9;border:1px dashed #c62828\"></span>unresolved</span>"
              "</div>\n")
    return ("<h3>Dependency graph</h3>\n<p class=\"meta\">Left to right by dependency depth: what loads first "
            "on the left, what lies outside the wheel in the last column.</p>\n" + legend
            + "<div class=\"scroll graph\">" + "".join(svg) + "</div>\n")


_ARROW = {"inside": "#24292f", "external": "#c4ccd4", "provided": "#3b82c4", "unresolved": "#c62828",
          "weak-absent": "#d4a72c"}


# --------------------------------------------------------------------------------------------
# Treemap

TREEMAP_WIDTH = 1200.0
TREEMAP_HEIGHT = 400.0

_KIND_TEXT = {"native": "native library", "python": "Python", "meta": ".dist-info / .data metadata",
              "data": "other file", "lump": "small files, together"}


def _kind(path: str, natives: set[str]) -> str:
    if path in natives:
        return "native"
    if path.endswith((".py", ".pyi", ".pyc")):
        return "python"
    top = path.split("/", 1)[0]
    if top.endswith(".dist-info"):
        return "meta"
    return "data"


def _treemap(w, libs: list[LibraryFacts], sizes: dict[str, int], index: int, members) -> str:
    if not sizes:
        return ""
    natives = {lib.path for lib in libs} | {b.path for b in w.libraries}
    origin_names = sorted(m.path.name for m in members) if members else []
    origin_class = {name: _origin_class(i) for i, name in enumerate(origin_names)}
    root = layout.treemap(sizes, TREEMAP_WIDTH, TREEMAP_HEIGHT)
    svg = [f"<svg viewBox=\"0 0 {_num(TREEMAP_WIDTH)} {_num(TREEMAP_HEIGHT)}\" "
           f"width=\"100%\" role=\"img\" aria-label=\"member sizes\">\n"]

    def draw(t: layout.Tile) -> None:
        if t.w < 0.5 or t.h < 0.5:
            return
        rect = f"<rect x=\"{_num(t.x)}\" y=\"{_num(t.y)}\" width=\"{_num(t.w)}\" height=\"{_num(t.h)}\""
        if t.folder and t.children:
            title = f"{t.path}/ — {human_size(t.size, binary=True, trim=False)}"
            svg.append(f"<g class=\"t folder\"><title>{esc(title)}</title>{rect}/>")
            if t.path and t.h > 2.5 * layout.LABEL_BAND and t.w > 40:
                label = shorten_middle(t.path.rsplit("/", 1)[-1] + "/", max(1, int((t.w - 6) / 6.5)))
                svg.append(f"<text x=\"{_num(t.x + 4)}\" y=\"{_num(t.y + 11.5)}\">{esc(label)}</text>")
            for c in t.children:
                draw(c)
            svg.append("</g>\n")
            return
        if t.lumped or t.folder:
            kind = "lump"
            name = plural(t.lumped, 'small file')
            title = f"{t.path or '/'}: {name} — {human_size(t.size, binary=True, trim=False)}"
        else:
            kind = _kind(t.path, natives)
            name = t.path.rsplit("/", 1)[-1]
            title = f"{t.path} — {human_size(t.size, binary=True, trim=False)}"
        fill = f"k-{kind}"
        if members and not t.lumped and not t.folder:
            origin = w.origins.get(t.path)
            if origin in origin_class:
                fill = f"o{origin_class[origin]}"
        svg.append(f"<g class=\"t\"><title>{esc(title)}</title>{rect} class=\"{fill}\"/>")
        if t.w > 46 and t.h > 15:
            label = shorten_middle(name, max(1, int((t.w - 6) / 6.5)))
            svg.append(f"<text x=\"{_num(t.x + 3)}\" y=\"{_num(t.y + 12)}\">{esc(label)}</text>")
        svg.append("</g>\n")

    draw(root)
    svg.append("</svg>")
    if members:
        legend = "".join(f"<span><svg width=\"14\" height=\"10\" aria-hidden=\"true\"><rect class=\"o{origin_class[n]}\" "
                         f"width=\"14\" height=\"10\"/></svg> <code>{esc(n)}</code></span>" for n in origin_names)
    else:
        legend = "".join(f"<span><svg width=\"14\" height=\"10\" aria-hidden=\"true\"><rect class=\"k-{k}\" "
                         f"width=\"14\" height=\"10\"/></svg> {esc(v)}</span>" for k, v in _KIND_TEXT.items())
    return (f"<h3>Size of the members</h3>\n<p class=\"meta\">Each rectangle is a file, its area its uncompressed "
            f"size; folders nest. Hover for the path and size.</p>\n<div class=\"legend\">{legend}</div>\n"
            "<div class=\"scroll\">" + "".join(svg) + "</div>\n")
