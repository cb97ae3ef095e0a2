"""Allocations in the plan, in both modes: Kueue units (validated against the CRDs) and the SageMaker properties
(validated against cfn-lint's schemas and botocore's sagemaker model)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import botocore.session
import cfnlint
import jsonschema
import pytest
from botocore.validate import ParamValidator

from hyperpod_gov import catalog
from hyperpod_gov.charts import render
from hyperpod_gov.explain import explain
from hyperpod_gov.plan import Amounts, build_plan
from hyperpod_gov.plan import task_governance as tg
from hyperpod_gov.spec import parse_spec
from hyperpod_gov.spec.loader import spec_warnings
from tests.conftest import BASE, TODAY
from tests.kueue_schema import kueue_errors

P5, G5, M5 = "ml.p5.48xlarge", "ml.g5.8xlarge", "ml.m5.2xlarge"
MIG = "nvidia.com/mig-1g.10gb"
ARN = "arn:aws:sagemaker:us-east-1:111111111111:cluster/abcdef012345"


def allocation_spec(mode: str = "kueue", **scheduler: Any) -> dict:
    """Every kind of allocation on one cluster: 2 x p5 in mig-1g.10gb (112 partitions), 4 x g5, 2 x m5 (CPU)."""
    data = copy.deepcopy(BASE)
    data["scheduler"].update(mode=mode, **scheduler)
    data["cluster"]["instanceGroups"] = [
        {"name": "gpu", "instanceType": P5, "count": 2, "mig": {"profile": "mig-1g.10gb"}},
        {"name": "small", "instanceType": G5, "count": 4},
        {"name": "cpu", "instanceType": M5, "count": 2},
    ]
    a, b = data["teams"]
    a["quota"] = [{"instanceType": P5, "partitions": {"profile": "mig-1g.10gb", "count": 56}}]
    a["sharing"] = {"strategy": "LendAndBorrow", "borrowLimitPercent": 50,
                    "absoluteBorrowLimits": [{"instanceType": G5, "count": 1}]}
    b["quota"] = [{"instanceType": G5, "count": 2}, {"instanceType": P5, "partitions": {"profile": "mig-1g.10gb",
                                                                                       "count": 28}},
                  {"instanceType": M5, "vcpu": 8, "memoryGib": 32}]
    b["active"] = False
    return data


def plan_of(data: dict):
    return build_plan(parse_spec(data, today=TODAY))


def flavor(plan, team: str, itype: str):
    return next(f for f in plan.team(team).flavors if f.instance_type == itype)


def cq_resources(spec: dict, itype: str) -> dict[str, dict]:
    f = next(f for f in spec["resourceGroups"][0]["flavors"] if f["name"] == itype)
    return {r["name"]: r for r in f["resources"]}


# --- the plan's numbers -------------------------------------------------------------------------------------


def test_partitions_are_their_own_resource_with_a_pro_rata_share_of_cpu_and_memory():
    plan = plan_of(allocation_spec())
    assert plan.covered_resources == ("cpu", "memory", "nvidia.com/gpu", MIG)
    assert [(f.instance_type, f.mig_resource) for f in plan.flavors] == [(G5, None), (M5, None), (P5, MIG)]
    # One instance holds 8 GPUs x 7 = 56 partitions, so 56 partitions bring one instance's 192 vCPU and 2048 GiB.
    assert flavor(plan, "team-a", P5).nominal == Amounts(0, 192, 2048, ((MIG, 56),))
    assert flavor(plan, "team-a", P5).borrowing_limit == Amounts(0, 96, 1024, ((MIG, 28),))  # 50 %
    assert flavor(plan, "team-b", P5).nominal == Amounts(0, 96, 1024, ((MIG, 28),))


def test_vcpu_and_memory_quota_is_just_those():
    assert flavor(plan_of(allocation_spec()), "team-b", M5).nominal == Amounts(0, 8, 32)


def test_absolute_borrow_limit_replaces_the_percentage_on_its_type():
    plan = plan_of(allocation_spec())
    assert flavor(plan, "team-a", G5).nominal == Amounts(0, 0, 0)
    assert flavor(plan, "team-a", G5).borrowing_limit == Amounts(1, 32, 128)  # 1 x ml.g5.8xlarge
    assert flavor(plan, "team-a", M5).borrowing_limit == Amounts(0, 0, 0)  # 50 % of nothing


def test_shared_pool_gets_the_partitions_and_the_vcpu_left():
    data = allocation_spec()
    data["sharedPool"] = {}
    pool = plan_of(data).shared_pool
    assert flavor_of(pool, P5).nominal.partitions == ((MIG, 112 - 56 - 28),)
    assert flavor_of(pool, M5).nominal == Amounts(0, 16 - 8, 64 - 32)
    assert flavor_of(pool, G5).nominal.accelerators == 4 - 2


def flavor_of(team, itype):
    return next(f for f in team.flavors if f.instance_type == itype)


# --- kueue mode ---------------------------------------------------------------------------------------------


def test_kueue_cluster_queues_carry_partitions_cpu_memory_absolute_limits_and_hold():
    plan = plan_of(allocation_spec())
    a, b = plan.cluster_queue_spec(plan.team("team-a")), plan.cluster_queue_spec(plan.team("team-b"))
    assert a["resourceGroups"][0]["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu", MIG]
    assert cq_resources(a, P5)[MIG] == {"name": MIG, "nominalQuota": 56, "borrowingLimit": 28}
    assert cq_resources(a, P5)["nvidia.com/gpu"]["nominalQuota"] == 0  # the partitioned nodes offer no whole GPU
    assert cq_resources(a, G5)["nvidia.com/gpu"] == {"name": "nvidia.com/gpu", "nominalQuota": 0, "borrowingLimit": 1}
    assert cq_resources(b, M5)["cpu"]["nominalQuota"] == 8 and cq_resources(b, M5)["memory"]["nominalQuota"] == "32Gi"
    assert cq_resources(b, P5)[MIG]["nominalQuota"] == 28
    assert "stopPolicy" not in a and b["stopPolicy"] == "Hold"


def test_kueue_objects_of_every_allocation_kind_validate_against_the_crds():
    objs = render(plan_of(allocation_spec())).all()
    kueue = [o for o in objs if o["apiVersion"].startswith("kueue.x-k8s.io/")]
    assert {o["kind"] for o in kueue} >= {"ClusterQueue", "ResourceFlavor", "LocalQueue"}
    for obj in kueue:
        assert not kueue_errors(obj), (obj["metadata"]["name"], kueue_errors(obj))


def test_no_idle_sharing_means_every_borrowing_limit_is_zero():
    plan = plan_of(allocation_spec(idleResourceSharing=False))
    for team in plan.teams:
        spec = plan.cluster_queue_spec(team)
        limits = [r.get("borrowingLimit") for f in spec["resourceGroups"][0]["flavors"] for r in f["resources"]]
        assert set(limits) <= {0, "0Gi"}, (team.name, limits)
        assert not team.can_borrow


def test_a_paused_kueue_team_keeps_its_namespace_and_objects():
    objs = render(plan_of(allocation_spec())).all()
    names = {(o["kind"], o["metadata"]["name"]) for o in objs}
    assert ("Namespace", "hyperpod-ns-team-b") in names
    assert ("LocalQueue", "hyperpod-ns-team-b-localqueue") in names


# --- task-governance mode: the SageMaker API / CloudFormation shapes ----------------------------------------


def tg_plan(**scheduler: Any):
    return plan_of(allocation_spec("task-governance", **scheduler))


def test_compute_quota_properties_of_every_kind():
    plan = tg_plan()
    a = tg.compute_quota_properties(plan.team("team-a"), ARN)
    b = tg.compute_quota_properties(plan.team("team-b"), ARN)
    assert a["ComputeQuotaConfig"]["ComputeQuotaResources"] == [
        {"InstanceType": P5, "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": 56}}]
    assert a["ComputeQuotaConfig"]["ResourceSharingConfig"] == {
        "Strategy": "LendAndBorrow", "BorrowLimit": 50, "AbsoluteBorrowLimits": [{"InstanceType": G5, "Count": 1}]}
    assert b["ComputeQuotaConfig"]["ComputeQuotaResources"] == [
        {"InstanceType": G5, "Count": 2},
        {"InstanceType": M5, "VCpu": 8, "MemoryInGiB": 32},
        {"InstanceType": P5, "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": 28}},
    ]
    assert (a["ActivationState"], b["ActivationState"]) == ("Enabled", "Disabled")


def test_idle_resource_sharing_is_written_only_when_off():
    on = tg.cluster_policy_properties("p", "c", [], True, ARN, tg_plan().idle_resource_sharing)
    off = tg.cluster_policy_properties("p", "c", [], True, ARN, tg_plan(idleResourceSharing=False).idle_resource_sharing)
    assert "IdleResourceSharing" not in on["SchedulerConfig"]
    assert off["SchedulerConfig"]["IdleResourceSharing"] == "Disabled"


def _cfn_schema(type_name: str) -> dict[str, Any]:
    base = Path(cfnlint.__file__).parent / "data" / "schemas"
    provider = json.loads((base / "providers" / "us-east-1.json").read_text())
    return json.loads((base / "resources" / f"{provider[type_name]}.json").read_text())


def _without_unicode_classes(node: Any) -> Any:
    """The schemas' Tag patterns use \\p{L} (not Python ``re``); tags are checked by their own tests."""
    if isinstance(node, dict):
        return {k: _without_unicode_classes(v) for k, v in node.items()
                if not (k == "pattern" and isinstance(v, str) and "\\p" in v)}
    if isinstance(node, list):
        return [_without_unicode_classes(v) for v in node]
    return node


