"""The page in a real headless Chromium (Debian's package): it loads with no console error and no network request,
and every chart paints something. One full-page screenshot per example is kept under build/review-pack/."""

from __future__ import annotations

import io
import json
import os

import pytest
from PIL import Image

from tests.conftest import ROOT
from tests.review_pack.cdp import CHROMIUM, Browser

ARTIFACTS = ROOT / "build" / "review-pack"
SCREENSHOT = {"enterprise": "enterprise", "startup-change": "startup"}  # pack -> example the screenshot is of


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not on the PATH in CI: install Debian's chromium package (apt-get install "
                        "chromium)")
        pytest.skip("chromium is not on the PATH (apt-get install chromium); CI installs it and runs this test")
    b = Browser(tmp_path_factory.mktemp("chromium") / "profile")
    yield b
    b.close()


def _varied(png: bytes) -> tuple[int, float]:
    """(distinct colours, share of pixels that are not the background white) of a PNG."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    total = image.width * image.height
    white = sum(n for n, c in colours if c == (255, 255, 255))
    return len(colours), 1 - white / total


@pytest.mark.parametrize("pack", ["enterprise", "startup-change"])
def test_page_loads_offline_without_errors_and_every_chart_paints(browser, packs, pack):
    page = (packs[pack] / "index.html").resolve()
    url = page.as_uri()
    browser.events.clear()
    browser.load(url)
    events = browser.events
    requests = [e["params"]["request"]["url"] for e in events if e.get("method") == "Network.requestWillBeSent"]
    assert requests == [url], f"the page asked for more than itself: {requests}"
    console = [e["params"] for e in events if e.get("method") == "Runtime.consoleAPICalled"]
    exceptions = [e["params"] for e in events if e.get("method") == "Runtime.exceptionThrown"]
    logged = [e["params"]["entry"] for e in events if e.get("method") == "Log.entryAdded"
              and e["params"]["entry"]["level"] in ("error", "warning")]
    assert not console and not exceptions and not logged, (console, exceptions, logged)

    boxes = browser.evaluate(
        "JSON.stringify([...document.querySelectorAll('figure.chart svg')].map(e => {"
        "const r = e.getBoundingClientRect(); return {chart: e.dataset.chart, x: r.x + scrollX, y: r.y + scrollY,"
        " w: r.width, h: r.height}}))")
    boxes = json.loads(boxes)
    assert sorted(b["chart"] for b in boxes) == sorted(p.stem for p in packs[pack].glob("*.svg"))
    for box in boxes:
        assert box["w"] > 200 and box["h"] > 60, box
        colours, ink = _varied(browser.screenshot(box["x"], box["y"], box["w"], box["h"]))
        assert colours >= 8 and ink > 0.02, f"{box['chart']} looks blank: {colours} colours, {ink:.1%} ink"

    size = browser.evaluate("JSON.stringify([document.documentElement.scrollWidth, "
                            "document.documentElement.scrollHeight])")
    width, height = json.loads(size)
    full = browser.screenshot(0, 0, width, height)
    assert _varied(full)[0] >= 16
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"{SCREENSHOT[pack]}.png").write_bytes(full)
