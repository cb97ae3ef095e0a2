"""Governance feedback loop in CloudWatch: encrypted alarm topics per owner, per-team alarms, dashboards.

Every input is a part of the monitoring plan (``plan/monitoring.py``); nothing here decides a threshold, a name
or an owner.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, Mapping, Optional, Sequence

from aws_cdk import Aws, aws_cloudwatch as cw, aws_iam as iam
from aws_cdk import aws_kms as kms, aws_sns as sns, aws_sns_subscriptions as subs
from constructs import Construct

from .plain import Fragment, get_att, included, join

from ..plan.monitoring import (HOUR, MAX_ALARM_METRICS, AlarmPlan, FlavorWatch, Metric, MonitoringPlan, TeamWatch,
                               TopicPlan)

CLOUDWATCH_PRINCIPAL = "cloudwatch.amazonaws.com"
ROW_HEIGHT = 6
ORANGE = "#ff7f0e"  # aws-cdk-lib's Color.ORANGE
ALARM_TYPE = "AWS::CloudWatch::Alarm"
DASHBOARD_TYPE = "AWS::CloudWatch::Dashboard"


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
        return {"MetricName": m.name, "Namespace": m.namespace, "Period": a.period, "Statistic": _statistic(m),
                "Dimensions": _dimensions(m)}
    if len(a.metrics) + 1 > MAX_ALARM_METRICS:
        raise ValueError(f"alarm {a.name}: {len(a.metrics) + 1} metrics, CloudWatch allows {MAX_ALARM_METRICS}")
    queries: list[dict[str, Any]] = [{"Id": "expr_1", "Expression": a.expression, "Label": a.kind,
                                      "ReturnData": True}]
    for key, m in a.metrics:
        queries.append({"Id": key, "ReturnData": False, "MetricStat": {
            "Metric": {"MetricName": m.name, "Namespace": m.namespace, "Dimensions": _dimensions(m)},
            "Period": a.period, "Stat": _statistic(m)}})
    return {"Metrics": queries}


def alarm_properties(a: AlarmPlan, topic_arn: str) -> dict[str, Any]:
    """The alarm's ``AWS::CloudWatch::Alarm`` properties; it notifies ``topic_arn`` (a token's string or an ARN)
    when it fires and when it clears."""
    props: dict[str, Any] = {
        "AlarmName": a.name, "AlarmDescription": a.description[:1024], "Threshold": a.threshold,
        "ComparisonOperator": a.comparison, "EvaluationPeriods": a.evaluation_periods,
        "DatapointsToAlarm": a.datapoints_to_alarm, "TreatMissingData": a.treat_missing_data,
        "AlarmActions": [topic_arn], "OKActions": [topic_arn], **alarm_metrics(a),
    }
    return {k: v for k, v in props.items() if v is not None}


def _alarms(fragment: Fragment, below: Sequence[str], watch: TeamWatch, arns: Mapping[str, str]) -> dict[str, str]:
    """The team's alarms in ``fragment`` at ``below``/<kind>/Resource (where the L2 alarm put them); kind ->
    logical id."""
    return {a.kind: fragment.add([*below, a.kind, "Resource"], ALARM_TYPE, alarm_properties(a, arns[a.topic]))
            for a in watch.alarms}


def _topic_arns(watch: TeamWatch, topics: Mapping[str, sns.ITopic],
                topic_arns: Optional[Mapping[str, str]]) -> dict[str, str]:
    """Topic key -> ARN token for the topics ``watch``'s alarms notify: read from jsii once per topic not given."""
    arns: dict[str, str] = dict(topic_arns or {})
    for a in watch.alarms:
        if a.topic not in arns:
            arns[a.topic] = topics[a.topic].topic_arn
    return arns


