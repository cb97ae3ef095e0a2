"""Governance feedback loop in CloudWatch: encrypted alarm topics per owner, per-team alarms, dashboards.

Every input is a part of the monitoring plan (``plan/monitoring.py``); nothing here decides a threshold, a name
or an owner.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from aws_cdk import Aws, aws_cloudwatch as cw, aws_iam as iam
from aws_cdk import aws_kms as kms, aws_sns as sns
from constructs import Construct

from ..plan.monitoring import MAX_ALARM_METRICS, AlarmPlan, Metric, MonitoringPlan, TeamWatch, TopicPlan
from .dashboard_widgets import (ROW_HEIGHT, Widget, body_with_references, dashboard_body, layout, placeholder,
                                statistic, team_row, text_widget)
from .plain import Fragment, get_att, included

CLOUDWATCH_PRINCIPAL = "cloudwatch.amazonaws.com"
ALERT_MANAGER_PRINCIPAL = "aps.amazonaws.com"  # a Prometheus workspace's alert manager (monitoring.prometheus)
Topics = Optional[Mapping[str, sns.ITopic]]  # topic key -> topic, for the keys ``topic_arns`` lacks
ALARM_TYPE = "AWS::CloudWatch::Alarm"
DASHBOARD_TYPE = "AWS::CloudWatch::Dashboard"


class AlarmTopics(Construct):
    """One SNS topic per owner (and the platform's), all encrypted with one rotating customer-managed key.

    The key policy lets CloudWatch alarms of this account encrypt (publish to) the topics; each topic allows
    ``sns:Publish`` by CloudWatch alarms of this account only, and denies requests without TLS. Each topic is
    three resources (topic, policy, subscription): past ~150 owners, split the topics over several stacks and
    pass the first one's ``key`` to the others.

    The topics are plain data (:func:`plain_topics`, the one emitter, which a teams stack also calls into its
    own fragment) in one ``CfnInclude``; ``topics`` are the included ``CfnTopic`` resources (the escape hatch) and
    ``topic_arns`` their ARNs (each topic's ``Ref``, as the L2 topic's ``topic_arn`` was; another stack's
    reference to one is an export). The key, when made here, is aws-cdk-lib's ``kms.Key``.
    """

    def __init__(self, scope: Construct, id: str, *, topics: Sequence[TopicPlan], key: Optional[kms.IKey] = None,
                 topic_names: Optional[Mapping[str, str]] = None) -> None:
        """``topic_names``: topic key -> topic name, when a Prometheus workspace's alert manager publishes to the
        topics too (it reaches them by name; the key and each topic's policy then let it publish)."""
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
            if topic_names is not None:
                created.add_to_resource_policy(iam.PolicyStatement(
                    sid="AlertManagerPublishesToEncryptedTopics",
                    principals=[iam.ServicePrincipal(ALERT_MANAGER_PRINCIPAL)],
                    actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                    resources=["*"],  # in a key policy, "*" is this key
                    conditions={"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
                ))
            key = created
        self.key: kms.IKey = key
        self.topics: dict[str, sns.CfnTopic] = {}
        self.topic_arns: dict[str, str] = {}  # topic key -> ARN token, as read once from jsii
        if not topics:
            return
        fragment = Fragment(self)
        ids = plain_topics(fragment, [], topics=topics, key_arn=self.key.key_arn, topic_names=topic_names)
        include = fragment.include_resources("Resources")
        for topic_key, logical in ids.items():
            topic: sns.CfnTopic = include.get_resource(logical)  # type: ignore[assignment]
            self.topics[topic_key] = topic
            self.topic_arns[topic_key] = topic.ref


def plain_topics(fragment: Fragment, below: Sequence[str], *, topics: Sequence[TopicPlan], key_arn: str,
                 topic_names: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The owners' topics as plain data in ``fragment``, where ``AlarmTopics`` at ``below`` puts them, encrypted
    with the key of ARN ``key_arn``: per topic, in key order, the topic, its policy (TLS only; publishing by this
    account's alarms) and the email subscription, as aws-cdk-lib's ``sns.Topic`` (``enforce_ssl``,
    ``add_to_resource_policy``) and ``EmailSubscription`` render them at ``<below>/<key>/Resource``
    (tests/constructs/test_plain_teams.py and test_plain_pinned.py build those and compare). Topic key -> the
    topic's logical id (an alarm in another fragment reaches it with ``Fn.ref``). ``topic_names``: as
    ``AlarmTopics`` takes it (a Prometheus alert manager publishes too)."""
    ids: dict[str, str] = {}
    for plan in sorted(topics, key=lambda t: t.key):
        at = [*below, plan.key, "Resource"]
        named = {} if topic_names is None else {"TopicName": topic_names[plan.key]}
        topic = fragment.add([*at, "Resource"], "AWS::SNS::Topic", {
            "DisplayName": plan.display_name[:100], "KmsMasterKeyId": key_arn, **named})
        ref = {"Ref": topic}
        source_arn = {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":cloudwatch:", {"Ref": "AWS::Region"},
                                        ":", {"Ref": "AWS::AccountId"}, ":alarm:*"]]}
        fragment.add([*at, "Policy", "Resource"], "AWS::SNS::TopicPolicy", {
            "PolicyDocument": {"Statement": [
                {"Action": "sns:Publish", "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                 "Effect": "Deny", "Principal": "*", "Resource": ref, "Sid": "AllowPublishThroughSSLOnly"},
                {"Action": "sns:Publish",
                 "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
                               "ArnLike": {"aws:SourceArn": source_arn}},
                 "Effect": "Allow", "Principal": {"Service": CLOUDWATCH_PRINCIPAL}, "Resource": ref,
                 "Sid": "CloudWatchAlarmsPublish"},
                *([] if topic_names is None else [
                    {"Action": ["sns:Publish", "sns:GetTopicAttributes"],
                     "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}},
                     "Effect": "Allow", "Principal": {"Service": ALERT_MANAGER_PRINCIPAL}, "Resource": ref,
                     "Sid": "AlertManagerPublish"}]),
            ], "Version": "2012-10-17"},
            "Topics": [ref]})
        if plan.email:
            fragment.add([*at, plan.email, "Resource"], "AWS::SNS::Subscription", {
                "Endpoint": plan.email, "Protocol": "email", "TopicArn": ref})
        ids[plan.key] = topic
    return ids


# Alarms and dashboards are plain data: each is one L1 resource built from dicts here (one jsii call), not an L2
# alarm with metric, expression, duration and action objects (about ten calls each; 1,200 alarms at 300 teams).
# The properties are the ones the L2 constructs render (aws-cdk-lib's aws-cloudwatch), so the templates, the
# logical ids (``<kind>/Resource``, ``Dashboard/Resource``) and the dashboard bodies are unchanged.

def _dimensions(m: Metric) -> list[dict[str, str]]:
    return [{"Name": k, "Value": v} for k, v in sorted(m.dimension_map().items())]


def alarm_metrics(a: AlarmPlan) -> dict[str, Any]:
    """The ``AWS::CloudWatch::Alarm`` properties that say what the alarm reads: one metric, or metric math."""
    if a.expression is None:
        m = a.metrics[0][1]
        return {"MetricName": m.name, "Namespace": m.namespace, "Period": a.period, "Statistic": statistic(m),
                "Dimensions": _dimensions(m)}
    if len(a.metrics) + 1 > MAX_ALARM_METRICS:
        raise ValueError(f"alarm {a.name}: {len(a.metrics) + 1} metrics, CloudWatch allows {MAX_ALARM_METRICS}")
    queries: list[dict[str, Any]] = [{"Id": "expr_1", "Expression": a.expression, "Label": a.kind,
                                      "ReturnData": True}]
    for key, m in a.metrics:
        queries.append({"Id": key, "ReturnData": False, "MetricStat": {
            "Metric": {"MetricName": m.name, "Namespace": m.namespace, "Dimensions": _dimensions(m)},
            "Period": a.period, "Stat": statistic(m)}})
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
    logical id. Alarms that are Prometheus rules instead are left out (``AlarmPlan.in_cloudwatch``)."""
    return {a.kind: fragment.add([*below, a.kind, "Resource"], ALARM_TYPE, alarm_properties(a, arns[a.topic]))
            for a in watch.cloudwatch_alarms}


def _topic_arns(watch: TeamWatch, topics: Topics,
                topic_arns: Optional[Mapping[str, str]]) -> dict[str, str]:
    """Topic key -> ARN token for the topics ``watch``'s alarms notify: read from jsii once per topic not given."""
    arns: dict[str, str] = dict(topic_arns or {})
    for a in watch.alarms:
        if a.topic not in arns:
            if not topics or a.topic not in topics:
                raise ValueError(f"alarm {a.name} notifies the topic {a.topic}: neither topic_arns nor topics has it")
            arns[a.topic] = topics[a.topic].topic_arn
    return arns


class TeamAlarms(Construct):
    """A team's alarms (one per kind, the construct id is the kind), each notifying its owner's topic.

    ``topic_arns``: topic key -> ARN of the topics already read (e.g. ``AlarmTopics.topic_arns``); the others are
    read from ``topics``. The alarms are one ``CfnInclude`` (``plain.Fragment``): ``logical_ids`` names them,
    ``alarms`` reads them from jsii when asked.
    """

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, topics: Topics = None,
                 topic_arns: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(scope, id)
        fragment = Fragment(self)
        self.logical_ids = _alarms(fragment, [], watch, _topic_arns(watch, topics, topic_arns))
        self._include = fragment.include("Alarms")

    @property
    def alarms(self) -> dict[str, cw.CfnAlarm]:
        """Kind -> the alarm (read from jsii)."""
        return included(self._include, self.logical_ids)  # type: ignore[return-value]


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
                arns.append(placeholder(len(references)))
                references.append(arn)
            else:
                arns.append(arn)
        rows.append([
            {"type": "alarm", "width": 8, "height": ROW_HEIGHT,
             "properties": {"title": f"{watch.team}: alarms", "alarms": arns}},
            text_widget("\n\n".join(f"**{a.kind}** — {a.description}" for a in watch.alarms), width=16),
        ])
    body = body_with_references(layout(rows), references)
    return fragment.add([*below, "Resource", "Resource"], DASHBOARD_TYPE,
                        {"DashboardName": watch.dashboard, "DashboardBody": body})


class ClusterDashboardPage(Construct):
    """One page of the cluster dashboard (construct id: its name), one row per team on it.

    A row is about 2.6 kB of template: 300 teams make 6 pages and ~780 kB, so past that put pages in
    separate stacks (CloudFormation's 1 MB per template).
    """

    def __init__(self, scope: Construct, id: str, *, monitoring: MonitoringPlan, name: str,
                 watches: Sequence[TeamWatch]) -> None:
        super().__init__(scope, id)
        header = text_widget(
            f"# {monitoring.spec_name}: HyperPod governance ({monitoring.cluster_name})\n"
            "Usage against nominal quota per instance type (borrowed = usage above nominal), pending work, "
            "evictions by reason, accelerator utilisation. Alarms go to each team's owners.",
            width=24, height=2)
        rows = [[header], *(team_row(watch, monitoring.region) for watch in watches)]
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


def team_monitoring(fragment: Fragment, below: Sequence[str], *, watch: TeamWatch, topics: Topics = None,
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

    ``topics``: topic key (``AlarmPlan.topic``) -> topic (``sns.ITopic``, e.g. one imported by ARN), for the keys
    ``topic_arns`` lacks; ``topic_arns``: topic key -> ARN (e.g. ``AlarmTopics.topic_arns``, from any stack).
    Alarms and dashboard are one ``CfnInclude`` (``plain.Fragment``) at the logical ids the L2 constructs had
    (``Alarms/<kind>/Resource``, ``Dashboard/Resource/Resource``); ``alarms`` and ``dashboard`` read them from
    jsii when asked.
    """

    def __init__(self, scope: Construct, id: str, *, watch: TeamWatch, topics: Topics = None,
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
