"""MultiKueue objects of one fleet member (plan/multikueue.py): the manager's clusters, a config and a check per
set of workers its teams are on, and its fleet queues; a worker's mirrored LocalQueues and the service account the
manager connects as.

Plain Kubernetes objects (the dicts ``api_object`` would add), in a fixed order: ``kueue.x-k8s.io/v1beta2`` as
every Kueue object of this project (plan/kueue.py ``KUEUE_API``). The manager's kubeconfig Secrets are not among
them: their contents are a credential, written by the step docs/fleet.md describes, never by a chart (an applied
Secret would overwrite the token on every deploy, and the token would sit in the cloud assembly).
"""

from __future__ import annotations

from typing import Any

from ..plan import Plan
from ..plan.kueue import KUEUE_API, flavor_spec
from ..plan.multikueue import CREDENTIAL_STEP, KUBECONFIG_KEY, MULTIKUEUE_CONTROLLER, MultiKueuePlan
from ..plan.names import TEAM_LABEL
from ._objects import kubernetes_object

RBAC_API = "rbac.authorization.k8s.io/v1"
CREDENTIAL_ANNOTATION = "hyperpod-gov.io/kubeconfig-secret"


def _manager(mk: MultiKueuePlan) -> list[dict[str, Any]]:
    objs = [kubernetes_object(KUEUE_API, "ResourceFlavor", f.name, body={"spec": flavor_spec(f.instance_type)})
            for f in mk.flavors]
    for link in mk.links:
        note = (f"{mk.kueue_namespace}/{link.secret} key {KUBECONFIG_KEY}: the kubeconfig of worker {link.worker}, "
                f"written by the credential step ({CREDENTIAL_STEP}), not by this chart")
        objs.append(kubernetes_object(KUEUE_API, "MultiKueueCluster", link.cluster, annotations={CREDENTIAL_ANNOTATION: note},
                            body={"spec": {"clusterSource": {"kubeConfig": {"locationType": "Secret",
                                                                           "location": link.secret}}}}))
    for s in mk.sets:  # one config and check per set of workers a team is on: none dispatches where it is absent
        objs.append(kubernetes_object(KUEUE_API, "MultiKueueConfig", s.name, body={"spec": {"clusters": list(s.workers)}}))
        objs.append(kubernetes_object(KUEUE_API, "AdmissionCheck", s.name, body={"spec": {
            "controllerName": MULTIKUEUE_CONTROLLER,
            "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": s.name}}}))
    for q in mk.queues:
        if q.create_namespace:
            objs.append(kubernetes_object("v1", "Namespace", q.namespace, labels={TEAM_LABEL: q.team}))
        objs.append(kubernetes_object(KUEUE_API, "ClusterQueue", q.cluster_queue, body={"spec": q.cluster_queue_spec()}))
        objs.append(kubernetes_object(KUEUE_API, "LocalQueue", q.local_queue, namespace=q.namespace,
                            body={"spec": {"clusterQueue": q.cluster_queue}}))
    return objs


def _worker(mk: MultiKueuePlan) -> list[dict[str, Any]]:
    subject = {"kind": "ServiceAccount", "name": mk.account, "namespace": mk.kueue_namespace}
    objs = [
        kubernetes_object("v1", "ServiceAccount", mk.account, namespace=mk.kueue_namespace),
        kubernetes_object(RBAC_API, "ClusterRole", mk.account, body={"rules": [r.as_dict() for r in mk.rules]}),
        kubernetes_object(RBAC_API, "ClusterRoleBinding", mk.account, body={
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": mk.account},
            "subjects": [subject]}),
    ]
    objs += [kubernetes_object(KUEUE_API, "LocalQueue", q.local_queue, namespace=q.namespace,
                     body={"spec": {"clusterQueue": q.cluster_queue}}) for q in mk.queues]
    return objs


def multikueue_objects(plan: Plan, mk: MultiKueuePlan) -> list[dict[str, Any]]:
    """The MultiKueue objects of the member ``plan`` (its single-cluster plan; kueue mode) in its role ``mk``."""
    if not plan.emits_kueue_objects:
        raise ValueError(f"{mk.cluster}: MultiKueue needs scheduler.mode kueue (this cluster is {plan.mode})")
    return _manager(mk) if mk.role == "manager" else _worker(mk)
