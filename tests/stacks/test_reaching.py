"""Reaching the cluster: API access rules, the teams' tools policies, iam/<team>.json and the stack outputs."""

from __future__ import annotations

import copy
import json
import re

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.connect import kubeconfig_command
from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import resources, synthesize

PARTNER = "arn:aws:iam::444444444444:role/PartnerScientist"


def _team_stacks(synthesized):
    return {n: t for n, t in synthesized.templates.items() if "-teams" in n}


def _policies(synthesized) -> dict[str, dict]:
    """Every managed policy of every stack, by stack and logical id."""
    return {f"{name}/{lid}": props for name, t in synthesized.templates.items()
            for lid, props in resources(t, "AWS::IAM::ManagedPolicy")}


# --- cluster.apiAccess ---------------------------------------------------------------------------------------------

def test_the_vpn_reaches_the_private_api_on_443_of_the_cluster_security_group_only(enterprise):
    t = enterprise.template("capacity")
    rules = [(lid, p) for lid, p in resources(t, "AWS::EC2::SecurityGroupIngress") if "CidrIp" in p]
    assert len(rules) == 1, rules
    lid, rule = rules[0]
    (cluster_id,) = [i for i, _ in resources(t, "AWS::EKS::Cluster")]
    assert rule == {"CidrIp": "10.8.0.0/16", "Description": "Corporate VPN", "FromPort": 443, "ToPort": 443,
                    "IpProtocol": "tcp", "GroupId": {"Fn::GetAtt": [cluster_id, "ClusterSecurityGroupId"]}}
    assert lid.startswith("EksApiAccess108001692e431a4")  # keyed by the network, not its list position


def test_no_api_access_adds_no_rule(startup):
    t = startup.template("capacity")
    assert not [p for _, p in resources(t, "AWS::EC2::SecurityGroupIngress") if "CidrIp" in p]


# --- tools policies ------------------------------------------------------------------------------------------------

def test_one_policy_in_the_governance_stack_is_attached_to_every_teams_roles(enterprise):
    plan = build_plan(enterprise.spec)
    (where, policy), = _policies(enterprise).items()
    assert where.startswith("acme-ml-governance/ToolsPolicy")  # no resource in any team stack
    assert policy["Roles"] == sorted({a.rsplit("/", 1)[1] for t in plan.tenants for a in (*t.viewers, *t.submitters)})
    assert "Users" not in policy
    statements = {s["Sid"]: s for s in policy["PolicyDocument"]["Statement"]}
    assert statements["EksDescribeCluster"]["Resource"] == "arn:aws:eks:us-east-1:111111111111:cluster/ml-cluster-eks"
    assert statements["EksDescribeAccessEntries"]["Resource"] == \
        "arn:aws:eks:us-east-1:111111111111:access-entry/ml-cluster-eks/role/111111111111/*"
    # The HyperPod cluster's ARN is the capacity stack's, imported: no wildcard where the ARN exists.
    assert "Fn::ImportValue" in statements["HyperPodDescribeCluster"]["Resource"]
    assert statements["HyperPodListClusters"]["Resource"] == "*"
    assert set(statements) == {"EksDescribeCluster", "EksDescribeAccessEntries", "HyperPodDescribeCluster",
                               "HyperPodListClusters"}


def test_no_iam_json_when_every_principal_is_in_the_capacity_account(enterprise):
    assert not (enterprise.out_dir / "iam").exists()


# --- outputs -------------------------------------------------------------------------------------------------------

def test_the_capacity_stack_outputs_how_to_reach_the_cluster(enterprise):
    plan = build_plan(enterprise.spec)
    outputs = {k: v for k, v in enterprise.template("capacity")["Outputs"].items() if k.startswith("Outputs")}
    values = {re.sub(r"[0-9A-F]{8}$", "", k).removeprefix("Outputs"): v["Value"] for k, v in outputs.items()}
    assert values["EksClusterName"] == "ml-cluster-eks"
    assert values["EksClusterArn"] == "arn:aws:eks:us-east-1:111111111111:cluster/ml-cluster-eks"
    assert values["KubeconfigCommand"] == kubeconfig_command(plan) == \
        "aws eks update-kubeconfig --region us-east-1 --name ml-cluster-eks"
    (hyperpod,) = [i for i, _ in resources(enterprise.template("capacity"), "AWS::SageMaker::Cluster")]
    assert values["HyperPodClusterArn"] == {"Fn::GetAtt": [hyperpod, "ClusterArn"]}
    # For members in other accounts (EKS authorizes DescribeCluster only in the cluster's account).
    (eks,) = [i for i, _ in resources(enterprise.template("capacity"), "AWS::EKS::Cluster")]
    assert values["EksEndpoint"] == {"Fn::GetAtt": [eks, "Endpoint"]}
    assert values["EksCertificateAuthority"] == {"Fn::GetAtt": [eks, "CertificateAuthorityData"]}


