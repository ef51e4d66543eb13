"""``check --format html``: one self-contained file, loaded in headless Chromium (Debian's
``chromium``, installed by scripts/setup.sh) with no console error and no network request, and
whatever a wheel names shown as text, never run."""

from __future__ import annotations

import html.parser
from html import escape as esc
import importlib.util
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from wheel.wheelfile import WheelFile

from wheelaudit.api import audit
from wheelaudit.render import renderer
from wheelaudit.render.drawing.layout import layers, treemap

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules" / "executorch.toml"
#: member names that would run or fetch something if they reached the page as markup
HOSTILE_PY = "executorch/<script>document.title='PWNED'</script>.py"
HOSTILE_LIB = "executorch/lib/<img src=x onerror=document.title='PWNED'>.so"


def _harness():
    """scripts/gen_report_screenshot.py: the browser harness the docs' screenshot is made with."""
    spec = importlib.util.spec_from_file_location("gen_report_screenshot", ROOT / "scripts" / "gen_report_screenshot.py")
    assert spec and spec.loader
    if spec.name in sys.modules:
        return sys.modules[spec.name]
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # (its dataclasses look their module up there)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def browser():
    mod = _harness()
    if mod.find_chromium() is None:
        pytest.fail("chromium is missing; install it with: apt-get install -y chromium (scripts/setup.sh does)",
                    pytrace=False)
    return mod


@pytest.fixture(scope="module")
def hostile_wheel(fixture_wheels, tmp_path_factory) -> Path:
    """The ``linux_rpath_shadowed`` wheel (a WA501, nine libraries, torch-provided and system
    dependencies) plus a Python file (big enough for a treemap tile of its own) and a copy of a
    library under markup-shaped names, with a RECORD that lists them."""
    src = fixture_wheels["linux_rpath_shadowed"]
    dest = tmp_path_factory.mktemp("hostile") / src.name
    with zipfile.ZipFile(src) as zin, WheelFile(dest, "w") as wf:
        for info in zin.infolist():
            if not info.filename.endswith("/RECORD"):
                wf.writestr(info.filename, zin.read(info))
        wf.writestr(HOSTILE_PY, b"# big enough for a tile of its own\n" * 2000)
        wf.writestr(HOSTILE_LIB, zin.read("executorch/lib/libexecutorch_etdump.so"))
    return dest


def _check_html(wheel: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wheelaudit", "check", str(wheel), "--rules", str(RULES),
                           "--format", "html", "--output", str(out), *extra], capture_output=True, text=True)


@pytest.fixture(scope="module")
def hostile_html(hostile_wheel, tmp_path_factory) -> Path:
    """The report of :func:`hostile_wheel`, written by ``check --format html --output``."""
    page = tmp_path_factory.mktemp("report") / "report.html"
    proc = _check_html(hostile_wheel, page)
    assert proc.returncode == 1, proc.stderr  # the WA501 fails the gate; the report is still written
    assert proc.stdout.startswith("failed: ") and proc.stdout.endswith(f"wrote the html report to {page}\n")
    return page


class _Refs(html.parser.HTMLParser):
    """Every tag, and every attribute that could make a browser fetch or run something."""

    FETCHING = {"src", "href", "xlink:href", "srcset", "action", "formaction", "poster", "data", "background"}

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.refs: list[tuple[str, str, str]] = []
        self.handlers: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            if name in self.FETCHING:
                self.refs.append((tag, name, value or ""))
            if name.startswith("on"):
                self.handlers.append((tag, name))


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_report_loads_in_chromium_with_no_console_error_and_no_request(hostile_html, browser, tmp_path):
    shot = tmp_path / "report.png"
    loaded = browser.load(hostile_html, screenshot=shot)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert loaded.console == []
    assert loaded.requests == []
    assert _png_size(shot) == (1280, 2000)
    dom = loaded.dom
    # the page is what it says: the verdict, the finding under its code with name and hint,
    # the libraries with their components, both drawings
    assert "<title>wheelaudit: failed" in dom
    assert "WA501" in dom and "unresolved-dependency" in dom and "Hint:" in dom
    assert "backend_xnnpack" in dom and "libexecutorch_threadpool.so" in dom
    assert 'aria-label="dependency graph"' in dom and 'aria-label="member sizes"' in dom
    # the hostile names are text: escaped in the DOM, no element made of them, nothing ran
    assert "PWNED" not in dom.split("<title>", 1)[1].split("</title>", 1)[0]
    assert "&lt;script&gt;document.title='PWNED'&lt;/script&gt;" in dom
    assert "&lt;img src=x onerror=document.title='PWNED'&gt;.so" in dom
    parsed = _Refs()
    parsed.feed(dom)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert parsed.handlers == []


