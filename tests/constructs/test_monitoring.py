"""Monitoring constructs: encrypted owner topics, per-team alarms wired to them, dashboards; cdk-nag clean.

One app, synthesized once for the module: the startup example (every team has a contract) and a small spec whose
teams have none (their alarms go to the platform topic).
"""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks

from constructs import Construct

from hyperpod_gov.constructs.monitoring import AlarmTopics, ClusterDashboardPage, TeamMonitoring
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec

from hyperpod_gov.stacks.base import apply_feature_flags
from tests.synth_helpers import minimal_app


def _monitor(stack: cdk.Stack, monitoring) -> None:
    """The monitoring constructs as the stacks compose them, in one stack: every topic, every cluster dashboard
    page, every team's alarms and dashboard."""
    topics = AlarmTopics(stack, "Topics", topics=monitoring.topics)
    for name, watches in monitoring.dashboard_pages:
        ClusterDashboardPage(stack, name, monitoring=monitoring, name=name, watches=watches)
    scope = Construct(stack, "Teams")
    for watch in monitoring.teams:
        TeamMonitoring(scope, watch.team, watch=watch, topic_arns=topics.topic_arns, region=monitoring.region)


@pytest.fixture(scope="module")
def app_templates(startup_spec, today, tmp_path_factory):
    from tests.conftest import BASE

    no_contracts = parse_spec(json.loads(json.dumps(BASE)), today=today)
    app = minimal_app(outdir=str(tmp_path_factory.mktemp("monitoring")), analytics_reporting=False)
    apply_feature_flags(app)
    env = cdk.Environment(account="444444444444", region="us-east-1")
    stacks = {}
    for label, spec in (("startup", startup_spec), ("nocontract", no_contracts)):
        stack = cdk.Stack(app, f"monitoring-{label}", env=env)
        _monitor(stack, build_plan(spec).monitoring)
        stacks[label] = stack
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    assembly = app.synth()  # raises on an unacknowledged cdk-nag finding
    return {label: Template.from_stack(stack) for label, stack in stacks.items()}, assembly


@pytest.fixture(scope="module")
def startup_t(app_templates):
    return app_templates[0]["startup"]


@pytest.fixture(scope="module")
def nocontract_t(app_templates):
    return app_templates[0]["nocontract"]


def _by_type(template: Template, type_: str) -> dict:
    return template.find_resources(type_)


def test_synth_passes_cdk_nag_without_acknowledgements(app_templates):
    _, assembly = app_templates  # app.synth() raises on any unacknowledged finding; the report lists them
    report = json.loads((Path(assembly.directory) / "validation-report.json").read_text())
    assert [v for p in report["pluginReports"] for v in p.get("violations", [])] == []


def test_each_owner_gets_one_encrypted_topic_and_an_email_subscription(startup_t):
    topics = _by_type(startup_t, "AWS::SNS::Topic")
    # cfo, mleng, oncall, research and the platform topic
    assert len(topics) == 5
    assert all("KmsMasterKeyId" in t["Properties"] for t in topics.values())
    emails = sorted(s["Properties"]["Endpoint"] for s in _by_type(startup_t, "AWS::SNS::Subscription").values())
    assert emails == ["cfo@example.com", "mleng@example.com", "oncall@example.com", "research@example.com"]


def test_the_key_rotates_and_lets_cloudwatch_alarms_publish(startup_t):
    startup_t.has_resource_properties("AWS::KMS::Key", {
        "EnableKeyRotation": True,
        "KeyPolicy": {"Statement": Match.array_with([Match.object_like({
            "Principal": {"Service": "cloudwatch.amazonaws.com"},
            "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
        })])},
    })