class TeamAlarms(Construct):
    """A team's alarms (one per kind, the construct id is the kind), each notifying its owner's topic.

    ``topic_arns``: topic key -> ARN of the topics already read (e.g. ``AlarmTopics.topic_arns``); the others are
    read from ``topics``. The alarms are one ``CfnInclude`` (``plain.Fragment``): ``logical_ids`` names them,
    ``alarms`` reads them from jsii when asked.
    """

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, topics: Mapping[str, sns.ITopic],
                 topic_arns: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(scope, id)
        fragment = Fragment(self)
        self.logical_ids = _alarms(fragment, [], watch, _topic_arns(watch, topics, topic_arns))
        self._include = fragment.include("Alarms")

    @property
    def alarms(self) -> dict[str, cw.CfnAlarm]:
        """Kind -> the alarm (read from jsii)."""
        return included(self._include, self.logical_ids)  # type: ignore[return-value]


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


def js_number(x: float) -> str:
    """``x`` as JavaScript prints a number (``Number.prototype.toString``, which ``JSON.stringify`` uses): the
    shortest digits that read back as ``x`` (Python's ``repr`` finds the same), positional from 1e-6 up to below
    1e21, ``1e-7`` and ``1.5e+21`` beyond; not finite: ``null``."""
    if not math.isfinite(x):
        return "null"
    if x == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    d = "".join(map(str, digits)).rstrip("0") or "0"
    exponent = int(exponent) + len(digits) - len(d)
    k, n = len(d), len(d) + exponent  # the digits, and where the point goes after the first n of them
    if k <= n <= 21:
        text = d + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{d[:n]}.{d[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + d
    else:
        e = n - 1
        text = d[0] + (f".{d[1:]}" if k > 1 else "") + f"e{'+' if e > 0 else '-'}{abs(e)}"
    return ("-" if sign else "") + text


def js_json(value: Any) -> str:
    """``value`` as JavaScript's ``JSON.stringify`` writes it: no spaces, non-ASCII as is, numbers as
    :func:`js_number` (Python's ``json`` writes ``1e-07`` and ``2.0``)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{js_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js_json(v) for v in value) + "]"
    raise TypeError(f"{type(value).__name__} is not JSON")


def dashboard_body(widgets: list[Widget]) -> str:
    """The dashboard's JSON, as ``Stack.to_json_string`` writes it (:func:`js_json`). Written in Python: the
    deploy-time values in it (alarm ARNs, the region) are string tokens inside the text, which CDK renders as the
    same ``Fn::Join`` as ``to_json_string``'s, without two jsii calls a dashboard."""
    return js_json({"widgets": widgets})


_REFERENCE = re.compile("\ue000(\\d+)\ue001")


def _body_with_references(widgets: list[Widget], references: Sequence[dict[str, Any]]) -> Any:
    """The dashboard body where ``widgets`` hold ``_placeholder(i)`` for ``references[i]`` (intrinsics of the
    same fragment, e.g. an alarm's ARN): ``Fn::Join`` of the text and the references, as CDK renders a string
    with tokens (``plain.join``)."""
    text = dashboard_body(widgets)
    if not text.count("\ue000") == text.count("\ue001") == len(references):
        raise ValueError("a dashboard's text holds U+E000 or U+E001, which mark its references")
    pieces = _REFERENCE.split(text)  # text, index, text, index, ..., text
    return join([pieces[i] if i % 2 == 0 else references[int(pieces[i])] for i in range(len(pieces))])


def _placeholder(i: int) -> str:
    return f"\ue000{i}\ue001"


def _dashboard(scope: Construct, name: str, rows: Sequence[Sequence[Widget]]) -> cw.CfnDashboard:
    body = dashboard_body(layout(rows))
    # At <scope>/Resource/Resource, where the L2 Dashboard put it: the logical id stays.
    return cw.CfnDashboard(Construct(scope, "Resource"), "Resource", dashboard_name=name, dashboard_body=body)


def _team_dashboard(fragment: Fragment, below: Sequence[str], watch: TeamWatch, region: Optional[str],
                    alarm_arns: Mapping[str, Any]) -> str:
    """The team's dashboard in ``fragment`` at ``below``/Resource/Resource (where the L2 Dashboard put it): its
    row, its alarms' state (``alarm_arns``: kind -> a token's string, or an intrinsic of the fragment) and what
    each alarm asks of whom. Returns its logical id."""
    if watch.dashboard is None:
        raise ValueError(f"{fragment.path}: team {watch.team} has no dashboard in the plan")
    rows = [team_row(watch, region)]
    references: list[dict[str, Any]] = []
    if alarm_arns:
        arns = []
        for kind in sorted(alarm_arns):
            arn = alarm_arns[kind]
            if not isinstance(arn, str):
                arns.append(_placeholder(len(references)))
                references.append(arn)
            else:
                arns.append(arn)
        rows.append([
            {"type": "alarm", "width": 8, "height": ROW_HEIGHT,
             "properties": {"title": f"{watch.team}: alarms", "alarms": arns}},
            _text("\n\n".join(f"**{a.kind}** — {a.description}" for a in watch.alarms), width=16),
        ])
    body = _body_with_references(layout(rows), references)
    return fragment.add([*below, "Resource", "Resource"], DASHBOARD_TYPE,
                        {"DashboardName": watch.dashboard, "DashboardBody": body})


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
    """A team's own dashboard: its row, its alarms' state and what each alarm asks of whom (one ``CfnInclude``,
    ``plain.Fragment``)."""

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, region: Optional[str] = None,
                 alarms: Optional[Mapping[str, cw.CfnAlarm]] = None) -> None:
        super().__init__(scope, id)
        fragment = Fragment(self)
        self.logical_id = _team_dashboard(fragment, [], watch, region,
                                          {k: a.attr_arn for k, a in (alarms or {}).items()})
        self._include = fragment.include("Dashboard")

    @property
    def dashboard(self) -> cw.CfnDashboard:
        return self._include.get_resource(self.logical_id)  # type: ignore[union-attr,return-value]


def team_monitoring(fragment: Fragment, below: Sequence[str], *, watch: TeamWatch, topics: Mapping[str, sns.ITopic],
                    region: Optional[str] = None, topic_arns: Optional[Mapping[str, str]] = None
                    ) -> tuple[dict[str, str], Optional[str]]:
    """A team's alarms and, if planned, its dashboard in ``fragment``, where ``TeamMonitoring`` at ``below`` puts
    them: the alarms' logical ids by kind, and the dashboard's."""
    alarms = _alarms(fragment, [*below, "Alarms"], watch, _topic_arns(watch, topics, topic_arns))
    dashboard = (_team_dashboard(fragment, [*below, "Dashboard"], watch, region,
                                 {k: get_att(v, "Arn") for k, v in alarms.items()})
                 if watch.dashboard else None)
    return alarms, dashboard


class TeamMonitoring(Construct):
    """Per team (construct id: the team's name): its alarms and, if planned, its dashboard.

    ``topics``: topic key (``AlarmPlan.topic``) -> topic, e.g. ``AlarmTopics.topics`` (from any stack);
    ``topic_arns``: the ARNs of those already read (``AlarmTopics.topic_arns``), for the many teams of one stack.
    Alarms and dashboard are one ``CfnInclude`` (``plain.Fragment``) at the logical ids the L2 constructs had
    (``Alarms/<kind>/Resource``, ``Dashboard/Resource/Resource``); ``alarms`` and ``dashboard`` read them from
    jsii when asked.
    """

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, topics: Mapping[str, sns.ITopic],
                 region: Optional[str] = None, topic_arns: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(scope, id)
        fragment = Fragment(self)
        self.alarm_ids, self.dashboard_id = team_monitoring(fragment, [], watch=watch, topics=topics, region=region,
                                                            topic_arns=topic_arns)
        self._include = fragment.include("Resources")

    @property
    def alarms(self) -> dict[str, cw.CfnAlarm]:
        """Kind -> the alarm (read from jsii)."""
        return included(self._include, self.alarm_ids)  # type: ignore[return-value]

    @property
    def dashboard(self) -> Optional[cw.CfnDashboard]:
        if self._include is None or self.dashboard_id is None:
            return None
        return self._include.get_resource(self.dashboard_id)  # type: ignore[return-value]
