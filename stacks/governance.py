"""Governance of the shared cluster: the cluster policy and cluster-wide objects, then per-team and access stacks."""

from __future__ import annotations

from typing import Any, Optional

from aws_cdk import Duration, Stack, Tags, aws_eks_v2 as eks
from constructs import Construct

from hyperpod_gov.charts import Manifests
from hyperpod_gov.constructs.monitoring import AlarmTopics, ClusterDashboardPage, TeamMonitoring
from hyperpod_gov.constructs.task_governance_provider import SdkClusterPolicy, SdkComputeQuota, TaskGovernanceProvider
from hyperpod_gov.plan.monitoring import PLATFORM_TOPIC
from hyperpod_gov.constructs import (
    AppliedManifests,
    ClusterPolicy,
    TeamAccessEntry,
    TeamQuota,
    WorkloadIdentityRole,
)
from hyperpod_gov.plan import Plan, TeamPlan, Shard
from hyperpod_gov.plan import task_governance as tg

from .capacity import SPEC_TAG, CapacityStack, capacity_env

NAMESPACE_WAIT = Duration.minutes(15)


class _TaskGovernance:
    """Cluster policy and quotas as native CloudFormation resources, or through the SDK-backed custom resource
    (one provider per stack), as the plan decided for the region."""

    def __init__(self, stack: Stack, plan: Plan, cluster_arn: str) -> None:
        self.native = plan.task_governance_backend == "native"
        self.cluster_arn = cluster_arn
        self.eks_cluster_name = plan.eks_cluster_name
        self._stack = stack
        self._provider: Optional[Construct] = None

    def provider(self) -> Any:
        if self._provider is None:
            self._provider = TaskGovernanceProvider(self._stack, "TaskGovernanceProvider",
                                                    cluster_arn=self.cluster_arn,
                                                    eks_cluster_name=self.eks_cluster_name)
        return self._provider

    def policy(self, scope: Construct, id: str, properties: dict[str, Any]) -> Construct:
        if self.native:
            return ClusterPolicy(scope, id, properties=properties)
        return SdkClusterPolicy(scope, id, provider=self.provider(), properties=properties)

    def quota(self, scope: Construct, id: str, team: TeamPlan) -> Construct:
        properties = tg.compute_quota_properties(team, self.cluster_arn)
        if self.native:
            return TeamQuota(scope, id, properties=properties)
        return SdkComputeQuota(scope, id, provider=self.provider(), properties=properties)


class GovernanceStack(Stack):
    """Cluster policy (task-governance), shared-pool quota, and the cluster-scoped Kubernetes objects."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, capacity: CapacityStack, manifests: Manifests,
                 **kwargs: Any) -> None:
        super().__init__(scope, id, env=capacity_env(plan),
                         description=f"hyperpod-gov {plan.name}: cluster policy and cluster-wide objects", **kwargs)
        Tags.of(self).add(SPEC_TAG, plan.name)
        self.add_stack_dependency(capacity, "the scheduler (add-on or Kueue chart) must run first")
        self.policy: Optional[Construct] = None
        if plan.task_governance:
            governance = _TaskGovernance(self, plan, capacity.hyperpod.cluster_arn)
            self.policy = governance.policy(self, "ClusterPolicy", tg.cluster_policy_properties(
                plan.policy_name, plan.cluster_name, [(p.name, p.weight) for p in plan.priority_classes],
                plan.fair_sharing, capacity.hyperpod.cluster_arn,
                idle_resource_sharing=plan.idle_resource_sharing))
            if plan.shared_pool is not None:
                quota = governance.quota(self, "SharedPoolQuota", plan.shared_pool)
                quota.node.add_dependency(self.policy)
        self.cluster_objects = None
        if manifests.cluster:
            self.cluster_objects = AppliedManifests(self, "ClusterObjects", cluster=capacity.eks.cluster,
                                                    manifest=manifests.cluster)


class MonitoringStack(Stack):
    """The alarm topics' key, the platform's topic (teams without a contract) and the cluster dashboards."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, **kwargs: Any) -> None:
        super().__init__(scope, id, env=capacity_env(plan),
                         description=f"hyperpod-gov {plan.name}: alarm topics key, platform topic, cluster dashboards",
                         **kwargs)
        Tags.of(self).add(SPEC_TAG, plan.name)
        monitoring = plan.monitoring
        assert monitoring is not None, "build_plan always sets plan.monitoring"
        platform = [t for t in monitoring.topics if t.key == PLATFORM_TOPIC]
        self.topics = AlarmTopics(self, "AlarmTopics", topics=platform)
        name, teams = monitoring.cluster_dashboards[0]  # later pages: DashboardsStack
        self.dashboards = ClusterDashboardPage(Construct(self, "Dashboards"), name, monitoring=monitoring, name=name,
                                               teams=teams)


