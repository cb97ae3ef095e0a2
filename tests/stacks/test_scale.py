"""300 teams stay within CloudFormation's limits; a team's resources never move when another is added."""

from __future__ import annotations

import json

import pytest

from hyperpod_gov.plan import shard_of
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


def test_adding_a_team_never_moves_another(three_hundred):
    before = {f"team-{i:03d}": shard_of(f"team-{i:03d}", 16) for i in range(300)}
    after = {f"team-{i:03d}": shard_of(f"team-{i:03d}", 16) for i in range(301)}
    assert all(after[t] == s for t, s in before.items())


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
    smaller = synthesize(parse_spec(data, today=TODAY), tmp_path)
    before, after = _logical_ids_by_team(enterprise), _logical_ids_by_team(smaller)
    assert set(before) - set(after) == {"recommendations"}
    for team, placement in after.items():
        assert before[team] == placement, team
