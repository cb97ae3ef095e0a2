"""The studio stack of a spec with the unifiedStudio section: units, owners, grants, profiles, the team's project
and its memberships, built from the field tables; cfn-lint and cdk-nag clean; the project role gets the team's
submitter access and nothing of the cluster's lifecycle."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Mapping

import pytest
from aws_cdk.assertions import Match, Template

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.fields import leaf_members
from hyperpod_gov.plan.tables_studio import STUDIO_TABLES
from hyperpod_gov.spec import parse_spec
from hyperpod_gov.stacks.studio import StudioConnectionsStack
from tests.conftest import TODAY
from tests.contracts.helpers import PROJECT_ROLE
from tests.studio.helpers import DOMAIN, ROOT_UNIT, delegated
from tests.synth_helpers import cfn_lint, minimal_app, resources, synthesize
from tests.table_rows import unreached

STUDIO = "acme-studio-444444444444-us-east-1"
TYPES = {t.kind: t for t in STUDIO_TABLES}
LIFECYCLE = ("sagemaker:CreateCluster", "sagemaker:UpdateCluster", "sagemaker:DeleteCluster",
             "sagemaker:UpdateClusterSoftware", "sagemaker:BatchDeleteClusterNodes", "eks:DeleteCluster",
             "eks:UpdateClusterConfig", "eks:CreateAccessEntry", "eks:AssociateAccessPolicy")


def _template(data: dict) -> dict[str, Any]:
    plan = build_plan(parse_spec(data, today=TODAY))
    (studio,) = plan.contracts.studio
    return Template.from_stack(StudioConnectionsStack(minimal_app(), studio.name, plan=plan, studio=studio)).to_json()


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return _template(delegated())


def _of(template: Mapping[str, Any], type_: str) -> list[tuple[str, dict]]:
    return list(resources(template, type_))


def _ref(template: Mapping[str, Any], type_: str) -> dict:
    (lid,) = [lid for lid, r in template["Resources"].items() if r["Type"] == type_]
    return {"Fn::GetAtt": [lid, "Id"]}


def test_the_unit_is_created_under_the_root_unit(template):
    ((_, unit),) = _of(template, "AWS::DataZone::DomainUnit")
    assert unit == {"DomainIdentifier": DOMAIN, "Name": "ml-research", "ParentDomainUnitIdentifier": ROOT_UNIT,
                    "Description": "Research teams' projects on the shared HyperPod cluster"}


def test_owners_are_groups_of_the_unit(template):
    ((_, owner),) = _of(template, "AWS::DataZone::Owner")
    assert owner == {"DomainIdentifier": DOMAIN, "EntityType": "DOMAIN_UNIT",
                     "EntityIdentifier": _ref(template, "AWS::DataZone::DomainUnit"),
                     "Owner": {"Group": {"GroupIdentifier": "ml-platform-admins"}}}


def test_creators_may_create_projects_from_the_units_profiles_only_in_the_unit(template):
    grants = {(p["PolicyType"], p["Principal"]["Group"]["GroupIdentifier"]): p
              for _, p in _of(template, "AWS::DataZone::PolicyGrant")}
    assert set(grants) == {
        ("CREATE_PROJECT_FROM_PROJECT_PROFILE", "research-leads"),
        ("OVERRIDE_PROJECT_OWNERS", "ml-platform-admins"),
        ("ADD_TO_PROJECT_MEMBER_POOL", "ml-platform-admins"),
        ("ADD_TO_PROJECT_MEMBER_POOL", "research-leads"),
        ("ADD_TO_PROJECT_MEMBER_POOL", "research-scientists"),
    }
    create = grants[("CREATE_PROJECT_FROM_PROJECT_PROFILE", "research-leads")]
    assert create["Detail"] == {"CreateProjectFromProjectProfile": {
        "ProjectProfiles": [_ref(template, "AWS::DataZone::ProjectProfile")], "IncludeChildDomainUnits": False}}
    assert grants[("OVERRIDE_PROJECT_OWNERS", "ml-platform-admins")]["Detail"] == {
        "OverrideProjectOwners": {"IncludeChildDomainUnits": False}}
    for grant in grants.values():
        assert grant["EntityType"] == "DOMAIN_UNIT"
        assert grant["EntityIdentifier"] == _ref(template, "AWS::DataZone::DomainUnit")
        assert set(grant["Principal"]) == {"Group"}  # never a user, a project or all users
    policy_types = {p for p, _ in grants}
    assert not policy_types & {"CREATE_DOMAIN_UNIT", "OVERRIDE_DOMAIN_UNIT_OWNERS", "CREATE_PROJECT"}


def test_the_profile_enables_the_named_blueprint_in_the_domains_account_and_region(template):
    ((_, profile),) = _of(template, "AWS::DataZone::ProjectProfile")
    assert profile["Name"] == "hyperpod-training" and profile["Status"] == "ENABLED"
    assert profile["UseDefaultConfigurations"] is False
    (env,) = profile["EnvironmentConfigurations"]
    assert env == {"Name": "Tooling", "EnvironmentBlueprintId": "cjegf7f6kky6w7", "DeploymentMode": "ON_CREATE",
                   "DeploymentOrder": 0, "AwsAccount": {"AwsAccountId": "444444444444"},
                   "AwsRegion": {"RegionName": "us-east-1"},
                   "ConfigurationParameters": {"ParameterOverrides": [
                       {"Name": "maxEbsVolumeSize", "Value": "100", "IsEditable": False}]}}


def test_the_project_comes_from_its_profile_in_its_unit_with_the_project_role(template):
    ((_, project),) = _of(template, "AWS::DataZone::Project")
    assert project["Name"] == "research"
    assert project["ProjectProfileId"] == _ref(template, "AWS::DataZone::ProjectProfile")
    assert project["DomainUnitId"] == _ref(template, "AWS::DataZone::DomainUnit")
    assert project["ProjectExecutionRole"] == PROJECT_ROLE


def test_memberships_are_groups_owners_and_contributors(template):
    members = {p["Member"]["GroupIdentifier"]: p["Designation"]
               for _, p in _of(template, "AWS::DataZone::ProjectMembership")}
    assert members == {"research-leads": "PROJECT_OWNER", "research-scientists": "PROJECT_CONTRIBUTOR"}
    for _, p in _of(template, "AWS::DataZone::ProjectMembership"):
        assert set(p["Member"]) == {"GroupIdentifier"}
        assert p["ProjectIdentifier"] == _ref(template, "AWS::DataZone::Project")


def test_the_connection_is_created_in_the_new_project(template):
    ((_, connection),) = _of(template, "AWS::DataZone::Connection")
    assert connection["ProjectIdentifier"] == _ref(template, "AWS::DataZone::Project")
    assert connection["DomainIdentifier"] == DOMAIN


def test_every_member_written_has_a_table_row(template):
    for lid, resource in template["Resources"].items():
        table = TYPES.get(resource["Type"].rsplit("::", 1)[-1])  # the Connection has no table (its own construct)
        if table is None:
            continue
        for member in leaf_members(resource["Properties"]):
            assert any(member == f.member or member.startswith(f.member + ".") for f in table.fields), (lid, member)


def test_reordering_units_and_groups_replaces_nothing():
    data = delegated()
    unit = data["unifiedStudio"]["domains"][0]["domainUnits"][0]
    data["unifiedStudio"]["domains"][0]["domainUnits"].insert(0, {"name": "aaa", "parent": "ml-research"})
    unit["projectCreators"]["groups"] = ["zz-leads", "research-leads"]
    before, after = _template(delegated()), _template(data)
    assert set(before["Resources"]) <= set(after["Resources"])


def test_the_studio_template_is_cfn_lint_clean_and_the_lint_can_fail(template, tmp_path):
    path = tmp_path / "studio.json"
    path.write_text(json.dumps(template))
    assert [str(m) for m in cfn_lint(path, "us-east-1")] == []
    broken = copy.deepcopy(template)
    for resource in broken["Resources"].values():
        if resource["Type"] == "AWS::DataZone::ProjectMembership":
            resource.pop("Metadata")
        if resource["Type"] == "AWS::DataZone::PolicyGrant":
            resource["Properties"]["PolicyType"] = "CREATE_EVERYTHING"
    path.write_text(json.dumps(broken))
    rules = {m.rule.id for m in cfn_lint(path, "us-east-1")}
    assert {"E3019", "E3030"} <= rules


# --- the whole app: cdk-nag ran during the synth; cfn-lint over its studio template ---------------------------


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return synthesize(parse_spec(delegated(), today=TODAY), tmp_path_factory.mktemp("studio-delegation"))


def test_the_app_synthesizes_with_cdk_nag_and_its_studio_template_is_cfn_lint_clean(app):
    assert STUDIO in app.templates
    path = app.out_dir / "cdk.out" / f"{STUDIO}.template.json"
    assert [str(m) for m in cfn_lint(path, "us-east-1")] == []
    assert {r["Type"] for r in app.templates[STUDIO]["Resources"].values()} >= {
        "AWS::DataZone::DomainUnit", "AWS::DataZone::Owner", "AWS::DataZone::PolicyGrant",
        "AWS::DataZone::ProjectProfile", "AWS::DataZone::Project", "AWS::DataZone::ProjectMembership",
        "AWS::DataZone::Connection"}


def test_every_planned_studio_row_reaches_the_template_and_a_dropped_one_is_reported(app):
    plan = build_plan(app.spec)
    assert unreached(plan, app.templates) == {}
    broken = copy.deepcopy(app.templates)
    for resource in broken[STUDIO]["Resources"].values():
        if resource["Type"] == "AWS::DataZone::Project":
            resource["Properties"].pop("ProjectExecutionRole")
    assert unreached(plan, broken) == {"Project (Unified Studio project)": ["ProjectExecutionRole"]}


def grants_to(templates: Mapping[str, Mapping[str, Any]], role_arn: str) -> list[str]:
    """Every IAM grant to ``role_arn`` in ``templates`` and every EKS access entry of it beyond a team's groups."""
    name = role_arn.rsplit("/", 1)[-1]
    out = []
    for stack, template in templates.items():
        for lid, r in (template.get("Resources") or {}).items():
            props = r.get("Properties") or {}
            text = json.dumps(props)
            if r["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy") and (name in text or role_arn in text):
                actions = [a for s in props.get("PolicyDocument", {}).get("Statement", [])
                           for a in ([s["Action"]] if isinstance(s.get("Action"), str) else s.get("Action", []))]
                out.append(f"{stack}/{lid}: {sorted(a for a in actions if a in LIFECYCLE or a.endswith('*'))}")
            if r["Type"] == "AWS::EKS::AccessEntry" and props.get("PrincipalArn") == role_arn:
                cluster_wide = [p for p in props.get("AccessPolicies", [])
                                if p.get("AccessScope", {}).get("Type") == "cluster"]
                if cluster_wide or any(not g.endswith("-submitters") for g in props.get("KubernetesGroups", [])):
                    out.append(f"{stack}/{lid}: access entry {props.get('KubernetesGroups')}")
    return out


def test_the_project_role_gets_no_cluster_lifecycle_permission_and_the_check_can_fail(app):
    entries = [p for t in app.templates.values() for _, p in resources(t, "AWS::EKS::AccessEntry")
               if p["PrincipalArn"] == PROJECT_ROLE]
    assert [e["KubernetesGroups"] for e in entries] == [["hyperpod-ns-team-a-submitters"]]
    assert grants_to(app.templates, PROJECT_ROLE) == []
    broken = copy.deepcopy(app.templates)
    stack = next(iter(broken))
    broken[stack]["Resources"]["Injected"] = {"Type": "AWS::IAM::ManagedPolicy", "Properties": {
        "Roles": [PROJECT_ROLE.rsplit("/", 1)[-1]],
        "PolicyDocument": {"Statement": [{"Effect": "Allow", "Action": "sagemaker:DeleteCluster", "Resource": "*"}]}}}
    assert grants_to(broken, PROJECT_ROLE) == [f"{stack}/Injected: ['sagemaker:DeleteCluster']"]
