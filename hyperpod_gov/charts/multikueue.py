"""MultiKueue objects of one fleet member (plan/multikueue.py): the manager's clusters, config, check and fleet
queues; a worker's mirrored LocalQueues and the service account the manager connects as.

Plain Kubernetes objects (the dicts ``api_object`` would add), in a fixed order: ``kueue.x-k8s.io/v1beta2`` as
every Kueue object of this project (plan/kueue.py ``KUEUE_API``). The manager's kubeconfig Secrets are not among
them: their contents are a credential, written by the step docs/fleet.md describes, never by a chart (an applied
Secret would overwrite the token on every deploy, and the token would sit in the cloud assembly).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ..plan import Plan
from ..plan.kueue import KUEUE_API, flavor_spec
from ..plan.multikueue import CREDENTIAL_STEP, KUBECONFIG_KEY, MULTIKUEUE_CONTROLLER, MultiKueuePlan
from ..plan.names import TEAM_LABEL
from ._objects import MANAGED_BY, _as_json, _sanitized

RBAC_API = "rbac.authorization.k8s.io/v1"
CREDENTIAL_ANNOTATION = "hyperpod-gov.io/kubeconfig-secret"


def _object(api_version: str, kind: str, name: str, *, namespace: Optional[str] = None,
            labels: Optional[Mapping[str, str]] = None, annotations: Optional[Mapping[str, str]] = None,
            body: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The object as charts/_objects.py's ``api_object`` builds it (metadata keys sorted, managed-by label)."""
    metadata: dict[str, Any] = {"name": name, "labels": {**MANAGED_BY, **(labels or {})}}
    if namespace:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = dict(annotations)
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": _sanitized(metadata) or {}}
    for field, value in (body or {}).items():
        obj[field] = _as_json(value)
    return obj


def _manager(mk: MultiKueuePlan) -> list[dict[str, Any]]:
    objs = [_object(KUEUE_API, "ResourceFlavor", f.name, body={"spec": flavor_spec(f.instance_type)})
            for f in mk.flavors]
    for link in mk.links:
        note = (f"{mk.kueue_namespace}/{link.secret} key {KUBECONFIG_KEY}: the kubeconfig of worker {link.worker}, "
                f"written by the credential step ({CREDENTIAL_STEP}), not by this chart")
        objs.append(_object(KUEUE_API, "MultiKueueCluster", link.cluster, annotations={CREDENTIAL_ANNOTATION: note},
                            body={"spec": {"clusterSource": {"kubeConfig": {"locationType": "Secret",
                                                                           "location": link.secret}}}}))
    objs.append(_object(KUEUE_API, "MultiKueueConfig", mk.check, body={"spec": {"clusters": list(mk.workers)}}))
    objs.append(_object(KUEUE_API, "AdmissionCheck", mk.check, body={"spec": {
        "controllerName": MULTIKUEUE_CONTROLLER,
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": mk.check}}}))
    for q in mk.queues:
        if q.create_namespace:
            objs.append(_object("v1", "Namespace", q.namespace, labels={TEAM_LABEL: q.team}))
        objs.append(_object(KUEUE_API, "ClusterQueue", q.cluster_queue, body={"spec": q.cluster_queue_spec(mk.check)}))
        objs.append(_object(KUEUE_API, "LocalQueue", q.local_queue, namespace=q.namespace,
                            body={"spec": {"clusterQueue": q.cluster_queue}}))
    return objs


def _worker(mk: MultiKueuePlan) -> list[dict[str, Any]]:
    subject = {"kind": "ServiceAccount", "name": mk.account, "namespace": mk.kueue_namespace}
    objs = [
        _object("v1", "ServiceAccount", mk.account, namespace=mk.kueue_namespace),
        _object(RBAC_API, "ClusterRole", mk.account, body={"rules": [r.as_dict() for r in mk.rules]}),
        _object(RBAC_API, "ClusterRoleBinding", mk.account, body={
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": mk.account},
            "subjects": [subject]}),
    ]
    objs += [_object(KUEUE_API, "LocalQueue", q.local_queue, namespace=q.namespace,
                     body={"spec": {"clusterQueue": q.cluster_queue}}) for q in mk.queues]
    return objs


def multikueue_objects(plan: Plan, mk: MultiKueuePlan) -> list[dict[str, Any]]:
    """The MultiKueue objects of the member ``plan`` (its single-cluster plan; kueue mode) in its role ``mk``."""
    if not plan.emits_kueue_objects:
        raise ValueError(f"{mk.cluster}: MultiKueue needs scheduler.mode kueue (this cluster is {plan.mode})")
    return _manager(mk) if mk.role == "manager" else _worker(mk)
