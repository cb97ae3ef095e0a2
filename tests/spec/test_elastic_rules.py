"""The elastic-capacity rules (HPG-K, issue 57): per rule a spec it accepts and one it refuses or warns about, with the
message (path, value, fix); and the elastic service members each in every region's CloudFormation and the API."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import botocore.loaders
import cfnlint
import pytest

from hyperpod_gov.spec import RULES, check_spec, load_spec
from hyperpod_gov.spec.cluster_options import CLUSTER_OPTIONS, GROUP_OPTIONS, members
from hyperpod_gov.spec.models import GovernanceSpec
from tests.conftest import BASE, EXAMPLES, TODAY, as_existing

PLAN_ARN = "arn:aws:sagemaker:us-east-1:111111111111:training-plan/p5-reserved"
BURST = ["ml.g5.12xlarge", "ml.g6e.12xlarge"]  # 4 NVIDIA GPUs each

# A small elastic cluster: 4 kept On-Demand g5.2xlarge, 4 more Karpenter adds, a flexible Spot group of 2 nodes that
# run as either burst type (8 GPUs in all). team-a shares the burst GPUs' 8 as 4 + 4; team-b reserves 2 kept nodes.
ELASTIC: dict = copy.deepcopy(BASE)
ELASTIC["cluster"].update(autoScaling="karpenter", nodeProvisioningMode="Continuous", instanceGroups=[
    {"name": "base", "instanceType": "ml.g5.2xlarge", "count": 4},
    {"name": "scale", "instanceType": "ml.g5.2xlarge", "count": 4, "autoscale": True},
    {"name": "burst", "instanceTypes": BURST, "count": 2, "capacity": "spot", "autoscale": True},
])
ELASTIC["teams"][0]["quota"] = [{"instanceType": "ml.g5.2xlarge", "count": 2},
                                {"instanceType": BURST[0], "accelerators": 4},
                                {"instanceType": BURST[1], "accelerators": 4}]
ELASTIC["teams"][1]["quota"] = [{"instanceType": "ml.g5.2xlarge", "count": 2}]
ELASTIC["teams"][1]["contract"] = {
    "businessOwner": "b@example.com", "operationsOwner": "o@example.com", "costOwner": "c@example.com",
    "dataClassification": "internal", "approvedWorkloads": ["inference"], "reviewBy": "2027-06-30"}
ELASTIC["cluster"]["operators"] = ["training", "inference"]
ELASTIC["cluster"]["dependenciesChart"] = {"oci": "oci://111111111111.dkr.ecr.us-east-1.amazonaws.com/hyperpod-dependencies",
                                           "version": "0.1.0"}


Change = Callable[[dict], None]


def group(i: int, **kw: Any) -> Change:
    return lambda d: d["cluster"]["instanceGroups"][i].update(kw)


def cluster(**kw: Any) -> Change:
    return lambda d: d["cluster"].update(kw)


def drop(key: str) -> Change:
    return lambda d: d["cluster"].pop(key)


def quota(team: int, *entries: dict) -> Change:
    return lambda d: d["teams"][team].update(quota=list(entries))


def one_type(i: int) -> Change:
    """Group ``i`` as a group of its first type only."""
    def change(d: dict) -> None:
        g = d["cluster"]["instanceGroups"][i]
        g["instanceType"] = g.pop("instanceTypes")[0]
    return change


def slurm(d: dict) -> None:
    """The elastic cluster as a Slurm one (roles on every group; the EKS-only keys other rules refuse stay)."""
    d["cluster"]["orchestrator"] = "slurm"
    d["cluster"]["instanceGroups"][:0] = [
        {"name": "controller", "instanceType": "ml.m5.2xlarge", "count": 1, "slurm": {"nodeType": "Controller"}}]
    for g in d["cluster"]["instanceGroups"][1:]:
        g["slurm"] = {"nodeType": "Compute", "partition": g["name"]}


def findings(*changes: Change) -> list[str]:
    """Every finding of every rule (errors and warnings) on ELASTIC with ``changes``."""
    data = copy.deepcopy(ELASTIC)
    for change in changes:
        change(data)
    return [str(i) for i in check_spec(GovernanceSpec.model_validate(data), today=TODAY)]


# (id, rule, changes of a spec the rule accepts, changes of one it reports, the report)
CASES: list[tuple[str, str, list[Change], list[Change], str]] = [
    ("autoscaling without continuous provisioning", "HPG-K001", [], [drop("nodeProvisioningMode")],
     "HPG-K001 cluster.nodeProvisioningMode: is not Continuous, and HyperPod-managed Karpenter needs continuous "
     "provisioning (AWS: autoscaling prerequisites); set cluster.nodeProvisioningMode: Continuous, or remove "
     "cluster.autoScaling"),
    ("autoscaling without node recovery", "HPG-K001", [cluster(nodeRecovery="Automatic")],
     [cluster(nodeRecovery="None")],
     "HPG-K001 cluster.nodeRecovery: is not Automatic, and HyperPod-managed Karpenter needs automatic node recovery "
     "(AWS: autoscaling prerequisites) ('None'); set cluster.nodeRecovery: Automatic"),
    ("autoscaling on Slurm", "HPG-K002", [], [slurm],
     "HPG-K002 cluster.autoScaling: HyperPod-managed Karpenter scales EKS-orchestrated clusters"),
    ("an autoscaled group on Slurm", "HPG-K002", [], [slurm],
     "HPG-K002 cluster.instanceGroups[2].autoscale: HyperPod-managed Karpenter scales EKS-orchestrated clusters"),
    ("autoscaling on an existing cluster", "HPG-K002", [], [as_existing],
     "HPG-K002 cluster.autoScaling: turns autoscaling on for a cluster hyperpod-gov governs but did not create "
     "(cluster.existing) ('karpenter'); enable it where the cluster is managed: `aws sagemaker update-cluster "
     "--cluster-name NAME --auto-scaling Mode=Enable,AutoScalerType=Karpenter --cluster-role ROLE_ARN`"),
    ("an autoscaled group without the autoscaler", "HPG-K002", [],
     [drop("autoScaling"), drop("nodeProvisioningMode")],
     "HPG-K002 cluster.instanceGroups[1].autoscale: asks Karpenter to scale the group, and the cluster has no "
     "autoscaler (cluster.autoScaling) (True); set cluster.autoScaling: karpenter"),
    ("the autoscaler with no autoscaled group", "HPG-K012", [],
     [group(1, autoscale=False), group(2, autoscale=False)],
     "HPG-K012 cluster.autoScaling: is set, and no instance group has autoscale: true"),
    ("minCount on an autoscaled group", "HPG-K003", [group(0, minCount=2)], [group(1, minCount=2)],
     "HPG-K003 cluster.instanceGroups[1].minCount: is set on an autoscaled group, which starts at InstanceCount 0"),
    ("an autoscaled training plan group", "HPG-K004", [group(0, trainingPlanArn=PLAN_ARN)],
     [group(1, trainingPlanArn=PLAN_ARN)],
     "HPG-K004 cluster.instanceGroups[1].autoscale: asks Karpenter to scale a group on a training plan, which AWS "
     "does not support"),
    ("a Spot training plan group", "HPG-K004", [group(0, trainingPlanArn=PLAN_ARN)],
     [group(0, trainingPlanArn=PLAN_ARN, capacity="spot")],
     "HPG-K004 cluster.instanceGroups[0].capacity: asks for Spot capacity on a training plan"),
    ("deep health checks on an autoscaled group", "HPG-K005", [group(1, deepHealthChecks=[])],
     [group(1, deepHealthChecks=["InstanceStress"])],
     "HPG-K005 cluster.instanceGroups[1].deepHealthChecks: names deep health checks on an autoscaled group, which "
     "AWS does not support"),
    ("a flexible group of two accelerator counts", "HPG-K006", [],
     [group(2, instanceTypes=["ml.g5.12xlarge", "ml.g5.2xlarge"])],
     "HPG-K006 cluster.instanceGroups[2].instanceTypes[1]: brings 1 x nvidia.com/gpu per instance, and the group's "
     "first type ml.g5.12xlarge brings 4 x nvidia.com/gpu"),
    ("a flexible group of GPU and CPU types", "HPG-K006", [],
     [group(2, instanceTypes=["ml.g5.12xlarge", "ml.c5.2xlarge"])],
     "HPG-K006 cluster.instanceGroups[2].instanceTypes[1]: brings no accelerators per instance"),
    ("MIG on a flexible group", "HPG-K006", [], [group(2, mig={"profile": "mig-1g.10gb"})],
     "HPG-K006 cluster.instanceGroups[2].mig: partitions a flexible group's GPUs, and a MIG layout is per instance "
     "type"),
    ("an instance count on a flexible type", "HPG-K007", [],
     [quota(0, {"instanceType": BURST[0], "count": 1})],
     "HPG-K007 teams[0].quota[0].count: counts instances of ml.g5.12xlarge, which the flexible group burst may run "
     "as any of its types: an instance count per type would promise its instances under each type (1); give "
     "accelerators: 4 instead"),
    ("a borrow limit in instances on a flexible type", "HPG-K007", [],
     [lambda d: d["teams"][0]["sharing"].update(absoluteBorrowLimits=[{"instanceType": BURST[1], "count": 1}])],
     "HPG-K007 teams[0].sharing.absoluteBorrowLimits[0].count: counts instances of ml.g6e.12xlarge"),
    ("quotas on a flexible group's types over its accelerators", "HPG-K008",
     [quota(0, {"instanceType": BURST[0], "accelerators": 8})],
     [quota(0, {"instanceType": BURST[0], "accelerators": 8}, {"instanceType": BURST[1], "accelerators": 4})],
     "HPG-K008 teams[*].quota[ml.g5.12xlarge|ml.g6e.12xlarge]: quotas on ml.g5.12xlarge and ml.g6e.12xlarge add up "
     "to 12 accelerators (team-a 8 on ml.g5.12xlarge, team-a 4 on ml.g6e.12xlarge), but the groups that run these "
     "types hold 8 in all (burst (2 x ml.g5.12xlarge|ml.g6e.12xlarge)): a flexible group's instances count once, "
     "not once per type (12); lower these quotas by 4 accelerators together, or add instances"),
    ("a reserved quota beyond the kept nodes", "HPG-K009", [quota(1, {"instanceType": "ml.g5.2xlarge", "count": 4})],
     [quota(1, {"instanceType": "ml.g5.2xlarge", "count": 6})],
     "HPG-K009 teams[1].quota[0]: reserves 6 instances of ml.g5.2xlarge for team-b (DontLend), and 4 are guaranteed "
     "(4 On-Demand instances that stay): the rest (2) exists only after a scale-up, on Spot or as a flexible group's (groups beyond the "
     "guarantee: scale: 4 elastic) (6); lower the quota to 4"),
    ("a reserved quota beyond minCount", "HPG-K009",
     [group(0, minCount=3), quota(1, {"instanceType": "ml.g5.2xlarge", "count": 3})],
     [group(0, minCount=3), quota(1, {"instanceType": "ml.g5.2xlarge", "count": 4})],
     "HPG-K009 teams[1].quota[0]: reserves 4 instances of ml.g5.2xlarge for team-b (DontLend), and 3 are guaranteed "
     "(3 On-Demand instances that stay): the rest (1) exists only after a scale-up, on Spot or as a flexible group's (groups beyond the "
     "guarantee: base: 1 elastic, scale: 4 elastic)"),
    ("a reserved quota on a flexible group", "HPG-K009", [],
     [quota(1, {"instanceType": BURST[0], "accelerators": 4}), quota(0)],
     "HPG-K009 teams[1].quota[0]: reserves 4 accelerators of ml.g5.12xlarge for team-b (DontLend), and 0 are "
     "guaranteed (0 On-Demand instances that stay): the rest (4) exists only after a scale-up, on Spot or as a flexible group's (groups "
     "beyond the guarantee: burst: 2 Spot) (4); reserve capacity on a type with On-Demand instances that stay"),
    ("a reserved quota on an On-Demand flexible group", "HPG-K009", [group(2, capacity="on-demand", autoscale=False)],
     [group(2, capacity="on-demand", autoscale=False), quota(1, {"instanceType": BURST[0], "accelerators": 4}),
      quota(0)],
     "HPG-K009 teams[1].quota[0]: reserves 4 accelerators of ml.g5.12xlarge for team-b (DontLend), and 0 are "
     "guaranteed (0 On-Demand instances that stay): the rest (4) exists only after a scale-up, on Spot or as a "
     "flexible group's (groups beyond the guarantee: burst: 2 kept On-Demand shared by ml.g5.12xlarge, "
     "ml.g6e.12xlarge)"),
    ("inference on Spot only", "HPG-K010", [], [quota(1, {"instanceType": BURST[0], "accelerators": 4}), quota(0)],
     "HPG-K010 teams[1].quota: puts all of team-b's quota on Spot capacity (ml.g5.12xlarge), and its contract "
     "approves inference: EC2 reclaims Spot nodes with at most two minutes' notice (not guaranteed), evicting the "
     "endpoints on them ('ml.g5.12xlarge'); give the team quota on an On-Demand group too"),
    ("an AMI release on Slurm", "HPG-K011", [group(0, image={"releaseVersion": "1.2.3"})],
     [slurm, group(1, image={"releaseVersion": "1.2.3"})],
     "HPG-K011 cluster.instanceGroups[1].image.releaseVersion: pins a HyperPod AMI release, which AWS supports for "
     "EKS-orchestrated clusters only (ImageReleaseVersion) ('1.2.3'); remove image, or give imageId"),
    ("automatic patching on Slurm", "HPG-K011", [group(0, patching={"auto": "whenIdle"})],
     [slurm, group(1, patching={"auto": "whenIdle"})],
     "HPG-K011 cluster.instanceGroups[1].patching.auto: turns on automatic patching, which AWS offers for EKS "
     "clusters only (AutoPatchConfig)"),
    ("batch updates on Slurm", "HPG-K011", [group(0, patching={"schedule": "cron(0 2 ? * SUN *)",
                                                               "batch": {"percent": 10}})],
     [slurm, group(1, patching={"schedule": "cron(0 2 ? * SUN *)", "batch": {"count": 2}})],
     "HPG-K011 cluster.instanceGroups[1].patching.batch: updates the nodes in batches, which AWS offers for EKS "
     "clusters only (RollingUpdatePolicy) (a mapping with keys count); remove batch"),
    ("autoscaling without the health agent's chart", "HPG-K015", [], [drop("dependenciesChart")],
     "HPG-K015 cluster.dependenciesChart: is not set, and autoscaling needs the health-monitoring agent it installs"),
    ("a shared pool beside a flexible group", "HPG-K013", [one_type(2),
                                                           quota(0, {"instanceType": "ml.g5.2xlarge", "count": 2}),
                                                           lambda d: d.update(sharedPool={"fairShareWeight": 10})],
     [lambda d: d.update(sharedPool={"fairShareWeight": 10})],
     "HPG-K013 sharedPool: takes what no team owns per instance type, and instance group burst may run its 2 "
     "instances as any of ml.g5.12xlarge, ml.g6e.12xlarge"),
    ("a restricted label domain on an autoscaled group", "HPG-K014", [group(1, labels={"node.kubernetes.io/pool": "a"})],
     [group(1, labels={"topology.k8s.io/pool": "a"})],
     "HPG-K014 cluster.instanceGroups[1].labels: uses the label domain topology.k8s.io, which Karpenter's NodePool "
     "refuses on the nodes it creates"),
]


@pytest.mark.parametrize("rule_id, accepted, reported, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_rule_accepts_one_spec_and_reports_another(rule_id, accepted, reported, message):
    assert not [f for f in findings(*accepted) if f.startswith(rule_id)]
    found = [f for f in findings(*reported) if f.startswith(rule_id)]
    assert any(message in f for f in found), found
    assert RULES.get(rule_id) is not None


def test_every_elastic_rule_has_a_case_and_none_fires_on_the_base_spec():
    ids = {r.id for r in RULES if r.id.startswith("HPG-K")}
    assert ids == {c[1] for c in CASES}
    assert not [f for f in findings() if f.startswith("HPG-K")]


def test_the_levels_are_as_the_issue_decided():
    warnings = {r.id for r in RULES if r.id.startswith("HPG-K") and r.level == "warning"}
    assert warnings == {"HPG-K009", "HPG-K010", "HPG-K012", "HPG-K015"}


def test_reserved_quotas_together_beyond_the_kept_nodes_warn_once_for_the_type():
    """Two DontLend teams each within the 4 kept nodes, 3 + 8 GPUs' worth (2 instances) = 5 instances together."""
    def second_reserved(count: int) -> Change:
        def change(d: dict) -> None:
            d["teams"][0].update(quota=[{"instanceType": "ml.g5.2xlarge", "accelerators": count}],
                                 sharing={"strategy": "DontLend"})
            d["teams"][1].update(quota=[{"instanceType": "ml.g5.2xlarge", "count": 2}])
        return change
    assert not [f for f in findings(second_reserved(2)) if f.startswith("HPG-K009")]
    assert [f for f in findings(second_reserved(3)) if f.startswith("HPG-K009")] == [
        "HPG-K009 teams[*].quota[ml.g5.2xlarge]: the DontLend teams reserve 5 instances of ml.g5.2xlarge together "
        "(team-a 3, team-b 2), and 4 are guaranteed: each fits alone, together they depend on a scale-up, on Spot or "
        "on a flexible group (5); keep their reservations within 4 instances together, or keep more instances"]


