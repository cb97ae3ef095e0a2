"""The capacity timeline (issue 57): node groups under Kueue's quota, scale-ups after a delay, nodes lost under
admitted work. Without node groups every run is the Kueue run it was before."""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import io
import json
from pathlib import Path

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.simulate import parse_scenario, simulate
from hyperpod_gov.simulate.cli import configure_parser, run
from hyperpod_gov.simulate.report import result_json, result_text
from hyperpod_gov.simulate.spec_level import run_plan, trace_checks
from hyperpod_gov.simulate.spec_nodes import node_groups, plan_groups
from hyperpod_gov.simulate.timeline import CapacityTimeline, parse_timeline
from hyperpod_gov.simulate.trace import load_trace
from hyperpod_gov.spec import load_spec
from hyperpod_gov.spec.errors import SpecError

from .test_properties import CheckedEngine, random_scenario

ROOT = Path(__file__).resolve().parents[2]
ELASTIC = ROOT / "examples" / "elastic.yaml"
TRACE = ROOT / "examples" / "elastic-trace.csv"
HEADER = "minute,instanceGroup,instanceType,add,lose\n"

# Digests of every output below, recorded on main at ccf2fea (before node groups existed).
QUEUE_DIGEST = "dc3cef6557a8800ea067ad32f204b02f7096c1e97c999f89620e8581ae92dc75"
SPEC_DIGEST = "2425e5cfd2efeca65ba3aa5753e35388d9fc67b7452ae0f58f715fc4b2a90d96"


