"""One MultiKueueConfig and one AdmissionCheck per set of workers a team is on (issue 60): Kueue v0.19.2's dispatcher
copies a workload to every cluster of the config its ClusterQueue's check names (``remoteClientsForAC`` in
``pkg/controller/admissionchecks/multikueue/workload.go``), so a team's check lists only the workers it is on. The
names come from the set alone; the simulator offers a team's work to its set only; drift sees a set lose a worker.

The fleet of tests/fleet/test_multikueue.py: chatbot is on use1 only, ml-engineering and researchers on use1 and
usw2.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import replace
from itertools import permutations

import pytest
import yaml

from hyperpod_gov.plan.multikueue import FleetQueue, dispatch_check, dispatch_sets, multikueue_plans
from tests.live.conftest import Aws, queue_drift
from tests.live.fake_aws import cluster_from_plan
from tests.live.fake_k8s import FakeKubernetes, kubeconfig

from .test_multikueue import WORKERS, fleet, objects_of, plans_of
from .test_multikueue import fleet_data as startup_data

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"  # AdmissionCheck spec.parameters.name (admissioncheck_types.go)


def dispatched_to(objs: dict[str, list[dict]]) -> dict[str, list[str]]:
    """Fleet team -> the workers Kueue copies its workloads to, read from the manager's objects only: its
    ClusterQueue's check, the check's parameters, that MultiKueueConfig's clusters."""
    manager = objs["mgr"]
    configs = {o["metadata"]["name"]: o["spec"]["clusters"] for o in manager if o["kind"] == "MultiKueueConfig"}
    checks = {o["metadata"]["name"]: o["spec"]["parameters"]["name"] for o in manager if o["kind"] == "AdmissionCheck"}
    out = {}
    for cq in (o for o in manager if o["kind"] == "ClusterQueue" and o["metadata"]["name"].endswith("-fleet")):
        (check,) = cq["spec"]["admissionChecksStrategy"]["admissionChecks"]
        out[cq["metadata"]["name"].removesuffix("-fleet")] = configs[checks[check["name"]]]
    return out


def misdispatched(objs: dict[str, list[dict]]) -> list[tuple[str, str]]:
    """(team, worker) where the manager would copy the team's work to a worker without the team's mirrored
    LocalQueue (``<namespace>-fleet``): the copy's creation fails there, is logged and retried."""
    mirrored = {w: {o["metadata"]["name"] for o in objs[w] if o["kind"] == "LocalQueue"} for w in WORKERS}
    return [(team, w) for team, ws in sorted(dispatched_to(objs).items()) for w in ws
            if f"hyperpod-ns-{team}-fleet" not in mirrored[w]]


def test_a_team_on_one_of_two_workers_gets_a_check_listing_only_that_worker():
    members, mk = fleet()
    objs = objects_of(members, mk)
    assert dispatched_to(objs) == {"chatbot": ["use1"], "ml-engineering": ["use1", "usw2"],
                                   "researchers": ["use1", "usw2"]}
    assert misdispatched(objs) == []


def test_one_check_for_every_team_is_caught_sending_chatbot_where_it_is_absent():
    """The layout before issue 60, one config of every worker on every fleet ClusterQueue, rebuilt from the objects:
    the check above finds chatbot sent to usw2."""
    members, mk = fleet()
    objs = objects_of(members, mk)
    everywhere = dispatch_check(WORKERS)
    for o in objs["mgr"]:
        if o["kind"] == "ClusterQueue":
            o["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": everywhere}]}
    assert misdispatched(objs) == [("chatbot", "usw2")]


def test_only_the_sets_teams_are_on_are_emitted():
    """usw2 alone is no team's set: no config for it. Without chatbot on use1, every team is on both: one set."""
    members, mk = fleet()
    names = sorted(o["metadata"]["name"] for o in objects_of(members, mk)["mgr"] if o["kind"] == "MultiKueueConfig")
    assert names == sorted({q.check for q in mk["mgr"].queues}) == sorted(
        [dispatch_check(["use1"]), dispatch_check(WORKERS)])
    assert dispatch_check(["usw2"]) not in names
    data = startup_data()
    data["use1"]["teams"] = [t for t in data["use1"]["teams"] if t["name"] != "chatbot"]
    data["use1"]["cluster"]["instanceGroups"][0]["count"] = 11
    shrunk = plans_of(data)
    objs = objects_of(shrunk, multikueue_plans(shrunk, "mgr", WORKERS))["mgr"]
    assert [(o["kind"], o["metadata"]["name"]) for o in objs if o["kind"] in ("MultiKueueConfig", "AdmissionCheck")] \
        == [("MultiKueueConfig", dispatch_check(WORKERS)), ("AdmissionCheck", dispatch_check(WORKERS))]


