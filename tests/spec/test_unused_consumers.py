"""HPG-A008: a consumer account no workload identity uses is a warning, because every VPC endpoint's policy admits
each consumer account (issue 55: an unused one widened the perimeter unseen)."""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov.spec import SpecError, parse_spec, spec_warnings
from tests.conftest import BASE, TODAY

PARTNER = {"name": "partner", "id": "555555555555", "region": "us-east-1"}


def _spec(**changes):
    d = copy.deepcopy(BASE)  # consumer data (222222222222), used by team-a's trainer through its targetRoleArn
    d["accounts"]["consumers"].append(PARTNER)
    for path, value in changes.items():
        team, key = path.split(".")
        d["teams"][int(team)][key] = value
    return d


def _a008(data: dict) -> list[str]:
    return [str(w) for w in spec_warnings(parse_spec(data, today=TODAY), today=TODAY) if w.rule == "HPG-A008"]


def test_a_consumer_account_no_identity_uses_is_warned_with_path_value_and_fix():
    assert _a008(_spec()) == [
        "HPG-A008 accounts.consumers[1]: is used by no workload identity (no targetRole names it, no targetRoleArn "
        "is in it), yet every VPC endpoint admits its principals and resources ('partner (555555555555)'); remove "
        "it, or give a workload identity a targetRole (account: partner) or a targetRoleArn in 555555555555; "
        "declared ahead of its first identity, acknowledge HPG-A008 with the reason"
    ]


@pytest.mark.parametrize("identity", [
    {"serviceAccount": "loader", "targetRoleArn": "arn:aws:iam::555555555555:role/partner-reader"},
    {"serviceAccount": "loader", "targetRole": {"account": "partner", "name": "partner-reader"}},
], ids=["targetRoleArn", "targetRole"])
def test_a_consumer_account_an_identity_uses_is_not_warned(identity):
    assert _a008(_spec(**{"1.workloadIdentities": [identity]})) == []


def test_a_retiring_teams_identity_does_not_count_as_a_use():
    identity = {"serviceAccount": "loader", "targetRoleArn": "arn:aws:iam::555555555555:role/partner-reader"}
    assert len(_a008(_spec(**{"1.workloadIdentities": [identity], "1.retiring": True}))) == 1


def test_strict_refuses_it_unless_acknowledged_with_a_reason():
    with pytest.raises(SpecError) as err:
        parse_spec(_spec(), today=TODAY, strict=True)
    assert any(i.rule == "HPG-A008" for i in err.value.issues)
    acknowledged = _spec()
    acknowledged["acknowledgements"] = [{"id": "HPG-A008", "path": "accounts.consumers[1]",
                                         "reason": "partner's first identity lands in the next release"}]
    assert _a008(acknowledged) == []
