#!/usr/bin/env python3
"""Regenerate docs/report.png: the HTML report (``check --format html``) of a fixture wheel as
headless Chromium shows it; also the browser harness ``tests/test_html_report.py`` uses.

    python scripts/gen_report_screenshot.py [OUT.png]     (default: docs/report.png)

The wheel is the ``linux_rpath_shadowed`` scenario of fixtures/make_wheels.py (built here into a
temporary folder; needs the fixture toolchain) checked against rules/executorch.toml: one
WA501, nine libraries with their components, a dependency resolved inside the wheel, system
libraries, two provided by torch and one unresolved. Needs Debian's ``chromium`` (scripts/setup.sh
installs it). Nothing here uses the network: Chromium runs with every host name unresolvable.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "linux_rpath_shadowed"
RULES = "rules/executorch.toml"
WINDOW = (1280, 2000)

#: a browser that starts clean, talks to no one and logs the page's console to stderr
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability", "--no-pings",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0")

_CONSOLE = re.compile(r":INFO:CONSOLE[^\]]*\]\s*(.*)")


def find_chromium() -> str | None:
    """The Chromium binary (Debian's ``chromium``), or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Loaded:
    """What a page did in the browser: its DOM after load, what it wrote to the console, the
    URLs it asked the network for (the browser's own background requests left out)."""

    returncode: int
    dom: str
    console: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    stderr: str = ""


def _page_requests(netlog: Path) -> list[str]:
    """URLs of the network requests a page started: in Chromium's net log, every request of a
    page has the page's origin as initiator ("null" for a file), the browser's own requests
    (update checks and the like) have none."""
    if not netlog.is_file():
        return []
    text = netlog.read_text(encoding="utf-8", errors="replace").rstrip().rstrip(",")
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # a log cut short at exit: close the events list
        log = json.loads(text + "]}")
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for event in log.get("events", []):
        params = event.get("params") or {}
        if names.get(event.get("type")) == "URL_REQUEST_START_JOB" and "url" in params:
            if params.get("initiator", "not an origin") != "not an origin":
                urls.append(params["url"])
    return urls


def load(page: Path, *, screenshot: Path | None = None, window: tuple[int, int] = WINDOW,
         timeout: float = 60) -> Loaded:
    """Open ``page`` (a local file) in headless Chromium: its DOM after load, console messages
    and the requests it made; with ``screenshot``, a PNG of the window too."""
    chromium = find_chromium()
    if chromium is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium; scripts/setup.sh does)")
    with tempfile.TemporaryDirectory(prefix="wa-chromium-") as tmp:
        netlog = Path(tmp) / "netlog.json"
        args = [chromium, *FLAGS, f"--user-data-dir={tmp}/profile", f"--log-net-log={netlog}",
                f"--window-size={window[0]},{window[1]}", "--dump-dom"]
        if screenshot is not None:
            args.append(f"--screenshot={screenshot}")
        args.append(page.resolve().as_uri())
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "LANG": "C.UTF-8", "TZ": "UTC"})
        console = [m.group(1) for line in proc.stderr.splitlines() if (m := _CONSOLE.search(line))]
        return Loaded(proc.returncode, proc.stdout, console, _page_requests(netlog), proc.stderr)


def _fixture_wheel(out: Path) -> Path:
    sys.path.insert(0, str(ROOT / "fixtures"))
    try:
        import make_wheels
    finally:
        sys.path.remove(str(ROOT / "fixtures"))
    return make_wheels.build_all(out)[SCENARIO]


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else ROOT / "docs" / "report.png"
    with tempfile.TemporaryDirectory(prefix="wa-report-") as tmp:
        wheel = _fixture_wheel(Path(tmp) / "wheels")
        page = Path(tmp) / "report.html"
        proc = subprocess.run([sys.executable, "-m", "wheelaudit", "check", str(wheel), "--rules", RULES,
                               "--format", "html", "--output", str(page)], cwd=ROOT, capture_output=True, text=True)
        if proc.returncode not in (0, 1) or not page.is_file():
            sys.stderr.write(proc.stderr)
            return 2
        shot = Path(tmp) / "report.png"
        loaded = load(page, screenshot=shot)
        if loaded.returncode != 0 or not shot.is_file() or loaded.console or loaded.requests:
            sys.stderr.write(f"chromium: exit {loaded.returncode}; console: {loaded.console}; "
                             f"requests: {loaded.requests}\n")
            return 1
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, target)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
