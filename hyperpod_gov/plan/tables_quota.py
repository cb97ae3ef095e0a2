"""The task-governance objects' tables (``tables.py``): the compute quota of each team and the cluster policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..spec.types import DEFAULT_BORROW_LIMIT_PERCENT
from .fields import Field, Table
from .quotas import Allocated, TeamPlan
from .tables_common import _DEPLOY_TIME, _GENERATED, _TAGS


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


def contract_tags(team: TeamPlan) -> Optional[list[dict[str, str]]]:
    """The quota's tags, sorted by key: the team's cost-allocation tags (``TeamPlan.tags``) and the contract's
    (tag values allow letters, digits, space and _.:/=+-@; a network path is a CIDR, an sg-/pl- id or a word). The
    spec refuses keys under ``hyperpod-gov:``, so the generated ones never conflict with the team's."""
    contract = team.contract
    if contract is None:
        return [{"Key": k, "Value": v} for k, v in team.tags] or None
    tags = {
        "hyperpod-gov:business-owner": contract.business_owner,
        "hyperpod-gov:operations-owner": contract.operations_owner,
        "hyperpod-gov:cost-owner": contract.cost_owner,
        "hyperpod-gov:data-classification": contract.data_classification,
        "hyperpod-gov:approved-workloads": " ".join(contract.approved_workloads),
        "hyperpod-gov:review-by": contract.review_by.isoformat(),
    }
    # Stated only where the contract says more than the default (shared, no network path named).
    if contract.isolation != "shared":
        tags["hyperpod-gov:isolation"] = contract.isolation
    if contract.network_path is not None:
        tags["hyperpod-gov:network-path"] = contract.network_path
    return [{"Key": k, "Value": v} for k, v in sorted({**dict(team.tags), **tags}.items())]


def _lend_and_borrow(team: TeamPlan) -> bool:
    return team.strategy == "LendAndBorrow"


def _resources(team: TeamPlan) -> list[dict[str, Any]]:
    return [resource_config(f.given) for f in team.owned if f.given is not None]


def _absolute(team: TeamPlan) -> Optional[list[dict[str, Any]]]:
    if not _lend_and_borrow(team) or not team.absolute_borrow_limits:
        return None
    return [resource_config(b) for b in team.absolute_borrow_limits]


def _activation(team: TeamPlan) -> str:
    return "Enabled" if team.active else "Disabled"


