"""The page in a real headless Chromium (Debian's package): it loads with no console error and no network request,
and every chart paints something. One full-page screenshot per example is kept under build/review-pack/."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

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



def alarm_problems(browser: Browser, page: Path, named: str = "chatbot: c1") -> list[str]:
    """What keeps a reader from seeing the alarm first: missing, hidden, below a chart or the first screen, not
    red, or not naming the workload ``named`` ("team: workload")."""
    browser.load(page.resolve().as_uri())
    found = json.loads(browser.evaluate(
        "JSON.stringify((() => { const a = document.querySelector('#alarm');"
        " const f = document.querySelector('figure.chart');"
        " if (!a) return null; const r = a.getBoundingClientRect(), s = getComputedStyle(a);"
        " return {top: r.top + scrollY, bottom: r.bottom + scrollY, height: r.height, color: s.color,"
        " border: s.borderTopColor, display: s.display, visibility: s.visibility, opacity: s.opacity,"
        " text: a.innerText, chart: f.getBoundingClientRect().top + scrollY, screen: innerHeight,"
        " x: r.left + scrollX, width: r.width}; })())"))
    if found is None:
        return ["no alarm"]
    problems = []
    if found["display"] == "none" or found["visibility"] != "visible" or found["opacity"] != "1" \
            or found["height"] < 40:
        problems.append("the alarm is hidden")
    if found["bottom"] > found["chart"]:
        problems.append("the alarm is below the first chart")
    if found["top"] >= found["screen"]:
        problems.append("the alarm is not in the first screen")
    if found["color"] != "rgb(183, 28, 28)" or found["border"] != "rgb(183, 28, 28)":
        problems.append(f"the alarm is not red ({found['color']}, border {found['border']})")
    if "unable ever to fit" not in found["text"] or named not in found["text"]:
        problems.append(f"the alarm does not name {named}")
    if found["height"] >= 40:
        shot = Image.open(io.BytesIO(browser.screenshot(found["x"], found["top"], found["width"], found["height"])))
        red = sum(n for n, (r, g, b) in shot.convert("RGB").getcolors(1 << 20) if r > 150 and g < 80 and b < 80)
        if red < 500:
            problems.append(f"only {red} red pixels in the alarm")
    return problems


@pytest.fixture(scope="module")
def chatbot_pack(tmp_path_factory) -> Path:
    """Issue 58's chatbot case: the change leaves c1 (4 GPUs) unable ever to fit."""
    from hyperpod_gov.review_pack.cli import run
    from tests.conftest import EXAMPLES
    from tests.review_pack.conftest import TRACE, chatbot_change, pack_args

    root = tmp_path_factory.mktemp("chatbot")
    out = root / "pack"
    assert run(pack_args(chatbot_change(root), out, "--base", str(EXAMPLES / "startup.yaml"),
                         "--trace", str(TRACE))) == 0
    return out


def test_the_red_alarm_is_visible_before_the_first_chart(browser, chatbot_pack):
    assert alarm_problems(browser, chatbot_pack / "index.html") == []
    width, height = json.loads(browser.evaluate("JSON.stringify([document.documentElement.scrollWidth, "
                                                "document.documentElement.scrollHeight])"))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "chatbot-change.png").write_bytes(browser.screenshot(0, 0, width, height))


def test_the_browser_check_finds_an_alarm_moved_below_the_charts_or_not_red(browser, chatbot_pack, tmp_path):
    html = (chatbot_pack / "index.html").read_text()
    alarm = re.search(r'<section id="alarm".*?</section>\n', html, re.S)
    assert alarm is not None
    late = tmp_path / "late.html"
    late.write_text(html.replace(alarm.group(0), "").replace("</body>", alarm.group(0) + "</body>"))
    assert alarm_problems(browser, late) == ["the alarm is below the first chart",
                                             "the alarm is not in the first screen"]
    grey = tmp_path / "grey.html"
    grey.write_text(html.replace(".alarm{border:2px solid #b71c1c;background:#ffebee;color:#b71c1c",
                                 ".alarm{border:2px solid #bdbdbd;background:#fafafa;color:#212121")
                    .replace(".alarm h2{color:#b71c1c", ".alarm h2{color:#212121"))
    problems = alarm_problems(browser, grey)
    assert problems[0].startswith("the alarm is not red") and problems[1].startswith("only ")
