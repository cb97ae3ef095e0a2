"""Governance of the shared cluster: the cluster policy and cluster-wide objects, then per-team stacks."""

from __future__ import annotations

from typing import Any, Sequence

from aws_cdk import Stack, Tags
from constructs import Construct

from hyperpod_gov.charts import Manifests
from hyperpod_gov.constructs import (
    AppliedManifests,
    ClusterPolicy,
    TeamAccessEntry,
    TeamQuota,
    WorkloadIdentityRole,
)
from hyperpod_gov.constructs.access import principal_construct_id
from hyperpod_gov.plan import GovernancePlan, IdentityPlan, PrincipalAccess
from hyperpod_gov.spec.models import GovernanceSpec, Team

from .capacity import CapacityStack, capacity_env


class GovernanceStack(Stack):
    """Cluster policy (task-governance), shared-pool quota, and the cluster-scoped Kubernetes objects."""

    def __init__(self, scope: Construct, id: str, *, spec: GovernanceSpec, plan: GovernancePlan,
                 capacity: CapacityStack, manifests: Manifests, **kwargs: Any) -> None:
        super().__init__(scope, id, env=capacity_env(spec),
                         description=f"hyperpod-gov {spec.name}: cluster policy and cluster-wide objects", **kwargs)
        Tags.of(self).add("hyperpod-gov:spec", spec.name)
        self.add_stack_dependency(capacity, "the scheduler (add-on or Kueue chart) must run first")
        self.policy = None
        if spec.scheduler.mode == "task-governance":
            self.policy = ClusterPolicy(self, "ClusterPolicy", spec=spec, plan=plan,
                                        cluster_arn=capacity.hyperpod.cluster_arn)
            pool = next((t for t in plan.teams if t.is_shared_pool), None)
            if pool is not None:
                quota = TeamQuota(self, "SharedPoolQuota", spec=spec, team=pool,
                                  cluster_arn=capacity.hyperpod.cluster_arn)
                quota.node.add_dependency(self.policy)
        self.cluster_objects = None
        if manifests.cluster:
            self.cluster_objects = AppliedManifests(self, "ClusterObjects", cluster=capacity.eks.cluster,
                                                    manifest=manifests.cluster)


class TeamsStack(Stack):
    """One shard of per-team resources. Each team lives under a scope named after it."""

    def __init__(self, scope: Construct, id: str, *, spec: GovernanceSpec, plan: GovernancePlan,
                 capacity: CapacityStack, governance: GovernanceStack, teams: Sequence[Team],
                 identities: Sequence[IdentityPlan], principals: Sequence[PrincipalAccess], manifests: Manifests,
                 **kwargs: Any) -> None:
        super().__init__(scope, id, env=capacity_env(spec),
                         description=f"hyperpod-gov {spec.name}: per-team quotas, access and manifests", **kwargs)
        Tags.of(self).add("hyperpod-gov:spec", spec.name)
        self.add_stack_dependency(governance, "quotas and team objects come after the cluster policy")
        cluster = capacity.eks.cluster
        task_governance = spec.scheduler.mode == "task-governance"
        for team in sorted(teams, key=lambda t: t.name):
            team_scope = Construct(self, team.name)
            tp = plan.team(team.name)
            quota = None
            if task_governance:
                quota = TeamQuota(team_scope, "Quota", spec=spec, team=tp,
                                  cluster_arn=capacity.hyperpod.cluster_arn, contract=team.contract)
            for identity in (i for i in identities if i.team == team.name):
                WorkloadIdentityRole(team_scope, f"Identity-{identity.service_account}",
                                     cluster_name=cluster.cluster_name, identity=identity)
            applied = AppliedManifests(team_scope, "Manifests", cluster=cluster, manifest=manifests.teams[team.name])
            if quota is not None:
                # HyperPod creates the namespace when the quota is created.
                applied.node.add_dependency(quota)
        access_scope = Construct(self, "Access")
        for access in principals:
            TeamAccessEntry(access_scope, principal_construct_id(access.principal_arn),
                            cluster_name=cluster.cluster_name, access=access)
