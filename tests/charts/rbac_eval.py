"""Kubernetes RBAC authorization, evaluated the way the API server's RBAC authorizer does, over manifests.

A request (verb, API group, resource, subresource, name, namespace or cluster scope; or a non-resource URL) is
allowed when some binding that applies to it names one of the user's groups and its role has a rule that covers
it (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go, ``RuleAllows`` in
pkg/apis/rbac/v1/evaluation_helpers.go):

- a ClusterRoleBinding applies to every request; a RoleBinding only to requests in its own namespace, and its
  roleRef is a Role of that namespace or a ClusterRole;
- a rule covers a request when its verbs, apiGroups and resources (``"pods/log"`` for a subresource) include the
  request's (``"*"`` matches any; ``"*/log"`` any resource's subresource), and, when the rule lists
  resourceNames, the request names one of them (list, watch and create name nothing, so they never match);
- a non-resource rule covers a URL that it lists, or of which it lists a prefix ending in ``*``.

Kubernetes' bootstrap policy binds system:basic-user, system:discovery and system:public-info-viewer to every
authenticated user (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go); ``BOOTSTRAP`` holds those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

AUTHENTICATED = "system:authenticated"
RBAC = "rbac.authorization.k8s.io/v1"


@dataclass(frozen=True)
class Request:
    """One API request. ``namespace`` None: a cluster-scoped request (or a list across all namespaces)."""

    verb: str
    group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: Optional[str] = None
    url: str = ""  # a non-resource request ("/version"); then group/resource are unused

    def __str__(self) -> str:
        if self.url:
            return f"{self.verb} {self.url}"
        what = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f"namespace {self.namespace}" if self.namespace is not None else "cluster"
        return f"{self.verb} {what}.{self.group or 'core'}{'/' + self.name if self.name else ''} ({where})"


def _has(values: Iterable[str], value: str) -> bool:
    values = list(values)
    return "*" in values or value in values


def rule_allows(rule: dict[str, Any], req: Request) -> bool:
    """Whether one PolicyRule covers the request."""
    if not _has(rule.get("verbs", []), req.verb):
        return False
    if req.url:
        return any(u == req.url or (u.endswith("*") and req.url.startswith(u[:-1]))
                   for u in rule.get("nonResourceURLs", []))
    if "nonResourceURLs" in rule and "resources" not in rule:
        return False
    if not _has(rule.get("apiGroups", []), req.group):
        return False
    resources = rule.get("resources", [])
    if req.subresource:
        combined = f"{req.resource}/{req.subresource}"
        if not ("*" in resources or combined in resources or f"*/{req.subresource}" in resources):
            return False
    elif not _has(resources, req.resource):
        return False
    names = rule.get("resourceNames")
    if names:
        return bool(req.name) and req.name in names
    return True


class Authorizer:
    """RBAC over a set of Role, ClusterRole, RoleBinding and ClusterRoleBinding objects (others are ignored)."""

    def __init__(self, objects: Iterable[dict[str, Any]], *, bootstrap: bool = True) -> None:
        objs = [*(BOOTSTRAP if bootstrap else ()), *objects]
        self.roles = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objs if o["kind"] == "Role"}
        self.cluster_roles = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ClusterRole"}
        self.bindings = [o for o in objs if o["kind"] in ("RoleBinding", "ClusterRoleBinding")]

    def _role(self, binding: dict[str, Any]) -> Optional[dict[str, Any]]:
        ref = binding["roleRef"]
        if ref["kind"] == "ClusterRole":
            return self.cluster_roles.get(ref["name"])
        if binding["kind"] == "RoleBinding" and ref["kind"] == "Role":
            return self.roles.get((binding["metadata"]["namespace"], ref["name"]))
        return None  # a ClusterRoleBinding cannot reference a Role

    def allowed(self, groups: Iterable[str], req: Request) -> bool:
        """Whether a user in ``groups`` (and system:authenticated) may make the request."""
        mine = {*groups, AUTHENTICATED}
        for b in self.bindings:
            if b["kind"] == "RoleBinding" and b["metadata"]["namespace"] != req.namespace:
                continue
            if not any(s.get("kind") == "Group" and s.get("name") in mine for s in b.get("subjects") or []):
                continue
            role = self._role(b)
            if role is not None and any(rule_allows(r, req) for r in role.get("rules") or []):
                return True
        return False


def _bootstrap(name: str, rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules},
        {"apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": name},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": AUTHENTICATED}]},
    ]


BOOTSTRAP: tuple[dict[str, Any], ...] = (
    *_bootstrap("system:basic-user", [
        {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
         "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
    ]),
    *_bootstrap("system:discovery", [
        {"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
                             "/readyz", "/version", "/version/"], "verbs": ["get"]},
    ]),
    *_bootstrap("system:public-info-viewer", [
        {"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]},
    ]),
)
