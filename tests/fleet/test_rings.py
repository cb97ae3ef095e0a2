"""Pipeline rings (clusters[].ring): all clusters or none, 0..9; with rings the fleet pipeline deploys ring by ring,
lowest first, the clusters of a ring side by side whatever their region, the drift checks after every wave but the
last; the dispatch manager in a ring no earlier than its workers (HPG-F012). Without rings: per region (as
test_pipeline_waves)."""

from __future__ import annotations

import pytest
import yaml

from hyperpod_gov.spec import SpecError
from hyperpod_gov.spec.fleet import parse_fleet
from tests.conftest import ROOT, TODAY
from tests.fleet.conftest import cluster_index
from tests.fleet.test_pipeline_waves import CONTEXT
from tests.synth_helpers import minimal_app

# spec order use1-train, usw2-train, use1-mgr, use1-hpc: rings not in spec order, a ring across two regions
RINGS = {"use1-train": 1, "usw2-train": 0, "use1-mgr": 1, "use1-hpc": 0}


def _ringed(data, rings=RINGS):
    for name, ring in rings.items():
        data["clusters"][cluster_index(data, name)]["ring"] = ring
    return data


def _issues(data):
    try:
        parse_fleet(data, today=TODAY, base_dir=ROOT / "examples")
    except SpecError as exc:
        return [(i.rule, i.path, i.value) for i in exc.issues], exc.issues
    return [], []


def _write(tmp_path, data):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def test_rings_give_one_wave_per_ring_lowest_first_whatever_the_regions(fleet_data, tmp_path):
    from stacks.pipeline_fleet import fleet_waves

    waves = fleet_waves(minimal_app(), _write(tmp_path, _ringed(fleet_data)), nag=False)
    assert [(w[0], w[2], [s.cluster for s in w[3]]) for w in waves] == [
        ("Deploy-ring0", "ring 0", ["usw2-train", "use1-hpc"]),  # us-west-2 and us-east-1 side by side
        ("Deploy-ring1", "ring 1", ["use1-train", "use1-mgr"]),
    ]


def test_environments_stay_outermost_each_deploying_its_rings_in_order(fleet_data, tmp_path):
    from stacks.pipeline_fleet import fleet_waves

    data = _ringed(fleet_data, {"use1-train": 3, "usw2-train": 3, "use1-mgr": 7, "use1-hpc": 0})
    data["environments"] = [{"name": "stg"}, {"name": "prd"}]
    waves = fleet_waves(minimal_app(), _write(tmp_path, data), nag=False)
    assert [w[0] for w in waves] == ["stg-ring0", "stg-ring3", "stg-ring7", "prd-ring0", "prd-ring3", "prd-ring7"]


def test_the_pipeline_approves_deploys_and_checks_ring_by_ring(fleet_data, tmp_path):
    """The CodePipeline stages of the pipeline stack as built (not synthesized: the stages resolve in the stack)."""
    from stacks.pipeline_fleet import add_fleet_pipeline

    app = minimal_app(context=CONTEXT)
    stack = add_fleet_pipeline(app, _write(tmp_path, _ringed(fleet_data)),
                               spec_path=str(ROOT / "examples" / "fleet.yaml"), nag=False)
    # the pipeline stays where the spec's first cluster (use1-train) puts it, though ring 0 deploys usw2-train first
    assert (stack.account, stack.region) == ("111111111111", "us-east-1")
    stages = stack.resolve(stack.pipeline.pipeline.node.default_child.stages)
    ring0, ring1 = stages[-2:]
    assert {a.get("region") for a in ring0["actions"] if a["name"].startswith("Deploy-usw2-train.")} == {"us-west-2"}
    assert [ring0["name"], ring1["name"]] == ["Deploy-ring0", "Deploy-ring1"]
    first = min(ring0["actions"], key=lambda a: a["runOrder"])
    assert first["name"] == "Approve-Deploy-ring0"
    assert first["configuration"]["CustomData"] == "Deploy usw2-train, use1-hpc (ring 0)?"
    names = {a["name"]: a["runOrder"] for a in ring0["actions"]}
    deploys = {n.split(".")[0] for n in names if n.endswith(".Deploy")}
    assert deploys == {"Deploy-usw2-train", "Deploy-use1-hpc"}
    checks = sorted(n for n in names if n.startswith("Check-"))
    assert checks == ["Check-Deploy-use1-hpc", "Check-Deploy-usw2-train"]
    assert min(names[c] for c in checks) > max(r for n, r in names.items() if n.endswith(".Deploy"))
    assert not [a for a in ring1["actions"] if a["name"].startswith("Check-")]  # the last wave: no check
    assert ring1["actions"][0]["configuration"]["CustomData"].endswith("Deploy-ring0 is deployed and its drift "
                                                                        "checks passed.")


def test_a_cluster_without_a_ring_beside_ringed_ones_is_refused(fleet_data):
    data = _ringed(fleet_data, {"use1-train": 0, "usw2-train": 1})
    found, issues = _issues(data)
    assert [(r, p) for r, p, _ in found] == [(None, "clusters[2].ring"), (None, "clusters[3].ring")]
    assert "clusters[0] (use1-train) is in ring 0" in issues[0].problem
    assert issues[0].fix.startswith("give cluster use1-mgr a ring (0..9, 0 first)")


@pytest.mark.parametrize("ring", [10, -1, "0", 1.5])
def test_a_ring_is_an_integer_from_0_to_9(fleet_data, ring):
    data = _ringed(fleet_data, {c["name"]: 0 for c in fleet_data["clusters"]})
    data["clusters"][1]["ring"] = ring
    found, issues = _issues(data)
    assert [p for _, p, _ in found] == ["clusters[1].ring"], found
    assert issues[0].value == ring


def test_a_manager_in_a_ring_before_a_worker_breaks_f012(fleet_data):
    data = _ringed(fleet_data, {"use1-train": 0, "usw2-train": 2, "use1-mgr": 1, "use1-hpc": 0})
    found, issues = _issues(data)
    assert found == [("HPG-F012", "clusters[2].ring", 1)]
    assert "before its workers usw2-train in ring 2" in issues[0].problem
    assert issues[0].fix.startswith("put the manager in ring 2 (its last worker's) or later")


def test_a_manager_in_its_last_workers_ring_or_later_passes_f012(fleet_data):
    for manager in (2, 5):
        data = _ringed(fleet_data, {"use1-train": 0, "usw2-train": 2, "use1-mgr": manager, "use1-hpc": 9})
        assert _issues(data)[0] == []


def test_f012_needs_no_rings_and_no_dispatch(fleet_data):
    assert _issues(fleet_data)[0] == []  # the example: no rings
    data = _ringed(fleet_data, {"use1-train": 0, "usw2-train": 2, "use1-mgr": 1, "use1-hpc": 0})
    del data["fleet"]
    assert _issues(data)[0] == []
