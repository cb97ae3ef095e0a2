"""The monitoring plan's data: the metric facts, the metric, flavor and team watches, the alarms, topics and counts.

Pure (no CDK, no boto3); ``monitoring.py`` builds a ``MonitoringPlan`` of these, ``alarms.py`` the alarms.

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
from typing import Any, Iterable, Mapping, Optional

from .. import catalog
from ..spec.monitoring import AlarmThresholds

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
    # False when a Prometheus workspace of the spec alerts on it instead (monitoring.prometheus: create, and
    # plan/prometheus.py has a rule for it): no CloudWatch alarm is created, so its owner hears it once.
    in_cloudwatch: bool = True


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
    def cloudwatch_alarms(self) -> tuple[AlarmPlan, ...]:
        """The alarms created as CloudWatch alarms (the others are Prometheus alerting rules)."""
        return tuple(a for a in self.alarms if a.in_cloudwatch)

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

    def owner_topics(self, watches: Iterable[TeamWatch]) -> tuple[TopicPlan, ...]:
        """The owners' topics the alarms of these teams' watches (``TeamPlan.monitoring``) publish to, sorted (the
        platform's topic is not among them: it lives in the monitoring stack)."""
        keys = {a.topic for w in watches for a in w.alarms} - {PLATFORM_TOPIC}
        return tuple(t for t in self.topics if t.key in keys)

    @property
    def dashboard_pages(self) -> tuple[tuple[str, tuple[TeamWatch, ...]], ...]:
        """Each cluster dashboard page's name and the watches of the teams on it: ``cluster_dashboards`` with each
        team's watch (a page holds the next teams in plan order)."""
        watches = iter(self.teams)
        return tuple((name, tuple(next(watches) for _ in teams)) for name, teams in self.cluster_dashboards)

    def team(self, name: str) -> TeamWatch:
        for t in self.teams:
            if t.team == name:
                return t
        raise KeyError(name)

    @property
    def alarms(self) -> tuple[AlarmPlan, ...]:
        return tuple(a for t in self.teams for a in t.alarms)

    @property
    def cloudwatch_alarms(self) -> tuple[AlarmPlan, ...]:
        """The alarms created as CloudWatch alarms (none for teams whose alarms are Prometheus rules)."""
        return tuple(a for t in self.teams for a in t.cloudwatch_alarms)

    @property
    def counts(self) -> MonitoringCounts:
        dashboards = len(self.cluster_dashboards) + sum(1 for t in self.teams if t.dashboard)
        return MonitoringCounts(
            dashboards=dashboards,
            alarms=len(self.cloudwatch_alarms),
            alarm_metrics=sum(len(a.metrics) for a in self.cloudwatch_alarms),
            kueue_metric_streams=self.kueue_metric_streams,
            topics=len(self.topics),
        )


PLATFORM_TOPIC = "platform"
