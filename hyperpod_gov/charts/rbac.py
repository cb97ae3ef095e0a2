"""RBAC that separates seeing work from acting on it; bound to groups, never users, no wildcards."""

from __future__ import annotations

from typing import Any

from constructs import Construct

from ..plan import TeamPlan
from ..plan.workloads import kinds_for
from ._objects import api_object
from .admission import kind_resources

RBAC_API = "rbac.authorization.k8s.io/v1"
READ = ["get", "list", "watch"]
WRITE = ["create", "update", "patch", "delete"]

# The workload kinds a team may create come from plan/workloads.py (kinds_for: by the contract's approved
# workloads); the admission policies check exactly the pods and pod templates of those kinds (their union). A kind
# the team may not create gets no verb here, and that alone refuses it. Never granted: pods/ephemeralcontainers
# (kubectl debug would add a container, with its own image and privileges, to a running pod).
VIEW_EXTRA_BEFORE: tuple[tuple[str, tuple[str, ...]], ...] = (("", ("events", "pods", "pods/log")),)
VIEW_EXTRA_AFTER: tuple[tuple[str, tuple[str, ...]], ...] = (("kueue.x-k8s.io", ("localqueues", "workloads")),)


def _rules(groups: tuple[tuple[str, tuple[str, ...]], ...], verbs: list[str]) -> list[dict[str, Any]]:
    return [{"apiGroups": [g], "resources": list(r), "verbs": list(verbs)} for g, r in groups]


def viewer_rules(team: TeamPlan) -> list[dict[str, Any]]:
    """Read the team's pods, logs, events, Kueue objects and every kind the team may create."""
    return _rules(VIEW_EXTRA_BEFORE + kind_resources(kinds_for(team)) + VIEW_EXTRA_AFTER, READ)


def submitter_rules(team: TeamPlan) -> list[dict[str, Any]]:
    """Write access to exactly the kinds the team may create; exec, Secrets and ConfigMaps only where the team
    opted in (acting on a running pod or on credentials is not submitting work, and view and act stay separate)."""
    rules = _rules(kind_resources(kinds_for(team)), WRITE)
    if team.pod_exec:
        # kubectl's WebSocket exec (1.30+) is authorised as get on pods/exec, the older SPDY one as create.
        rules.append({"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create", "get"]})
    if team.write_secrets:
        rules.append({"apiGroups": [""], "resources": ["secrets"], "verbs": READ + WRITE})
    if team.write_config_maps:
        rules.append({"apiGroups": [""], "resources": ["configmaps"], "verbs": READ + WRITE})
    return rules


def _group(name: str) -> dict[str, str]:
    return {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": name}


def team_rbac(scope: Construct, *, team: TeamPlan) -> None:
    ns = team.namespace
    api_object(scope, "Role-viewer", api_version=RBAC_API, kind="Role", name="viewer", namespace=ns,
               body={"rules": viewer_rules(team)})
    api_object(scope, "Role-submitter", api_version=RBAC_API, kind="Role", name="submitter", namespace=ns,
               body={"rules": submitter_rules(team)})
    # Submitters also see what they submit: they are bound to viewer too.
    api_object(scope, "RoleBinding-viewers", api_version=RBAC_API, kind="RoleBinding", name="viewers", namespace=ns,
               body={"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "viewer"},
                     "subjects": [_group(team.viewers_group), _group(team.submitters_group)]})
    api_object(scope, "RoleBinding-submitters", api_version=RBAC_API, kind="RoleBinding", name="submitters",
               namespace=ns,
               body={"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "submitter"},
                     "subjects": [_group(team.submitters_group)]})


def cluster_rbac(scope: Construct, *, team: TeamPlan) -> None:
    """Read-only: the team's own ClusterQueue, the resource flavors and the priority classes."""
    rules: list[dict[str, Any]] = [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "resourceNames": [team.cluster_queue],
         "verbs": ["get", "watch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["resourceflavors", "workloadpriorityclasses"],
         "verbs": list(READ)},
    ]
    name = team.queue_reader
    api_object(scope, f"ClusterRole-{team.name}", api_version=RBAC_API, kind="ClusterRole", name=name,
               body={"rules": rules})
    api_object(scope, f"ClusterRoleBinding-{team.name}", api_version=RBAC_API, kind="ClusterRoleBinding", name=name,
               body={"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                     "subjects": [_group(team.viewers_group), _group(team.submitters_group)]})
