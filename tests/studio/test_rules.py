"""HPG-U001..U004: each rule refuses what it names, with path, value and fix, and passes the good spec."""

from __future__ import annotations

import pytest

from hyperpod_gov.spec import SpecError, parse_spec
from hyperpod_gov.spec.rules import check_spec
from tests.conftest import TODAY
from tests.contracts.helpers import contract, studio
from tests.studio.helpers import by_name, delegated, domain

ADMIN = "arn:aws:iam::111111111111:role/Admin"


def issues(data) -> list:
    try:
        spec = parse_spec(data, today=TODAY)
    except SpecError as e:
        return list(e.issues)
    return check_spec(spec, today=TODAY)


def _unit(d: dict) -> dict:
    return d["unifiedStudio"]["domains"][0]["domainUnits"][0]


def _us(d: dict) -> dict:
    return d["teams"][0]["contract"]["unifiedStudio"]


def _two_units(d: dict) -> None:
    d["unifiedStudio"]["domains"][0]["domainUnits"].append({"name": "vision", "parent": "ml-research"})


CASES = [
    # (rule, mutation, path, expected substrings)
    ("HPG-U001", lambda d: _unit(d).update(projectProfiles=["inference"]),
     "unifiedStudio.domains[0].domainUnits[0].projectProfiles[0]", ["is not a project profile", "hyperpod-training"]),
    ("HPG-U001", lambda d: _us(d).update(domainUnit="vision"),
     "teams[0].contract.unifiedStudio.domainUnit", ["is not a unit", "ml-research"]),
    ("HPG-U001", lambda d: (_two_units(d), _us(d).update(domainUnit="vision")),
     "teams[0].contract.unifiedStudio.projectProfile", ["allows 0 profiles", "(none allowed)"]),
    ("HPG-U001", lambda d: _us(d).update(projectProfile="inference"),
     "teams[0].contract.unifiedStudio.projectProfile", ["is not a profile unit ml-research allows",
                                                        "add it to the unit's projectProfiles"]),
    ("HPG-U001", lambda d: _us(d).update(domain="dzd_otherdomain1"),
     "teams[0].contract.unifiedStudio.domain", ["is not a domain of unifiedStudio.domains", "dzd_otherdomain1"]),
    ("HPG-U001", lambda d: _us(d).update(region="eu-west-1"),
     "teams[0].contract.unifiedStudio.region", ["differs from unifiedStudio.domains[0].region", "leave region out"]),
    ("HPG-U001", lambda d: d["teams"][1].update(contract=contract(unifiedStudio=studio(account="555555555555"))),
     "teams[1].contract.unifiedStudio.account", ["differs from unifiedStudio.domains[0].account (444444444444)"]),
    ("HPG-U001", lambda d: _unit(d).update(parent="nowhere"),
     "unifiedStudio.domains[0].domainUnits[0].parent", ["is not a domain unit of this domain"]),
    ("HPG-U001", lambda d: (_two_units(d), _unit(d).update(parent="vision")),
     "unifiedStudio.domains[0].domainUnits[0].parent", ["makes the units a cycle"]),
    ("HPG-U001", lambda d: d["teams"][1].update(contract=contract(unifiedStudio=by_name())),
     "teams[1].contract.unifiedStudio.project", ["is the project teams[0].contract.unifiedStudio creates too"]),
    ("HPG-U001", lambda d: _unit(d).update(projectProfiles=[]),
     "unifiedStudio.domains[0].domainUnits[0].projectCreators", ["can create none"]),
    ("HPG-U002", lambda d: _unit(d).update(projectCreators={"users": ["jane@example.com"]}),
     "unifiedStudio.domains[0].domainUnits[0].projectCreators.users[0]", ["is a single user", "Identity Center group"]),
    ("HPG-U002", lambda d: _unit(d).update(owners={"groups": ["admins"], "users": ["bob"]}),
     "unifiedStudio.domains[0].domainUnits[0].owners.users[0]", ["is a single user"]),
    ("HPG-U002", lambda d: _unit(d).update(projectOwnersOverride={"users": ["bob"]}),
     "unifiedStudio.domains[0].domainUnits[0].projectOwnersOverride.users[0]", ["is a single user"]),
    ("HPG-U002", lambda d: _us(d).update(members={"users": ["ann"]}),
     "teams[0].contract.unifiedStudio.members.users[0]", ["is a single user"]),
    ("HPG-U002", lambda d: _us(d).update(owners={"users": ["ann"]}),
     "teams[0].contract.unifiedStudio.owners.users[0]", ["is a single user"]),
    ("HPG-U003", lambda d: (d["cluster"].update(admins=[ADMIN]), _us(d).update(projectRoleArn=ADMIN)),
     "teams[0].contract.unifiedStudio.projectRoleArn", ["is a cluster admin", "a role of its own"]),
    ("HPG-U003", lambda d: (d["cluster"].update(admins=[ADMIN]), _us(d).update(accessRoleArn=ADMIN)),
     "teams[0].contract.unifiedStudio.accessRoleArn", ["is a cluster admin"]),
    ("HPG-U003", lambda d: (d["cluster"].update(admins=[ADMIN]),
                            d["teams"][0]["contract"].update(unifiedStudio=studio(projectRoleArn=ADMIN)),
                            d.pop("unifiedStudio")),
     "teams[0].contract.unifiedStudio.projectRoleArn", ["is a cluster admin"]),
    ("HPG-U004", lambda d: d["unifiedStudio"]["domains"][0].update(region="us-west-1"),
     "unifiedStudio.domains[0].region", ["has no AWS::DataZone::DomainUnit", "us-east-1"]),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_each_rule_refuses_with_path_value_and_fix(case):
    rule, mutation, path, expected = case
    data = delegated()
    mutation(data)
    found = [i for i in issues(data) if i.rule == rule and i.path == path]
    assert found, [(i.rule, i.path, i.problem) for i in issues(data)]
    text = " ".join(f"{i.problem} {i.value} {i.fix}" for i in found)
    assert all(e in text for e in expected), text
    assert all(i.severity == "error" for i in found)


def test_the_delegated_spec_has_no_unified_studio_finding():
    assert not [i for i in issues(delegated()) if i.rule.startswith("HPG-U")]


def test_a_unit_under_another_unit_of_the_spec_is_accepted():
    data = delegated()
    _two_units(data)
    data["unifiedStudio"]["domains"][0]["domainUnits"][1]["projectProfiles"] = ["hyperpod-training"]
    data["teams"][0]["contract"]["unifiedStudio"]["domainUnit"] = "vision"
    assert not [i for i in issues(data) if i.rule.startswith("HPG-U")]


def test_an_existing_project_of_a_declared_domain_connects_in_the_domains_account_and_region():
    data = delegated()
    data["unifiedStudio"]["domains"][0]["region"] = "eu-west-1"
    data["teams"][1]["contract"] = contract(unifiedStudio={k: v for k, v in studio().items() if k != "account"})
    assert not [i for i in issues(data) if i.rule.startswith("HPG-U")]
    from hyperpod_gov.plan import build_plan
    connection = build_plan(parse_spec(data, today=TODAY)).contracts.connection("team-b")
    assert (connection.account, connection.region) == ("444444444444", "eu-west-1")


def test_a_domain_in_a_region_without_the_types_is_refused_at_parse():
    data = delegated()
    data["unifiedStudio"] = {"domains": [domain(region="eu-south-1")]}
    with pytest.raises(SpecError) as info:
        parse_spec(data, today=TODAY)
    assert any(i.rule == "HPG-U004" and i.value == "eu-south-1" for i in info.value.issues)