def test_flexible_quotas_are_checked_over_every_set_of_linked_types():
    """Two flexible groups sharing a type: the quotas on all three types fit the two groups' 16 GPUs, but the
    quotas on the two types only the first group (and the shared one) can run over its 8 are reported."""
    def two_groups(d: dict) -> None:
        d["cluster"]["instanceGroups"].append({"name": "burst-b", "instanceTypes": ["ml.g6e.12xlarge",
                                                                                    "ml.g6.12xlarge"],
                                               "count": 2, "capacity": "spot", "autoscale": True})
    ok = findings(two_groups, quota(0, {"instanceType": "ml.g5.12xlarge", "accelerators": 4},
                                    {"instanceType": "ml.g6.12xlarge", "accelerators": 8},
                                    {"instanceType": "ml.g6e.12xlarge", "accelerators": 4}))
    assert not [f for f in ok if f.startswith("HPG-K008")]
    bad = findings(two_groups, quota(0, {"instanceType": "ml.g5.12xlarge", "accelerators": 8},
                                     {"instanceType": "ml.g6.12xlarge", "accelerators": 8},
                                     {"instanceType": "ml.g6e.12xlarge", "accelerators": 4}))
    k008 = [f for f in bad if f.startswith("HPG-K008")]
    # Each type alone fits (8 <= 8, 8 <= 8, 4 <= 16), and so does each pair (g5 + g6: 16 <= 16 of both groups;
    # g5 + g6e, g6 + g6e: 12 <= 16); all three ask 20 of the two groups' 16: the one minimal set over.
    assert len(k008) == 1 and "add up to 20 accelerators" in k008[0] and "hold 16 in all" in k008[0], k008


