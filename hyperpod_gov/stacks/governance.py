"""Governance of the shared cluster: the cluster policy and cluster-wide objects, then per-team and access stacks."""

from __future__ import annotations

from typing import Any, Optional

from aws_cdk import ArnFormat, Stack, aws_eks_v2 as eks, aws_kms as kms, aws_sns as sns
from constructs import Construct

from hyperpod_gov.charts import Manifests
from hyperpod_gov.constructs import (AppliedManifests, ClusterPolicy, Observability, SchedulerInstall,
                                     TeamQuota, WorkloadIdentityRole)
from hyperpod_gov.constructs.manifests import plain_manifest, plain_object_value
from hyperpod_gov.constructs.access import team_access_entries
from hyperpod_gov.constructs.identity import plain_identity
from hyperpod_gov.constructs.evidence import evidence_bucket
from hyperpod_gov.constructs.existing_cluster import ExistingClusterKubectl, imported_cluster
from hyperpod_gov.constructs.monitoring import AlarmTopics, ClusterDashboardPage, plain_topics, team_monitoring
from hyperpod_gov.constructs.plain import Fragment, Runs, ref
from hyperpod_gov.constructs.prometheus import ManagedPrometheus
from hyperpod_gov.constructs.operators import Operators
from hyperpod_gov.constructs.shared_storage import fill_file_system
from hyperpod_gov.constructs.task_governance import QUOTA_UNKNOWN_TO_CDK, GovernedCluster, plain_quota
from hyperpod_gov.constructs.bundled_provider import HandlerPlacement
from hyperpod_gov.constructs.team_storage import TeamStorage
from hyperpod_gov.constructs.tools_policy import ToolsPolicy
from hyperpod_gov.plan import Plan, Shard, TeamPlan, names
from hyperpod_gov.plan.evidence import evidence_of
from hyperpod_gov.plan.invariants import provider_in_vpc
from hyperpod_gov.plan.monitoring import PLATFORM_TOPIC
from hyperpod_gov.plan.tools_policy import attached_policy

from .base import SpecStack, tag
from .capacity import CapacityStack, cluster_outputs

NAMESPACE_WAIT_SECONDS = 15 * 60  # KubernetesObjectValue's timeout


def _governed(plan: Plan, capacity: Optional[CapacityStack]) -> Optional[GovernedCluster]:
    """The cluster task governance applies to, None in kueue mode. Governance-only mode: the existing cluster's
    ARN as the spec gives it; otherwise the capacity stack's HyperPod cluster."""
    if plan.task_governance_backend is None:
        return None
    arn = capacity.hyperpod.cluster_arn if capacity is not None else plan.hyperpod_cluster_arn
    if arn is None:  # an explicit check: synth runs under python -O, which strips asserts
        raise ValueError("a plan without a capacity stack governs an existing cluster: it needs its ARN")
    return GovernedCluster(arn, plan.eks_cluster_name, plan.task_governance_backend,
                           _handler_placement(plan, capacity))


def _handler_placement(plan: Plan, capacity: Optional[CapacityStack]) -> Optional[HandlerPlacement]:
    """The SDK-backed provider's functions in the cluster's private subnets, where ``provider_in_vpc`` (the VPC
    has the SageMaker API endpoint this app creates); else None (docs/security.md)."""
    if capacity is None or not provider_in_vpc(plan):
        return None
    network = capacity.network
    return HandlerPlacement(network.vpc, network.private_subnets, plan.network.cidr)


def _hyperpod_arn(plan: Plan, capacity: Optional[CapacityStack]) -> str:
    """The HyperPod cluster's ARN: the capacity stack's (a deploy-time value), or the existing cluster's."""
    arn = capacity.hyperpod.cluster_arn if capacity is not None else plan.hyperpod_cluster_arn
    if arn is None:  # an explicit check: synth runs under python -O, which strips asserts
        raise ValueError("a plan without a capacity stack governs an existing cluster: it needs its ARN")
    return arn


