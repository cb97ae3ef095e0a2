"""Issue 57 on the review page: a capacity timeline (`review-pack --capacity`, `simulate --format html --capacity`).

Cases on the elastic example and its trace: the Spot loss (examples/elastic-spot-loss.csv: 4 burst nodes lost at
minute 60, back at 150), the spec's own capacity (examples/elastic-no-events.csv), and a loss of all 6 gpu-base
nodes at minute 5 (back at 45) under the chatbot team's serving job c1 (DontLend). Every expectation is read from
the simulator's own run, done here, not from the page.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any, Optional

import pytest
import yaml
from PIL import Image

from hyperpod_gov.plan import build_plan
from hyperpod_gov.review_pack.cli import run
from hyperpod_gov.simulate.spec_level import figures_json, run_plan, trace_checks
from hyperpod_gov.simulate.spec_nodes import node_groups, plan_groups
from hyperpod_gov.simulate.timeline import CapacityTimeline, load_timeline
from hyperpod_gov.simulate.trace import load_trace
from hyperpod_gov.spec import load_spec
from tests.conftest import EXAMPLES, TODAY
from tests.review_pack.cdp import CHROMIUM, Browser
from tests.review_pack.conftest import TRACE, chatbot_change, pack_args
from tests.review_pack.pagedoc import numbers, structure
from tests.review_pack.test_formats import _simulate

ELASTIC = EXAMPLES / "elastic.yaml"
ELASTIC_TRACE = EXAMPLES / "elastic-trace.csv"
SPOT_LOSS = EXAMPLES / "elastic-spot-loss.csv"
NO_EVENTS = EXAMPLES / "elastic-no-events.csv"
HEADER = "minute,instanceGroup,instanceType,add,lose\n"
BASE_LOSS = HEADER + "5,gpu-base,,,6\n45,gpu-base,,6,\n"  # every node chatbot's c1 can run on at minute 5


def _digest(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name] + b"\0")
    return h.hexdigest()


def _folder(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


# Recorded before the capacity timeline reached the page, with constraints.txt's matplotlib (3.11.2): every file of
# each pack, and each `simulate --format html` page. A page without --capacity must keep these bytes.
BEFORE = {
    "startup": "ecec46c09d6e4ee3b3330e128a88017c2d909a629f1eba882325418c576b7650",
    "startup-change": "9edb0d37da52096e2c47cfd3ac6e1b2f068eedc4979b7d25136a8416ae92010b",
    "chatbot-change": "f9d9f5cdabde1f8e33b5a0706a7b45c350e338eaba13b975fd15e2f93151f09c",
    "elastic": "086e50496dacc3c51a2464ac07b0e71f069d7e2ce677a30b92bdda4f9fa4f0a2",
    "simulate-elastic": "ffba9d8714d0fa6235f8bee190e03c5850384c020ca0b33cc5940e55ca14001a",
    "simulate-startup-compare": "56112467cd9a6845c6ac19437dd4db46706423d786f19bb91003bb6a89927d4c",
}


@pytest.fixture(scope="module")
def outputs_without_capacity(packs, tmp_path_factory) -> dict[str, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("before")
    out = {name: _folder(packs[name]) for name in ("startup", "startup-change")}
    chatbot = root / "chatbot"
    assert run(pack_args(chatbot_change(root), chatbot, "--base", str(EXAMPLES / "startup.yaml"),
                         "--trace", str(TRACE))) == 0
    out["chatbot-change"] = _folder(chatbot)
    elastic = root / "elastic"
    assert run(pack_args(ELASTIC, elastic, "--trace", str(ELASTIC_TRACE))) == 0
    out["elastic"] = _folder(elastic)
    code, page, err = _simulate(str(ELASTIC), "--trace", str(ELASTIC_TRACE), "--format", "html")
    assert code == 0, err
    out["simulate-elastic"] = {"page.html": page.encode()}
    code, page, err = _simulate(str(EXAMPLES / "startup.yaml"), "--trace", str(TRACE), "--compare",
                                str(packs["change-spec"]), "--format", "html")
    assert code == 0, err
    out["simulate-startup-compare"] = {"page.html": page.encode()}
    return out


@pytest.mark.parametrize("name", BEFORE)
def test_without_capacity_the_page_keeps_its_bytes(outputs_without_capacity, name):
    assert _digest(outputs_without_capacity[name]) == BEFORE[name]


# --- the packs ----------------------------------------------------------------------------------------------------


def _smaller_burst(folder: Path) -> Path:
    """The elastic example with its Spot group at 6 nodes instead of 8 and the researchers' quota on it at 12
    accelerators per type instead of 16 (a change reviewed against the example)."""
    data = copy.deepcopy(yaml.safe_load(ELASTIC.read_text()))
    next(g for g in data["cluster"]["instanceGroups"] if g["name"] == "burst")["count"] = 6
    for q in next(t for t in data["teams"] if t["name"] == "researchers")["quota"]:
        if "accelerators" in q:
            q["accelerators"] = 12
    path = folder / "elastic-small-burst.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def capacity_packs(tmp_path_factory) -> dict[str, Any]:
    """Case name -> (spec, base spec or None, timeline, pack folder)."""
    root = tmp_path_factory.mktemp("capacity")
    base_loss = root / "base-loss.csv"
    base_loss.write_text(BASE_LOSS)
    small = _smaller_burst(root)
    cases = {"spot-loss": (ELASTIC, None, SPOT_LOSS), "no-events": (ELASTIC, None, NO_EVENTS),
             "base-loss": (ELASTIC, None, base_loss), "change": (small, ELASTIC, SPOT_LOSS)}
    out = {}
    for name, (spec, base, timeline) in cases.items():
        folder = root / name
        extra = ["--base", str(base)] if base else []
        assert run(pack_args(spec, folder, "--trace", str(ELASTIC_TRACE), "--capacity", str(timeline), *extra)) == 0
        out[name] = (spec, base, timeline, folder)
    return out


def _run(spec: Path, timeline: Path) -> tuple[Any, Any, Any]:
    """(plan, figures per team, raw result) of the simulator's own run under the timeline."""
    plan = build_plan(load_spec(spec, today=TODAY))
    rows = load_trace(ELASTIC_TRACE, **trace_checks(plan))
    capacity = CapacityTimeline(load_timeline(timeline, plan_groups(plan)))
    figures, result, _notes = run_plan(plan, rows, capacity)
    return plan, figures, result


