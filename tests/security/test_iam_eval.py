"""The test evaluator itself (tests/security/iam_eval.py), on small hand-written policies with known answers."""

from __future__ import annotations

import pytest

from tests.security.iam_eval import Request, aws_request, evaluate

ME = "arn:aws:iam::111111111111:role/me"
THEM = "arn:aws:iam::999999999999:role/them"


def policy(*statements):
    return {"Version": "2012-10-17", "Statement": list(statements)}


def allow(condition=None, action="*", resource="*", principal=None):
    s = {"Effect": "Allow", "Principal": principal or {"AWS": "*"}, "Action": action, "Resource": resource}
    if condition:
        s["Condition"] = condition
    return s


def test_nothing_allowed_is_an_implicit_deny():
    assert evaluate(policy(), Request("s3:GetObject", "arn:aws:s3:::b/k", ME)) == "ImplicitDeny"


def test_an_explicit_deny_wins_over_an_allow():
    p = policy(allow(), {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "*"})
    assert evaluate(p, Request("s3:GetObject", "arn:aws:s3:::b/k", ME)) == "ExplicitDeny"
    assert evaluate(p, Request("logs:PutLogEvents", "arn:aws:logs:us-east-1:1:log-group:x", ME)) == "Allow"


@pytest.mark.parametrize("pattern, action, hit", [
    ("s3:Get*", "s3:GetObject", True), ("s3:Get*", "s3:PutObject", False), ("S3:GETOBJECT", "s3:GetObject", True),
    ("ecr:Batch?etImage", "ecr:BatchGetImage", True), ("*", "sts:AssumeRole", True),
])
def test_actions_match_with_wildcards_and_ignore_case(pattern, action, hit):
    assert (evaluate(policy(allow(action=pattern)), Request(action, "*", ME)) == "Allow") is hit


def test_not_action_and_not_resource_invert_the_match():
    p = policy({"Effect": "Allow", "Principal": "*", "NotAction": "s3:Delete*", "NotResource": "arn:aws:s3:::x/*"})
    assert evaluate(p, Request("s3:GetObject", "arn:aws:s3:::y/k", ME)) == "Allow"
    assert evaluate(p, Request("s3:DeleteObject", "arn:aws:s3:::y/k", ME)) == "ImplicitDeny"
    assert evaluate(p, Request("s3:GetObject", "arn:aws:s3:::x/k", ME)) == "ImplicitDeny"


def test_resources_match_case_sensitively():
    p = policy(allow(resource="arn:aws:s3:::prod-us-east-1-starport-layer-bucket/*"))
    assert evaluate(p, Request("s3:GetObject", "arn:aws:s3:::prod-us-east-1-starport-layer-bucket/l", None)) == "Allow"
    assert evaluate(p, Request("s3:GetObject", "arn:aws:s3:::PROD-us-east-1-starport-layer-bucket/l", None)) \
        == "ImplicitDeny"
    assert evaluate(p, Request("s3:GetObject", "arn:aws:s3:::prod-us-east-1-starport-layer-bucket-x/l", None)) \
        == "ImplicitDeny"


def test_principal_forms():
    star, aws_star = policy(allow(principal="*")), policy(allow())
    account = policy(allow(principal={"AWS": "111111111111"}))
    root = policy(allow(principal={"AWS": "arn:aws:iam::111111111111:root"}))
    arn = policy(allow(principal={"AWS": [ME]}))
    anonymous = Request("s3:GetObject", "arn:aws:s3:::b/k", None)
    assert evaluate(star, anonymous) == "Allow" and evaluate(aws_star, anonymous) == "Allow"
    for p in (account, root, arn):
        assert evaluate(p, Request("s3:GetObject", "*", ME)) == "Allow"
        assert evaluate(p, Request("s3:GetObject", "*", THEM)) == "ImplicitDeny"
        assert evaluate(p, anonymous) == "ImplicitDeny"


def test_keys_of_one_operator_all_hold_and_one_value_of_a_key_is_enough():
    p = policy(allow({"StringEquals": {"aws:PrincipalAccount": ["111111111111", "222222222222"],
                                       "aws:ResourceAccount": ["111111111111", "222222222222"]}}))
    assert evaluate(p, aws_request("s3:GetObject", "*", principal=ME, resource_account="222222222222")) == "Allow"
    assert evaluate(p, aws_request("s3:GetObject", "*", principal=ME, resource_account="999999999999")) \
        == "ImplicitDeny"
    assert evaluate(p, aws_request("s3:GetObject", "*", principal=THEM, resource_account="111111111111")) \
        == "ImplicitDeny"


def test_every_operator_of_a_block_holds():
    p = policy(allow({"StringEquals": {"aws:PrincipalAccount": "111111111111"},
                      "Null": {"aws:ResourceAccount": "true"}}))
    assert evaluate(p, aws_request("ec2:DescribeInstances", "*", principal=ME, resource_account=None)) == "Allow"
    assert evaluate(p, aws_request("ec2:DescribeInstances", "*", principal=ME, resource_account="1" * 12)) \
        == "ImplicitDeny"


