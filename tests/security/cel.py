"""Evaluate a ValidatingAdmissionPolicy's CEL the way the API server does, with cel-python.

Order as in Kubernetes: matchConstraints (by resource), matchConditions (all true or the policy is skipped),
variables (in order, visible as ``variables.<name>``), then every validation; an evaluation error counts as a
failure (the policies use failurePolicy: Fail).
"""

from __future__ import annotations

from typing import Any

import celpy
from celpy import celtypes

from hyperpod_gov.plan.workloads import WORKLOAD_KINDS

ENV = celpy.Environment()
_PROGRAMS: dict[str, Any] = {}

RESOURCES = {"Pod": ("", "pods"), **{k.kind: (k.group, k.resource) for k in WORKLOAD_KINDS},
             "Deployment": ("apps", "deployments"), "ReplicaSet": ("apps", "replicasets"),
             "PersistentVolumeClaim": ("", "persistentvolumeclaims")}
# Who makes a request when a test does not say: a team member (an IAM role mapped by an access entry).
MEMBER = {"username": "arn:aws:sts::111122223333:assumed-role/ml-engineer/alice", "groups": ["team-a-submitters"]}


def _run(expression: str, activation: dict[str, Any]) -> Any:
    if expression not in _PROGRAMS:
        _PROGRAMS[expression] = ENV.program(ENV.compile(expression))
    return _PROGRAMS[expression].evaluate(activation)


def matches(policy: dict[str, Any], obj: dict[str, Any], operation: str = "CREATE", subresource: str = "") -> bool:
    group, resource = RESOURCES[obj["kind"]]
    resource = f"{resource}/{subresource}" if subresource else resource
    return any(group in r["apiGroups"] and resource in r["resources"] and operation in r["operations"]
               for r in policy["matchConstraints"]["resourceRules"])


def denials(policy: dict[str, Any], obj: dict[str, Any], *, namespace: str, operation: str = "CREATE",
            user: dict[str, Any] | None = None, params: dict[str, Any] | None = None,
            subresource: str = "") -> list[str]:
    """The messages of every validation ``obj`` fails ([] = admitted; ['(not matched)'] never: unmatched is []).

    ``user``: the request's userInfo (default: a team member); ``params``: the binding's parameter object, as
    ``params`` (a policy with a paramKind and no params is refused, as parameterNotFoundAction: Deny does);
    ``subresource``: e.g. "ephemeralcontainers" (kubectl debug), matched as pods/ephemeralcontainers."""
    if not matches(policy, obj, operation, subresource):
        return []
    if "paramKind" in policy and params is None:
        return ["(no params: parameterNotFoundAction Deny)"]
    activation: dict[str, Any] = {
        "object": celpy.json_to_cel(obj),
        "request": celpy.json_to_cel({"namespace": namespace, "operation": operation, "subResource": subresource,
                                      "userInfo": user if user is not None else MEMBER}),
    }
    if params is not None:
        activation["params"] = celpy.json_to_cel(params)
    for condition in policy.get("matchConditions", []):
        if not bool(_run(condition["expression"], activation)):
            return []
    values: dict[Any, Any] = {}
    for variable in policy.get("variables", []):
        activation["variables"] = celtypes.MapType(values)
        values[celtypes.StringType(variable["name"])] = _run(variable["expression"], activation)
    activation["variables"] = celtypes.MapType(values)
    failed = []
    for v in policy["validations"]:
        result = _run(v["expression"], activation)
        if isinstance(result, Exception) or not bool(result):
            failed.append(v.get("message") or str(_run(v["messageExpression"], activation)))
    return failed
