"""The tools policy per team: exactly what `aws eks update-kubeconfig` and the HyperPod CLI call, nothing else."""

from __future__ import annotations

import json

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.tools_policy import (ACCESS_ENTRIES, ToolsPolicyPlan, ToolsStatement, attached_policy,
                                            foreign_documents, hyperpod_cluster_pattern)
from hyperpod_gov.spec import parse_spec
from tests.conftest import TODAY, as_existing

EKS = "arn:aws:eks:us-east-1:111111111111"
PARTNER = "arn:aws:iam::444444444444:role/Partner"


def _plan(data):
    return build_plan(parse_spec(data, today=TODAY))


def _attached(plan):
    return attached_policy((t.tools_policy for t in plan.teams), partition=plan.partition, region=plan.region,
                           account=plan.account, eks_name=plan.eks_cluster_name)


def _documents(plan):
    arn = hyperpod_cluster_pattern(plan.hyperpod_cluster_arn, partition=plan.partition, region=plan.region,
                                   account=plan.account)
    return foreign_documents((t.tools_policy for t in plan.teams), arn)


def _with_access(base, **access):
    base["teams"][0]["access"] = access
    return base


def test_the_document_names_this_cluster_the_teams_entries_and_nothing_else(base):
    plan = _plan(_with_access(base, viewers=["arn:aws:iam::111111111111:role/ops/AViewer"],
                              submitters=["arn:aws:iam::111111111111:role/A"]))
    policy = plan.team("team-a").tools_policy
    assert policy.document("HP-ARN") == {"Version": "2012-10-17", "Statement": [
        {"Sid": "EksDescribeCluster", "Effect": "Allow", "Action": "eks:DescribeCluster",
         "Resource": f"{EKS}:cluster/ml-eks"},
        {"Sid": "EksDescribeAccessEntries", "Effect": "Allow", "Action": "eks:DescribeAccessEntry",
         "Resource": [f"{EKS}:access-entry/ml-eks/role/111111111111/A/*",
                      f"{EKS}:access-entry/ml-eks/role/111111111111/AViewer/*"]},
        {"Sid": "HyperPodDescribeCluster", "Effect": "Allow", "Action": "sagemaker:DescribeCluster",
         "Resource": "HP-ARN"},
        {"Sid": "HyperPodListClusters", "Effect": "Allow", "Action": "sagemaker:ListClusters", "Resource": "*"},
    ]}
    assert policy.roles == ("A", "AViewer")  # role names, the path dropped: CfnManagedPolicy.Roles takes names
    assert policy.users == () and policy.foreign == ()


def test_no_action_is_a_wildcard_and_only_list_clusters_has_resource_star(base):
    policy = _plan(base).team("team-a").tools_policy
    for statement in policy.document("HP-ARN")["Statement"]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        assert not any("*" in a for a in actions)
        if statement["Resource"] == "*":
            assert actions == ["sagemaker:ListClusters"]  # it has no resource type


def test_principals_of_other_accounts_get_the_document_in_iam_json_and_no_attachment(base):
    base["accounts"]["trusted"] = ["444444444444"]
    plan = _plan(_with_access(base, viewers=["arn:aws:iam::444444444444:role/Partner"],
                              submitters=["arn:aws:iam::111111111111:role/A"]))
    policy = plan.team("team-a").tools_policy
    assert policy.roles == ("A",)
    assert policy.foreign == ("arn:aws:iam::444444444444:role/Partner",)
    documents = _documents(plan)
    assert set(documents) == {"team-a"}
    document = json.loads(documents["team-a"])
    # The same document; the HyperPod cluster's id is made at create, so before the deploy it is the account's.
    assert document == policy.document("arn:aws:sagemaker:us-east-1:111111111111:cluster/*")
    assert f"{EKS}:access-entry/ml-eks/role/444444444444/Partner/*" in document["Statement"][1]["Resource"]


def test_a_team_of_only_this_accounts_principals_writes_no_document(base):
    assert _documents(_plan(base)) == {}


def test_the_existing_clusters_arn_is_known_before_the_deploy(base):
    as_existing(base)
    plan = _plan(base)
    known = "arn:aws:sagemaker:us-east-1:111111111111:cluster/abcd1234efgh"
    assert plan.hyperpod_cluster_arn == known
    assert hyperpod_cluster_pattern(known, partition="aws", region="us-east-1", account="111111111111") == known
    assert hyperpod_cluster_pattern(None, partition="aws-cn", region="cn-north-1", account="111111111111") == \
        "arn:aws-cn:sagemaker:cn-north-1:111111111111:cluster/*"
    statement = plan.team("team-a").tools_policy.document("x")["Statement"][0]
    assert statement["Resource"] == f"{EKS}:cluster/shared-eks"


