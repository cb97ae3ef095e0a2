"""The instance-group and cluster options of issue 18 in the capacity template: one assertion per property,
cfn-lint clean, cdk-nag clean (synth fails on an unacknowledged finding)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.fields import emit
from hyperpod_gov.plan.tables import INSTANCE_GROUP
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY
from tests.synth_helpers import cfn_lint, resources, synthesize
from tests.table_rows import unreached

PLAN_ARN = "arn:aws:sagemaker:us-east-1:111111111111:training-plan/p5-reserved"
KEY_ARN = "arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"
SUBNETS = ["subnet-0bbbbbbbbbbbbbbbb", "subnet-0aaaaaaaaaaaaaaaa"]

OPTIONS = {
    "trainingPlanArn": PLAN_ARN,
    "subnetIds": SUBNETS,
    "labels": {"example.com/pool": "reserved"},
    "taints": [{"key": "example.com/reserved", "value": "p5", "effect": "NoSchedule"},
               {"key": "nvidia.com/gpu", "effect": "NoExecute"}],
    "lifecycle": {"sourceS3Uri": "s3://acme-lifecycle/eks/p5/", "onCreate": "start.sh"},
    "volumeSizeGb": 500,
    "volumeKmsKeyId": KEY_ARN,
    "deepHealthChecks": ["InstanceConnectivity"],
    "threadsPerCore": 1,
}


def every_option() -> dict:
    data = copy.deepcopy(BASE)
    data["cluster"]["instanceGroups"][0].update(copy.deepcopy(OPTIONS))
    data["cluster"]["instanceGroups"][1]["deepHealthChecks"] = []
    data["cluster"].update(nodeRecovery="None", nodeProvisioningMode="Continuous")
    data["scheduler"]["idleResourceSharing"] = False  # the cluster policy's IdleResourceSharing row (written when off)
    # Scheduling controls (issue 56): cluster-view rows; in task-governance mode they deploy nothing (HPG-Q012)
    data["scheduler"]["gangScheduling"] = {"timeout": "10m", "recoveryTimeout": "3m",
                                           "requeuing": {"backoffLimitCount": 5, "backoffBaseSeconds": 60}}
    data["scheduler"]["topology"] = {"levels": ["topology.k8s.aws/network-node-layer-1",
                                                "topology.k8s.aws/network-node-layer-2", "kubernetes.io/hostname"]}
    data["tags"] = {"acme:cost-center": "ml-platform", "acme:env": "prod"}
    data["teams"][0]["sharing"]["absoluteBorrowLimits"] = [{"instanceType": "ml.g5.8xlarge", "count": 1}]
    data["teams"][0]["tags"] = {"acme:cost-center": "research", "acme:project": "llm"}
    return data


@pytest.fixture(scope="module")
def options(tmp_path_factory):
    return synthesize(parse_spec(every_option(), today=TODAY), tmp_path_factory.mktemp("options"))


def _cluster(synth) -> dict:
    (found,) = list(resources(synth.template("capacity"), "AWS::SageMaker::Cluster"))
    return found[1]


def _group(synth, name: str) -> dict:
    return next(g for g in _cluster(synth)["InstanceGroups"] if g["InstanceGroupName"] == name)


def test_every_planned_table_row_reaches_the_templates(options):
    """Each field-table row the options plan a value for is in the templates (``tests/table_rows.py``)."""
    assert unreached(build_plan(options.spec), options.templates) == {}


def test_training_plan(options):
    assert _group(options, "gpu")["TrainingPlanArn"] == PLAN_ARN
    assert "TrainingPlanArn" not in _group(options, "small")


def test_own_subnets_keep_the_node_security_group(options):
    override = _group(options, "gpu")["OverrideVpcConfig"]
    assert override["Subnets"] == sorted(SUBNETS)
    (sg,) = override["SecurityGroupIds"]
    assert sg == _cluster(options)["VpcConfig"]["SecurityGroupIds"][0]
    assert "OverrideVpcConfig" not in _group(options, "small")


def test_labels_and_taints(options):
    config = _group(options, "gpu")["KubernetesConfig"]
    assert config["Labels"] == {"example.com/pool": "reserved"}
    assert config["Taints"] == [{"Key": "example.com/reserved", "Value": "p5", "Effect": "NoSchedule"},
                                {"Key": "nvidia.com/gpu", "Effect": "NoExecute"}]
    assert "KubernetesConfig" not in _group(options, "small")


def test_own_lifecycle_scripts(options):
    assert _group(options, "gpu")["LifeCycleConfig"] == {"SourceS3Uri": "s3://acme-lifecycle/eks/p5/",
                                                          "OnCreate": "start.sh"}
    shipped = _group(options, "small")["LifeCycleConfig"]
    assert shipped["OnCreate"] == "on_create.sh" and "acme-lifecycle" not in json.dumps(shipped)


def _execution_policy(synth) -> list[dict]:
    t = synth.template("capacity")
    role_ref = _group(synth, "gpu")["ExecutionRole"]["Fn::GetAtt"][0]
    return [s for _, p in resources(t, "AWS::IAM::Policy")
            if any(r == {"Ref": role_ref} for r in p["Roles"]) for s in p["PolicyDocument"]["Statement"]]


def test_execution_role_reads_exactly_the_own_scripts(options):
    statements = [s for s in _execution_policy(options) if str(s["Action"]).startswith(("s3:", "['s3:"))]
    by_action = {json.dumps(s["Action"]): s for s in statements}
    get = by_action['"s3:GetObject"']
    assert get["Resource"] == {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":s3:::acme-lifecycle/eks/p5/*"]]}
    listing = by_action['"s3:ListBucket"']
    assert listing["Resource"] == {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":s3:::acme-lifecycle"]]}
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["eks/p5/*"]}}
    assert len(statements) == 2  # no other bucket, no wildcard bucket


def test_data_volume_key(options):
    (storage,) = _group(options, "gpu")["InstanceStorageConfigs"]
    assert storage == {"EbsVolumeConfig": {"VolumeSizeInGB": 500, "VolumeKmsKeyId": KEY_ARN}}


def test_deep_health_checks_as_given(options):
    assert _group(options, "gpu")["OnStartDeepHealthChecks"] == ["InstanceConnectivity"]
    assert "OnStartDeepHealthChecks" not in _group(options, "small")  # [] runs none


def test_threads_per_core(options):
    assert _group(options, "gpu")["ThreadsPerCore"] == 1
    assert "ThreadsPerCore" not in _group(options, "small")


def test_node_recovery_and_provisioning(options):
    cluster = _cluster(options)
    assert (cluster["NodeRecovery"], cluster["NodeProvisioningMode"]) == ("None", "Continuous")


def test_the_template_is_what_the_table_emits(options):
    """drift's expected state (the table) and the template agree on every member the plan knows."""
    from hyperpod_gov.plan import build_plan

    plan = build_plan(parse_spec(every_option(), today=TODAY))
    for g in plan.instance_groups:
        emitted = emit(INSTANCE_GROUP, g)
        template = _group(options, g.name)
        for member, value in emitted.items():
            if member == "OverrideVpcConfig":
                assert template[member]["Subnets"] == value["Subnets"]
            else:
                assert template[member] == value, member


