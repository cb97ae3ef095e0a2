"""HyperPod task governance: the cluster policy and one compute quota per team."""

from __future__ import annotations

from typing import Any, Optional

from aws_cdk import CfnResource, aws_sagemaker as sagemaker
from constructs import Construct

from ..plan import GovernancePlan, TeamPlan
from ..spec.models import Contract, GovernanceSpec
from ._nag import acknowledge

COMPUTE_QUOTA_TYPE = "AWS::SageMaker::ComputeQuota"  # no L1 class in aws-cdk-lib yet


def contract_tags(contract: Optional[Contract]) -> list[dict[str, str]]:
    """Tags from the team's contract, sorted by key (tag values allow letters, digits, space and _.:/=+-@)."""
    if contract is None:
        return []
    tags = {
        "hyperpod-gov:business-owner": contract.business_owner,
        "hyperpod-gov:operations-owner": contract.operations_owner,
        "hyperpod-gov:cost-owner": contract.cost_owner,
        "hyperpod-gov:data-classification": contract.data_classification,
        "hyperpod-gov:approved-workloads": " ".join(contract.approved_workloads),
        "hyperpod-gov:review-by": contract.review_by.isoformat(),
    }
    return [{"Key": k, "Value": v} for k, v in sorted(tags.items())]


class ClusterPolicy(Construct):
    """``AWS::SageMaker::ClusterSchedulerConfig``: priority classes and fair sharing of idle compute."""

    def __init__(self, scope: Construct, id: str, *, spec: GovernanceSpec, plan: GovernancePlan,
                 cluster_arn: str) -> None:
        super().__init__(scope, id)
        self.resource = sagemaker.CfnClusterSchedulerConfig(
            self,
            "Resource",
            name=f"{spec.name}-policy",
            cluster_arn=cluster_arn,
            description=f"hyperpod-gov cluster policy of {spec.cluster.name}",
            scheduler_config=sagemaker.CfnClusterSchedulerConfig.SchedulerConfigProperty(
                priority_classes=[
                    sagemaker.CfnClusterSchedulerConfig.PriorityClassProperty(name=p.name, weight=p.weight)
                    for p in plan.priority_classes
                ],
                fair_share="Enabled" if plan.fair_sharing else "Disabled",
            ),
        )


def compute_quota_properties(spec: GovernanceSpec, team: TeamPlan, cluster_arn: str,
                             contract: Optional[Contract]) -> dict[str, Any]:
    sharing: dict[str, Any] = {"Strategy": team.strategy}
    if team.strategy == "LendAndBorrow":
        sharing["BorrowLimit"] = team.borrow_limit_percent
    resources = []
    for f in team.owned:
        entry: dict[str, Any] = {"InstanceType": f.instance_type}
        if f.accelerators is not None:
            entry["Accelerators"] = f.accelerators
        else:
            entry["Count"] = f.count
        resources.append(entry)
    props: dict[str, Any] = {
        "Name": f"{team.name}-quota",
        "ClusterArn": cluster_arn,
        "ActivationState": "Enabled",
        "Description": f"hyperpod-gov compute quota of team {team.name}",
        "ComputeQuotaConfig": {
            "ComputeQuotaResources": resources,
            "ResourceSharingConfig": sharing,
            "PreemptTeamTasks": team.preempt_team_tasks,
        },
        "ComputeQuotaTarget": {"TeamName": team.name, "FairShareWeight": team.fair_share_weight},
    }
    tags = contract_tags(contract)
    if tags:
        props["Tags"] = tags
    return props


class TeamQuota(Construct):
    """``AWS::SageMaker::ComputeQuota`` of one team. HyperPod creates the team namespace with it."""

    def __init__(self, scope: Construct, id: str, *, spec: GovernanceSpec, team: TeamPlan, cluster_arn: str,
                 contract: Optional[Contract] = None) -> None:
        super().__init__(scope, id)
        self.resource = CfnResource(
            self, "Resource", type=COMPUTE_QUOTA_TYPE,
            properties=compute_quota_properties(spec, team, cluster_arn, contract),
        )
        acknowledge(self, [("CloudFormation-Validate::F3006", f"{COMPUTE_QUOTA_TYPE} is newer than the resource "
                            "specification bundled with aws-cdk-lib's template check; the tests validate it with "
                            "cfn-lint's schema, which knows the type.")])