class DashboardsStack(Stack):
    """One further page of the cluster dashboard (50 teams a page), in a stack of its own."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, page: int, **kwargs: Any) -> None:
        super().__init__(scope, id, env=capacity_env(plan),
                         description=f"hyperpod-gov {plan.name}: cluster dashboard page {page + 1}", **kwargs)
        Tags.of(self).add(SPEC_TAG, plan.name)
        assert plan.monitoring is not None, "build_plan always sets plan.monitoring"
        name, teams = plan.monitoring.cluster_dashboards[page]
        self.dashboard = ClusterDashboardPage(self, name, monitoring=plan.monitoring, name=name, teams=teams)


class TeamsStack(Stack):
    """One shard of per-team resources. Each team lives under a scope named after it."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, shard: Shard, capacity: CapacityStack,
                 governance: GovernanceStack, monitoring: MonitoringStack, manifests: Manifests,
                 **kwargs: Any) -> None:
        super().__init__(scope, id, env=capacity_env(plan),
                         description=f"hyperpod-gov {plan.name}: per-team quotas, identities, manifests and alarms",
                         **kwargs)
        Tags.of(self).add(SPEC_TAG, plan.name)
        self.add_stack_dependency(governance, "quotas and team objects come after the cluster policy")
        # Each owner's topic lives with the teams that alarm on it, encrypted with the shared key.
        watch = plan.monitoring
        assert watch is not None, "build_plan always sets plan.monitoring"
        topics = AlarmTopics(self, "AlarmTopics", topics=watch.owner_topics(shard.members),
                             key=monitoring.topics.key)
        by_key = {**monitoring.topics.topics, **topics.topics}
        cluster = capacity.eks.cluster
        task_governance = _TaskGovernance(self, plan, capacity.hyperpod.cluster_arn) if plan.task_governance else None
        for name in shard.members:
            team = plan.team(name)
            team_scope = Construct(self, team.name)
            waiter = None
            if task_governance is not None:
                quota = task_governance.quota(team_scope, "Quota", team)
                # HyperPod creates the namespace when the quota is created, a little later: wait for it rather
                # than fail the stack when the team's objects are applied first.
                waiter = eks.KubernetesObjectValue(
                    team_scope, "Namespace", cluster=cluster, object_type="namespace", object_name=team.namespace,
                    json_path=".metadata.name", timeout=NAMESPACE_WAIT,
                )
                waiter.node.add_dependency(quota)
            for identity in (i for i in plan.identities if i.team == team.name):
                WorkloadIdentityRole(team_scope, f"Identity-{identity.service_account}",
                                     cluster_name=cluster.cluster_name, identity=identity,
                                     account=plan.account, cluster_arn=plan.cluster.eks_arn)
            applied = AppliedManifests(team_scope, "Manifests", cluster=cluster, manifest=manifests.teams[team.name])
            if waiter is not None:
                applied.node.add_dependency(waiter)
            TeamMonitoring(team_scope, "Monitoring", watch=watch.team(team.name), topics=by_key, region=plan.region)


class AccessStack(Stack):
    """EKS access entries of one shard of principals: one entry per principal, with all its team groups."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, shard: Shard, capacity: CapacityStack,
                 **kwargs: Any) -> None:
        super().__init__(scope, id, env=capacity_env(plan),
                         description=f"hyperpod-gov {plan.name}: access entries of the teams' principals", **kwargs)
        Tags.of(self).add(SPEC_TAG, plan.name)
        self.add_stack_dependency(capacity, "the EKS cluster must exist")
        access = {p.principal_arn: p for p in plan.principals}
        cluster_name = capacity.eks.cluster.cluster_name
        for arn in shard.members:  # principal ARNs, sorted
            TeamAccessEntry(self, access[arn].key, cluster_name=cluster_name, access=access[arn])
