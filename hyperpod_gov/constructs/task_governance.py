"""HyperPod task governance: the cluster policy and one compute quota per team.

The properties come from ``plan.task_governance`` (API-shaped dicts). Where the
region's CloudFormation has the native types they are used; elsewhere the same
properties go through the SDK-backed custom resource (``task_governance_provider``).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnResource, aws_sagemaker as sagemaker
from constructs import Construct

from ._nag import acknowledge

COMPUTE_QUOTA_TYPE = "AWS::SageMaker::ComputeQuota"  # no L1 class in aws-cdk-lib yet


class ClusterPolicy(Construct):
    """``AWS::SageMaker::ClusterSchedulerConfig``: priority classes and fair sharing of idle compute."""

    def __init__(self, scope: Construct, id: str, *, properties: dict[str, Any]) -> None:
        super().__init__(scope, id)
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


class TeamQuota(Construct):
    """``AWS::SageMaker::ComputeQuota`` of one team. HyperPod creates the team namespace with it."""

    def __init__(self, scope: Construct, id: str, *, properties: dict[str, Any]) -> None:
        super().__init__(scope, id)
        self.resource = CfnResource(self, "Resource", type=COMPUTE_QUOTA_TYPE, properties=properties)
        acknowledge(self, [("CloudFormation-Validate::F3006", f"{COMPUTE_QUOTA_TYPE} is newer than the resource "
                            "specification bundled with aws-cdk-lib's template check; the tests validate it with "
                            "cfn-lint's schema, which knows the type.")])
