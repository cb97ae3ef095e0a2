"""A minimal IAM policy evaluator for one policy document (an endpoint or resource policy), for tests.

Faithful to the IAM policy evaluation logic for what the generated policies use: an explicit Deny wins, else an
Allow of a matching statement, else the implicit deny. A statement matches when its Principal, Action (or
NotAction), Resource (or NotResource) and every condition match. Conditions: every operator of a block must hold,
every key of an operator must hold, and one of a key's values is enough. Operators: StringEquals, StringNotEquals,
StringLike, StringNotLike (``*`` and ``?``), ArnEquals, ArnLike, Bool, Null, each with ``...IfExists``, and the
``ForAnyValue:``/``ForAllValues:`` set qualifiers. A key missing from the request makes a positive operator false
and a negated one (``StringNotEquals``, ``StringNotLike``) true, as the IAM User Guide states (Condition element,
"condition operators"); ``...IfExists`` makes any operator true on a missing key. Key names are case-insensitive,
string values case-sensitive, action names case-insensitive. An operator or qualifier it does not know raises:
never a silent pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Union

Value = Union[str, list[str]]


@dataclass(frozen=True)
class Request:
    """One request as IAM sees it: who (an AWS principal ARN, or None for an anonymous call), what, on which
    resource, and the request context (condition keys, e.g. ``aws:PrincipalAccount``)."""

    action: str
    resource: str
    principal: Optional[str] = None
    context: Mapping[str, Value] = field(default_factory=dict)


def _like(pattern: str, value: str, *, case: bool = True) -> bool:
    """IAM wildcards: ``*`` any run of characters, ``?`` one; nothing else is special."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, 0 if case else re.IGNORECASE) is not None


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _principal_matches(principal: Any, request: Request) -> bool:
    if principal is None:
        return True  # an identity policy has no Principal element
    if principal == "*":
        return True  # everyone, anonymous callers included
    if not isinstance(principal, Mapping):
        raise ValueError(f"unknown Principal form {principal!r}")
    for kind, values in principal.items():
        if kind != "AWS":
            continue  # Service, Federated, CanonicalUser: the requests here come from AWS principals only
        for v in _listed(values):
            if v == "*" or (request.principal is not None and _like(v, request.principal)):
                return True
            m = re.fullmatch(r"(?:arn:[^:]+:iam::)?([0-9]{12})(?::root)?", v)
            if m and request.principal and request.principal.split(":")[4:5] == [m.group(1)]:
                return True
    return False


def _action_matches(statement: Mapping[str, Any], action: str) -> bool:
    if "Action" in statement:
        return any(_like(a, action, case=False) for a in _listed(statement["Action"]))
    if "NotAction" in statement:
        return not any(_like(a, action, case=False) for a in _listed(statement["NotAction"]))
    raise ValueError("a statement needs Action or NotAction")


def _resource_matches(statement: Mapping[str, Any], resource: str) -> bool:
    if "Resource" in statement:
        return any(_like(r, resource) for r in _listed(statement["Resource"]))
    if "NotResource" in statement:
        return not any(_like(r, resource) for r in _listed(statement["NotResource"]))
    raise ValueError("a statement needs Resource or NotResource")


def _compare(base: str, policy_value: str, request_value: str) -> bool:
    if base in ("StringEquals", "ArnEquals"):
        return policy_value == request_value
    if base in ("StringLike", "ArnLike"):
        return _like(policy_value, request_value)
    if base == "StringEqualsIgnoreCase":
        return policy_value.lower() == request_value.lower()
    if base == "Bool":
        return policy_value.lower() == request_value.lower()
    raise ValueError(f"unknown condition operator {base!r}")


NEGATED = {"StringNotEquals": "StringEquals", "StringNotLike": "StringLike", "ArnNotEquals": "ArnEquals",
           "ArnNotLike": "ArnLike", "StringNotEqualsIgnoreCase": "StringEqualsIgnoreCase"}
POSITIVE = {"StringEquals", "StringLike", "ArnEquals", "ArnLike", "StringEqualsIgnoreCase", "Bool"}


