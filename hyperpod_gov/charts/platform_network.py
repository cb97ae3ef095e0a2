"""Allow-all NetworkPolicies for the platform's own namespaces, so that the VPC CNI's strict mode (no traffic a
policy does not allow, from a pod's first packet) constrains team namespaces only (``plan.operators``)."""

from __future__ import annotations

from constructs import Construct

from ._objects import api_object

POLICY_NAME = "hyperpod-gov-allow-platform"


def platform_network_policies(scope: Construct, *, namespaces: tuple[str, ...]) -> None:
    """One policy per namespace: every pod there may send and receive anything, as in standard mode."""
    for namespace in namespaces:
        api_object(scope, f"PlatformNetworkPolicy-{namespace}", api_version="networking.k8s.io/v1",
                   kind="NetworkPolicy", name=POLICY_NAME, namespace=namespace,
                   body={"spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"],
                                  "ingress": [{}], "egress": [{}]}})