def team_outputs(fragment: Fragment, below: list[str], plan: Plan, team: TeamPlan) -> None:
    """What a team member needs to submit work, as outputs of the team's stack (at ``below/<id>``: ``Outputs``
    under the team's scope, where a ``CfnOutput`` there puts them)."""
    classes = team.kueue_priority_classes
    for id, value, what in (
        ("Namespace", team.namespace, f"Namespace of team {team.name}"),
        ("LocalQueue", team.local_queue, f"LocalQueue of team {team.name} (label kueue.x-k8s.io/queue-name)"),
        ("PriorityClasses", ",".join(classes) or "none",
         f"Values team {team.name} may give the label kueue.x-k8s.io/priority-class"),
    ):
        fragment.add_output([*below, id], value, what)


def alarm_topic_names(plan: Plan, stack: str) -> Optional[dict[str, str]]:
    """Topic key -> name of the alarm topics of the stack ``stack``, when a Prometheus workspace of the spec's alert
    manager publishes to them (it reaches them by name, ``names.alarm_topic``); None otherwise (the topics keep
    generated names)."""
    prometheus = plan.prometheus
    if prometheus is None or not prometheus.alerts_in_prometheus:
        return None
    return {t.key: names.alarm_topic(plan.name, t.key, stack) for t in plan.monitoring.topics}


def _cluster(scope: Construct, plan: Plan, capacity: Optional[CapacityStack]) -> eks.ICluster:
    """The EKS cluster to apply Kubernetes objects on: the capacity stack's, or the existing one imported with
    the governance stack's kubectl handler (reached by its function's ARN, a plain string)."""
    if capacity is not None:
        return capacity.eks.cluster
    return imported_cluster(scope, "ExistingCluster", cluster=plan.cluster, service_token=plan.kubectl_service_token)


