"""The spec-level simulator runs the Kueue settings the plan emits, read from their one declaration."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.kueue import KUEUE_SETTINGS, cluster_queue_spec, kueue_manager_config
from hyperpod_gov.simulate.engine import simulate
from hyperpod_gov.simulate.spec_level import fair_sharing_from_config, queue_from_cluster_queue, scenario_from_plan
from hyperpod_gov.simulate.trace import parse_trace
from hyperpod_gov.spec import load_spec
from hyperpod_gov.spec.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
# t2 (ml-engineering, training) borrows 3 GPUs at minute 5; r1 (researchers, no priority class: the lowest,
# as low as training) needs them back at minute 10.
TRACE = (
    "name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes\n"
    "t1,ml-engineering,training,ml.g5.2xlarge,,6,0,120\n"
    "t2,ml-engineering,training,ml.g5.2xlarge,,3,5,60\n"
    "r1,researchers,,ml.g5.2xlarge,,5,10,90\n"
)


@pytest.fixture(scope="module", params=["startup", "enterprise"])
def plan(request):
    return build_plan(load_spec(ROOT / "examples" / f"{request.param}.yaml", today=dt.date(2026, 11, 30)))


def test_the_simulated_queues_and_fair_sharing_are_what_the_plan_emits(plan):
    scenario, _ = scenario_from_plan(plan, [])
    emitted = json.loads(plan.kueue_config)["fairSharing"]
    assert scenario.fair_sharing == emitted["enable"]
    assert list(scenario.preemption_strategies) == emitted["preemptionStrategies"]
    by_name = {q.name: q for q in scenario.queues}
    for team in plan.teams:  # plan.cluster_queue_spec is what the Kueue chart renders
        assert by_name[team.cluster_queue] == queue_from_cluster_queue(team.cluster_queue,
                                                                       plan.cluster_queue_spec(team))


def test_a_changed_preemption_setting_reaches_the_emitted_objects_and_the_simulator_alike():
    plan = build_plan(load_spec(ROOT / "examples" / "startup.yaml", today=dt.date(2026, 11, 30)))
    rows = parse_trace(TRACE, "t.csv")
    today, _ = scenario_from_plan(plan, rows)
    assert [(p.victim, p.reason) for p in simulate(today).preemptions] == [("t2", "InCohortReclamation")]

    changed = dataclasses.replace(KUEUE_SETTINGS, reclaim_when_lending="LowerPriority",
                                  fair_sharing_strategies=("LessThanInitialShare",))
    scenario, _ = scenario_from_plan(plan, rows, changed)
    by_name = {q.name: q for q in scenario.queues}
    for team in plan.teams:
        emitted = cluster_queue_spec(plan.cohort, plan.covered_resources, team, changed)["preemption"]
        assert by_name[team.cluster_queue].preemption.reclaim_within_cohort == emitted["reclaimWithinCohort"]
    assert by_name[plan.team("researchers").cluster_queue].preemption.reclaim_within_cohort == "LowerPriority"
    config = json.loads(kueue_manager_config(plan.fair_sharing, changed))["fairSharing"]
    assert list(scenario.preemption_strategies) == config["preemptionStrategies"] == ["LessThanInitialShare"]
    # r1 is not of a higher priority than t2, so LowerPriority takes nothing back: the what-if follows.
    assert simulate(scenario).preemptions == ()


def test_a_strategy_the_model_does_not_know_is_reported_with_its_path():
    with pytest.raises(SpecError) as exc:
        fair_sharing_from_config({"enable": True, "preemptionStrategies": ["LessThanInitialShare", "Sometimes"]})
    issue = exc.value.issues[0]
    assert "fairSharing.preemptionStrategies[1]" in str(issue) and "Sometimes" in str(issue)