def _cfn_errors(type_name: str, properties: dict[str, Any]) -> list[str]:
    schema = _without_unicode_classes(_cfn_schema(type_name))
    whole = {**schema, "type": "object", "additionalProperties": False}
    validator = jsonschema.Draft7Validator(whole)
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(properties)]


def _api_errors(operation: str, params: dict[str, Any]) -> str:
    model = botocore.session.get_session().get_service_model("sagemaker")
    report = ParamValidator().validate(params, model.operation_model(operation).input_shape)
    return report.generate_report()


@pytest.mark.parametrize("team", ["team-a", "team-b"])
def test_compute_quota_properties_match_cfn_lints_schema_and_the_api(team):
    props = tg.compute_quota_properties(tg_plan().team(team), ARN)
    assert _cfn_errors("AWS::SageMaker::ComputeQuota", props) == []
    assert _api_errors("CreateComputeQuota", props) == ""


def test_cluster_policy_properties_match_cfn_lints_schema_and_the_api():
    plan = tg_plan(idleResourceSharing=False)
    props = tg.cluster_policy_properties(plan.policy_name, plan.cluster_name, [("training", 80)], True, ARN,
                                         plan.idle_resource_sharing)
    assert _cfn_errors("AWS::SageMaker::ClusterSchedulerConfig", props) == []
    assert _api_errors("CreateClusterSchedulerConfig", props) == ""


