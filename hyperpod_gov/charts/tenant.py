"""Per-team Kubernetes objects: namespace (kueue mode), policies, RBAC, service accounts, local queue."""

from __future__ import annotations

from cdk8s import Chart
from constructs import Construct

from ..plan import Plan, TeamPlan
from ..plan.names import TEAM_LABEL
from ._objects import api_object
from .admission import namespace_labels, team_bindings
from .kueue import cluster_queue, local_queue
from .network_policy import network_policies
from .rbac import cluster_rbac, team_rbac
from .storage import team_storage

ANNOTATION_PREFIX = "hyperpod-gov.io"
LIMIT_RANGE = "hyperpod-gov-defaults"
# Requests a container gets when it states none (LimitRange defaultRequest, applied by the API server to every Pod
# of the namespace, the operators' pods among them). Chosen over refusing such containers in admission: Kueue
# counts LimitRange defaults when it sizes a workload (kueue pkg/workload/resources.go, AdjustResources), so a
# container without requests no longer counts zero against the quota, and manifests and operators that leave
# requests out keep working. No default limit: a default limit below a container's own request would refuse
# the pod. Accelerators get no default (a GPU nobody asked for is worse than none); admission requires their
# requests to equal their limits instead.
DEFAULT_REQUESTS = {"cpu": "1", "memory": "2Gi"}


def contract_annotations(team: TeamPlan) -> dict[str, str]:
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

    def __init__(self, scope: Construct, id: str, *, plan: Plan, team: TeamPlan) -> None:
        super().__init__(scope, id, disable_resource_name_hashes=True)
        if plan.owns_namespaces:
            api_object(self, "Namespace", api_version="v1", kind="Namespace", name=team.namespace,
                       annotations=contract_annotations(team),
                       labels={TEAM_LABEL: team.name, **namespace_labels(team, plan.cluster.kubernetes_version)})
        if plan.emits_kueue_objects:
            cluster_queue(self, plan, team)
        cluster_rbac(self, team=team)
        team_bindings(self, team=team, priority_classes=team.kueue_priority_classes,
                      file_system=plan.shared_storage.file_system if plan.shared_storage is not None else None)
        api_object(self, "LimitRange", api_version="v1", kind="LimitRange", name=LIMIT_RANGE, namespace=team.namespace,
                   body={"spec": {"limits": [{"type": "Container", "defaultRequest": dict(DEFAULT_REQUESTS)}]}})
        network_policies(self, team=team, vpc_cidr=plan.network.cidr)
        team_rbac(self, team=team)
        for sa in team.service_accounts:
            api_object(self, f"ServiceAccount-{sa}", api_version="v1", kind="ServiceAccount",
                       name=sa, namespace=team.namespace, labels={TEAM_LABEL: team.name})
        if plan.emits_kueue_objects:
            local_queue(self, team)
        team_storage(self, plan=plan, team=team)  # cluster.sharedStorage: the team's volume and claim
