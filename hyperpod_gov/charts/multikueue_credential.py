"""The Kubernetes side of the MultiKueue worker credential (plan/multikueue_credential.py): one namespaced Role and
its RoleBinding in the Kueue namespace, bound to the Kubernetes group an EKS access entry maps the Lambda's role to.

- On a worker, the minter's group may only ``create`` ``serviceaccounts/token`` of the one MultiKueue service
  account (the TokenRequest API is the ``token`` subresource of ``serviceaccounts``; RBAC matches its name).
- On the manager, the copier's group may only ``patch`` and ``create`` the ``<worker>-kubeconfig`` Secrets. The
  copy is a server-side apply (a PATCH); when the Secret does not exist yet the API server creates it and
  authorizes that as ``create`` with the object's name (``createAuthorizerAttributes`` in
  k8s.io/apiserver/pkg/endpoints/handlers/patch.go: Verb "create", Name the object's), so ``resourceNames``
  bounds the create too. No ``get``: the copier never reads a Secret.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..plan.multikueue_credential import CredentialPlan

if TYPE_CHECKING:
    from ..plan.fleet import FleetPlan
from ._objects import kubernetes_object

RBAC_API = "rbac.authorization.k8s.io/v1"


def credential_rules(cp: CredentialPlan) -> list[dict[str, Any]]:
    """The Role's rules: the worker's token request, or the manager's kubeconfig Secrets."""
    if cp.role == "worker":
        return [{"apiGroups": [""], "resources": ["serviceaccounts/token"], "resourceNames": [cp.service_account],
                 "verbs": ["create"]}]
    return [{"apiGroups": [""], "resources": ["secrets"],
             "resourceNames": [w.kubeconfig_secret for w in cp.workers], "verbs": ["patch", "create"]}]


def credential_objects(cp: CredentialPlan) -> list[dict[str, Any]]:
    """The Role and RoleBinding of ``cp``'s member, in the Kueue namespace."""
    return [
        kubernetes_object(RBAC_API, "Role", cp.rbac_name, namespace=cp.namespace,
                          body={"rules": credential_rules(cp)}),
        kubernetes_object(RBAC_API, "RoleBinding", cp.rbac_name, namespace=cp.namespace, body={
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": cp.rbac_name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": cp.group}]}),
    ]


def fleet_credential_objects(fleet: "FleetPlan") -> dict[str, list[dict[str, Any]]]:
    """Each dispatch member's credential Role and RoleBinding, by cluster name (none without dispatch): what the
    fleet's synth adds after the member's MultiKueue objects, and what its drift compares."""
    from ..plan.multikueue_credential import credential_plans

    dispatch = fleet.fleet.dispatch
    if dispatch is None:
        return {}
    plans = credential_plans(fleet.plans, dispatch.manager, tuple(dispatch.workers))
    return {cluster: credential_objects(cp) for cluster, cp in plans.items()}
