"""EKS access entries that map IAM principals onto team Kubernetes groups (no access policy)."""

from __future__ import annotations

import hashlib

from aws_cdk import aws_eks as eks_l1
from constructs import Construct

from ..plan import PrincipalAccess


def principal_construct_id(arn: str) -> str:
    """Stable, readable id for a principal: its name plus a short hash of the whole ARN."""
    name = "".join(ch for ch in arn.rsplit("/", 1)[-1] if ch.isalnum())[:40]
    return f"{name}{hashlib.sha256(arn.encode()).hexdigest()[:8]}"


class TeamAccessEntry(Construct):
    """One STANDARD access entry per principal. Its groups get rights only through the team Roles."""

    def __init__(self, scope: Construct, id: str, *, cluster_name: str, access: PrincipalAccess) -> None:
        super().__init__(scope, id)
        self.resource = eks_l1.CfnAccessEntry(
            self,
            "Resource",
            cluster_name=cluster_name,
            principal_arn=access.principal_arn,
            type="STANDARD",
            kubernetes_groups=list(access.groups),
        )