def test_the_elastic_example_has_no_warning():
    spec = load_spec(EXAMPLES / "elastic.yaml", today=TODAY)
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.plan.invariants import plan_warnings
    found = [str(i) for i in check_spec(spec, today=TODAY)] + [str(i) for i in plan_warnings(build_plan(spec))]
    assert found == []


# --- the elastic members, in every region's CloudFormation and in the API ------------------------------------

ELASTIC_GROUP_MEMBERS = {"MinInstanceCount", "CapacityRequirements", "InstanceRequirements", "ImageId",
                         "ImageReleaseVersion", "ScheduledUpdateConfig", "AutoPatchConfig"}
ELASTIC_CLUSTER_MEMBERS = {"AutoScaling", "ClusterRole"}


def test_the_elastic_keys_are_options_hpg_d002_holds_to_cloudformation():
    assert ELASTIC_GROUP_MEMBERS <= members(GROUP_OPTIONS)
    assert ELASTIC_CLUSTER_MEMBERS <= members(CLUSTER_OPTIONS)


def test_every_cloudformation_region_and_create_cluster_have_the_elastic_members():
    base = Path(cfnlint.__file__).parent / "data" / "schemas"
    regions = 0
    for provider in sorted((base / "providers").glob("*.json")):
        ref = json.loads(provider.read_text()).get("AWS::SageMaker::Cluster")
        if ref:
            schema = json.loads((base / "resources" / f"{ref}.json").read_text())
            assert ELASTIC_GROUP_MEMBERS <= set(schema["definitions"]["ClusterInstanceGroup"]["properties"])
            assert ELASTIC_CLUSTER_MEMBERS <= set(schema["properties"])
            regions += 1
    assert regions > 20
    shapes = botocore.loaders.Loader().load_service_model("sagemaker", "service-2")["shapes"]
    assert ELASTIC_GROUP_MEMBERS <= set(shapes["ClusterInstanceGroupSpecification"]["members"])
    assert ELASTIC_CLUSTER_MEMBERS <= set(shapes["CreateClusterRequest"]["members"])


