"""The task-governance custom resource's role: it may associate exactly the HyperPod access policy on this cluster's
access entries, and its SageMaker rights reach this cluster (Create) and this account's and region's cluster
policies and quotas (whose ids SageMaker assigns), nothing else. Evaluated with tests/security/iam_eval.py."""

from __future__ import annotations

import json

import pytest

from hyperpod_gov.constructs.task_governance_provider import HYPERPOD_ACCESS_POLICY, TaskGovernanceProvider
from tests.security.iam_eval import Request, evaluate
from tests.synth_helpers import minimal_app

REGION, ACCOUNT, OTHER = "us-west-2", "111111111111", "999999999999"
CLUSTER = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/abcdef123456"
EKS = "ml-eks"
ENTRY = f"arn:aws:eks:{REGION}:{ACCOUNT}:access-entry/{EKS}/role/{ACCOUNT}/hyperpod-slr/0ac4-uuid"
POLICY = f"arn:aws:eks::aws:cluster-access-policy/{HYPERPOD_ACCESS_POLICY}"


def _plain(value):
    """Fn::Join and the partition's Ref as the string they deploy as (partition aws)."""
    if isinstance(value, dict) and "Fn::Join" in value:
        sep, parts = value["Fn::Join"]
        return sep.join(str(_plain(p)) for p in parts)
    if value == {"Ref": "AWS::Partition"}:
        return "aws"
    if isinstance(value, dict) and "Fn::GetAtt" in value:  # the log group's ARN: a resource of this stack
        return "<{}.{}>".format(*value["Fn::GetAtt"])
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def role_policy() -> dict:
    import aws_cdk as cdk

    app = minimal_app()
    stack = cdk.Stack(app, "Governance", env=cdk.Environment(account=ACCOUNT, region=REGION))
    TaskGovernanceProvider(stack, "TaskGovernance", cluster_arn=CLUSTER, eks_cluster_name=EKS)
    template = app.synth().get_stack_by_name("Governance").template
    # Every policy of the handler's role (its own and the log group's grant), as one identity policy.
    documents = [r["Properties"]["PolicyDocument"] for r in template["Resources"].values()
                 if r["Type"] == "AWS::IAM::Policy"
                 and r["Properties"]["PolicyName"].startswith("TaskGovernanceHandler")]
    assert len(documents) == 2
    plain = _plain({"Statement": [s for d in documents for s in d["Statement"]]})
    assert "Fn::" not in json.dumps(plain)
    return plain


def _call(action: str, resource: str, **context) -> Request:
    return Request(action, resource, f"arn:aws:sts::{ACCOUNT}:assumed-role/handler/fn", context)


@pytest.mark.parametrize("action", ["eks:AssociateAccessPolicy", "eks:DisassociateAccessPolicy"])
def test_only_the_hyperpod_access_policy_may_be_associated_on_this_clusters_entries(role_policy, action):
    assert evaluate(role_policy, _call(action, ENTRY, **{"eks:policyArn": POLICY})) == "Allow"
    for other in ("AmazonEKSClusterAdminPolicy", "AmazonEKSAdminPolicy", "AmazonEKSEditPolicy"):
        arn = f"arn:aws:eks::aws:cluster-access-policy/{other}"
        assert evaluate(role_policy, _call(action, ENTRY, **{"eks:policyArn": arn})) == "ImplicitDeny", other
    assert evaluate(role_policy, _call(action, ENTRY)) == "ImplicitDeny"  # no policy named: no match
    elsewhere = ENTRY.replace(f"access-entry/{EKS}/", "access-entry/other-eks/")
    assert evaluate(role_policy, _call(action, elsewhere, **{"eks:policyArn": POLICY})) == "ImplicitDeny"


def test_reading_access_entries_stays_on_this_cluster(role_policy):
    assert evaluate(role_policy, _call("eks:ListAssociatedAccessPolicies", ENTRY)) == "Allow"
    assert evaluate(role_policy, _call("eks:DescribeAccessEntry",
                                       ENTRY.replace(f"/{EKS}/", "/other-eks/"))) == "ImplicitDeny"
    assert evaluate(role_policy, _call("eks:CreateAccessEntry", ENTRY)) == "ImplicitDeny"


def test_create_names_this_cluster_and_nothing_reaches_another_account_or_region(role_policy):
    other_cluster = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/zyxwvu654321"
    quota = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:compute-quota/q1"
    # CreateComputeQuota authorizes the cluster and the new quota: both must be allowed.
    assert evaluate(role_policy, _call("sagemaker:CreateComputeQuota", CLUSTER)) == "Allow"
    assert evaluate(role_policy, _call("sagemaker:CreateComputeQuota", quota)) == "Allow"
    assert evaluate(role_policy, _call("sagemaker:CreateComputeQuota", other_cluster)) == "ImplicitDeny"
    assert evaluate(role_policy, _call("sagemaker:CreateClusterSchedulerConfig", other_cluster)) == "ImplicitDeny"
    assert evaluate(role_policy, _call("sagemaker:DescribeCluster", other_cluster)) == "ImplicitDeny"
    for action, resource in (("sagemaker:UpdateComputeQuota", "compute-quota/q1"),
                             ("sagemaker:DeleteClusterSchedulerConfig", "cluster-scheduler-config/p1"),
                             ("sagemaker:AddTags", "compute-quota/q1")):
        assert evaluate(role_policy, _call(action, f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:{resource}")) == "Allow"
        assert evaluate(role_policy, _call(action, f"arn:aws:sagemaker:{REGION}:{OTHER}:{resource}")) \
            == "ImplicitDeny"
        assert evaluate(role_policy, _call(action, f"arn:aws:sagemaker:eu-west-1:{ACCOUNT}:{resource}")) \
            == "ImplicitDeny"
    assert evaluate(role_policy, _call("sagemaker:DeleteCluster", CLUSTER)) == "ImplicitDeny"
    assert evaluate(role_policy, _call("sagemaker:AddTags", CLUSTER)) == "ImplicitDeny"