def _lookup(context: Mapping[str, Value], key: str) -> Optional[list[str]]:
    for k, v in context.items():
        if k.lower() == key.lower():
            return [str(x) for x in _listed(v)]
    return None


def _condition_holds(operator: str, key: str, policy_values: Iterable[str], context: Mapping[str, Value]) -> bool:
    qualifier, _, op = operator.rpartition(":")
    if qualifier not in ("", "ForAnyValue", "ForAllValues"):
        raise ValueError(f"unknown set qualifier {qualifier!r}")
    if_exists = op.endswith("IfExists")
    base = op[: -len("IfExists")] if if_exists else op
    wanted = [str(v) for v in policy_values]
    found = _lookup(context, key)
    if base == "Null":
        if qualifier or if_exists:
            raise ValueError("Null takes no qualifier and no IfExists")
        absent = found is None
        return any((w.lower() == "true") == absent for w in wanted)
    negated = base in NEGATED
    if not negated and base not in POSITIVE:
        raise ValueError(f"unknown condition operator {op!r}")
    positive = NEGATED.get(base, base)
    if found is None:
        if qualifier == "ForAllValues":
            return True  # the empty set: every one of its values matches
        if if_exists:
            return True
        return negated and qualifier == ""
    def one(value: str) -> bool:
        return any(_compare(positive, w, value) for w in wanted)
    if qualifier == "ForAnyValue":
        hits = [one(v) for v in found]
        return any(not h for h in hits) if negated else any(hits)
    if qualifier == "ForAllValues":
        return all(not one(v) for v in found) if negated else all(one(v) for v in found)
    if len(found) != 1:
        raise ValueError(f"{key} is multi-valued in the request: use ForAnyValue or ForAllValues")
    return (not one(found[0])) if negated else one(found[0])


def _conditions_hold(conditions: Mapping[str, Mapping[str, Any]], context: Mapping[str, Value]) -> bool:
    return all(_condition_holds(operator, key, _listed(values), context)
               for operator, keys in conditions.items() for key, values in keys.items())


def statement_matches(statement: Mapping[str, Any], request: Request) -> bool:
    """Whether one statement applies to the request (its effect aside)."""
    if "NotPrincipal" in statement:
        raise ValueError("NotPrincipal is not supported here")
    return (_principal_matches(statement.get("Principal"), request)
            and _action_matches(statement, request.action)
            and _resource_matches(statement, request.resource)
            and _conditions_hold(statement.get("Condition", {}), request.context))


def evaluate(policy: Mapping[str, Any], request: Request) -> str:
    """``"Allow"``, ``"ExplicitDeny"`` or ``"ImplicitDeny"`` for ``request`` under this one policy."""
    statements = _listed(policy.get("Statement", []))
    matching = [s for s in statements if statement_matches(s, request)]
    if any(s["Effect"] == "Deny" for s in matching):
        return "ExplicitDeny"
    if any(s["Effect"] == "Allow" for s in matching):
        return "Allow"
    return "ImplicitDeny"


def aws_request(action: str, resource: str, *, principal: Optional[str], resource_account: Optional[str],
                principal_org: Optional[str] = None, resource_org: Optional[str] = None,
                service: bool = False) -> Request:
    """A request with the global keys IAM puts in its context: the principal's account (and organization) when
    signed, the resource's account (and organization) when the action has a resource that belongs to one."""
    context: dict[str, Value] = {"aws:PrincipalIsAWSService": "true" if service else "false"}
    if principal is not None:
        context["aws:PrincipalAccount"] = principal.split(":")[4]
        context["aws:PrincipalArn"] = principal
    if principal_org is not None:
        context["aws:PrincipalOrgID"] = principal_org
    if resource_account is not None:
        context["aws:ResourceAccount"] = resource_account
    if resource_org is not None:
        context["aws:ResourceOrgID"] = resource_org
    return Request(action, resource, principal, context)


__all__ = ["Request", "evaluate", "statement_matches", "aws_request"]
