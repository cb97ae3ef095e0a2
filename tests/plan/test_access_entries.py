"""Access entries beyond the team groups: cluster.viewers, and the HyperPod spaces policies of interactive teams."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from hyperpod_gov.constructs import TeamAccessEntry
from hyperpod_gov.plan.access import SPACE_POLICY, SPACE_TEMPLATE_POLICY
from hyperpod_gov.plan.names import CLUSTER_VIEWERS_GROUP
from hyperpod_gov.diff import governance_diff as governance_changes  # the governance diff in words
from hyperpod_gov.spec import SpecError, parse_spec
from tests.conftest import TODAY
from tests.contracts.helpers import PROJECT_ROLE, connected, contract, plan_of
from tests.synth_helpers import minimal_app

A_SUBMITTER = "arn:aws:iam::111111111111:role/A"
A_VIEWER = "arn:aws:iam::111111111111:role/AViewer"
DASHBOARD = "arn:aws:iam::111111111111:role/Dashboard"
POLICY = "arn:aws:eks::aws:cluster-access-policy/"


def interactive():
    data = connected()
    data["teams"][0]["contract"]["approvedWorkloads"] = ["training", "interactive"]
    data["cluster"]["operators"] = ["training", "spaces"]  # interactive work runs on the spaces operator (HPG-D009)
    return data


def _access(plan, arn):
    return next(p for p in plan.principals if p.principal_arn == arn)


def test_an_interactive_teams_submitters_get_the_spaces_policies_scoped_to_its_namespace():
    plan = plan_of(interactive())
    for arn in (A_SUBMITTER, PROJECT_ROLE):
        policies = [p.emitted() for p in _access(plan, arn).access_policies]
        assert policies == [
            {"policyArn": POLICY + SPACE_POLICY, "accessScope": {"type": "namespace",
                                                                "namespaces": ["hyperpod-ns-team-a"]}},
            {"policyArn": POLICY + SPACE_TEMPLATE_POLICY, "accessScope": {"type": "namespace",
                                                                         "namespaces": ["jupyter-k8s-shared"]}},
        ]
    assert _access(plan, A_VIEWER).access_policies == ()  # viewers do not act, and spaces are acting


def test_a_team_without_interactive_gets_no_access_policy():
    plan = plan_of(connected())
    assert all(p.access_policies == () for p in plan.principals)


def test_a_principal_submitting_to_two_interactive_teams_gets_one_policy_over_both_namespaces():
    data = interactive()
    data["teams"][1]["contract"]["approvedWorkloads"] = ["interactive"]
    data["teams"][1]["access"] = {"submitters": [A_SUBMITTER]}
    space = _access(plan_of(data), A_SUBMITTER).access_policies[0]
    assert space.namespaces == ("hyperpod-ns-team-a", "hyperpod-ns-team-b")


def test_the_access_entry_carries_the_policies_cloudformation_takes():
    plan = plan_of(interactive())
    stack = cdk.Stack(minimal_app(), "T")
    TeamAccessEntry(stack, "E", cluster_name="ml-eks", access=_access(plan, A_SUBMITTER))
    Template.from_stack(stack).has_resource_properties("AWS::EKS::AccessEntry", {
        "PrincipalArn": A_SUBMITTER, "KubernetesGroups": ["hyperpod-ns-team-a-submitters"],
        "AccessPolicies": [
            {"PolicyArn": POLICY + SPACE_POLICY,
             "AccessScope": {"Type": "namespace", "Namespaces": ["hyperpod-ns-team-a"]}},
            {"PolicyArn": POLICY + SPACE_TEMPLATE_POLICY,
             "AccessScope": {"Type": "namespace", "Namespaces": ["jupyter-k8s-shared"]}},
        ],
    })


def test_a_cluster_viewer_gets_one_entry_onto_the_viewers_group_and_no_policy():
    data = connected()
    data["cluster"]["viewers"] = [DASHBOARD, A_VIEWER]
    plan = plan_of(data)
    assert _access(plan, DASHBOARD).groups == (CLUSTER_VIEWERS_GROUP,)
    assert _access(plan, DASHBOARD).path == "cluster.viewers[0]"
    # a team viewer who is also a cluster viewer: one entry with both groups
    assert _access(plan, A_VIEWER).groups == (CLUSTER_VIEWERS_GROUP, "hyperpod-ns-team-a-viewers")
    assert plan.cluster.viewers == tuple(sorted((DASHBOARD, A_VIEWER)))


def test_a_cluster_viewer_who_is_an_admin_is_refused():
    data = connected()
    data["cluster"]["viewers"] = [data["cluster"]["admins"][0]]
    with pytest.raises(SpecError) as err:
        parse_spec(data, today=TODAY)
    assert "cluster.viewers[0]" in str(err.value) and "HPG-A007" in str(err.value)
    assert "remove it from cluster.viewers, or from cluster.admins" in str(err.value)


def test_a_cluster_viewer_of_an_untrusted_account_is_refused():
    data = connected()
    data["cluster"]["viewers"] = ["arn:aws:iam::999999999999:role/Dashboard"]
    with pytest.raises(SpecError) as err:
        parse_spec(data, today=TODAY)
    assert "cluster.viewers[0]" in str(err.value) and "HPG-A004" in str(err.value)


def test_diff_marks_a_new_viewer_and_member_cluster_reads_turned_on_as_privilege():
    before = connected()
    before["cluster"]["memberClusterReads"] = False
    after = connected()
    after["cluster"]["viewers"] = [DASHBOARD]
    lines = governance_changes(plan_of(before), plan_of(after))
    assert f"cluster viewers: + {DASHBOARD} (privilege: reads every team's jobs, pods, events and queues)" in lines
    assert any(line.startswith("team members' cluster reads: off -> on (privilege:") for line in lines)
    assert not any("privilege" in line for line in governance_changes(plan_of(after), plan_of(before))
                   if "cluster reads" in line)
