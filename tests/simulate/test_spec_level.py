"""Spec level: the plan's ClusterQueues as kueue mode emits them, run over a trace."""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
from pathlib import Path

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.simulate.cli import configure_parser, diff_effect, run
from hyperpod_gov.simulate.spec_level import plan_queues, run_plan
from hyperpod_gov.simulate.trace import parse_trace
from hyperpod_gov.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
STARTUP = ROOT / "examples" / "startup.yaml"
TRACE = (
    "name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes\n"
    "t1,ml-engineering,training,ml.g5.2xlarge,,6,0,120\n"
    "t2,ml-engineering,training,ml.g5.2xlarge,,3,5,60\n"
    "r1,researchers,,ml.g5.2xlarge,,5,10,90\n"
    "c1,chatbot,inference,ml.g5.2xlarge,,4,0,600\n"
    "r2,researchers,training,ml.g5.2xlarge,2,,15,30\n"
)


@pytest.fixture(scope="module")
def plan():
    return build_plan(load_spec(STARTUP, today=dt.date(2026, 11, 30)))


def test_queues_are_parsed_from_the_emitted_cluster_queue_specs(plan):
    queues = plan_queues(plan)
    ml = queues["ml-engineering"]
    gpu = ml.flavors[0].quota("nvidia.com/gpu")
    assert (ml.cohort, gpu.nominal, gpu.borrowing_limit, gpu.lending_limit) == ("startup-cohort", 6, 3, None)
    assert ml.flavors[0].quota("memory").nominal == 192 * 2**30
    assert ml.preemption.reclaim_within_cohort == "Any"
    chatbot = queues["chatbot"].flavors[0].quota("nvidia.com/gpu")
    assert (chatbot.lending_limit, chatbot.borrowing_limit) == (0, 0)  # DontLend


def test_startup_trace_hand_checked_figures(plan):
    rows = parse_trace(TRACE, "t.csv")
    figures, result, notes = run_plan(plan, rows)
    assert notes == []
    ml, res, chat = figures["ml-engineering"], figures["researchers"], figures["chatbot"]
    # t2 borrows 3 GPUs at minute 5; r1 (researchers, within nominal) reclaims them at minute 10.
    assert [(p.victim, p.preemptor, p.reason) for p in result.preemptions] == [("t2", "r1", "InCohortReclamation")]
    assert (ml.preempted, res.preempted_others) == (1, 1)
    # t1 6 GPUs x 2 h + t2 3 GPUs x (5 min + 60 min after readmission at minute 100) = 15.25
    assert ml.accelerator_hours == 15.25
    # borrowed: 3 GPUs from minute 5 to 10, and from 100 to 120 (t1 still running): 0.25 + 1.0
    assert ml.borrowed_accelerator_hours == 1.25
    # r2 (2 GPUs) waits from minute 15 for r1 to finish at minute 100: researchers' p95 is 85 minutes.
    assert (res.wait_p50_min, res.wait_p95_min) == (0, 85)
    assert (chat.admitted, chat.accelerator_hours, chat.borrowed_accelerator_hours) == (1, 40.0, 0.0)