def _simulation(folder: Path) -> dict:
    return next(s for s in structure((folder / "index.html").read_text()).sections if s["id"] == "simulation")


def _nodes_table(sim: dict) -> dict[tuple[str, str], dict[str, str]]:
    table = next(t for t in sim["tables"] if "evicted (nodes lost)" in t["header"])
    return {(r[0].split(" ")[0], r[1]): dict(zip(table["header"], r)) for r in table["rows"]}


def _list(sim: dict, start: str) -> list[str]:
    return next(lst["items"] for lst in sim["lists"] if lst["heading"].startswith(start))


# --- 1. the Spot loss: the researchers' two evictions and their rewait --------------------------------------------


def test_the_spot_loss_shows_the_researchers_two_evictions_and_the_minutes_they_waited_again(capacity_packs):
    _spec, _base, _timeline, folder = capacity_packs["spot-loss"]
    _plan, figures, _result = _run(ELASTIC, SPOT_LOSS)
    said = figures_json(figures["researchers"])
    assert (said["evictedByCapacityLoss"], said["waitAfterLossMinutes"]) == (2, 100)  # the simulator's figures
    sim = _simulation(folder)
    row = _nodes_table(sim)[("researchers", "-")]
    assert (row["evicted (nodes lost)"], row["rewait min"]) == ("2 [never]", "100")
    assert _list(sim, "Evictions by lost nodes") == [
        "researchers: x1 (8 accelerators of ml.g5.12xlarge) evicted at minute 60, nodes of burst lost; started "
        "again at minute 70, 10 minutes later, from the beginning",
        "researchers: x2 (8 accelerators of ml.g5.12xlarge) evicted at minute 60, nodes of burst lost; started "
        "again at minute 150, 90 minutes later, from the beginning"]
    drawn = numbers(folder / "trace-nodes.svg")
    assert drawn[("evicted by lost nodes", "researchers")] == 2  # in red beside the team's bars
    assert drawn[("rewait after lost nodes", "researchers")] == 100
    assert drawn[("p95 to nodes", "researchers")] == said["waitP95Minutes"] == 10
    assert not {("evicted by lost nodes", "chatbot"), ("evicted by lost nodes", "ml-engineering")} & set(drawn)
    for team in ("chatbot", "ml-engineering", "researchers"):
        assert _nodes_table(sim)[(team, "-")]["evicted (nodes lost)"].split(" ")[0] == str(
            figures_json(figures[team])["evictedByCapacityLoss"])
    timeline = numbers(folder / "trace-timeline.svg")
    assert timeline[("nodes lost", "burst (ml.g5.12xlarge) at minute 60")] == 4
    assert timeline[("nodes added", "burst (ml.g5.12xlarge) at minute 150")] == 4
    assert timeline[("nodes Ready (scale-up)", "burst (ml.g5.12xlarge) at minute 70")] == 3
    assert timeline[("evicted by lost nodes", "researchers: x2 at minute 60")] == 8


