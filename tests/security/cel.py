"""Evaluate a ValidatingAdmissionPolicy's CEL the way the API server does, with cel-python.

Order as in Kubernetes: matchConstraints (by resource), matchConditions (all true or the policy is skipped),
variables (in order, visible as ``variables.<name>``), then every validation; an evaluation error counts as a
failure (the policies use failurePolicy: Fail).
"""

from __future__ import annotations

from typing import Any

import celpy
from celpy import celtypes

ENV = celpy.Environment()
_PROGRAMS: dict[str, Any] = {}

RESOURCES = {"Pod": ("", "pods"), "Job": ("batch", "jobs"), "PyTorchJob": ("kubeflow.org", "pytorchjobs"),
             "MPIJob": ("kubeflow.org", "mpijobs"), "HyperPodPyTorchJob": ("sagemaker.amazonaws.com",
                                                                          "hyperpodpytorchjobs")}


def _run(expression: str, activation: dict[str, Any]) -> Any:
    if expression not in _PROGRAMS:
        _PROGRAMS[expression] = ENV.program(ENV.compile(expression))
    return _PROGRAMS[expression].evaluate(activation)


def matches(policy: dict[str, Any], obj: dict[str, Any], operation: str = "CREATE") -> bool:
    group, resource = RESOURCES[obj["kind"]]
    return any(group in r["apiGroups"] and resource in r["resources"] and operation in r["operations"]
               for r in policy["matchConstraints"]["resourceRules"])


def denials(policy: dict[str, Any], obj: dict[str, Any], *, namespace: str, operation: str = "CREATE") -> list[str]:
    """The messages of every validation ``obj`` fails ([] = admitted; ['(not matched)'] never: unmatched is [])."""
    if not matches(policy, obj, operation):
        return []
    activation: dict[str, Any] = {
        "object": celpy.json_to_cel(obj),
        "request": celpy.json_to_cel({"namespace": namespace, "operation": operation}),
    }
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
