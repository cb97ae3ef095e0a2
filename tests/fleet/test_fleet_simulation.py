"""The fleet simulation (issue 60): a trace dispatched over worker clusters as MultiKueue's AllAtOnce dispatcher
does, each worker the single-cluster Kueue simulation of its plan. Workers are modified copies of
examples/startup.yaml (15 x ml.g5.2xlarge, one GPU a node)."""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import hashlib
import io
import json
from pathlib import Path
from typing import Optional

import pytest
import yaml

from hyperpod_gov.plan import build_plan
from hyperpod_gov.simulate import parse_scenario, simulate
from hyperpod_gov.simulate.report import result_json, result_text
from hyperpod_gov.simulate.cli import configure_parser, run
from hyperpod_gov.simulate.fleet import manager_queues, simulate_fleet
from hyperpod_gov.simulate.fleet_report import fleet_json, fleet_lines
from hyperpod_gov.simulate.spec_level import run_plan
from hyperpod_gov.simulate.trace import parse_trace
from hyperpod_gov.spec.loader import parse_spec

from ..simulate.test_properties import random_scenario

ROOT = Path(__file__).resolve().parents[2]
STARTUP = yaml.safe_load((ROOT / "examples" / "startup.yaml").read_text())
HEADER = "name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes\n"
GPU = "ml.g5.2xlarge"


def member(name: str, quotas: dict[str, int], sharing: Optional[dict] = None, extra_nodes: int = 0):
    """startup.yaml as one cluster of the fleet: only the teams named, with these quotas (instances); ``sharing``
    replaces every team's sharing when given; the instance group holds the quotas' sum (plus ``extra_nodes``)."""
    data = copy.deepcopy(STARTUP)
    data["name"] = f"startup-{name}"
    teams = []
    for t in data["teams"]:
        if t["name"] in quotas:
            t["quota"] = [{"instanceType": GPU, "count": quotas[t["name"]]}]
            if sharing is not None:
                t["sharing"] = sharing
            teams.append(t)
    data["teams"] = teams
    data["cluster"]["instanceGroups"][0]["count"] = sum(quotas.values()) + extra_nodes
    return build_plan(parse_spec(data, today=dt.date(2026, 11, 30)))


def trace(*rows: str):
    return parse_trace(HEADER + "".join(r + "\n" for r in rows))


DONT_LEND = {"strategy": "DontLend"}


def placements(result) -> dict[str, tuple]:
    return {w.name: tuple((c, start / 60, secs / 60) for c, start, secs in w.placements) for w in result.workloads}


# ----------------------------------------------------------------- a 2-worker case, computed by hand

@pytest.fixture(scope="module")
def startup_fleet():
    """use1: startup.yaml as it is (15 nodes: ml-engineering 6, researchers 5, chatbot 4); usw2: 8 nodes,
    ml-engineering 4 and researchers 4, no chatbot. Both lend and borrow up to half (chatbot: DontLend)."""
    return {"use1": member("use1", {"ml-engineering": 6, "researchers": 5, "chatbot": 4}),
            "usw2": member("usw2", {"ml-engineering": 4, "researchers": 4})}


STARTUP_TRACE = (ROOT / "examples" / "startup-trace.csv").read_text()


def test_the_manager_quota_is_the_sum_of_the_workers_nominal_quotas(startup_fleet):
    q = manager_queues(startup_fleet, ["chatbot", "ml-engineering", "researchers"])
    gpus = {t: q[t].flavors[0].quota("nvidia.com/gpu") for t in q}
    assert {t: (g.nominal, g.borrowing_limit) for t, g in gpus.items()} == {
        "chatbot": (4, None), "ml-engineering": (10, None), "researchers": (9, None)}
    assert {t: (q[t].name, q[t].cohort) for t in q} == {
        "chatbot": ("chatbot-fleet", None), "ml-engineering": ("ml-engineering-fleet", None),
        "researchers": ("researchers-fleet", None)}


