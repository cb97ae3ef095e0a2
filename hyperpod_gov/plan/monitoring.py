"""What to watch per team, as plain data: the metrics, the alarms with their owners and responses, the dashboards.

Pure (no CDK, no boto3). The constructs in ``constructs/monitoring.py`` and the ``report`` command read the same
metric definitions from here, so what a dashboard shows and what the report counts cannot drift apart.

Metric facts, checked against the CloudWatch agent's source (aws/amazon-cloudwatch-agent,
translator/translate/otel/exporter/awsemf/kueue.go and kubernetes.go; the scraper in
amazon-contributing/opentelemetry-collector-contrib, receiver/awscontainerinsightskueuereceiver):

- Kueue: namespace ``ContainerInsights/Prometheus``; exactly five metrics are scraped; Kueue's labels become the
  dimensions ClusterQueue, Status, Reason, Resource, Flavor, and ClusterName is the agent's (EKS) cluster name.
  Dimension sets are fixed by the agent's metric declarations (``KUEUE_DIMENSIONS``).
- Accelerator utilisation per namespace: namespace ``ContainerInsights`` (not ``/Prometheus``),
  ``pod_gpu_utilization`` and ``pod_neuroncore_utilization`` with ClusterName and Namespace.
- Borrowing and lending limits are not exported: they come from the plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Protocol

from .. import catalog
from ..spec.monitoring import AlarmOverrides, AlarmThresholds, Monitoring
from .quotas import FlavorQuota, TeamPlan



class Governed(Protocol):
    """What the monitoring plan reads of a plan (``plan.Plan`` has it; ``derive_plan`` passes its parts before the
    plan exists, so the plan holds its monitoring plan as a field, derived in the same pass)."""

    name: str
    region: str
    alerting: Monitoring
    teams: tuple[TeamPlan, ...]
    flavors: tuple[Any, ...]
    covered_resources: tuple[str, ...]

    @property
    def eks_cluster_name(self) -> str: ...

KUEUE_NAMESPACE = "ContainerInsights/Prometheus"
CONTAINER_INSIGHTS_NAMESPACE = "ContainerInsights"

PENDING = "kueue_pending_workloads"
EVICTED = "kueue_evicted_workloads_total"
ADMITTED = "kueue_admitted_active_workloads"
USAGE = "kueue_cluster_queue_resource_usage"
NOMINAL = "kueue_cluster_queue_nominal_quota"

# The dimension sets the agent publishes (awsemf metric declarations), ClusterName first.
KUEUE_DIMENSIONS: Mapping[str, tuple[tuple[str, ...], ...]] = {
    PENDING: (("ClusterName",), ("ClusterName", "ClusterQueue"), ("ClusterName", "ClusterQueue", "Status"),
              ("ClusterName", "Status")),
    EVICTED: (("ClusterName",), ("ClusterName", "ClusterQueue"), ("ClusterName", "ClusterQueue", "Reason"),
              ("ClusterName", "Reason")),
    ADMITTED: (("ClusterName",), ("ClusterName", "ClusterQueue")),
    USAGE: (("ClusterName",), ("ClusterName", "ClusterQueue"), ("ClusterName", "ClusterQueue", "Resource"),
            ("ClusterName", "ClusterQueue", "Flavor", "Resource"), ("ClusterName", "ClusterQueue", "Flavor")),
    NOMINAL: (("ClusterName",), ("ClusterName", "ClusterQueue"), ("ClusterName", "ClusterQueue", "Resource"),
              ("ClusterName", "ClusterQueue", "Flavor", "Resource"), ("ClusterName", "ClusterQueue", "Flavor")),
}
PENDING_STATUSES = ("active", "inadmissible")  # Kueue's status label of kueue_pending_workloads
PREEMPTED_REASON = "Preempted"  # Kueue's eviction reason when another workload preempts this one

UTILISATION_METRIC = {
    catalog.NVIDIA_GPU: "pod_gpu_utilization",
    catalog.NEURON_DEVICE: "pod_neuroncore_utilization",
}
UNITS = {catalog.NVIDIA_GPU: "GPUs", catalog.NEURON_DEVICE: "Neuron devices", "cpu": "vCPUs"}

MAX_ALARM_METRICS = 10  # CloudWatch: at most 10 metrics in one alarm's metric math
TEAMS_PER_CLUSTER_DASHBOARD = 50  # 5 widgets per team row; CloudWatch allows 500 widgets per dashboard
FIVE_MINUTES, HOUR = 300, 3600

ALARM_KINDS = ("quota-not-honoured", "idle-capacity", "preempted", "low-utilisation")


@dataclass(frozen=True)
class Metric:
    """One CloudWatch metric stream and the statistic read from it."""

    namespace: str
    name: str
    dimensions: tuple[tuple[str, str], ...]  # (name, value), in the agent's order
    statistic: str

    def dimension_map(self) -> dict[str, str]:
        return dict(self.dimensions)

    def query(self, period: int) -> dict[str, Any]:
        """The ``MetricStat`` of a GetMetricData query (boto3 shape)."""
        return {
            "Metric": {"Namespace": self.namespace, "MetricName": self.name,
                       "Dimensions": [{"Name": k, "Value": v} for k, v in self.dimensions]},
            "Period": period,
            "Stat": self.statistic,
        }


@dataclass(frozen=True)
class FlavorWatch:
    """A team's quota on one instance type, in the one resource that measures it (accelerators, else vCPU)."""

    instance_type: str
    flavor: str  # Kueue ResourceFlavor name (the Flavor dimension)
    resource: str  # Kueue resource name (the Resource dimension)
    nominal: int
    borrowing_limit: int  # on top of nominal; 0 when the team cannot borrow
    lending_limit: Optional[int]  # None: may lend all of nominal
    usage: Metric  # Average of kueue_cluster_queue_resource_usage

    @property
    def unit(self) -> str:
        return UNITS.get(self.resource, self.resource)