class GovernanceStack(SpecStack):
    """Cluster policy (task-governance), shared-pool quota, and the cluster-scoped Kubernetes objects."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, capacity: Optional[CapacityStack],
                 manifests: Manifests, **kwargs: Any) -> None:
        what = "cluster policy and cluster-wide objects"
        if capacity is None:
            what += f", kubectl handler of the existing cluster {plan.eks_cluster_name}"
        super().__init__(scope, id, plan=plan, what=what, **kwargs)
        self.kubectl: Optional[ExistingClusterKubectl] = None
        self.scheduler: Optional[SchedulerInstall] = None
        self.observability: Optional[Observability] = None
        self.operators: Optional[Operators] = None
        if capacity is not None:
            self.add_stack_dependency(capacity, "the scheduler (add-on or Kueue chart) must run first")
            eks_cluster = capacity.eks.cluster
        else:
            self.kubectl = ExistingClusterKubectl(self, "Kubectl", cluster=plan.cluster,
                                                  function_name=plan.kubectl_provider_function)
            eks_cluster = self.kubectl.cluster
            self._install_on_existing(plan, eks_cluster)
            # Governance-only mode has no capacity stack: the cluster's outputs are here.
            cluster_outputs(self, plan, hyperpod_cluster_arn=_hyperpod_arn(plan, None))
        self.policy: Optional[Construct] = None
        cluster = _governed(plan, capacity)
        if cluster is not None:
            self.policy = ClusterPolicy(self, "ClusterPolicy", policy=plan.cluster_policy, cluster=cluster)
            if self.scheduler is not None:
                self.policy.node.add_dependency(self.scheduler)
            if plan.shared_pool is not None:
                quota = TeamQuota(self, "SharedPoolQuota", team=plan.shared_pool, cluster=cluster)
                quota.node.add_dependency(self.policy)
        # Reaching the cluster: the teams' tools policy, one for every team's roles of this account.
        tools = attached_policy((t.tools_policy for t in plan.teams), partition=plan.partition, region=plan.region,
                                account=plan.account, eks_name=plan.eks_cluster_name)
        self.tools_policy = None if tools is None else ToolsPolicy(
            self, "ToolsPolicy", policy=tools, hyperpod_cluster_arn=_hyperpod_arn(plan, capacity))
        self.cluster_objects = None
        if manifests.cluster:
            self.cluster_objects = AppliedManifests(self, "ClusterObjects", cluster=eks_cluster,
                                                    manifest=manifests.cluster)
            if self.kubectl is not None:
                self.cluster_objects.node.add_dependency(self.kubectl.access_entry)
            if self.scheduler is not None:  # the Kueue objects need Kueue's CRDs
                self.cluster_objects.node.add_dependency(self.scheduler)

    def _install_on_existing(self, plan: Plan, cluster: eks.ICluster) -> None:
        """What ``cluster.existing.installs`` asks for; the rest runs on the cluster already."""
        e = plan.cluster.existing
        if e is None or self.kubectl is None:
            raise ValueError("installing on an existing cluster needs cluster.existing and its kubectl handler")
        versions = plan.cluster.addon_versions
        if e.installs_scheduler:
            self.scheduler = SchedulerInstall(self, "Scheduler", task_governance=plan.task_governance,
                                              versions=versions, kueue_config=plan.kueue_config, cluster=cluster)
            self.scheduler.node.add_dependency(self.kubectl.access_entry)
        if e.installs_observability:
            self.observability = Observability(self, "Observability", version=versions.cloudwatch_observability,
                                               cluster=cluster, account=plan.account,
                                               cluster_arn=plan.cluster.eks_arn)
        # cluster.operators, when the spec lists them: add-ons need only the cluster's name, so the governance
        # stack installs them on the existing cluster as it does observability.
        if plan.operator_addons or plan.operator_charts:
            if plan.hyperpod_cluster_arn is None:
                raise ValueError("installing operators on an existing cluster needs its HyperPod cluster ARN")
            self.operators = Operators(self, "Operators", addons=plan.operator_addons, cluster=cluster,
                                       account=plan.account, eks_arn=plan.cluster.eks_arn,
                                       hyperpod_arn=plan.hyperpod_cluster_arn, charts=plan.operator_charts)
            if plan.operator_charts:  # Helm releases go through the kubectl handler, as the Kueue chart does
                self.operators.node.add_dependency(self.kubectl.access_entry)
            if self.scheduler is not None:
                self.operators.node.add_dependency(self.scheduler)


class MonitoringStack(SpecStack):
    """The alarm topics' key, the platform's topic (teams without a contract) and the cluster dashboards."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, capacity: Optional[CapacityStack] = None,
                 **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, what="alarm topics key, platform topic, cluster dashboards", **kwargs)
        monitoring = plan.monitoring
        platform = [t for t in monitoring.topics if t.key == PLATFORM_TOPIC]
        self.topics = AlarmTopics(self, "AlarmTopics", topics=platform, topic_names=alarm_topic_names(plan, id))
        if plan.governance_only:
            # Every stack deploys on its own: the team stacks name the key and the platform topic instead of
            # importing them from this stack's outputs.
            self.topics.key.add_alias(names.alarm_key_alias(plan.name))  # type: ignore[attr-defined]
            for topic in self.topics.topics.values():
                topic.add_property_override("TopicName", names.platform_topic(plan.name))
        self.evidence = evidence_bucket(self, evidence_of(plan))
        name, watches = monitoring.dashboard_pages[0]  # later pages: DashboardsStack
        self.dashboards = ClusterDashboardPage(Construct(self, "Dashboards"), name, monitoring=monitoring, name=name,
                                               watches=watches)
        # monitoring.prometheus: the workspace, the add-on writing to it, the teams' rules, Grafana.
        self.prometheus: Optional[ManagedPrometheus] = None
        prometheus = plan.prometheus
        if prometheus is not None:
            if capacity is not None:
                self.add_stack_dependency(capacity, "the observability add-on runs on the cluster's nodes")
            cluster = eks.Cluster.from_cluster_attributes(self, "Cluster", cluster_name=plan.eks_cluster_name)
            self.prometheus = ManagedPrometheus(self, "Prometheus", plan=prometheus, cluster=cluster,
                                                account=plan.account, cluster_arn=plan.cluster.eks_arn,
                                                region=plan.region)


