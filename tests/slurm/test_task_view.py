"""The Studio task view of a Slurm cluster (AWS, "Restrict task view in Studio for Slurm clusters"): the spec keys
and their rules, PrivateData=jobs in slurm.conf, the diff rows, the contract record's steps and checklist field,
and explain (text and JSON)."""

from __future__ import annotations

import pytest

from hyperpod_gov.contracts.checklist import connection_fields, missing
from hyperpod_gov.contracts.record import render_record
from hyperpod_gov.diff import governance_diff
from hyperpod_gov.explain import explain, explain_json
from hyperpod_gov.plan.slurm_state import conf_settings
from hyperpod_gov.plan.slurm_task_view import RUN_AS_TAG, steps, task_view
from hyperpod_gov.slurm.render import files
from tests.test_cli_json import check

from .spec_fixtures import TODAY, plan_of, slurm_base
from .test_spec_rules import _findings

PROJECT_ROLE = "arn:aws:iam::222222222222:role/service/datazone_usr_role_5b3jcjsy4ar7zr_c1ncty2ag0mhmf"
CONTRACT = {
    "businessOwner": "lead@example.com", "operationsOwner": "ops@example.com", "costOwner": "fin@example.com",
    "exceptionOwner": "lead@example.com", "dataClassification": "internal", "approvedWorkloads": ["training"],
    "reviewBy": "2027-06-30", "monitoring": "pending jobs daily", "support": "platform on-call",
    "retirement": "jobs stop", "networkPath": "login-nodes",
    "unifiedStudio": {"domainId": "dzd_4p9n6sw4qt9xgn", "domainUnitId": "3bc7r1dkxeo8hj",
                      "projectId": "5b3jcjsy4ar7zr", "projectRoleArn": PROJECT_ROLE},
}


def restricted(*, studio_user: str | None = "alice", restrict: bool = True) -> dict:
    """The base spec with team-a in Unified Studio, running as ``studio_user``, the task view restricted."""
    data = slurm_base()
    data["cluster"]["slurm"]["restrictTaskView"] = restrict
    data["accounts"]["trusted"] = ["222222222222"]  # the project role's account (HPG-C004)
    team = data["teams"][0]
    team["contract"] = dict(CONTRACT)
    if studio_user is not None:
        team["slurm"]["studioUser"] = studio_user
    return data


def _team(plan, name):
    return next(t for t in plan.teams if t.name == name)


# --- rules --------------------------------------------------------------------------------------------------------


def test_a_studio_user_outside_the_teams_users_is_refused():
    assert _findings(restricted(studio_user="carol"), "HPG-S014") == [
        "HPG-S014 teams[0].slurm.studioUser: is not one of the team's users, so it has no association with the "
        "team's accounts (and posix.sh does not create it) ('carol'); add 'carol' to teams[0].slurm.users, or name "
        "one of ['bob', 'alice']"]
    assert _findings(restricted(studio_user="alice"), "HPG-S014") == []


def test_a_studio_user_must_be_a_posix_name():
    data = restricted(studio_user="Alice Smith")
    from hyperpod_gov.spec.loader import parse_spec
    from hyperpod_gov.spec.errors import SpecError

    with pytest.raises(SpecError, match=r"teams\[0\]\.slurm\.studioUser: is not a POSIX user name"):
        parse_spec(data, today=TODAY)


def test_two_studio_teams_without_the_restriction_are_warned():
    data = restricted(restrict=False)
    data["teams"][1]["slurm"]["studioUser"] = "carol"
    (finding,) = _findings(data, "HPG-S015")
    assert finding.startswith("HPG-S015 cluster.slurm.restrictTaskView: is not set while 2 teams reach the cluster "
                              "from Studio: each of them views, cancels and manages the others' Slurm tasks "
                              "('team-a, team-b')")
    data["cluster"]["slurm"]["restrictTaskView"] = True
    assert _findings(data, "HPG-S015") == []


def test_one_studio_team_alone_is_not_warned():
    assert _findings(restricted(restrict=False), "HPG-S015") == []


def test_a_restricted_view_with_a_studio_team_without_its_user_is_warned():
    assert _findings(restricted(studio_user=None), "HPG-S015") == [
        "HPG-S015 teams[0].slurm.studioUser: is not set: the team's Studio role has no Slurm user to run as, so "
        "Studio shows it no tasks and it cannot submit ('team-a'); name one of the team's users, e.g. "
        "studioUser: 'bob'"]


# --- Slurm configuration ------------------------------------------------------------------------------------------


def test_the_restriction_adds_private_data_jobs_to_slurm_conf():
    on = plan_of(restricted())
    assert ("PrivateData", "jobs") in conf_settings(on.slurm)
    assert "PrivateData=jobs" in files(on)["slurm.conf.d/governance.conf"]


def test_without_the_restriction_slurm_conf_is_unchanged():
    off = plan_of(restricted(restrict=False))
    base = plan_of(slurm_base())
    assert not any(k == "PrivateData" for k, _ in conf_settings(off.slurm))
    assert files(off)["slurm.conf.d/governance.conf"] == files(base)["slurm.conf.d/governance.conf"]


def test_lifting_the_restriction_and_setting_a_studio_user_are_privilege_changes_in_diff():
    lines = governance_diff(plan_of(restricted(studio_user=None)), plan_of(restricted(restrict=False)))
    text = "\n".join(lines)
    assert "every Slurm user, and every Studio user, now sees every job of the cluster" in text
    assert "the team's Studio role now runs on the cluster as this user (SSMSessionRunAs)" in text
    assert "PrivateData=jobs" in text  # the settings row lists the slurm.conf line that goes


# --- the contract record ------------------------------------------------------------------------------------------


