"""A fleet's contracts, review page and usage report: each team's allocation (and usage) per cluster and in total."""

from __future__ import annotations

import io
import json
import os

import pytest
import yaml

from hyperpod_gov.contracts.fleet import FLEET_RECORDS, render_fleet_records, write_fleet_records
from hyperpod_gov.plan.fleet import build_fleet
from hyperpod_gov.review_pack.fleet import fleet_section
from hyperpod_gov.spec.fleet import load_fleet
from tests.conftest import EXAMPLES

FLEET = EXAMPLES / "fleet.yaml"


def _fleet(data, tmp_path):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return build_fleet(load_fleet(path))


@pytest.fixture(scope="module")
def example():
    return build_fleet(load_fleet(FLEET))


def _rows(page: str, heading: str) -> list[list[str]]:
    section = page.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| Cluster |") and not line.startswith("| Instance type |")]


def test_a_teams_fleet_record_states_its_allocation_per_cluster_and_in_total(example):
    page = render_fleet_records(example)["research.md"]
    assert _rows(page, "Allocation per cluster") == [
        ["use1-train", "111111111111 / us-east-1", "ml.p5.48xlarge", "16 accelerators (nvidia.com/gpu)"],
        ["usw2-train", "111111111111 / us-west-2", "ml.p5.48xlarge", "8 accelerators (nvidia.com/gpu)"],
        ["use1-mgr", "111111111111 / us-east-1", "-", "nothing owned (the dispatch manager)"],
    ]
    assert _rows(page, "In total") == [["ml.p5.48xlarge", "24 accelerators (nvidia.com/gpu)"]]
    assert "Accelerators in all: 24 nvidia.com/gpu." in page
    assert "on 3 cluster(s): `use1-train`, `usw2-train`, `use1-mgr`" in page


def test_the_total_follows_each_clusters_quota(fleet_data, tmp_path):
    team = next(t for t in fleet_data["teams"] if t["name"] == "research")
    del team["quota"]["usw2-train"]
    page = render_fleet_records(_fleet(fleet_data, tmp_path))["research.md"]
    assert _rows(page, "In total") == [["ml.p5.48xlarge", "16 accelerators (nvidia.com/gpu)"]]
    assert "Accelerators in all: 16 nvidia.com/gpu." in page
    assert "on 2 cluster(s): `use1-train`, `use1-mgr`" in page
    assert "the first of `use1-train` that can admit" in page


def test_a_dispatched_team_is_told_its_fleet_queue_on_the_manager(example):
    records = render_fleet_records(example)
    assert ("submit to LocalQueue `hyperpod-ns-research-fleet` in namespace `hyperpod-ns-research` on the manager "
            "`use1-mgr` (ClusterQueue `research-fleet`") in records["research.md"]
    assert "the first of `use1-train`, `usw2-train` that can admit" in records["applied.md"]
    assert "Not dispatched: the team has quota on none of the workers" in records["hpc.md"]


def test_without_dispatch_no_team_is_dispatched(fleet_data, tmp_path):
    del fleet_data["fleet"]
    records = render_fleet_records(_fleet(fleet_data, tmp_path))
    assert all("Not dispatched: the fleet has no dispatch" in page for page in records.values())
    assert "-fleet`" not in "".join(records.values())


def test_fleet_records_are_written_and_stale_ones_removed(example, tmp_path):
    stale = tmp_path / FLEET_RECORDS / "gone.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    written = write_fleet_records(example, tmp_path)
    assert [p.name for p in written] == ["applied.md", "hpc.md", "research.md"]
    assert not stale.exists()


def test_synth_of_a_fleet_writes_the_fleet_records_beside_each_clusters(tmp_path):
    from hyperpod_gov.cli import main

    out = tmp_path / "out"
    assert main(["synth", str(FLEET), "--out", str(out)]) == 0
    contracts = out / "contracts"
    assert sorted(p.name for p in contracts.iterdir()) == [FLEET_RECORDS, "use1-hpc", "use1-mgr", "use1-train",
                                                          "usw2-train"]
    assert (contracts / FLEET_RECORDS / "research.md").read_text() == render_fleet_records(
        build_fleet(load_fleet(FLEET)))["research.md"]
    # every cluster's own record the fleet record links to exists
    assert (contracts / "use1-mgr" / "research.md").is_file()


# --- review-pack FLEET ---------------------------------------------------------------------------------------------


def _pack(tmp_path, *argv):
    from hyperpod_gov.cli import main

    out = tmp_path / "pack"
    code = main(["review-pack", *map(str, argv), "--out", str(out), "--today", "2026-12-01"])
    return code, out


def test_the_fleet_section_tables_each_teams_allocation_per_cluster_and_in_total(example):
    section = fleet_section(example)
    header, rows = section.tables[0]
    assert header == ["team", "cluster", "instance type", "owns"]
    research = [[v for v, _c in r] for r in rows if r[0][0] == "research"]
    assert research == [["research", "use1-train", "ml.p5.48xlarge", "16 accelerators (nvidia.com/gpu)"],
                        ["research", "usw2-train", "ml.p5.48xlarge", "8 accelerators (nvidia.com/gpu)"],
                        ["research", "total", "ml.p5.48xlarge", "24 accelerators (nvidia.com/gpu)"]]


