"""Evaluate a ValidatingAdmissionPolicy's CEL the way the API server does, with cel-python.

Order as in Kubernetes: matchConstraints (by resource), matchConditions (all true or the policy is skipped),
variables (in order, visible as ``variables.<name>``), then every validation; an evaluation error counts as a
failure (the policies use failurePolicy: Fail).
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import celpy
import celpy.evaluation
from celpy import celtypes

from hyperpod_gov.plan.workloads import WORKLOAD_KINDS

# cel-python's evaluator spells a type out for each ``cast`` it makes (``cast(Tuple[lark.Tree, lark.Tree], ...)``),
# on every node it evaluates; building those aliases (typing hashes their arguments each time) was a quarter of the
# admission tests' CPU. ``cast`` returns its value and nothing else reads those aliases, so the evaluator's module
# gets a ``cast`` that takes none: 22.5 s of CPU against 30 to 32 s for the four modules that evaluate policies
# (tests/security/test_admission.py, tests/charts/test_workloads.py, test_storage_and_nodes.py, tests/onboard/test_first_jobs.py;
# 2 pairs, 3 December). Done only where the source shows that is all they are used for, else left as it is.
_CAST_ONLY = ("Union", "Tuple", "List", "Dict")


class _AnyAlias:
    """What ``Tuple[...]`` and the others stand for once nothing reads them: any subscript of it is itself."""

    def __getitem__(self, item: Any) -> "_AnyAlias":
        return self


def _only_cast_reads(module: Any, names: tuple[str, ...]) -> bool:
    """Whether every read of ``names`` inside the functions of ``module`` is within a ``cast`` call's first argument
    (annotations aside, which are evaluated once, when the function is defined)."""
    tree = ast.parse(inspect.getsource(module))
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cast" and node.args:
            allowed.update(id(n) for n in ast.walk(node.args[0]))
        for annotation in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if annotation is not None:
                allowed.update(id(n) for n in ast.walk(annotation))
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for statement in function.body:
                for n in ast.walk(statement):
                    if isinstance(n, ast.Name) and n.id in names and id(n) not in allowed:
                        return False
    return True


if _only_cast_reads(celpy.evaluation, _CAST_ONLY):
    for _name in _CAST_ONLY:
        setattr(celpy.evaluation, _name, _AnyAlias())
    celpy.evaluation.cast = lambda _type, value: value

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
            subresource: str = "", old_object: dict[str, Any] | None = None) -> list[str]:
    """The messages of every validation ``obj`` fails ([] = admitted; ['(not matched)'] never: unmatched is []).

    ``user``: the request's userInfo (default: a team member); ``params``: the binding's parameter object, as
    ``params`` (a policy with a paramKind and no params is refused, as parameterNotFoundAction: Deny does);
    ``subresource``: e.g. "ephemeralcontainers" (kubectl debug), matched as pods/ephemeralcontainers;
    ``old_object``: the object before an UPDATE (default: ``obj`` itself; on CREATE there is none, as oldObject is
    null there)."""
    if not matches(policy, obj, operation, subresource):
        return []
    if "paramKind" in policy and params is None:
        return ["(no params: parameterNotFoundAction Deny)"]
    activation: dict[str, Any] = {
        "object": celpy.json_to_cel(obj),
        "request": celpy.json_to_cel({"namespace": namespace, "operation": operation, "subResource": subresource,
                                      "userInfo": user if user is not None else MEMBER}),
    }
    if operation == "UPDATE":
        activation["oldObject"] = celpy.json_to_cel(old_object if old_object is not None else obj)
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