def test_options_template_passes_cfn_lint(options):
    for path in options.template_files():
        if "capacity" not in Path(path).name:
            continue
        matches = cfn_lint(Path(path), "us-east-1")
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)
        assert {m.rule.id for m in matches} <= {"W3005", "W3010"}


# --- tags --------------------------------------------------------------------------------------------------------

def _tags(props: dict) -> dict[str, str]:
    tags = props.get("Tags")
    if isinstance(tags, dict):  # AWS::SageMaker::Cluster, EKS and a few more take a map
        return tags
    return {t["Key"]: t["Value"] for t in tags or ()}


def _tagged(template: dict) -> list[tuple[str, dict[str, str]]]:
    return [(lid, _tags(r.get("Properties", {}))) for lid, r in sorted(template["Resources"].items())
            if "Tags" in r.get("Properties", {})]


def test_top_level_tags_are_on_every_tagged_resource_with_the_generated_tag(options):
    for stack, template in options.templates.items():
        tagged = _tagged(template)
        for lid, tags in tagged:
            # The quota is a CfnResource, which stack tags do not reach: its tags are the table's (below).
            if template["Resources"][lid]["Type"] != "AWS::SageMaker::ComputeQuota":
                assert tags.get("hyperpod-gov:spec") == "acme", lid
            if not lid.startswith("teama"):
                assert (tags.get("acme:cost-center"), tags.get("acme:env")) == ("ml-platform", "prod"), (stack, lid)
    cluster = _cluster(options)
    assert _tags(cluster)["acme:cost-center"] == "ml-platform"


def test_team_tags_win_on_the_teams_resources(options):
    team_stack = next(t for name, t in options.templates.items() if "teams" in name
                      and any(lid.startswith("teama") for lid in t["Resources"]))
    mine = [(lid, tags) for lid, tags in _tagged(team_stack) if lid.startswith("teama")]
    kinds = {team_stack["Resources"][lid]["Type"] for lid, _ in mine}
    assert {"AWS::IAM::Role", "AWS::CloudWatch::Alarm"} <= kinds
    for lid, tags in mine:
        assert (tags["acme:cost-center"], tags["acme:project"], tags["acme:env"]) == ("research", "llm", "prod"), lid
    quota = next(p for _, p in resources(team_stack, "AWS::SageMaker::ComputeQuota")
                 if p["ComputeQuotaTarget"]["TeamName"] == "team-a")
    assert _tags(quota) == {"acme:cost-center": "research", "acme:env": "prod", "acme:project": "llm"}
    other = next(p for _, p in resources_of_all(options, "AWS::SageMaker::ComputeQuota")
                 if p["ComputeQuotaTarget"]["TeamName"] == "team-b")
    assert _tags(other) == {"acme:cost-center": "ml-platform", "acme:env": "prod"}


def resources_of_all(synth, kind: str):
    for template in synth.templates.values():
        yield from resources(template, kind)


# --- an existing VPC ---------------------------------------------------------------------------------------------