def test_the_schema_check_can_fail():
    props = tg.compute_quota_properties(tg_plan().team("team-a"), ARN)
    props["ComputeQuotaConfig"]["ComputeQuotaResources"][0]["AcceleratorPartition"]["Type"] = "mig-9g.1gb"
    props["ActivationState"] = "Paused"
    props["ComputeQuotaConfig"]["ResourceSharingConfig"]["AbsoluteBorrowLimits"][0]["Count"] = "one"
    errors = _cfn_errors("AWS::SageMaker::ComputeQuota", props)
    assert any("mig-9g.1gb" in e for e in errors) and any("Paused" in e for e in errors)
    assert any("'one'" in e for e in errors)
    assert "AbsoluteBorrowLimits[0].Count" in _api_errors("CreateComputeQuota", props)  # botocore checks types


# --- declared instance types -------------------------------------------------------------------------------


DECLARED = "ml.example.48xlarge"


def declared_spec(mode: str) -> dict:
    data = copy.deepcopy(BASE)
    data["scheduler"]["mode"] = mode
    data["instanceTypes"] = {DECLARED: {"accelerators": 8, "acceleratorKind": "nvidia.com/gpu", "vcpu": 192,
                                        "memoryGib": 2048, "migProfiles": {"mig-1g.10gb": 7}}}
    data["cluster"]["instanceGroups"].append({"name": "new", "instanceType": DECLARED, "count": 2})
    data["teams"][1]["quota"].append({"instanceType": DECLARED, "accelerators": 4})
    return data


