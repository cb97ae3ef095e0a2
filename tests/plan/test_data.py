"""Per-team data in the plan: deterministic team bucket names within S3's limits, who a bucket admits, the data
paths `explain` and the contract record list, and new grants marked as privilege changes by `diff`."""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov.contracts.record import render_record
from hyperpod_gov.explain import explain
from hyperpod_gov.plan import build_plan, names
from hyperpod_gov.plan.data import data_paths
from hyperpod_gov.diff import governance_diff as governance_changes  # the governance diff in words
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY

BUCKET = "acme-team-a-{}-111111111111-us-east-1"


def _plan(data):
    return build_plan(parse_spec(data, today=TODAY))


def test_team_bucket_names_hold_account_and_region_and_keep_joined_names_apart():
    a = names.team_bucket("ml", "a-b", "111111111111", "us-east-1")
    b = names.team_bucket("ml-a", "b", "111111111111", "us-east-1")
    assert a != b and a.startswith("ml-a-b-") and a.endswith("-111111111111-us-east-1")
    assert a == names.team_bucket("ml", "a-b", "111111111111", "us-east-1")  # deterministic


def test_the_longest_names_still_fit_s3s_63_characters():
    name = names.team_bucket("s" * 20, "t" * 40, "111111111111", "ap-southeast-3")
    assert len(name) == 63 and name.endswith("-111111111111-ap-southeast-3") and not name.startswith("-")
    assert names.team_bucket("s" * 20, "t" * 39 + "u", "111111111111", "ap-southeast-3") != name


def test_a_reserved_bucket_prefix_is_avoided():
    assert names.team_bucket("xn--ml", "a", "111111111111", "us-east-1").startswith("hpg-xn--ml-a-")


@pytest.fixture
def spec(base):
    a = base["teams"][0]
    a["access"]["viewers"] = ["arn:aws:iam::111111111111:role/AViewer"]
    a["workloadIdentities"].append({"serviceAccount": "writer", "grants": {
        "s3": [{"bucket": "lake", "prefix": "team-a", "access": "read-write"}], "secretsPrefix": "team-a",
        "ecrRepositories": ["team-a/trainer"]}})
    a["storage"] = {"bucket": "create"}
    return base


def test_a_team_bucket_admits_the_teams_roles_and_submitters(spec):
    storage = _plan(spec).team("team-a").storage
    assert storage.roles == ("arn:aws:iam::111111111111:role/acme-team-a-trainer",
                             "arn:aws:iam::111111111111:role/acme-team-a-writer")
    assert storage.submitters == ("arn:aws:iam::111111111111:role/A",)
    assert storage.readers == ()
    spec["teams"][0]["storage"]["viewersRead"] = True
    assert _plan(spec).team("team-a").storage.readers == ("arn:aws:iam::111111111111:role/AViewer",)


def test_every_identity_of_the_team_gets_read_write_on_its_bucket(spec):
    plan = _plan(spec)
    bucket = plan.team("team-a").storage.bucket
    assert {i.service_account: i.grants.team_bucket for i in plan.identities} == {"trainer": bucket,
                                                                                   "writer": bucket}


def test_data_paths_list_buckets_prefixes_secrets_and_repositories(spec):
    plan = _plan(spec)
    bucket = plan.team("team-a").storage.bucket
    assert data_paths(plan.team("team-a").identities) == [
        "ECR arn:aws:ecr:us-east-1:111111111111:repository/team-a/trainer pull (writer)",
        f"s3://{bucket}/* read-write, team key (trainer)",
        f"s3://{bucket}/* read-write, team key (writer)",
        "s3://lake/team-a/* read-write (writer)",
        "secrets arn:aws:secretsmanager:us-east-1:111111111111:secret:team-a/* (writer)",
        "whatever arn:aws:iam::222222222222:role/reader reaches (not the spec's) (trainer)",
    ]
    assert data_paths(plan.team("team-b").identities) == []
    text = explain(plan)
    flat = " ".join(text.split())  # explain wraps at 100 columns
    assert f"team bucket s3://{bucket} (own KMS key) admits 3 read-write, 0 read-only principal(s)" in flat
    assert "    s3://lake/team-a/* read-write (writer)" in text
    record = render_record(plan, plan.team("team-a"))
    assert "## Data paths" in record and "- s3://lake/team-a/* read-write (writer)" in record
    assert f"Team bucket `s3://{bucket}`" in record


def test_new_grants_and_bucket_principals_are_privilege_changes(spec):
    old, new = _plan(copy.deepcopy(BASE)), _plan(spec)
    lines = governance_changes(old, new)
    bucket = new.team("team-a").storage.bucket
    expected = [
        "team team-a data grant: + s3://lake/team-a/* read-write for writer (privilege: the team's pods reach this "
        "data)",
        f"team team-a data grant: + s3://{bucket}/* read-write (team bucket) for trainer (privilege: the team's "
        "pods reach this data)",
        "team team-a data grant: + secrets arn:aws:secretsmanager:us-east-1:111111111111:secret:team-a/* for "
        "writer (privilege: the team's pods reach this data)",
        "team team-a data grant: + ECR pull arn:aws:ecr:us-east-1:111111111111:repository/team-a/trainer for "
        "writer (privilege: the team's pods reach this data)",
        "team team-a team bucket admits: + arn:aws:iam::111111111111:role/A read-write (privilege: reaches the "
        "team bucket's data)",
        f"team team-a team bucket: none -> {bucket}",
    ]
    for line in expected:
        assert line in lines, (line, lines)


def test_a_wider_prefix_is_a_privilege_change(base):
    def with_prefix(prefix):
        data = copy.deepcopy(base)
        data["teams"][0]["workloadIdentities"][0] = {"serviceAccount": "trainer", "grants": {
            "s3": [{"bucket": "lake", "prefix": prefix}]}}
        return _plan(data)

    lines = governance_changes(with_prefix("a/b"), with_prefix("a"))
    assert "team team-a data grant: + s3://lake/a/* read for trainer (privilege: the team's pods reach this data)" \
        in lines


def test_image_registries_widening_is_a_privilege_change(base):
    narrow = copy.deepcopy(base)
    narrow["cluster"]["imageRegistries"] = ["team-a/"]
    lines = governance_changes(_plan(narrow), _plan(base))
    assert ("node image registries: + every repository of the region (privilege: the nodes pull from here, so "
            "every team's pods may run these images)") in lines