VPC_ID = "vpc-0123456789abcdef0"
PRIVATE = ["subnet-0aaaaaaaaaaaaaaaa", "subnet-0bbbbbbbbbbbbbbbb"]


def existing_vpc(create_endpoints: bool, create_flow_logs: bool = False) -> dict:
    data = copy.deepcopy(BASE)
    data["cluster"]["vpc"] = {"vpcId": VPC_ID, "privateSubnetIds": PRIVATE, "cidr": "10.20.0.0/16",
                              "availabilityZones": ["us-east-1a", "us-east-1b"],
                              "createEndpoints": create_endpoints, "createFlowLogs": create_flow_logs}
    return data


@pytest.fixture(scope="module")
def existing_bare(tmp_path_factory):
    return synthesize(parse_spec(existing_vpc(False), today=TODAY), tmp_path_factory.mktemp("existing-bare"))


@pytest.fixture(scope="module")
def existing_full(tmp_path_factory):
    return synthesize(parse_spec(existing_vpc(True, True), today=TODAY), tmp_path_factory.mktemp("existing-full"))


NETWORK_TYPES = ("AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::NatGateway", "AWS::EC2::InternetGateway",
                 "AWS::EC2::EIP", "AWS::EC2::RouteTable", "AWS::EC2::Route")


@pytest.mark.parametrize("which", ["existing_bare", "existing_full"])
def test_an_existing_vpc_gets_no_vpc_subnets_or_nat(which, request):
    t = request.getfixturevalue(which).template("capacity")
    assert [(kind, lid) for kind in NETWORK_TYPES for lid, _ in resources(t, kind)] == []


@pytest.mark.parametrize("which", ["existing_bare", "existing_full"])
def test_the_cluster_and_eks_use_the_given_subnets(which, request):
    t = request.getfixturevalue(which).template("capacity")
    (cluster,) = [p for _, p in resources(t, "AWS::SageMaker::Cluster")]
    assert cluster["VpcConfig"]["Subnets"] == PRIVATE
    (node_sg,) = [p for lid, p in resources(t, "AWS::EC2::SecurityGroup") if lid.startswith("HyperPodNodeSecurity")]
    assert node_sg["VpcId"] == VPC_ID
    eks = json.dumps([p for _, p in resources(t, "AWS::EKS::Cluster")])
    assert all(s in eks for s in PRIVATE)


def test_an_existing_vpc_without_endpoints_or_flow_logs(existing_bare):
    t = existing_bare.template("capacity")
    assert list(resources(t, "AWS::EC2::VPCEndpoint")) == []
    assert list(resources(t, "AWS::EC2::FlowLog")) == []


def test_an_existing_vpc_with_endpoints_and_flow_logs(existing_full):
    t = existing_full.template("capacity")
    endpoints = [p for _, p in resources(t, "AWS::EC2::VPCEndpoint")]
    assert len(endpoints) == 11 and all(p["VpcEndpointType"] == "Interface" for p in endpoints)
    assert all(p["VpcId"] == VPC_ID and p["SubnetIds"] == PRIVATE for p in endpoints)
    s3 = next(p for p in endpoints if "s3" in json.dumps(p["ServiceName"]))
    assert s3["PrivateDnsEnabled"] is True and "DnsOptions" not in s3  # no gateway endpoint: no route tables
    (sg,) = [p for lid, p in resources(t, "AWS::EC2::SecurityGroup") if lid.startswith("NetworkEndpointSecurity")]
    assert sg["SecurityGroupIngress"][0]["CidrIp"] == "10.20.0.0/16"
    (flow,) = [p for _, p in resources(t, "AWS::EC2::FlowLog")]
    assert (flow["ResourceId"], flow["ResourceType"], flow["TrafficType"]) == (VPC_ID, "VPC", "ALL")


def test_team_network_policies_allow_https_to_the_existing_vpc(existing_bare):
    manifests = json.dumps(existing_bare.templates)
    assert "10.20.0.0/16" in manifests and "10.192.0.0/16" not in manifests


@pytest.mark.parametrize("which", ["existing_bare", "existing_full"])
def test_existing_vpc_templates_pass_cfn_lint(which, request):
    synth = request.getfixturevalue(which)
    for path in synth.template_files():
        matches = cfn_lint(Path(path), "us-east-1")
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)
        assert {m.rule.id for m in matches} <= {"W3005", "W3010"}


def test_every_member_the_options_template_writes_has_a_table_row(options):
    """The examples use none of these options, so the completeness test over them cannot see their members."""
    from hyperpod_gov.plan.fields import leaf_members
    from hyperpod_gov.plan.tables import CLUSTER

    def covered(table, member: str) -> bool:
        return any(member == f.member or member.startswith(f.member + ".") for f in table.fields)

    cluster = _cluster(options)
    missing = [m for g in cluster["InstanceGroups"] for m in leaf_members(g) if not covered(INSTANCE_GROUP, m)]
    missing += [m for m in leaf_members({k: v for k, v in cluster.items() if k != "InstanceGroups"})
                if not covered(CLUSTER, m)]
    assert missing == []
