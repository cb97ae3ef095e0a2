"""Who reaches the Kubernetes API from where: the networks ``cluster.apiAccess`` admits to the private endpoint.

Each network becomes one ingress rule on TCP 443 of the EKS cluster security group (``constructs/eks.py``);
``explain`` prints ``api_reach`` and ``diff`` marks a new network as a privilege change (``views.CLUSTER``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

from ..spec.cluster import Cluster
from . import names

ApiSourceKind = Literal["cidr", "security-group", "prefix-list"]
API_PORT = 443  # the EKS API endpoint listens on HTTPS only


@dataclass(frozen=True)
class ApiSource:
    """One network admitted to the private API endpoint."""

    kind: ApiSourceKind
    value: str  # the CIDR, sg-... or pl-...
    description: str  # the rule's description
    key: str  # construct id (names.network_key): stable when the spec reorders its lists
    path: str = field(kw_only=True, compare=False)  # "cluster.apiAccess.cidrs[0]": where the spec lists it

    @property
    def words(self) -> str:
        what = {"cidr": "", "security-group": "security group ", "prefix-list": "prefix list "}[self.kind]
        return f"{what}{self.value} ({self.description})"


def api_sources(cluster: Cluster) -> tuple[ApiSource, ...]:
    """The spec's ``apiAccess`` entries, sorted by kind and value (the spec refuses repeats)."""
    a = cluster.api_access
    out = [ApiSource("cidr", c.cidr, c.description, names.network_key(c.cidr),
                     path=f"cluster.apiAccess.cidrs[{i}]") for i, c in enumerate(a.cidrs)]
    out += [ApiSource("security-group", g.id, g.description, names.network_key(g.id),
                      path=f"cluster.apiAccess.securityGroupIds[{i}]") for i, g in enumerate(a.security_group_ids)]
    out += [ApiSource("prefix-list", p.id, p.description, names.network_key(p.id),
                      path=f"cluster.apiAccess.prefixListIds[{i}]") for i, p in enumerate(a.prefix_list_ids)]
    return tuple(sorted(out, key=lambda s: (s.kind, s.value)))


def api_reach(sources: tuple[ApiSource, ...], *, eks_name: str, endpoint_access: str, admin_cidrs: tuple[str, ...],
              admins: int, principals: int, handler_subnets: tuple[str, ...] = (),
              handler_security_group: Optional[str] = None) -> list[str]:
    """Who can reach the EKS cluster ``eks_name``'s Kubernetes API from where, in words (``explain``): ``sources``
    (``api_sources``) on the private endpoint, the public endpoint (``endpoint_access``, ``admin_cidrs``), and how
    many cluster ``admins`` and team ``principals`` have an access entry. ``handler_security_group``: an existing
    cluster's (governance-only mode) kubectl handler runs in it and ``handler_subnets``; None when hyperpod-gov
    creates the cluster."""
    if handler_security_group is not None:
        return [f"the existing cluster {eks_name}'s endpoint, as it is configured (hyperpod-gov changes no "
                "network access to it); its kubectl handler from "
                f"{', '.join(handler_subnets)} with {handler_security_group}"]
    lines = ["private endpoint: the cluster's nodes and the kubectl handler (from inside the VPC)"]
    lines += [f"private endpoint on {API_PORT}: {s.words}" for s in sources]
    if endpoint_access == "public-and-private":
        lines.append(f"public endpoint: {', '.join(admin_cidrs)} (adminCidrs)")
    else:
        lines.append("public endpoint: off")
    lines.append(f"who: {admins} cluster admin(s) and {principals} team principal(s), each by its "
                 "access entry; Kubernetes RBAC decides what each may do")
    return lines
