"""Dedicated node groups: admission keeps other teams' work off a team's nodes (both modes).

A group with ``dedicatedTo: <team>`` carries the label and the NoSchedule taint ``hyperpod-gov.io/dedicated=<team>``
(the plan's ``InstanceGroupPlan``, through the service's KubernetesConfig). The taint keeps off every pod that
does not tolerate it; this policy refuses, in every team namespace, a Pod or any job kind's pod template that
would tolerate another team's taint or select another team's nodes:

- a toleration of the key whose value is not the namespace's own team, or with ``operator: Exists`` (any value);
- a toleration without a key and ``operator: Exists`` (it tolerates every taint);
- a nodeSelector on the key with another team's value;
- node affinity (required or preferred) on the key other than ``In`` the own team or ``DoesNotExist``.

The namespace names the team (``hyperpod-ns-<team>``), so the policy needs no parameters; one binding selects
every team namespace by name. ``spec.nodeName`` (which skips the taints) the queue policy refuses already.
"""

from __future__ import annotations

from typing import Any

from constructs import Construct

from ..plan import Plan
from ..plan import names
from ..plan.workloads import WORKLOAD_KINDS, pod_specs_expression
from ..spec.cluster import DEDICATED_KEY
from ._objects import api_object
from .admission import ADMISSION_API, POLICY_PREFIX

DEDICATED_POLICY = f"{POLICY_PREFIX}-dedicated-nodes"
_OWN = f"'{names.NAMESPACE_PREFIX}' + {{v}} == request.namespace"  # a value names the namespace's own team


def _own(value: str) -> str:
    return _OWN.format(v=value)


def _expressions_ok(exprs: str) -> str:
    """Every node selector requirement in the list ``exprs`` on the dedicated key selects the own team only."""
    return (f"{exprs}.all(e, e.key != '{DEDICATED_KEY}' || e.operator == 'DoesNotExist' || "
            f"(e.operator == 'In' && has(e.values) && e.values.all(v, {_own('v')})))")


def _check(expression: str, message: str) -> dict[str, str]:
    return {"expression": f"variables.specs.all(s, {expression})", "message": message, "reason": "Forbidden"}


def dedicated_checks() -> list[dict[str, str]]:
    key = DEDICATED_KEY
    toleration = (f"(has(t.key) && t.key != '') ? (t.key != '{key}' || ((!has(t.operator) || t.operator == "
                  f"'Equal') && has(t.value) && {_own('t.value')})) : !(has(t.operator) && t.operator == 'Exists')")
    affinity = "s.affinity.nodeAffinity"
    required = f"{affinity}.requiredDuringSchedulingIgnoredDuringExecution"
    preferred = f"{affinity}.preferredDuringSchedulingIgnoredDuringExecution"
    has_affinity = "has(s.affinity) && has(s.affinity.nodeAffinity)"
    return [
        _check(f"!has(s.tolerations) || s.tolerations.all(t, {toleration})",
               f"a toleration of {key} must name the namespace's own team (operator Equal), and a toleration of "
               "every taint (operator Exists without a key) is not allowed: both reach another team's dedicated "
               "nodes"),
        _check(f"!has(s.nodeSelector) || !('{key}' in s.nodeSelector) || {_own(f's.nodeSelector[{key!r}]')}",
               f"nodeSelector {key} must name the namespace's own team: another team's dedicated nodes are theirs"),
        _check(f"!({has_affinity} && has({required})) || !has({required}.nodeSelectorTerms) || "
               f"{required}.nodeSelectorTerms.all(term, !has(term.matchExpressions) || "
               f"{_expressions_ok('term.matchExpressions')})",
               f"required node affinity on {key} may only select the namespace's own team (In) or nodes without "
               "the label (DoesNotExist)"),
        _check(f"!({has_affinity} && has({preferred})) || {preferred}.all(p, !has(p.preference) || "
               f"!has(p.preference.matchExpressions) || {_expressions_ok('p.preference.matchExpressions')})",
               f"preferred node affinity on {key} may only select the namespace's own team (In) or nodes without "
               "the label (DoesNotExist)"),
    ]


def _rules(operations: list[str]) -> list[dict[str, Any]]:
    rules = [{"apiGroups": [""], "apiVersions": ["*"], "resources": ["pods"], "operations": operations}]
    by_group: dict[str, list[str]] = {}
    for k in WORKLOAD_KINDS:
        by_group.setdefault(k.group, []).append(k.resource)
    rules += [{"apiGroups": [g], "apiVersions": ["*"], "resources": sorted(r), "operations": operations}
              for g, r in sorted(by_group.items())]
    return rules


def dedicated_policy() -> dict[str, Any]:
    """The ``spec`` of the policy that keeps other teams' pods off a team's dedicated nodes."""
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": _rules(["CREATE", "UPDATE"])},
        "variables": [{"name": "specs", "expression": pod_specs_expression()}],
        "validations": dedicated_checks(),
    }


def team_namespaces_binding(scope: Construct, id: str, *, policy: str, plan: Plan) -> None:
    """One binding of ``policy`` to every team namespace, by name (task-governance mode's namespaces are
    HyperPod's, so no label of ours selects them)."""
    namespaces = sorted(t.namespace for t in plan.tenants)
    api_object(scope, id, api_version=ADMISSION_API, kind="ValidatingAdmissionPolicyBinding", name=policy,
               body={"spec": {"policyName": policy, "validationActions": ["Deny"], "matchResources": {
                   "namespaceSelector": {"matchExpressions": [
                       {"key": "kubernetes.io/metadata.name", "operator": "In", "values": namespaces}]}}}})


def dedicated_objects(scope: Construct, *, plan: Plan) -> None:
    """The policy and its binding, when some group is dedicated to a team (cluster-wide objects)."""
    if not plan.dedicated or not plan.tenants:
        return
    api_object(scope, "DedicatedNodes", api_version=ADMISSION_API, kind="ValidatingAdmissionPolicy",
               name=DEDICATED_POLICY, body={"spec": dedicated_policy()})
    team_namespaces_binding(scope, "DedicatedNodesBinding", policy=DEDICATED_POLICY, plan=plan)