class DashboardsStack(SpecStack):
    """One further page of the cluster dashboard (50 teams a page), in a stack of its own."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, page: int, **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, what=f"cluster dashboard page {page + 1}", **kwargs)
        name, watches = plan.monitoring.dashboard_pages[page]
        self.dashboard = ClusterDashboardPage(self, name, monitoring=plan.monitoring, name=name, watches=watches)


class TeamsStack(SpecStack):
    """One shard of per-team resources, each at the construct path (so the logical id) of a scope named after its
    team; the plain ones are included (``plain.Runs``), so the scope exists only for a team with tags or a
    construct of its own."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, shard: Shard, capacity: Optional[CapacityStack],
                 governance: GovernanceStack, monitoring: MonitoringStack, manifests: Manifests,
                 **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, what="per-team quotas, identities, manifests and alarms", **kwargs)
        self.add_stack_dependency(governance, "quotas and team objects come after the cluster policy")
        if capacity is not None:  # as aws-cdk-lib's KubernetesManifest adds it (the cluster's kubectl barrier)
            self.add_stack_dependency(capacity, "team objects are applied once the cluster's kubectl is ready")
        # Each owner's topic lives with the teams that alarm on it, encrypted with the shared key.
        watch = plan.monitoring
        shared_key: kms.IKey = monitoring.topics.key
        shared_topics: dict[str, sns.ITopic] = {}  # governance-only: imported by ARN (else: topic_arns below)
        if plan.governance_only:  # by name, so that this stack imports no output of the monitoring stack
            shared_key = kms.Alias.from_alias_name(self, "AlarmTopicsKey", names.alarm_key_alias(plan.name))
            shared_topics = {key: sns.Topic.from_topic_arn(
                self, f"Topic-{key}", Stack.of(self).format_arn(service="sns", resource=names.platform_topic(plan.name),
                                                                arn_format=ArnFormat.NO_RESOURCE_NAME))
                for key in monitoring.topics.topics}
        teams = [plan.team(name) for name in shard.members]
        # Plain data (plain.Runs): the stack's resources while no construct comes between them are one CfnInclude,
        # each resource at the logical id of the construct named in the comment beside it. A team with tags of its
        # own has a scope of its own, tagged, and runs of its own below it.
        runs = Runs(self, stack=self, components=[])
        # AlarmTopics(self, "AlarmTopics"): each owner's topic, with the teams that alarm on it
        topic_ids = plain_topics(runs.fragment, ["AlarmTopics"], topics=watch.owner_topics(t.monitoring for t in teams),
                                 key_arn=shared_key.key_arn, topic_names=alarm_topic_names(plan, shard.name))
        # ARNs read from jsii once per stack, not once per team (imported topics: read by the first team's alarms)
        topic_arns = {**({} if plan.governance_only else monitoring.topics.topic_arns),
                      **{key: ref(logical) for key, logical in topic_ids.items()}}
        cluster = _cluster(self, plan, capacity)
        cluster_name = cluster.cluster_name
        kubectl_token = cluster.kubectl_provider.service_token  # type: ignore[union-attr]
        governed = _governed(plan, capacity)
        # the stack's task governance provider (None with the native types), before the teams' quotas
        provider = governed.provider(self) if governed is not None else None
        provider_token = provider.service_token if provider is not None else None
        files = capacity.shared_storage.values if capacity is not None and capacity.shared_storage else None
        for team in teams:
            team_runs, at = runs, [team.name]  # the team's runs, and its path below their scope
            team_scope: Optional[Construct] = None
            if team.tags:  # the team's cost-allocation tags win over the stack's on its resources
                runs.flush()
                team_scope = Construct(self, team.name)
                tag(team_scope, team.tags)
                team_runs, at = Runs(team_scope, stack=self, components=[team.name]), []

            def constructs() -> Construct:
                """The team's scope for a construct that stays one, after the plain resources so far."""
                nonlocal team_scope
                team_runs.flush()
                if team_scope is None:
                    team_scope = Construct(self, team.name)
                return team_scope

            waiter: Optional[str] = None
            if governed is not None:
                # TeamQuota(team_scope, "Quota")
                quota, native = plain_quota(team_runs.fragment, [*at, "Quota"], team=team, cluster=governed,
                                            service_token=provider_token)
                if native:
                    team_runs.acknowledge(quota, QUOTA_UNKNOWN_TO_CDK)
                # HyperPod creates the namespace when the quota is created, a little later: wait for it rather
                # than fail the stack when the team's objects are applied first (KubernetesObjectValue
                # (team_scope, "Namespace")).
                waiter = plain_object_value(
                    team_runs.fragment, [*at, "Namespace"], service_token=kubectl_token, cluster_name=cluster_name,
                    object_type="namespace", object_name=team.namespace, json_path=".metadata.name",
                    timeout_seconds=NAMESPACE_WAIT_SECONDS, depends_on=[quota])
            # Per-team data: the team bucket, whose key the team's source roles are granted.
            storage = team.storage
            store = TeamStorage(constructs(), "Storage", storage=storage) if storage is not None else None
            # Identities without grants of their own are plain data at the logical ids WorkloadIdentityRole
            # gives them (the others are WorkloadIdentityRoles, in plan order).
            for identity in team.identities:
                below = f"Identity-{identity.service_account}"
                if plain_identity(team_runs.fragment, [*at, below], cluster_name=cluster_name, identity=identity,
                                  account=plan.account, cluster_arn=plan.cluster.eks_arn):
                    continue
                WorkloadIdentityRole(constructs(), below, cluster_name=cluster_name, identity=identity,
                                     account=plan.account, cluster_arn=plan.cluster.eks_arn,
                                     team_key=store.key if store is not None else None)
            manifest = fill_file_system(manifests.teams[team.name], files)
            # AppliedManifests(team_scope, "Manifests"), after the namespace
            applied_id = plain_manifest(team_runs.fragment, [*at, "Manifests"], service_token=kubectl_token,
                                        cluster_name=cluster_name, manifest=manifest)
            if applied_id is None:
                applied = AppliedManifests(constructs(), "Manifests", cluster=cluster, manifest=manifest)
                if waiter is not None:
                    applied.node.add_dependency(team_runs.resource(waiter))
            elif waiter is not None:
                team_runs.depend(applied_id, waiter)
            # TeamMonitoring(team_scope, "Monitoring"): the team's alarms and dashboard; and CfnOutputs under
            # team_scope/Outputs: what reaches the cluster (namespace, queue, priority labels).
            team_monitoring(team_runs.fragment, [*at, "Monitoring"], watch=team.monitoring,
                            topics=shared_topics, region=plan.region, topic_arns=topic_arns)
            team_outputs(team_runs.fragment, [*at, "Outputs"], plan, team)
            if team_runs is not runs:
                team_runs.flush()
        runs.flush()


class AccessStack(SpecStack):
    """EKS access entries of one shard of principals: one entry per principal, with all its team groups."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, shard: Shard, capacity: Optional[CapacityStack],
                 **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, what="access entries of the teams' principals", **kwargs)
        if capacity is not None:
            self.add_stack_dependency(capacity, "the EKS cluster must exist")
            cluster_name = capacity.eks.cluster.cluster_name
        else:  # the existing cluster, by the name the spec gives
            cluster_name = plan.eks_cluster_name
        access = {p.principal_arn: p for p in plan.principals}
        # principal ARNs, sorted; one CfnInclude, each entry at the logical id of TeamAccessEntry(self, key)
        team_access_entries(self, "AccessEntries", cluster_name=cluster_name,
                            accesses=[access[arn] for arn in shard.members])