def test_topics_deny_plain_http_and_allow_cloudwatch_of_this_account(startup_t):
    for policy in _by_type(startup_t, "AWS::SNS::TopicPolicy").values():
        statements = policy["Properties"]["PolicyDocument"]["Statement"]
        assert any(s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
                   for s in statements)
        publish = next(s for s in statements if s.get("Sid") == "CloudWatchAlarmsPublish")
        assert publish["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
        assert publish["Action"] == "sns:Publish"
        # Both conditions: the account alone would let any CloudWatch feature of the account publish (confused
        # deputy); the source ARN narrows it to alarms, in this partition, region and account.
        assert publish["Condition"] == {
            "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
            "ArnLike": {"aws:SourceArn": {"Fn::Join": ["", [
                "arn:", {"Ref": "AWS::Partition"}, ":cloudwatch:", {"Ref": "AWS::Region"}, ":",
                {"Ref": "AWS::AccountId"}, ":alarm:*"]]}},
        }


def _alarm(template: Template, name: str) -> dict:
    found = [r["Properties"] for r in _by_type(template, "AWS::CloudWatch::Alarm").values()
             if r["Properties"]["AlarmName"] == name]
    assert len(found) == 1, name
    return found[0]


def _topic_of(template: Template, email: str) -> str:
    for logical_id, s in _by_type(template, "AWS::SNS::Subscription").items():
        if s["Properties"]["Endpoint"] == email:
            return s["Properties"]["TopicArn"]["Ref"]
    raise AssertionError(email)


def test_four_alarms_per_team_with_owner_and_response_in_the_description(startup_t):
    alarms = _by_type(startup_t, "AWS::CloudWatch::Alarm")
    assert len(alarms) == 12
    for a in alarms.values():
        description = a["Properties"]["AlarmDescription"]
        assert "Owner: " in description and "Response: " in description


def test_quota_not_honoured_reads_pending_and_usage_of_the_teams_queue(startup_t):
    a = _alarm(startup_t, "startup/chatbot/quota-not-honoured")
    metrics = {m["Id"]: m for m in a["Metrics"]}
    expression = next(m["Expression"] for m in a["Metrics"] if "Expression" in m)
    assert expression == "IF(pending > 0 AND (u0 < 4), 1, 0)"
    pending = metrics["pending"]["MetricStat"]
    assert pending["Metric"]["Namespace"] == "ContainerInsights/Prometheus"
    assert pending["Metric"]["MetricName"] == "kueue_pending_workloads"
    assert pending["Metric"]["Dimensions"] == [
        {"Name": "ClusterName", "Value": "gpu-cluster-eks"},
        {"Name": "ClusterQueue", "Value": "hyperpod-ns-chatbot-clusterqueue"},
    ]
    assert pending["Stat"] == "Maximum"
    usage = metrics["u0"]["MetricStat"]["Metric"]
    assert {d["Name"]: d["Value"] for d in usage["Dimensions"]} == {
        "ClusterName": "gpu-cluster-eks", "ClusterQueue": "hyperpod-ns-chatbot-clusterqueue",
        "Flavor": "ml.g5.2xlarge", "Resource": "nvidia.com/gpu"}
    assert a["EvaluationPeriods"] == 6 and a["DatapointsToAlarm"] == 6
    assert a["TreatMissingData"] == "notBreaching"


def test_operational_alarms_notify_the_operations_owner_and_idle_capacity_the_cost_owner(startup_t):
    oncall, cfo = _topic_of(startup_t, "oncall@example.com"), _topic_of(startup_t, "cfo@example.com")
    for kind in ("quota-not-honoured", "preempted", "low-utilisation"):
        a = _alarm(startup_t, f"startup/chatbot/{kind}")
        assert a["AlarmActions"] == [{"Ref": oncall}] and a["OKActions"] == [{"Ref": oncall}]
    assert _alarm(startup_t, "startup/chatbot/idle-capacity")["AlarmActions"] == [{"Ref": cfo}]


def test_idle_capacity_is_a_day_below_the_idle_percentage(startup_t):
    a = _alarm(startup_t, "startup/ml-engineering/idle-capacity")
    assert a["ComparisonOperator"] == "LessThanThreshold" and a["Threshold"] == 20
    assert a["EvaluationPeriods"] == 24
    assert next(m["Expression"] for m in a["Metrics"] if "Expression" in m) == "100 * (u0) / 6"
    assert all(m["MetricStat"]["Period"] == 3600 for m in a["Metrics"] if "MetricStat" in m)


def test_preemption_alarm_counts_preempted_evictions(startup_t):
    a = _alarm(startup_t, "startup/researchers/preempted")
    assert a["MetricName"] == "kueue_evicted_workloads_total" and a["Statistic"] == "Sum"
    assert {"Name": "Reason", "Value": "Preempted"} in a["Dimensions"]
    assert a["Period"] == 3600 and a["Threshold"] == 3


def test_low_utilisation_reads_the_namespace_gpu_utilisation(startup_t):
    a = _alarm(startup_t, "startup/researchers/low-utilisation")
    util = next(m for m in a["Metrics"] if m["Id"] == "util")["MetricStat"]["Metric"]
    assert util["Namespace"] == "ContainerInsights" and util["MetricName"] == "pod_gpu_utilization"
    assert util["Dimensions"] == [{"Name": "ClusterName", "Value": "gpu-cluster-eks"},
                                  {"Name": "Namespace", "Value": "hyperpod-ns-researchers"}]


def test_teams_without_a_contract_alarm_on_the_platform_topic(nocontract_t):
    topics = _by_type(nocontract_t, "AWS::SNS::Topic")
    assert len(topics) == 1
    (topic_id,) = topics
    alarms = _by_type(nocontract_t, "AWS::CloudWatch::Alarm")
    # team-a owns 8 H100s, team-b 2 A10G instances: four alarms each
    assert len(alarms) == 8
    assert all(a["Properties"]["AlarmActions"] == [{"Ref": topic_id}] for a in alarms.values())
    assert all("the platform team" in a["Properties"]["AlarmDescription"] for a in alarms.values())


def test_one_cluster_dashboard_and_one_per_team(startup_t):
    boards = {r["Properties"]["DashboardName"]: r for r in _by_type(startup_t, "AWS::CloudWatch::Dashboard").values()}
    assert sorted(boards) == ["startup-governance", "startup-team-chatbot", "startup-team-ml-engineering",
                              "startup-team-researchers"]


def _body(template: Template, name: str) -> str:
    for r in _by_type(template, "AWS::CloudWatch::Dashboard").values():
        if r["Properties"]["DashboardName"] == name:
            body = r["Properties"]["DashboardBody"]
            return body if isinstance(body, str) else json.dumps(body)
    raise AssertionError(name)


def test_the_cluster_dashboard_shows_borrowed_usage_against_the_plans_nominal(startup_t):
    body = _body(startup_t, "startup-governance")
    # Borrowed = usage above nominal, nominal from the plan (ml-engineering owns 6 GPUs, borrows up to 3).
    assert "IF(u0 > 6, u0 - 6, 0)" in body
    assert "nominal + borrow limit 9" in body
    assert "kueue_evicted_workloads_total" in body and "SEARCH(" in body
    for team in ("chatbot", "ml-engineering", "researchers"):
        assert f"hyperpod-ns-{team}-clusterqueue" in body


def test_quota_not_honoured_does_not_page_normal_queueing_of_a_team_with_two_types():
    """Issue 22: a team owning two instance types, all of type A in use with more A-work waiting and its type B
    idle, is queueing normally; the alarm fires only when the team runs below its quota of every type it owns."""
    import copy
    import re

    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.spec import parse_spec
    from tests.conftest import BASE, TODAY

    data = copy.deepcopy(BASE)
    data["cluster"]["instanceGroups"] = [{"name": "a", "instanceType": "ml.g5.12xlarge", "count": 2},
                                         {"name": "b", "instanceType": "ml.g5.2xlarge", "count": 2}]
    for team in data["teams"]:
        team["quota"] = []
    data["teams"][0]["quota"] = [{"instanceType": "ml.g5.12xlarge", "count": 2},
                                 {"instanceType": "ml.g5.2xlarge", "count": 2}]
    data.pop("sharedPool", None)
    plan = build_plan(parse_spec(data, today=TODAY))
    team = plan.teams[0].name
    (alarm,) = [a for a in plan.monitoring.alarms if a.team == team and a.kind == "quota-not-honoured"]
    ids = {f"u{i}": m.dimension_map()["Flavor"] for i, (k, m) in enumerate(alarm.metrics[1:])}
    assert sorted(ids.values()) == ["ml.g5.12xlarge", "ml.g5.2xlarge"]

    def fires(pending: int, usage: dict[str, int]) -> bool:
        python = re.sub(r"IF\((.*), 1, 0\)", r"\1", alarm.expression).replace("AND", "and").replace("OR", "or")
        values = {"pending": pending, **{k: usage[flavor] for k, flavor in ids.items()}}
        return bool(eval(python, {}, values))  # noqa: S307 - our own metric math over numbers

    assert not fires(3, {"ml.g5.12xlarge": 8, "ml.g5.2xlarge": 0})  # A full, B idle: normal queueing
    assert fires(3, {"ml.g5.12xlarge": 4, "ml.g5.2xlarge": 0})  # below on both while work waits
    assert not fires(0, {"ml.g5.12xlarge": 0, "ml.g5.2xlarge": 0})  # nothing waits


@pytest.mark.parametrize("value", [25, 2.0, 0.5, -0.25, 1e-05, 1e-06, 1e-07, 1.5e-7, 123.456, 1e20, 1e21, 1.2345e21, 2.5e300,
                                   12345678901234567890.0])
def test_a_dashboard_body_written_in_python_resolves_as_to_json_string_does(value):
    from hyperpod_gov.constructs.dashboard_widgets import dashboard_body

    stack = cdk.Stack(minimal_app(), "S")
    alarm = cdk.aws_cloudwatch.CfnAlarm(stack, "A", comparison_operator="GreaterThanThreshold",
                                        evaluation_periods=1, threshold=1, metric_name="m", namespace="n",
                                        period=60, statistic="Sum")
    widgets = [{"type": "alarm", "width": 8, "height": 6, "x": 0, "y": 0,
                "properties": {"title": "team: alarms — \"quoted\"\n", "alarms": [alarm.attr_arn],
                               "region": cdk.Aws.REGION, "annotations": [{"value": value}]}}]
    assert stack.resolve(dashboard_body(widgets)) == stack.resolve(stack.to_json_string({"widgets": widgets}))