def _cli(argv):
    p = argparse.ArgumentParser()
    configure_parser(p)
    out, err = io.StringIO(), io.StringIO()
    code = run(p.parse_args(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_spec_level_json(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text(TRACE)
    code, out, err = _cli([str(STARTUP), "--trace", str(trace), "--format", "json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["teams"]["researchers"]["waitP95Minutes"] == 85
    assert doc["teams"]["ml-engineering"]["borrowedAcceleratorHours"] == 1.25


def test_compare_and_diff_effect_say_what_changes(tmp_path, plan):
    trace = tmp_path / "t.csv"
    trace.write_text(TRACE)
    tighter = tmp_path / "tighter.yaml"
    tighter.write_text(STARTUP.read_text().replace("strategy: LendAndBorrow, borrowLimitPercent: 50", "strategy: Lend"))
    code, out, err = _cli([str(STARTUP), "--trace", str(trace), "--compare", str(tighter)])
    assert code == 0, err
    assert "ml-engineering: p95 wait goes from 0 to 115 minutes" in out and "times preempted goes from 1 to 0" in out
    new_plan = build_plan(load_spec(tighter, today=dt.date(2026, 11, 30)))
    lines = diff_effect(plan, new_plan, str(trace))
    ml = next(line for line in lines if line.startswith("team ml-engineering"))
    assert "borrowed accelerator-hours from 1.25 to 0.0" in ml and "preempted 1 -> 0" in ml


def test_bad_trace_rows_exit_1_with_every_line(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text(TRACE + "x1,nobody,,ml.g5.2xlarge,,1,0,10\nx2,chatbot,,ml.g5.2xlarge,,,0,10\n")
    code, out, err = _cli([str(STARTUP), "--trace", str(trace)])
    assert code == 1 and out == ""
    assert "2 problems in the trace" in err and "line 7 team" in err and "line 8 accelerators/instances" in err


def test_scenario_cli_json_follows_the_contract(tmp_path):
    s = tmp_path / "s.yaml"
    s.write_text(
        "queues:\n"
        "  - {name: alpha, cohort: all, preemption: {reclaimWithinCohort: Any},\n"
        "     flavors: [{name: on-demand, resources: {cpu: {nominal: 50}}}]}\n"
        "  - {name: beta, cohort: all, flavors: [{name: on-demand, resources: {cpu: {nominal: 50}}}]}\n"
        "workloads:\n"
        "  - {name: b1, queue: beta, requests: {cpu: 90}, admitted: {flavor: on-demand, at: 0}}\n"
        "  - {name: a1, queue: alpha, requests: {cpu: 45}, created: 10}\n"
        "events:\n"
        "  - {at: 100, finish: a1}\n"
    )
    code, out, err = _cli(["--scenario", str(s), "--format", "json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["preemptions"] == [{"at": 0, "cycle": 1, "victim": "b1", "preemptor": "a1",
                                   "reason": "InCohortReclamation"}]
    assert doc["workloads"]["a1"] == {"queue": "alpha", "state": "finished", "flavor": "on-demand",
                                      "admittedAt": 0, "borrowing": False, "preemptedCount": 0}
    assert doc["workloads"]["b1"]["state"] == "admitted" and doc["workloads"]["b1"]["preemptedCount"] == 1
    # beta borrows 40 of the 100 cpu the cohort can lend: share 400 (Kueue's weightedShare)
    assert doc["queues"]["beta"] == {"usage": {"on-demand": {"cpu": 90}}, "weightedShare": 400}
    code, text, _ = _cli(["--scenario", str(s), "--cycles", "1"])
    assert code == 0 and "a1 preempts b1 (InCohortReclamation)" in text


def test_task_governance_spec_runs_the_same_kueue_semantics(tmp_path):
    """examples/enterprise.yaml (task-governance mode): a DontLend team's job above its quota waits forever,
    and the output says why."""
    trace = tmp_path / "t.csv"
    trace.write_text(
        "name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes\n"
        "fm1,foundation-models,training,ml.p5.48xlarge,24,,0,240\n"
        "inf1,inference-platform,inference,ml.p5.48xlarge,20,,30,600\n"
    )
    code, out, err = _cli([str(ROOT / "examples" / "enterprise.yaml"), "--trace", str(trace)])
    assert code == 0, err
    assert "Still waiting at the end (1):" in out
    assert "fm1 (foundation-models): " in out and "request 576 > maximum capacity 480" in out


def test_partitions_and_a_paused_team(tmp_path):
    """A partitioned type takes GPU requests as partitions; a paused team's queue (stopPolicy Hold) admits nothing
    while its quota stays lendable."""
    from hyperpod_gov.spec import parse_spec
    from tests.conftest import TODAY
    from tests.plan.test_allocations import allocation_spec

    plan = build_plan(parse_spec(allocation_spec(), today=TODAY))
    rows = parse_trace(
        "name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes\n"
        "a1,team-a,,ml.p5.48xlarge,2,,0,60\n"
        "b1,team-b,,ml.g5.8xlarge,,1,0,60\n", "t.csv")
    figures, result, notes = run_plan(plan, rows)
    by = {w.name: w for w in result.workloads}
    assert dict(by["a1"].requests)["nvidia.com/mig-1g.10gb"] == 14  # 2 GPUs x 7 slices
    assert by["a1"].first_admitted_at == 0 and figures["team-a"].accelerator_hours == 2.0
    assert by["b1"].state == "pending" and "inactive" in by["b1"].pending_reason