def test_work_whose_nodes_never_come_back_waits_to_the_end_of_the_trace_and_is_counted_waiting(tmp_path):
    timeline = tmp_path / "gone.csv"
    timeline.write_text(HEADER + "60,burst,,,4\n70,burst,,,4\n")  # every burst node, none back: nothing to rerun on
    folder = tmp_path / "out"
    assert run(pack_args(ELASTIC, folder, "--trace", str(ELASTIC_TRACE), "--capacity", str(timeline))) == 0
    _plan, figures, _result = _run(ELASTIC, timeline)
    said = figures_json(figures["researchers"])
    assert (said["evictedByCapacityLoss"], said["waitAfterLossMinutes"], said["waitingForNodes"]) == (3, 1610, 3)
    sim = _simulation(folder)
    row = _nodes_table(sim)[("researchers", "-")]
    assert (row["evicted (nodes lost)"], row["rewait min"], row["waiting for nodes at the end"]) == (
        "3 [never]", "1610", "3")
    assert [x.split("; ")[1] for x in _list(sim, "Evictions by lost nodes")] == [
        "not started again within the trace (waited 540 minutes to its end)",
        "not started again within the trace (waited 540 minutes to its end)",
        "not started again within the trace (waited 530 minutes to its end)"]
    assert numbers(folder / "trace-nodes.svg")[("evicted by lost nodes", "researchers")] == 3


def test_every_chart_of_a_capacity_run_names_the_trace_and_the_timeline(capacity_packs):
    for name, (spec, base, timeline, folder) in capacity_packs.items():
        end = max(_run(p, timeline)[2].end for p in (spec, base) if p is not None) / 60  # base-loss: c1 reruns
        sim = _simulation(folder)
        assert [c["chart"] for c in sim["charts"]][:2] == ["trace-wait", "trace-nodes"], name
        for chart in sim["charts"]:
            assert f"trace elastic-trace.csv (7 workloads, minutes 0 to {end:g})" in chart["caption"], (name, chart)
            assert f"on capacity timeline {timeline.name} (2 events, " in chart["caption"] or (
                name == "no-events" and "on capacity timeline elastic-no-events.csv (0 events, scale-up delay 10 "
                "minutes)" in chart["caption"]), (name, chart["caption"])


def test_usage_on_the_page_is_what_runs_on_nodes_and_adds_up_to_the_simulators_hours(capacity_packs):
    from hyperpod_gov.review_pack.timeline import usage_by_team, usage_on_nodes

    plan, figures, result = _run(ELASTIC, SPOT_LOSS)
    teams = [t.name for t in plan.teams]
    bounded = {f for ng in node_groups(plan) for f in ng.flavors}
    on_nodes = usage_on_nodes(result, teams, bounded)
    for team in teams:
        assert on_nodes[team].accelerator_hours == figures[team].accelerator_hours, team
    drawn = numbers(capacity_packs["spot-loss"][3] / "trace-timeline.svg")
    assert drawn[("accelerator-hours", "researchers")] == figures["researchers"].accelerator_hours == 62.17
    # Quota held is not running: replaying admissions (as without nodes) counts the researchers' waits as use.
    assert usage_by_team(result, teams)["researchers"].accelerator_hours != 62.17
    per_node = {"ml.g5.2xlarge": 1, "ml.g5.12xlarge": 4, "ml.g6e.12xlarge": 4}
    at_end = sum(n * per_node[f] for _g, per in result.nodes.groups for f, n in per)
    assert drawn[("accelerators on nodes", "at the end of the run")] == at_end == 47


# --- 2. the red caution: a DontLend team's admitted work lost its nodes or waited for them -------------------------


