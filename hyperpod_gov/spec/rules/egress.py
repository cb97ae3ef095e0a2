"""HPG-E010: a team's extra egress does not open the nodes' and the VPC's own services."""

from __future__ import annotations

import datetime as dt
import ipaddress
from typing import Iterator

from ..errors import SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule

# The services of the nodes and of the VPC a pod has no business reaching: each port (or range) and what listens.
NODE_PORTS: tuple[tuple[int, int, str], ...] = (
    (22, 22, "SSH on the nodes"),
    (53, 53, "the VPC's DNS resolver, which bypasses the cluster DNS the platform allows"),
    (988, 988, "FSx for Lustre, the shared file system the nodes mount (teams reach it through their directories)"),
    (1018, 1023, "FSx for Lustre's client ports"),
    (2049, 2049, "NFS (EFS, FSx for OpenZFS)"),
    (10250, 10250, "the kubelet API of every node (exec into and read any pod)"),
    (10255, 10255, "the kubelet's read-only port"),
    (10256, 10256, "kube-proxy's health port"),
)
# Without the VPC's CIDR (an existing cluster's VPC is not the spec's), any private space may be it.
PRIVATE = tuple(ipaddress.IPv4Network(c) for c in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"))


def _node_services(ports: tuple[int, ...]) -> list[str]:
    return [f"{p} ({what})" for p in ports for low, high, what in NODE_PORTS if low <= p <= high]


@rule("HPG-E010", "error", "A team's egress rule toward the cluster's VPC opens no node or VPC service (SSH, DNS, "
      "Lustre, NFS, kubelet, kube-proxy) unless the rule sets allowNodePorts.")
def egress_keeps_off_the_nodes(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    vpc = (PRIVATE if spec.cluster.existing is not None
           else (ipaddress.IPv4Network(spec.cluster.vpc.cidr),))
    for ti, team in enumerate(spec.teams):
        for ei, e in enumerate(team.egress):
            if e.allow_node_ports or not any(ipaddress.IPv4Network(e.cidr).overlaps(v) for v in vpc):
                continue
            services = _node_services(e.ports)
            if services:
                path = f"teams[{ti}].egress[{ei}]"
                yield SpecIssue(
                    f"{path}.ports", f"opens {'; '.join(services)} toward the cluster's VPC ({e.cidr}): a pod "
                    "would reach the nodes' own services", list(e.ports),
                    f"narrow {path}.cidr to the hosts the team needs and drop these ports, or set "
                    f"{path}.allowNodePorts: true with the platform team's agreement",
                )