@dataclass(frozen=True)
class AlarmPlan:
    """One alarm: a metric-math signal compared with a threshold, an owner and the response, a topic."""

    team: str
    kind: str  # one of ALARM_KINDS
    name: str
    description: str  # names the owner and the response
    owner: Optional[str]  # the contract's email, None: the platform
    topic: str  # TopicPlan.key
    metrics: tuple[tuple[str, Metric], ...]  # (id in the expression, metric)
    expression: Optional[str]  # None: alarm on the only metric
    threshold: float
    comparison: str  # CloudWatch ComparisonOperator
    period: int
    evaluation_periods: int
    datapoints_to_alarm: int
    treat_missing_data: str = "notBreaching"


@dataclass(frozen=True)
class TopicPlan:
    """An SNS topic per owner (or the platform's), subscribed by that owner's email."""

    key: str  # construct id: the email, or "platform"
    email: Optional[str]
    display_name: str


@dataclass(frozen=True)
class TeamWatch:
    """Everything watched for one team."""

    team: str
    namespace: str
    cluster_queue: str
    is_shared_pool: bool
    strategy: str
    borrow_limit_percent: int
    fair_share_weight: int
    flavors: tuple[FlavorWatch, ...]  # owned flavors, sorted by instance type
    pending: Metric  # Maximum over statuses: > 0 when anything waits
    admitted: Metric
    evictions_search: str  # SEARCH expression over every eviction Reason of the queue (period in seconds: HOUR)
    preemptions: Metric
    utilisation: Optional[Metric]  # namespace accelerator utilisation (None: owns no accelerators)
    thresholds: AlarmThresholds
    operations_owner: Optional[str]
    cost_owner: Optional[str]
    alarms: tuple[AlarmPlan, ...]
    dashboard: Optional[str]

    @property
    def main_flavors(self) -> tuple[FlavorWatch, ...]:
        """The flavors the team's usage percentage is counted in: accelerators if it owns any, else vCPU."""
        acc = tuple(f for f in self.flavors if f.resource != "cpu")
        return acc or self.flavors

    @property
    def main_nominal(self) -> int:
        return sum(f.nominal for f in self.main_flavors)


