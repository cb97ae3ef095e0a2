"""The queue policy: every workload, and every Pod no managed controller made, names the team's own LocalQueue, and
no pod names its own node."""

from __future__ import annotations

from typing import Any

from ..plan import names
from ..plan.workloads import CORE, WORKLOAD_KINDS, controller_created, owners_of
from ._policy import POD_SPECS, POLICY_PREFIX, _check, _every_spec, _workload_rules

LOCAL_QUEUE_SUFFIX = "-localqueue"  # names.local_queue(team) == names.namespace(team) + this (a test checks it)
QUEUE_POLICY = f"{POLICY_PREFIX}-team-queue"


def _group_is(api_version: str, group: str) -> str:
    """CEL: ``api_version`` (an expression) is of API ``group`` ("" the core group: "v1")."""
    return f"{api_version}.startsWith('{group}/')" if group else f"!{api_version}.contains('/')"


def made_by_its_controller() -> str:
    """CEL: the object is one a managed controller creates, made by a controller.

    Both must hold. (1) Its controlling ownerReference (controller: true) names a kind that creates objects of this
    kind (plan/workloads.py: WorkloadKind.creates, and Kubernetes' Deployment -> ReplicaSet -> Pod), API group and
    kind alike. An ownerReference has no namespace: the owner is in the object's own namespace by definition (the
    garbage collector deletes an object whose owner is not found there). (2) The request comes from a service
    account of another namespace (the operators and kube-controller-manager's controllers run as such) or from
    kube-controller-manager itself: a team member, or a pod of the team, that writes an owner into a hand-made
    Pod or Job is still held to the queue rule. Which controller runs as which account is not assumed.
    """
    matched = {(CORE, "Pod")} | {(k.group, k.kind) for k in WORKLOAD_KINDS}  # what this policy sees
    cases = []
    for group, kind in (made for made in controller_created() if made in matched):
        owners = " || ".join(f"(o.kind == '{ok}' && {_group_is('o.apiVersion', og)})"
                             for og, ok in owners_of(group, kind))
        cases.append(f"(object.kind == '{kind}' && {_group_is('object.apiVersion', group)} && ({owners}))")
    owner = ("has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(o, "
             f"has(o.controller) && o.controller && ({' || '.join(cases)}))")
    user = "request.userInfo.username"
    controller = (f"(({user}.startsWith('system:serviceaccount:') && "
                  f"!{user}.startsWith('system:serviceaccount:' + request.namespace + ':')) || "
                  f"{user} == 'system:kube-controller-manager')")
    return f"{owner} && {controller}"


def queue_policy() -> dict[str, Any]:
    """The ``spec`` of the policy that sends every workload of a team namespace through the team's own LocalQueue."""
    label = names.QUEUE_LABEL
    own = f"request.namespace + '{LOCAL_QUEUE_SUFFIX}'"
    # A fleet's dispatch queue (MultiKueue, names.fleet_local_queue): the team's own too, in its own namespace. Where
    # no fleet queue exists Kueue leaves such a workload unadmitted: it opens no other team's quota.
    fleet = f"request.namespace + '{names.FLEET_QUEUE_SUFFIX}'"
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": _workload_rules(["CREATE", "UPDATE"], ephemeral=False)},
        # What a managed kind's controller creates (the MPIJob launcher's batch Job, a PyTorchJob's Pods) is
        # queued through the object that owns it; everything else is checked.
        "matchConditions": [{"name": "not-made-by-a-managed-controller",
                             "expression": f"!({made_by_its_controller()})"}],
        "variables": [{"name": "specs", "expression": POD_SPECS}],
        "validations": [
            {
                "expression": f"has(object.metadata.labels) && '{label}' in object.metadata.labels && "
                              f"(object.metadata.labels['{label}'] == {own} || "
                              f"object.metadata.labels['{label}'] == {fleet})",
                "messageExpression": f"'every workload in ' + request.namespace + ' goes through the team queue: "
                                     f"set the label {label}: ' + {own}",
                "reason": "Forbidden",
            },
            # A pod that names its node skips the scheduler, and with it the nodes of the flavor Kueue admitted. A
            # Pod's nodeName is set by the scheduler's binding and immutable after: only a new Pod is checked.
            _check("(object.kind == 'Pod' && request.operation == 'UPDATE') || "
                   + _every_spec("!has(s.nodeName) || s.nodeName == ''"),
                   "spec.nodeName is not allowed: the queue and the scheduler choose the nodes (use resource "
                   "requests, and a nodeSelector on node.kubernetes.io/instance-type if needed)"),
        ],
    }
