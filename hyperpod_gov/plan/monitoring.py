"""What to watch per team, as plain data: the metrics, the alarms with their owners and responses, the dashboards.

Pure (no CDK, no boto3). The constructs in ``constructs/monitoring.py`` and the ``report`` command read the same
metric definitions from here, so what a dashboard shows and what the report counts cannot drift apart.

The data (metric facts, watches, alarms, topics) is in ``watches.py``, the alarms in ``alarms.py``, the
dashboards' names and pages in ``dashboards.py``; this module builds the plan of them and re-exports their names.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional, Protocol

from .. import catalog
from ..spec.monitoring import AlarmOverrides, Monitoring
from .alarms import _alarms, alarm_name
from .prometheus import has_rule
from .dashboards import cluster_dashboard_names, cluster_dashboard_pages, team_dashboard_name
from .quotas import FlavorQuota, TeamPlan
from .watches import (
    ADMITTED,
    ALARM_KINDS,
    CONTAINER_INSIGHTS_NAMESPACE,
    EVICTED,
    FIVE_MINUTES,
    HOUR,
    KUEUE_DIMENSIONS,
    KUEUE_NAMESPACE,
    MAX_ALARM_METRICS,
    NOMINAL,
    PENDING,
    PENDING_STATUSES,
    PLATFORM_TOPIC,
    PREEMPTED_REASON,
    TEAMS_PER_CLUSTER_DASHBOARD,
    UNITS,
    USAGE,
    UTILISATION_METRIC,
    AlarmPlan,
    FlavorWatch,
    Metric,
    MonitoringCounts,
    MonitoringPlan,
    TeamWatch,
    TopicPlan,
)

__all__ = [
    "ADMITTED", "ALARM_KINDS", "CONTAINER_INSIGHTS_NAMESPACE", "EVICTED", "FIVE_MINUTES", "HOUR", "KUEUE_DIMENSIONS",
    "KUEUE_NAMESPACE", "MAX_ALARM_METRICS", "NOMINAL", "PENDING", "PENDING_STATUSES", "PLATFORM_TOPIC",
    "PREEMPTED_REASON", "TEAMS_PER_CLUSTER_DASHBOARD", "UNITS", "USAGE", "UTILISATION_METRIC", "AlarmPlan",
    "FlavorWatch", "Governed", "Metric", "MonitoringCounts", "MonitoringInputs", "MonitoringPlan", "TeamWatch",
    "TopicPlan", "alarm_name", "build_monitoring_plan", "cluster_dashboard_names", "cluster_dashboard_pages",
    "evictions_search", "monitoring_inputs", "monitoring_plan", "team_dashboard_name", "team_watch",
]


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


def _streams(team: TeamPlan, covered: int) -> int:
    """Kueue metric streams the agent publishes for one queue (eviction reasons left out)."""
    flavors = len(team.flavors)
    per_resource_metric = 1 + covered + flavors * covered + flavors
    return (1 + len(PENDING_STATUSES)) + 1 + 1 + 2 * per_resource_metric


def team_watch(t: TeamPlan, *, spec_name: str, cluster: str, monitoring: Monitoring, flavor_names: Mapping[str, str],
               contract: Any, overrides: Optional[AlarmOverrides]) -> TeamWatch:
    """What to watch for one team, from the team's own decisions (its owned flavors, queue and namespace), its
    contract's owners and its alarm overrides: ``derive_plan`` builds it with the team (``TeamPlan.monitoring``).
    ``flavor_names``: instance type -> ResourceFlavor name."""
    flavors = tuple(_flavor_watch(cluster, t.cluster_queue, f, flavor_names.get(f.instance_type, f.instance_type))
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
        thresholds=monitoring.alarms.merged(overrides),
        operations_owner=contract.operations_owner if contract else None,
        cost_owner=contract.cost_owner if contract else None,
        alarms=(),
        dashboard=(team_dashboard_name(spec_name, t.name)
                   if monitoring.team_dashboards and not t.is_shared_pool else None),
    )
    # A team's alarms publish to its own owners' topics (keyed by the owner), or to the platform's.
    topic_of: dict[Optional[str], str] = {None: PLATFORM_TOPIC}
    if contract is not None:
        topic_of |= {contract.operations_owner: contract.operations_owner, contract.cost_owner: contract.cost_owner}
    alarms = _alarms(spec_name, partial, topic_of)
    if monitoring.prometheus is not None and monitoring.prometheus.creates:  # a rule where one exists
        alarms = tuple(replace(a, in_cloudwatch=False) if has_rule(a) else a for a in alarms)
    return TeamWatch(**{**partial.__dict__, "alarms": alarms})


def build_monitoring_plan(plan: Governed, inputs: MonitoringInputs) -> MonitoringPlan:
    """What to watch per team, from the governance plan and the inputs of ``monitoring_inputs``."""
    flavor_names = {f.instance_type: f.name for f in plan.flavors}
    watches = tuple(team_watch(t, spec_name=inputs.spec_name, cluster=inputs.cluster_name,
                               monitoring=inputs.monitoring, flavor_names=flavor_names,
                               contract=inputs.contracts.get(t.name), overrides=inputs.overrides.get(t.name))
                    for t in plan.teams)
    return _monitoring_plan(plan, inputs, watches)


def _monitoring_plan(plan: Governed, inputs: MonitoringInputs, watches: tuple[TeamWatch, ...]) -> MonitoringPlan:
    """The monitoring plan of these team watches (one per team of ``plan.teams``, in its order)."""
    owners: set[str] = set()
    for c in inputs.contracts.values():
        if c is not None:
            owners |= {c.operations_owner, c.cost_owner}
    topics = [TopicPlan(PLATFORM_TOPIC, inputs.monitoring.platform_email, f"{inputs.spec_name} platform alarms")]
    topics += [TopicPlan(o, o, f"{inputs.spec_name} alarms for {o}") for o in sorted(owners)]
    pages = cluster_dashboard_pages(tuple(w.team for w in watches))
    covered = len(plan.covered_resources)
    streams = 7 + sum(_streams(t, covered) for t in plan.teams)  # 7: the cluster-wide (ClusterName-only) streams
    return MonitoringPlan(
        spec_name=inputs.spec_name,
        cluster_name=inputs.cluster_name,
        region=inputs.region,
        teams=watches,
        topics=tuple(sorted(topics, key=lambda t: t.key)),
        cluster_dashboards=tuple(zip(cluster_dashboard_names(inputs.spec_name, len(pages)), pages)),
        kueue_metric_streams=streams,
    )


def monitoring_plan(plan: Governed) -> MonitoringPlan:
    """The monitoring plan of a governance plan, from the plan alone (``Plan.monitoring`` holds it): its teams'
    own watches (``TeamPlan.monitoring``)."""
    missing = [t.name for t in plan.teams if t.monitoring is None]
    if missing:
        raise ValueError(f"teams without their watch (TeamPlan.monitoring): {', '.join(missing)}")
    return _monitoring_plan(plan, monitoring_inputs(plan), tuple(t.monitoring for t in plan.teams if t.monitoring))
