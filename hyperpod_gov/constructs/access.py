"""EKS access entries that map IAM principals onto team Kubernetes groups (no access policy)."""

from __future__ import annotations

from typing import Any, Iterable, Optional

from aws_cdk import aws_eks as eks_l1, cloudformation_include as cfn_inc
from constructs import Construct

from ..plan import PrincipalAccess
from ..plan.tables import ACCESS_ENTRY, cfn_kwargs, cfn_properties
from .plain import Fragment

ACCESS_ENTRY_TYPE = "AWS::EKS::AccessEntry"


class TeamAccessEntry(Construct):
    """One STANDARD access entry per principal. Its groups get rights only through the team Roles."""

    def __init__(self, scope: Construct, id: str, *, cluster_name: str, access: PrincipalAccess) -> None:
        super().__init__(scope, id)
        self.resource = eks_l1.CfnAccessEntry(self, "Resource",
                                              **cfn_kwargs(ACCESS_ENTRY, access, {"clusterName": cluster_name}))


def access_entry_properties(cluster_name: str, access: PrincipalAccess) -> dict[str, Any]:
    """The ``AWS::EKS::AccessEntry`` properties of one principal (the ``ACCESS_ENTRY`` table's)."""
    return cfn_properties(ACCESS_ENTRY, access, {"clusterName": cluster_name})


def team_access_entries(scope: Construct, id: str, *, cluster_name: str,
                        accesses: Iterable[PrincipalAccess]) -> Optional[cfn_inc.CfnInclude]:
    """Many principals' entries in one ``CfnInclude`` named ``id`` (``plain.Fragment``), each at the logical id a
    ``TeamAccessEntry(scope, access.key)`` gives it; None when there are none."""
    fragment = Fragment(scope)
    for access in accesses:
        fragment.add([access.key, "Resource"], ACCESS_ENTRY_TYPE, access_entry_properties(cluster_name, access))
    return fragment.include(id)
