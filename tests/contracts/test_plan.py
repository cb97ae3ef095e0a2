"""The plan of connections: where each is created, what its project role may do, what retiring removes."""

from __future__ import annotations

from hyperpod_gov.plan.contracts import connection_name, studio_stack
from tests.contracts.helpers import PROJECT_ROLE, connected, plan_of, studio


def test_a_team_with_a_unified_studio_project_gets_one_connection_in_the_domains_account():
    plan = plan_of(connected())
    (stack,) = plan.contracts.studio
    assert (stack.name, stack.account, stack.region) == ("acme-studio-444444444444-us-east-1", "444444444444",
                                                         "us-east-1")
    (c,) = stack.connections
    assert (c.team, c.name, c.domain_id, c.project_id) == ("team-a", "acme-team-a", "dzd_4p9n6sw4qt9xgn",
                                                           "5b3jcjsy4ar7zr")
    assert (c.cluster_name, c.cluster_account, c.cluster_region) == ("ml", "111111111111", "us-east-1")
    assert plan.contracts.connection("team-b") is None


def test_domain_account_defaults_to_the_project_roles_and_region_to_the_capacity_region():
    data = connected()
    del data["teams"][0]["contract"]["unifiedStudio"]["account"]
    (stack,) = plan_of(data).contracts.studio
    assert (stack.account, stack.region) == ("111111111111", "us-east-1")


def test_teams_of_one_domain_share_a_stack_and_never_a_connection_name():
    data = connected()
    data["teams"][1]["contract"]["unifiedStudio"] = studio(projectId="otherproject")
    (stack,) = plan_of(data).contracts.studio
    assert [c.name for c in stack.connections] == ["acme-team-a", "acme-team-b"]


def test_connection_name_fits_datazone_limits_for_the_longest_names():
    name = connection_name("a" * 20, "b" * 40)
    assert len(name) <= 64
    assert studio_stack("acme", "444444444444", "eu-west-1") == "acme-studio-444444444444-eu-west-1"


def test_project_role_gets_exactly_a_submitters_access_entry():
    plan = plan_of(connected())
    entry = next(p for p in plan.principals if p.principal_arn == PROJECT_ROLE)
    submitter = next(p for p in plan.principals if p.principal_arn.endswith("role/A"))
    assert entry.groups == submitter.groups == ("hyperpod-ns-team-a-submitters",)
    assert entry.teams == ("team-a",)
    assert any(PROJECT_ROLE in shard.members for shard in plan.stacks.access)


def test_project_role_named_by_two_teams_gets_both_submitter_groups_in_one_entry():
    data = connected()
    data["teams"][1]["contract"]["unifiedStudio"] = studio(projectId="otherproject")
    entry = next(p for p in plan_of(data).principals if p.principal_arn == PROJECT_ROLE)
    assert entry.groups == ("hyperpod-ns-team-a-submitters", "hyperpod-ns-team-b-submitters")


def test_retiring_team_keeps_namespace_and_quota_but_loses_principals_identities_and_connection():
    data = connected()
    data["teams"][0]["retiring"] = True
    before, plan = plan_of(connected()), plan_of(data)
    assert plan.contracts.retiring == ("team-a",)
    assert plan.contracts.studio == ()
    assert not [p for p in plan.principals if "team-a" in p.teams]
    assert not [i for i in plan.identities if i.team == "team-a"]
    assert plan.team("team-a") == before.team("team-a")  # namespace, queues, quota and sharing unchanged
    assert "team-a" in {m for s in plan.stacks.teams for m in s.members}
    assert not plan.stacks.consumers or all(i.team != "team-a" for c in plan.stacks.consumers
                                            for i in c.identities)


def test_a_principal_shared_with_a_retiring_team_keeps_its_other_teams_groups():
    data = connected()
    data["teams"][1]["access"] = {"viewers": ["arn:aws:iam::111111111111:role/A"]}
    data["teams"][0]["retiring"] = True
    (entry,) = [p for p in plan_of(data).principals if p.principal_arn.endswith("role/A")]
    assert entry.groups == ("hyperpod-ns-team-b-viewers",) and entry.teams == ("team-b",)


def test_enterprise_example_connects_applied_research_through_unified_studio(enterprise_spec):
    from hyperpod_gov.plan import build_plan

    plan = build_plan(enterprise_spec)
    assert [c.team for c in plan.contracts.connections] == ["applied-research"]
    (stack,) = plan.contracts.studio
    assert stack.name == "acme-ml-studio-444444444444-us-east-1"
