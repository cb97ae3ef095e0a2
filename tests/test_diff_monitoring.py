"""`hyperpod-gov diff` shows changes of the alarms, the platform's email and team dashboards (the monitoring view)."""

from __future__ import annotations

import json

import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.diff import governance_diff
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY
from tests.test_cli_json import check

ENTERPRISE = EXAMPLES / "enterprise.yaml"


def _lines(mutate_old, mutate_new) -> list[str]:
    old, new = read_yaml(ENTERPRISE), read_yaml(ENTERPRISE)
    mutate_old(old)
    mutate_new(new)
    return governance_diff(build_plan(parse_spec(old, today=TODAY)), build_plan(parse_spec(new, today=TODAY)))


def _same(data: dict) -> None:
    pass


def _write(tmp_path, data: dict):
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_changed_idle_threshold_is_a_line_of_the_text_diff(tmp_path, capsys):
    data = read_yaml(ENTERPRISE)
    data["monitoring"] = {"alarms": {"idlePercent": 10}}
    assert main(["diff", str(ENTERPRISE), str(_write(tmp_path, data)), "--governance-only"]) == 0
    assert capsys.readouterr().out.splitlines()[1:3] == ["  alarm idle-capacity threshold: 20% -> 10%",
                                                         "Contract reviews (event-driven) and retirement:"]


def test_the_json_diff_of_a_threshold_is_valid_and_names_its_spec_path(tmp_path, capsys):
    data = read_yaml(ENTERPRISE)
    data["monitoring"] = {"alarms": {"idlePercent": 10}}
    assert main(["diff", str(ENTERPRISE), str(_write(tmp_path, data)), "--governance-only", "--format", "json"]) == 0
    doc = check("diff", json.loads(capsys.readouterr().out))
    [change] = doc["changes"]
    assert (change["view"], change["key"], change["path"], change["old"], change["new"], change["privilege"]) == (
        "cluster", "", "monitoring.alarms.idlePercent", "20%", "10%", False)
    assert change["review"] == []


def test_every_threshold_has_its_line_with_its_unit():
    changed = {"quotaNotHonouredMinutes": 45, "idlePercent": 10, "idleHours": 48, "preemptionsPerHour": 5,
               "lowUtilisationPercent": 30, "lowUtilisationMinutes": 90}
    assert _lines(_same, lambda d: d.update(monitoring={"alarms": changed})) == [
        "alarm quota-not-honoured after: 30 min -> 45 min",
        "alarm idle-capacity threshold: 20% -> 10%",
        "alarm idle-capacity after: 24 h -> 48 h",
        "alarm preempted threshold: 3 per hour -> 5 per hour",
        "alarm low-utilisation threshold: 20% -> 30%",
        "alarm low-utilisation after: 60 min -> 90 min",
    ]


def test_a_teams_own_threshold_is_added_and_removed_as_a_member():
    def override(d):
        d["teams"][2]["alarms"] = {"idlePercent": 5}

    member = "team applied-research alarm idle-capacity threshold 5%"
    assert _lines(_same, override) == [f"team alarm thresholds: + {member}"]
    assert _lines(override, _same) == [f"team alarm thresholds: - {member}"]


def test_a_removed_platform_email_says_the_alarms_go_to_nobody():
    def email(d):
        d["monitoring"] = {"platformEmail": "platform@example.com"}

    assert _lines(_same, email) == ["platform alarms email: none -> platform@example.com"]
    assert _lines(email, _same) == ["platform alarms email: platform@example.com -> none: the platform topic keeps no "
                                    "subscriber, so the alarms of teams without a contract go to nobody"]


def test_team_dashboards_turned_off_is_a_line():
    assert _lines(_same, lambda d: d.update(monitoring={"teamDashboards": False})) == ["team dashboards: on -> off"]


def test_an_unchanged_monitoring_section_adds_no_line():
    assert _lines(_same, lambda d: d.update(monitoring={"alarms": {"idlePercent": 20}})) == []
