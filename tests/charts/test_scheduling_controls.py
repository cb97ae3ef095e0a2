"""scheduler.gangScheduling and scheduler.topology as emitted (issue 56): Kueue's waitForPodsReady in kueue mode, the
Kueue Topology and the flavors that name it (valid v1beta2 objects), nothing Kueue-shaped in task-governance mode,
the rows diff and explain show, and the pod-set annotations onboarding can print."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from hyperpod_gov.charts import render
from hyperpod_gov.diff import governance_diff
from hyperpod_gov.explain import explain, explain_json
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.kueue import kueue_manager_config
from hyperpod_gov.plan.workloads import kueue_integrations
from hyperpod_gov.plan.scheduling import (PREFERRED_TOPOLOGY, REQUIRED_TOPOLOGY, TopologyPlan,
                                          podset_topology_annotations)
from hyperpod_gov.schemas import schema
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY
from tests.kueue_schema import kueue_errors

L1, L2, L3 = (f"topology.k8s.aws/network-node-layer-{n}" for n in (1, 2, 3))
HOST = "kubernetes.io/hostname"
GANG = {"timeout": "10m", "recoveryTimeout": "3m", "requeuing": {"backoffLimitCount": 5, "backoffBaseSeconds": 60}}
TOPOLOGY = {"levels": [L1, L2, HOST]}
# Kueue v0.19.2, apis/config/v1beta1/configuration_types.go: WaitForPodsReady and RequeuingStrategy's json names
WAIT_FOR_PODS_READY_FIELDS = {"enable", "timeout", "blockAdmission", "requeuingStrategy", "recoveryTimeout"}
REQUEUING_FIELDS = {"timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"}


def plan_of(mode: str, **scheduler):
    data = copy.deepcopy(BASE)
    data["scheduler"].update(mode=mode, **copy.deepcopy(scheduler))
    # a CPU type beside the accelerated ones: its flavor stays out of the topology
    data["cluster"]["instanceGroups"].append({"name": "cpu", "instanceType": "ml.m5.2xlarge", "count": 2})
    data["cluster"]["operators"] = []
    return build_plan(parse_spec(data, today=TODAY))


def kueue_objects(plan, kind):
    return [o for o in render(plan).all() if o["kind"] == kind and o["apiVersion"].startswith("kueue.x-k8s.io/")]


# --- gang scheduling ---------------------------------------------------------------------------------------------


def test_kueue_mode_renders_the_specs_gang_scheduling_as_wait_for_pods_ready():
    config = json.loads(plan_of("kueue", gangScheduling=GANG).kueue_config)
    assert config["waitForPodsReady"] == {
        "enable": True, "timeout": "10m", "recoveryTimeout": "3m", "blockAdmission": False,
        "requeuingStrategy": {"timestamp": "Eviction", "backoffLimitCount": 5, "backoffBaseSeconds": 60,
                              "backoffMaxSeconds": 3600},
    }


def test_the_block_uses_kueues_own_field_names():
    block = json.loads(plan_of("kueue", gangScheduling={**GANG, "blockAdmission": True}).kueue_config)[
        "waitForPodsReady"]
    assert set(block) <= WAIT_FOR_PODS_READY_FIELDS and set(block["requeuingStrategy"]) <= REQUEUING_FIELDS
    assert block["blockAdmission"] is True


def test_an_unlimited_requeue_leaves_the_limit_out_and_no_recovery_timeout_leaves_kueues_default():
    block = json.loads(plan_of("kueue", gangScheduling={"timeout": "5m"}).kueue_config)["waitForPodsReady"]
    assert "backoffLimitCount" not in block["requeuingStrategy"] and "recoveryTimeout" not in block


def test_without_gang_scheduling_the_kueue_configuration_is_unchanged_byte_for_byte():
    plan = plan_of("kueue")
    frameworks, external = kueue_integrations(plan.tenants, plan.cluster.operators)
    before = kueue_manager_config(plan.fair_sharing, frameworks=frameworks, external_frameworks=external)
    assert plan.kueue_config == before
    assert json.loads(before)["waitForPodsReady"] == {"enable": True, "blockAdmission": False}


def test_task_governance_mode_emits_no_kueue_object_for_the_controls():
    plan = plan_of("task-governance", gangScheduling=GANG, topology=TOPOLOGY)
    assert [o for o in render(plan).all() if o["apiVersion"].startswith("kueue.x-k8s.io/")] == []


def test_explain_says_where_task_governance_mode_applies_gang_scheduling():
    text = " ".join(explain(plan_of("task-governance", gangScheduling=GANG)).split())  # explain wraps long lines
    line = text.split("Gang scheduling: ", 1)[1]
    assert line.startswith("timeout 10m, recovery timeout 3m, admission not blocked, requeued at most 5 times")
    assert "applied in the SageMaker console's Configure gang scheduling (HPG-Q012)" in line


def test_explain_json_carries_the_controls_only_when_set_and_matches_its_schema():
    plain = explain_json(plan_of("kueue"))
    assert "gangScheduling" not in plain and "topology" not in plain
    both = explain_json(plan_of("kueue", gangScheduling=GANG, topology=TOPOLOGY))
    assert both["gangScheduling"]["timeout"] == "10m"
    assert both["topology"] == {"levels": [L1, L2, HOST], "kueueTopology": "acme-topology"}
    jsonschema.validate(both, schema("explain"))
    assert explain_json(plan_of("task-governance", topology=TOPOLOGY))["topology"]["kueueTopology"] is None


def test_diff_shows_a_change_of_the_controls():
    lines = governance_diff(plan_of("kueue"), plan_of("kueue", gangScheduling=GANG, topology=TOPOLOGY))
    assert any(x.startswith("gang scheduling:") and "timeout 10m" in x for x in lines), lines
    assert any(x.startswith("topology-aware scheduling:") and "acme-topology" in x for x in lines), lines


# --- topology ----------------------------------------------------------------------------------------------------


def test_kueue_mode_emits_a_topology_with_the_specs_levels_outermost_first():
    (topology,) = kueue_objects(plan_of("kueue", topology=TOPOLOGY), "Topology")
    assert topology["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert topology["metadata"]["name"] == "acme-topology"
    assert topology["spec"] == {"levels": [{"nodeLabel": L1}, {"nodeLabel": L2}, {"nodeLabel": HOST}]}


def test_the_accelerated_flavors_with_the_labels_name_the_topology_and_the_others_do_not():
    """ml.p5.48xlarge carries the network labels (AWS's list); ml.g5.8xlarge does not, and Kueue would count none of
    its nodes in a topology-aware flavor; the CPU type's flavor never is one."""
    flavors = {f["metadata"]["name"]: f["spec"] for f in kueue_objects(plan_of("kueue", topology=TOPOLOGY),
                                                                        "ResourceFlavor")}
    assert {n: s.get("topologyName") for n, s in flavors.items()} == {
        "ml.p5.48xlarge": "acme-topology", "ml.g5.8xlarge": None, "ml.m5.2xlarge": None}


def test_a_hostname_only_topology_covers_every_accelerated_flavor():
    flavors = {f["metadata"]["name"]: f["spec"] for f in kueue_objects(plan_of("kueue", topology={"levels": [HOST]}),
                                                                        "ResourceFlavor")}
    assert {n: s.get("topologyName") for n, s in flavors.items()} == {
        "ml.p5.48xlarge": "acme-topology", "ml.g5.8xlarge": "acme-topology", "ml.m5.2xlarge": None}


def test_without_topology_no_topology_object_and_the_flavors_are_as_before():
    plan = plan_of("kueue")
    assert kueue_objects(plan, "Topology") == []
    assert all("topologyName" not in f["spec"] for f in kueue_objects(plan, "ResourceFlavor"))


def test_the_topology_and_flavors_are_valid_kueue_v1beta2_objects():
    plan = plan_of("kueue", gangScheduling=GANG, topology={"levels": [L1, L2, L3, HOST]})
    objs = [o for o in render(plan).all() if o["apiVersion"].startswith("kueue.x-k8s.io/")]
    assert {"Topology", "ResourceFlavor"} <= {o["kind"] for o in objs}
    assert [(o["kind"], o["metadata"]["name"], e) for o in objs for e in kueue_errors(o)] == []


def test_the_crd_check_refuses_a_topology_with_the_hostname_first():
    """The check above can fail: Kueue's own rule (hostname only as the last level) catches a bad object."""
    (topology,) = kueue_objects(plan_of("kueue", topology=TOPOLOGY), "Topology")
    topology["spec"]["levels"] = [{"nodeLabel": HOST}, {"nodeLabel": L1}]
    assert kueue_errors(topology)


def test_a_dedicated_accelerated_flavor_names_the_topology_too():
    data = copy.deepcopy(BASE)
    data["scheduler"].update(mode="kueue", topology=TOPOLOGY)
    data["cluster"]["instanceGroups"][0]["dedicatedTo"] = "team-a"
    data["teams"][0]["quota"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 16}]  # covers the group
    plan = build_plan(parse_spec(data, today=TODAY))
    dedicated = [f for f in kueue_objects(plan, "ResourceFlavor") if "tolerations" in f["spec"]]
    assert dedicated and all(f["spec"]["topologyName"] == "acme-topology" for f in dedicated)
    assert [(f["metadata"]["name"], e) for f in dedicated for e in kueue_errors(f)] == []


