"""``hyperpod-gov onboard``: every manifest the page prints carries a priority class the team may use (issue 54:
a mutant that labelled the examples with a class outside ``TeamPlan.kueue_priority_classes`` survived), or none when the
team may use none."""

from __future__ import annotations

import copy
import re
from typing import Any, Iterator

import pytest
import yaml

from hyperpod_gov.onboard import PRIORITY_LABEL, render_onboarding
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import load_spec, parse_spec
from tests.conftest import BASE, EXAMPLES, TODAY

EKS_EXAMPLES = ("enterprise", "existing", "startup")  # the -slurm examples have no Kubernetes manifests


def _manifests(page: str) -> list[dict[str, Any]]:
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", page, re.S)]


def _priority_labels(node: Any) -> Iterator[str]:
    """Every value of the priority label anywhere in a manifest (top-level labels and any nested ones)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == PRIORITY_LABEL:
                yield value
            yield from _priority_labels(value)
    elif isinstance(node, list):
        for item in node:
            yield from _priority_labels(item)


@pytest.mark.parametrize("example", EKS_EXAMPLES)
def test_every_priority_label_of_an_examples_onboarding_page_is_one_the_team_may_use(example):
    plan = build_plan(load_spec(EXAMPLES / f"{example}.yaml", today=TODAY))
    for team in plan.tenants:
        manifests = _manifests(render_onboarding(plan, team))
        labels = [label for m in manifests for label in _priority_labels(m)]
        assert manifests and len(labels) == len(manifests), team.name  # one label per manifest
        assert set(labels) <= set(team.kueue_priority_classes), team.name


@pytest.fixture(scope="module")
def restricted():
    """Three cluster classes; team-a may use only the two heaviest, team-b none. The first class of the spec and
    the lightest of the cluster (background, 10) is neither's."""
    data = copy.deepcopy(BASE)
    data["scheduler"]["priorityClasses"] = [{"name": "background", "weight": 10},
                                            {"name": "training", "weight": 80},
                                            {"name": "urgent", "weight": 100}]
    data["teams"][0]["priorityClasses"] = ["urgent", "training"]
    data["teams"][1]["priorityClasses"] = []
    return build_plan(parse_spec(data, today=TODAY))


def test_a_team_that_may_not_use_the_clusters_first_class_is_shown_its_lightest_allowed_one(restricted):
    team = restricted.team("team-a")
    assert team.kueue_priority_classes == ("training-priority", "urgent-priority")
    page = render_onboarding(restricted, team)
    manifests = _manifests(page)
    assert [m["kind"] for m in manifests] == ["Job", "PyTorchJob", "TFJob", "MPIJob", "HyperPodPyTorchJob"]
    assert [list(_priority_labels(m)) for m in manifests] == [["training-priority"]] * 5
    assert "background-priority" not in page
    assert ("| Priority classes (label `kueue.x-k8s.io/priority-class`) | `training-priority`, `urgent-priority` |"
            in page)


def test_a_team_that_may_use_no_class_gets_manifests_without_a_priority_label(restricted):
    page = render_onboarding(restricted, restricted.team("team-b"))
    manifests = _manifests(page)
    assert len(manifests) == 5
    assert [list(_priority_labels(m)) for m in manifests] == [[]] * 5
    assert "| Priority classes (label `kueue.x-k8s.io/priority-class`) | none |" in page
