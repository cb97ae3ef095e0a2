"""A small IAM policy evaluator for tests: enough of the policy language to ask whether a synthesized policy lets a
request through (Action, Resource, Principal, and the condition operators the constructs use).

CloudFormation intrinsics are resolved first (``resolve``): the pseudo parameters to fixed values, a bucket's
``Fn::GetAtt Arn`` to its ARN by its BucketName, any other ``Arn`` to ``arn:test:<logical id>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

PSEUDO = {"AWS::Partition": "aws", "AWS::Region": "us-east-1", "AWS::AccountId": "111111111111",
          "AWS::URLSuffix": "amazonaws.com"}


def resolve(value: Any, template: Mapping[str, Any]) -> Any:
    """``value`` with every ``Ref``, ``Fn::Join`` and ``Fn::GetAtt`` of ``template`` replaced by a string."""
    if isinstance(value, list):
        return [resolve(v, template) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"Ref"}:
        name = value["Ref"]
        return PSEUDO.get(name, f"ref:{name}")
    if set(value) == {"Fn::Join"}:
        sep, parts = value["Fn::Join"]
        return sep.join(str(resolve(p, template)) for p in parts)
    if set(value) == {"Fn::GetAtt"}:
        lid, attr = value["Fn::GetAtt"]
        r = template["Resources"].get(lid, {})
        if r.get("Type") == "AWS::S3::Bucket" and attr == "Arn":
            return f"arn:aws:s3:::{r['Properties']['BucketName']}"
        return f"arn:test:{lid}"
    return {k: resolve(v, template) for k, v in value.items()}


def _listed(x: Any) -> list:
    return x if isinstance(x, list) else [x]


def wildcard_match(pattern: str, value: str) -> bool:
    """IAM's matching of Action, Resource and the *Like operators: '*' any run of characters, '?' exactly one."""
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(rx, value, re.DOTALL) is not None


def _op(name: str, values: list, actual: Optional[list[str]]) -> bool:
    base = name.removesuffix("IfExists")
    negated = "Not" in base
    if actual is None:  # a key absent from the request: positive operators fail, negated ones match
        return negated or name.endswith("IfExists")
    if base in ("StringEquals", "ArnEquals"):
        return any(a == str(v) for a in actual for v in values)
    if base in ("StringLike", "ArnLike"):
        return any(wildcard_match(str(v), a) for a in actual for v in values)
    if base in ("StringNotEquals", "ArnNotEquals"):
        return not any(a == str(v) for a in actual for v in values)
    if base in ("StringNotLike", "ArnNotLike"):
        return not any(wildcard_match(str(v), a) for a in actual for v in values)
    if base == "Bool":
        return any(a.lower() == str(v).lower() for a in actual for v in values)
    raise ValueError(f"condition operator {name} is not modelled")


@dataclass(frozen=True)
class Request:
    action: str
    resource: str
    principal: Optional[str] = None  # the caller's ARN (aws:PrincipalArn is set from it)
    context: Mapping[str, str] = field(default_factory=dict)

    def key(self, name: str) -> Optional[list[str]]:
        if name == "aws:PrincipalArn" and self.principal is not None:
            return [self.principal]
        if name == "aws:PrincipalAccount" and self.principal is not None:
            return [self.principal.split(":")[4]]
        v = self.context.get(name)
        return None if v is None else [v]


def _principal_matches(statement: Mapping[str, Any], request: Request) -> bool:
    if "Principal" not in statement:  # an identity policy: its principal is the one it is attached to
        return True
    p = statement["Principal"]
    if p == "*":
        return True
    for kind, values in p.items():
        for v in _listed(values):
            if v == "*":
                return True
            if kind == "AWS" and request.principal is not None:
                # An account root admits every principal of the account (whose own policies must then allow too).
                if v == request.principal or (v.endswith(":root") and v.split(":")[4] == request.principal.split(":")[4]):
                    return True
            if kind == "Service" and request.principal == v:
                return True
    return False


def applies(statement: Mapping[str, Any], request: Request) -> bool:
    """The statement matches the request: action, resource, principal and every condition."""
    if not any(wildcard_match(a, request.action) for a in _listed(statement.get("Action", []))):
        return False
    if not any(wildcard_match(r, request.resource) for r in _listed(statement.get("Resource", "*"))):
        return False
    if not _principal_matches(statement, request):
        return False
    for op, keys in statement.get("Condition", {}).items():
        for key, values in keys.items():
            if not _op(op, _listed(values), request.key(key)):
                return False
    return True


def decision(statements: Iterable[Mapping[str, Any]], request: Request) -> str:
    """'deny' (an explicit deny applies), 'allow' (an allow applies and no deny) or 'implicit' (nothing applies)."""
    matched = [s for s in statements if applies(s, request)]
    if any(s["Effect"] == "Deny" for s in matched):
        return "deny"
    return "allow" if matched else "implicit"