def test_a_declared_type_is_usable_in_the_plan_and_kueue_mode():
    plan = plan_of(declared_spec("kueue"))
    assert DECLARED in plan.catalog.declared and DECLARED not in catalog.CATALOG
    assert plan.catalog.mig_partitions(DECLARED, "mig-1g.10gb") == 56
    assert flavor(plan, "team-b", DECLARED).nominal == Amounts(4, 96, 1024)
    spec = plan.cluster_queue_spec(plan.team("team-b"))
    assert cq_resources(spec, DECLARED)["nvidia.com/gpu"]["nominalQuota"] == 4
    for obj in render(plan).all():
        if obj["apiVersion"].startswith("kueue.x-k8s.io/"):
            assert not kueue_errors(obj)
    warnings = spec_warnings(parse_spec(declared_spec("kueue"), today=TODAY), today=TODAY)
    assert [i.path for i in warnings if i.path.startswith("instanceTypes")] == [f"instanceTypes[{DECLARED}]"]


def test_a_declared_type_is_usable_in_task_governance_and_explain():
    plan = plan_of(declared_spec("task-governance"))
    props = tg.compute_quota_properties(plan.team("team-b"), ARN)
    assert {"InstanceType": DECLARED, "Accelerators": 4} in props["ComputeQuotaConfig"]["ComputeQuotaResources"]
    assert f"4 GPUs ({DECLARED})" in explain(plan)


def test_a_declared_type_can_be_partitioned():
    data = declared_spec("kueue")
    data["cluster"]["instanceGroups"][-1]["mig"] = {"profile": "mig-1g.10gb"}
    data["teams"][1]["quota"][-1] = {"instanceType": DECLARED, "partitions": {"profile": "mig-1g.10gb", "count": 112}}
    plan = plan_of(data)
    assert flavor(plan, "team-b", DECLARED).nominal.partitions == ((MIG, 112),)


# --- explain -------------------------------------------------------------------------------------------------


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_explain_shows_partitions_vcpu_absolute_caps_and_pausing():
    text = _flat(explain(plan_of(allocation_spec())))  # explain wraps at 100 columns
    assert "2 x ml.p5.48xlarge (GPUs as mig-1g.10gb)" in text
    assert "56 x mig-1g.10gb (ml.p5.48xlarge)" in text
    assert "8 vCPU + 32 GiB (ml.m5.2xlarge)" in text
    assert "up to 1 GPU (ml.g5.8xlarge), 28 x mig-1g.10gb (ml.p5.48xlarge) (50%; absolute on ml.g5.8xlarge)" in text
    assert "team-b (paused)" in text
    assert _flat("Paused teams:\n  team-b: nothing new of the team is admitted (ComputeQuota ActivationState: Disabled; "
                 "kueue mode: ClusterQueue stopPolicy: Hold); work already admitted keeps running until it ends") in text
    assert _flat("Owned by nobody (runs only borrowed work): 2 GPUs (ml.g5.8xlarge), 8 vCPUs (ml.m5.2xlarge), "
                 "28 x mig-1g.10gb (ml.p5.48xlarge)") in text


