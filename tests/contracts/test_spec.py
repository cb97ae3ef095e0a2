"""The contract's new fields: optional, validated with their fix, complete in strict mode."""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov.spec import SpecError, parse_spec
from hyperpod_gov.spec.contract import contracts_are_complete
from hyperpod_gov.spec.teams import Contract
from tests.conftest import BASE, TODAY
from tests.contracts.helpers import PROJECT_ROLE, connected, contract, studio


def test_contract_is_importable_from_teams_and_from_its_own_module():
    from hyperpod_gov.spec.contract import Contract as Moved
    from hyperpod_gov.spec.models import Contract as Public

    assert Contract is Moved is Public


def test_new_fields_stay_optional():
    data = copy.deepcopy(BASE)
    data["teams"][0]["contract"] = {"businessOwner": "a@example.com", "operationsOwner": "b@example.com",
                                    "costOwner": "c@example.com", "dataClassification": "internal",
                                    "reviewBy": "2027-01-01"}
    c = parse_spec(data, today=TODAY).teams[0].contract
    assert c.unified_studio is None and c.exception_owner is None and c.monitoring is None
    assert not parse_spec(data, today=TODAY).teams[0].retiring


def test_unified_studio_fields_are_read_with_their_defaults():
    spec = parse_spec(connected(), today=TODAY)
    us = spec.teams[0].contract.unified_studio
    assert (us.domain_id, us.project_id, us.project_role_arn, us.account) == (
        "dzd_4p9n6sw4qt9xgn", "5b3jcjsy4ar7zr", PROJECT_ROLE, "444444444444")
    assert us.region is None and us.role_account == "111111111111"


@pytest.mark.parametrize("field, value, message", [
    ("domainId", "4p9n6sw4qt9xgn", "is not a Unified Studio domain id"),
    ("domainId", "dzd_4p9n\n", "is not a Unified Studio domain id"),
    ("projectId", "a" * 37, "is not a Unified Studio project id"),
    ("projectRoleArn", "arn:aws:iam::111111111111:user/someone", "is not an IAM role ARN"),
    ("domainUnitId", "Unit With Spaces", "is not a domain unit id"),
    ("account", "4444", "is not a 12-digit AWS account id"),
])
def test_bad_unified_studio_values_are_reported_with_path_and_fix(field, value, message):
    data = connected()
    data["teams"][0]["contract"]["unifiedStudio"][field] = value
    with pytest.raises(SpecError) as exc:
        parse_spec(data, today=TODAY)
    (issue,) = exc.value.issues
    assert issue.path == f"teams[0].contract.unifiedStudio.{field}"
    assert message in issue.problem and issue.fix


def test_unified_studio_needs_domain_project_and_role():
    data = connected()
    del data["teams"][0]["contract"]["unifiedStudio"]["projectRoleArn"]
    with pytest.raises(SpecError) as exc:
        parse_spec(data, today=TODAY)
    assert [i.path for i in exc.value.issues] == ["teams[0].contract.unifiedStudio.projectRoleArn"]


def test_exception_owner_must_be_an_email_and_expectations_not_blank():
    data = connected()
    data["teams"][1]["contract"].update(exceptionOwner="the lead", support="  ")
    with pytest.raises(SpecError) as exc:
        parse_spec(data, today=TODAY)
    assert sorted(i.path for i in exc.value.issues) == ["teams[1].contract.exceptionOwner",
                                                        "teams[1].contract.support"]


def _findings(data):
    """The rule alone, on a structurally valid spec (the other rules, and this one's errors, stop parse_spec)."""
    from hyperpod_gov.spec import GovernanceSpec

    return list(contracts_are_complete(GovernanceSpec.model_validate(data), TODAY))


def test_complete_contracts_have_no_findings():
    assert _findings(connected()) == []


def test_missing_fields_are_one_warning_per_contract_naming_each():
    data = connected()
    data["teams"][1]["contract"] = contract()
    for key in ("exceptionOwner", "monitoring", "support", "retirement", "approvedWorkloads"):
        del data["teams"][1]["contract"][key]
    del data["teams"][0]["contract"]["unifiedStudio"]["domainUnitId"]
    first, second = _findings(data)
    assert (first.path, first.severity, second.path, second.severity) == (
        "teams[0].contract", "warning", "teams[1].contract", "warning")
    assert "leaves out unifiedStudio.domainUnitId:" in first.problem
    assert "leaves out exceptionOwner, monitoring, support, retirement, approvedWorkloads:" in second.problem
    assert "--strict" in second.problem


def test_project_role_of_an_untrusted_account_is_an_error():
    data = connected()
    data["teams"][0]["contract"]["unifiedStudio"]["projectRoleArn"] = "arn:aws:iam::555555555555:role/proj"
    (issue,) = _findings(data)
    assert issue.severity == "error" and "555555555555" in issue.problem and "accounts.trusted" in issue.fix
    data["accounts"]["trusted"] = ["555555555555"]
    assert _findings(data) == []


def test_one_domain_cannot_live_in_two_places():
    data = connected()
    data["teams"][1]["contract"]["unifiedStudio"] = studio(projectId="other", account="666666666666")
    (issue,) = _findings(data)
    assert issue.path == "teams[1].contract.unifiedStudio"
    assert "666666666666" in issue.problem and "444444444444" in issue.problem


def test_strict_mode_rejects_an_incomplete_contract():
    data = connected()
    del data["teams"][1]["contract"]["support"]
    parse_spec(data, today=TODAY)  # a warning only
    with pytest.raises(SpecError) as exc:
        parse_spec(data, today=TODAY, strict=True)
    assert any(i.path == "teams[1].contract" and "support" in i.problem for i in exc.value.issues)


def test_access_role_must_be_in_the_capacity_account():
    data = connected()
    data["teams"][0]["contract"]["unifiedStudio"]["accessRoleArn"] = "arn:aws:iam::444444444444:role/studio-access"
    (issue,) = _findings(data)
    assert issue.path == "teams[0].contract.unifiedStudio.accessRoleArn" and "444444444444" in issue.problem
    data["teams"][0]["contract"]["unifiedStudio"]["accessRoleArn"] = "arn:aws:iam::111111111111:role/studio-access"
    assert _findings(data) == []
