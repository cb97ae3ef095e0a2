"""The unifiedStudio section and the by-name project form: accepted, or refused with path, value and fix."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import cfnlint
import pytest

from hyperpod_gov.spec import SpecError, parse_spec
from hyperpod_gov.spec.unified_studio import DELEGATION_REGIONS, DELEGATION_TYPES
from tests.conftest import TODAY
from tests.contracts.helpers import connected, contract, studio
from tests.studio.helpers import DOMAIN, by_name, delegated


def messages(data) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_spec(data, today=TODAY)
    return [str(i) for i in info.value.issues]


def test_the_issue_example_is_accepted_and_reads_back_by_name():
    spec = parse_spec(delegated(), today=TODAY)
    (domain,) = spec.unified_studio.domains
    assert [u.name for u in domain.domain_units] == ["ml-research"]
    assert domain.domain_units[0].project_creators.groups == ("research-leads",)
    us = spec.teams[0].contract.unified_studio
    assert us.creates_project and (us.domain_id, us.domain_unit, us.project) == (DOMAIN, "ml-research", "research")
    assert us.project_id is None


def test_todays_id_form_is_unchanged():
    spec = parse_spec(connected(), today=TODAY)
    us = spec.teams[0].contract.unified_studio
    assert (us.domain_id, us.project_id, us.creates_project) == ("dzd_4p9n6sw4qt9xgn", "5b3jcjsy4ar7zr", False)
    assert spec.unified_studio is None


def _with(fn):
    data = delegated()
    fn(data)
    return data


REFUSED = [
    # (id, mutation, substrings of one message: path, problem, value, fix)
    ("id_form_without_project_id",
     lambda d: d["teams"][0]["contract"].update(unifiedStudio={k: v for k, v in studio().items() if k != "projectId"}),
     ["teams[0].contract.unifiedStudio", "names no project", "domain, domainUnit and project"]),
    ("mixed_forms", lambda d: d["teams"][0]["contract"]["unifiedStudio"].update(projectId="5b3jcjsy4ar7zr"),
     ["teams[0].contract.unifiedStudio", "mixes the created project's domain", "write either domainId"]),
    ("domain_without_project", lambda d: d["teams"][0]["contract"]["unifiedStudio"].pop("project"),
     ["teams[0].contract.unifiedStudio", "has domain but no domainUnit or project", "domainUnit: ml-research"]),
    ("members_without_domain",
     lambda d: d["teams"][0]["contract"].update(unifiedStudio=studio(members={"groups": ["x"]})),
     ["teams[0].contract.unifiedStudio", "sets members without domain", "add domain"]),
    ("bad_domain_id", lambda d: d["unifiedStudio"]["domains"][0].update(id="domain-1"),
     ["unifiedStudio.domains[0].id", "is not a Unified Studio domain id", "'domain-1'", "dzd_4p9n6sw4qt9xgn"]),
    ("unit_name_with_slash", lambda d: d["unifiedStudio"]["domains"][0]["domainUnits"][0].update(name="ml/research"),
     ["unifiedStudio.domains[0].domainUnits[0].name", "is not a domain unit name DataZone accepts", "'ml/research'"]),
    ("no_root_unit", lambda d: d["unifiedStudio"]["domains"][0].pop("rootDomainUnitId"),
     ["unifiedStudio.domains[0]", "has a unit without a parent but no rootDomainUnitId", "add rootDomainUnitId"]),
    ("unit_twice", lambda d: d["unifiedStudio"]["domains"][0]["domainUnits"].append(
        copy.deepcopy(d["unifiedStudio"]["domains"][0]["domainUnits"][0])),
     ["unifiedStudio.domains[0].domainUnits", "names ml-research more than once"]),
    ("blueprint_id", lambda d: d["unifiedStudio"]["domains"][0]["projectProfiles"][0]["environmentConfigurations"][0]
     .update(blueprintId="Tooling blueprint"),
     ["environmentConfigurations[0].blueprintId", "is not an environment blueprint id", "blueprints page"]),
    ("deployment_mode", lambda d: d["unifiedStudio"]["domains"][0]["projectProfiles"][0]
     ["environmentConfigurations"][0].update(deploymentMode="ALWAYS"),
     ["environmentConfigurations[0].deploymentMode", "'ALWAYS'"]),
    ("group_twice", lambda d: d["unifiedStudio"]["domains"][0]["domainUnits"][0].update(
        projectCreators={"groups": ["a", "a"]}),
     ["domainUnits[0].projectCreators.groups", "names a more than once", "name each group once"]),
    ("unknown_key", lambda d: d["unifiedStudio"]["domains"][0]["domainUnits"][0].update(creators={"groups": ["a"]}),
     ["unifiedStudio.domains[0].domainUnits[0].creators"]),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_bad_input_is_refused_with_path_value_and_fix(case):
    _, mutation, expected = case
    found = messages(_with(mutation))
    assert any(all(e in m for e in expected) for m in found), found


def test_the_delegation_regions_are_those_whose_cloudformation_has_every_type():
    base = Path(cfnlint.__file__).parent / "data" / "schemas" / "providers"
    offered = set()
    for path in base.glob("*-*-*.json"):
        types = json.loads(path.read_text())
        if all(t in types for t in (*DELEGATION_TYPES, "AWS::DataZone::Connection")):
            offered.add(path.stem)
    assert DELEGATION_REGIONS == offered


def test_the_modelled_members_exist_in_the_schemas():
    """Every member the spec's profiles and grants set is one the bundled schemas have (cfn-lint's E3002 checks the
    templates; this names the schema members the models rely on)."""
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    def props(type_: str) -> dict:
        return PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", type_).schema

    profile = props("AWS::DataZone::ProjectProfile")
    env = profile["definitions"]["EnvironmentConfiguration"]["properties"]
    assert {"Name", "EnvironmentBlueprintId", "Description", "DeploymentMode", "DeploymentOrder", "AwsAccount",
            "AwsRegion", "ConfigurationParameters"} <= set(env)
    assert {"UseDefaultConfigurations", "Status", "EnvironmentConfigurations"} <= set(profile["properties"])
    grant = props("AWS::DataZone::PolicyGrant")
    assert {"CREATE_PROJECT_FROM_PROJECT_PROFILE", "OVERRIDE_PROJECT_OWNERS", "ADD_TO_PROJECT_MEMBER_POOL"} <= set(
        grant["definitions"]["ManagedPolicyType"]["enum"])
    assert "ProjectExecutionRole" in props("AWS::DataZone::Project")["properties"]


def test_a_by_name_contract_is_complete_without_a_domain_unit_id():
    data = delegated()
    spec = parse_spec(data, today=TODAY)
    from hyperpod_gov.spec.contract import contracts_are_complete
    assert not [i for i in contracts_are_complete(spec, TODAY) if "domainUnitId" in i.problem]
    data["teams"][0]["contract"] = contract(unifiedStudio={k: v for k, v in studio().items() if k != "domainUnitId"})
    spec = parse_spec(data, today=TODAY)
    assert [i for i in contracts_are_complete(spec, TODAY) if "unifiedStudio.domainUnitId" in i.fix]


def test_by_name_form_with_an_explicit_profile_is_accepted():
    data = delegated()
    data["teams"][0]["contract"]["unifiedStudio"] = by_name(projectProfile="hyperpod-training")
    assert parse_spec(data, today=TODAY).teams[0].contract.unified_studio.project_profile == "hyperpod-training"
