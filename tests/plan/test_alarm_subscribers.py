"""HPG-P007 (issue 58): an alarm that publishes to a topic nobody subscribes to is a warning, never silent.

The platform topic takes the alarms of teams without a contract; it has a subscriber only when
monitoring.platformEmail is set. A contract's owners subscribe to their own topics."""

from __future__ import annotations

import copy

import pytest
import yaml

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.invariants import check_plan
from hyperpod_gov.plan.watches import PLATFORM_TOPIC
from hyperpod_gov.spec import parse_spec
from tests.conftest import EXAMPLES, TODAY


@pytest.fixture(scope="module")
def startup() -> dict:
    return yaml.safe_load((EXAMPLES / "startup.yaml").read_text())


def _findings(data: dict) -> list:
    plan = build_plan(parse_spec(copy.deepcopy(data), today=TODAY))
    return plan, [i for i in check_plan(plan) if i.rule == "HPG-P007"]


def _without_contracts(data: dict, *teams: str) -> dict:
    out = copy.deepcopy(data)
    for t in out["teams"]:
        if not teams or t["name"] in teams:
            t.pop("contract", None)
    return out


def test_teams_without_contracts_and_no_platform_email_are_a_warning_counting_the_unheard_alarms(startup):
    plan, found = _findings(_without_contracts(startup))
    assert [(i.path, i.severity) for i in found] == [("monitoring.platformEmail", "warning")]
    assert len(plan.monitoring.alarms) == 12  # 4 per team: every alarm of the spec goes to the platform topic
    assert found[0].problem.startswith("is not set, so 12 alarms of chatbot, ml-engineering, researchers (no contract "
                                       "owner to receive them) publish to the platform topic, which nobody "
                                       "subscribes to")


def test_one_team_without_a_contract_is_named_alone_with_its_alarms(startup):
    plan, found = _findings(_without_contracts(startup, "researchers"))
    unheard = [a for a in plan.monitoring.team("researchers").alarms if a.topic == PLATFORM_TOPIC]
    assert unheard and len(found) == 1
    assert f"so {len(unheard)} alarms of researchers (" in found[0].problem


@pytest.mark.parametrize("change", ["platform email", "contracts"])
def test_no_warning_when_every_alarm_has_a_subscriber(startup, change):
    data = _without_contracts(startup) if change == "platform email" else copy.deepcopy(startup)
    if change == "platform email":
        data.setdefault("monitoring", {})["platformEmail"] = "platform@example.com"
    plan, found = _findings(data)
    assert found == []
    topics = {t.key: t.email for t in plan.monitoring.topics}
    assert all(topics[a.topic] for a in plan.monitoring.alarms)  # what the rule promises, read independently
