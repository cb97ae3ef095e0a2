"""HyperPod task governance through the SageMaker API, for regions whose CloudFormation lacks the types.

``TaskGovernanceProvider`` is one custom resource provider per stack (the Lambda handler in
``hyperpod_gov/assets/task_governance_provider``); ``SdkClusterPolicy`` and ``SdkComputeQuota`` take
exactly the properties of ``AWS::SageMaker::ClusterSchedulerConfig`` and ``AWS::SageMaker::ComputeQuota``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional

from aws_cdk import CustomResource, Duration, Stack, aws_iam as iam
from constructs import Construct

from ._nag import acknowledge, wildcard
from .bundled_provider import (HANDLER_RUNTIME, QUERY_INTERVAL, BundledProvider, HandlerPlacement, logs_key,
                               nag_arn_prefix, waiter_trust_conditions)

__all__ = ["HANDLER_RUNTIME", "QUERY_INTERVAL", "HandlerPlacement", "SdkClusterPolicy", "SdkComputeQuota",
           "TaskGovernanceProvider", "logs_key", "waiter_trust_conditions"]

HANDLER_DIR = Path(__file__).resolve().parents[1] / "assets" / "task_governance_provider"
HANDLER_SERVICES = ("sagemaker",)  # the service models its bundled botocore carries
POLICY_RESOURCE_TYPE = "Custom::ClusterSchedulerConfig"
QUOTA_RESOURCE_TYPE = "Custom::ComputeQuota"
TOTAL_TIMEOUT = Duration.minutes(30)

MANAGE_VERBS = ("Describe", "Update", "Delete")  # Create also names the cluster: its own statements
# The one EKS access policy SageMaker associates (and disassociates) on the cluster's access entries when a compute
# quota changes: the policy EKS publishes for HyperPod's system namespaces (`aws eks list-access-policies`). The
# role may associate no other, so a change of a quota cannot grant, say, AmazonEKSClusterAdminPolicy to anyone.
HYPERPOD_ACCESS_POLICY = "AmazonSagemakerHyperpodSystemNamespacePolicy"


class TaskGovernanceProvider(BundledProvider):
    """The provider behind ``SdkClusterPolicy`` and ``SdkComputeQuota`` on one HyperPod cluster.

    Its handler may manage cluster policies and compute quotas of this account and region, create
    them only on ``cluster_arn``, and make the EKS calls SageMaker makes with the caller's
    credentials when a policy or quota changes (on ``eks_cluster_name`` only). Its log groups are
    encrypted with a key of its own; with a ``placement`` the handler's two functions run in the
    VPC (the CDK provider framework's stay outside: docs/security.md, "Low findings of the scan").
    """

    def __init__(self, scope: Construct, id: str, *, cluster_arn: str, eks_cluster_name: str,
                 placement: Optional[HandlerPlacement] = None) -> None:
        stack = Stack.of(scope)
        configs = stack.format_arn(service="sagemaker", resource="cluster-scheduler-config", resource_name="*")
        quotas = stack.format_arn(service="sagemaker", resource="compute-quota", resource_name="*")
        eks_cluster = stack.format_arn(service="eks", resource="cluster", resource_name=eks_cluster_name)
        access_entries = stack.format_arn(service="eks", resource="access-entry",
                                          resource_name=f"{eks_cluster_name}/*")
        statements = [
            iam.PolicyStatement(sid="CreateOnTheCluster", actions=["sagemaker:CreateClusterSchedulerConfig"],
                                resources=[cluster_arn, configs]),
            iam.PolicyStatement(sid="CreateQuotaOnTheCluster", actions=["sagemaker:CreateComputeQuota"],
                                resources=[cluster_arn, quotas]),
            iam.PolicyStatement(sid="ManagePolicies",
                                actions=[f"sagemaker:{verb}ClusterSchedulerConfig" for verb in MANAGE_VERBS]
                                + ["sagemaker:AddTags", "sagemaker:DeleteTags"],
                                resources=[configs]),
            iam.PolicyStatement(sid="ManageQuotas",
                                actions=[f"sagemaker:{verb}ComputeQuota" for verb in MANAGE_VERBS]
                                + ["sagemaker:AddTags", "sagemaker:DeleteTags"],
                                resources=[quotas]),
            iam.PolicyStatement(sid="FindByName",
                                actions=["sagemaker:ListClusterSchedulerConfigs", "sagemaker:ListComputeQuotas"],
                                resources=["*"]),
            # The native types' handlers list these: SageMaker reads the cluster and maps the team's
            # access in EKS with the caller's credentials.
            iam.PolicyStatement(sid="ReadTheCluster", actions=["sagemaker:DescribeCluster"],
                                resources=[cluster_arn]),
            iam.PolicyStatement(sid="ReadTheEksCluster", actions=["eks:DescribeCluster"], resources=[eks_cluster]),
            iam.PolicyStatement(sid="MapTeamAccess",
                                actions=["eks:AssociateAccessPolicy", "eks:DisassociateAccessPolicy"],
                                resources=[access_entries],
                                conditions={"StringEquals": {"eks:policyArn": hyperpod_access_policy(stack)}}),
            iam.PolicyStatement(sid="ReadTeamAccess",
                                actions=["eks:DescribeAccessEntry", "eks:ListAssociatedAccessPolicies"],
                                resources=[access_entries]),
        ]
        super().__init__(scope, id, what="task governance", handler_dir=HANDLER_DIR, services=HANDLER_SERVICES,
                         statements=statements, total_timeout=TOTAL_TIMEOUT, placement=placement)
        self._acknowledge(stack, eks_cluster_name)

    def _acknowledge(self, stack: Stack, eks_cluster_name: str) -> None:
        handler = self.handler_name
        here = nag_arn_prefix(stack)
        acknowledge(self.policy, [
            (wildcard("Resource", f"{here('sagemaker')}cluster-scheduler-config/*"),
             f"SageMaker assigns a cluster policy's id when {handler} creates it, so its ARN is unknown before; "
             "scoped to cluster policies of this account and region."),
            (wildcard("Resource", f"{here('sagemaker')}compute-quota/*"),
             f"SageMaker assigns a compute quota's id when {handler} creates it, so its ARN is unknown before; "
             "scoped to compute quotas of this account and region."),
            (wildcard("Resource", "*"),
             "ListClusterSchedulerConfigs and ListComputeQuotas take no resource type in the Service "
             f"Authorization Reference, so only '*' works; {handler} lists to adopt a resource of the same "
             "name on this cluster."),
            (wildcard("Resource", f"{here('eks')}access-entry/{eks_cluster_name}/*"),
             f"Access entries of EKS cluster {eks_cluster_name} only (their ids are generated by EKS): SageMaker "
             "maps teams' access there with the caller's credentials when a policy or quota changes, associating "
             f"{HYPERPOD_ACCESS_POLICY} and no other access policy (eks:policyArn)."),
        ])


def hyperpod_access_policy(stack: Stack) -> str:
    """The ARN of ``HYPERPOD_ACCESS_POLICY`` in the stack's partition (EKS access policies have no region or
    account: arn:aws:eks::aws:cluster-access-policy/NAME)."""
    return f"arn:{stack.partition}:eks::aws:cluster-access-policy/{HYPERPOD_ACCESS_POLICY}"


class _SdkResource(Construct):
    resource_type = ""
    required: tuple[str, ...] = ()
    native = ""

    def __init__(self, scope: Construct, id: str, *, provider: TaskGovernanceProvider,
                 properties: Mapping[str, Any]) -> None:
        super().__init__(scope, id)
        missing = [k for k in self.required if k not in properties]
        if missing:
            raise ValueError(f"{self.node.path}: properties lack {', '.join(missing)} ({sorted(properties)}); "
                             f"pass the properties of {self.native}")
        self.resource = CustomResource(self, "Resource", service_token=provider.service_token,
                                       resource_type=self.resource_type, properties=dict(properties))
        self.attr_arn = self.resource.get_att_string("Arn")
        self.attr_id = self.resource.ref


class SdkClusterPolicy(_SdkResource):
    """``Custom::ClusterSchedulerConfig``: the cluster policy, with the properties of the native type."""

    resource_type = POLICY_RESOURCE_TYPE
    required = ("Name", "ClusterArn", "SchedulerConfig")
    native = "AWS::SageMaker::ClusterSchedulerConfig"


class SdkComputeQuota(_SdkResource):
    """``Custom::ComputeQuota``: one team's compute quota, with the properties of the native type."""

    resource_type = QUOTA_RESOURCE_TYPE
    required = ("Name", "ClusterArn", "ComputeQuotaConfig", "ComputeQuotaTarget")
    native = "AWS::SageMaker::ComputeQuota"
