"""Issue 60: the fleet's review page tells the truth about a fleet change the way it does for one cluster: the run of
`simulate FLEET` on the page (admissions per worker, waits over admitted work beside the work never admitted, one
end of the trace for old and new), the red alarm for work the new fleet can never admit anywhere, and
`simulate FLEET --compare` saying "at least" where a wait is cut at the end of the trace."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.review_pack.fleet_simulation import (NO_WORKER, OVER_FLEET, fleet_never_fits,
                                                        fleet_simulation_section, simulate_fleets)
from hyperpod_gov.simulate.fleet_cli import load_fleet_plan
from hyperpod_gov.simulate.trace import load_trace
from tests.conftest import EXAMPLES

FLEET = EXAMPLES / "fleet.yaml"
HEADER = "name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes\n"
# research's work as in examples/fleet-trace.csv, and applied's only workload: two p5.48xlarge, 16 GPUs, 400 minutes
TRACE = HEADER + ("r1,research,training,ml.p5.48xlarge,,2,0,120\nr2,research,training,ml.p5.48xlarge,,1,5,60\n"
                  "r3,research,,ml.p5.48xlarge,,1,10,90\na1,applied,training,ml.p5.48xlarge,,2,0,400\n")


def _team(data, name):
    return next(t for t in data["teams"] if t["name"] == name)


@pytest.fixture
def change(fleet_data, tmp_path):
    """applied keeps 8 GPUs on use1-train instead of 16 (8 on usw2-train, borrowing up to 50%): 12 GPUs at most on
    either worker, 16 on the manager, so its 16-GPU a1 is dispatched and no worker can ever admit it."""
    _team(fleet_data, "applied")["quota"]["use1-train"][0]["accelerators"] = 8
    spec = tmp_path / "fleet-change.yaml"
    spec.write_text(yaml.safe_dump(fleet_data, sort_keys=False))
    trace = tmp_path / "trace.csv"
    trace.write_text(TRACE)
    return spec, trace


def _pack(tmp_path, *argv):
    out = tmp_path / "pack"
    code = main(["review-pack", *map(str, argv), "--out", str(out), "--today", "2026-12-01"])
    return code, out


def _body(page: str) -> str:
    return page.split("</header>", 1)[1]


def test_a_change_leaving_a_teams_only_workload_unable_to_fit_is_named_in_red_at_the_top(change, tmp_path):
    spec, trace = change
    code, out = _pack(tmp_path, spec, "--base", FLEET, "--trace", trace)
    assert code == 0
    body = _body((out / "index.html").read_text())
    first = body.split("<section", 2)[1]
    assert first.startswith(' id="alarm" class="alarm" role="alert"')
    assert "This change leaves 1 workload of the trace trace.csv unable ever to fit anywhere in the fleet" in first
    assert ("<li>applied: a1 (16 accelerators of ml.p5.48xlarge): cannot fit any worker: on use1-train: over quota: "
            "asks 16 nvidia.com/gpu on ml.p5.48xlarge; its quota is 8 and it may borrow 4 more, 12 at most; on "
            "usw2-train: over quota:") in first
    assert first.rstrip().endswith("; it fitted the old fleet</li></ul>\n</section>")
    assert body.index('class="alarm"') < body.index("<figure")
    summary = (out / "summary.md").read_text().split("\n### ", 1)[0]
    assert "> [!CAUTION]" in summary and "> - applied: a1 (16 accelerators of ml.p5.48xlarge): cannot fit" in summary


def test_no_alarm_when_every_workload_fits_somewhere(change, tmp_path):
    _spec, trace = change
    code, out = _pack(tmp_path, FLEET, "--base", FLEET, "--trace", trace)
    assert code == 0
    assert 'class="alarm"' not in (out / "index.html").read_text()
    assert "[!CAUTION]" not in (out / "summary.md").read_text()


def test_the_simulation_never_admits_what_the_page_says_can_never_fit(change):
    """The alarm's arithmetic and the run agree: every workload named unable to fit is never admitted, and is listed
    with that reason; what the run leaves waiting for quota is not in red."""
    spec, trace = change
    fleet, base = load_fleet_plan(str(spec)), load_fleet_plan(str(FLEET))
    rows = load_trace(str(trace))
    new, old = simulate_fleets(fleet, rows, base)
    stuck = {u.name for u in fleet_never_fits(fleet, rows)}
    assert stuck == {"a1"} and not fleet_never_fits(base, rows)
    placed = {w.name for w in new.result.workloads if w.placed_at is not None}
    assert not stuck & placed
    (a1,) = new.waits["applied"].never
    assert (a1.name, a1.reason, a1.waited_minutes) == ("a1", NO_WORKER, new.end_minute)
    assert old is not None and old.waits["applied"].never == ()
    # one end of the trace for both runs: a1's 400 minutes in the old fleet, though the new run ends sooner
    assert old.end_minute == new.end_minute == 400 > new.result.end / 60.0


def test_a_workload_over_the_teams_fleet_quota_is_named_with_the_manager(fleet_data, tmp_path):
    """applied owns 2 GPUs on use1-train only, borrowing up to 300%: that worker could lend it 8, but its fleet queue
    on the manager holds 2, so no 8-GPU job is ever dispatched."""
    applied = _team(fleet_data, "applied")
    applied["quota"] = {"use1-train": [{"instanceType": "ml.p5.48xlarge", "accelerators": 2}]}
    applied["sharing"]["borrowLimitPercent"] = 300
    spec = tmp_path / "fleet.yaml"
    spec.write_text(yaml.safe_dump(fleet_data, sort_keys=False))
    trace = tmp_path / "t.csv"
    trace.write_text(HEADER + "a2,applied,,ml.p5.48xlarge,,1,0,60\n")
    (u,) = fleet_never_fits(load_fleet_plan(str(spec)), load_trace(str(trace)))
    assert (u.name, u.reason) == ("a2", OVER_FLEET)
    assert "fleet queue applied-fleet on the manager holds 2" in u.detail


def test_a_wait_cut_at_the_end_of_the_trace_prints_at_least(change):
    spec, trace = change
    rows = load_trace(str(trace))
    new, old = simulate_fleets(load_fleet_plan(str(spec)), rows, load_fleet_plan(str(FLEET)))
    header, body = fleet_simulation_section(new, old, "trace.csv", len(rows)).tables[0]
    cells = {(r[0][0], r[1][0]): dict(zip(header, (v for v, _c in r))) for r in body}
    end = f">={new.end_minute:g}"
    assert cells[("applied", "new")]["wait p95 min (to admission or end)"] == end
    assert cells[("applied", "new")]["wait p95 min (admitted)"] == "-"
    assert cells[("applied", "new")]["never admitted"] == "1"
    assert not cells[("applied", "old")]["wait p95 min (to admission or end)"].startswith(">=")
    assert cells[("research", "new")]["admissions on use1-train"].isdigit()


def test_the_page_shows_the_same_run_as_simulate_fleet(change, tmp_path, capsys):
    spec, trace = change
    assert main(["simulate", str(spec), "--trace", str(trace), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = load_trace(str(trace))
    new, old = simulate_fleets(load_fleet_plan(str(spec)), rows, load_fleet_plan(str(FLEET)))
    chart = next(f.chart for f in fleet_simulation_section(new, old, "trace.csv", len(rows)).figures
                 if f.chart.slug == "trace-admissions")
    assert {d.key: d.value for d in chart.data if d.series == "new"} == {
        c: v["admissions"] for c, v in doc["clusters"].items()}
    assert "trace trace.csv (4 workloads, minutes 0 to" in chart.caption and "old fleet beside new" in chart.caption


def test_old_and_new_usage_share_one_time_axis(change, tmp_path):
    spec, trace = change
    code, out = _pack(tmp_path, spec, "--base", FLEET, "--trace", trace)
    assert code == 0
    ends = [re.search(r'data-series="minute" data-key="end of the trace" data-value="([0-9.]+)"',
                      (out / f"{slug}.svg").read_text()).group(1) for slug in ("old-trace-timeline", "trace-timeline")]
    assert ends[0] == ends[1]
    page = (out / "index.html").read_text()
    assert "old and new share this time axis" in page and "under the dashed line of the workers&#x27; 48" in page
    # the simulation comes after the fleet's allocation and before the first member
    assert page.index('id="fleet"') < page.index('id="fleet-simulation"') < page.index('id="cluster-use1-train"')


def test_simulate_fleet_compare_says_at_least_for_cut_waits(change, capsys):
    spec, trace = change
    assert main(["simulate", str(FLEET), "--trace", str(trace), "--compare", str(spec)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"{FLEET} -> {spec} with {trace} (4 workloads):"
    applied = next(line for line in lines if line.strip().startswith("applied:"))
    assert re.search(r"p95 wait goes from \d+ to at least \d+ minutes", applied), applied
    assert "admitted goes from 1 to 0" in applied
    assert "1 never admitted by the end of the trace in the second spec" in applied
    assert lines[1].startswith("  admissions per worker: use1-train ")
    table = [line.split() for line in lines if line.strip().startswith("applied ")]
    assert not any(c.startswith(">=") for c in table[0]) and any(c.startswith(">=") for c in table[1])


def test_simulate_fleet_compare_json_and_html(change, capsys):
    spec, trace = change
    assert main(["simulate", str(FLEET), "--trace", str(trace), "--compare", str(spec), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["before"]["endMinute"] == doc["after"]["endMinute"]
    assert doc["after"]["teams"]["applied"]["admitted"] == 0
    assert any("at least" in line for line in doc["changes"])
    assert main(["simulate", str(FLEET), "--trace", str(trace), "--compare", str(spec), "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>")
    assert _body(page).split("<section", 2)[1].startswith(' id="alarm" class="alarm"')
    assert page.count("<figure") == 4  # admissions, waits, old and new usage


def test_simulate_compare_refuses_a_single_cluster_spec_against_a_fleet(capsys):
    assert main(["simulate", str(FLEET), "--trace", str(EXAMPLES / "fleet-trace.csv"), "--compare",
                 str(EXAMPLES / "startup.yaml")]) == 1
    assert "is not a fleet spec" in capsys.readouterr().err


def test_review_pack_of_a_fleet_charts_each_members_usage_report(tmp_path, capsys):
    member = {"start": "2026-11-01", "end": "2026-12-01", "patch": [], "advice": [],
              "teams": [{"team": "research", "flavors": [{"instanceType": "ml.p5.48xlarge", "unit": "accelerators",
                                                           "nominal": 16, "average": 10.5, "peak": 16}]}]}
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"clusters": {"use1-train": member}}))
    code, out = _pack(tmp_path, FLEET, "--report", report)
    assert code == 0, capsys.readouterr().err
    page = (out / "index.html").read_text()
    assert page.index('id="cluster-use1-train"') < page.index('id="cluster-use1-train-usage"') < page.index(
        'id="cluster-use1-train-contracts"')
    chart = (out / "use1-train-report-usage.svg").read_text()
    assert 'data-series="average use" data-key="research on ml.p5.48xlarge" data-value="10.5"' in chart
    report.write_text(json.dumps({"clusters": {"elsewhere": member}}))
    code, _out = _pack(tmp_path, FLEET, "--report", report)
    assert code == 1 and "clusters.elsewhere: is not a cluster of this fleet" in capsys.readouterr().err


def test_the_compare_shown_in_docs_simulator_md_is_what_simulate_prints(fleet_data, tmp_path, capsys):
    doc = (EXAMPLES.parent / "docs" / "simulator.md").read_text()
    block = doc.split("**Comparing two fleets, and the page.**", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    _team(fleet_data, "applied")["quota"]["use1-train"][0]["accelerators"] = 8
    change = tmp_path / "fleet-change.yaml"
    change.write_text(yaml.safe_dump(fleet_data, sort_keys=False))
    assert main(["simulate", str(FLEET), "--trace", str(EXAMPLES / "fleet-trace.csv"), "--compare", str(change)]) == 0
    out = capsys.readouterr().out
    for path, shown in ((change, "fleet-change.yaml"), (EXAMPLES, "examples")):
        out = out.replace(str(path), shown)
    assert out.startswith(block)


def test_the_simulation_section_of_the_summary(change, tmp_path, snapshot):
    """The fleet page's simulation part as Markdown (captions, the list of work never admitted, the team table)."""
    spec, trace = change
    code, out = _pack(tmp_path, spec, "--base", FLEET, "--trace", trace)
    assert code == 0
    summary = (out / "summary.md").read_text()
    part = "### Simulated" + summary.split("### Simulated", 1)[1].split("\n### Cluster", 1)[0]
    assert part == snapshot
