"""Who maps to which Kubernetes groups. EKS allows one access entry per principal,
so a principal that several teams name gets one entry with all its groups."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..spec._base import partition_of
from ..spec.models import GovernanceSpec
from . import names
from .contracts import project_role_groups
from .workloads import INTERACTIVE, approved

# The EKS access policies AWS documents for HyperPod spaces: "Required access entry policies:
# AmazonSagemakerHyperpodSpacePolicy - scoped to namespace DS should create spaces in;
# AmazonSagemakerHyperpodSpaceTemplatePolicy - scoped to 'jupyter-k8s-shared' namespace"
# (https://docs.aws.amazon.com/sagemaker/latest/dg/add-user.html, "Creating access entry"; the policy table of
# https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-studio-setup-eks.html). Workspaces are a
# custom resource whose rights EKS grants through these policies, so they are not in the team Roles.
SPACE_POLICY = "AmazonSagemakerHyperpodSpacePolicy"
SPACE_TEMPLATE_POLICY = "AmazonSagemakerHyperpodSpaceTemplatePolicy"
SPACE_TEMPLATES_NAMESPACE = "jupyter-k8s-shared"  # where the spaces add-on keeps the shared space templates


def access_policy_arn(partition: str, name: str) -> str:
    """The ARN of an EKS cluster-access policy (``arn:<partition>:eks::aws:cluster-access-policy/<name>``)."""
    return f"arn:{partition}:eks::aws:cluster-access-policy/{name}"


@dataclass(frozen=True)
class AccessPolicyPlan:
    """One EKS access policy associated with an access entry, scoped to namespaces (sorted; never empty)."""

    policy_arn: str
    namespaces: tuple[str, ...]

    def emitted(self) -> dict[str, object]:
        """As ``CreateAccessEntry``/CloudFormation's ``AccessPolicies`` item takes it."""
        return {"policyArn": self.policy_arn,
                "accessScope": {"type": "namespace", "namespaces": list(self.namespaces)}}


@dataclass(frozen=True)
class PrincipalAccess:
    principal_arn: str
    groups: tuple[str, ...]  # sorted
    teams: tuple[str, ...]  # sorted
    key: str  # construct id: readable name plus a hash of the whole ARN
    # Where the spec first names the principal ("teams[1].access.viewers[0]"); not part of its identity.
    path: str = field(kw_only=True, compare=False)
    # EKS access policies (sorted by ARN): the spaces policies of the interactive teams it submits to.
    access_policies: tuple[AccessPolicyPlan, ...] = field(default=(), kw_only=True)


def principal_access(spec: GovernanceSpec) -> tuple[PrincipalAccess, ...]:
    """Every principal's groups: the teams' viewers and submitters, each Unified Studio project role, which
    gets exactly a submitter's groups, and ``cluster.viewers``. A retiring team's principals get nothing from it.

    A submitter (or project role) of a team whose contract approves ``interactive`` work also gets the spaces
    access policies, scoped to that team's namespace and to the shared templates' namespace."""
    groups: dict[str, set[str]] = defaultdict(set)
    teams: dict[str, set[str]] = defaultdict(set)
    paths: dict[str, str] = {}
    spaces: dict[str, set[str]] = defaultdict(set)  # principal -> namespaces it may run spaces in
    for ti, team in enumerate(spec.teams):
        if team.retiring:
            continue
        interactive = INTERACTIVE in approved(team)  # type: ignore[arg-type]  # reads only team.contract
        namespace = names.namespace(team.name)
        for i, arn in enumerate(team.access.viewers):
            groups[arn].add(names.viewers_group(team.name))
            teams[arn].add(team.name)
            paths.setdefault(arn, f"teams[{ti}].access.viewers[{i}]")
        for i, arn in enumerate(team.access.submitters):
            groups[arn].add(names.submitters_group(team.name))
            teams[arn].add(team.name)
            paths.setdefault(arn, f"teams[{ti}].access.submitters[{i}]")
            if interactive:
                spaces[arn].add(namespace)
        studio = team.contract.unified_studio if team.contract else None
        if studio is not None:
            groups[studio.project_role_arn].update(project_role_groups(team.name))
            teams[studio.project_role_arn].add(team.name)
            paths.setdefault(studio.project_role_arn, f"teams[{ti}].contract.unifiedStudio.projectRoleArn")
            if interactive:
                spaces[studio.project_role_arn].add(namespace)
    for i, arn in enumerate(spec.cluster.viewers):
        groups[arn].add(names.CLUSTER_VIEWERS_GROUP)
        paths.setdefault(arn, f"cluster.viewers[{i}]")
    partition = partition_of(spec.accounts.capacity.region)
    return tuple(
        PrincipalAccess(arn, tuple(sorted(groups[arn])), tuple(sorted(teams[arn])), names.principal_key(arn),
                        path=paths[arn], access_policies=_space_policies(partition, spaces.get(arn, set())))
        for arn in sorted(groups)
    )


def _space_policies(partition: str, namespaces: set[str]) -> tuple[AccessPolicyPlan, ...]:
    if not namespaces:
        return ()
    return tuple(sorted((
        AccessPolicyPlan(access_policy_arn(partition, SPACE_POLICY), tuple(sorted(namespaces))),
        AccessPolicyPlan(access_policy_arn(partition, SPACE_TEMPLATE_POLICY), (SPACE_TEMPLATES_NAMESPACE,)),
    ), key=lambda p: p.policy_arn))
