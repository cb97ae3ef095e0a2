"""EKS access entries that map IAM principals onto team Kubernetes groups (no access policy).

One emitter: :func:`add_access_entry` writes an entry's ``AWS::EKS::AccessEntry`` as plain data into a
``plain.Fragment``; :class:`TeamAccessEntry` (one principal) and :func:`team_access_entries` (many, in one
``CfnInclude``) both go through it. tests/constructs/test_plain*.py compare it with aws-cdk-lib's
``CfnAccessEntry`` built at the same construct path.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from aws_cdk import CfnResource, cloudformation_include as cfn_inc
from constructs import Construct

from ..plan import PrincipalAccess
from ..plan.tables import ACCESS_ENTRY, cfn_properties
from .plain import Fragment

ACCESS_ENTRY_TYPE = "AWS::EKS::AccessEntry"
INCLUDE_ID = "Resources"  # the CfnInclude under a TeamAccessEntry


def access_entry_properties(cluster_name: str, access: PrincipalAccess) -> dict[str, Any]:
    """The ``AWS::EKS::AccessEntry`` properties of one principal (the ``ACCESS_ENTRY`` table's)."""
    return cfn_properties(ACCESS_ENTRY, access, {"clusterName": cluster_name})


def add_access_entry(fragment: Fragment, below: Sequence[str], *, cluster_name: str, access: PrincipalAccess
                     ) -> str:
    """One principal's entry in ``fragment`` at ``below``/Resource (where ``CfnAccessEntry(<below>, "Resource")``
    puts it); its logical id."""
    return fragment.add([*below, "Resource"], ACCESS_ENTRY_TYPE, access_entry_properties(cluster_name, access))


class TeamAccessEntry(Construct):
    """One STANDARD access entry per principal. Its groups get rights only through the team Roles.

    The entry is plain data (:func:`add_access_entry`) in one ``CfnInclude``; ``resource`` is the included
    ``AWS::EKS::AccessEntry`` (the escape hatch, an aws-cdk-lib L1 ``CfnAccessEntry``), at the logical id
    ``<id>/Resource`` has.
    """

    def __init__(self, scope: Construct, id: str, *, cluster_name: str, access: PrincipalAccess) -> None:
        super().__init__(scope, id)
        fragment = Fragment(self)
        self.logical_id = add_access_entry(fragment, [], cluster_name=cluster_name, access=access)
        include = fragment.include_resources(INCLUDE_ID)
        self.resource: CfnResource = include.get_resource(self.logical_id)


def team_access_entries(scope: Construct, id: str, *, cluster_name: str,
                        accesses: Iterable[PrincipalAccess]) -> Optional[cfn_inc.CfnInclude]:
    """Many principals' entries in one ``CfnInclude`` named ``id`` (``plain.Fragment``), each at the logical id a
    ``TeamAccessEntry(scope, access.key)`` gives it; None when there are none."""
    fragment = Fragment(scope)
    for access in accesses:
        add_access_entry(fragment, [access.key], cluster_name=cluster_name, access=access)
    return fragment.include(id)
