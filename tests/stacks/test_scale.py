"""300 teams stay within CloudFormation's limits; a team's resources never move when another is added."""

from __future__ import annotations

import json

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec
from tests.conftest import TODAY
from tests.scale import many_teams_spec
from tests.synth_helpers import resources, synthesize

MAX_RESOURCES = 500
MAX_TEMPLATE_BYTES = 1_000_000
# A manifest travels in the custom resource's properties and in one Lambda request.
MAX_MANIFEST_BYTES = 256 * 1024


@pytest.fixture(scope="module")
def three_hundred(tmp_path_factory):
    spec = parse_spec(many_teams_spec(300), today=TODAY)
    return synthesize(spec, tmp_path_factory.mktemp("scale"))


def test_300_teams_fit_cloudformation_limits(three_hundred):
    counted_teams = set()
    for path in three_hundred.template_files():
        template = json.loads(path.read_text())
        count = len(template["Resources"])
        assert count <= MAX_RESOURCES, f"{path.name}: {count} resources"
        assert path.stat().st_size <= MAX_TEMPLATE_BYTES, f"{path.name}: {path.stat().st_size} bytes"
        for _, props in resources(template, "Custom::AWSCDK-EKS-KubernetesResource"):
            assert len(props["Manifest"].encode()) <= MAX_MANIFEST_BYTES
        counted_teams |= {p["ComputeQuotaTarget"]["TeamName"] for _, p in resources(template, "AWS::SageMaker::ComputeQuota")}
    assert len(counted_teams) == 300


def test_300_teams_are_spread_over_the_team_stacks(three_hundred):
    team_stacks = [n for n in three_hundred.templates if "-teams-" in n]
    assert len(team_stacks) == 16


# A 300-team synth takes about a minute of CPU (two under load), so the 300 + 1 pair is compared fully at the plan
# level, and synthesized at 19 + 1 teams.
SYNTH_TEAMS = 20
# The team added: it sorts before the teams it shares a stack with (team-005, team-016), so an id or a position
# taken from the order of a stack's teams would shift for them.
NEWCOMER = "team-004"


def _plans(teams: int):
    """The plan of a generated spec of ``teams`` - 1 teams, and of the same spec plus NEWCOMER."""
    after = many_teams_spec(teams)
    before = {**after, "teams": [t for t in after["teams"] if t["name"] != NEWCOMER]}
    return tuple(build_plan(parse_spec(data, today=TODAY)) for data in (before, after))


def _placement(plan) -> dict[tuple[str, ...], tuple]:
    """Where the plan puts everything that has a stack: team resources, access entries, identities, owner topics."""
    out: dict[tuple[str, ...], tuple] = {}
    for shard in plan.stacks.teams:
        for team in shard.members:
            out[("team", team)] = (shard.name,)
            for alarm in plan.monitoring.team(team).alarms:
                out[("alarm", alarm.name)] = (shard.name, alarm.topic)
        for topic in plan.monitoring.owner_topics(plan.team(t).monitoring for t in shard.members):
            out[("topic", shard.name, topic.key)] = (shard.name,)
    for shard in plan.stacks.access:
        for arn in shard.members:
            out[("access", arn)] = (shard.name,)
    for p in plan.principals:
        out[("principal", p.principal_arn)] = (p.key,)
    consumers = {(i.team, i.service_account): c.name for c in plan.stacks.consumers for i in c.identities}
    for i in plan.identities:
        out[("identity", i.team, i.service_account)] = (plan.stacks.team_stack(i.team).name,
                                                        consumers.get((i.team, i.service_account)),
                                                        i.source_role_name)
    return out


def test_adding_a_team_to_300_moves_nothing_in_the_plan():
    before, after = (_placement(p) for p in _plans(301))
    assert sum(1 for k in before if k[0] == "team") == 300
    assert len(before) > 300 * 6  # teams, alarms, access entries, identities: the comparison is not vacuous
    moved = [f"{k}: {v} -> {after.get(k, 'gone')}" for k, v in sorted(before.items()) if after.get(k) != v]
    assert moved == []
    assert {k for k in after if k not in before and k[0] == "team"} == {("team", NEWCOMER)}


def _resources(plan, out_dir) -> dict[tuple[str, str], dict]:
    """(stack, logical id) -> definition of every resource of the synthesized app (cdk-nag off: it makes no ids)."""
    from hyperpod_gov.stacks.app import synth

    assembly = synth(plan, out_dir, nag=False)
    return {(s.stack_name, logical_id): r for s in assembly.stacks for logical_id, r in s.template["Resources"].items()}


def test_adding_a_team_changes_no_stack_no_logical_id_and_no_other_teams_resource(tmp_path):
    plan_before, plan_after = _plans(SYNTH_TEAMS)
    joined = plan_after.stacks.team_stack(NEWCOMER)
    assert sorted(joined.members)[0] == NEWCOMER and len(joined.members) > 1
    old, new = _resources(plan_before, tmp_path / "before"), _resources(plan_after, tmp_path / "after")
    gone = sorted(f"{stack}/{logical_id} ({r['Type']})" for (stack, logical_id), r in old.items()
                  if new.get((stack, logical_id), {}).get("Type") != r["Type"])
    assert gone == []
    # Same id, other content: only the cluster dashboards, which show every team, and the tools policy, attached to
    # every team's roles (updated in place). A team's resources do not change (an id taken from a team's position in
    # its stack would keep the id and hand it to another team).
    cluster_dashboard_stacks = {plan_after.stacks.monitoring, *plan_after.stacks.dashboards}
    every_team = {(stack, "AWS::CloudWatch::Dashboard") for stack in cluster_dashboard_stacks} | {
        (plan_after.stacks.governance, "AWS::IAM::ManagedPolicy")}
    changed = sorted(k for k, r in old.items() if new[k] != r)
    assert changed and all((stack, old[(stack, i)]["Type"]) in every_team for stack, i in changed), changed
    # What is new belongs to the new team: its resources and its owners' topics in the stack the plan gives it, its
    # principals' access entries in theirs.
    access = {s.name for s in plan_after.stacks.access if any(f"/{NEWCOMER}-" in arn for arn in s.members)}
    added = sorted(k for k in new if k not in old)
    assert added
    assert [(stack, i) for stack, i in added if stack not in {joined.name} | access] == []
    assert [(stack, i) for stack, i in added if stack in access and not i.startswith(NEWCOMER.replace("-", ""))] == []


def _logical_ids_by_team(synthesized) -> dict[str, tuple[str, frozenset]]:
    out = {}
    for stack, template in synthesized.templates.items():
        for team in synthesized.spec.teams:
            ids = frozenset(i for i in template["Resources"] if i.startswith(team.name.replace("-", "")))
            if ids:
                out[team.name] = (stack, ids)
    return out


def test_removing_a_team_keeps_every_other_teams_stack_and_logical_ids(enterprise, tmp_path):
    from hyperpod_gov.spec import read_yaml
    from tests.conftest import EXAMPLES

    data = read_yaml(EXAMPLES / "enterprise.yaml")
    data["teams"] = [t for t in data["teams"] if t["name"] != "recommendations"]
    smaller = synthesize(parse_spec(data, today=TODAY), tmp_path, nag=False)  # cdk-nag makes no logical id
    before, after = _logical_ids_by_team(enterprise), _logical_ids_by_team(smaller)
    assert set(before) - set(after) == {"recommendations"}
    for team, placement in after.items():
        assert before[team] == placement, team