def test_harness_catches_console_errors_and_requests(browser, tmp_path):
    """The browser check can fail: a page that logs an error and fetches an image is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><p>x</p><script>console.error('boom')</script>"
                   "<img src='http://wheelaudit.invalid/x.png'></body></html>", encoding="utf-8")
    loaded = browser.load(bad)
    assert any("boom" in line for line in loaded.console)
    assert any("wheelaudit.invalid" in url for url in loaded.requests)


def test_report_is_self_contained_escaped_and_deterministic(hostile_wheel, hostile_html, tmp_path):
    again = tmp_path / "again.html"
    assert _check_html(hostile_wheel, again, "--jobs", "1").returncode == 1  # (another process, hash seed)
    text = hostile_html.read_text(encoding="utf-8")
    assert text == again.read_text(encoding="utf-8")
    parsed = _Refs()
    parsed.feed(text)
    # nothing to fetch: in-page anchors only, no script, stylesheet, image, frame or font
    assert all(value.startswith("#") for _, _, value in parsed.refs), parsed.refs
    assert not parsed.tags & {"script", "link", "img", "iframe", "object", "embed", "base", "form"}
    assert "@import" not in text and "@font-face" not in text
    assert "http://" not in text and "https://" not in text
    assert "default-src 'none'" in text  # and a policy that would block it anyway
    assert "<script" not in text and HOSTILE_PY not in text and HOSTILE_LIB not in text
    assert esc(HOSTILE_PY) in text and esc(HOSTILE_LIB) in text
    # every finding's hint, the library sizes and the components are in it
    findings = text.count('<li class="finding')
    assert findings >= 4  # WA501, and the hostile library's WA101, WA102 and WA201
    assert text.count("<b>Hint:</b>") == findings
    assert "13.7 KiB" in text  # libexecutorch.so
    assert '<span class="comp" title="exported">platform_layer</span>' in text


def test_report_to_standard_output(fixture_wheels):
    proc = subprocess.run([sys.executable, "-m", "wheelaudit", "check", str(fixture_wheels["linux_clean"]),
                           "--rules", str(RULES), "--format", "html"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!DOCTYPE html>") and proc.stdout.endswith("</html>\n")
    assert "No findings." in proc.stdout and ">passed<" in proc.stdout


def test_together_report_says_which_wheel_ships_what(fixture_wheels, tmp_path):
    """Two wheels audited together: a table of what each ships, tiles coloured by wheel."""
    import io

    torch = tmp_path / "torch-2.5.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with WheelFile(torch, "w") as wf:
        wf.writestr("torch/lib/libtorch.so", b"\x00" * 10)  # not an ELF: a data file
        wf.writestr("torch-2.5.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: torch\nVersion: 2.5.0\n")
        wf.writestr("torch-2.5.0.dist-info/WHEEL", b"Wheel-Version: 1.0\nTag: cp311-cp311-manylinux_2_28_x86_64\n")
    report = audit([fixture_wheels["linux_clean"], torch], None, together=True)
    out = io.StringIO()
    renderer("html")(report, out, False)
    text = out.getvalue()
    assert "Wheels in this install" in text
    assert f"<code>{torch.name}</code>" in text and f"<code>{fixture_wheels['linux_clean'].name}</code>" in text
    assert 'class="o0"' in text and 'class="o1"' in text  # the treemap's tiles, by wheel


def test_layout_treemap_fills_its_box_without_overlap():
    sizes = {f"pkg/sub{i % 3}/f{i}.bin": 1000 + 37 * i for i in range(60)}
    sizes.update({f"pkg/tiny/t{i}": 1 for i in range(500)})  # too small to draw one by one
    root = treemap(sizes, 800, 400)
    every, i = [root], 0
    while i < len(every):  # (the laid-out tree, parents before their children)
        every.extend(every[i].children)
        i += 1
    leaves = [t for t in every if not t.children]
    assert sum(t.lumped for t in leaves) >= 400
    for t in leaves:
        assert -1e-6 <= t.x and t.x + t.w <= 800 + 1e-6 and -1e-6 <= t.y and t.y + t.h <= 400 + 1e-6
    drawn = [t for t in leaves if t.w * t.h > 0]
    for i, a in enumerate(drawn):
        for b in drawn[i + 1:]:
            overlap_w = min(a.x + a.w, b.x + b.w) - max(a.x, b.x)
            overlap_h = min(a.y + a.h, b.y + b.h) - max(a.y, b.y)
            assert overlap_w <= 1e-6 or overlap_h <= 1e-6, (a.path, b.path)


def test_layout_layers_by_dependency_depth_and_survives_cycles():
    got = layers(["ext", "a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("a", "c"), ("c", "d"), ("d", "c"),
                                               ("c", "ext")], last=["ext"])
    assert got["a"] == 0 and got["b"] == 1 and got["c"] >= 2 and got["d"] != got["c"]
    assert got["ext"] == max(got.values()) and got["ext"] > got["d"]
