"""The IAM rights a team member's tools need, per team: pure data, emitted by ``constructs/tools_policy.py``.

What the tools call on AWS (aws/sagemaker-hyperpod-cli, src/sagemaker/hyperpod/cli/):

- ``aws eks update-kubeconfig`` (run by ``hyp set-cluster-context`` and ``hyp list-cluster``,
  commands/cluster.py ``_update_kube_config``): ``eks:DescribeCluster``.
- ``hyp set-cluster-context`` (commands/cluster.py ``set_cluster_context``): ``sagemaker:DescribeCluster``,
  then ``eks:DescribeAccessEntry`` of the caller's own entry (cluster_utils.py
  ``validate_eks_access_before_kubeconfig_update``: a denied call ends the command). Its ``iam:GetRole`` has a
  fallback (the role ARN from the session ARN), so it is not granted.
- ``hyp list-cluster`` (commands/cluster.py ``list_cluster``, ``_get_hyperpod_clusters`` and
  ``rate_limited_operation``; validators/cluster_validator.py): ``sagemaker:ListClusters``, then
  ``sagemaker:DescribeCluster`` of each cluster (other clusters are denied and skipped).
- ``hyp list hyp-pytorch-job``, ``hyp get-logs hyp-pytorch-job`` (commands/training.py, training/
  hyperpod_pytorch_job.py): Kubernetes calls only.
- The task-governance state the CLI shows (quota per namespace) it reads from Kueue's ClusterQueue through
  Kubernetes (commands/cluster.py ``get_cluster_queue``): it makes no ``ListComputeQuotas``,
  ``DescribeComputeQuota``, ``ListClusterSchedulerConfigs`` or ``ListClusterNodes`` call, so none is granted.
- ``sts:GetCallerIdentity`` (validators/validator.py) and ``aws eks get-token`` need no permission.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ..spec._base import IAM_PRINCIPAL_ARN
from ..spec.models import GovernanceSpec

POLICY_VERSION = "2012-10-17"
ACCESS_ENTRIES = "EksDescribeAccessEntries"


@dataclass(frozen=True)
class ToolsStatement:
    """One Allow statement. ``hyperpod_cluster``: its resource is the HyperPod cluster's ARN, which the emitter
    gives (a deploy-time value when hyperpod-gov creates the cluster)."""

    sid: str
    actions: tuple[str, ...]  # sorted
    resources: tuple[str, ...] = ()  # sorted; () with hyperpod_cluster
    hyperpod_cluster: bool = False


@dataclass(frozen=True)
class ToolsPolicyPlan:
    """One team's tools policy and who gets it."""

    team: str
    statements: tuple[ToolsStatement, ...]
    roles: tuple[str, ...]  # role names (paths dropped) of the capacity account it is attached to, sorted
    users: tuple[str, ...]  # user names of the capacity account (accounts.trusted may accept users), sorted
    foreign: tuple[str, ...]  # principal ARNs of other accounts, sorted: their admins get iam/<team>.json

    def document(self, hyperpod_cluster_arn: Any) -> dict[str, Any]:
        """The IAM policy document, with ``hyperpod_cluster_arn`` (a string or a CDK token) where it belongs."""
        return {"Version": POLICY_VERSION, "Statement": [
            {"Sid": s.sid, "Effect": "Allow", "Action": list(s.actions) if len(s.actions) > 1 else s.actions[0],
             "Resource": hyperpod_cluster_arn if s.hyperpod_cluster else
             (list(s.resources) if len(s.resources) > 1 else s.resources[0])}
            for s in self.statements]}


def _name(arn: str) -> str:
    """The role or user name of an IAM ARN: its last segment (``role/path/name`` -> ``name``)."""
    return arn.rsplit("/", 1)[-1]


def hyperpod_cluster_pattern(known: Optional[str], *, partition: str, region: str, account: str) -> str:
    """The HyperPod cluster's ARN where a document is written before the deploy: the ARN itself where it is
    ``known`` (governance-only mode, ``Plan.hyperpod_cluster_arn``), otherwise any cluster of the capacity
    ``account`` and ``region`` (its id is made at create)."""
    return known or f"arn:{partition}:sagemaker:{region}:{account}:cluster/*"