@dataclass(frozen=True)
class MonitoringCounts:
    """What the monitoring costs, in billed units (for `explain`)."""

    dashboards: int
    alarms: int
    alarm_metrics: int  # CloudWatch bills alarms per metric they read
    kueue_metric_streams: int  # at least: plus one per eviction reason seen and per pod utilisation stream
    topics: int

    def lines(self) -> list[str]:
        return [
            f"dashboards: {self.dashboards}",
            f"alarms: {self.alarms} (reading {self.alarm_metrics} metrics)",
            f"SNS topics: {self.topics} (KMS-encrypted, one key)",
            f"custom metrics: at least {self.kueue_metric_streams} Kueue metric streams in "
            f"{KUEUE_NAMESPACE} (plus one per eviction reason that occurs)",
        ]


@dataclass(frozen=True)
class MonitoringPlan:
    spec_name: str
    cluster_name: str  # the ClusterName dimension: the EKS cluster's name
    region: str
    teams: tuple[TeamWatch, ...]  # sorted by name; the shared pool included
    topics: tuple[TopicPlan, ...]  # sorted by key
    cluster_dashboards: tuple[tuple[str, tuple[str, ...]], ...]  # (dashboard name, team names on it)
    kueue_metric_streams: int = field(default=0)

    def owner_topics(self, teams: Iterable[str]) -> tuple[TopicPlan, ...]:
        """The owners' topics these teams' alarms publish to, sorted (the platform's topic is not among them: it
        lives in the monitoring stack)."""
        keys = {a.topic for t in teams for a in self.team(t).alarms} - {PLATFORM_TOPIC}
        return tuple(t for t in self.topics if t.key in keys)

    def team(self, name: str) -> TeamWatch:
        for t in self.teams:
            if t.team == name:
                return t
        raise KeyError(name)

    @property
    def alarms(self) -> tuple[AlarmPlan, ...]:
        return tuple(a for t in self.teams for a in t.alarms)

    @property
    def counts(self) -> MonitoringCounts:
        dashboards = len(self.cluster_dashboards) + sum(1 for t in self.teams if t.dashboard)
        return MonitoringCounts(
            dashboards=dashboards,
            alarms=len(self.alarms),
            alarm_metrics=sum(len(a.metrics) for a in self.alarms),
            kueue_metric_streams=self.kueue_metric_streams,
            topics=len(self.topics),
        )


# --- adapter -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MonitoringInputs:
    """What the monitoring plan needs beyond the governance plan's teams."""

    spec_name: str
    cluster_name: str  # EKS cluster name
    region: str
    monitoring: Monitoring
    contracts: Mapping[str, Any]  # team -> Contract (or None)
    overrides: Mapping[str, Optional[AlarmOverrides]]  # team -> its alarm overrides


def monitoring_inputs(plan: Governed) -> MonitoringInputs:
    """Names, region, contracts and thresholds, all from the plan (``plan.alerting``, each team's ``alarms``)."""
    return MonitoringInputs(
        spec_name=plan.name,
        cluster_name=plan.eks_cluster_name,
        region=plan.region,
        monitoring=plan.alerting,
        contracts={t.name: t.contract for t in plan.teams},
        overrides={t.name: t.alarms for t in plan.teams},
    )


# --- names ---------------------------------------------------------------------------------------------------------


def alarm_name(spec_name: str, team: str, kind: str) -> str:
    """``<spec>/<team>/<kind>``: '/' is in no DNS label, so no two (team, kind) pairs share a name."""
    return f"{spec_name}/{team}/{kind}"


def team_dashboard_name(spec_name: str, team: str) -> str:
    return f"{spec_name}-team-{team}"


