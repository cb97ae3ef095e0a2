"""The service options of instance groups and the cluster (issue 18): valid and invalid, table-driven, each
problem with its message; the region facts checked against cfn-lint's schemas and botocore's model."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import botocore.loaders
import cfnlint
import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import SpecError, parse_spec
from hyperpod_gov.spec.cluster_options import (CLOUDFORMATION_DEEP_HEALTH_CHECKS, CLUSTER_OPTIONS, CLUSTER_REGIONS,
                                               GROUP_OPTIONS, members)
from tests.conftest import BASE, TODAY

PLAN_ARN = "arn:aws:sagemaker:us-east-1:111111111111:training-plan/p5-reserved"
KEY_ARN = "arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def spec_with(*changes: Callable[[dict], None]) -> dict:
    data = copy.deepcopy(BASE)
    for change in changes:
        change(data)
    return data


def group(i: int, **kw: Any) -> Callable[[dict], None]:
    return lambda d: d["cluster"]["instanceGroups"][i].update(kw)


def cluster(**kw: Any) -> Callable[[dict], None]:
    return lambda d: d["cluster"].update(kw)


def region(name: str) -> Callable[[dict], None]:
    def change(d: dict) -> None:
        d["accounts"]["capacity"]["region"] = name
        for c in d["accounts"]["consumers"]:
            c["region"] = name
    return change


EVERY_OPTION = group(
    0, trainingPlanArn=PLAN_ARN, subnetIds=["subnet-0bbbbbbbbbbbbbbbb", "subnet-0aaaaaaaaaaaaaaaa"],
    labels={"example.com/pool": "reserved", "tier": "a"},
    taints=[{"key": "example.com/reserved", "value": "p5", "effect": "NoSchedule"},
            {"key": "nvidia.com/gpu", "effect": "NoExecute"}],
    lifecycle={"sourceS3Uri": "s3://acme-lifecycle/eks/p5/", "onCreate": "on_create.sh"},
    volumeSizeGb=500, volumeKmsKeyId=KEY_ARN, deepHealthChecks=["InstanceStress"], threadsPerCore=1,
)


def test_every_option_reaches_the_plan():
    plan = build_plan(parse_spec(spec_with(EVERY_OPTION, cluster(nodeRecovery="None",
                                                                 nodeProvisioningMode="Continuous")), today=TODAY))
    g = next(g for g in plan.instance_groups if g.name == "gpu")
    assert g.training_plan_arn == PLAN_ARN
    assert g.subnet_ids == ("subnet-0aaaaaaaaaaaaaaaa", "subnet-0bbbbbbbbbbbbbbbb")  # sorted: no order in the API
    assert g.kubernetes_labels == {"example.com/pool": "reserved", "tier": "a"}
    assert [(t.key, t.value, t.effect) for t in g.taints] == [("example.com/reserved", "p5", "NoSchedule"),
                                                              ("nvidia.com/gpu", None, "NoExecute")]
    assert g.lifecycle is not None and (g.lifecycle.bucket, g.lifecycle.prefix) == ("acme-lifecycle", "eks/p5/")
    assert g.volume_kms_key_id == KEY_ARN and g.deep_health_checks == ("InstanceStress",) and g.threads_per_core == 1
    assert (plan.cluster.node_recovery, plan.cluster.node_provisioning_mode) == ("None", "Continuous")


def test_deep_health_checks_default_by_type_and_may_be_turned_off():
    cpu = {"name": "cpu", "instanceType": "ml.m5.2xlarge", "count": 1}
    plan = build_plan(parse_spec(spec_with(lambda d: d["cluster"]["instanceGroups"].append(cpu)), today=TODAY))
    checks = {g.name: g.deep_health_checks for g in plan.instance_groups}
    assert checks == {"gpu": ("InstanceStress", "InstanceConnectivity"),
                      "small": ("InstanceStress", "InstanceConnectivity"), "cpu": ()}
    plan = build_plan(parse_spec(spec_with(group(0, deepHealthChecks=[])), today=TODAY))
    assert next(g for g in plan.instance_groups if g.name == "gpu").deep_health_checks == ()


def test_labels_merge_with_the_mig_label():
    plan = build_plan(parse_spec(spec_with(group(0, mig={"profile": "mig-1g.10gb"}, labels={"tier": "a"}),
                                           lambda d: d["teams"][0].update(quota=[
                                               {"instanceType": "ml.p5.48xlarge",
                                                "partitions": {"profile": "mig-1g.10gb", "count": 7}}])),
                                 today=TODAY))
    g = next(g for g in plan.instance_groups if g.name == "gpu")
    assert g.kubernetes_labels == {"nvidia.com/mig.config": "all-1g.10gb", "tier": "a"}


INVALID = [
    ("training plan ARN", [group(0, trainingPlanArn="arn:aws:sagemaker:us-east-1:111111111111:cluster/x")],
     "cluster.instanceGroups[0].trainingPlanArn: is not a training plan ARN"),
    ("training plan of another region", [group(0, trainingPlanArn=PLAN_ARN.replace("us-east-1", "us-west-2"))],
     "HPG-D003 cluster.instanceGroups[0].trainingPlanArn: reserves capacity in 111111111111 us-west-2, not in the "
     "capacity account 111111111111 us-east-1"),
    ("training plan of another account", [group(0, trainingPlanArn=PLAN_ARN.replace("111111111111", "333333333333"))],
     "reserves capacity in 333333333333 us-east-1"),
    ("subnet id", [group(0, subnetIds=["subnet-xyz"])],
     "cluster.instanceGroups[0].subnetIds: 'subnet-xyz' is not a subnet id"),
    ("subnet twice", [group(0, subnetIds=["subnet-0aaaaaaaaaaaaaaaa"] * 2)], "lists a subnet twice"),
    ("taint effect", [group(0, taints=[{"key": "a", "effect": "NoRun"}])],
     "cluster.instanceGroups[0].taints[0].effect: "),
    ("taint key", [group(0, taints=[{"key": "-bad", "effect": "NoSchedule"}])],
     "'-bad' is not a Kubernetes taint key"),
    ("taint value", [group(0, taints=[{"key": "a", "value": "x" * 64, "effect": "NoSchedule"}])],
     "is not a Kubernetes taint value"),
    ("taint twice", [group(0, taints=[{"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "b",
                                                                            "effect": "NoSchedule"}])],
     "taints 'a' with NoSchedule twice"),
    ("label key", [group(0, labels={"Example.com/x": "a"})], "'Example.com/x' is not a Kubernetes label key"),
    ("label name too long", [group(0, labels={"a" * 64: "b"})], "is not a Kubernetes label key"),
    ("label value", [group(0, labels={"tier": "a b"})], "'a b' is not a Kubernetes label value"),
    ("MIG label", [group(0, labels={"nvidia.com/mig.config": "all-1g.10gb"})],
     "labels: sets nvidia.com/mig.config, which the group's MIG layout owns"),
    ("HyperPod's labels", [group(0, labels={"sagemaker.amazonaws.com/node-health-status": "x"})],
     "is under a prefix HyperPod sets on its nodes itself"),
    ("lifecycle URI", [group(0, lifecycle={"sourceS3Uri": "https://example.com/x", "onCreate": "a.sh"})],
     "cluster.instanceGroups[0].lifecycle.sourceS3Uri: is not an s3://bucket/prefix URI"),
    ("lifecycle bucket wildcard", [group(0, lifecycle={"sourceS3Uri": "s3://acme/*", "onCreate": "a.sh"})],
     "is not an s3://bucket/prefix URI"),
    ("lifecycle entrypoint", [group(0, lifecycle={"sourceS3Uri": "s3://acme-lc/x/", "onCreate": "../a.sh"})],
     "cluster.instanceGroups[0].lifecycle.onCreate: is not a script file name"),
    ("KMS key", [group(0, volumeSizeGb=100, volumeKmsKeyId="my key")],
     "cluster.instanceGroups[0].volumeKmsKeyId: is not a KMS key id, key ARN or alias"),
    ("KMS key without a volume", [group(0, volumeKmsKeyId=KEY_ARN)],
     "cluster.instanceGroups[0]: volumeKmsKeyId encrypts the data volume, and the group has none"),
    ("KMS key of another region", [group(0, volumeSizeGb=100, volumeKmsKeyId=KEY_ARN.replace("us-east-1", "eu-west-1"))],
     "HPG-D003 cluster.instanceGroups[0].volumeKmsKeyId: is a key of eu-west-1"),
    ("threads per core", [group(0, threadsPerCore=4)], "cluster.instanceGroups[0].threadsPerCore: "),
    ("deep health check name", [group(0, deepHealthChecks=["Stress"])],
     "cluster.instanceGroups[0].deepHealthChecks[0]: "),
    ("deep health check twice", [group(0, deepHealthChecks=["InstanceStress", "InstanceStress"])],
     "lists a check twice"),
    ("deep health check CloudFormation lacks", [group(0, deepHealthChecks=["MultiNodeTrainingValidation"])],
     "HPG-D002 cluster.instanceGroups[0].deepHealthChecks[0]: is a deep health check of the SageMaker API that "
     "CloudFormation's AWS::SageMaker::Cluster does not accept"),
    ("per-group node recovery", [group(0, nodeRecovery="None")],
     "cluster.instanceGroups[0]: sets nodeRecovery, but HyperPod recovers nodes cluster-wide"),
    ("node recovery value", [cluster(nodeRecovery="Manual")], "cluster.nodeRecovery: "),
    ("provisioning mode value", [cluster(nodeProvisioningMode="Fast")], "cluster.nodeProvisioningMode: "),
    ("a new cluster in a region without the resource", [region("eu-west-3")],
     "HPG-R001 accounts.capacity.region: has no AWS::SageMaker::Cluster in its CloudFormation, so the new cluster "
     "cannot be declared there (synth would fail with F3006) ('eu-west-3'); use one of ap-northeast-1"),
    ("a region AWS does not have", [region("us-east-9")],
     "accounts.capacity.region: is not a region where AWS offers SageMaker (botocore's endpoint data) ('us-east-9'); "
     "use one of us-east-2, us-east-1"),
    ("a region of another partition", [region("cn-north-1")],
     "HPG-R001 accounts.capacity.region: is in the aws-cn partition; hyperpod-gov builds and tests its stacks for "
     "the aws partition only"),
    ("a GovCloud region", [region("us-gov-west-1")], "HPG-R001 accounts.capacity.region: is in the aws-us-gov"),
]


@pytest.mark.parametrize("changes, message", [(c, m) for _, c, m in INVALID], ids=[i for i, _, _ in INVALID])
def test_invalid_options_are_reported_with_path_value_and_fix(changes, message):
    with pytest.raises(SpecError) as raised:
        parse_spec(spec_with(*changes), today=TODAY)
    text = "\n".join(str(i) for i in raised.value.issues)
    assert message in text
    assert "Traceback" not in text


def test_the_options_are_accepted_where_cloudformation_has_them():
    parse_spec(spec_with(EVERY_OPTION, cluster(nodeProvisioningMode="Continuous")), today=TODAY)


# --- the facts, against cfn-lint's schemas and botocore's model ------------------------------------------------

def _cfn_cluster_schemas() -> dict[str, dict]:
    base = Path(cfnlint.__file__).parent / "data" / "schemas"
    out = {}
    for provider in sorted((base / "providers").glob("*.json")):
        ref = json.loads(provider.read_text()).get("AWS::SageMaker::Cluster")
        if ref:
            out[provider.stem] = json.loads((base / "resources" / f"{ref}.json").read_text())
    return out


def test_cluster_regions_and_members_match_cloudformation():
    schemas = _cfn_cluster_schemas()
    assert set(schemas) == CLUSTER_REGIONS
    for name, schema in schemas.items():
        group_members = schema["definitions"]["ClusterInstanceGroup"]["properties"]
        assert members(GROUP_OPTIONS) <= set(group_members), name
        assert members(CLUSTER_OPTIONS) <= set(schema["properties"]), name
        d = schema["definitions"]
        assert set(d["DeepHealthCheckType"]["enum"]) == CLOUDFORMATION_DEEP_HEALTH_CHECKS, name
        assert d["ClusterKubernetesTaint"]["properties"]["Effect"]["enum"] == ["NoSchedule", "PreferNoSchedule",
                                                                               "NoExecute"]
        assert schema["properties"]["NodeRecovery"]["enum"] == ["Automatic", "None"]
        assert schema["properties"]["NodeProvisioningMode"]["enum"] == ["Continuous"]
        threads = group_members["ThreadsPerCore"]
        assert (threads["minimum"], threads["maximum"]) == (1, 2)
        assert "VolumeKmsKeyId" in d["ClusterEbsVolumeConfig"]["properties"]
        assert set(d["ClusterLifeCycleConfig"]["properties"]) >= {"SourceS3Uri", "OnCreate"}
        # OverrideVpcConfig needs the security groups too: the construct keeps the node security group.
        assert d["VpcConfig"]["required"] == ["SecurityGroupIds", "Subnets"]


def test_members_and_values_match_the_sagemaker_api():
    shapes = botocore.loaders.Loader().load_service_model("sagemaker", "service-2")["shapes"]
    spec_members = shapes["ClusterInstanceGroupSpecification"]["members"]
    assert members(GROUP_OPTIONS) <= set(spec_members)
    assert members(CLUSTER_OPTIONS) <= set(shapes["CreateClusterRequest"]["members"])
    # What DescribeCluster returns, which drift compares (plan/tables.py INSTANCE_GROUP).
    details = shapes["ClusterInstanceGroupDetails"]["members"]
    assert {"TrainingPlanArn", "OverrideVpcConfig", "ThreadsPerCore", "OnStartDeepHealthChecks",
            "KubernetesConfig", "LifeCycleConfig"} <= set(details)
    assert set(shapes["ClusterKubernetesConfigDetails"]["members"]) >= {"DesiredLabels", "DesiredTaints"}
    assert {"NodeRecovery", "NodeProvisioningMode"} <= set(shapes["DescribeClusterResponse"]["members"])
    api_checks = set(shapes["DeepHealthCheckType"]["enum"])
    assert CLOUDFORMATION_DEEP_HEALTH_CHECKS < api_checks  # the API has more: HPG-D002 refuses those
    from typing import get_args

    from hyperpod_gov.spec.cluster import DeepHealthCheck
    assert set(get_args(DeepHealthCheck)) == api_checks
    assert shapes["ClusterKubernetesTaintEffect"]["enum"] == ["NoSchedule", "PreferNoSchedule", "NoExecute"]


# --- an existing VPC -------------------------------------------------------------------------------------------

VPC = {"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": ["subnet-0aaaaaaaaaaaaaaaa", "subnet-0bbbbbbbbbbbbbbbb"],
       "cidr": "10.20.0.0/16", "createEndpoints": False}


def vpc(**kw: Any) -> Callable[[dict], None]:
    def change(d: dict) -> None:
        d["cluster"]["vpc"] = {k: v for k, v in {**VPC, **kw}.items() if v is not None}
    return change


def test_an_existing_vpc_reaches_the_plan():
    plan = build_plan(parse_spec(spec_with(vpc()), today=TODAY))
    n = plan.network
    assert n.existing is not None and n.existing.vpc_id == "vpc-0123456789abcdef0"
    assert n.existing.private_subnet_ids == tuple(VPC["privateSubnetIds"])
    assert n.cidr == "10.20.0.0/16" and n.availability_zones == ("us-east-1a", "us-east-1b")
    assert n.interface_endpoints == () and not n.flow_logs and not n.creates_vpc
    plan = build_plan(parse_spec(spec_with(vpc(createEndpoints=True, createFlowLogs=True)), today=TODAY))
    assert len(plan.network.interface_endpoints) == 11 and plan.network.flow_logs


VPC_INVALID = [
    ("vpc id", [vpc(vpcId="vpc-1")], "cluster.vpc.vpcId: 'vpc-1' is not a VPC id"),
    ("one subnet", [vpc(privateSubnetIds=["subnet-0aaaaaaaaaaaaaaaa"])],
     "cluster.vpc: uses the existing VPC vpc-0123456789abcdef0 but does not give privateSubnetIds (at least two"),
    ("no cidr", [vpc(cidr=None)], "does not give cidr"),
    ("no endpoint choice", [vpc(createEndpoints=None)], "does not give createEndpoints"),
    ("maxAzs", [vpc(maxAzs=3)], "cluster.vpc: sets maxAzs for an existing VPC"),
    ("azs per subnet", [vpc(availabilityZones=["us-east-1a"])], "lists 1 availability zones for 2 private subnets"),
    ("subnet id", [vpc(privateSubnetIds=["subnet-0aaaaaaaaaaaaaaaa", "sn-2"])],
     "cluster.vpc.privateSubnetIds: 'sn-2' is not a subnet id"),
    ("subnets without a VPC", [lambda d: d["cluster"].update(vpc={"privateSubnetIds": VPC["privateSubnetIds"]})],
     "cluster.vpc: sets privateSubnetIds without vpcId"),
    ("endpoints without a VPC", [lambda d: d["cluster"].update(vpc={"createEndpoints": True})],
     "cluster.vpc: sets createEndpoints without vpcId"),
    ("azs of another region", [vpc(availabilityZones=["eu-west-1a", "eu-west-1b"])],
     "HPG-E004 cluster.vpc.availabilityZones[0]: is not in the capacity region us-east-1"),
]


@pytest.mark.parametrize("changes, message", [(c, m) for _, c, m in VPC_INVALID], ids=[i for i, _, _ in VPC_INVALID])
def test_invalid_existing_vpcs_are_reported(changes, message):
    with pytest.raises(SpecError) as raised:
        parse_spec(spec_with(*changes), today=TODAY)
    assert message in "\n".join(str(i) for i in raised.value.issues)


# --- tags --------------------------------------------------------------------------------------------------------

def test_team_tags_override_the_top_level_ones_in_the_plan():
    data = spec_with(lambda d: d.update(tags={"acme:cost-center": "platform", "acme:env": "prod"}),
                     lambda d: d["teams"][0].update(tags={"acme:cost-center": "research"}))
    plan = build_plan(parse_spec(data, today=TODAY))
    assert plan.tags == (("acme:cost-center", "platform"), ("acme:env", "prod"))
    assert plan.team("team-a").tags == (("acme:cost-center", "research"), ("acme:env", "prod"))
    assert plan.team("team-b").tags == plan.tags


TAGS_INVALID = [
    ("generated prefix", [lambda d: d.update(tags={"hyperpod-gov:spec": "x"})],
     "tags: 'hyperpod-gov:spec' is under hyperpod-gov:, which hyperpod-gov's own tags use"),
    ("aws prefix", [lambda d: d["teams"][0].update(tags={"aws:cost": "x"})],
     "teams[0].tags: 'aws:cost' is under aws:, which AWS reserves"),
    ("key charset", [lambda d: d.update(tags={"cost#center": "x"})], "'cost#center' is not a tag key"),
    ("value too long", [lambda d: d.update(tags={"k": "v" * 257})], "the value of 'k' is not a tag value"),
    ("too many team tags", [lambda d: d["teams"][0].update(tags={f"k{i}": "v" for i in range(11)})],
     "teams[0].tags: has 11 tags"),
]


@pytest.mark.parametrize("changes, message", [(c, m) for _, c, m in TAGS_INVALID], ids=[i for i, _, _ in TAGS_INVALID])
def test_invalid_tags_are_reported(changes, message):
    with pytest.raises(SpecError) as raised:
        parse_spec(spec_with(*changes), today=TODAY)
    assert message in "\n".join(str(i) for i in raised.value.issues)


# --- drift and import over the rows ----------------------------------------------------------------------------

def _described(g) -> dict:
    """The group as DescribeCluster reports it after a correct deploy (ClusterInstanceGroupDetails)."""
    return {
        "InstanceGroupName": g.name, "InstanceType": g.instance_type, "TargetCount": g.count, "CurrentCount": g.count,
        "TrainingPlanArn": g.training_plan_arn, "ThreadsPerCore": g.threads_per_core,
        "OverrideVpcConfig": {"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": list(reversed(g.subnet_ids))},
        "OnStartDeepHealthChecks": list(g.deep_health_checks),
        "LifeCycleConfig": {"SourceS3Uri": g.lifecycle.source_s3_uri, "OnCreate": g.lifecycle.on_create},
        "KubernetesConfig": {"CurrentLabels": {}, "DesiredLabels": dict(g.kubernetes_labels),
                             "DesiredTaints": [{"Effect": t.effect, "Key": t.key, **({"Value": t.value} if t.value
                                                                                     else {})} for t in g.taints]},
    }


DRIFTS = [
    ("training plan", lambda live: live.update(TrainingPlanArn=None), "TrainingPlanArn"),
    ("threads per core", lambda live: live.update(ThreadsPerCore=2), "ThreadsPerCore"),
    ("subnets", lambda live: live["OverrideVpcConfig"].update(Subnets=["subnet-0ccccccccccccccccc"]),
     "OverrideVpcConfig.Subnets"),
    ("labels", lambda live: live["KubernetesConfig"]["DesiredLabels"].pop("tier"), "KubernetesConfig.DesiredLabels"),
    ("taints", lambda live: live["KubernetesConfig"]["DesiredTaints"].pop(), "KubernetesConfig.DesiredTaints"),
    ("deep health checks", lambda live: live.update(OnStartDeepHealthChecks=[]), "OnStartDeepHealthChecks"),
    ("lifecycle scripts", lambda live: live["LifeCycleConfig"].update(SourceS3Uri="s3://other/x/"),
     "LifeCycleConfig.SourceS3Uri"),
]


def _options_group():
    plan = build_plan(parse_spec(spec_with(EVERY_OPTION), today=TODAY))
    return next(g for g in plan.instance_groups if g.name == "gpu")


def test_a_correct_deploy_of_every_option_shows_no_drift():
    from hyperpod_gov.plan.fields import compare
    from hyperpod_gov.plan.tables import INSTANCE_GROUP

    g = _options_group()
    assert compare(INSTANCE_GROUP, g, _described(g)) == []


@pytest.mark.parametrize("change, member", [(c, m) for _, c, m in DRIFTS], ids=[i for i, _, _ in DRIFTS])
def test_drift_names_the_changed_option(change, member):
    from hyperpod_gov.plan.fields import compare
    from hyperpod_gov.plan.tables import INSTANCE_GROUP

    g = _options_group()
    live = _described(g)
    change(live)
    assert [d.field for d in compare(INSTANCE_GROUP, g, live)] == [member]


def test_import_maps_the_flat_options_back():
    from hyperpod_gov.plan.fields import imported
    from hyperpod_gov.plan.tables import INSTANCE_GROUP

    g = _options_group()
    values = imported(INSTANCE_GROUP, _described(g))
    assert values["trainingPlanArn"] == PLAN_ARN and values["threadsPerCore"] == 1
    assert "labels" not in values  # nested: the importer writes flat values only (reported as missing)


def test_the_regional_instance_types_are_cfn_lints_current_data():
    """assets/regions/cluster_instance_types.json is cfn-lint's E3644 data for every aws-partition region of
    CLUSTER_REGIONS, copied whole; regenerate it from the pinned cfn-lint when this fails."""
    from hyperpod_gov.spec._base import sagemaker_regions
    from hyperpod_gov.spec.cluster_options import _cluster_instance_types

    data = json.loads((Path(cfnlint.__file__).parent / "data" / "schemas" / "extensions" / "aws_sagemaker_cluster"
                       / "instancetype_enum.json").read_text())
    ours = _cluster_instance_types()
    wanted = {r for r in CLUSTER_REGIONS if sagemaker_regions().get(r) == "aws"}
    assert set(ours["regions"]) == wanted
    for region in wanted:
        assert ours["regions"][region] == sorted(data[region]["enum"]), region
    assert ours["source"].startswith(f"cfn-lint {cfnlint.version.__version__}'s")


@pytest.mark.parametrize("region_name, instance_type, accepted", [
    ("us-east-1", "ml.p6-b200.48xlarge", True),   # CDK's built-in data lacks it; cfn-lint's current data has it
    ("us-east-2", "ml.p6-b300.48xlarge", False),  # offered in us-east-1, us-west-2, ... but not us-east-2
    ("us-east-1", "ml.p6e-gb200.36xlarge", False),  # no region's CloudFormation offers it
])
def test_instance_types_are_checked_against_the_regions_data(region_name, instance_type, accepted):
    def types(d: dict) -> None:
        d["cluster"]["instanceGroups"] = [{"name": "g", "instanceType": instance_type, "count": 1}]
        for t in d["teams"]:
            t["quota"] = []
            t.pop("sharing", None)
        d.pop("sharedPool", None)
    data = spec_with(region(region_name), types)
    if accepted:
        parse_spec(data, today=TODAY)
        return
    with pytest.raises(SpecError) as raised:
        parse_spec(data, today=TODAY)
    text = "\n".join(str(i) for i in raised.value.issues)
    assert f"HPG-I006 cluster.instanceGroups[0].instanceType: is not offered for HyperPod clusters in {region_name}" \
        in text
    if instance_type == "ml.p6-b300.48xlarge":
        assert "use it in ap-south-2, ap-southeast-3, us-east-1, us-west-2" in text