def test_drift_reads_topologies():
    from hyperpod_gov.live.k8s import KINDS, KUEUE_KINDS

    assert KINDS["Topology"] == ("topologies", False) and "Topology" in KUEUE_KINDS


# --- pod-set annotations (for onboarding) ------------------------------------------------------------------------


@pytest.mark.parametrize("levels, required, expected", [
    ((L1, L2, HOST), True, {REQUIRED_TOPOLOGY: L2}),
    ((L1, L2, HOST), False, {PREFERRED_TOPOLOGY: L2}),
    ((L1, L2, L3, HOST), True, {REQUIRED_TOPOLOGY: L3}),
    ((HOST,), True, {}),  # one node holds no multi-node job
])
def test_a_multi_node_job_is_packed_into_the_innermost_network_level(levels, required, expected):
    assert podset_topology_annotations(TopologyPlan("t", levels), required=required) == expected


def test_no_topology_no_annotation_and_a_level_outside_the_topology_is_refused():
    assert podset_topology_annotations(None, required=True) == {}
    assert podset_topology_annotations(TopologyPlan("t", (L1, L2)), level=L1) == {PREFERRED_TOPOLOGY: L1}
    with pytest.raises(ValueError, match="is not a level of the topology"):
        podset_topology_annotations(TopologyPlan("t", (L1, L2)), level=L3)
