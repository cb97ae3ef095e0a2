"""Per-team data in the spec: prefixes end at a '/', grants and registries are validated with path, value and fix,
and HPG-A006 refuses a targetRoleArn in the capacity account or of another team unless the identity says so."""

from __future__ import annotations

import pytest

from hyperpod_gov.spec import SpecError, parse_spec
from tests.conftest import TODAY

CAPACITY_ROLE = "arn:aws:iam::111111111111:role/data-reader"


def _messages(data) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_spec(data, today=TODAY)
    return [str(i) for i in info.value.issues]


def _identity(base, **w):
    base["teams"][0]["workloadIdentities"] = [{"serviceAccount": "trainer", **w}]
    return base


@pytest.mark.parametrize("given, read", [("data", "data/"), ("data/", "data/"), ("a/b", "a/b/"), ("", "")])
def test_an_s3_prefix_ends_at_a_slash(base, given, read):
    spec = parse_spec(_identity(base, grants={"s3": [{"bucket": "lake", "prefix": given}]}), today=TODAY)
    assert spec.teams[0].workload_identities[0].grants.s3[0].prefix == read


def test_a_target_roles_prefix_ends_at_a_slash_too(base):
    spec = parse_spec(_identity(base, targetRole={"account": "data", "name": "r",
                                                  "s3": [{"bucket": "lake", "prefix": "raw"}]}), today=TODAY)
    assert spec.teams[0].workload_identities[0].target_role.s3[0].prefix == "raw/"


@pytest.mark.parametrize("grants, expected", [
    ({"s3": [{"bucket": "lake", "prefix": "data?"}]}, ["grants.s3[0].prefix", "'*', '?' or '$'", "datasets/"]),
    ({"s3": [{"bucket": "lake", "prefix": "${aws:username}/"}]}, ["grants.s3[0].prefix", "policy variables"]),
    ({"s3": [{"bucket": "lake", "prefix": "a//b"}]}, ["grants.s3[0].prefix", "empty segment", "'a/b'"]),
    ({"secretsPrefix": ""}, ["grants.secretsPrefix", "every secret", "team-a/"]),
    ({"secretsPrefix": "team a"}, ["grants.secretsPrefix", "not a Secrets Manager name prefix"]),
    ({"secretsPrefix": "team-*"}, ["grants.secretsPrefix", "wildcards"]),
    ({"ecrRepositories": ["Team/Trainer"]}, ["grants.ecrRepositories", "not an ECR repository name", "team-a/trainer"]),
    ({"kmsKeyArns": ["alias/team"]}, ["grants.kmsKeyArns", "not a KMS key ARN"]),
])
def test_bad_grants_are_reported_with_path_value_and_fix(base, grants, expected):
    (message,) = _messages(_identity(base, grants=grants))
    for part in expected:
        assert part in message, message


def test_secrets_prefix_is_a_folder(base):
    spec = parse_spec(_identity(base, grants={"secretsPrefix": "team-a"}), today=TODAY)
    assert spec.teams[0].workload_identities[0].grants.secrets_prefix == "team-a/"


@pytest.mark.parametrize("registries, expected", [
    (["Team/"], "not an ECR repository name or name prefix"),
    (["arn:aws:ecr:us-east-1:111111111111:repository/*"], "not an ECR repository ARN"),
    ([], "at least 1"),
])
def test_bad_image_registries_are_reported(base, registries, expected):
    base["cluster"]["imageRegistries"] = registries
    (message,) = _messages(base)
    assert "cluster.imageRegistries" in message and expected in message, message


# --- HPG-A006 --------------------------------------------------------------------------------------------------------


def _with_capacity_as_consumer(base):
    base["accounts"]["consumers"].append({"name": "self", "id": "111111111111", "region": "us-east-1"})
    return base


def test_a_target_role_in_the_capacity_account_is_refused(base):
    (message,) = _messages(_identity(_with_capacity_as_consumer(base), targetRoleArn=CAPACITY_ROLE))
    assert message.startswith("HPG-A006 teams[0].workloadIdentities[0].targetRoleArn: is in the capacity account")
    assert CAPACITY_ROLE in message and "grants" in message and "allowSameAccount: true" in message


def test_a_target_role_in_the_capacity_account_is_accepted_when_the_spec_says_so(base):
    parse_spec(_identity(_with_capacity_as_consumer(base), targetRoleArn=CAPACITY_ROLE, allowSameAccount=True),
               today=TODAY)


def test_another_teams_created_target_role_is_refused(base):
    base["teams"][1]["workloadIdentities"] = [{"serviceAccount": "loader", "targetRole": {
        "account": "data", "name": "team-b-loader"}}]
    _identity(base, targetRoleArn="arn:aws:iam::222222222222:role/team-b-loader")
    (message,) = _messages(base)
    assert "HPG-A006 teams[0].workloadIdentities[0].targetRoleArn: is the role hyperpod-gov creates for team team-b" \
           " (teams[1].workloadIdentities[0].targetRole)" in message
    assert "allowOtherTeamRole: true" in message
    base["teams"][0]["workloadIdentities"][0]["allowOtherTeamRole"] = True
    parse_spec(base, today=TODAY)


def test_a_role_path_does_not_hide_another_teams_role(base):
    base["teams"][1]["workloadIdentities"] = [{"serviceAccount": "loader", "targetRole": {
        "account": "data", "name": "team-b-loader"}}]
    _identity(base, targetRoleArn="arn:aws:iam::222222222222:role/some/path/team-b-loader")
    assert any("creates for team team-b" in m for m in _messages(base))


def test_another_teams_source_role_needs_both_opt_ins(base):
    _with_capacity_as_consumer(base)
    base["teams"][1]["workloadIdentities"] = [{"serviceAccount": "loader"}]
    other = "arn:aws:iam::111111111111:role/acme-team-b-loader"
    _identity(base, targetRoleArn=other, allowSameAccount=True)
    (message,) = _messages(base)
    assert "named like the Pod Identity source roles" in message and "allowOtherTeamRole" in message
    base["teams"][0]["workloadIdentities"][0]["allowOtherTeamRole"] = True
    parse_spec(base, today=TODAY)


def test_a_consumer_accounts_own_role_is_not_refused(base):
    parse_spec(base, today=TODAY)  # teams[0] assumes arn:aws:iam::222222222222:role/reader
