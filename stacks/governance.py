"""Governance of the shared cluster: the cluster policy and cluster-wide objects, then per-team and access stacks."""

from __future__ import annotations

from typing import Any, Optional

from aws_cdk import Duration, aws_eks_v2 as eks
from constructs import Construct

from hyperpod_gov.charts import Manifests
from hyperpod_gov.constructs import AppliedManifests, ClusterPolicy, TeamAccessEntry, TeamQuota, WorkloadIdentityRole
from hyperpod_gov.constructs.monitoring import AlarmTopics, ClusterDashboardPage, TeamMonitoring
from hyperpod_gov.constructs.task_governance import GovernedCluster
from hyperpod_gov.plan import Plan, Shard
from hyperpod_gov.plan.monitoring import PLATFORM_TOPIC

from .base import SpecStack, tag
from .capacity import CapacityStack

NAMESPACE_WAIT = Duration.minutes(15)


def _governed(plan: Plan, capacity: CapacityStack) -> Optional[GovernedCluster]:
    """The cluster task governance applies to, None in kueue mode."""
    if plan.task_governance_backend is None:
        return None
    return GovernedCluster(capacity.hyperpod.cluster_arn, plan.eks_cluster_name, plan.task_governance_backend)


class GovernanceStack(SpecStack):
    """Cluster policy (task-governance), shared-pool quota, and the cluster-scoped Kubernetes objects."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, capacity: CapacityStack, manifests: Manifests,
                 **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, what="cluster policy and cluster-wide objects", **kwargs)
        self.add_stack_dependency(capacity, "the scheduler (add-on or Kueue chart) must run first")
        self.policy: Optional[Construct] = None
        cluster = _governed(plan, capacity)
        if cluster is not None:
            self.policy = ClusterPolicy(self, "ClusterPolicy", policy=plan.cluster_policy, cluster=cluster)
            if plan.shared_pool is not None:
                quota = TeamQuota(self, "SharedPoolQuota", team=plan.shared_pool, cluster=cluster)
                quota.node.add_dependency(self.policy)
        self.cluster_objects = None
        if manifests.cluster:
            self.cluster_objects = AppliedManifests(self, "ClusterObjects", cluster=capacity.eks.cluster,
                                                    manifest=manifests.cluster)


class MonitoringStack(SpecStack):
    """The alarm topics' key, the platform's topic (teams without a contract) and the cluster dashboards."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, what="alarm topics key, platform topic, cluster dashboards", **kwargs)
        monitoring = plan.monitoring
        platform = [t for t in monitoring.topics if t.key == PLATFORM_TOPIC]
        self.topics = AlarmTopics(self, "AlarmTopics", topics=platform)
        name, teams = monitoring.cluster_dashboards[0]  # later pages: DashboardsStack
        self.dashboards = ClusterDashboardPage(Construct(self, "Dashboards"), name, monitoring=monitoring, name=name,
                                               teams=teams)


class DashboardsStack(SpecStack):
    """One further page of the cluster dashboard (50 teams a page), in a stack of its own."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, page: int, **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, what=f"cluster dashboard page {page + 1}", **kwargs)
        name, teams = plan.monitoring.cluster_dashboards[page]
        self.dashboard = ClusterDashboardPage(self, name, monitoring=plan.monitoring, name=name, teams=teams)


class TeamsStack(SpecStack):
    """One shard of per-team resources. Each team lives under a scope named after it."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, shard: Shard, capacity: CapacityStack,
                 governance: GovernanceStack, monitoring: MonitoringStack, manifests: Manifests,
                 **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, what="per-team quotas, identities, manifests and alarms", **kwargs)
        self.add_stack_dependency(governance, "quotas and team objects come after the cluster policy")
        # Each owner's topic lives with the teams that alarm on it, encrypted with the shared key.
        watch = plan.monitoring
        topics = AlarmTopics(self, "AlarmTopics", topics=watch.owner_topics(shard.members),
                             key=monitoring.topics.key)
        by_key = {**monitoring.topics.topics, **topics.topics}
        cluster = capacity.eks.cluster
        governed = _governed(plan, capacity)
        for name in shard.members:
            team = plan.team(name)
            team_scope = Construct(self, team.name)
            tag(team_scope, team.tags)  # the team's cost-allocation tags win over the stack's on its resources
            waiter = None
            if governed is not None:
                quota = TeamQuota(team_scope, "Quota", team=team, cluster=governed)
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


class AccessStack(SpecStack):
    """EKS access entries of one shard of principals: one entry per principal, with all its team groups."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, shard: Shard, capacity: CapacityStack,
                 **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, what="access entries of the teams' principals", **kwargs)
        self.add_stack_dependency(capacity, "the EKS cluster must exist")
        access = {p.principal_arn: p for p in plan.principals}
        cluster_name = capacity.eks.cluster.cluster_name
        for arn in shard.members:  # principal ARNs, sorted
            TeamAccessEntry(self, access[arn].key, cluster_name=cluster_name, access=access[arn])