def test_the_record_prints_the_exact_steps_for_the_teams_project_and_accounts():
    plan = plan_of(restricted())
    page = render_record(plan, _team(plan, "team-a"))
    section = page[page.index("## Studio task view"):page.index("## Data paths")]
    assert ("1. By hand (IAM, account 222222222222): tag the team's Unified Studio project role so that Studio's "
            "sessions run as `alice`: `aws iam tag-role --role-name datazone_usr_role_5b3jcjsy4ar7zr_c1ncty2ag0mhmf "
            f"--tags Key={RUN_AS_TAG},Value=alice`.") in section
    assert "2. By hand (Systems Manager, once per account and region, 111111111111 us-east-1)" in section
    assert "3. Done by hyperpod-gov (slurm/apply.sh on the controller): `PrivateData=jobs`" in section
    assert ("4. Done by hyperpod-gov (posix.sh, accounting.sh): `alice` exists on every node and is associated with "
            "the team's accounts only: `team-a_p5`, `team-a_p5_borrow`.") in section
    assert "No CloudFormation resource or Studio setting does it" in section


def test_the_checklist_records_the_task_view_and_flags_it_when_incomplete():
    plan = plan_of(restricted())
    fields = {f.label: f.value for f in connection_fields(plan, _team(plan, "team-a"))}
    assert fields["Studio task view"].startswith("restricted: Studio runs as `alice`")
    for data in (restricted(restrict=False), restricted(studio_user=None)):
        plan = plan_of(data)
        assert "Studio task view" in missing(connection_fields(plan, _team(plan, "team-a")))
        page = render_record(plan, _team(plan, "team-a"))
        assert "| Studio task view | **missing** |" in page


def test_a_team_outside_studio_has_nothing_to_restrict():
    plan = plan_of(restricted())
    fields = {f.label: f.value for f in connection_fields(plan, _team(plan, "team-b"))}
    assert fields["Studio task view"] == "not applicable: the team has no Studio project or studioUser"
    view = task_view(plan.slurm, _team(plan, "team-b").slurm, None)
    assert steps(view, account="111111111111", region="us-east-1") == ()


def test_without_the_restriction_the_steps_say_what_is_not_done():
    plan = plan_of(restricted(restrict=False))
    view = task_view(plan.slurm, _team(plan, "team-a").slurm, _team(plan, "team-a").contract)
    todo = steps(view, account="111111111111", region="us-east-1")
    assert any(s.startswith("Not done: set `cluster.slurm.restrictTaskView: true`") for s in todo)
    assert not any("PrivateData=jobs` in slurm.conf, so" in s for s in todo)


def test_a_studio_user_without_a_project_role_names_the_role_to_find():
    data = restricted()
    del data["teams"][0]["contract"]["unifiedStudio"]
    plan = plan_of(data)
    view = task_view(plan.slurm, _team(plan, "team-a").slurm, _team(plan, "team-a").contract)
    first = steps(view, account="111111111111", region="us-east-1")[0]
    assert first.startswith("By hand (IAM, account 111111111111): tag the IAM role the team's members use in Studio")
    assert "--role-name ROLE_NAME --tags Key=SSMSessionRunAs,Value=alice` (ROLE_NAME: that role's name)." in first


# --- explain ------------------------------------------------------------------------------------------------------


def test_explain_lists_each_studio_teams_task_view():
    text = explain(plan_of(restricted()))
    assert "Studio task view (AWS: Restrict task view in Studio for Slurm clusters" in text
    assert "  team-a: restricted: Studio runs as `alice`" in text
    assert "team-b: " not in text.split("Studio task view (AWS")[1].split("Files (synth")[0]


def test_explain_json_has_the_task_view_isolation_and_network_path_and_matches_the_schema():
    doc = check("explain", explain_json(plan_of(restricted())))
    a, b = (next(t for t in doc["teams"] if t["name"] == n) for n in ("team-a", "team-b"))
    assert (a["isolation"], a["networkPath"]) == ("shared", "login-nodes")
    assert (b["isolation"], b["networkPath"]) == ("shared", None)  # no contract: shared, nothing stated
    assert a["studioTaskView"] == {
        "inStudio": True, "restricted": True, "studioUser": "alice", "roleArn": PROJECT_ROLE,
        "accounts": ["team-a_p5", "team-a_p5_borrow"], "complete": True,
        "words": "restricted: Studio runs as `alice` (SSMSessionRunAs tag), which submits under `team-a_p5`, "
                 "`team-a_p5_borrow` and sees only its own jobs (PrivateData=jobs)"}
    assert b["studioTaskView"]["inStudio"] is False


def test_the_task_view_example_of_docs_slurm_md_plans_as_it_says():
    import re
    from pathlib import Path

    import yaml

    page = (Path(__file__).resolve().parents[2] / "docs" / "slurm.md").read_text()
    whole, view = (yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", page, flags=re.S))
    data = {"name": "acme", "accounts": {"capacity": {"id": "111111111111", "region": "us-east-1"}}, **whole}
    data["cluster"]["slurm"] = view["cluster"]["slurm"]
    data["teams"] = view["teams"]
    sp = plan_of(data).slurm
    assert sp.restrict_task_view and ("PrivateData", "jobs") in conf_settings(sp)
    assert [(t.name, t.studio_user) for t in sp.teams] == [("team-a", "team-a-studio")]


def test_a_studio_teams_project_is_not_called_without_effect_on_slurm():
    from hyperpod_gov.stacks.capacity import without_effect_on_slurm

    assert without_effect_on_slurm(plan_of(restricted())) == []  # the task view steps name its project role
    assert without_effect_on_slurm(plan_of(restricted(studio_user=None))) == [
        "teams[0].contract.unifiedStudio (project 5b3jcjsy4ar7zr)"]
