"""HyperPod task governance as plain data: the cluster policy and each team's compute quota.

The keys are the SageMaker API's member names, which CloudFormation's
``AWS::SageMaker::ClusterSchedulerConfig`` and ``ComputeQuota`` properties
share. The native resources, the SDK-backed custom resource and ``drift`` all
read these same dicts.
"""

from __future__ import annotations

from typing import Any, Sequence

from .fields import emit
from .quotas import TeamPlan
from .tables import CLUSTER_POLICY, COMPUTE_QUOTA, PolicyPart, resource_config

__all__ = ["scheduler_config", "resource_config", "compute_quota_config", "compute_quota_target",
           "cluster_policy_properties", "activation_state", "compute_quota_properties"]


def scheduler_config(priority_classes: Sequence[tuple[str, int]], fair_sharing: bool,
                     idle_resource_sharing: bool = True) -> dict[str, Any]:
    """``SchedulerConfig``: priority classes (spec names and weights), fair sharing of idle compute and, when
    the spec switches it off, ``IdleResourceSharing: Disabled`` (left out when on: the service's default is
    Enabled, and drift reads a missing value as Enabled)."""
    part = PolicyPart("", "", tuple(priority_classes), fair_sharing, idle_resource_sharing)
    return emit(CLUSTER_POLICY, part)["SchedulerConfig"]


def compute_quota_config(team: TeamPlan) -> dict[str, Any]:
    """``ComputeQuotaConfig``: owned resources as the spec gave them, sharing and preemption."""
    return emit(COMPUTE_QUOTA, team)["ComputeQuotaConfig"]


def compute_quota_target(team: TeamPlan) -> dict[str, Any]:
    """``ComputeQuotaTarget``: the team (HyperPod names its namespace after it) and its fair-share weight."""
    return emit(COMPUTE_QUOTA, team)["ComputeQuotaTarget"]


def cluster_policy_properties(name: str, cluster_name: str, priority_classes: Sequence[tuple[str, int]],
                              fair_sharing: bool, cluster_arn: str,
                              idle_resource_sharing: bool = True) -> dict[str, Any]:
    """Every property of the cluster policy (``cluster_arn`` may be a deploy-time reference)."""
    part = PolicyPart(name, cluster_name, tuple(priority_classes), fair_sharing, idle_resource_sharing)
    return emit(CLUSTER_POLICY, part, {"ClusterArn": cluster_arn})


def activation_state(team: TeamPlan) -> str:
    """``ActivationState``: Disabled for a paused team (teams[].active: false)."""
    return emit(COMPUTE_QUOTA, team)["ActivationState"]


def compute_quota_properties(team: TeamPlan, cluster_arn: str) -> dict[str, Any]:
    """Every property of a team's compute quota, in the order CloudFormation shows them."""
    return emit(COMPUTE_QUOTA, team, {"ClusterArn": cluster_arn})