def test_a_missing_key_fails_a_positive_operator_and_passes_a_negated_one():
    ctx: dict = {}
    assert evaluate(policy(allow({"StringEquals": {"aws:ResourceAccount": "1"}})), Request("a:b", "*", ME, ctx)) \
        == "ImplicitDeny"
    assert evaluate(policy(allow({"StringLike": {"aws:ResourceAccount": "*"}})), Request("a:b", "*", ME, ctx)) \
        == "ImplicitDeny"
    assert evaluate(policy(allow({"StringNotEquals": {"aws:ResourceAccount": "1"}})), Request("a:b", "*", ME, ctx)) \
        == "Allow"
    assert evaluate(policy(allow({"StringEqualsIfExists": {"aws:ResourceAccount": "1"}})),
                    Request("a:b", "*", ME, ctx)) == "Allow"
    assert evaluate(policy(allow({"StringEqualsIfExists": {"aws:ResourceAccount": "1"}})),
                    Request("a:b", "*", ME, {"aws:ResourceAccount": "2"})) == "ImplicitDeny"


def test_string_not_equals_and_like():
    p = policy(allow({"StringNotEquals": {"aws:ResourceAccount": ["1", "2"]}}))
    assert evaluate(p, Request("a:b", "*", ME, {"aws:ResourceAccount": "3"})) == "Allow"
    assert evaluate(p, Request("a:b", "*", ME, {"aws:ResourceAccount": "2"})) == "ImplicitDeny"
    like = policy(allow({"StringLike": {"aws:PrincipalArn": "arn:aws:iam::111111111111:role/*"}}))
    assert evaluate(like, Request("a:b", "*", ME, {"aws:PrincipalArn": ME})) == "Allow"
    assert evaluate(like, Request("a:b", "*", THEM, {"aws:PrincipalArn": THEM})) == "ImplicitDeny"


def test_condition_key_names_ignore_case_values_do_not():
    p = policy(allow({"StringEquals": {"AWS:PRINCIPALACCOUNT": "111111111111"}}))
    assert evaluate(p, Request("a:b", "*", ME, {"aws:PrincipalAccount": "111111111111"})) == "Allow"
    q = policy(allow({"StringEquals": {"aws:PrincipalOrgID": "o-abcdefghij"}}))
    assert evaluate(q, Request("a:b", "*", ME, {"aws:PrincipalOrgID": "O-ABCDEFGHIJ"})) == "ImplicitDeny"


def test_set_qualifiers():
    any_of = policy(allow({"ForAnyValue:StringEquals": {"aws:TagKeys": ["team"]}}))
    all_of = policy(allow({"ForAllValues:StringEquals": {"aws:TagKeys": ["team", "cost"]}}))
    assert evaluate(any_of, Request("a:b", "*", ME, {"aws:TagKeys": ["x", "team"]})) == "Allow"
    assert evaluate(any_of, Request("a:b", "*", ME, {"aws:TagKeys": ["x"]})) == "ImplicitDeny"
    assert evaluate(any_of, Request("a:b", "*", ME, {})) == "ImplicitDeny"
    assert evaluate(all_of, Request("a:b", "*", ME, {"aws:TagKeys": ["team", "cost"]})) == "Allow"
    assert evaluate(all_of, Request("a:b", "*", ME, {"aws:TagKeys": ["team", "x"]})) == "ImplicitDeny"
    assert evaluate(all_of, Request("a:b", "*", ME, {})) == "Allow"  # the empty set
    none_of = policy(allow({"ForAllValues:StringNotEquals": {"aws:TagKeys": ["owner"]}}))
    assert evaluate(none_of, Request("a:b", "*", ME, {"aws:TagKeys": ["team"]})) == "Allow"
    assert evaluate(none_of, Request("a:b", "*", ME, {"aws:TagKeys": ["team", "owner"]})) == "ImplicitDeny"


def test_bool_and_null():
    service = policy(allow({"Bool": {"aws:PrincipalIsAWSService": "true"}}))
    assert evaluate(service, aws_request("s3:GetObject", "*", principal=None, resource_account=None,
                                         service=True)) == "Allow"
    assert evaluate(service, aws_request("s3:GetObject", "*", principal=ME, resource_account=None)) \
        == "ImplicitDeny"
    present = policy(allow({"Null": {"aws:ResourceAccount": "false"}}))
    assert evaluate(present, Request("a:b", "*", ME, {"aws:ResourceAccount": "1"})) == "Allow"
    assert evaluate(present, Request("a:b", "*", ME, {})) == "ImplicitDeny"


@pytest.mark.parametrize("condition", [{"NumericLessThan": {"a:b": "1"}}, {"ForEach:StringEquals": {"a:b": "1"}},
                                       {"NullIfExists": {"a:b": "true"}}])
def test_an_unknown_operator_raises_instead_of_passing(condition):
    with pytest.raises(ValueError):
        evaluate(policy(allow(condition)), Request("a:b", "*", ME, {"a:b": "1"}))
