"""Amazon Managed Service for Prometheus and Amazon Managed Grafana (``monitoring.prometheus``, ``monitoring.grafana``),
as plain data: the HyperPod observability add-on's settings, the teams' alerting rules and the alert manager that
routes them to the same owners' topics as the CloudWatch alarms, and one Grafana dashboard per team. Pure (no CDK).

Sources (docs/observability.md links them):

- The add-on ``amazon-sagemaker-hyperpod-observability`` runs in the namespace ``hyperpod-observability``; its
  collector's service account ``hyperpod-observability-operator-otel-collector`` is associated with a role through
  EKS Pod Identity that may ``aps:RemoteWrite`` to the one workspace and write the ``/aws/sagemaker/Clusters/*`` log
  groups (hyperpod-observability-addon-troubleshooting.md, "Verify Pod Identity association").
- Kueue's metrics reach the workspace only with the task-governance metrics category on
  (hyperpod-observability-cluster-metrics.md: "Task governance metrics ... Enabled by default? No"); they keep
  Kueue's own names and labels (``cluster_queue``, ``flavor``, ``resource``, ``status``, ``reason``), documented at
  https://kueue.sigs.k8s.io/docs/reference/metrics/.
- GPU utilisation per namespace: dcgm-exporter's ``DCGM_FI_DEV_GPU_UTIL`` (percent) with the pod's ``namespace``
  label (dcgm-exporter's Kubernetes mapping).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional

from ..catalog import NVIDIA_GPU
from .slurm_observability import ExtensionPlan, extension_plan
from .watches import UTILISATION_METRIC, AlarmPlan, TeamWatch

ADDON = "amazon-sagemaker-hyperpod-observability"
ADDON_NAMESPACE = "hyperpod-observability"
COLLECTOR_SERVICE_ACCOUNT = "hyperpod-observability-operator-otel-collector"
CLUSTER_LOG_GROUPS = "/aws/sagemaker/Clusters/"  # the log groups the collector writes (troubleshooting page)
GPU_UTILISATION = "DCGM_FI_DEV_GPU_UTIL"
# The add-on's configuration: Kueue's metrics (task governance) are off unless asked for; the rest keep the
# add-on's defaults. The workspace is added at deploy time (its ARN and endpoint are tokens).
METRICS_PROVIDER: Mapping[str, Any] = {"taskGovernanceMetrics": {"level": "ADVANCED"}}
# What a Grafana workspace's role needs to read one workspace (the data source's queries), nothing more.
QUERY_ACTIONS = ("aps:DescribeWorkspace", "aps:QueryMetrics", "aps:GetLabels", "aps:GetSeries",
                 "aps:GetMetricMetadata")
REMOTE_WRITE = "aps:RemoteWrite"
SNS_PUBLISHER = "aps.amazonaws.com"
# A Slurm cluster's Grafana workspace: the extension's metrics, and no per-team dashboard (they read Kueue's).
SLURM_GRAFANA = "hyperpod-gov: the Slurm cluster's metrics in the governance Prometheus workspace"


def _selector(**labels: str) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def _usage(queue: str, flavor: str, resource: str) -> str:
    return f"sum(kueue_cluster_queue_resource_usage{_selector(cluster_queue=queue, flavor=flavor, resource=resource)})"


def _minutes(seconds: int) -> str:
    return f"{seconds // 60}m"


def alert_expression(watch: TeamWatch, alarm: AlarmPlan) -> Optional[tuple[str, str]]:
    """The PromQL expression and ``for`` duration of one of the team's alarms: the same signal, threshold and
    duration as the CloudWatch alarm (``plan/alarms.py``), over Kueue's labels and the team's namespace. None for
    the low utilisation of a team whose accelerators are Neuron devices: the add-on's Neuron metrics are an
    advanced category this library does not turn on (docs/observability.md)."""
    q = watch.cluster_queue
    th = watch.thresholds
    if alarm.kind == "quota-not-honoured":
        usage = [m for key, m in alarm.metrics if key != "pending"]
        flavors = {(f.flavor, f.resource): f for f in watch.flavors}
        below = " and on() ".join(
            f"(({_usage(q, dict(m.dimensions)['Flavor'], dict(m.dimensions)['Resource'])} or vector(0)) < "
            f"{flavors[(dict(m.dimensions)['Flavor'], dict(m.dimensions)['Resource'])].nominal})" for m in usage)
        pending = f"max(kueue_pending_workloads{_selector(cluster_queue=q)}) > 0"
        return f"({pending}) and on() {below}", _minutes(alarm.period * alarm.evaluation_periods)
    if alarm.kind == "idle-capacity":
        main = sorted(watch.main_flavors, key=lambda f: (-f.nominal, f.instance_type))[: len(alarm.metrics)]
        used = " + ".join(f"({_usage(q, f.flavor, f.resource)} or vector(0))" for f in main)
        total = sum(f.nominal for f in main)
        return f"100 * ({used}) / {total} < {th.idle_percent}", _minutes(alarm.period * alarm.evaluation_periods)
    if alarm.kind == "preempted":
        evicted = f"kueue_evicted_workloads_total{_selector(cluster_queue=q, reason='Preempted')}"
        return f"sum(increase({evicted}[1h])) >= {th.preemptions_per_hour}", "0m"
    if not has_rule(alarm):
        return None
    if alarm.kind == "low-utilisation":
        admitted = f"max(kueue_admitted_active_workloads{_selector(cluster_queue=q)}) > 0"
        util = f"avg({GPU_UTILISATION}{_selector(namespace=watch.namespace)})"
        return (f"({admitted}) and on() ({util} < {th.low_utilisation_percent})",
                _minutes(alarm.period * alarm.evaluation_periods))
    raise ValueError(f"alarm {alarm.name}: no Prometheus rule for kind {alarm.kind}")


def has_rule(alarm: AlarmPlan) -> bool:
    """Whether the alarm has a Prometheus rule (``alert_expression``): every kind but the low utilisation of Neuron
    devices, whose alarm stays in CloudWatch."""
    return alarm.kind != "low-utilisation" or dict(alarm.metrics)["util"].name == UTILISATION_METRIC[NVIDIA_GPU]


@dataclass(frozen=True)
class AlertRule:
    """One Prometheus alerting rule: the alarm it replaces, its expression, and the name of the topic its owner
    hears (the alert manager routes on it)."""

    alarm: AlarmPlan
    expression: str
    duration: str  # Prometheus ``for``
    topic: str  # the SNS topic's name (names.alarm_topic)

    def rule(self) -> dict[str, Any]:
        return {"alert": self.alarm.kind, "expr": self.expression, "for": self.duration,
                "labels": {"team": self.alarm.team, "topic": self.topic},
                "annotations": {"summary": self.alarm.name, "description": self.alarm.description}}


@dataclass(frozen=True)
class TeamRules:
    """A team's rule groups namespace (one ``AWS::APS::RuleGroupsNamespace`` named after the team)."""

    team: str
    namespace: str
    rules: tuple[AlertRule, ...]

    def document(self) -> str:
        """The rule groups file (Prometheus's YAML; JSON is YAML), one group named after the team."""
        return json.dumps({"groups": [{"name": self.team, "rules": [r.rule() for r in self.rules]}]}, indent=1)