def broken_promises(spec: Path, timeline: Path) -> set[str]:
    """Hand reading of the simulator's raw run: admitted workloads of DontLend teams that were evicted by lost
    nodes, first started after their first admission, or wait for nodes at the end."""
    plan, _figures, result = _run(spec, timeline)
    dont_lend = {t.name for t in plan.teams if t.strategy == "DontLend"}
    out = set()
    for w in result.workloads:
        n = result.nodes.of(w.name)
        if dict(w.labels)["team"] not in dont_lend or w.first_admitted_at is None:
            continue
        if n.capacity_evictions or n.waiting_for_nodes or (n.first_started_at or 0) > w.first_admitted_at:
            out.add(w.name)
    return out


def check_caution(html: str, expected: set[str], summary: Optional[str] = None) -> list[str]:
    """A red caution before the first chart (and a CAUTION alert in summary.md) naming exactly ``expected``; none
    when ``expected`` is empty."""
    page = structure(html)
    caution = next((s for s in page.sections if s["id"] == "capacity-caution"), None)
    if not expected:
        return ["a caution with nothing to say"] if caution is not None else []
    if caution is None:
        return [f"no caution for {sorted(expected)}"]
    problems = []
    named = {m[1] for item in caution["lists"][0]["items"] if (m := re.match(r"\S+ \(DontLend\): (\S+) \(", item))}
    if named != expected:
        problems.append(f"the caution names {sorted(named)}, the run says {sorted(expected)}")
    start = html.find('<section id="capacity-caution" class="alarm"')
    if not 0 <= start < html.find("<figure"):
        problems.append("the caution is not before the first chart")
    if not re.search(r"\.alarm\{[^}]*color:#b71c1c", html):
        problems.append("the caution is not red")
    alert = "> [!CAUTION]\n> **Under the capacity timeline"
    if summary is not None and not 0 <= summary.find(alert) < summary.find("!["):
        problems.append("summary.md has no red caution before its first chart")
    return problems


@pytest.mark.parametrize("name,expected", [("base-loss", {"c1"}), ("spot-loss", set()), ("no-events", set())])
def test_a_caution_appears_exactly_when_a_dont_lend_teams_admitted_work_lost_or_waited_for_nodes(
        capacity_packs, name, expected):
    spec, _base, timeline, folder = capacity_packs[name]
    assert broken_promises(spec, timeline) == expected  # the case is what it claims
    html, summary = (folder / "index.html").read_text(), (folder / "summary.md").read_text()
    assert check_caution(html, expected, summary) == []


def test_a_dont_lend_job_that_waits_for_nodes_without_an_eviction_raises_the_caution_too(tmp_path):
    timeline = tmp_path / "base-gone.csv"
    timeline.write_text(HEADER + "0,gpu-base,,,6\n")  # no gpu-base node when c1 is admitted: it waits for Karpenter's
    folder = tmp_path / "out"
    assert run(pack_args(ELASTIC, folder, "--trace", str(ELASTIC_TRACE), "--capacity", str(timeline))) == 0
    assert broken_promises(ELASTIC, timeline) == {"c1"}
    html = (folder / "index.html").read_text()
    assert check_caution(html, {"c1"}, (folder / "summary.md").read_text()) == []
    caution = next(s for s in structure(html).sections if s["id"] == "capacity-caution")
    assert caution["lists"][0]["items"] == ["chatbot (DontLend): c1 (4 accelerators of ml.g5.2xlarge) admitted at "
                                            "minute 0, waited 10 minutes for nodes: started at minute 10"]


def test_the_chatbot_eviction_is_named_in_the_caution_the_table_and_the_list(capacity_packs):
    folder = capacity_packs["base-loss"][3]
    page = structure((folder / "index.html").read_text())
    caution = next(s for s in page.sections if s["id"] == "capacity-caution")
    assert caution["lists"][0]["items"] == [
        "chatbot (DontLend): c1 (4 accelerators of ml.g5.2xlarge) evicted at minute 5, nodes of gpu-base lost; "
        "started again at minute 10, 5 minutes later, from the beginning"]
    sim = _simulation(folder)
    row = _nodes_table(sim)[("chatbot", "-")]
    assert (row["evicted (nodes lost)"], row["rewait min"]) == ("1 [never]", "5 [never]")
    assert any(x.startswith("chatbot: c1 (4 accelerators") for x in _list(sim, "Evictions by lost nodes"))
    assert _list(sim, "Node events")[0] == ("minute 5: 6 node(s) of gpu-base (ml.g5.2xlarge) lost (reclaimed: the "
                                            "autoscaler cannot ask for them until they are added back)")


