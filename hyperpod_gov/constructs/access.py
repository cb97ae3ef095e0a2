"""EKS access entries that map IAM principals onto team Kubernetes groups (no access policy)."""

from __future__ import annotations

from aws_cdk import aws_eks as eks_l1
from constructs import Construct

from ..plan import PrincipalAccess


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