TopicName = Callable[[str, str], str]  # (team, topic key) -> the name of the topic its alarms notify


def team_rules(watch: TeamWatch, topic_name: TopicName) -> Optional[TeamRules]:
    """The team's alarms as alerting rules; None for a team without alarms (the shared pool, no quota)."""
    if not watch.alarms:
        return None
    rules = []
    for a in watch.alarms:
        found = alert_expression(watch, a)
        if found is not None:
            rules.append(AlertRule(a, *found, topic_name(watch.team, a.topic)))
    return TeamRules(watch.team, watch.namespace, tuple(rules))


def receiver(topic: str) -> str:
    """The alert manager receiver of a topic: its name, which is unique."""
    return topic


def alertmanager_document(topics: Iterable[str], topic_arn: Mapping[str, str], region: str, default: str) -> str:
    """The alert manager definition: one SNS receiver per topic name (``topic_arn``: name -> ARN or a placeholder), a
    route per topic matching the rules' ``topic`` label; an alert no route matches goes to ``default`` (the
    platform's topic)."""
    keys = sorted(set(topics) | {default})
    config = {
        "route": {"receiver": receiver(default),
                  "group_by": ["team", "alertname"],
                  "routes": [{"receiver": receiver(k), "matchers": [f'topic="{k}"']} for k in keys]},
        "receivers": [{"name": receiver(k), "sns_configs": [{"topic_arn": topic_arn[k], "sigv4": {"region": region},
                                                             "send_resolved": True}]} for k in keys],
    }
    return "alertmanager_config: |\n" + "".join(f"  {line}\n" for line in json.dumps(config, indent=1).splitlines())


