"""`hyperpod-gov review-pack`: the page's structure, the numbers its charts carry, determinism, self-containment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.review_pack.cli import run
from hyperpod_gov.review_pack.simulation import simulate_plans
from hyperpod_gov.simulate.spec_level import run_plan, trace_checks
from hyperpod_gov.simulate.trace import load_trace
from hyperpod_gov.spec import load_spec
from tests.conftest import EXAMPLES, ROOT, TODAY
from tests.review_pack.conftest import TRACE, pack_args
from tests.review_pack.pagedoc import desc, numbers, structure


def _plan(path: Path):
    return build_plan(load_spec(path, today=TODAY))


def _figures(spec: Path):
    plan = _plan(spec)
    figures, _result, _notes = run_plan(plan, load_trace(TRACE, **trace_checks(plan)))
    return figures


# --- structure ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("example", ["enterprise", "startup", "startup-change"])
def test_page_structure_matches_snapshot(packs, example, snapshot):
    page = structure((packs[example] / "index.html").read_text())
    assert page.sections == snapshot


def test_every_chart_of_the_page_is_a_file_beside_it_and_in_the_summary(packs):
    for name in ("enterprise", "startup", "startup-change"):
        folder = packs[name]
        page = structure((folder / "index.html").read_text())
        slugs = [c["chart"] for s in page.sections for c in s["charts"]]
        assert sorted(p.stem for p in folder.glob("*.svg")) == sorted(slugs)
        summary = (folder / "summary.md").read_text()
        assert [m for m in re.findall(r"\]\(([^)]+)\.svg\)", summary)] == slugs
        for s in page.sections:
            for c in s["charts"]:
                assert c["caption"] and f"*{c['caption']}*" in summary
                assert c["desc"][0] == c["caption"]  # the accessible text starts with what to look at


def test_enterprise_page_shows_both_instance_types_and_the_closed_dont_lend_teams(packs):
    page = structure((packs["enterprise"] / "index.html").read_text())
    charts = {c["chart"]: c for s in page.sections for c in s["charts"]}
    assert sorted(charts) == ["borrow-ml.p5.48xlarge", "capacity-ml.m5.2xlarge", "capacity-ml.p5.48xlarge"]
    assert "lend nothing (foundation-models, inference-platform)" in charts["borrow-ml.p5.48xlarge"]["caption"]
    assert "16 unowned" in charts["capacity-ml.m5.2xlarge"]["caption"]
    assert [s["id"] for s in page.sections] == ["capacity", "borrowing", "contracts"]


def test_a_change_shows_old_beside_new_the_diff_and_the_reviews_it_triggers(packs):
    page = structure((packs["startup-change"] / "index.html").read_text())
    ids = [s["id"] for s in page.sections]
    assert ids == ["alarm", "capacity", "borrowing", "changes", "simulation", "usage", "contracts"]
    capacity = [c["chart"] for c in page.sections[1]["charts"]]
    assert capacity == ["old-capacity-ml.g5.2xlarge", "capacity-ml.g5.2xlarge"]
    changes = {lst["heading"]: lst["items"] for lst in page.sections[3]["lists"]}
    assert "team ml-engineering owns: 6 GPUs (ml.g5.2xlarge) -> 8 GPUs (ml.g5.2xlarge)" in changes[
        "Governance changes"]
    reviews = changes["Contract reviews the change triggers, and retirement"]
    assert any(r.startswith("team researchers: review (cluster capacity)") for r in reviews)
    html = (packs["startup-change"] / "index.html").read_text()
    assert '<div class="pair">' in html  # old and new side by side


def test_an_overdue_review_is_red(tmp_path):
    assert run(pack_args(EXAMPLES / "startup.yaml", tmp_path, "--today", "2027-07-02")) == 0
    page = structure((tmp_path / "index.html").read_text())
    table = page.sections[-1]["tables"][0]
    review = [row[2] for row in table["rows"]]
    assert review == ["2027-06-30 (overdue, 2 days overdue) [overdue]"] * 3
    assert "td.overdue{color:#b71c1c" in (tmp_path / "index.html").read_text()
    assert "**2027-06-30 (overdue, 2 days overdue)**" in (tmp_path / "summary.md").read_text()


def test_contract_status_names_owners_workloads_and_alarm_owners(packs):
    table = structure((packs["startup"] / "index.html").read_text()).sections[-1]["tables"][0]
    chatbot = next(r for r in table["rows"] if r[0] == "chatbot")
    assert "operations oncall@example.com" in chatbot[1]
    assert chatbot[3] == "inference"
    plan = _plan(EXAMPLES / "startup.yaml")
    watch = next(w for w in plan.monitoring.teams if w.team == "chatbot")
    for alarm in watch.alarms:
        assert f"{alarm.kind} -> {alarm.owner or 'platform'}" in chatbot[5]


# --- the numbers are the plan's and the simulator's ----------------------------------------------------------------


@pytest.mark.parametrize("example,spec", [("enterprise", "enterprise.yaml"), ("startup", "startup.yaml")])
def test_capacity_numbers_equal_the_plans_quotas_and_limits(packs, example, spec):
    plan = _plan(EXAMPLES / spec)
    for flavor in plan.flavors:
        drawn = numbers(packs[example] / f"capacity-{flavor.instance_type}.svg")
        for team in plan.teams:
            f = next(q for q in team.flavors if q.instance_type == flavor.instance_type)
            nominal = f.governed(f.nominal)
            borrow = f.governed(f.borrowing_limit)
            if not nominal and not borrow:
                assert ("nominal", team.name) not in drawn
                continue
            assert drawn[("nominal", team.name)] == nominal
            assert drawn[("borrow limit", team.name)] == borrow
            lendable = nominal if f.lending_limit is None else f.governed(f.lending_limit)
            assert drawn[("lendable", team.name)] == lendable


def test_capacity_bars_add_up_to_the_hand_checked_capacity(packs):
    enterprise = numbers(packs["enterprise"] / "capacity-ml.p5.48xlarge.svg")
    quota = {k: v for (series, k), v in enterprise.items() if series == "quota"}
    assert quota == {"applied-research": 5, "foundation-models": 20, "inference-platform": 20,
                     "recommendations": 10, "speech": 25}
    assert enterprise[("nobody owns", "ml.p5.48xlarge")] == 0  # 10 x 8 GPUs, all owned
    assert numbers(packs["enterprise"] / "capacity-ml.m5.2xlarge.svg") == {
        ("nobody owns", "ml.m5.2xlarge"): 16,  # 2 x 8 vCPU, no team
        ("capacity", "guaranteed"): 16}  # a fixed On-Demand group: all of it stays (issue 57)
    startup = numbers(packs["startup"] / "capacity-ml.g5.2xlarge.svg")
    assert {k: v for (s, k), v in startup.items() if s == "lendable"} == {
        "chatbot": 0, "ml-engineering": 6, "researchers": 5}  # DontLend lends nothing, the others all
    assert {k: v for (s, k), v in startup.items() if s == "borrow limit"} == {
        "chatbot": 0, "ml-engineering": 3, "researchers": 2}  # 50% of 6 and of 5, rounded down


def test_borrow_matrix_numbers_are_the_limits_and_dont_lend_is_closed(packs):
    drawn = numbers(packs["startup"] / "borrow-ml.g5.2xlarge.svg")
    assert drawn[("may borrow from researchers", "ml-engineering")] == 3  # its limit 50% of 6, researchers lend 5
    assert drawn[("may borrow from ml-engineering", "researchers")] == 2  # 50% of 5
    assert drawn[("may borrow from chatbot", "ml-engineering")] == 0
    assert drawn[("may borrow from chatbot", "researchers")] == 0
    assert drawn[("may borrow from ml-engineering", "chatbot")] == 0  # DontLend cannot borrow either
    text = (packs["startup"] / "borrow-ml.g5.2xlarge.svg").read_text()
    assert text.count(">closed<") == 2  # the chatbot column, for both borrowers


def test_trace_numbers_equal_the_simulators_figures(packs):
    new_plan, old_plan = _plan(packs["change-spec"]), _plan(EXAMPLES / "startup.yaml")
    new, old = _figures(packs["change-spec"]), _figures(EXAMPLES / "startup.yaml")
    rows = load_trace(TRACE, **trace_checks(new_plan))
    new_sim, old_sim = simulate_plans(new_plan, rows, old_plan)
    folder = packs["startup-change"]
    wait, borrowed = numbers(folder / "trace-wait.svg"), numbers(folder / "trace-borrowed.svg")
    for team in new:
        for tag, figures, sim in (("old", old, old_sim), ("new", new, new_sim)):
            w = sim.waits[team]
            for p, value in (("p50", w.wait_p50_min), ("p95", w.wait_p95_min)):
                assert wait.get((f"{tag} {p}", team)) == value
            assert wait.get((f"{tag} p95 never admitted", team), 0) == w.never_admitted
            assert borrowed[(tag, team)] == figures[team].borrowed_accelerator_hours
    for prefix, figures in (("old-", old), ("", new)):
        timeline = numbers(folder / f"{prefix}trace-timeline.svg")
        assert {k: v for (s, k), v in timeline.items() if s == "accelerator-hours"} == {
            t: f.accelerator_hours for t, f in figures.items()}
        assert timeline[("minute", "end of the trace")] == 600  # both on one axis
    # Hand-checked: on the example researchers' r2 waits 85 minutes; after the change their 5-GPU job r1 never
    # fits (3 owned + 1 borrowable): p95 over admitted work is r2's 0 minutes, and r1 is counted and listed as never
    # admitted, having waited from minute 10 to the end of the trace at minute 600.
    assert wait[("old p95", "researchers")] == 85 and wait[("new p95", "researchers")] == 0
    assert wait[("new p95 never admitted", "researchers")] == 1
    assert ("old p95 never admitted", "researchers") not in wait
    (r1,) = new_sim.waits["researchers"].never
    assert (r1.name, r1.waited_minutes, r1.reason) == ("r1", 590, "over quota")
    assert "ml-engineering, peak accelerators: 9 accelerators" in desc(folder / "old-trace-timeline.svg")


def test_report_numbers_equal_the_report_json(packs, report_json):
    report = json.loads(report_json.read_text())
    drawn = numbers(packs["startup"] / "report-usage.svg")
    for team in report["teams"]:
        for f in team["flavors"]:
            key = f"{team['team']} on {f['instanceType']}"
            assert drawn[("quota", key)] == f["nominal"]
            for series, field in (("average use", "average"), ("peak use", "peak")):
                if f[field] is None:
                    assert (series, key) not in drawn
                else:
                    assert drawn[(series, key)] == pytest.approx(f[field], abs=0.005)
    usage = structure((packs["startup"] / "index.html").read_text()).sections[-2]
    patch = next(lst for lst in usage["lists"] if lst["heading"] == "Proposed spec patch")["items"]
    assert len(patch) == len(report["patch"]) and patch


# --- deterministic and self-contained ------------------------------------------------------------------------------


def test_same_inputs_give_the_same_bytes_in_a_fresh_process(packs, tmp_path, report_json):
    args = [str(packs["change-spec"]), "--base", str(EXAMPLES / "startup.yaml"), "--trace", str(TRACE),
            "--report", str(report_json), "--out", str(tmp_path), "--today", TODAY.isoformat()]
    env = {**os.environ, "PYTHONHASHSEED": "12345", "SOURCE_DATE_EPOCH": "0"}
    done = subprocess.run([sys.executable, "-m", "hyperpod_gov.cli", "review-pack", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    first = sorted(p.name for p in packs["startup-change"].iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == first
    for name in first:
        assert (tmp_path / name).read_bytes() == (packs["startup-change"] / name).read_bytes(), name


@pytest.mark.parametrize("example", ["enterprise", "startup-change"])
def test_the_page_loads_nothing_from_anywhere(packs, example):
    text = (packs[example] / "index.html").read_text()
    page = structure(text)
    assert page.scripts == 0
    assert all(link.startswith("#") for link in page.links), page.links
    assert "@import" not in text and "@font-face" not in text
    # The only absolute URLs are the SVG and XLink namespace names, which a browser never fetches.
    assert set(re.findall(r"https?://[^\s\"')<>]+", text)) <= {"http://www.w3.org/2000/svg",
                                                                "http://www.w3.org/1999/xlink"}
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids)), "two charts share an element id"


def test_page_sizes_stay_small(packs):
    for name, limit in (("enterprise", 120_000), ("startup-change", 220_000)):
        assert (packs[name] / "index.html").stat().st_size < limit, name
    for svg in packs["startup-change"].glob("*.svg"):
        assert svg.stat().st_size < 40_000, svg.name


# --- bad input -----------------------------------------------------------------------------------------------------


def test_a_report_of_the_wrong_shape_is_every_problem_with_path_and_fix(tmp_path, capsys):
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps({"teams": [{"team": "a", "flavors": [{"instanceType": 3, "unit": "GPUs",
                                                                    "nominal": "x", "average": "high"}]}]}))
    assert run(pack_args(EXAMPLES / "startup.yaml", tmp_path / "out", "--report", str(bad))) == 1
    err = capsys.readouterr().err
    assert f"{bad}: 4 problems in the usage report:" in err  # peak is missing too
    assert "teams[0].flavors[0].instanceType: is missing or of the wrong type (3)" in err
    assert "teams[0].flavors[0].nominal: is missing or of the wrong type ('x')" in err
    assert "teams[0].flavors[0].average: is not a number ('high')" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_a_report_that_is_not_json_names_the_line(tmp_path, capsys):
    bad = tmp_path / "report.json"
    bad.write_text("{\n  teams: []\n}")
    assert run(pack_args(EXAMPLES / "startup.yaml", tmp_path / "out", "--report", str(bad))) == 1
    assert "line 2 column 3: is not valid JSON" in capsys.readouterr().err


def test_a_bad_base_spec_is_named(tmp_path, capsys):
    bad = tmp_path / "old.yaml"
    bad.write_text((EXAMPLES / "startup.yaml").read_text().replace("count: 15", "count: 1"))
    assert run(pack_args(EXAMPLES / "startup.yaml", tmp_path / "out", "--base", str(bad))) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and "Traceback" not in err


def test_an_unwritable_out_is_a_spec_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert run(pack_args(EXAMPLES / "startup.yaml", blocker / "out")) == 1
    assert "--out: cannot be written" in capsys.readouterr().err


def test_the_main_command_registers_review_pack(tmp_path, capsys):
    from hyperpod_gov.cli import main

    assert main(["review-pack", str(EXAMPLES / "startup.yaml"), "--out", str(tmp_path), "--today", "2026-11-30"]) == 0
    assert (tmp_path / "index.html").is_file() and (tmp_path / "summary.md").is_file()
    assert "index.html" in capsys.readouterr().out


def test_a_bad_trace_row_is_reported_as_a_trace_problem(tmp_path, capsys):
    bad = tmp_path / "trace.csv"
    bad.write_text(TRACE.read_text().replace("t1,ml-engineering", "t1,nobody"))
    assert run(pack_args(EXAMPLES / "startup.yaml", tmp_path / "out", "--trace", str(bad))) == 1
    err = capsys.readouterr().err
    assert f"{bad}: 1 problem in the trace:" in err and "nobody" in err and "Traceback" not in err
