"""HyperPod task governance: the cluster policy and one compute quota per team.

Each construct takes plan parts (``ClusterPolicyPlan``, ``TeamPlan``) and the cluster it governs, and builds the
properties inside with ``plan.task_governance`` (API-shaped dicts). Where the region's CloudFormation has the
native types they are used; elsewhere the same properties go through the SDK-backed custom resource
(``task_governance_provider``), one provider per stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from aws_cdk import CfnResource, CustomResource, Stack, aws_sagemaker as sagemaker
from constructs import Construct

from ..plan import TeamPlan
from ..plan import task_governance as tg
from ..plan.plan import ClusterPolicyPlan
from ..plan.regions import TaskGovernanceBackend
from ._nag import acknowledge
from .plain import Fragment
from .task_governance_provider import (POLICY_RESOURCE_TYPE, QUOTA_RESOURCE_TYPE, HandlerPlacement,
                                       TaskGovernanceProvider)

COMPUTE_QUOTA_TYPE = "AWS::SageMaker::ComputeQuota"  # no L1 class in aws-cdk-lib yet
PROVIDER_ID = "TaskGovernanceProvider"  # the stack's one provider, a child of the stack
INCLUDE_ID = "Resources"  # the CfnInclude under a TeamQuota


@dataclass(frozen=True)
class GovernedCluster:
    """The HyperPod cluster that task governance resources apply to, and how they are declared there."""

    cluster_arn: str  # the HyperPod cluster's ARN (may be a deploy-time reference)
    eks_cluster_name: str  # the SDK-backed provider may map teams' access on this EKS cluster only
    backend: TaskGovernanceBackend  # native CloudFormation types, or the SDK-backed custom resource
    placement: Optional[HandlerPlacement] = None  # the SDK-backed provider's functions in the VPC, or outside

    def provider(self, scope: Construct) -> Optional[TaskGovernanceProvider]:
        """The stack's provider (made on first use), or None with the native types."""
        if self.backend == "native":
            return None
        stack = Stack.of(scope)
        found = stack.node.try_find_child(PROVIDER_ID)
        if isinstance(found, TaskGovernanceProvider):
            return found
        return TaskGovernanceProvider(stack, PROVIDER_ID, cluster_arn=self.cluster_arn,
                                      eks_cluster_name=self.eks_cluster_name, placement=self.placement)


class ClusterPolicy(Construct):
    """``AWS::SageMaker::ClusterSchedulerConfig`` (or ``Custom::ClusterSchedulerConfig``): priority classes and
    fair sharing of idle compute. ``resource`` is the primary child (``Resource``)."""

    def __init__(self, scope: Construct, id: str, *, policy: ClusterPolicyPlan, cluster: GovernedCluster) -> None:
        provider = cluster.provider(scope)  # before this construct: the provider leads the stack's resources
        super().__init__(scope, id)
        properties = tg.cluster_policy_properties(policy.name, policy.cluster_name, list(policy.priority_classes),
                                                  policy.fair_sharing, cluster.cluster_arn,
                                                  idle_resource_sharing=policy.idle_resource_sharing)
        self.resource: Construct
        if provider is not None:
            self.resource = CustomResource(self, "Resource", service_token=provider.service_token,
                                           resource_type=POLICY_RESOURCE_TYPE, properties=properties)
            return
        config = properties["SchedulerConfig"]
        self.resource = sagemaker.CfnClusterSchedulerConfig(
            self,
            "Resource",
            name=properties["Name"],
            cluster_arn=properties["ClusterArn"],
            description=properties["Description"],
            scheduler_config=sagemaker.CfnClusterSchedulerConfig.SchedulerConfigProperty(
                priority_classes=[
                    sagemaker.CfnClusterSchedulerConfig.PriorityClassProperty(name=p["Name"], weight=p["Weight"])
                    for p in config["PriorityClasses"]
                ],
                fair_share=config["FairShare"],
                idle_resource_sharing=config.get("IdleResourceSharing"),
            ),
        )


QUOTA_UNKNOWN_TO_CDK = [("CloudFormation-Validate::F3006", f"{COMPUTE_QUOTA_TYPE} is newer than the resource "
                         "specification bundled with aws-cdk-lib's template check; the tests validate it with "
                         "cfn-lint's schema, which knows the type.")]


def plain_quota(fragment: Fragment, below: Sequence[str], *, team: TeamPlan, cluster: GovernedCluster,
                service_token: Optional[str]) -> tuple[str, bool]:
    """A team's compute quota as plain data in ``fragment`` at ``below`` (``TeamQuota``'s path), as aws-cdk-lib
    renders a ``CfnResource`` of ``COMPUTE_QUOTA_TYPE`` at ``below``/Resource or, with a provider, a
    ``CustomResource`` there (tests/constructs/test_plain_pinned.py and test_plain_teams.py build both); its
    logical id, and whether it is the native type, whose template-check finding the caller acknowledges on the
    include or a scope above it (``QUOTA_UNKNOWN_TO_CDK``). ``service_token``: the stack's provider's
    (``cluster.provider``), None with the native types."""
    properties: dict[str, Any] = tg.compute_quota_properties(team, cluster.cluster_arn)
    if service_token is not None:
        return fragment.add([*below, "Resource", "Default"], QUOTA_RESOURCE_TYPE,
                            {"ServiceToken": service_token, **properties}, delete=True), False
    return fragment.add([*below, "Resource"], COMPUTE_QUOTA_TYPE, properties), True


class TeamQuota(Construct):
    """``AWS::SageMaker::ComputeQuota`` (or ``Custom::ComputeQuota``) of one team. HyperPod creates the team
    namespace with it.

    The quota is plain data (:func:`plain_quota`, the one emitter, which a teams stack also calls into its own
    fragment) in one ``CfnInclude``; ``resource`` is the included resource (the escape hatch: a ``CfnResource``),
    at the logical id ``<id>/Resource`` (the custom resource: ``<id>/Resource/Default``) has."""

    def __init__(self, scope: Construct, id: str, *, team: TeamPlan, cluster: GovernedCluster) -> None:
        provider = cluster.provider(scope)  # before this construct: the provider leads the stack's resources
        super().__init__(scope, id)
        fragment = Fragment(self)
        self.logical_id, native = plain_quota(fragment, [], team=team, cluster=cluster,
                                              service_token=provider.service_token if provider else None)
        self.resource: CfnResource = fragment.include_resources(INCLUDE_ID).get_resource(self.logical_id)
        if native:
            acknowledge(self, QUOTA_UNKNOWN_TO_CDK)