def tools_policies(spec: GovernanceSpec, *, partition: str, eks_name: str) -> tuple["ToolsPolicyPlan", ...]:
    """One policy per team with ``access.toolsPolicy`` (default), sorted by team; a retiring team's principals
    lose cluster access, so they get none. A team without principals has a policy that nobody gets (no resource,
    no document)."""
    account, region = spec.accounts.capacity.id, spec.accounts.capacity.region
    eks = f"arn:{partition}:eks:{region}:{account}"
    out = []
    for team in sorted(spec.teams, key=lambda t: t.name):
        principals = sorted(set(team.access.viewers) | set(team.access.submitters))
        if not team.access.tools_policy or team.retiring:
            continue
        entries = []
        for arn in principals:
            m = IAM_PRINCIPAL_ARN.match(arn)
            if m is None:  # the spec validated it
                raise ValueError(f"not an IAM principal ARN: {arn}")
            # access-entry/<cluster>/<role|user>/<account>/<name>/<uuid>: EKS makes the uuid with the entry.
            entries.append(f"{eks}:access-entry/{eks_name}/{m.group(2)}/{m.group(1)}/{_name(arn)}/*")
        if not entries:
            out.append(ToolsPolicyPlan(team.name, (), (), (), ()))
            continue
        statements = (
            ToolsStatement("EksDescribeCluster", ("eks:DescribeCluster",), (f"{eks}:cluster/{eks_name}",)),
            ToolsStatement(ACCESS_ENTRIES, ("eks:DescribeAccessEntry",), tuple(sorted(set(entries)))),
            ToolsStatement("HyperPodDescribeCluster", ("sagemaker:DescribeCluster",), hyperpod_cluster=True),
            # ListClusters has no resource type: IAM only accepts "*".
            ToolsStatement("HyperPodListClusters", ("sagemaker:ListClusters",), ("*",)),
        )
        local = [a for a in principals if IAM_PRINCIPAL_ARN.match(a).group(1) == account]  # type: ignore[union-attr]
        out.append(ToolsPolicyPlan(
            team=team.name,
            statements=statements,
            roles=tuple(sorted({_name(a) for a in local if ":role/" in a})),
            users=tuple(sorted({_name(a) for a in local if ":user/" in a})),
            foreign=tuple(a for a in principals if a not in local),
        ))
    return tuple(out)


def attached_policy(policies: Iterable[Optional[ToolsPolicyPlan]], *, partition: str, region: str, account: str,
                    eks_name: str) -> Optional[ToolsPolicyPlan]:
    """The one policy attached in the capacity ``account``: the teams' ``policies`` (each ``TeamPlan.tools_policy``,
    None where a team has none) merged, for every team's roles and users of this account (None when there are none).

    One resource for all teams, not one per team: a managed policy per team would add a resource to every team's
    stack, and 300 teams over the default 16 team stacks would no longer fit the plan's CloudFormation budget.
    A policy document holds at most 6,144 characters, too few to list every principal's access entry, so the
    attached policy names the access entries of this account's roles and users on the EKS cluster ``eks_name``
    (read-only; ``iam/<team>.json`` keeps the team's exact entries).
    """
    attached = sorted((p for p in policies if p is not None and (p.roles or p.users)), key=lambda p: p.team)
    if not attached:
        return None
    eks = f"arn:{partition}:eks:{region}:{account}"
    kinds = sorted(({"role"} if any(p.roles for p in attached) else set())
                   | ({"user"} if any(p.users for p in attached) else set()))
    entries = tuple(f"{eks}:access-entry/{eks_name}/{kind}/{account}/*" for kind in kinds)
    statements = tuple(ToolsStatement(s.sid, s.actions, entries) if s.sid == ACCESS_ENTRIES else s
                       for s in attached[0].statements)
    return ToolsPolicyPlan(
        team="",
        statements=statements,
        roles=tuple(sorted({r for p in attached for r in p.roles})),
        users=tuple(sorted({u for p in attached for u in p.users})),
        foreign=(),
    )


def foreign_documents(policies: Iterable[Optional[ToolsPolicyPlan]], hyperpod_cluster_arn: str) -> dict[str, str]:
    """``iam/<team>.json`` for each of the teams' ``policies`` (each ``TeamPlan.tools_policy``, None where a team has
    none) with principals in other accounts: the policy document as JSON, with ``hyperpod_cluster_arn``
    (``hyperpod_cluster_pattern``) where it belongs."""
    return {p.team: json.dumps(p.document(hyperpod_cluster_arn), indent=2, sort_keys=False) + "\n"
            for p in sorted((p for p in policies if p is not None), key=lambda p: p.team) if p.foreign}
