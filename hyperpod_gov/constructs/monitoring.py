"""Governance feedback loop in CloudWatch: encrypted alarm topics per owner, per-team alarms, dashboards.

Every input is a part of the monitoring plan (``plan/monitoring.py``); nothing here decides a threshold, a name
or an owner.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Sequence

from aws_cdk import Aws, Stack, aws_cloudwatch as cw, aws_iam as iam
from aws_cdk import aws_kms as kms, aws_sns as sns, aws_sns_subscriptions as subs
from constructs import Construct

from ..plan.monitoring import (HOUR, MAX_ALARM_METRICS, AlarmPlan, FlavorWatch, Metric, MonitoringPlan, TeamWatch,
                               TopicPlan)

CLOUDWATCH_PRINCIPAL = "cloudwatch.amazonaws.com"
ROW_HEIGHT = 6
ORANGE = "#ff7f0e"  # aws-cdk-lib's Color.ORANGE


class AlarmTopics(Construct):
    """One SNS topic per owner (and the platform's), all encrypted with one rotating customer-managed key.

    The key policy lets CloudWatch alarms of this account encrypt (publish to) the topics; each topic allows
    ``sns:Publish`` by CloudWatch alarms of this account only, and denies requests without TLS. Each topic is
    three resources (topic, policy, subscription): past ~150 owners, split the topics over several stacks and
    pass the first one's ``key`` to the others.
    """

    def __init__(self, scope: Construct, id: str, *, topics: Sequence[TopicPlan], key: Optional[kms.IKey] = None
                 ) -> None:
        super().__init__(scope, id)
        if key is None:
            created = kms.Key(self, "Key", enable_key_rotation=True,
                              description="Encrypts the hyperpod-gov alarm topics")
            created.add_to_resource_policy(iam.PolicyStatement(
                sid="CloudWatchAlarmsPublishToEncryptedTopics",
                principals=[iam.ServicePrincipal(CLOUDWATCH_PRINCIPAL)],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],  # in a key policy, "*" is this key
                conditions={"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
            ))
            key = created
        self.key: kms.IKey = key
        self.topics: dict[str, sns.ITopic] = {}
        self.topic_arns: dict[str, str] = {}  # topic key -> ARN token, as read once from jsii
        if not topics:
            return
        # The pseudo parameters and the principal are the same values for every topic: read and made once.
        account, partition, region = Aws.ACCOUNT_ID, Aws.PARTITION, Aws.REGION
        cloudwatch = iam.ServicePrincipal(CLOUDWATCH_PRINCIPAL)
        for plan in sorted(topics, key=lambda t: t.key):
            owner = Construct(self, plan.key)
            topic = sns.Topic(owner, "Resource", display_name=plan.display_name[:100], master_key=self.key,
                              enforce_ssl=True)
            arn = topic.topic_arn
            topic.add_to_resource_policy(iam.PolicyStatement(
                sid="CloudWatchAlarmsPublish",
                principals=[cloudwatch],
                actions=["sns:Publish"],
                resources=[arn],
                conditions={
                    "StringEquals": {"aws:SourceAccount": account},
                    "ArnLike": {"aws:SourceArn": f"arn:{partition}:cloudwatch:{region}:{account}:alarm:*"},
                },
            ))
            if plan.email:
                topic.add_subscription(subs.EmailSubscription(plan.email))
            self.topics[plan.key] = topic
            self.topic_arns[plan.key] = arn


# Alarms and dashboards are plain data: each is one L1 resource built from dicts here (one jsii call), not an L2
# alarm with metric, expression, duration and action objects (about ten calls each; 1,200 alarms at 300 teams).
# The properties are the ones the L2 constructs render (aws-cdk-lib's aws-cloudwatch), so the templates, the
# logical ids (``<kind>/Resource``, ``Dashboard/Resource``) and the dashboard bodies are unchanged.

_STATISTICS = ("SampleCount", "Average", "Sum", "Minimum", "Maximum")
DEFAULT_PERIOD = 300  # CloudWatch's (and CDK's) default period: a dashboard metric leaves it out


def _dimensions(m: Metric) -> list[dict[str, str]]:
    return [{"Name": k, "Value": v} for k, v in sorted(m.dimension_map().items())]


def _statistic(m: Metric) -> str:
    if m.statistic not in _STATISTICS:
        raise ValueError(f"metric {m.name}: statistic {m.statistic!r} is not one of {', '.join(_STATISTICS)}")
    return m.statistic


def alarm_metrics(a: AlarmPlan) -> dict[str, Any]:
    """The ``AWS::CloudWatch::Alarm`` properties that say what the alarm reads: one metric, or metric math."""
    if a.expression is None:
        m = a.metrics[0][1]
        return {"namespace": m.namespace, "metric_name": m.name, "period": a.period, "statistic": _statistic(m),
                "dimensions": [cw.CfnAlarm.DimensionProperty(name=d["Name"], value=d["Value"])
                               for d in _dimensions(m)]}
    if len(a.metrics) + 1 > MAX_ALARM_METRICS:
        raise ValueError(f"alarm {a.name}: {len(a.metrics) + 1} metrics, CloudWatch allows {MAX_ALARM_METRICS}")
    queries = [cw.CfnAlarm.MetricDataQueryProperty(id="expr_1", expression=a.expression, label=a.kind,
                                                   return_data=True)]
    for key, m in a.metrics:
        queries.append(cw.CfnAlarm.MetricDataQueryProperty(
            id=key, return_data=False,
            metric_stat=cw.CfnAlarm.MetricStatProperty(
                metric=cw.CfnAlarm.MetricProperty(
                    metric_name=m.name, namespace=m.namespace,
                    dimensions=[cw.CfnAlarm.DimensionProperty(name=d["Name"], value=d["Value"])
                                for d in _dimensions(m)]),
                period=a.period, stat=_statistic(m))))
    return {"metrics": queries}


class TeamAlarms(Construct):
    """A team's alarms (one per kind, the construct id is the kind), each notifying its owner's topic.

    ``topic_arns``: topic key -> ARN of the topics already read (e.g. ``AlarmTopics.topic_arns``); the others are
    read from ``topics``.
    """

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, topics: Mapping[str, sns.ITopic],
                 topic_arns: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(scope, id)
        self.alarms: dict[str, cw.CfnAlarm] = {}
        arns: dict[str, str] = dict(topic_arns or {})  # topic key -> ARN token, read from jsii once per topic
        for a in watch.alarms:
            if a.topic not in arns:
                arns[a.topic] = topics[a.topic].topic_arn
            self.alarms[a.kind] = cw.CfnAlarm(
                Construct(self, a.kind), "Resource",
                alarm_name=a.name,
                alarm_description=a.description[:1024],
                threshold=a.threshold,
                comparison_operator=a.comparison,
                evaluation_periods=a.evaluation_periods,
                datapoints_to_alarm=a.datapoints_to_alarm,
                treat_missing_data=a.treat_missing_data,
                alarm_actions=[arns[a.topic]],
                ok_actions=[arns[a.topic]],
                **alarm_metrics(a),
            )


# --- dashboards -------------------------------------------------------------------------------------------------
# A widget is its JSON as CloudWatch reads it (what aws-cdk-lib's widgets render), without its position; a row of
# widgets is laid out left to right, wrapping at 24 columns, and rows go top to bottom.

Widget = dict[str, Any]
GRID_WIDTH = 24


def _graph_metric(m: Metric, period: int, label: Optional[str], id: Optional[str] = None) -> list[Any]:
    line: list[Any] = [m.namespace, m.name]
    for k, v in sorted(m.dimension_map().items()):
        line += [k, v]
    options: dict[str, Any] = {}
    if label is not None:
        options["label"] = label
    if id is not None:
        options["id"] = id
    if period != DEFAULT_PERIOD:
        options["period"] = period
    if _statistic(m) != "Average":
        options["stat"] = m.statistic
    return [*line, options] if options else line


def _graph_expression(expression: str, period: int, label: str) -> list[Any]:
    options: dict[str, Any] = {"label": label} if label else {}
    options["expression"] = expression
    if period != DEFAULT_PERIOD:
        options["period"] = period
    return [options]


def _graph(title: str, metrics: list[list[Any]], width: int, region: str, *,
           annotations: Optional[list[dict[str, Any]]] = None, y_axis: Optional[dict[str, Any]] = None) -> Widget:
    properties: dict[str, Any] = {"view": "timeSeries", "title": title, "region": region, "metrics": metrics}
    if annotations:
        properties["annotations"] = {"horizontal": annotations}
    properties["yAxis"] = {"left": y_axis} if y_axis else {}
    return {"type": "metric", "width": width, "height": ROW_HEIGHT, "properties": properties}


def _text(markdown: str, width: int, height: int = ROW_HEIGHT) -> Widget:
    return {"type": "text", "width": width, "height": height, "properties": {"markdown": markdown}}


def _usage_widget(w: TeamWatch, width: int, region: str, period: int = 300) -> Widget:
    metrics: list[list[Any]] = []
    annotations: list[dict[str, Any]] = []
    for i, f in enumerate(w.flavors):
        metrics.append(_graph_metric(f.usage, period, f"used {f.unit} ({f.instance_type})", id=f"u{i}"))
        # Borrowed = usage above nominal; borrow limits are not exported, so nominal comes from the plan.
        metrics.append(_graph_expression(f"IF(u{i} > {f.nominal}, u{i} - {f.nominal}, 0)", period,
                                         f"borrowed {f.unit} ({f.instance_type})"))
        annotations.append({"value": f.nominal, "label": f"nominal {f.nominal} {f.unit} ({f.instance_type})",
                            "yAxis": "left"})
        if f.borrowing_limit:
            annotations.append({"value": f.nominal + f.borrowing_limit, "color": ORANGE,
                                "label": f"nominal + borrow limit {f.nominal + f.borrowing_limit}", "yAxis": "left"})
    return _graph(f"{w.team}: usage against nominal quota", metrics, width, region, annotations=annotations)


def _queue_widget(w: TeamWatch, width: int, region: str) -> Widget:
    return _graph(f"{w.team}: pending and admitted workloads",
                  [_graph_metric(w.pending, 300, "pending (max over statuses)"),
                   _graph_metric(w.admitted, 300, "admitted")], width, region)


def _evictions_widget(w: TeamWatch, width: int, region: str) -> Widget:
    return _graph(f"{w.team}: evictions by reason (per hour)", [_graph_expression(w.evictions_search, HOUR, "")],
                  width, region)


def _utilisation_widget(w: TeamWatch, width: int, region: str) -> Widget:
    if w.utilisation is None:
        return _text(f"**{w.team}**: owns no accelerators", width)
    return _graph(f"{w.team}: accelerator utilisation (%)", [_graph_metric(w.utilisation, 300, w.utilisation.name)],
                  width, region, y_axis={"max": 100, "min": 0})


def _flavor_line(f: FlavorWatch) -> str:
    lend = "all" if f.lending_limit is None else str(f.lending_limit)
    return f"{f.nominal} {f.unit} on {f.instance_type} (lends {lend}, borrows up to {f.borrowing_limit})"


def _summary(w: TeamWatch, width: int) -> Widget:
    owns = "; ".join(_flavor_line(f) for f in w.flavors) or "nothing"
    lines = [
        f"### {w.team}{' (shared pool)' if w.is_shared_pool else ''}",
        f"{w.strategy}, fair-share weight {w.fair_share_weight}",
        f"Owns: {owns}",
        f"Operations: {w.operations_owner or 'platform'}; cost: {w.cost_owner or 'platform'}",
        f"Queue `{w.cluster_queue}`",
    ]
    return _text("\n\n".join(lines), width)


def team_row(w: TeamWatch, region: Optional[str] = None) -> list[Widget]:
    """One dashboard row (24 columns): summary, usage, queue, evictions, utilisation, as widget JSON.

    ``region``: the metrics' region (the plan's); given, the dashboard body is a plain string, a third smaller.
    """
    r = region if region is not None else Aws.REGION
    return [_summary(w, 4), _usage_widget(w, 6, r), _queue_widget(w, 5, r), _evictions_widget(w, 5, r),
            _utilisation_widget(w, 4, r)]


def layout(rows: Sequence[Sequence[Widget]]) -> list[Widget]:
    """The widgets of the rows with their positions: each row left to right, wrapping past 24 columns."""
    placed: list[Widget] = []
    top = 0
    for row in rows:
        x = y = height = 0
        for widget in row:
            if x + widget["width"] > GRID_WIDTH:
                x, y = 0, height
            placed.append({"type": widget["type"], "width": widget["width"], "height": widget["height"],
                           "x": x, "y": top + y, "properties": widget["properties"]})
            height = max(height, y + widget["height"])
            x += widget["width"]
        top += height
    return placed


def _plain_numbers(value: Any) -> bool:
    """Whether every number in ``value`` prints the same in Python's ``json`` as in JavaScript's
    ``JSON.stringify`` (whole numbers are made ints by ``_js``; fractions print alike from 1e-4 up)."""
    if isinstance(value, dict):
        return all(_plain_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain_numbers(v) for v in value)
    if isinstance(value, float):
        return value.is_integer() and abs(value) < 1e16 or 1e-4 <= abs(value) < 1e16
    return True


def _js(value: Any) -> Any:
    """``value`` with whole floats as ints, as JavaScript prints them (``2`` for 2.0)."""
    if isinstance(value, dict):
        return {k: _js(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def dashboard_body(scope: Construct, widgets: list[Widget]) -> str:
    """The dashboard's JSON, as ``Stack.to_json_string`` writes it (``JSON.stringify``: no spaces, non-ASCII as
    is). Written in Python: the deploy-time values in it (alarm ARNs, the region) are string tokens inside the
    text, which CDK renders as the same ``Fn::Join`` as ``to_json_string``'s, without two jsii calls a dashboard.
    Numbers that the two languages print differently (tiny or huge fractions) go through ``to_json_string``."""
    body = {"widgets": widgets}
    if not _plain_numbers(body):
        return Stack.of(scope).to_json_string(body)
    return json.dumps(_js(body), separators=(",", ":"), ensure_ascii=False)


def _dashboard(scope: Construct, name: str, rows: Sequence[Sequence[Widget]]) -> cw.CfnDashboard:
    body = dashboard_body(scope, layout(rows))
    # At <scope>/Resource/Resource, where the L2 Dashboard put it: the logical id stays.
    return cw.CfnDashboard(Construct(scope, "Resource"), "Resource", dashboard_name=name, dashboard_body=body)


class ClusterDashboardPage(Construct):
    """One page of the cluster dashboard (construct id: its name), one row per team on it.

    A row is about 2.6 kB of template: 300 teams make 6 pages and ~780 kB, so past that put pages in
    separate stacks (CloudFormation's 1 MB per template).
    """

    def __init__(self, scope: Construct, id: str, *, monitoring: MonitoringPlan, name: str,
                 teams: Sequence[str]) -> None:
        super().__init__(scope, id)
        header = _text(
            f"# {monitoring.spec_name}: HyperPod governance ({monitoring.cluster_name})\n"
            "Usage against nominal quota per instance type (borrowed = usage above nominal), pending work, "
            "evictions by reason, accelerator utilisation. Alarms go to each team's owners.",
            width=24, height=2)
        rows = [[header], *(team_row(monitoring.team(team), monitoring.region) for team in teams)]
        self.dashboard = _dashboard(self, name, rows)


class TeamDashboard(Construct):
    """A team's own dashboard: its row, its alarms' state and what each alarm asks of whom."""

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, region: Optional[str] = None,
                 alarms: Optional[Mapping[str, cw.CfnAlarm]] = None) -> None:
        super().__init__(scope, id)
        if watch.dashboard is None:
            raise ValueError(f"TeamDashboard {self.node.path}: team {watch.team} has no dashboard in the plan")
        rows = [team_row(watch, region)]
        if alarms:
            rows.append([
                {"type": "alarm", "width": 8, "height": ROW_HEIGHT,
                 "properties": {"title": f"{watch.team}: alarms", "alarms": [alarms[k].attr_arn for k in sorted(alarms)]}},
                _text("\n\n".join(f"**{a.kind}** — {a.description}" for a in watch.alarms), width=16),
            ])
        self.dashboard = _dashboard(self, watch.dashboard, rows)


class TeamMonitoring(Construct):
    """Per team (construct id: the team's name): its alarms and, if planned, its dashboard.

    ``topics``: topic key (``AlarmPlan.topic``) -> topic, e.g. ``AlarmTopics.topics`` (from any stack);
    ``topic_arns``: the ARNs of those already read (``AlarmTopics.topic_arns``), for the many teams of one stack.
    """

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, topics: Mapping[str, sns.ITopic],
                 region: Optional[str] = None, topic_arns: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(scope, id)
        self.alarms = TeamAlarms(self, "Alarms", watch=watch, topics=topics, topic_arns=topic_arns)
        self.dashboard = (TeamDashboard(self, "Dashboard", watch=watch, region=region, alarms=self.alarms.alarms)
                          if watch.dashboard else None)
