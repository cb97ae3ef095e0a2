"""Per-team Kubernetes objects: namespace (kueue mode), policies, RBAC, service accounts, local queue."""

from __future__ import annotations

from cdk8s import Chart
from constructs import Construct

from ..plan import GovernancePlan, TeamPlan
from ..spec.models import GovernanceSpec, Team
from ._objects import api_object
from .kueue import cluster_queue, local_queue
from .network_policy import network_policies
from .rbac import cluster_rbac, team_rbac

ANNOTATION_PREFIX = "hyperpod-gov.io"


def contract_annotations(team: Team) -> dict[str, str]:
    c = team.contract
    if c is None:
        return {}
    return {
        f"{ANNOTATION_PREFIX}/business-owner": c.business_owner,
        f"{ANNOTATION_PREFIX}/operations-owner": c.operations_owner,
        f"{ANNOTATION_PREFIX}/cost-owner": c.cost_owner,
        f"{ANNOTATION_PREFIX}/data-classification": c.data_classification,
        f"{ANNOTATION_PREFIX}/approved-workloads": ",".join(c.approved_workloads),
        f"{ANNOTATION_PREFIX}/review-by": c.review_by.isoformat(),
    }


class TenantChart(Chart):
    """Everything a team gets, cluster-scoped (its ClusterQueue and queue-reader ClusterRole) and
    namespaced. No chart namespace: each namespaced object names its own.

    In ``task-governance`` mode HyperPod creates the namespace with the team's
    ComputeQuota, so the chart must not own it (deleting the chart would delete
    the team's work); in ``kueue`` mode the chart owns it.
    """

    def __init__(self, scope: Construct, id: str, *, spec: GovernanceSpec, plan: GovernancePlan, team: Team) -> None:
        super().__init__(scope, id, disable_resource_name_hashes=True)
        tp: TeamPlan = plan.team(team.name)
        owns_namespace = spec.scheduler.mode == "kueue"
        if owns_namespace:
            api_object(self, "Namespace", api_version="v1", kind="Namespace", name=tp.namespace,
                       annotations=contract_annotations(team), labels={"hyperpod-gov.io/team": team.name})
        if owns_namespace:
            cluster_queue(self, plan, tp)
        cluster_rbac(self, team=tp)
        network_policies(self, team=team, namespace=tp.namespace, vpc_cidr=spec.cluster.vpc.cidr)
        team_rbac(self, team=tp)
        for w in sorted(team.workload_identities, key=lambda w: w.service_account):
            api_object(self, f"ServiceAccount-{w.service_account}", api_version="v1", kind="ServiceAccount",
                       name=w.service_account, namespace=tp.namespace, labels={"hyperpod-gov.io/team": team.name})
        if owns_namespace:
            local_queue(self, tp)
