"""The fragment kinds not compared elsewhere render as the constructs they stand in for, byte for byte (issue 54):
a team's alarms (aws-cdk-lib's L2 ``Alarm`` they replaced, one metric and metric math), its dashboard
(``CfnDashboard`` at the L2 ``Dashboard``'s path) and its stack outputs (``CfnOutput``), with path metadata on
and off.

The other kinds are compared in tests/constructs/test_plain.py (access entries; identities: role, default policy,
association) and test_plain_teams.py (topics, their policies and subscriptions; quotas of both backends; the
namespace wait; applied manifests; ``DependsOn`` between them); the logical ids of every kind at every kind of
path in test_plain_pinned.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_cloudwatch as cw, aws_cloudwatch_actions as cw_actions, aws_sns as sns
from constructs import Construct

from hyperpod_gov.constructs.monitoring import TeamMonitoring
from hyperpod_gov.constructs.plain import PATH_METADATA_CONTEXT, Fragment
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.watches import AlarmPlan
from hyperpod_gov.stacks.governance import team_outputs
from tests.synth_helpers import minimal_app

STACK = "acme-teams"


def _enum(enum: Any, value: str) -> Any:
    """The aws-cdk-lib enum member of a CloudFormation value ("GreaterThanThreshold" -> GREATER_THAN_THRESHOLD)."""
    return getattr(enum, re.sub(r"(?<!^)([A-Z])", r"_\1", value).upper())


def _l2_alarm(scope: Construct, a: AlarmPlan, topic: sns.ITopic) -> cw.Alarm:
    """The L2 alarm ``TeamMonitoring`` put at ``Alarms/<kind>`` before its alarms were plain data."""
    period = cdk.Duration.seconds(a.period)

    def metric(m) -> cw.Metric:
        return cw.Metric(namespace=m.namespace, metric_name=m.name, dimensions_map=m.dimension_map(),
                         statistic=m.statistic, period=period)

    signal: cw.IMetric
    if a.expression is None:
        (_, m), = a.metrics
        signal = metric(m)
    else:
        signal = cw.MathExpression(expression=a.expression, label=a.kind, period=period,
                                   using_metrics={key: metric(m) for key, m in a.metrics})
    alarm = cw.Alarm(scope, a.kind, metric=signal, alarm_name=a.name, alarm_description=a.description[:1024],
                     threshold=a.threshold, comparison_operator=_enum(cw.ComparisonOperator, a.comparison),
                     evaluation_periods=a.evaluation_periods, datapoints_to_alarm=a.datapoints_to_alarm,
                     treat_missing_data=_enum(cw.TreatMissingData, a.treat_missing_data))
    alarm.add_alarm_action(cw_actions.SnsAction(topic))
    alarm.add_ok_action(cw_actions.SnsAction(topic))
    return alarm


def _synth(build, path_metadata: bool) -> dict[str, Any]:
    app = minimal_app(context={PATH_METADATA_CONTEXT: True} if path_metadata else {})
    stack = cdk.Stack(app, STACK)
    build(stack)
    return app.synth().get_stack_by_name(STACK).template


@pytest.fixture(scope="module")
def team(startup_spec):
    plan = build_plan(startup_spec)
    watch = next(w for w in plan.monitoring.teams if w.dashboard and w.alarms
                 and any(a.expression for a in w.alarms) and any(a.expression is None for a in w.alarms))
    return plan, watch, next(t for t in plan.tenants if t.name == watch.team)


@pytest.mark.parametrize("path_metadata", [False, True])
def test_a_teams_plain_alarms_dashboard_and_outputs_render_as_the_constructs_do(team, path_metadata):
    plan, watch, tenant = team
    topics = {a.topic for a in watch.alarms}

    def plain(stack: cdk.Stack) -> None:
        owners = {key: sns.Topic(stack, f"Topic-{key}") for key in sorted(topics)}
        scope = Construct(stack, tenant.name)
        TeamMonitoring(scope, "Monitoring", watch=watch, topics=owners, region=plan.monitoring.region)
        fragment = Fragment(scope, stack=stack, components=[tenant.name])
        team_outputs(fragment, ["Outputs"], plan, tenant)
        fragment.include("Plain")

    included = _synth(plain, path_metadata)
    dashboards = [r for r in included["Resources"].values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
    body = dashboards[0]["Properties"]["DashboardBody"]

    def real(stack: cdk.Stack) -> None:
        owners = {key: sns.Topic(stack, f"Topic-{key}") for key in sorted(topics)}
        monitoring = Construct(Construct(stack, tenant.name), "Monitoring")
        alarms = Construct(monitoring, "Alarms")
        for a in watch.alarms:
            _l2_alarm(alarms, a, owners[a.topic])
        cw.CfnDashboard(Construct(Construct(monitoring, "Dashboard"), "Resource"), "Resource",
                        dashboard_name=watch.dashboard, dashboard_body=cdk.Token.as_string(body))
        outputs = Construct(monitoring.node.scope, "Outputs")
        # team_outputs' ids, in its order; the values are the fragment's (the namespace's hand-checked below)
        for id, output in zip(("Namespace", "LocalQueue", "PriorityClasses"), included["Outputs"].values()):
            cdk.CfnOutput(outputs, id, value=output["Value"], description=output["Description"])

    constructs = _synth(real, path_metadata)
    kinds = sorted({r["Type"] for r in included["Resources"].values()})
    assert kinds == ["AWS::CloudWatch::Alarm", "AWS::CloudWatch::Dashboard", "AWS::SNS::Topic"]
    assert len(dashboards) == 1 and isinstance(body, dict)  # a Fn::Join of the alarms' ARNs
    for logical, resource in constructs["Resources"].items():
        assert json.dumps(included["Resources"].get(logical)) == json.dumps(resource), logical
    assert json.dumps(included["Resources"]) == json.dumps(constructs["Resources"])  # the order too
    assert json.dumps(included["Outputs"]) == json.dumps(constructs["Outputs"])
    namespace = next(o for id, o in included["Outputs"].items() if "OutputsNamespace" in id)
    assert namespace == {"Description": f"Namespace of team {tenant.name}", "Value": tenant.namespace}
    if path_metadata:
        assert all("aws:cdk:path" in r["Metadata"] for r in included["Resources"].values())
