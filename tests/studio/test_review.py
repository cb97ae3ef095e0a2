"""explain, diff and the contract review events of the unifiedStudio section: new creators, owners and members are
marked as privilege; a created project's unit, name and groups cause reviews."""

from __future__ import annotations

import pytest

from hyperpod_gov.contracts.events import events
from hyperpod_gov.diff import governance_changes
from hyperpod_gov.explain import explain
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.views_studio import CREATOR_PRIVILEGE, PROJECT_MEMBER_PRIVILEGE
from hyperpod_gov.spec import parse_spec
from tests.conftest import TODAY
from tests.contracts.helpers import connected
from tests.studio.helpers import delegated


def _plan(data):
    return build_plan(parse_spec(data, today=TODAY))


def test_explain_shows_each_unit_profile_and_project():
    text = explain(_plan(delegated()))
    assert "Unified Studio delegation" in text
    assert "unit ml-research (under the root unit): owners ml-platform-admins; profiles hyperpod-training;" in text
    assert "project research: team team-a, unit ml-research, profile hyperpod-training" in text
    assert "Unified Studio delegation" not in explain(_plan(connected()))


def test_diff_marks_a_new_creator_and_a_new_project_member_as_privilege():
    data = delegated()
    data["unifiedStudio"]["domains"][0]["domainUnits"][0]["projectCreators"]["groups"].append("vision-leads")
    data["teams"][0]["contract"]["unifiedStudio"]["members"]["groups"].append("interns")
    changes = governance_changes(_plan(delegated()), _plan(data))
    privileged = {(c.label, c.new): c.privilege for c in changes if c.view == "unified studio"}
    assert privileged[("project creators", "ml-research: vision-leads (from hyperpod-training)")] == CREATOR_PRIVILEGE
    assert privileged[("project members", "research: interns")] == PROJECT_MEMBER_PRIVILEGE
    assert privileged[("project member pool", "ml-research: interns")]


def test_diff_does_not_mark_a_removed_creator():
    data = delegated()
    data["unifiedStudio"]["domains"][0]["domainUnits"][0]["projectCreators"]["groups"] = []
    changes = [c for c in governance_changes(_plan(delegated()), _plan(data)) if c.label == "project creators"]
    assert [(c.kind, c.privilege) for c in changes] == [("removed", None)]


def test_a_domain_added_whole_names_its_creators_and_owners_as_privilege():
    (line,) = [c.words for c in governance_changes(_plan(connected()), _plan(delegated()))
               if c.view == "unified studio"]
    assert line.startswith("Unified Studio domain dzd_4p9n6sw4qt9xgn added (ml-research) (privilege: ")
    assert "research-leads (from hyperpod-training)" in line and "ml-platform-admins (owns the domain unit" in line


def test_a_moved_project_and_new_members_cause_reviews():
    data = delegated()
    data["teams"][0]["contract"]["unifiedStudio"]["project"] = "research-2"
    data["teams"][0]["contract"]["unifiedStudio"]["members"]["groups"].append("interns")
    found = events(_plan(delegated()), _plan(data))
    assert "team team-a: review (project ownership): Unified Studio project research -> research-2" in found
    assert ("team team-a: review (access roles): Unified Studio project members [research-scientists] -> "
            "[research-scientists, interns]") in found
    assert events(_plan(delegated()), _plan(delegated())) == []


def test_diff_json_of_a_studio_change_is_valid_against_the_shipped_schema(tmp_path, capsys):
    from tests.test_cli_json import check, run_json, write

    data = delegated()
    data["unifiedStudio"]["domains"][0]["domainUnits"][0]["projectCreators"]["groups"].append("vision-leads")
    old, new = write(tmp_path, delegated(), "old.yaml"), write(tmp_path, data, "new.yaml")
    code, doc, _ = run_json(["diff", str(old), str(new), "--governance-only"], capsys)
    assert code == 0
    check("diff", doc)
    (creator,) = [c for c in doc["changes"] if c["label"] == "project creators"]
    assert creator["view"] == "unified studio" and creator["privilege"] is True


def test_the_contract_record_names_a_created_project_and_its_unit():
    """A project the spec creates has no id until deployed: the record and its checklist name it and its unit by
    name (they showed "Project: None" and flagged the unit missing)."""
    from hyperpod_gov.contracts.record import render_record

    plan = build_plan(parse_spec(delegated(), today=TODAY))
    team = plan.team("team-a")
    page = render_record(plan, team)
    us = team.contract.unified_studio
    assert f"| Project | {us.project} (created by the spec in domain unit {us.domain_unit}) |" in page
    assert f"| Domain unit | {us.domain_unit} |" in page
    assert "None" not in page
    assert "Unified Studio domain unit" in page and "Unified Studio project" in page
    missing = next((line for line in page.splitlines() if line.startswith("**Missing")), "")
    assert "Unified Studio" not in missing, missing


def test_explain_json_carries_the_delegation_and_validates_against_its_schema():
    """explain --format json: the domain's units with who holds each grant, its profiles and the created project;
    absent without the section (the schema refuses a unit without its creators)."""
    import jsonschema
    from hyperpod_gov.explain import explain_json
    from hyperpod_gov.schemas import schema as load_schema
    from tests.contracts.helpers import connected

    doc = explain_json(build_plan(parse_spec(delegated(), today=TODAY)))
    schema = load_schema("explain")
    jsonschema.validate(doc, schema)
    (domain,) = doc["unifiedStudio"]
    (unit,) = domain["domainUnits"]
    assert unit["name"] == "ml-research" and unit["owners"] == ["ml-platform-admins"]
    assert unit["projectCreators"] == ["research-leads"] and unit["projectOwnersOverride"] == ["ml-platform-admins"]
    assert [p["name"] for p in domain["projectProfiles"]] == ["hyperpod-training"]
    (project,) = domain["projects"]
    assert (project["team"], project["domainUnit"], project["owners"], project["members"]) == (
        "team-a", "ml-research", ["research-leads"], ["research-scientists"])
    assert "unifiedStudio" not in explain_json(build_plan(parse_spec(connected(), today=TODAY)))
    del unit["projectCreators"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)