def test_the_caution_check_finds_a_caution_missing_late_not_red_or_out_of_place(capacity_packs):
    html = (capacity_packs["base-loss"][3] / "index.html").read_text()
    m = re.search(r'<section id="capacity-caution".*?</section>\n', html, re.S)
    assert m is not None
    without = html.replace(m.group(0), "")
    assert check_caution(without, {"c1"}) == ["no caution for ['c1']"]
    late = without.replace("</body>", m.group(0) + "</body>")
    assert check_caution(late, {"c1"}) == ["the caution is not before the first chart"]
    grey = html.replace(".alarm{border:2px solid #b71c1c;background:#ffebee;color:#b71c1c",
                        ".alarm{border:2px solid #b71c1c;background:#ffebee;color:#212121")
    assert check_caution(grey, {"c1"}) == ["the caution is not red"]
    assert check_caution(html, set()) == ["a caution with nothing to say"]
    renamed = html.replace("chatbot (DontLend): c1 (", "chatbot (DontLend): c9 (")
    assert check_caution(renamed, {"c1"}) == ["the caution names ['c9'], the run says ['c1']"]


# --- 3. with a base spec, both runs under the one timeline ---------------------------------------------------------


def test_with_a_base_spec_both_runs_use_the_same_timeline(capacity_packs):
    spec, base, timeline, folder = capacity_packs["change"]
    sim = _simulation(folder)
    table = _nodes_table(sim)
    for tag, path in (("old", base), ("new", spec)):
        _plan, figures, _result = _run(path, timeline)
        for team, f in figures.items():
            j = figures_json(f)
            row = table[(team, tag)]
            assert row["evicted (nodes lost)"].split(" ")[0] == str(j["evictedByCapacityLoss"]), (tag, team)
            assert row["rewait min"].split(" ")[0] == str(j["waitAfterLossMinutes"]), (tag, team)
    # The one event (lose 4 burst nodes at minute 60, 4 back at 150) takes what each spec has there: the new spec's
    # smaller quota runs 2 nodes of ml.g5.12xlarge at minute 60, so 2 go (and the simulator says 2 were not there).
    said = "t=3600: 2 node(s) lost (2 of burst on ml.g5.12xlarge); 2 more were not there"
    assert said in _run(spec, timeline)[2].timeline
    old, new = numbers(folder / "old-trace-timeline.svg"), numbers(folder / "trace-timeline.svg")
    for drawn, lost, back in ((old, 4, 4), (new, 2, 3)):
        assert drawn[("nodes lost", "burst (ml.g5.12xlarge) at minute 60")] == lost
        assert drawn[("nodes added", "burst (ml.g5.12xlarge) at minute 150")] == back  # up to the group's count
        assert drawn[("minute", "end of the trace")] == 600  # one axis
    events = _list(sim, "Node events")
    for tag, lost in (("old", 4), ("new", 2)):
        assert f"{tag} spec: minute 60: {lost} node(s) of burst (ml.g5.12xlarge) lost (reclaimed: the autoscaler " \
               "cannot ask for them until they are added back)" in events
    drawn = numbers(folder / "trace-nodes.svg")
    assert (drawn[("old evicted by lost nodes", "researchers")], drawn[("new evicted by lost nodes", "researchers")]) \
        == (2, 1)


def test_a_timeline_must_fit_both_specs(tmp_path, capsys):
    data = copy.deepcopy(yaml.safe_load(ELASTIC.read_text()))
    data["cluster"]["instanceGroups"] = [g for g in data["cluster"]["instanceGroups"] if g["name"] != "burst"]
    for team in data["teams"]:
        team["quota"] = [q for q in team["quota"] if q["instanceType"] == "ml.g5.2xlarge"]
    base = tmp_path / "no-burst.yaml"
    base.write_text(yaml.safe_dump(data, sort_keys=False))
    code = run(pack_args(ELASTIC, tmp_path / "out", "--base", str(base), "--trace", str(ELASTIC_TRACE),
                         "--capacity", str(SPOT_LOSS)))
    err = capsys.readouterr().err
    assert code == 1 and "2 problems in the capacity timeline" in err and "line 2 instanceGroup" in err, err


# --- 4. the command line ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("extra,said", [
    (["--capacity", str(SPOT_LOSS)], "--capacity: needs --trace"),
    (["--trace", str(ELASTIC_TRACE), "--scale-up-delay", "5"], "--scale-up-delay: needs --capacity"),
    (["--trace", str(ELASTIC_TRACE), "--capacity", str(SPOT_LOSS), "--scale-up-delay", "-1"],
     "--scale-up-delay: needs --capacity and a number of minutes (0 or more)"),
])
def test_review_pack_refuses_capacity_options_out_of_place(tmp_path, capsys, extra, said):
    assert run(pack_args(ELASTIC, tmp_path / "out", *extra)) == 1
    err = capsys.readouterr().err
    assert said in err and not (tmp_path / "out").exists(), err


