"""Governance feedback loop in CloudWatch: encrypted alarm topics per owner, per-team alarms, dashboards.

Every input is a part of the monitoring plan (``plan/monitoring.py``); nothing here decides a threshold, a name
or an owner.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from aws_cdk import Aws, Duration, aws_cloudwatch as cw, aws_cloudwatch_actions as cw_actions, aws_iam as iam
from aws_cdk import aws_kms as kms, aws_sns as sns, aws_sns_subscriptions as subs
from constructs import Construct

from ..plan.monitoring import AlarmPlan, FlavorWatch, Metric, MonitoringPlan, TeamWatch, TopicPlan

CLOUDWATCH_PRINCIPAL = "cloudwatch.amazonaws.com"
ROW_HEIGHT = 6


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
        for plan in sorted(topics, key=lambda t: t.key):
            owner = Construct(self, plan.key)
            topic = sns.Topic(owner, "Resource", display_name=plan.display_name[:100], master_key=self.key,
                              enforce_ssl=True)
            topic.add_to_resource_policy(iam.PolicyStatement(
                sid="CloudWatchAlarmsPublish",
                principals=[iam.ServicePrincipal(CLOUDWATCH_PRINCIPAL)],
                actions=["sns:Publish"],
                resources=[topic.topic_arn],
                conditions={
                    "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
                    "ArnLike": {
                        "aws:SourceArn": f"arn:{Aws.PARTITION}:cloudwatch:{Aws.REGION}:{Aws.ACCOUNT_ID}:alarm:*"},
                },
            ))
            if plan.email:
                topic.add_subscription(subs.EmailSubscription(plan.email))
            self.topics[plan.key] = topic


def cw_metric(m: Metric, period: int, label: Optional[str] = None) -> cw.Metric:
    return cw.Metric(namespace=m.namespace, metric_name=m.name, dimensions_map=m.dimension_map(),
                     statistic=m.statistic, period=Duration.seconds(period), label=label)


def alarm_signal(a: AlarmPlan) -> cw.IMetric:
    if a.expression is None:
        return cw_metric(a.metrics[0][1], a.period)
    return cw.MathExpression(expression=a.expression, period=Duration.seconds(a.period),
                             using_metrics={key: cw_metric(m, a.period) for key, m in a.metrics},
                             label=a.kind)


class TeamAlarms(Construct):
    """A team's alarms (one per kind, the construct id is the kind), each notifying its owner's topic."""

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, topics: Mapping[str, sns.ITopic]) -> None:
        super().__init__(scope, id)
        self.alarms: dict[str, cw.Alarm] = {}
        for a in watch.alarms:
            alarm = cw.Alarm(
                self, a.kind,
                alarm_name=a.name,
                alarm_description=a.description[:1024],
                metric=alarm_signal(a),
                threshold=a.threshold,
                comparison_operator=cw.ComparisonOperator(_COMPARISON[a.comparison]),
                evaluation_periods=a.evaluation_periods,
                datapoints_to_alarm=a.datapoints_to_alarm,
                treat_missing_data=cw.TreatMissingData(_MISSING[a.treat_missing_data]),
            )
            action = cw_actions.SnsAction(topics[a.topic])
            alarm.add_alarm_action(action)
            alarm.add_ok_action(action)
            self.alarms[a.kind] = alarm


_COMPARISON = {
    "GreaterThanOrEqualToThreshold": "GREATER_THAN_OR_EQUAL_TO_THRESHOLD",
    "LessThanThreshold": "LESS_THAN_THRESHOLD",
}
_MISSING = {"notBreaching": "NOT_BREACHING", "breaching": "BREACHING", "missing": "MISSING", "ignore": "IGNORE"}


# --- dashboards -------------------------------------------------------------------------------------------------


def _usage_widget(w: TeamWatch, width: int, region: Optional[str], period: int = 300) -> cw.GraphWidget:
    left: list[cw.IMetric] = []
    annotations = []
    for i, f in enumerate(w.flavors):
        usage = cw_metric(f.usage, period, label=f"used {f.unit} ({f.instance_type})")
        left.append(usage)
        # Borrowed = usage above nominal; borrow limits are not exported, so nominal comes from the plan.
        left.append(cw.MathExpression(expression=f"IF(u{i} > {f.nominal}, u{i} - {f.nominal}, 0)",
                                      using_metrics={f"u{i}": usage}, period=Duration.seconds(period),
                                      label=f"borrowed {f.unit} ({f.instance_type})"))
        annotations.append(cw.HorizontalAnnotation(value=f.nominal, label=f"nominal {f.nominal} {f.unit}"
                                                   f" ({f.instance_type})"))
        if f.borrowing_limit:
            annotations.append(cw.HorizontalAnnotation(
                value=f.nominal + f.borrowing_limit, color=cw.Color.ORANGE,
                label=f"nominal + borrow limit {f.nominal + f.borrowing_limit}"))
    return cw.GraphWidget(title=f"{w.team}: usage against nominal quota", left=left,
                          left_annotations=annotations, width=width, height=ROW_HEIGHT, region=region)


def _queue_widget(w: TeamWatch, width: int, region: Optional[str]) -> cw.GraphWidget:
    return cw.GraphWidget(title=f"{w.team}: pending and admitted workloads",
                          left=[cw_metric(w.pending, 300, "pending (max over statuses)"),
                                cw_metric(w.admitted, 300, "admitted")],
                          width=width, height=ROW_HEIGHT, region=region)


def _evictions_widget(w: TeamWatch, width: int, region: Optional[str]) -> cw.GraphWidget:
    return cw.GraphWidget(title=f"{w.team}: evictions by reason (per hour)",
                          left=[cw.MathExpression(expression=w.evictions_search, using_metrics={},
                                                  period=Duration.hours(1), label="")],
                          width=width, height=ROW_HEIGHT, region=region)


def _utilisation_widget(w: TeamWatch, width: int, region: Optional[str]) -> cw.IWidget:
    if w.utilisation is None:
        return cw.TextWidget(markdown=f"**{w.team}**: owns no accelerators", width=width, height=ROW_HEIGHT)
    return cw.GraphWidget(title=f"{w.team}: accelerator utilisation (%)",
                          left=[cw_metric(w.utilisation, 300, w.utilisation.name)],
                          left_y_axis=cw.YAxisProps(min=0, max=100), width=width, height=ROW_HEIGHT, region=region)


def _flavor_line(f: FlavorWatch) -> str:
    lend = "all" if f.lending_limit is None else str(f.lending_limit)
    return f"{f.nominal} {f.unit} on {f.instance_type} (lends {lend}, borrows up to {f.borrowing_limit})"


def _summary(w: TeamWatch, width: int) -> cw.TextWidget:
    owns = "; ".join(_flavor_line(f) for f in w.flavors) or "nothing"
    lines = [
        f"### {w.team}{' (shared pool)' if w.is_shared_pool else ''}",
        f"{w.strategy}, fair-share weight {w.fair_share_weight}",
        f"Owns: {owns}",
        f"Operations: {w.operations_owner or 'platform'}; cost: {w.cost_owner or 'platform'}",
        f"Queue `{w.cluster_queue}`",
    ]
    return cw.TextWidget(markdown="\n\n".join(lines), width=width, height=ROW_HEIGHT)


def team_row(w: TeamWatch, region: Optional[str] = None) -> list[cw.IWidget]:
    """One dashboard row (24 columns): summary, usage, queue, evictions, utilisation.

    ``region``: the metrics' region (the plan's); given, the dashboard body is a plain string, a third smaller.
    """
    return [_summary(w, 4), _usage_widget(w, 6, region), _queue_widget(w, 5, region),
            _evictions_widget(w, 5, region), _utilisation_widget(w, 4, region)]


class ClusterDashboardPage(Construct):
    """One page of the cluster dashboard (construct id: its name), one row per team on it.

    A row is about 2.6 kB of template: 300 teams make 6 pages and ~780 kB, so past that put pages in
    separate stacks (CloudFormation's 1 MB per template).
    """

    def __init__(self, scope: Construct, id: str, *, monitoring: MonitoringPlan, name: str,
                 teams: Sequence[str]) -> None:
        super().__init__(scope, id)
        self.dashboard = cw.Dashboard(self, "Resource", dashboard_name=name)
        self.dashboard.add_widgets(cw.TextWidget(
            markdown=f"# {monitoring.spec_name}: HyperPod governance ({monitoring.cluster_name})\n"
            "Usage against nominal quota per instance type (borrowed = usage above nominal), pending work, "
            "evictions by reason, accelerator utilisation. Alarms go to each team's owners.",
            width=24, height=2))
        for team in teams:
            self.dashboard.add_widgets(*team_row(monitoring.team(team), monitoring.region))


class TeamDashboard(Construct):
    """A team's own dashboard: its row, its alarms' state and what each alarm asks of whom."""

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, region: Optional[str] = None,
                 alarms: Optional[Mapping[str, cw.Alarm]] = None) -> None:
        super().__init__(scope, id)
        assert watch.dashboard is not None, "TeamDashboard needs a TeamWatch with a dashboard name"
        self.dashboard = cw.Dashboard(self, "Resource", dashboard_name=watch.dashboard)
        self.dashboard.add_widgets(*team_row(watch, region))
        if alarms:
            self.dashboard.add_widgets(
                cw.AlarmStatusWidget(title=f"{watch.team}: alarms", alarms=[alarms[k] for k in sorted(alarms)],
                                     width=8, height=ROW_HEIGHT),
                cw.TextWidget(markdown="\n\n".join(f"**{a.kind}** — {a.description}" for a in watch.alarms),
                              width=16, height=ROW_HEIGHT),
            )


class TeamMonitoring(Construct):
    """Per team (construct id: the team's name): its alarms and, if planned, its dashboard.

    ``topics``: topic key (``AlarmPlan.topic``) -> topic, e.g. ``AlarmTopics.topics`` (from any stack).
    """

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, topics: Mapping[str, sns.ITopic],
                 region: Optional[str] = None) -> None:
        super().__init__(scope, id)
        self.alarms = TeamAlarms(self, "Alarms", watch=watch, topics=topics)
        self.dashboard = (TeamDashboard(self, "Dashboard", watch=watch, region=region, alarms=self.alarms.alarms)
                          if watch.dashboard else None)