def test_reordering_teams_or_workers_changes_no_object_name():
    members, mk = fleet()
    names = {w: [(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objs]
             for w, objs in objects_of(members, mk).items()}
    data = startup_data()
    for d in data.values():
        d["teams"].reverse()
    reordered = plans_of(data)
    for workers in (WORKERS, WORKERS[::-1]):
        objs = objects_of(reordered, multikueue_plans(reordered, "mgr", workers))
        assert {w: sorted((o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objs[w])
                for w in objs} == {w: sorted(n) for w, n in names.items()}


def test_a_check_name_is_the_sets_alone_unique_and_a_valid_reference():
    for workers in (("a",), ("a", "b", "c"), tuple(f"w{i}" for i in range(20))):
        assert len({dispatch_check(p) for p in permutations(workers[:4])}) == 1
        name = dispatch_check(workers)
        assert len(name) <= 63 and re.match(DNS_LABEL, name), name
    # a readable join would collide here; the hash of the sorted names does not
    assert dispatch_check(["a-b", "c"]) != dispatch_check(["a", "b-c"])
    assert dispatch_check(["a"]) != dispatch_check(["a", "b"]) != dispatch_check(["b"])
    with pytest.raises(ValueError, match="at least one worker"):
        dispatch_check([])


def test_two_sets_of_one_name_are_refused_not_merged():
    q = FleetQueue(team="t", namespace="n", local_queue="l", cluster_queue="c", workers=("a",), check="x")
    assert [(s.name, s.workers) for s in dispatch_sets([q, replace(q, team="u")])] == [("x", ("a",))]
    with pytest.raises(ValueError, match="dispatch check x names two sets of workers"):
        dispatch_sets([q, replace(q, team="u", workers=("a", "b"))])


# --- the simulator follows the emitted sets ----------------------------------------------------------------------

def test_the_simulator_offers_a_teams_work_to_the_workers_of_its_set_only():
    """researchers is on both workers; given a plan whose set for it is usw2 alone, its work goes to usw2 only,
    although use1 has the team and room: the set comes from the plan's FleetQueue, the one source the objects use."""
    from hyperpod_gov.simulate.fleet import simulate_fleet
    from tests.fleet.test_fleet_simulation import member, trace

    workers = {"use1": member("use1", {"ml-engineering": 6, "researchers": 5, "chatbot": 4}),
               "usw2": member("usw2", {"ml-engineering": 4, "researchers": 4})}
    mk = multikueue_plans({**workers, "mgr": workers["use1"]}, "mgr", ("use1", "usw2"))
    queues = mk["mgr"].queues
    rows = trace("r,researchers,,ml.g5.2xlarge,1,,0,60", "c,chatbot,,ml.g5.2xlarge,1,,0,60")
    default = simulate_fleet(workers, rows, fleet_queues=queues)
    assert {w.name: w.cluster for w in default.workloads} == {"c": "use1", "r": "use1"}  # equal cycles: first
    usw2 = tuple(replace(q, workers=("usw2",), check=dispatch_check(["usw2"])) if q.team == "researchers" else q
                 for q in queues)
    moved = simulate_fleet(workers, rows, fleet_queues=usw2)
    assert {w.name: w.cluster for w in moved.workloads} == {"c": "use1", "r": "usw2"}
    chatbot_everywhere = tuple(replace(q, workers=("use1", "usw2")) if q.team == "chatbot" else q for q in queues)
    with pytest.raises(ValueError, match=r"team chatbot's dispatch set \['use1', 'usw2'\] names usw2"):
        simulate_fleet(workers, rows, fleet_queues=chatbot_everywhere)


# --- drift: the per-set objects flow through the fleet's manifests ---------------------------------------------------

MANAGER = "use1-mgr"


@pytest.fixture
def two_sets(tmp_path, fleet_data):
    """examples/fleet.yaml with team applied on use1-train only: sets {use1-train} and {use1-train, usw2-train}."""
    data = fleet_data
    applied = next(t for t in data["teams"] if t["name"] == "applied")
    del applied["quota"]["usw2-train"]
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def test_a_set_whose_config_loses_a_worker_is_drift(two_sets, tmp_path, capsys):
    from hyperpod_gov.fleet_commands import fleet_review
    from hyperpod_gov.fleet_construct import fleet_manifests
    from hyperpod_gov.fleet_live import run_fleet_drift
    from hyperpod_gov.live import configure_drift
    from hyperpod_gov.live.k8s import connect_kubeconfig

    fleet = fleet_review(two_sets, warn=False)
    plan = fleet.plans[MANAGER]
    both, one = dispatch_check(["use1-train", "usw2-train"]), dispatch_check(["use1-train"])
    configs = {o["metadata"]["name"]: o["spec"]["clusters"] for o in fleet_manifests(fleet)[MANAGER].all()
               if o["kind"] == "MultiKueueConfig"}
    assert configs == {both: ["use1-train", "usw2-train"], one: ["use1-train"]}
    fake = FakeKubernetes(fleet_manifests(fleet)[MANAGER].all())
    url = fake.start()
    try:
        path = tmp_path / "kubeconfig"
        path.write_text(kubeconfig(url))
        fake.objects[("MultiKueueConfig", "", both)]["spec"]["clusters"] = ["use1-train"]
        args = configure_drift(argparse.ArgumentParser(prog="hyperpod-gov drift")).parse_args(
            [two_sets, "--cluster", MANAGER, "--format", "json"])
        with Aws() as aws:
            queue_drift(aws, None, plan, cluster_from_plan(plan))
            code = run_fleet_drift(args, clients=lambda c: aws.factory,
                                   kube=lambda c: (lambda: connect_kubeconfig(str(path))))
            aws.assert_all_used()
    finally:
        fake.stop()
    assert code == 1
    drift = json.loads(capsys.readouterr().out)["clusters"][MANAGER]["drift"]
    assert [(i["kind"], i["name"], i["change"]) for i in drift] == [("MultiKueueConfig", both, "changed")]
