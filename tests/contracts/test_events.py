"""Event-driven reviews: every change of the governance model's list marks the teams it concerns, with the reason."""

from __future__ import annotations

import pytest

from hyperpod_gov.contracts import events, retirement_notes
from tests.contracts.helpers import connected, plan_of, studio


def _events(mutate):
    old = connected()
    new = connected()
    mutate(new)
    return events(plan_of(old), plan_of(new))


def test_no_change_no_review():
    assert events(plan_of(connected()), plan_of(connected())) == []


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["teams"][0]["contract"].update(businessOwner="new@example.com"),
     "team team-a: review (project ownership): business owner lead@example.com -> new@example.com"),
    (lambda d: d["teams"][0]["contract"]["unifiedStudio"].update(projectId="newproject"),
     "team team-a: review (project ownership): Unified Studio project 5b3jcjsy4ar7zr -> newproject"),
    (lambda d: d["teams"][0]["contract"]["unifiedStudio"].update(
        projectRoleArn="arn:aws:iam::111111111111:role/datazone_usr_role_new"),
     "team team-a: review (access roles): project role arn:aws:iam::111111111111:role/datazone_usr_role_5b3jcjsy4ar7zr"
     "_c1ncty2ag0mhmf -> arn:aws:iam::111111111111:role/datazone_usr_role_new"),
    (lambda d: d["teams"][0]["contract"]["unifiedStudio"].update(
        accessRoleArn="arn:aws:iam::111111111111:role/studio-access"),
     "team team-a: review (access roles): Unified Studio access role none -> "
     "arn:aws:iam::111111111111:role/studio-access"),
    (lambda d: d["teams"][0]["access"].update(submitters=["arn:aws:iam::111111111111:role/B"]),
     "team team-a: review (access roles): principal + arn:aws:iam::111111111111:role/B"),
    (lambda d: d["teams"][0]["workloadIdentities"][0].update(targetRoleArn="arn:aws:iam::222222222222:role/w"),
     "team team-a: review (access roles): workload identity + trainer: arn:aws:iam::111111111111:role/acme-team-a-"
     "trainer -> arn:aws:iam::222222222222:role/w"),
    (lambda d: d["teams"][0]["contract"]["unifiedStudio"].update(region="eu-west-1"),
     "team team-a: review (account or region): Unified Studio account and region [444444444444, us-east-1] -> "
     "[444444444444, eu-west-1]"),
    (lambda d: d["teams"][0]["quota"][0].update(accelerators=4),
     "team team-a: review (cluster capacity): quota"),
    (lambda d: d["teams"][1]["contract"].update(dataClassification="restricted"),
     "team team-b: review (data classification): data classification confidential -> restricted"),
    (lambda d: d["teams"][1]["contract"].update(monitoring="paged 24x7"),
     "team team-b: review (monitoring coverage): monitoring expectations"),
])
def test_each_event_marks_its_team_with_the_reason(mutate, expected):
    lines = _events(mutate)
    assert any(line.startswith(expected) for line in lines), lines
    team = expected.split(":")[0]
    assert all(line.startswith(team + ":") for line in lines), lines


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["cluster"]["instanceGroups"][0].update(count=3), "review (cluster capacity): ml.p5.48xlarge "
     "instances 2 -> 3"),
    (lambda d: d["cluster"].update(kubernetesVersion="1.34"), "review (orchestrator version): Kubernetes version "
     "1.33 -> 1.34"),
    (lambda d: d["accounts"]["capacity"].update(region="us-west-2"), "review (account or region): capacity region "
     "us-east-1 -> us-west-2"),
])
def test_cluster_wide_events_mark_every_team(mutate, expected):
    lines = _events(mutate)
    for team in ("team-a", "team-b"):
        assert any(line.startswith(f"team {team}: {expected}") for line in lines), lines


def test_alarms_that_change_owner_mark_monitoring_coverage_too():
    lines = _events(lambda d: d["teams"][1]["contract"].update(operationsOwner="new-ops@example.com"))
    assert "team team-b: review (project ownership): operations owner ops@example.com -> new-ops@example.com" in lines
    assert "team team-b: review (monitoring coverage): alarm + quota-not-honoured -> new-ops@example.com" in lines
    assert "team team-b: review (monitoring coverage): alarm - quota-not-honoured -> ops@example.com" in lines


def test_a_new_team_needs_its_first_approval_and_a_retiring_one_no_review():
    def add_and_retire(d):
        d["teams"].append({"name": "team-c"})
        d["teams"][0]["retiring"] = True
        d["teams"][0]["contract"]["businessOwner"] = "new@example.com"
    lines = _events(add_and_retire)
    assert "team team-c: review (new connection): approve its contract before it reaches the cluster" in lines
    assert not [line for line in lines if line.startswith("team team-a")]


def test_retiring_says_who_loses_access_and_what_happens_to_running_work():
    old, new = connected(), connected()
    new["teams"][0]["retiring"] = True
    (note,) = retirement_notes(plan_of(old), plan_of(new))
    assert note.startswith("team team-a retiring: 3 principal(s) lose cluster access (")
    assert "1 workload identity(ies) removed (trainer)" in note
    assert "Unified Studio connection acme-team-a deleted" in note
    assert "running jobs keep running" in note and "nobody of the team can see, change or delete them" in note


def test_removing_a_retiring_team_is_the_revocation_and_removing_an_active_one_warns():
    retiring = connected()
    retiring["teams"][0]["retiring"] = True
    removed = connected()
    del removed["teams"][0]
    (note,) = retirement_notes(plan_of(retiring), plan_of(removed))
    assert note.startswith("team team-a removed after retiring: the connection is revoked")
    (note,) = retirement_notes(plan_of(connected()), plan_of(removed))
    assert note.startswith("team team-a removed without retiring first") and "retiring: true" in note


def test_coming_back_from_retirement_is_a_renewal():
    retiring = connected()
    retiring["teams"][0]["retiring"] = True
    (note,) = retirement_notes(plan_of(retiring), plan_of(connected()))
    assert note.startswith("team team-a no longer retiring") and "renewal" in note


def test_adding_a_unified_studio_project_is_marked():
    def connect_b(d):
        d["teams"][1]["contract"]["unifiedStudio"] = studio(projectId="otherproject")
    lines = _events(connect_b)
    assert "team team-b: review (project ownership): Unified Studio project none -> otherproject" in lines
    assert any(line.startswith("team team-b: review (access roles): principal + ") for line in lines)
