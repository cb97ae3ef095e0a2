"""The team key's administrators (the capacity account, through IAM) manage the key but cannot give themselves its
use without a visible policy change (issue 55, low): no kms:CreateGrant, which would admit Decrypt through a grant
that neither the key policy nor drift shows; kms:PutKeyPolicy stays for CloudFormation's updates."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from hyperpod_gov.constructs.team_storage import TeamStorage
from hyperpod_gov.plan.data import TeamStoragePlan
from hyperpod_gov.stacks.base import apply_feature_flags
from tests.iam_eval import Request, decision, resolve
from tests.synth_helpers import minimal_app, resources

ADMIN = "arn:aws:iam::111111111111:role/Admin"  # any principal of the account its IAM policies allow kms:*
ROLE = "arn:aws:iam::111111111111:role/acme-team-a-trainer"


@pytest.fixture(scope="module")
def key_policy() -> list[dict]:
    app = minimal_app(analytics_reporting=False)
    apply_feature_flags(app)  # as the app synthesizes
    stack = cdk.Stack(app, "Team", env=cdk.Environment(account="111111111111", region="us-east-1"))
    TeamStorage(stack, "Storage", storage=TeamStoragePlan("team-a", "acme-team-a-111111111111-us-east-1", (ROLE,),
                                                          (), (), path="teams[0].storage"))
    template = Template.from_stack(stack).to_json()
    (policy,) = [p["KeyPolicy"] for _, p in resources(template, "AWS::KMS::Key")]
    return resolve(policy, template)["Statement"]


def test_the_key_administrators_cannot_create_a_grant(key_policy):
    # A grant to the admin (or anyone) would decrypt the team's data with no change to the key policy.
    assert decision(key_policy, Request("kms:CreateGrant", "*", ADMIN)) == "implicit"
    assert decision(key_policy, Request("kms:CreateGrant", "*", ROLE)) == "implicit"


@pytest.mark.parametrize("action", ["kms:PutKeyPolicy", "kms:CreateAlias", "kms:ScheduleKeyDeletion",
                                    "kms:CancelKeyDeletion", "kms:EnableKeyRotation", "kms:RevokeGrant",
                                    "kms:DescribeKey", "kms:GetKeyPolicy", "kms:TagResource", "kms:UpdateAlias"])
def test_the_key_administrators_still_manage_the_key(key_policy, action):
    assert decision(key_policy, Request(action, "*", ADMIN)) == "allow"


@pytest.mark.parametrize("action", ["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:ReEncryptFrom"])
def test_the_key_administrators_do_not_use_the_key(key_policy, action):
    assert decision(key_policy, Request(action, "*", ADMIN, {"kms:ViaService": "s3.us-east-1.amazonaws.com"})) \
        == "implicit"
