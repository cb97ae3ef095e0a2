"""cluster.existing (governance-only mode): its formats, the keys it refuses, and the rules it adds."""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import SpecError, parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY

EXISTING = read_yaml(EXAMPLES / "existing.yaml")


def existing() -> dict:
    return copy.deepcopy(EXISTING)


def problems(data: dict) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_spec(data, today=TODAY)
    return [str(i) for i in info.value.issues]


def test_the_example_validates_and_plans_governance_only():
    plan = build_plan(parse_spec(existing(), today=TODAY))
    assert plan.governance_only
    assert plan.stacks.capacity is None
    assert not any(n.endswith("-capacity") for n in plan.stacks.all_names)
    assert plan.hyperpod_cluster_arn == "arn:aws:sagemaker:us-west-2:111111111111:cluster/abcd1234efgh"
    assert plan.eks_cluster_name == "lab-eks"
    assert plan.cluster.eks_arn == "arn:aws:eks:us-west-2:111111111111:cluster/lab-eks"
    assert plan.addon_versions == {}  # installs nothing


@pytest.mark.parametrize("key, value, expected", [
    ("hyperPodClusterArn", "arn:aws:sagemaker:us-west-2:111111111111:cluster/ml-cluster",
     "cluster.existing.hyperPodClusterArn: is not a HyperPod cluster ARN"),
    ("eksClusterName", "-bad", "cluster.existing.eksClusterName: is not an EKS cluster name"),
    ("vpcId", "vpc-123", "cluster.existing.vpcId: is not a VPC id"),
    ("subnetIds", ["subnet-0aaaaaaaaaaaaaaa1", "sub-1"], "cluster.existing.subnetIds: 'sub-1' is not a subnet id"),
    ("subnetIds", ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0aaaaaaaaaaaaaaa1"],
     "cluster.existing.subnetIds: names a subnet twice"),
    ("securityGroupId", "sg-zz", "cluster.existing.securityGroupId: is not a security group id"),
])
def test_existing_formats_are_checked(key, value, expected):
    data = existing()
    data["cluster"]["existing"][key] = value
    assert any(p.startswith(expected) for p in problems(data)), problems(data)


@pytest.mark.parametrize("arn, what", [
    ("arn:aws:sagemaker:us-east-1:111111111111:cluster/abcd1234efgh", "region us-east-1"),
    ("arn:aws:sagemaker:us-west-2:999999999999:cluster/abcd1234efgh", "account 999999999999"),
    ("arn:aws-cn:sagemaker:us-west-2:111111111111:cluster/abcd1234efgh", "partition aws-cn"),
])
def test_the_existing_cluster_is_in_the_capacity_account(arn, what):
    data = existing()
    data["cluster"]["existing"]["hyperPodClusterArn"] = arn
    assert any(p.startswith(f"HPG-A005 cluster.existing.hyperPodClusterArn: is in {what}") for p in problems(data))


@pytest.mark.parametrize("key, value", [
    ("endpointAccess", "private"),
    ("adminCidrs", ["203.0.113.0/24"]),
    ("authenticationMode", "API"),
    ("dependenciesChart", {"oci": "oci://example.com/chart", "version": "1.0.0"}),
    ("admins", ["arn:aws:iam::111111111111:role/Admin"]),
])
def test_keys_of_a_created_cluster_are_refused_with_existing(key, value):
    data = existing()
    data["cluster"][key] = value
    assert any(p.startswith(f"HPG-D004 cluster.{key}: only applies to a cluster hyperpod-gov creates")
               for p in problems(data)), problems(data)


def test_the_vpc_holds_only_the_existing_vpcs_cidr():
    data = existing()
    data["cluster"]["vpc"] = {"cidr": "10.1.0.0/16", "maxAzs": 3}
    assert any(p.startswith("HPG-D004 cluster.vpc.maxAzs: only shapes a VPC") for p in problems(data))
    del data["cluster"]["vpc"]
    assert any(p.startswith("HPG-D004 cluster.vpc.cidr: is not given") for p in problems(data))


def test_only_the_installed_add_ons_may_be_pinned():
    data = existing()
    data["cluster"]["addonVersions"] = {"vpcCni": "v1.19.0-eksbuild.1", "taskGovernance": "v1.6.0-eksbuild.1"}
    found = problems(data)
    assert any(p.startswith("HPG-D004 cluster.addonVersions.vpcCni: pins an add-on of the existing cluster")
               for p in found)
    assert any(p.startswith("HPG-D004 cluster.addonVersions.taskGovernance: pins what hyperpod-gov installs only "
                            "with cluster.existing.installs.scheduler") for p in found)
    data["cluster"]["addonVersions"] = {"taskGovernance": "v1.6.0-eksbuild.1"}
    data["cluster"]["existing"]["installs"] = {"scheduler": True}
    plan = build_plan(parse_spec(data, today=TODAY))
    assert plan.addon_versions == {"amazon-sagemaker-hyperpod-taskgovernance": "v1.6.0-eksbuild.1"}


def test_the_task_governance_add_on_is_not_installed_next_to_a_self_managed_kueue():
    data = existing()
    data["cluster"]["existing"]["installs"] = {"scheduler": True}
    data["cluster"]["existing"]["selfManagedKueue"] = True
    assert any(p.startswith("HPG-Q006 cluster.existing.installs.scheduler: would install the task-governance "
                            "add-on") and "uninstall the self-managed Kueue first" in p for p in problems(data))
    data["cluster"]["existing"]["installs"] = {"scheduler": False}  # the add-on is not installed: governed as is
    parse_spec(data, today=TODAY)
    data["cluster"]["existing"]["installs"] = {"scheduler": True}
    data["scheduler"]["mode"] = "kueue"  # the Kueue chart: not the add-on's prerequisite
    parse_spec(data, today=TODAY)


def test_quota_checks_use_the_existing_clusters_instance_groups():
    data = existing()
    data["cluster"]["instanceGroups"][0]["count"] = 7  # the teams hold 5 + 3
    assert any(p.startswith("HPG-Q002") for p in problems(data))


def test_explain_says_it_governs_an_existing_cluster():
    from hyperpod_gov.explain import explain

    text = " ".join(explain(build_plan(parse_spec(existing(), today=TODAY))).split())  # wrapped at 100 columns
    assert ("Governs an existing cluster: arn:aws:sagemaker:us-west-2:111111111111:cluster/abcd1234efgh (EKS "
            "lab-eks)") in text
    assert "Stacks: lab-ml-governance, lab-ml-monitoring" in text


def test_the_keys_of_a_vpc_hyperpod_gov_builds_on_are_refused_with_existing():
    data = existing()
    data["cluster"]["vpc"].update(vpcId="vpc-0fedcba9876543210", privateSubnetIds=["subnet-0aaaaaaaaaaaaaaa1",
                                                                                 "subnet-0bbbbbbbbbbbbbbb2"],
                                 createEndpoints=False)
    found = problems(data)
    assert any(p.startswith("HPG-D004 cluster.vpc.vpcId: only shapes a VPC hyperpod-gov creates or builds on")
               for p in found), found
