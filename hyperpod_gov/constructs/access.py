"""EKS access entries that map IAM principals onto team Kubernetes groups (no access policy)."""

from __future__ import annotations

from aws_cdk import aws_eks as eks_l1
from constructs import Construct

from ..plan import PrincipalAccess
from ..plan.tables import ACCESS_ENTRY, cfn_kwargs


class TeamAccessEntry(Construct):
    """One STANDARD access entry per principal. Its groups get rights only through the team Roles."""

    def __init__(self, scope: Construct, id: str, *, cluster_name: str, access: PrincipalAccess) -> None:
        super().__init__(scope, id)
        self.resource = eks_l1.CfnAccessEntry(self, "Resource",
                                              **cfn_kwargs(ACCESS_ENTRY, access, {"clusterName": cluster_name}))