def test_the_manager_queues_are_the_ones_the_fleet_plan_emits(startup_fleet):
    from hyperpod_gov.plan.multikueue import multikueue_plans

    members = {"mgr": member("mgr", {"chatbot": 1}), **startup_fleet}
    emitted = multikueue_plans(members, "mgr", ("use1", "usw2"))["mgr"].queues
    assert manager_queues(startup_fleet, fleet_queues=emitted) == manager_queues(startup_fleet)
    assert all(q.preemption.within_cluster_queue == "Never" for q in manager_queues(startup_fleet).values())
    rows = parse_trace(STARTUP_TRACE)
    assert repr(simulate_fleet(startup_fleet, rows, fleet_queues=emitted)) == repr(simulate_fleet(startup_fleet, rows))


def test_startup_trace_over_two_workers_by_hand(startup_fleet):
    """Minute 0: c1 (chatbot, 4) and t1 (ml-engineering, 6) fit use1 outright; use1 is first, so it wins both.
    Minute 5: t2 (3) fits use1 by borrowing 3 of the researchers' idle quota, and usw2 within ml-engineering's 4:
    both in their first cycle, use1 is first in the workers' order. Minute 10: r1 (researchers, 5) must reclaim on
    use1 (13 of 15 nodes used), so use1's first cycle evicts t2; usw2 admits r1 outright in its first cycle
    (researchers' 4 plus 1 borrowed of ml-engineering's idle 4) and wins. t2's eviction on use1 makes the manager
    retry it: dispatched again at minute 10, it fits use1 again (r1's copy there is deleted) and runs its 60
    minutes there. Minute 15: r2 (researchers, 2 GPUs) fits use1 within the researchers' own 5."""
    result = simulate_fleet(startup_fleet, parse_trace(STARTUP_TRACE))
    assert placements(result) == {
        "c1": (("use1", 0, 600),),
        "t1": (("use1", 0, 120),),
        "t2": (("use1", 5, 5), ("use1", 10, 60)),
        "r1": (("usw2", 10, 90),),
        "r2": (("use1", 15, 30),),
    }
    t2 = next(w for w in result.workloads if w.name == "t2")
    assert (t2.dispatches, t2.evicted_on_workers, t2.preempted_by_manager) == (2, 1, 0)
    doc = fleet_json(result)
    assert {c: v["admissions"] for c, v in doc["clusters"].items()} == {"use1": 5, "usw2": 1}
    assert doc["clusters"]["usw2"]["teams"] == {"researchers": {"admissions": 1, "acceleratorHours": 7.5}}
    assert doc["teams"]["ml-engineering"]["admissionsPerCluster"] == {"use1": 3, "usw2": 0}
    assert doc["inFlight"]["ml-engineering"][GPU]["nvidia.com/gpu"] == {"bound": 10, "peak": 9}
    assert doc["fleet"] == {"dispatcher": "AllAtOnce", "workers": ["use1", "usw2"]}
    assert fleet_lines(result)[0] == "fleet of 2 worker(s) (use1, usw2; dispatcher AllAtOnce), ends at minute 600:"


# ----------------------------------------------------------------- the worker that admits first wins

def test_the_worker_that_can_admit_wins_over_an_earlier_one_that_cannot():
    workers = {"a": member("a", {"ml-engineering": 2, "researchers": 2}, DONT_LEND),
               "b": member("b", {"ml-engineering": 4, "researchers": 2}, DONT_LEND)}
    result = simulate_fleet(workers, trace(f"big,ml-engineering,,{GPU},3,,0,60"))
    assert placements(result) == {"big": (("b", 0, 60),)}


def test_workers_that_admit_in_the_same_cycle_go_to_the_first_in_the_multikueue_config_order():
    a = member("a", {"ml-engineering": 2, "researchers": 2}, DONT_LEND)
    b = member("b", {"ml-engineering": 4, "researchers": 2}, DONT_LEND)
    rows = trace(f"small,ml-engineering,,{GPU},2,,0,60")
    assert placements(simulate_fleet({"a": a, "b": b}, rows)) == {"small": (("a", 0, 60),)}
    assert placements(simulate_fleet({"b": b, "a": a}, rows)) == {"small": (("b", 0, 60),)}