def test_each_teams_chart_stacks_its_clusters_and_its_caption_names_them(example):
    charts = {f.chart.slug: f.chart for f in fleet_section(example).figures}
    assert sorted(charts) == ["fleet-applied", "fleet-hpc", "fleet-research"]
    research = charts["fleet-research"]
    assert [(d.series, d.key, d.value) for d in research.data] == [
        ("use1-train", "ml.p5.48xlarge", 16), ("usw2-train", "ml.p5.48xlarge", 8)]
    assert "use1-train, usw2-train, use1-mgr" in research.caption
    assert "16 on use1-train + 8 on usw2-train = 24 accelerators" in research.caption
    assert 'data-series="usw2-train"' in research.svg and 'data-value="8"' in research.svg


def test_with_a_base_fleet_the_page_shows_before_and_after(fleet_data, tmp_path, example):
    team = next(t for t in fleet_data["teams"] if t["name"] == "research")
    del team["quota"]["usw2-train"]
    section = fleet_section(_fleet(fleet_data, tmp_path), base=example)
    header, rows = section.tables[0]
    assert header[-2:] == ["before", "after"]
    cells = {(r[0][0], r[1][0]): [v for v, _c in r[3:]] for r in rows}
    assert cells[("research", "usw2-train")] == ["8 accelerators (nvidia.com/gpu)", "-"]
    assert cells[("research", "total")] == ["24 accelerators (nvidia.com/gpu)", "16 accelerators (nvidia.com/gpu)"]
    chart = next(f.chart for f in section.figures if f.chart.slug == "fleet-research")
    assert [(d.series, d.key, d.value) for d in chart.data] == [
        ("use1-train", "old: ml.p5.48xlarge", 16), ("usw2-train", "old: ml.p5.48xlarge", 8),
        ("use1-train", "new: ml.p5.48xlarge", 16)]


def test_review_pack_of_a_fleet_writes_the_fleet_and_every_members_charts(tmp_path):
    code, out = _pack(tmp_path, FLEET)
    assert code == 0
    assert sorted(p.stem for p in out.glob("*.svg")) == [
        "fleet-applied", "fleet-hpc", "fleet-research", "use1-hpc-capacity-ml.g5.2xlarge",
        "use1-hpc-capacity-ml.m5.xlarge", "use1-mgr-capacity-ml.m5.2xlarge", "use1-train-capacity-ml.p5.48xlarge",
        "usw2-train-capacity-ml.p5.48xlarge"]
    page = (out / "index.html").read_text()
    for cluster in ("use1-train", "usw2-train", "use1-mgr", "use1-hpc"):
        assert f'<section id="cluster-{cluster}">' in page
    assert page.count('id="fig-') == 8


def test_review_pack_of_a_fleet_refuses_what_it_cannot_show(tmp_path, capsys, fleet_data):
    code, _out = _pack(tmp_path, FLEET, "--trace", EXAMPLES / "fleet-trace.csv", "--capacity",
                       EXAMPLES / "fleet-trace.csv")
    assert code == 1
    assert "--capacity: is not available for a fleet spec: the fleet simulation does not model node groups" in \
        capsys.readouterr().err
    code, _out = _pack(tmp_path, FLEET, "--base", EXAMPLES / "startup.yaml")
    assert code == 1
    assert "is not a fleet spec" in capsys.readouterr().err
    del fleet_data["fleet"]
    spec = tmp_path / "no-dispatch.yaml"
    spec.write_text(yaml.safe_dump(fleet_data, sort_keys=False))
    code, _out = _pack(tmp_path, spec, "--trace", EXAMPLES / "fleet-trace.csv")
    assert code == 1
    assert "--trace: the fleet has no dispatch (fleet.dispatch)" in capsys.readouterr().err