def test_explain_without_idle_sharing_says_nobody_borrows():
    text = _flat(explain(plan_of(allocation_spec(idleResourceSharing=False))))
    assert "idle compute fair-share, idle resource sharing is off: no team borrows" in text
    assert "nothing (idle resource sharing is off)" in text


def test_a_partitioned_group_carries_the_label_hyperpods_gpu_operator_reads():
    plan = plan_of(allocation_spec())
    groups = {g.name: g for g in plan.instance_groups}
    assert groups["gpu"].kubernetes_labels == {"nvidia.com/mig.config": "all-1g.10gb"}
    assert groups["small"].kubernetes_labels == {} and groups["small"].mig_profile is None


# docs/allocations.md shows this block as ```python and tests/test_readme.py runs it there; this test keeps the same
# text beside the allocation tests.
README_EXAMPLE = '''\
import datetime

import yaml

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.task_governance import compute_quota_config
from hyperpod_gov.spec import parse_spec

spec = parse_spec(yaml.safe_load("""
name: acme
accounts: {capacity: {id: "111111111111", region: us-east-1}}
cluster:
  name: ml
  instanceGroups:
    - {name: h100, instanceType: ml.p5.48xlarge, count: 2, mig: {profile: mig-1g.10gb}}
    - {name: cpu, instanceType: ml.m5.2xlarge, count: 2}
scheduler: {mode: kueue}
teams:
  - name: research
    quota: [{instanceType: ml.p5.48xlarge, partitions: {profile: mig-1g.10gb, count: 84}}]
    sharing:
      strategy: LendAndBorrow
      absoluteBorrowLimits: [{instanceType: ml.m5.2xlarge, vcpu: 4, memoryGib: 16}]
  - name: etl
    active: false
    quota:
      - {instanceType: ml.m5.2xlarge, vcpu: 12, memoryGib: 48}
      - {instanceType: ml.p5.48xlarge, partitions: {profile: mig-1g.10gb, count: 28}}
"""), today=datetime.date(2026, 11, 30))
plan = build_plan(spec)

# 2 x ml.p5.48xlarge = 16 H100 x 7 = 112 partitions of mig-1g.10gb: 84 + 28, exactly full.
research = plan.cluster_queue_spec(plan.team("research"))
p5 = next(f for f in research["resourceGroups"][0]["flavors"] if f["name"] == "ml.p5.48xlarge")
assert {r["name"]: r["nominalQuota"] for r in p5["resources"]} == {
    "cpu": 288, "memory": "3072Gi", "nvidia.com/mig-1g.10gb": 84}  # 84/56 of an instance's vCPU and memory
m5 = next(f for f in research["resourceGroups"][0]["flavors"] if f["name"] == "ml.m5.2xlarge")
assert {r["name"]: r["borrowingLimit"] for r in m5["resources"]}["cpu"] == 4  # the absolute cap
# A paused team's queue is held: admitted work runs to its end, nothing new is admitted.
assert plan.cluster_queue_spec(plan.team("etl"))["stopPolicy"] == "Hold"
# The same allocations in task-governance mode, as the SageMaker API and CloudFormation take them:
assert compute_quota_config(plan.team("etl"))["ComputeQuotaResources"] == [
    {"InstanceType": "ml.m5.2xlarge", "VCpu": 12, "MemoryInGiB": 48},
    {"InstanceType": "ml.p5.48xlarge", "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": 28}},
]
'''


def test_readme_allocations_example_runs():
    exec(compile(README_EXAMPLE, "README.md (Allocations)", "exec"), {})  # noqa: S102 - our own documentation