def test_a_worker_that_admits_outright_wins_over_an_earlier_one_that_must_preempt_first():
    """On a, ml-engineering's inference work must preempt its own training to fit (one cycle to evict, the next to
    admit); b admits it in its first cycle. The training on a is evicted all the same (AllAtOnce copies to every
    worker): the manager retries it and a worker takes it again."""
    sharing = {"strategy": "DontLend"}
    a = member("a", {"ml-engineering": 2, "researchers": 2}, sharing)
    b = member("b", {"ml-engineering": 2, "researchers": 2}, sharing)
    rows = trace(f"train,ml-engineering,training,{GPU},2,,0,60",
                 f"serve,ml-engineering,inference,{GPU},2,,10,30")
    result = simulate_fleet({"a": a, "b": b}, rows)
    got = placements(result)
    assert got["serve"] == (("b", 10, 30),)
    assert got["train"][0] == ("a", 0, 10)
    assert got["train"][1][0] == "a" and got["train"][1][1] == 10


# ----------------------------------------------------------------- the manager's quota bounds what is in flight

def test_the_manager_quota_bounds_in_flight_work_where_the_workers_would_lend_more():
    """ml-engineering has 2 GPUs on each worker (bound 4) and may borrow up to 100% of the idle researchers'. One
    cluster alone would admit 3 of the 6 jobs on a single worker; the fleet holds 4 in flight, never more."""
    lend = {"strategy": "LendAndBorrow", "borrowLimitPercent": 100}
    workers = {"a": member("a", {"ml-engineering": 2, "researchers": 4}, lend),
               "b": member("b", {"ml-engineering": 2, "researchers": 4}, lend)}
    rows = trace(*(f"j{i},ml-engineering,,{GPU},1,,0,60" for i in range(6)))
    result = simulate_fleet(workers, rows)
    starts = {w.name: w.placed_at / 60 for w in result.workloads}
    assert sorted(starts.values()) == [0, 0, 0, 0, 60, 60]
    assert _most_running_at_once(result) == 4
    gpu = next(b for b in result.bounds if b.team == "ml-engineering" and b.resource == "nvidia.com/gpu")
    assert (gpu.bound, gpu.peak) == (4, 4)
    assert fleet_json(result)["teams"]["ml-engineering"]["inFlightBoundHits"] == 2
    # A single worker on its own borrows beyond its nominal 2: the bound is the manager's, not the workers'.
    figures, single, _ = run_plan(workers["a"], rows)
    assert sum(1 for w in single.workloads if w.first_admitted_at == 0) == 4


def _most_running_at_once(result) -> int:
    edges = sorted([(s, 1) for w in result.workloads for _c, s, _d in w.placements]
                   + [(s + d, -1) for w in result.workloads for _c, s, d in w.placements])
    most = now = 0
    for _t, step in edges:
        now += step
        most = max(most, now)
    return most


def test_a_workload_no_worker_can_hold_keeps_the_manager_quota_in_flight():
    """3 GPUs fit the fleet's bound (2 + 2) but no single worker: it stays in flight, holding the manager's quota,
    and the team's next job waits on the manager (a bound hit)."""
    workers = {"a": member("a", {"ml-engineering": 2, "researchers": 2}, DONT_LEND),
               "b": member("b", {"ml-engineering": 2, "researchers": 2}, DONT_LEND)}
    result = simulate_fleet(workers, trace(f"wide,ml-engineering,,{GPU},3,,0,60",
                                           f"next,ml-engineering,,{GPU},2,,1,60"))
    states = {w.name: w.state for w in result.workloads}
    assert states == {"wide": "in-flight", "next": "waiting"}
    team = fleet_json(result)["teams"]["ml-engineering"]
    assert (team["inFlightNotAdmitted"], team["waitingOnManager"], team["inFlightBoundHits"]) == (1, 1, 1)


# ----------------------------------------------------------------- a team absent from a worker

def test_a_team_absent_from_a_worker_is_never_placed_there(startup_fleet):
    """chatbot is not on usw2: even with use1 full for it and usw2 idle, its work waits for use1."""
    rows = trace(*(f"c{i},chatbot,inference,{GPU},,2,{i},30" for i in range(5)))
    result = simulate_fleet(startup_fleet, rows)
    clusters = {c for w in result.workloads for c, _s, _d in w.placements}
    assert clusters == {"use1"}
    assert sorted(w.placed_at / 60 for w in result.workloads) == [0, 1, 30, 31, 60]
    assert fleet_json(result)["clusters"]["usw2"] == {"admissions": 0, "acceleratorHours": 0.0, "teams": {}}