def test_iam_users_are_attached_as_users(base):
    base["accounts"]["trusted"] = ["111111111111"]
    policy = _plan(_with_access(base, viewers=["arn:aws:iam::111111111111:user/alice"])).team("team-a").tools_policy
    assert (policy.roles, policy.users) == ((), ("alice",))
    assert policy.document("x")["Statement"][1]["Resource"] == f"{EKS}:access-entry/ml-eks/user/111111111111/alice/*"


@pytest.mark.parametrize("change", [
    lambda t: t["access"].update(toolsPolicy=False),
    lambda t: t.update(retiring=True),
], ids=["toolsPolicy false", "retiring team"])
def test_no_policy_when_turned_off_or_retiring(base, change):
    change(base["teams"][0])
    assert _plan(base).team("team-a").tools_policy is None


def test_a_team_without_principals_has_a_policy_nobody_gets(base):
    policy = _plan(base).team("team-b").tools_policy
    assert (policy.statements, policy.roles, policy.users, policy.foreign) == ((), (), (), ())


def test_policies_do_not_depend_on_the_order_of_teams_or_principals(base):
    base["teams"][0]["access"] = {"viewers": ["arn:aws:iam::111111111111:role/V"],
                                  "submitters": ["arn:aws:iam::111111111111:role/A"]}
    before = _plan(base).tools_policies
    base["teams"].reverse()
    base["teams"][1]["access"] = {"viewers": ["arn:aws:iam::111111111111:role/A"],
                                  "submitters": ["arn:aws:iam::111111111111:role/V"]}
    assert _plan(base).tools_policies == before


def test_the_attached_policy_gathers_every_teams_roles_and_users_of_this_account(base):
    base["accounts"]["trusted"] = ["111111111111", "444444444444"]
    base["teams"][0]["access"] = {"viewers": ["arn:aws:iam::111111111111:user/alice", PARTNER],
                                  "submitters": ["arn:aws:iam::111111111111:role/A"]}
    base["teams"][1]["access"] = {"submitters": ["arn:aws:iam::111111111111:role/ops/B"]}
    policy = _attached(_plan(base))
    assert (policy.roles, policy.users, policy.foreign) == (("A", "B"), ("alice",), ())
    statements = {s["Sid"]: s["Resource"] for s in policy.document("HP-ARN")["Statement"]}
    assert statements == {
        "EksDescribeCluster": f"{EKS}:cluster/ml-eks",
        "EksDescribeAccessEntries": [f"{EKS}:access-entry/ml-eks/role/111111111111/*",
                                     f"{EKS}:access-entry/ml-eks/user/111111111111/*"],
        "HyperPodDescribeCluster": "HP-ARN",
        "HyperPodListClusters": "*",
    }


def test_no_attached_policy_when_every_team_turns_it_off_or_has_only_foreign_principals(base):
    base["accounts"]["trusted"] = ["444444444444"]
    base["teams"][0]["access"] = {"viewers": [PARTNER]}
    assert _attached(_plan(base)) is None
    assert set(_documents(_plan(base))) == {"team-a"}


def test_the_attached_policy_is_made_of_the_teams_policies_alone():
    """No plan needed: the teams' own policies (None where a team has none) and the cluster's names."""
    statements = (ToolsStatement(ACCESS_ENTRIES, ("eks:DescribeAccessEntry",), ("team-entries",)),
                  ToolsStatement("HyperPodListClusters", ("sagemaker:ListClusters",), ("*",)))
    b = ToolsPolicyPlan("b", statements, ("RoleB",), (), ())
    a = ToolsPolicyPlan("a", statements, ("RoleA",), ("alice",), (PARTNER,))
    only_foreign = ToolsPolicyPlan("c", statements, (), (), (PARTNER,))
    policy = attached_policy([b, None, only_foreign, a], partition="aws", region="eu-west-1", account="222222222222",
                             eks_name="lab")
    assert (policy.team, policy.roles, policy.users, policy.foreign) == ("", ("RoleA", "RoleB"), ("alice",), ())
    assert policy.statements[0].resources == ("arn:aws:eks:eu-west-1:222222222222:access-entry/lab/role/222222222222/*",
                                              "arn:aws:eks:eu-west-1:222222222222:access-entry/lab/user/222222222222/*")
    assert policy.statements[1] == statements[1]
    assert attached_policy([None, only_foreign], partition="aws", region="eu-west-1", account="222222222222",
                           eks_name="lab") is None
    assert set(foreign_documents([b, None, only_foreign, a], "HP-ARN")) == {"a", "c"}
