"""Default-deny NetworkPolicies per team namespace, then the explicit allows of DESIGN.md."""

from __future__ import annotations

from typing import Any

from constructs import Construct

from ..plan import TeamPlan
from ..plan.network import EgressPlan
from ._objects import api_object

POD_IDENTITY_AGENT = "169.254.170.23/32"
NETWORKING_API = "networking.k8s.io/v1"


def _policy(scope: Construct, name: str, namespace: str, spec: dict[str, Any]) -> None:
    api_object(scope, f"NetworkPolicy-{name}", api_version=NETWORKING_API, kind="NetworkPolicy", name=name,
               namespace=namespace, body={"spec": spec})


def _block(egress: EgressPlan) -> dict[str, Any]:
    return {"cidr": egress.cidr, "except": list(egress.excepts)} if egress.excepts else {"cidr": egress.cidr}


def team_egress_rules(team: TeamPlan) -> list[dict[str, Any]]:
    """The egress rules of ``allow-team-egress``: the team's ``egress`` entries (link-local carved out)."""
    return [{"to": [{"ipBlock": _block(e)}], "ports": [{"protocol": e.protocol, "port": p} for p in sorted(e.ports)]}
            for e in team.egress]


def network_policies(scope: Construct, *, team: TeamPlan, vpc_cidr: str) -> None:
    namespace = team.namespace
    everything: dict[str, Any] = {}
    _policy(scope, "default-deny", namespace, {"podSelector": everything, "policyTypes": ["Ingress", "Egress"]})
    _policy(scope, "allow-dns", namespace, {
        "podSelector": {},
        "policyTypes": ["Egress"],
        "egress": [{
            "to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
            "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
        }],
    })
    _policy(scope, "allow-same-namespace", namespace, {
        "podSelector": {},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [{"podSelector": {}}]}],
        "egress": [{"to": [{"podSelector": {}}]}],
    })
    _policy(scope, "allow-pod-identity-agent", namespace, {
        "podSelector": {},
        "policyTypes": ["Egress"],
        "egress": [{"to": [{"ipBlock": {"cidr": POD_IDENTITY_AGENT}}], "ports": [{"protocol": "TCP", "port": 80}]}],
    })
    # AWS APIs through the VPC's interface endpoints (and the private EKS API) are HTTPS inside the VPC.
    _policy(scope, "allow-vpc-https", namespace, {
        "podSelector": {},
        "policyTypes": ["Egress"],
        "egress": [{"to": [{"ipBlock": {"cidr": vpc_cidr}}], "ports": [{"protocol": "TCP", "port": 443}]}],
    })
    if team.egress:
        _policy(scope, "allow-team-egress", namespace,
                {"podSelector": {}, "policyTypes": ["Egress"], "egress": team_egress_rules(team)})