def test_rows_no_worker_can_take_are_left_out_with_a_note(startup_fleet):
    rows = trace(f"x,chatbot,,{GPU},1,,0,10", "y,chatbot,,ml.p5.48xlarge,1,,0,10")
    result = simulate_fleet(startup_fleet, rows, teams=["chatbot"])
    assert [w.name for w in result.workloads] == ["x"]
    assert result.notes == ("1 trace row(s) left out: no worker has team chatbot with instance type ml.p5.48xlarge",)
    result = simulate_fleet(startup_fleet, trace(f"z,researchers,,{GPU},1,,0,10"), teams=["chatbot"])
    assert result.notes == ("1 trace row(s) left out: team researchers is not dispatched by the fleet",)


# ----------------------------------------------------------------- determinism

def test_the_same_fleet_and_trace_give_the_same_result_every_time(startup_fleet):
    import random

    rng = random.Random(5)
    teams = ["ml-engineering", "researchers", "chatbot"]
    rows = trace(*(f"w{i},{rng.choice(teams)},{rng.choice(['', 'training', 'inference'])},{GPU},"
                   f"{rng.randint(1, 4)},,{rng.randint(0, 300)},{rng.randint(10, 120)}" for i in range(200)))
    first = simulate_fleet(startup_fleet, rows)
    again = simulate_fleet(dict(startup_fleet), tuple(rows))
    assert repr(first) == repr(again)
    assert fleet_json(first) == fleet_json(again)
    admitted = sum(v["admissions"] for v in fleet_json(first)["clusters"].values())
    assert admitted >= 200 and all(w.state == "finished" for w in first.workloads)


# ----------------------------------------------------------------- single-cluster outputs unchanged

def _cli(*argv: str) -> str:
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    out, err = io.StringIO(), io.StringIO()
    code = run(parser.parse_args(list(argv)), out=out, err=err)
    return f"{code}\n{out.getvalue()}{err.getvalue()}".replace(str(ROOT) + "/", "")


# Recorded on main at 3a14dc5 (before the fleet simulation existed); the same on main at 8b8e51c and 5a68818.
SINGLE_CLUSTER_DIGEST = "a56d70c78414f2bfd4ccb42c0cc4fd3f67f657b0417edabecc84ea467383835d"


def test_single_cluster_outputs_are_byte_identical_to_before_the_fleet():
    h = hashlib.sha256()
    trace_path = str(ROOT / "examples" / "startup-trace.csv")
    for spec in ("examples/startup.yaml", "examples/elastic.yaml"):
        for fmt in ("json", "text"):
            h.update(_cli(str(ROOT / spec), "--trace", trace_path, "--format", fmt).encode())
        h.update(_cli(str(ROOT / spec), "--trace", trace_path, "--compare", str(ROOT / "examples/startup.yaml"))
                 .encode())
    for seed in range(0, 60, 3):  # queue level: tests/simulate's random scenarios
        r = simulate(parse_scenario(random_scenario(seed)))
        h.update(json.dumps(result_json(r), sort_keys=True).encode())
        h.update(result_text(r).encode())
        h.update(repr(r).encode())
    h.update(_cli(str(ROOT / "examples/startup.yaml")).encode())  # a usage error stays the same too
    assert h.hexdigest() == SINGLE_CLUSTER_DIGEST


def test_one_worker_whose_teams_neither_lend_nor_borrow_admits_as_the_cluster_alone_does():
    """Same engine, same queues: with one worker and no borrowing, the manager's bound is the worker's own quota, so
    every workload starts when the single-cluster simulation admits it."""
    import random

    plan = member("solo", {"ml-engineering": 6, "researchers": 5, "chatbot": 4}, DONT_LEND)
    rng = random.Random(9)
    rows = trace(*(f"w{i},{rng.choice(['ml-engineering', 'researchers', 'chatbot'])},training,{GPU},"
                   f"{rng.randint(1, 4)},,{rng.randint(0, 600)},{rng.randint(10, 120)}" for i in range(150)))
    _figures, single, _notes = run_plan(plan, rows)
    fleet = simulate_fleet({"solo": plan}, rows)
    assert not single.preemptions
    assert {w.name: w.first_admitted_at for w in single.workloads} == {w.name: w.placed_at for w in fleet.workloads}
    assert any(w.placed_at > w.submitted_at for w in fleet.workloads)  # queues formed: the case is not trivial
