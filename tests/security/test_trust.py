"""IAM trust: every service-principal trust is bound to this account (and cluster), ENIs to the cluster's VPC."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from hyperpod_gov.constructs.eks import EksCluster
from hyperpod_gov.constructs.execution_role import execution_role
from hyperpod_gov.constructs.network import Network
from hyperpod_gov.plan import build_plan
from tests.synth_helpers import minimal_app, resources

SERVICE_CONDITIONS = {
    # Workload source roles add the session tags (namespace, service account, cluster ARN): tests/constructs/test_data.py.
    "pods.eks.amazonaws.com": lambda c, account, eks_arn: {
        "StringEquals": {k: v for k, v in c["StringEquals"].items() if not k.startswith("aws:RequestTag/")},
        "ArnEquals": c["ArnEquals"], **{k: v for k, v in c.items() if k not in ("StringEquals", "ArnEquals")}} == {
        "StringEquals": {"aws:SourceAccount": account}, "ArnEquals": {"aws:SourceArn": eks_arn}},
    "vpc-flow-logs.amazonaws.com": lambda c, account, eks_arn: (
        c["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
        and ":vpc-flow-log/*" in json.dumps(c["ArnLike"]["aws:SourceArn"])),
    # HyperPod clusters' execution roles: this account's clusters. The inference operator's execution role: this
    # account's SageMaker resources (constructs/operators.py sagemaker_trust_conditions says why): _sagemaker_arn.
    "sagemaker.amazonaws.com": lambda c, account, eks_arn: (
        c["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
        and ":cluster/*" in json.dumps(c["ArnLike"]["aws:SourceArn"])),
    # The autoscaling role (cluster.autoScaling, the ClusterRole HyperPod-managed Karpenter assumes): this account's
    # HyperPod clusters of this region, the pattern _hyperpod_cluster_arns spells out.
    "hyperpod.sagemaker.amazonaws.com": lambda c, account, eks_arn: _hyperpod_cluster_arns(c),
}
AUTOSCALING_PRINCIPAL = "hyperpod.sagemaker.amazonaws.com"
INFERENCE_EXECUTION_ROLE = "InferenceOperatorExecutionRole"


def _sagemaker_arn(condition) -> bool:
    """The inference execution role's pattern: arn:<partition>:sagemaker:<region>:<this account>:*."""
    return condition["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}} and condition["ArnLike"] == {
        "aws:SourceArn": {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":sagemaker:", {"Ref": "AWS::Region"},
                                            ":", {"Ref": "AWS::AccountId"}, ":*"]]}}


def _hyperpod_cluster_arns(condition) -> bool:
    """arn:<partition>:sagemaker:<region>:<this account>:cluster/*, and this account as the source account."""
    return condition == {
        "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
        "ArnLike": {"aws:SourceArn": {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":sagemaker:",
                                                         {"Ref": "AWS::Region"}, ":", {"Ref": "AWS::AccountId"},
                                                         ":cluster/*"]]}}}


def _trusts(template):
    for logical_id, props in resources(template, "AWS::IAM::Role"):
        for statement in props["AssumeRolePolicyDocument"]["Statement"]:
            service = statement.get("Principal", {}).get("Service")
            if service in SERVICE_CONDITIONS:
                yield logical_id, service, statement.get("Condition")


@pytest.mark.parametrize("example", ["enterprise", "startup", "elastic"])
def test_every_pod_identity_flow_log_and_hyperpod_trust_is_bound_to_this_account(example, request):
    synthesized = request.getfixturevalue(example)
    plan = build_plan(synthesized.spec)
    seen = set()
    for name, template in synthesized.templates.items():
        for logical_id, service, condition in _trusts(template):
            seen.add(service)
            assert condition, (name, logical_id, service)
            if service == "sagemaker.amazonaws.com" and INFERENCE_EXECUTION_ROLE in logical_id:
                assert _sagemaker_arn(condition), (logical_id, condition)
                continue
            assert SERVICE_CONDITIONS[service](condition, plan.account, plan.cluster.eks_arn), (logical_id, condition)
    # the autoscaling role exists where the spec asks for autoscaling only
    assert seen == set(SERVICE_CONDITIONS) - (set() if plan.cluster.auto_scaling else {AUTOSCALING_PRINCIPAL})


def test_eks_cluster_arn_names_the_region_so_a_same_named_cluster_elsewhere_does_not_match(enterprise):
    plan = build_plan(enterprise.spec)
    assert plan.cluster.eks_arn == "arn:aws:eks:us-east-1:111111111111:cluster/ml-cluster-eks"


def _stack():
    return cdk.Stack(minimal_app(analytics_reporting=False), "s", env=cdk.Environment(account="111111111111",
                                                                                  region="us-east-1"))


def test_execution_role_network_interfaces_stay_in_the_clusters_vpc():
    stack = _stack()
    vpc_arn = "arn:aws:ec2:us-east-1:111111111111:vpc/vpc-0123456789abcdef0"
    execution_role(stack, "Role", cluster_name="ml", cluster_arn="arn:aws:eks:us-east-1:111111111111:cluster/x",
                   vpc_arn=vpc_arn)
    (policy,) = [p for _, p in resources(Template.from_stack(stack).to_json(), "AWS::IAM::Policy")]
    by_sid = {s.get("Sid"): s for s in policy["PolicyDocument"]["Statement"]}
    for sid in ("ManageNodeNetworkInterfaces", "TagNodeNetworkInterfaces"):
        assert by_sid[sid]["Condition"] == {"ArnEquals": {"ec2:Vpc": vpc_arn}}, sid
        assert "instance/*" not in json.dumps(by_sid[sid]["Resource"])
    # An instance has no ec2:Vpc key: attaching to one is its own statement, limited to attach and detach.
    assert sorted(by_sid["AttachToNodes"]["Action"]) == ["ec2:AttachNetworkInterface", "ec2:DetachNetworkInterface"]
    assert "instance/*" in json.dumps(by_sid["AttachToNodes"]["Resource"])