def test_the_fleet_page_opens_in_a_real_browser_and_every_chart_paints(tmp_path, fleet_data):
    """The change gives applied 8 GPUs on use1-train instead of 16: the trace's a1 and a4 (16 GPUs) fit no worker,
    and the red alarm naming them is the first thing on the screen."""
    from PIL import Image

    from tests.review_pack.cdp import CHROMIUM, Browser
    from tests.review_pack.test_browser import alarm_problems

    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not on the PATH in CI")
        pytest.skip("chromium is not on the PATH (apt-get install chromium)")
    next(t for t in fleet_data["teams"] if t["name"] == "applied")["quota"]["use1-train"][0]["accelerators"] = 8
    change = tmp_path / "fleet-change.yaml"
    change.write_text(yaml.safe_dump(fleet_data, sort_keys=False))
    code, out = _pack(tmp_path, change, "--base", FLEET, "--trace", EXAMPLES / "fleet-trace.csv")
    assert code == 0
    assert {"trace-admissions", "trace-wait", "old-trace-timeline", "trace-timeline"} <= {
        p.stem for p in out.glob("*.svg")}
    url = (out / "index.html").resolve().as_uri()
    browser = Browser(tmp_path / "profile")
    try:
        browser.events.clear()
        browser.load(url)
        events = browser.events
        requests = [e["params"]["request"]["url"] for e in events if e.get("method") == "Network.requestWillBeSent"]
        assert requests == [url]
        assert not [e for e in events if e.get("method") in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown")]
        boxes = json.loads(browser.evaluate(
            "JSON.stringify([...document.querySelectorAll('figure.chart svg')].map(e => {"
            "const r = e.getBoundingClientRect(); return {chart: e.dataset.chart, x: r.x + scrollX, y: r.y + scrollY,"
            " w: r.width, h: r.height}}))"))
        assert sorted(b["chart"] for b in boxes) == sorted(p.stem for p in out.glob("*.svg"))
        for box in boxes:
            assert box["w"] > 200 and box["h"] > 60, box
            image = Image.open(io.BytesIO(browser.screenshot(box["x"], box["y"], box["w"], box["h"]))).convert("RGB")
            colours = image.getcolors(maxcolors=1 << 20) or []
            white = sum(n for n, c in colours if c == (255, 255, 255)) / (image.width * image.height)
            assert len(colours) >= 8 and 1 - white > 0.02, f"{box['chart']} looks blank"
        first = next(b for b in boxes if b["chart"] == "fleet-research")
        (tmp_path / "fleet-research.png").write_bytes(
            browser.screenshot(first["x"], first["y"], first["w"], first["h"]))
        assert alarm_problems(browser, out / "index.html", named="applied: a1") == []
        assert "applied: a4" in browser.evaluate("document.querySelector('#alarm').innerText")
    finally:
        browser.close()


# --- report FLEET: every member's CloudWatch, summed per team ------------------------------------------------------


def _member_calls(plan, usage):
    """The member's two GetMetricData calls' results: ``usage[team]`` GPUs in use every hour, nothing pending, one
    preemption of each team in the window's first hour."""
    from hyperpod_gov.plan.monitoring import monitoring_plan
    from hyperpod_gov.report.metrics import queries
    from tests.report.recorded import HOURS, result

    plain, searches = [], []
    for q in queries(monitoring_plan(plan)):
        if q.what == "evictions":
            searches.append(result(q.id, "Preempted", lambda h: 1 if h == HOURS[0] else None))
        elif q.what in ("usage-avg", "usage-max"):
            plain.append(result(q.id, q.id, lambda h, v=usage.get(q.team, 0): v))
        elif q.what == "pending":
            plain.append(result(q.id, q.id, lambda h: 0))
        else:
            plain.append(result(q.id, q.id, lambda h: 50))
    return [[plain], [searches]]


def test_report_of_a_fleet_reads_each_member_in_its_region_and_sums_per_team(example, capsys):
    import argparse

    from hyperpod_gov.report.cli import configure_parser, run_fleet
    from tests.conftest import TODAY
    from tests.report import recorded
    from tests.report.recorded import NOW

    usage = {"use1-train": {"research": 16, "applied": 4}, "usw2-train": {"research": 8}, "use1-mgr": {}}
    clients, stubbers, asked = {}, [], []
    for cluster, plan in example.plans.items():
        if plan.slurm is not None:
            continue
        client, stubber = recorded.client()
        for queries_of_call, pages in zip(recorded.expected_calls(plan), _member_calls(plan, usage[cluster])):
            recorded.stub_pages(stubber, queries_of_call, [pages[0]])
        stubber.activate()
        clients[cluster] = client
        stubbers.append(stubber)

    def client_for(cluster, plan):
        asked.append((cluster, plan.region))
        return clients[cluster]

    args = configure_parser(argparse.ArgumentParser()).parse_args([str(FLEET), "--format", "json"])
    code = run_fleet(args, client_for=client_for, now=NOW, today=TODAY)
    for s in stubbers:
        s.assert_no_pending_responses()
        s.deactivate()
    out = capsys.readouterr()
    assert code == 0, out.err
    assert asked == [("use1-train", "us-east-1"), ("usw2-train", "us-west-2"), ("use1-mgr", "us-east-1")]
    doc = json.loads(out.out)
    assert doc["skipped"] == {"use1-hpc": "a Slurm cluster publishes no Kueue metrics (sacct/sshare report its usage)"}
    research = doc["teams"]["research"]["flavors"]["ml.p5.48xlarge"]
    assert research["nominal"] == 24  # 16 + 8
    assert research["usedHoursPerCluster"] == {"use1-train": 16 * 720, "usw2-train": 8 * 720}
    assert research["usedHours"] == 24 * 720
    assert doc["teams"]["applied"]["flavors"]["ml.p5.48xlarge"]["usedHours"] == 4 * 720
    assert doc["teams"]["research"]["evictions"] == {"Preempted": 3}  # one on each of the three Kueue clusters
    assert sorted(doc["clusters"]) == ["use1-mgr", "use1-train", "usw2-train"]


def test_report_of_a_fleet_refuses_html_with_the_reason(capsys):
    from hyperpod_gov.cli import main

    assert main(["report", str(FLEET), "--format", "html"]) == 1
    assert "--format html: is not available for a fleet spec yet" in capsys.readouterr().err