def test_the_scale_up_delay_reaches_the_page(tmp_path):
    folder = tmp_path / "out"
    assert run(pack_args(ELASTIC, folder, "--trace", str(ELASTIC_TRACE), "--capacity", str(NO_EVENTS),
                         "--scale-up-delay", "25")) == 0
    drawn = numbers(folder / "trace-nodes.svg")
    assert drawn[("p50 to nodes", "researchers")] == 25  # every workload on an autoscaled group waits the delay
    assert "scale-up delay 25 minutes" in _simulation(folder)["title"]


def test_simulate_html_with_capacity_is_the_review_packs_simulation_section(capacity_packs):
    for name in ("spot-loss", "change"):
        spec, base, timeline, folder = capacity_packs[name]
        first, compare = (str(base), ["--compare", str(spec)]) if base else (str(spec), [])
        code, out, err = _simulate(first, "--trace", str(ELASTIC_TRACE), *compare, "--capacity", str(timeline),
                                   "--format", "html")
        assert code == 0, err
        alone = next(s for s in structure(out).sections if s["id"] == "simulation")
        assert alone == _simulation(folder), name
    code, out, err = _simulate(str(ELASTIC), "--trace", str(ELASTIC_TRACE), "--capacity",
                               str(capacity_packs["base-loss"][2]), "--format", "html")
    assert code == 0 and check_caution(out, {"c1"}) == [], err


# --- 5. in the real browser -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("chromium is not on the PATH (apt-get install chromium); test_browser.py says how CI gets it")
    b = Browser(tmp_path_factory.mktemp("chromium-capacity") / "profile")
    yield b
    b.close()


def _box(browser: Browser, selector: str) -> dict:
    return json.loads(browser.evaluate(
        f"JSON.stringify((() => {{ const e = document.querySelector({json.dumps(selector)});"
        " if (!e) return null; const r = e.getBoundingClientRect();"
        " return {x: r.x + scrollX, y: r.y + scrollY, w: r.width, h: r.height}; })())"))


def _pixels(png: bytes) -> tuple[int, float, int]:
    """(distinct colours, share not white, pixels of the page's red #b71c1c family) of a PNG."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    white = sum(n for n, c in colours if c == (255, 255, 255))
    red = sum(n for n, (r, g, b) in colours if r > 150 and g < 80 and b < 80)
    return len(colours), 1 - white / (image.width * image.height), red


def test_the_capacity_charts_paint_in_the_browser_with_the_evictions_in_red(browser, capacity_packs):
    folder = capacity_packs["spot-loss"][3]
    url = (folder / "index.html").resolve().as_uri()
    browser.events.clear()
    browser.load(url)
    requests = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert requests == [url]
    for chart in ("trace-nodes", "trace-timeline"):
        box = _box(browser, f'figure.chart svg[data-chart="{chart}"]')
        assert box is not None and box["w"] > 200 and box["h"] > 60, (chart, box)
        colours, ink, red = _pixels(browser.screenshot(box["x"], box["y"], box["w"], box["h"]))
        assert colours >= 8 and ink > 0.02, f"{chart} looks blank: {colours} colours, {ink:.1%} ink"
        assert red > 20, f"{chart}: the evictions and the lost nodes are not drawn in red ({red} red pixels)"


def test_the_caution_is_visible_and_red_before_the_first_chart_in_the_browser(browser, capacity_packs):
    browser.load((capacity_packs["base-loss"][3] / "index.html").resolve().as_uri())
    caution, chart = _box(browser, "#capacity-caution"), _box(browser, "figure.chart")
    assert caution is not None and caution["h"] > 40 and caution["y"] + caution["h"] <= chart["y"]
    style = json.loads(browser.evaluate(
        "JSON.stringify((() => { const s = getComputedStyle(document.querySelector('#capacity-caution'));"
        " return [s.color, s.display]; })())"))
    assert style == ["rgb(183, 28, 28)", "block"]
    _colours, _ink, red = _pixels(browser.screenshot(caution["x"], caution["y"], caution["w"], caution["h"]))
    assert red > 500