def cluster_dashboard_pages(teams: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The teams (in plan order) on each cluster dashboard page: 50 a page, at least one page."""
    return tuple(teams[i:i + TEAMS_PER_CLUSTER_DASHBOARD]
                 for i in range(0, len(teams), TEAMS_PER_CLUSTER_DASHBOARD)) or ((),)


def cluster_dashboard_names(spec_name: str, pages: int) -> tuple[str, ...]:
    base = f"{spec_name}-governance"
    return (base,) if pages <= 1 else tuple(f"{base}-{i + 1}" for i in range(pages))


PLATFORM_TOPIC = "platform"


# --- building ------------------------------------------------------------------------------------------------------


def _kueue(name: str, stat: str, cluster: str, **dims: str) -> Metric:
    order = next(d for d in KUEUE_DIMENSIONS[name] if set(d) == {"ClusterName", *dims})
    values = {"ClusterName": cluster, **dims}
    return Metric(KUEUE_NAMESPACE, name, tuple((d, values[d]) for d in order), stat)


def _flavor_watch(cluster: str, queue: str, f: FlavorQuota, flavor_name: str) -> FlavorWatch:
    resource = f.governed_resource  # a partitioned type is watched in its MIG partitions
    main = f.governed

    return FlavorWatch(
        instance_type=f.instance_type,
        flavor=flavor_name,
        resource=resource,
        nominal=main(f.nominal),
        borrowing_limit=main(f.borrowing_limit) if f.borrowing_limit is not None else 0,
        lending_limit=main(f.lending_limit) if f.lending_limit is not None else None,
        usage=_kueue(USAGE, "Average", cluster, ClusterQueue=queue, Flavor=flavor_name, Resource=resource),
    )


def evictions_search(cluster: str, queue: str, period: int = HOUR) -> str:
    """Every eviction reason of one queue, summed per period (a dashboard or GetMetricData expression)."""
    return (f"SEARCH('{{{KUEUE_NAMESPACE},ClusterName,ClusterQueue,Reason}} MetricName=\"{EVICTED}\" "
            f"ClusterName=\"{cluster}\" ClusterQueue=\"{queue}\"', 'Sum', {period})")


def _owner_line(email: Optional[str], role: str) -> str:
    return f"Owner: {email} ({role})." if email else "Owner: the platform team (the team has no contract)."


def _amounts(flavors: tuple[FlavorWatch, ...]) -> str:
    return ", ".join(f"{f.nominal} {f.unit} on {f.instance_type}" for f in flavors)


def _alarms(spec_name: str, w: TeamWatch, topic_of: Mapping[Optional[str], str]) -> tuple[AlarmPlan, ...]:
    if not w.flavors or w.is_shared_pool:
        return ()
    th = w.thresholds
    ops, cost = w.operations_owner, w.cost_owner
    ops_topic, cost_topic = topic_of[ops], topic_of[cost]
    out = []

    # Guaranteed quota not honoured: work pending while below nominal on EVERY owned type. Kueue's pending count
    # has no flavor (the CloudWatch agent scrapes kueue_pending_workloads per queue and status), so "below on some
    # type" paged normal queueing: a team using all of type A with A-work waiting, its type B idle. Below on every
    # type means that whichever type the waiting work asks for, the team runs below its quota of it. The price: a
    # team below quota on A but full on B is not paged for A (docs/observability.md says so).
    watched = sorted(w.flavors, key=lambda f: (-f.nominal, f.instance_type))[: MAX_ALARM_METRICS - 1]
    metrics = [("pending", w.pending)] + [(f"u{i}", f.usage) for i, f in enumerate(watched)]
    below = " AND ".join(f"u{i} < {f.nominal}" for i, f in enumerate(watched))
    n = th.quota_not_honoured_minutes // 5
    out.append(AlarmPlan(
        team=w.team, kind="quota-not-honoured", name=alarm_name(spec_name, w.team, "quota-not-honoured"),
        description=(
            f"Guaranteed quota not honoured: team {w.team} has had workloads pending for "
            f"{th.quota_not_honoured_minutes} min while running below its nominal quota "
            f"({_amounts(tuple(watched))}). {_owner_line(ops, 'operations owner')} "
            f"Response: look at why the workloads wait (kubectl describe clusterqueue {w.cluster_queue}; "
            "workloads that ask for more than quota plus borrow limit, or for another instance type, never fit); if "
            "lenders do not reclaim lent capacity, escalate to the platform team."),
        owner=ops, topic=ops_topic, metrics=tuple(metrics),
        expression=f"IF(pending > 0 AND ({below}), 1, 0)", threshold=1, comparison="GreaterThanOrEqualToThreshold",
        period=FIVE_MINUTES, evaluation_periods=n, datapoints_to_alarm=n,
    ))

    # Reserved capacity idle for a day.
    main = sorted(w.main_flavors, key=lambda f: (-f.nominal, f.instance_type))[:MAX_ALARM_METRICS]
    total = sum(f.nominal for f in main)
    response = (
        "set sharing.strategy to Lend (or LendAndBorrow) so other teams can use it while idle; the team reclaims it "
        "when its work returns" if w.strategy == "DontLend" else
        "it is lent to the other teams while idle; if it stays idle, move quota to teams that wait "
        "(hyperpod-gov report proposes a patch)"
    )
    out.append(AlarmPlan(
        team=w.team, kind="idle-capacity", name=alarm_name(spec_name, w.team, "idle-capacity"),
        description=(
            f"Reserved capacity idle: team {w.team} used less than {th.idle_percent}% of its nominal quota "
            f"({_amounts(tuple(main))}) for {th.idle_hours} h. {_owner_line(cost, 'cost owner')} "
            f"Response: {response}."),
        owner=cost, topic=cost_topic, metrics=tuple((f"u{i}", f.usage) for i, f in enumerate(main)),
        expression=f"100 * ({' + '.join(f'u{i}' for i in range(len(main)))}) / {total}",
        threshold=th.idle_percent, comparison="LessThanThreshold",
        period=HOUR, evaluation_periods=th.idle_hours, datapoints_to_alarm=th.idle_hours,
    ))

    # Repeated preemption.
    out.append(AlarmPlan(
        team=w.team, kind="preempted", name=alarm_name(spec_name, w.team, "preempted"),
        description=(
            f"Repeated preemption: {th.preemptions_per_hour} or more workloads of team {w.team} were preempted within "
            f"an hour. {_owner_line(ops, 'operations owner')} Response: give urgent work a higher priority class, "
            "keep long jobs within the nominal quota (borrowed capacity is reclaimed first), checkpoint "
            "more often, or ask for more quota."),
        owner=ops, topic=ops_topic, metrics=(("preempted", w.preemptions),), expression=None,
        threshold=th.preemptions_per_hour, comparison="GreaterThanOrEqualToThreshold",
        period=HOUR, evaluation_periods=1, datapoints_to_alarm=1,
    ))

    # Accelerators admitted but barely used.
    if w.utilisation is not None:
        n = th.low_utilisation_minutes // 5
        out.append(AlarmPlan(
            team=w.team, kind="low-utilisation", name=alarm_name(spec_name, w.team, "low-utilisation"),
            description=(
                f"Low accelerator utilisation: team {w.team}'s pods used less than {th.low_utilisation_percent}% of "
                f"their accelerators for {th.low_utilisation_minutes} min while workloads were admitted. "
                f"{_owner_line(ops, 'operations owner')} Response: check the running jobs (input pipeline, stuck "
                "processes, idle notebooks) and stop what does not use its accelerators; admitted capacity is not "
                "lent to anyone."),
            owner=ops, topic=ops_topic, metrics=(("admitted", w.admitted), ("util", w.utilisation)),
            expression=f"IF(admitted > 0 AND util < {th.low_utilisation_percent}, 1, 0)", threshold=1,
            comparison="GreaterThanOrEqualToThreshold", period=FIVE_MINUTES, evaluation_periods=n,
            datapoints_to_alarm=n,
        ))
    return tuple(out)


def _streams(team: TeamPlan, covered: int) -> int:
    """Kueue metric streams the agent publishes for one queue (eviction reasons left out)."""
    flavors = len(team.flavors)
    per_resource_metric = 1 + covered + flavors * covered + flavors
    return (1 + len(PENDING_STATUSES)) + 1 + 1 + 2 * per_resource_metric


def build_monitoring_plan(plan: Governed, inputs: MonitoringInputs) -> MonitoringPlan:
    """What to watch per team, from the governance plan and the inputs of ``monitoring_inputs``."""
    cluster = inputs.cluster_name
    flavor_names = {f.instance_type: f.name for f in plan.flavors}
    cluster_thresholds = inputs.monitoring.alarms
    owners: set[str] = set()
    for c in inputs.contracts.values():
        if c is not None:
            owners |= {c.operations_owner, c.cost_owner}
    topics = [TopicPlan(PLATFORM_TOPIC, inputs.monitoring.platform_email, f"{inputs.spec_name} platform alarms")]
    topics += [TopicPlan(o, o, f"{inputs.spec_name} alarms for {o}") for o in sorted(owners)]
    topic_of: dict[Optional[str], str] = {None: PLATFORM_TOPIC, **{o: o for o in owners}}

    watches = []
    for t in plan.teams:
        contract = inputs.contracts.get(t.name)
        flavors = tuple(_flavor_watch(cluster, t.cluster_queue, f, flavor_names.get(f.instance_type,
                                                                                    f.instance_type))
                        for f in t.owned)
        kinds = [f.accelerator_kind for f in t.owned if f.accelerator_kind]
        kind = catalog.NVIDIA_GPU if catalog.NVIDIA_GPU in kinds else (kinds[0] if kinds else None)
        utilisation = None if kind is None else Metric(
            CONTAINER_INSIGHTS_NAMESPACE, UTILISATION_METRIC[kind],
            (("ClusterName", cluster), ("Namespace", t.namespace)), "Average")
        partial = TeamWatch(
            team=t.name, namespace=t.namespace, cluster_queue=t.cluster_queue, is_shared_pool=t.is_shared_pool,
            strategy=t.strategy, borrow_limit_percent=t.borrow_limit_percent, fair_share_weight=t.fair_share_weight,
            flavors=flavors,
            pending=_kueue(PENDING, "Maximum", cluster, ClusterQueue=t.cluster_queue),
            admitted=_kueue(ADMITTED, "Average", cluster, ClusterQueue=t.cluster_queue),
            evictions_search=evictions_search(cluster, t.cluster_queue),
            preemptions=_kueue(EVICTED, "Sum", cluster, ClusterQueue=t.cluster_queue, Reason=PREEMPTED_REASON),
            utilisation=utilisation,
            thresholds=cluster_thresholds.merged(inputs.overrides.get(t.name)),
            operations_owner=contract.operations_owner if contract else None,
            cost_owner=contract.cost_owner if contract else None,
            alarms=(),
            dashboard=(team_dashboard_name(inputs.spec_name, t.name)
                       if inputs.monitoring.team_dashboards and not t.is_shared_pool else None),
        )
        watches.append(TeamWatch(**{**partial.__dict__, "alarms": _alarms(inputs.spec_name, partial, topic_of)}))
    pages = cluster_dashboard_pages(tuple(w.team for w in watches))
    covered = len(plan.covered_resources)
    streams = 7 + sum(_streams(t, covered) for t in plan.teams)  # 7: the cluster-wide (ClusterName-only) streams
    return MonitoringPlan(
        spec_name=inputs.spec_name,
        cluster_name=cluster,
        region=inputs.region,
        teams=tuple(watches),
        topics=tuple(sorted(topics, key=lambda t: t.key)),
        cluster_dashboards=tuple(zip(cluster_dashboard_names(inputs.spec_name, len(pages)), pages)),
        kueue_metric_streams=streams,
    )


def monitoring_plan(plan: Governed) -> MonitoringPlan:
    """The monitoring plan of a governance plan, from the plan alone (``Plan.monitoring`` holds it)."""
    return build_monitoring_plan(plan, monitoring_inputs(plan))
