"""HyperPod task governance as plain data: the cluster policy and each team's compute quota.

The keys are the SageMaker API's member names, which CloudFormation's
``AWS::SageMaker::ClusterSchedulerConfig`` and ``ComputeQuota`` properties
share. The native resources, the SDK-backed custom resource and ``drift`` all
read these same dicts.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..spec.models import Contract
from .quotas import Allocated, TeamPlan


def scheduler_config(priority_classes: Sequence[tuple[str, int]], fair_sharing: bool,
                     idle_resource_sharing: bool = True) -> dict[str, Any]:
    """``SchedulerConfig``: priority classes (spec names and weights), fair sharing of idle compute and, when
    the spec switches it off, ``IdleResourceSharing: Disabled`` (left out when on: the service's default is
    Enabled, and drift reads a missing value as Enabled)."""
    config: dict[str, Any] = {
        "PriorityClasses": [{"Name": name, "Weight": weight} for name, weight in priority_classes],
        "FairShare": "Enabled" if fair_sharing else "Disabled",
    }
    if not idle_resource_sharing:
        config["IdleResourceSharing"] = "Disabled"
    return config


def resource_config(given: Allocated) -> dict[str, Any]:
    """One ``ComputeQuotaResourceConfig`` (a quota resource or an absolute borrow limit), as the spec gave it."""
    entry: dict[str, Any] = {"InstanceType": given.instance_type}
    if given.accelerators is not None:
        entry["Accelerators"] = given.accelerators
    elif given.vcpu is not None:
        entry["VCpu"] = given.vcpu
        entry["MemoryInGiB"] = given.memory_gib
    elif given.partition is not None:
        entry["AcceleratorPartition"] = {"Type": given.partition[0], "Count": given.partition[1]}
    else:
        entry["Count"] = given.count
    return entry


def compute_quota_config(team: TeamPlan) -> dict[str, Any]:
    """``ComputeQuotaConfig``: owned resources as the spec gave them, sharing and preemption."""
    sharing: dict[str, Any] = {"Strategy": team.strategy}
    if team.strategy == "LendAndBorrow":
        sharing["BorrowLimit"] = team.borrow_limit_percent
        if team.absolute_borrow_limits:
            sharing["AbsoluteBorrowLimits"] = [resource_config(b) for b in team.absolute_borrow_limits]
    resources = [resource_config(f.given) for f in team.owned if f.given is not None]
    return {
        "ComputeQuotaResources": resources,
        "ResourceSharingConfig": sharing,
        "PreemptTeamTasks": team.preempt_team_tasks,
    }


def compute_quota_target(team: TeamPlan) -> dict[str, Any]:
    """``ComputeQuotaTarget``: the team (HyperPod names its namespace after it) and its fair-share weight."""
    return {"TeamName": team.name, "FairShareWeight": team.fair_share_weight}


def cluster_policy_properties(name: str, cluster_name: str, priority_classes: Sequence[tuple[str, int]],
                              fair_sharing: bool, cluster_arn: str,
                              idle_resource_sharing: bool = True) -> dict[str, Any]:
    """Every property of the cluster policy (``cluster_arn`` may be a deploy-time reference)."""
    return {
        "Name": name,
        "ClusterArn": cluster_arn,
        "Description": f"hyperpod-gov cluster policy of {cluster_name}",
        "SchedulerConfig": scheduler_config(priority_classes, fair_sharing, idle_resource_sharing),
    }


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


def activation_state(team: TeamPlan) -> str:
    """``ActivationState``: Disabled for a paused team (teams[].active: false)."""
    return "Enabled" if team.active else "Disabled"


def compute_quota_properties(team: TeamPlan, cluster_arn: str) -> dict[str, Any]:
    """Every property of a team's compute quota, in the order CloudFormation shows them."""
    props: dict[str, Any] = {
        "Name": team.quota_name,
        "ClusterArn": cluster_arn,
        "ActivationState": activation_state(team),
        "Description": f"hyperpod-gov compute quota of team {team.name}",
        "ComputeQuotaConfig": compute_quota_config(team),
        "ComputeQuotaTarget": compute_quota_target(team),
    }
    tags = contract_tags(team.contract)
    if tags:
        props["Tags"] = tags
    return props
