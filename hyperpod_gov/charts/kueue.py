"""Kueue objects (``kueue`` mode only): flavors, priority classes, one ClusterQueue and LocalQueue per team.

In ``task-governance`` mode the HyperPod add-on owns all of these; emitting
them would only have them overwritten.
"""

from __future__ import annotations

from typing import Any

from constructs import Construct

from ..plan import GovernancePlan, TeamPlan
from ..plan import names
from ..plan.quotas import Amounts, FlavorQuota
from ._objects import api_object

KUEUE_API = "kueue.x-k8s.io/v1beta2"


def _quantities(plan: GovernancePlan, f: FlavorQuota, amounts: Amounts) -> dict[str, Any]:
    """Per covered resource: cpu in cores, memory in Gi, each accelerator kind (0 if the flavor has another)."""
    out: dict[str, Any] = {"cpu": amounts.vcpu, "memory": f"{amounts.memory_gib}Gi"}
    for resource in plan.covered_resources[2:]:
        out[resource] = amounts.accelerators if resource == f.accelerator_kind else 0
    return out


def _resource(plan: GovernancePlan, f: FlavorQuota, name: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "nominalQuota": _quantities(plan, f, f.nominal)[name]}
    if f.lending_limit is not None:
        entry["lendingLimit"] = _quantities(plan, f, f.lending_limit)[name]
    if f.borrowing_limit is not None:
        entry["borrowingLimit"] = _quantities(plan, f, f.borrowing_limit)[name]
    return entry


def cluster_queue_spec(plan: GovernancePlan, team: TeamPlan) -> dict[str, Any]:
    """The ClusterQueue spec of a team, per DESIGN.md's semantics table."""
    return {
        "cohortName": plan.cohort,
        # Only the team's own namespace may submit to its queue (null would admit none, {} all).
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team.namespace}},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [
            {
                "coveredResources": list(plan.covered_resources),
                "flavors": [
                    {"name": names.flavor(f.instance_type),
                     "resources": [_resource(plan, f, r) for r in plan.covered_resources]}
                    for f in team.flavors
                ],
            }
        ],
        "preemption": {
            "withinClusterQueue": team.preempt_team_tasks,
            # A lender takes back what it lent when its own work needs it.
            "reclaimWithinCohort": "Any" if team.can_lend else "Never",
        },
        "fairSharing": {"weight": team.fair_share_weight},
    }


class KueueSharedObjects(Construct):
    """Kueue objects every team shares: ResourceFlavors, WorkloadPriorityClasses, the shared pool's queue."""

    def __init__(self, scope: Construct, id: str, *, plan: GovernancePlan) -> None:
        super().__init__(scope, id)
        for flavor in plan.flavors:
            api_object(
                self, f"Flavor-{flavor.name}", api_version=KUEUE_API, kind="ResourceFlavor", name=flavor.name,
                body={"spec": {"nodeLabels": {names.INSTANCE_TYPE_LABEL: flavor.instance_type}}},
            )
        for pc in plan.priority_classes:
            api_object(
                self, f"Priority-{pc.name}", api_version=KUEUE_API, kind="WorkloadPriorityClass",
                name=pc.kueue_name, body={"value": pc.weight, "description": f"{pc.name} (weight {pc.weight})"},
            )
        for team in plan.teams:
            if team.is_shared_pool:
                cluster_queue(self, plan, team)


def cluster_queue(scope: Construct, plan: GovernancePlan, team: TeamPlan) -> None:
    api_object(
        scope, f"ClusterQueue-{team.name}", api_version=KUEUE_API, kind="ClusterQueue",
        name=team.cluster_queue, body={"spec": cluster_queue_spec(plan, team)},
    )


def local_queue(scope: Construct, team: TeamPlan) -> None:
    api_object(
        scope, "LocalQueue", api_version=KUEUE_API, kind="LocalQueue", name=team.local_queue,
        namespace=team.namespace, body={"spec": {"clusterQueue": team.cluster_queue}},
    )