def test_quotas_on_a_flexible_group_of_cpu_types_fit_together_in_vcpu_and_memory():
    """2 nodes of ml.c5.2xlarge (8 vCPU, 16 GiB) or ml.m5.2xlarge (8 vCPU, 32 GiB): 16 vCPU in all, 64 GiB at most."""
    def cpu(d: dict) -> None:
        d["cluster"]["instanceGroups"].append({"name": "cpu", "instanceTypes": ["ml.c5.2xlarge", "ml.m5.2xlarge"],
                                               "count": 2})
    fits = quota(0, {"instanceType": "ml.c5.2xlarge", "vcpu": 8, "memoryGib": 16},
                 {"instanceType": "ml.m5.2xlarge", "vcpu": 8, "memoryGib": 32})
    assert not [f for f in findings(cpu, fits) if f.startswith("HPG-K008")]
    over = quota(0, {"instanceType": "ml.c5.2xlarge", "vcpu": 12, "memoryGib": 16},
                 {"instanceType": "ml.m5.2xlarge", "vcpu": 12, "memoryGib": 32})
    assert [f.split("; ")[0] for f in findings(cpu, over) if f.startswith("HPG-K008")] == [
        "HPG-K008 teams[*].quota[ml.c5.2xlarge|ml.m5.2xlarge]: quotas on ml.c5.2xlarge and ml.m5.2xlarge add up to "
        "24 vCPU (team-a 12 on ml.c5.2xlarge, team-a 12 on ml.m5.2xlarge), but the groups that run these types hold "
        "16 in all (cpu (2 x ml.c5.2xlarge|ml.m5.2xlarge)): a flexible group's instances count once, not once per "
        "type (24)"]
