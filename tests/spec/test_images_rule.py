"""HPG-A011: a team without ``images`` runs any image, so validate warns (issue 55, low finding)."""

from __future__ import annotations

import copy

from hyperpod_gov.spec import parse_spec
from hyperpod_gov.spec.loader import spec_review
from tests.conftest import BASE, TODAY
from tests.slurm.spec_fixtures import slurm_base


def _a011(data: dict) -> list[str]:
    review = spec_review(parse_spec(data, today=TODAY), today=TODAY)
    return [str(i) for i in review.warnings if i.rule == "HPG-A011"]


def test_a_team_without_images_is_warned_with_a_suggestion_of_its_own():
    found = _a011(copy.deepcopy(BASE))
    assert len(found) == 2
    assert found[0].startswith("HPG-A011 teams[0].images: is empty, so the team's pods may run any image")
    assert "111111111111.dkr.ecr.us-east-1.amazonaws.com/team-a/" in found[0]


def test_a_team_with_images_or_retiring_is_not_warned():
    data = copy.deepcopy(BASE)
    data["teams"][0]["images"] = ["public.ecr.aws/docker/library/"]
    data["teams"][1]["retiring"] = True
    assert _a011(data) == []


def test_a_slurm_cluster_is_not_warned():
    assert _a011(slurm_base()) == []


def test_the_examples_name_their_teams_registries():
    from hyperpod_gov.spec import load_spec
    from tests.conftest import EXAMPLES

    for name in ("enterprise", "startup", "existing"):
        spec = load_spec(EXAMPLES / f"{name}.yaml", today=TODAY)
        assert all(t.images for t in spec.teams), name