def team_dashboard(watch: TeamWatch, *, datasource: str = "prometheus") -> dict[str, Any]:
    """A team's Grafana dashboard (the JSON model the Grafana HTTP API takes), every query filtered to the team:
    its namespace, or its ClusterQueue for Kueue's metrics (Kueue labels them by queue, one queue per namespace)."""
    q, ns = watch.cluster_queue, watch.namespace
    panels = [
        ("Usage against nominal quota", " or ".join(
            f"{_usage(q, f.flavor, f.resource)}" for f in watch.flavors) or "vector(0)"),
        ("Pending workloads", f"sum by (status) (kueue_pending_workloads{_selector(cluster_queue=q)})"),
        ("Admitted workloads", f"sum(kueue_admitted_active_workloads{_selector(cluster_queue=q)})"),
        ("Evictions per hour by reason",
         f"sum by (reason) (increase(kueue_evicted_workloads_total{_selector(cluster_queue=q)}[1h]))"),
        ("GPU utilisation (%)", f"avg({GPU_UTILISATION}{_selector(namespace=ns)})"),
        ("Running pods", f'sum(kube_pod_status_phase{_selector(namespace=ns, phase="Running")})'),
    ]
    return {
        "title": f"{watch.team}", "uid": f"hpg-{watch.team}"[:40], "tags": ["hyperpod-gov", watch.team],
        "panels": [{"id": i + 1, "type": "timeseries", "title": title,
                    "gridPos": {"x": 12 * (i % 2), "y": 8 * (i // 2), "w": 12, "h": 8},
                    "datasource": {"type": "prometheus", "uid": datasource},
                    "targets": [{"refId": "A", "expr": expr}]} for i, (title, expr) in enumerate(panels)],
    }


@dataclass(frozen=True)
class GrafanaPlan:
    """The Grafana workspace: its admins (applied with UpdatePermissions) and a folder and dashboard per team."""

    name: str  # the workspace's name (names.prometheus_workspace)
    admins: tuple[str, ...]
    dashboards: tuple[tuple[str, str], ...]  # (team, dashboard JSON), sorted by team
    description: str = "hyperpod-gov: one dashboard per team over the governance Prometheus workspace"


@dataclass(frozen=True)
class PrometheusPlan:
    """What ``monitoring.prometheus`` (and ``grafana``) create. On EKS the HyperPod observability add-on writes to
    the workspace (``addon_version``); on Slurm the cluster's ``sagemaker-observability`` extension does
    (``extension``), and there are no rules, routes or per-team dashboards (plan/slurm_observability.py)."""

    creates: bool  # a workspace of this spec; False: ``workspace_arn`` exists
    alias: str  # the created workspace's alias (names.prometheus_workspace)
    workspace_arn: Optional[str]
    addon_version: Optional[str]  # the EKS add-on's pin; None on Slurm
    rules: tuple[TeamRules, ...]  # only when ``creates`` (the alert manager is the workspace's)
    topics: tuple[str, ...]  # the names of the topics the alert manager routes to, sorted
    default_topic: str  # the platform's topic, where an alert no route matches goes
    grafana: Optional[GrafanaPlan]
    extension: Optional[ExtensionPlan] = None  # the Slurm cluster's extension; None on EKS

    @property
    def alerts_in_prometheus(self) -> bool:
        """The teams' alarms are alerting rules here, and no CloudWatch alarm is created for them (EKS only: a Slurm
        cluster has neither, since the extension's metrics are not Kueue's)."""
        return self.creates and self.extension is None


def prometheus_plan(monitoring: Any, watches: Iterable[TeamWatch], addon_version: str, topic_name: TopicName,
                    name: str, *, slurm_extension: Optional[str] = None) -> Optional[PrometheusPlan]:
    """The Prometheus plan of ``monitoring`` (the spec's ``Monitoring``) over the teams' watches; None without
    ``monitoring.prometheus``. ``topic_name``: where a team's alarms of a topic key go (``names.alarm_topic`` of the
    team's stack); ``name``: the workspaces' alias and name. ``slurm_extension``: a Slurm cluster's pinned
    extension version: the extension writes to the workspace instead of the add-on, and Kueue's rules, routes and
    dashboards have nothing to read."""
    p = monitoring.prometheus
    if p is None:
        return None
    extension = extension_plan(slurm_extension) if slurm_extension is not None else None
    watches = () if extension is not None else tuple(sorted(watches, key=lambda w: w.team))
    alerts = p.creates and extension is None
    rules = tuple(r for r in (team_rules(w, topic_name) for w in watches) if r is not None) if alerts else ()
    default = topic_name("", "platform")
    topics = tuple(sorted({default, *(r.topic for t in rules for r in t.rules)})) if alerts else ()
    g = monitoring.grafana
    grafana = None if g is None else GrafanaPlan(
        name, g.admins, tuple((w.team, json.dumps(team_dashboard(w), indent=1, sort_keys=True))
                        for w in watches if not w.is_shared_pool),
        *((SLURM_GRAFANA,) if extension is not None else ()))
    return PrometheusPlan(p.creates, name, None if p.creates else p.workspace,
                          None if extension is not None else addon_version, rules, topics, default, grafana, extension)
