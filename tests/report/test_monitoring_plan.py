"""The monitoring plan (what is watched per team, who hears it, what it costs) and its spec models. No CDK."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.monitoring import (
    KUEUE_NAMESPACE,
    MonitoringInputs,
    alarm_name,
    build_monitoring_plan,
    monitoring_inputs,
    monitoring_plan,
)
from hyperpod_gov.spec import parse_spec
from hyperpod_gov.spec.loader import issues_from_validation
from hyperpod_gov.spec.monitoring import AlarmOverrides, AlarmThresholds, Monitoring
from tests.conftest import TODAY


@pytest.mark.parametrize("example, dashboards, alarms, alarm_metrics, streams, topics", [
    # 3 teams: 1 cluster + 3 team dashboards; 4 alarms each reading 2+1+1+2 metrics; per queue 3 pending + 1 evicted
    # + 1 admitted + 2 x (1 + 3 resources + 1 flavor x 3 + 1 flavor) = 21 streams, plus 7 cluster-wide;
    # topics: cfo, mleng, oncall, research and the platform's.
    ("startup", 4, 12, 18, 3 * 21 + 7, 5),
    # 5 teams on 2 flavors (p5, m5): per queue 3 + 1 + 1 + 2 x (1 + 3 + 2 x 3 + 2) = 29 streams.
    ("enterprise", 6, 20, 30, 5 * 29 + 7, 7),
])
def test_counts_for_explain(request, example, dashboards, alarms, alarm_metrics, streams, topics):
    spec = request.getfixturevalue(f"{example}_spec")
    counts = monitoring_plan(build_plan(spec)).counts
    assert (counts.dashboards, counts.alarms, counts.alarm_metrics, counts.kueue_metric_streams, counts.topics) == (
        dashboards, alarms, alarm_metrics, streams, topics)
    assert counts.lines()[0] == f"dashboards: {dashboards}"


def test_queue_names_come_from_the_plan_in_both_modes(startup_spec, enterprise_spec):
    for spec in (startup_spec, enterprise_spec):
        plan = build_plan(spec)
        m = monitoring_plan(plan)
        for team in plan.teams:
            w = m.team(team.name)
            assert w.cluster_queue == team.cluster_queue == f"hyperpod-ns-{team.name}-clusterqueue"
            assert w.pending.dimension_map() == {"ClusterName": spec.cluster.name + "-eks",
                                                 "ClusterQueue": team.cluster_queue}


def test_usage_is_read_per_flavor_and_resource_with_limits_from_the_plan(enterprise_spec):
    m = monitoring_plan(build_plan(enterprise_spec))
    (f,) = m.team("applied-research").flavors
    assert (f.instance_type, f.resource, f.nominal, f.borrowing_limit, f.lending_limit) == (
        "ml.p5.48xlarge", "nvidia.com/gpu", 5, 7, None)  # 150% of 5, rounded down
    assert f.usage.namespace == KUEUE_NAMESPACE
    assert [d for d, _ in f.usage.dimensions] == ["ClusterName", "ClusterQueue", "Flavor", "Resource"]
    (dont_lend,) = m.team("foundation-models").flavors
    assert (dont_lend.borrowing_limit, dont_lend.lending_limit) == (0, 0)


def test_alarm_names_cannot_collide_across_teams_and_kinds():
    # '-' joins would give 'a-idle-capacity' for both (a, idle-capacity) and (a-idle, capacity)
    assert alarm_name("s", "a", "idle-capacity") != alarm_name("s", "a-idle", "capacity")


def test_the_shared_pool_is_on_the_dashboard_without_alarms(base):
    base["sharedPool"] = {"name": "shared"}
    spec = parse_spec(base, today=TODAY)
    m = monitoring_plan(build_plan(spec))
    pool = m.team("shared")
    assert pool.is_shared_pool and pool.alarms == () and pool.dashboard is None
    assert "shared" in m.cluster_dashboards[0][1]


def test_a_team_override_changes_only_its_own_thresholds(startup_spec):
    plan = build_plan(startup_spec)
    inputs = monitoring_inputs(plan)
    overridden = MonitoringInputs(**{**inputs.__dict__,
                                     "monitoring": Monitoring(alarms=AlarmThresholds(idle_percent=10)),
                                     "overrides": {"chatbot": AlarmOverrides(idle_percent=5, idle_hours=48)}})
    m = build_monitoring_plan(plan, overridden)
    chatbot = {a.kind: a for a in m.team("chatbot").alarms}["idle-capacity"]
    others = {a.kind: a for a in m.team("researchers").alarms}["idle-capacity"]
    assert (chatbot.threshold, chatbot.evaluation_periods) == (5, 48)
    assert (others.threshold, others.evaluation_periods) == (10, 24)


def test_teams_without_a_contract_alarm_on_the_platform_topic(base):
    spec = parse_spec(base, today=TODAY)
    m = monitoring_plan(build_plan(spec))
    assert [t.key for t in m.topics] == ["platform"]
    assert {a.topic for a in m.alarms} == {"platform"}


def test_more_than_ten_flavors_keep_an_alarm_within_cloudwatchs_ten_metrics(base):
    types = ["ml.g5.xlarge", "ml.g5.2xlarge", "ml.g5.4xlarge", "ml.g5.8xlarge", "ml.g5.16xlarge", "ml.g6.xlarge",
             "ml.g6.2xlarge", "ml.g6.4xlarge", "ml.g6.8xlarge", "ml.g6.16xlarge", "ml.g6e.xlarge"]
    base["cluster"]["instanceGroups"] = [{"name": f"g{i}", "instanceType": t, "count": 1} for i, t in enumerate(types)]
    base["teams"] = [{"name": "wide", "quota": [{"instanceType": t, "count": 1} for t in types]}]
    spec = parse_spec(base, today=TODAY)
    m = monitoring_plan(build_plan(spec))
    assert all(len(a.metrics) <= 10 for a in m.alarms)


@pytest.mark.parametrize("data, message", [
    ({"alarms": {"idlePercent": 0}}, "alarms.idlePercent: is out of range (0); use a value at least 1"),
    ({"alarms": {"quotaNotHonouredMinutes": 42}},
     "alarms.quotaNotHonouredMinutes: is not a whole number of 5-minute periods (the alarms evaluate 5-minute "
     "periods) (42); use a multiple of 5, e.g. 40"),
    ({"platformEmail": "ops"}, "platformEmail: is not an email address ('ops'); use an address such as "
                               "platform@example.com"),
    ({"alarm": {}}, "alarm: is not a key the spec knows"),
])
def test_monitoring_spec_errors_name_the_path_value_and_fix(data, message):
    with pytest.raises(ValidationError) as info:
        Monitoring.model_validate(data)
    assert any(str(i).startswith(message) for i in issues_from_validation(info.value)), [
        str(i) for i in issues_from_validation(info.value)]
