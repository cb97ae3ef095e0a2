"""The EKS access tables (``tables.py``): team and admin access entries, Pod Identity associations, and the
CloudFormation spelling of their members."""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from .access import access_policy_arn
from .fields import Field, Table, emit
from .tables_common import _CLUSTER_NAME, _TAGS, same_arn

ACCESS_ENTRY_TYPE = "STANDARD"


ACCESS_ENTRY = Table(
    kind="AccessEntry",
    label="access entry",
    spec="teams[]",
    fields=(
        Field("clusterName", "cluster", "", drift=_CLUSTER_NAME, imports=_CLUSTER_NAME),
        Field("principalArn", "principal", "access.viewers|access.submitters", get=lambda a: a.principal_arn,
              plan_fields=("principal_arn",), drift="the key access entries are matched by",
              imports="not held by the quotas: import leaves a commented placeholder"),
        Field("type", "entry type", "", get=lambda a: ACCESS_ENTRY_TYPE, default=ACCESS_ENTRY_TYPE,
              imports="always STANDARD"),
        Field("kubernetesGroups", "Kubernetes groups", "access.viewers|access.submitters",
              get=lambda a: list(a.groups),
              plan_fields=("groups", "teams"),
              live_member=lambda live: ("kubernetesGroups", sorted(live.get("kubernetesGroups", []))),
              imports="not held by the quotas: import leaves a commented placeholder"),
        # HyperPod spaces: the access policies AWS documents for them, for interactive teams' submitters.
        Field("accessPolicies", "access policies (HyperPod spaces)", "contract.approvedWorkloads|access.submitters",
              get=lambda a: [p.emitted() for p in a.access_policies] or None, plan_fields=("access_policies",),
              drift="DescribeAccessEntry does not return them; drift does not read ListAssociatedAccessPolicies",
              imports="follows the team's approved workloads"),
        Field("tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
    exempt={"key": "the construct id"},
)

# EKS's cluster-admin access policy, associated with each cluster.admins entry at cluster scope.
CLUSTER_ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"
# Where a planned value holds the partition of the stack it is deployed to (``same_arn`` reads it as the live one;
# the emitters put the stack's partition in its place: ``with_partition``).
PARTITION = "${partition}"
CLUSTER_ADMIN_POLICY_ARN = access_policy_arn(PARTITION, CLUSTER_ADMIN_POLICY)


def with_partition(value: Any, partition: str) -> Any:
    """``value`` (emitted properties) with each ``${partition}`` placeholder replaced by ``partition`` (a CDK
    emitter passes ``Aws.PARTITION``, so the template resolves it where the stack is deployed)."""
    if isinstance(value, str):
        return value.replace(PARTITION, partition)
    if isinstance(value, Mapping):
        return {k: with_partition(v, partition) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [with_partition(v, partition) for v in value]
    return value


ADMIN_ENTRY = Table(
    kind="AccessEntry",
    label="cluster admin access entry",
    spec="cluster.admins[]",
    fields=(
        Field("clusterName", "cluster", "", drift=_CLUSTER_NAME, imports=_CLUSTER_NAME),
        Field("principalArn", "principal", "", get=lambda a: a.principal_arn, plan_fields=("principal_arn",),
              drift="the key access entries are matched by",
              imports="not held by the quotas: import leaves a commented placeholder"),
        # The policy's ARN in the stack's partition (``with_partition``), at cluster scope.
        Field("accessPolicies", "access policies", "",
              get=lambda a: [{"policyArn": CLUSTER_ADMIN_POLICY_ARN, "accessScope": {"type": "cluster"}}],
              drift="presence only: drift does not read ListAssociatedAccessPolicies",
              imports="not held by the quotas: import leaves a commented placeholder"),
        Field("tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
    exempt={"key": "the construct id"},
)


POD_IDENTITY = Table(
    kind="PodIdentityAssociation",
    label="Pod Identity association",
    spec="teams[].workloadIdentities[]",
    fields=(
        Field("clusterName", "cluster", "", drift=_CLUSTER_NAME, imports=_CLUSTER_NAME),
        Field("namespace", "namespace", "", get=lambda i: i.namespace, plan_fields=("namespace", "team"),
              drift="part of the key associations are matched by", imports="the team's namespace"),
        Field("serviceAccount", "service account", "serviceAccount", get=lambda i: i.service_account,
              plan_fields=("service_account",), drift="part of the key associations are matched by",
              imports="not read by import (workload identities are placeholders)"),
        Field("roleArn", "role", "", get=lambda i: i.source_role_arn,
              plan_fields=("source_role_arn", "source_role_name"), same=same_arn,
              imports="generated from the spec, team and service account names"),
        Field("targetRoleArn", "cross-account target role", "targetRoleArn|targetRole",
              get=lambda i: i.target_role_arn, same=same_arn,
              plan_fields=("target_role_arn", "created_target", "consumer", "consumer_account"),
              imports="not read by import (workload identities are placeholders)"),
        Field("tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
)


def _capitalized(value: Any) -> Any:
    """camelCase members with a capital first letter, nested too (the keys of every mapping are member names)."""
    if isinstance(value, dict):
        return {k[:1].upper() + k[1:]: _capitalized(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_capitalized(v) for v in value]
    return value


def cfn_properties(table: Table, part: Any, context: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """An EKS object's properties as CloudFormation spells them (``principalArn`` -> ``PrincipalArn``, nested
    members too), for a template written as data (``constructs/plain.py``)."""
    return _capitalized(emit(table, part, context))


def cfn_kwargs(table: Table, part: Any, context: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """An EKS object's properties as keyword arguments of its aws-cdk-lib L1 class (``principalArn`` ->
    ``principal_arn``); members that CloudFormation does not take (tags come from the stack) are left out."""
    return {re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): v for k, v in emit(table, part, context).items()}