def _cli(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    out, err = io.StringIO(), io.StringIO()
    code = run(parser.parse_args(list(argv)), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _queues(nominal: int = 16, cohort: bool = False) -> list[dict]:
    extra = {"cohort": "all"} if cohort else {}
    return [{"name": q, "flavors": [{"name": "spot", "resources": {"cpu": {"nominal": nominal}}}], **extra}
            for q in ("alpha", "beta")]


def _run(data: dict) -> dict:
    return result_json(simulate(parse_scenario(data)))


# ----------------------------------------------------------------- nothing changes without a timeline

def test_without_node_groups_every_output_is_byte_identical_to_before():
    h = hashlib.sha256()
    for seed in range(100):
        for cycles in (None, 1):
            r = simulate(parse_scenario(random_scenario(seed)), cycles=cycles)
            h.update(json.dumps(result_json(r), sort_keys=True).encode())
            h.update(result_text(r).encode())
            h.update(repr(r).encode())
    assert h.hexdigest() == QUEUE_DIGEST
    h = hashlib.sha256()
    for spec in ("examples/startup.yaml", "examples/elastic.yaml"):
        for fmt in ("json", "text"):
            h.update(_cli(str(ROOT / spec), "--trace", str(ROOT / "examples/startup-trace.csv"), "--format", fmt)[1]
                     .replace(str(ROOT) + "/", "").encode())
        h.update(_cli(str(ROOT / spec), "--trace", str(ROOT / "examples/startup-trace.csv"), "--compare",
                      str(ROOT / "examples/startup.yaml"))[1].replace(str(ROOT) + "/", "").encode())
    assert h.hexdigest() == SPEC_DIGEST


@pytest.mark.parametrize("seed", range(0, 100, 7))
def test_nodes_that_always_have_room_change_no_kueue_outcome(seed):
    data = random_scenario(seed)
    plain = _run(data)
    flavors = sorted({f["name"] for q in data["queues"] for f in q["flavors"]})
    roomy = dict(data, nodeGroups=[{"name": f"n-{f}", "flavor": f, "perNode": {"cpu": 1000, "gpu": 1000}, "count": 1}
                                   for f in flavors])
    with_nodes = _run(roomy)
    for w in with_nodes["workloads"].values():
        for key in ("startedAt", "firstStartedAt", "waitingForNodes", "capacityEvictions"):
            del w[key]
    assert with_nodes["capacityEvictions"] == [] and with_nodes["scaleUps"] == []
    for key in ("capacityEvictions", "scaleUps", "nodeGroups"):
        del with_nodes[key]
    assert with_nodes == plain


class NodesCheckedEngine(CheckedEngine):
    """Kueue's invariants after every cycle (CheckedEngine), and the nodes' after every placement."""

    def _place(self):
        super()._place()
        n = self.nodes
        for f, running in n.running.items():
            recount: dict[str, int] = {}
            for w in running.values():
                assert w.state == "admitted" and w.flavor == f and w.name not in n.waiting
                for r, v in w.requests:
                    recount[r] = recount.get(r, 0) + v
            assert {r: v for r, v in recount.items() if v} == {r: v for r, v in n.used[f].items() if v}
            assert all(n.used[f].get(r, 0) <= cap for r, cap in n.capacity[f].items()), f"{f} over its nodes"
        for w in self.wls.values():
            on_nodes = w.name in n.waiting or any(w.name in r for r in n.running.values())
            assert on_nodes == (w.state == "admitted"), w.name  # every flavor of these scenarios is bounded
        for g in n.groups:
            assert 0 <= g.total and g.total + g.reclaimed <= g.d.count and g.asked >= 0


def _with_random_nodes(seed: int) -> dict:
    import random

    rng = random.Random(1000 + seed)
    data = random_scenario(seed)
    flavors = sorted({f["name"] for q in data["queues"] for f in q["flavors"]})
    groups = [{"name": f"g{i}", "flavor": f, "perNode": {"cpu": rng.randint(2, 6), "gpu": rng.randint(1, 3)},
               "count": rng.randint(1, 4), "autoscale": rng.random() < 0.5}
              for i, f in enumerate(flavors * rng.randint(1, 2))]
    events = [{"at": rng.randint(0, 300), "nodeGroup": g["name"], rng.choice(["add", "lose"]): rng.randint(1, g["count"])}
              for g in rng.sample(groups, len(groups)) for _ in range(rng.randint(0, 3))]
    return dict(data, nodeGroups=groups, capacity=events, scaleUpDelay=rng.choice([0, 30, 120]))


@pytest.mark.parametrize("seed", range(60))
def test_random_timelines_keep_every_limit_and_are_deterministic(seed):
    data = _with_random_nodes(seed)
    first = NodesCheckedEngine(parse_scenario(data)).run()
    again = simulate(parse_scenario(data))
    assert json.dumps(result_json(first)) == json.dumps(result_json(again))


def test_random_timelines_exercise_scale_ups_evictions_and_waiting():
    """The generator is not vacuous: across the seeds, the autoscaler adds nodes, losses evict, work waits."""
    ups = evictions = waiting = 0
    for seed in range(60):
        r = simulate(parse_scenario(_with_random_nodes(seed)))
        ups += len(r.nodes.scale_ups)
        evictions += len(r.nodes.evictions)
        waiting += sum(1 for w in r.nodes.workloads if w.waiting_for_nodes)
    assert ups and evictions and waiting


# ----------------------------------------------------------------- scale-up after a delay

def _scale_up_scenario(delay: float) -> dict:
    return {"queues": _queues(), "scaleUpDelay": delay,
            "nodeGroups": [{"name": "elastic", "flavor": "spot", "perNode": {"cpu": 4}, "count": 4,
                            "autoscale": True}],
            "workloads": [{"name": "a1", "queue": "alpha", "requests": {"cpu": 8}, "duration": 100}]}


@pytest.mark.parametrize("delay", [0, 300, 900])
def test_a_scale_up_delay_raises_the_wait_by_the_delay(delay):
    out = _run(_scale_up_scenario(delay))
    a1 = out["workloads"]["a1"]
    # Kueue admits by quota at once; the work starts when the autoscaler's nodes are Ready, and runs 100 s from then.
    assert (a1["admittedAt"], a1["firstStartedAt"]) == (0, delay)
    assert out["scaleUps"] == [{"at": 0, "ready": delay, "nodeGroup": "elastic", "flavor": "spot", "nodes": 2}]
    assert a1["state"] == "finished" and simulate(parse_scenario(_scale_up_scenario(delay))).end == delay + 100


def test_the_autoscaler_stops_at_the_group_count_and_the_rest_waits_for_nodes():
    data = _scale_up_scenario(60)
    data["nodeGroups"][0]["count"] = 1
    out = _run(data)
    a1 = out["workloads"]["a1"]
    assert out["scaleUps"][0]["nodes"] == 1
    assert (a1["state"], a1["waitingForNodes"], a1["firstStartedAt"]) == ("admitted", True, None)


def test_a_spec_level_scale_up_delay_raises_the_team_wait_by_the_delay():
    plan = build_plan(load_spec(ELASTIC, today=dt.date(2026, 11, 30)))
    rows = load_trace(ROOT / "examples" / "startup-trace.csv", **trace_checks(plan))
    before, _r, _n = run_plan(plan, rows)
    waits = {}
    for delay in (10, 25):
        figures, _result, _notes = run_plan(plan, rows, CapacityTimeline((), delay))
        waits[delay] = figures["ml-engineering"].wait_p50_min
    # t1 (6 instances at minute 0) finds the 6 kept nodes taken by chatbot's c1 (4) first: it waits for gpu-elastic.
    assert before["ml-engineering"].wait_p50_min == 0
    assert waits == {10: 10, 25: 25}


def test_a_spec_groups_start_as_the_plan_says():
    plan = build_plan(load_spec(ELASTIC, today=dt.date(2026, 11, 30)))
    groups = {g.name: g for g in node_groups(plan)}
    # gpu-base does not autoscale: its count is there; gpu-elastic and the Spot burst group autoscale from 0.
    assert {n: (g.present, g.count, g.autoscale) for n, g in groups.items()} == {
        "gpu-base": (6, 6, False), "gpu-elastic": (0, 9, True), "burst": (0, 8, True)}
    assert groups["burst"].flavors == ("ml.g5.12xlarge", "ml.g6e.12xlarge")
    assert dict(dict(groups["gpu-base"].per_node)["ml.g5.2xlarge"])["nvidia.com/gpu"] == 1


# ----------------------------------------------------------------- Spot loss

def _spot(events: list[dict]) -> dict:
    return {"queues": _queues(),
            "nodeGroups": [{"name": "spot", "flavor": "spot", "perNode": {"cpu": 4}, "count": 4}],
            "workloads": [{"name": "a1", "queue": "alpha", "requests": {"cpu": 8}, "duration": 1000, "priority": 1},
                          {"name": "b1", "queue": "beta", "requests": {"cpu": 8}, "duration": 1000}],
            "capacity": events}


def test_a_spot_loss_evicts_the_work_on_it_and_it_starts_again_when_nodes_return():
    out = _run(_spot([{"at": 100, "nodeGroup": "spot", "lose": 2}, {"at": 700, "nodeGroup": "spot", "add": 2}]))
    b1, a1 = out["workloads"]["b1"], out["workloads"]["a1"]
    assert out["capacityEvictions"] == [{"at": 100, "workload": "b1", "queue": "beta", "flavor": "spot",
                                         "nodeGroup": "spot"}]
    # Evicted, not preempted; requeued and admitted again by quota at once, it starts when the nodes return and
    # runs its whole duration again.
    assert (b1["capacityEvictions"], b1["preemptedCount"], out["preemptions"]) == (1, 0, [])
    assert (b1["admittedAt"], b1["firstStartedAt"], b1["state"]) == (100, 0, "finished")
    assert (a1["capacityEvictions"], a1["state"]) == (0, "finished")
    result = simulate(parse_scenario(_spot([{"at": 100, "nodeGroup": "spot", "lose": 2},
                                            {"at": 700, "nodeGroup": "spot", "add": 2}])))
    assert result.nodes.of("b1").started_at is None and result.nodes.of("b1").rewait_seconds == 600
    assert result.end == 1700


def test_without_the_nodes_back_the_evicted_work_waits_to_the_end():
    data = _spot([{"at": 100, "flavor": "spot", "lose": 2}])
    del data["workloads"][0]["duration"]  # a1 holds its nodes to the end
    out = _run(data)
    b1 = out["workloads"]["b1"]
    assert (b1["state"], b1["waitingForNodes"], out["nodeGroups"]) == ("admitted", True, {"spot": {"spot": 2}})
    # With a1 finishing at 1000, b1 takes its nodes then.
    assert _run(_spot([{"at": 100, "flavor": "spot", "lose": 2}]))["workloads"]["b1"]["state"] == "finished"


def test_victims_are_the_lowest_priority_then_the_most_recently_started():
    data = _spot([{"at": 100, "nodeGroup": "spot", "lose": 1}])
    data["workloads"] = [{"name": "old", "queue": "alpha", "requests": {"cpu": 4}, "duration": 500},
                         {"name": "urgent", "queue": "alpha", "requests": {"cpu": 4}, "priority": 5},
                         {"name": "new", "queue": "beta", "requests": {"cpu": 4}},
                         {"name": "late", "queue": "beta", "requests": {"cpu": 4}},
                         ]
    data["events"] = [{"at": 50, "finish": "late"},
                      {"at": 50, "submit": {"name": "newer", "queue": "beta", "requests": {"cpu": 4}}}]
    out = _run(data)
    # At 100 four nodes hold old, urgent, new (started at 0) and newer (started at 50): newer goes.
    assert [e["workload"] for e in out["capacityEvictions"]] == ["newer"]


# ----------------------------------------------------------------- the closing note's example

def test_the_elastic_example_spot_loss_evicts_the_researchers_burst_work():
    code, out, _ = _cli(str(ELASTIC), "--trace", str(TRACE), "--capacity",
                        str(ROOT / "examples" / "elastic-spot-loss.csv"), "--format", "json")
    doc = json.loads(out)
    assert code == 0
    assert [(e["minute"], e["workload"]) for e in doc["nodes"]["capacityEvictions"]] == [(60, "x2"), (60, "x1")]
    assert doc["teams"]["researchers"]["evictedByCapacityLoss"] == 2
    assert doc["teams"]["researchers"]["waitAfterLossMinutes"] == 100  # x1 10 (a scale-up), x2 90 (nodes back)
    assert doc["teams"]["chatbot"]["evictedByCapacityLoss"] == 0
    # The flexible Spot group scales up the type the waiting work asks for (x3 on ml.g6e.12xlarge).
    assert {"minute": 30, "readyMinute": 40, "instanceGroup": "burst", "flavor": "ml.g6e.12xlarge",
            "nodes": 1} in doc["nodes"]["scaleUps"]
    assert doc["nodes"]["atEnd"]["burst"] == {"ml.g5.12xlarge": 7, "ml.g6e.12xlarge": 1}


def test_compare_runs_both_specs_on_the_same_timeline(tmp_path):
    # The other spec keeps 8 burst nodes (no autoscaling of that group), all of its first type: the researchers'
    # ml.g5.12xlarge work starts at once, and x3, on ml.g6e.12xlarge, never finds a node.
    fixed = ELASTIC.read_text().replace("      capacity: spot\n      autoscale: true", "      capacity: spot")
    assert fixed != ELASTIC.read_text()
    other = tmp_path / "fixed-spot.yaml"
    other.write_text(fixed)
    code, out, err = _cli(str(ELASTIC), "--trace", str(TRACE), "--capacity",
                          str(ROOT / "examples" / "elastic-no-events.csv"), "--compare", str(other), "--format", "json")
    doc = json.loads(out)
    assert code == 0, err
    before, after = doc["before"]["researchers"], doc["after"]["researchers"]
    assert (before["waitP50Minutes"], before["waitingForNodes"]) == (10, 0)
    assert (after["waitP50Minutes"], after["waitP95Minutes"], after["waitingForNodes"]) == (0, 570, 1)
    assert any(line.startswith("researchers: p50 wait goes from 10 to 0 minutes") and
               "waiting for nodes at the end goes from 0 to 1" in line for line in doc["changes"])


# ----------------------------------------------------------------- malformed timelines

def test_a_malformed_scenario_timeline_is_refused_with_path_value_and_fix():
    data = _spot([{"at": -5, "nodeGroup": "nope", "lose": 1}, {"at": 10, "nodeGroup": "spot", "add": 0},
                  {"at": 10, "flavor": "spot", "nodeGroup": "spot", "add": 1}, {"at": 10, "nodeGroup": "spot", "lose": 9}])
    data["nodeGroups"].append({"name": "x", "flavor": "gpu", "perNode": {"cpu": 0}, "count": 0, "present": 3})
    with pytest.raises(SpecError) as exc:
        parse_scenario(data)
    said = [str(i) for i in exc.value.issues]
    expected = [
        ("nodeGroups[1].flavor", "'gpu'", "use one of spot"),
        ("nodeGroups[1].perNode.cpu", "0", "write e.g. 8"),
        ("nodeGroups[1].count", "0", "give the most nodes"),
        ("capacity[0].at", "-5", "write a number of at least 0"),
        ("capacity[0].nodeGroup", "'nope'", "use one of spot"),
        ("capacity[1].add", "0", "give a number of nodes"),
        ("capacity[2]", "", "write e.g."),
        ("capacity[3].lose", "9", "give at most 4"),
    ]
    for path, value, fix in expected:
        assert any(s.startswith(path + ":") and value in s and fix in s for s in said), (path, said)


def test_capacity_events_without_node_groups_are_refused():
    with pytest.raises(SpecError) as exc:
        parse_scenario({"queues": _queues(), "capacity": [{"at": 1, "flavor": "spot", "add": 1}], "scaleUpDelay": 5})
    assert {i.path for i in exc.value.issues} == {"capacity", "scaleUpDelay"}


def test_a_malformed_trace_timeline_is_refused_line_by_line():
    plan = build_plan(load_spec(ELASTIC, today=dt.date(2026, 11, 30)))
    text = HEADER + "x,burst,,,1\n10,nope,,1,\n10,burst,ml.p5.48xlarge,1,\n10,,,1,\n10,burst,,1,1\n10,gpu-base,,7,\n1,2\n"
    with pytest.raises(SpecError) as exc:
        parse_timeline(text, "t.csv", plan_groups(plan))
    said = [str(i) for i in exc.value.issues]
    assert [s.split(":")[0] for s in said] == [
        "line 2 minute", "line 3 instanceGroup", "line 4 instanceType", "line 5 instanceGroup/instanceType",
        "line 6 add/lose", "line 7 add", "line 8"]
    assert "use one of burst, gpu-base, gpu-elastic" in said[1]
    assert "use one of ml.g5.12xlarge, ml.g6e.12xlarge" in said[2]
    assert "give at most 6" in said[5]


def test_the_cli_reports_a_bad_timeline_and_refuses_options_out_of_place(tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_text(HEADER + "10,nope,,1,\n")
    code, _out, err = _cli(str(ELASTIC), "--trace", str(TRACE), "--capacity", str(bad))
    assert code == 1 and "1 problem in the capacity timeline" in err and "line 2 instanceGroup" in err
    code, _out, err = _cli(str(ELASTIC), "--trace", str(TRACE), "--scale-up-delay", "5")
    assert code == 1 and "--scale-up-delay needs --capacity" in err
    code, _out, err = _cli(str(ELASTIC), "--trace", str(TRACE), "--capacity", str(bad), "--format", "html")
    assert code == 1 and "1 problem in the capacity timeline" in err  # html checks the timeline as text does