def test_each_team_stack_outputs_its_teams_namespace_queue_and_priority_labels(enterprise):
    plan = build_plan(enterprise.spec)
    found = {}
    for t in _team_stacks(enterprise).values():
        for lid, out in t.get("Outputs", {}).items():
            if "Outputs" in lid:
                found[lid] = out["Value"]
    for team in plan.tenants:
        prefix = re.sub(r"[^A-Za-z0-9]", "", team.name) + "Outputs"
        mine = {re.sub(r"[0-9A-F]{8}$", "", k).removeprefix(prefix): v for k, v in found.items()
                if k.startswith(prefix)}
        assert mine == {"Namespace": team.namespace, "LocalQueue": team.local_queue,
                        "PriorityClasses": ",".join(team.kueue_priority_classes)}
    assert len(found) == 3 * len(plan.tenants)


# --- governance-only mode, with a principal of another account -------------------------------------------------------

@pytest.fixture(scope="module")
def governed(tmp_path_factory):
    data = copy.deepcopy(read_yaml(EXAMPLES / "existing.yaml"))
    data["accounts"]["trusted"] = ["444444444444"]
    data["teams"][0]["access"]["submitters"].append(PARTNER)
    data["teams"][1]["access"]["toolsPolicy"] = False
    spec = parse_spec(data, today=TODAY)
    return build_plan(spec), synthesize(spec, tmp_path_factory.mktemp("reaching-existing"))


def test_governance_only_mode_puts_the_cluster_outputs_on_the_governance_stack(governed):
    plan, synthesized = governed
    outputs = synthesized.template("governance")["Outputs"]
    values = {re.sub(r"[0-9A-F]{8}$", "", k).removeprefix("Outputs"): v["Value"] for k, v in outputs.items()
              if k.startswith("Outputs")}
    assert values == {"EksClusterName": "lab-eks",
                      "EksClusterArn": "arn:aws:eks:us-west-2:111111111111:cluster/lab-eks",
                      "HyperPodClusterArn": "arn:aws:sagemaker:us-west-2:111111111111:cluster/abcd1234efgh",
                      "KubeconfigCommand": kubeconfig_command(plan)}


def test_a_foreign_principal_gets_iam_json_and_only_same_account_roles_are_attached(governed):
    plan, synthesized = governed
    (where, policy), = _policies(synthesized).items()
    assert where.startswith("lab-ml-governance/ToolsPolicy")
    assert policy["Roles"] == ["VisionScientist", "VisionViewer"]  # language turned it off; the partner is foreign
    document = json.loads((synthesized.out_dir / "iam" / "vision.json").read_text())
    # The team's own document, with the team's exact entries; the ARN is known in governance-only mode.
    assert document == plan.team("vision").tools_policy.document(plan.hyperpod_cluster_arn)
    assert sorted(p.name for p in (synthesized.out_dir / "iam").iterdir()) == ["vision.json"]
    assert document["Statement"][1]["Resource"] == [
        "arn:aws:eks:us-west-2:111111111111:access-entry/lab-eks/role/111111111111/VisionScientist/*",
        "arn:aws:eks:us-west-2:111111111111:access-entry/lab-eks/role/111111111111/VisionViewer/*",
        "arn:aws:eks:us-west-2:111111111111:access-entry/lab-eks/role/444444444444/PartnerScientist/*"]
    assert [s["Resource"] for s in policy["PolicyDocument"]["Statement"]][2] == plan.hyperpod_cluster_arn


def test_iam_json_of_a_team_that_no_longer_has_foreign_principals_is_removed(base, tmp_path):
    from hyperpod_gov.stacks.app import write_tools_documents

    base["accounts"]["trusted"] = ["444444444444"]
    base["teams"][0]["access"]["viewers"] = [PARTNER]
    directory = tmp_path / "iam"
    assert write_tools_documents(build_plan(parse_spec(base, today=TODAY)), directory) == [directory / "team-a.json"]
    del base["teams"][0]["access"]["viewers"]
    assert write_tools_documents(build_plan(parse_spec(base, today=TODAY)), directory) == []
    assert list(directory.iterdir()) == []



def test_a_team_stack_with_more_outputs_than_cloudformation_takes_is_refused_by_the_plan():
    from hyperpod_gov.plan.invariants import check_plan
    from hyperpod_gov.plan.plan import derive_plan
    from tests.scale import many_teams_spec

    data = many_teams_spec(67)
    data["deployment"]["teamStacks"] = 1
    found = [str(i) for i in check_plan(derive_plan(parse_spec(data, today=TODAY), None))]
    assert any("would hold 201 outputs (67 teams), over CloudFormation's 200" in f for f in found), found
    data = many_teams_spec(66)
    data["deployment"]["teamStacks"] = 1
    assert not [f for f in map(str, check_plan(derive_plan(parse_spec(data, today=TODAY), None))) if "outputs" in f]
