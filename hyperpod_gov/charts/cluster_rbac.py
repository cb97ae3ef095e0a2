"""Cluster-wide reads: what the HyperPod CLI and the Studio UI need of a team member outside the team namespace,
and the read-only ``cluster.viewers`` class. Bound to groups, never users; no wildcards; nothing that acts.

Sources:

- The HyperPod CLI (github.com/aws/sagemaker-hyperpod-cli, ``src/sagemaker/hyperpod``): namespace discovery lists
  namespaces (``cli/service/get_namespaces.py``) and ``hyp list-cluster`` lists nodes and reads the team
  namespace (``cli/clients/kubernetes_client.py``: ``list_node_with_temp_config``, ``get_sagemaker_managed_namespace``);
  its error messages read the HyperPodPyTorchJob CRD (``common/cli_decorators.py``). Its Helm chart's team role
  (``helm_chart/HyperPodHelmChart/charts/team-role-and-bindings/templates/team-level-cluster-role.yaml``) grants
  namespaces get/list and the Kueue cluster reads; the team's own ClusterQueue is read through the team's
  queue-reader ClusterRole (``charts/rbac.py``), by name.
- AWS, "Restrict task view in Studio for EKS clusters"
  (https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-studio-setup-eks.html#sagemaker-hyperpod-studio-setup-eks-restrict-tasks-view):
  by default every Studio user sees every namespace's jobs; to restrict the view, scope users' access to their
  namespaces ("scoping to a namespace when teams share a cluster") and give them, at cluster scope, only what the
  UI needs to render (AmazonSagemakerHyperpodUserClusterPolicy: namespaces and nodes, CRDs get, Kueue's cluster
  objects). That is what team members get here, as RBAC the tests can evaluate: their namespace Roles
  (charts/rbac.py) and ``member_cluster_rules``; no pods, jobs or events outside their namespaces. The page's
  custom role for a cluster-wide task view (pods, events and CRDs get/list at cluster scope) is what
  ``cluster.viewers`` get, with the jobs and Kueue's state, and without logs, Secrets or any write.
- Not granted: ``hyp list-cluster`` also lists the pods of every namespace to count the accelerators in use
  (``cli/service/list_pods.py``: ``list_pods_and_get_requested_resources_group_by_node_name``); that would show
  every team's pod specs to every member, so members' ``hyp list-cluster`` needs ``cluster.viewers``.
"""

from __future__ import annotations

from typing import Any

from constructs import Construct

from ..plan import Plan, TeamPlan
from ..plan import names
from ..plan.names import CLUSTER_VIEWER_ROLE, CLUSTER_VIEWERS_GROUP, MEMBER_CLUSTER_ROLE
from ..plan.workloads import WORKLOAD_KINDS
from ._objects import api_object
from .rbac import RBAC_API, READ

Rule = tuple[str, tuple[str, ...], tuple[str, ...]]  # (API group, resources, verbs)

MEMBER_CLUSTER_RULES: tuple[Rule, ...] = (
    ("", ("namespaces", "nodes"), ("get", "list")),
    ("apiextensions.k8s.io", ("customresourcedefinitions",), ("get",)),
    ("kueue.x-k8s.io", ("resourceflavors", "workloadpriorityclasses"), tuple(READ)),
)

_KUEUE_STATE = ("clusterqueues", "cohorts", "localqueues", "resourceflavors", "workloadpriorityclasses", "workloads")


def _by_group() -> tuple[tuple[str, tuple[str, ...]], ...]:
    groups: dict[str, set[str]] = {}
    for k in WORKLOAD_KINDS:
        groups.setdefault(k.group, set()).add(k.resource)
    groups.setdefault("", set()).update(("events", "namespaces", "nodes", "pods"))
    groups.setdefault("kueue.x-k8s.io", set()).update(_KUEUE_STATE)
    return tuple((g, tuple(sorted(r))) for g, r in sorted(groups.items()))


def viewer_cluster_rules() -> tuple[Rule, ...]:
    """``cluster.viewers``: read (get, list, watch) every workload kind, pods, events, namespaces, nodes and Kueue's
    state in every namespace, and get CRDs; no logs, exec, Secrets, ConfigMaps or writes."""
    return (*((g, r, tuple(READ)) for g, r in _by_group()),
            ("apiextensions.k8s.io", ("customresourcedefinitions",), ("get",)))


def _rules(rules: tuple[Rule, ...]) -> list[dict[str, Any]]:
    return [{"apiGroups": [g], "resources": list(r), "verbs": list(v)} for g, r, v in rules]


def _group(name: str) -> dict[str, str]:
    return {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": name}


def _cluster_role(scope: Construct, name: str, rules: tuple[Rule, ...]) -> None:
    api_object(scope, f"ClusterRole-{name}", api_version=RBAC_API, kind="ClusterRole", name=name,
               body={"rules": _rules(rules)})


def _binding(scope: Construct, id: str, name: str, role: str, groups: list[str]) -> None:
    api_object(scope, id, api_version=RBAC_API, kind="ClusterRoleBinding", name=name,
               body={"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                     "subjects": [_group(g) for g in groups]})


def cluster_wide_rbac(scope: Construct, *, plan: Plan) -> None:
    """The cluster-scoped objects all teams share: the members' ClusterRole (unless ``cluster.memberClusterReads``
    is false), and the cluster viewers' read-only ClusterRole and binding (when there are any)."""
    if plan.cluster.member_cluster_reads and plan.tenants:
        _cluster_role(scope, MEMBER_CLUSTER_ROLE, MEMBER_CLUSTER_RULES)
    if plan.cluster.viewers:
        _cluster_role(scope, CLUSTER_VIEWER_ROLE, viewer_cluster_rules())
        _binding(scope, f"ClusterRoleBinding-{CLUSTER_VIEWER_ROLE}", CLUSTER_VIEWER_ROLE, CLUSTER_VIEWER_ROLE,
                 [CLUSTER_VIEWERS_GROUP])


def member_reads_binding(scope: Construct, *, plan: Plan, team: TeamPlan) -> None:
    """The team's viewers and submitters bound to the members' ClusterRole, in the team's own chart (adding a
    team changes no shared object)."""
    if plan.cluster.member_cluster_reads:
        _binding(scope, "ClusterRoleBinding-member-reads", names.member_reads_binding(team.name), MEMBER_CLUSTER_ROLE,
                 [team.viewers_group, team.submitters_group])