COMPUTE_QUOTA = Table(
    kind="ComputeQuota",
    label="compute quota",
    spec="teams[]",
    fields=(
        Field("Name", "quota name", "name", get=lambda t: t.quota_name, plan_fields=("quota_name",),
              drift="quotas are matched by ComputeQuotaTarget.TeamName; the name only picks among duplicates",
              imports="generated from the team name"),
        Field("ClusterArn", "cluster", "", drift=_DEPLOY_TIME, imports=_DEPLOY_TIME),
        Field("ActivationState", "the quota", "active", get=_activation, plan_fields=("active",),
              to_spec=lambda v: v != "Disabled"),
        Field("Description", "description", "", get=lambda t: f"hyperpod-gov compute quota of team {t.name}",
              drift=_GENERATED, imports=_GENERATED),
        Field("ComputeQuotaConfig.ComputeQuotaResources", "quota", "quota", get=_resources,
              plan_fields=("flavors",), keyed_by="InstanceType",
              imports="written entry by entry by the importer (one amount per spec entry)"),
        Field("ComputeQuotaConfig.ResourceSharingConfig.Strategy", "sharing strategy", "sharing.strategy",
              get=lambda t: t.strategy, plan_fields=("strategy",), to_spec=str),
        Field("ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit", "borrow limit",
              "sharing.borrowLimitPercent", get=lambda t: t.borrow_limit_percent if _lend_and_borrow(t) else None,
              plan_fields=("borrow_limit_percent",), default=DEFAULT_BORROW_LIMIT_PERCENT, when=_lend_and_borrow,
              after="ComputeQuotaConfig.ResourceSharingConfig.Strategy", to_spec=int, unit="%"),
        Field("ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits", "absolute borrow limits",
              "sharing.absoluteBorrowLimits", get=_absolute, plan_fields=("absolute_borrow_limits",),
              keyed_by="InstanceType", after="ComputeQuotaConfig.ResourceSharingConfig.Strategy",
              imports="written entry by entry by the importer (one amount per spec entry)"),
        Field("ComputeQuotaConfig.PreemptTeamTasks", "preemption of the team's own tasks", "preemptTeamTasks",
              get=lambda t: t.preempt_team_tasks, plan_fields=("preempt_team_tasks",), to_spec=str),
        Field("ComputeQuotaTarget.TeamName", "team", "name", get=lambda t: t.name, plan_fields=("name",),
              drift="the key quotas are matched by", to_spec=str),
        Field("ComputeQuotaTarget.FairShareWeight", "fair-share weight", "fairShareWeight",
              get=lambda t: t.fair_share_weight, plan_fields=("fair_share_weight",), to_spec=int),
        Field("Tags", "contract tags", "contract|tags", get=contract_tags, plan_fields=("contract", "tags"),
              drift="DescribeComputeQuota does not return tags; `review` and the contract record check contracts "
              "(isolation and networkPath have no live counterpart: HPG-C005 to HPG-C007 check them in the spec)",
              imports="the contract is not held by the API: import leaves a commented placeholder"),
    ),
    exempt={
        "namespace": "HyperPod names the namespace after ComputeQuotaTarget.TeamName",
        "cluster_queue": "Kueue objects (kueue mode) and the simulator; HyperPod names its own",
        "local_queue": "Kueue objects (kueue mode) and the simulator; HyperPod names its own",
        "viewers_group": "the team's Kubernetes objects and access entries",
        "submitters_group": "the team's Kubernetes objects and access entries",
        "is_shared_pool": "the shared pool is a team to the API",
        "queue_reader": "the team's Kubernetes objects",
        "identities": "the Pod Identity table and the team view's workload identity rows",
        "storage": "the team's stack (team bucket) and the team view's team bucket rows",
        "tools_policy": "the governance stack's tools policy and the team view's tools policy row",
        "volume": "the team's Kubernetes objects (PersistentVolume and claim); the file system: the cluster view",
        "dedicated": "Kueue objects (kueue mode); the groups: the instance-group table and view (dedicated_to)",
        "monitoring": "the team's stack (alarms, dashboard) and the monitoring view (thresholds, overrides)",
        "slurm": "the Slurm view's team rows and slurm/ (accounts, QOS, users)",
        "egress": "the team's Kubernetes objects (NetworkPolicies)",
        "service_accounts": "the team's Kubernetes objects and Pod Identity associations",
        "viewers": "access entries",
        "submitters": "access entries",
        "pod_security": "the team's Kubernetes objects (admission policies)",
        "pod_exec": "the team's Kubernetes objects (RBAC)",
        "write_secrets": "the team's Kubernetes objects (RBAC)",
        "write_config_maps": "the team's Kubernetes objects (RBAC)",
        "idle_resource_sharing": "the cluster policy (SchedulerConfig.IdleResourceSharing)",
    },
)


@dataclass(frozen=True)
class PolicyPart:
    """What the cluster policy is made of (``policy_part(plan)``)."""

    name: str
    cluster_name: str
    priority_classes: tuple[tuple[str, int], ...]  # (spec name, weight), sorted by name
    fair_sharing: bool
    idle_resource_sharing: bool


def policy_part(plan: Any) -> PolicyPart:
    return PolicyPart(plan.policy_name, plan.cluster.name, tuple((p.name, p.weight) for p in plan.priority_classes),
                      plan.fair_sharing, plan.idle_resource_sharing)


CLUSTER_POLICY = Table(
    kind="ClusterSchedulerConfig",
    label="cluster policy",
    spec="scheduler",
    fields=(
        Field("Name", "policy name", "", get=lambda p: p.name, plan_fields=("name",),
              drift="HyperPod holds one policy per cluster; the planned name only picks among several",
              imports="the spec's name is read from it (<name>-policy)"),
        Field("ClusterArn", "cluster", "", drift=_DEPLOY_TIME, imports=_DEPLOY_TIME),
        Field("Description", "description", "", get=lambda p: f"hyperpod-gov cluster policy of {p.cluster_name}",
              plan_fields=("cluster_name",), drift=_GENERATED, imports=_GENERATED),
        Field("SchedulerConfig.PriorityClasses", "priority classes", "priorityClasses",
              get=lambda p: [{"Name": n, "Weight": w} for n, w in p.priority_classes],
              plan_fields=("priority_classes",), keyed_by="Name", strip_key=False,
              to_spec=lambda v: [{"name": p["Name"], "weight": p["Weight"]} for p in v] or None),
        Field("SchedulerConfig.FairShare", "fair sharing of idle compute", "idleCompute",
              get=lambda p: "Enabled" if p.fair_sharing else "Disabled", plan_fields=("fair_sharing",),
              to_spec=lambda v: "fair-share" if v == "Enabled" else "first-come-first-serve"),
        # Written only when off: the service's default is Enabled.
        Field("SchedulerConfig.IdleResourceSharing", "idle resource sharing", "idleResourceSharing",
              get=lambda p: None if p.idle_resource_sharing else "Disabled", plan_fields=("idle_resource_sharing",),
              default="Enabled", to_spec=lambda v: v != "Disabled"),
        Field("Tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
)