def test_authentication_mode_api_and_config_map_only_when_asked(startup_spec):
    plan = build_plan(startup_spec)
    for mode in ("API", "API_AND_CONFIG_MAP"):
        stack = _stack()
        network = Network(stack, "Network", network=plan.network)
        EksCluster(stack, "Eks", cluster=plan.cluster, network=network, authentication_mode=mode)
        (cluster,) = [p for _, p in resources(Template.from_stack(stack).to_json(), "AWS::EKS::Cluster")]
        assert cluster["AccessConfig"]["AuthenticationMode"] == mode


def test_the_public_endpoint_acknowledgement_says_only_what_the_rules_guarantee(startup):
    metadata = (startup.out_dir / "cdk.out" / "startup-capacity.metadata.json").read_text()
    assert "cluster.adminCidrs (203.0.113.0/24), which the spec rules accept only when together they cover at " \
        "most a /8 of public addresses" in metadata
    assert "never 0.0.0.0/0" not in metadata  # not true: 0.0.0.0/1 and 128.0.0.0/1 were accepted


# Service principals trusted without conditions, each with the reason; any other unconditioned trust fails.
UNCONDITIONED = {
    "lambda.amazonaws.com": "CDK's own handlers (kubectl provider, BucketDeployment, task-governance provider): a "
                            "Lambda execution role is bound to its function through iam:PassRole in this account; "
                            "AWS documents no confused-deputy keys for it",
    "states.amazonaws.com": "the task-governance provider's polling state machine (custom-resource mode), passed the "
                            "same way",
    "eks.amazonaws.com": "the EKS cluster role as aws-cdk-lib creates it; EKS's documented trust has no conditions",
}


@pytest.mark.parametrize("example", ["enterprise", "startup", "elastic"])
def test_every_service_trust_is_conditioned_or_named_with_its_reason(example, request):
    synthesized = request.getfixturevalue(example)
    for name, template in synthesized.templates.items():
        for logical_id, props in resources(template, "AWS::IAM::Role"):
            for statement in props["AssumeRolePolicyDocument"]["Statement"]:
                service = statement.get("Principal", {}).get("Service")
                if service is None:
                    continue
                if service in SERVICE_CONDITIONS:
                    assert statement.get("Condition"), (name, logical_id, service)
                else:
                    assert service in UNCONDITIONED, (name, logical_id, service, "is trusted without a condition")


# --- the autoscaling role (cluster.autoScaling, issue 57) ------------------------------------------------------------


def autoscaling_role(template) -> tuple[str, dict, list[tuple[str, dict]]]:
    """The role HyperPod-managed Karpenter assumes (the cluster's ClusterRole), and every policy attached to it."""
    (cluster,) = [p for _, p in resources(template, "AWS::SageMaker::Cluster")]
    role_id = cluster["ClusterRole"]["Fn::GetAtt"][0]
    role = template["Resources"][role_id]["Properties"]
    policies = [(lid, p) for lid, p in resources(template, "AWS::IAM::Policy")
                if {"Ref": role_id} in p.get("Roles", [])]
    return role_id, role, policies


def wildcards(document) -> list[str]:
    """Every string of a policy document (its Fn::Join parts included) that holds a '*'."""
    if isinstance(document, str):
        return [document] if "*" in document else []
    if isinstance(document, dict):
        return [w for v in document.values() for w in wildcards(v)]
    if isinstance(document, list):
        return [w for v in document for w in wildcards(v)]
    return []


def test_the_autoscaling_role_has_no_wildcard_but_the_trusts_cluster_pattern(elastic):
    template = elastic.template("capacity")
    role_id, role, policies = autoscaling_role(template)
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": AUTOSCALING_PRINCIPAL} and trust["Action"] == "sts:AssumeRole"
    assert _hyperpod_cluster_arns(trust["Condition"])
    # The trust's documented SourceArn pattern (a cluster's ARN ends in an id the service assigns) is the only '*'.
    assert wildcards(role["AssumeRolePolicyDocument"]) == [":cluster/*"]
    assert "ManagedPolicyArns" not in role and "Policies" not in role
    assert policies and all(wildcards(p["PolicyDocument"]) == [] for _, p in policies)


def test_the_autoscaling_roles_node_calls_name_exactly_this_clusters_arn(elastic):
    template = elastic.template("capacity")
    (cluster_id,) = [lid for lid, _ in resources(template, "AWS::SageMaker::Cluster")]
    _, _, policies = autoscaling_role(template)
    statements = [s for _, p in policies for s in p["PolicyDocument"]["Statement"]]
    # the spec encrypts no volume with a key of its own: no KMS statement either
    assert statements == [{"Action": ["sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes"],
                           "Effect": "Allow", "Resource": {"Fn::GetAtt": [cluster_id, "ClusterArn"]}}]


def test_the_wildcard_check_sees_a_wildcard_resource():
    """What the two tests above would report if the node calls went to every cluster, as AWS's sample does."""
    document = {"Statement": [{"Effect": "Allow", "Action": ["sagemaker:BatchAddClusterNodes"],
                               "Resource": "arn:aws:sagemaker:*:*:cluster/*"}]}
    assert wildcards(document) == ["arn:aws:sagemaker:*:*:cluster/*"]
    assert wildcards({"Resource": {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":kms:*"]]}}) == [":kms:*"]
