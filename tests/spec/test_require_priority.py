"""teams[].requirePriority where it cannot apply: on a Slurm cluster (HPG-S003), and for a team that may use no
priority class (HPG-Q007), whose work admission would all refuse."""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov.spec import SpecError, parse_spec
from hyperpod_gov.spec.models import GovernanceSpec
from hyperpod_gov.spec.rules import check_spec
from tests.conftest import BASE, TODAY
from tests.slurm.spec_fixtures import slurm_base


def _errors(data: dict, rule: str) -> list[str]:
    return [str(i) for i in check_spec(GovernanceSpec.model_validate(data), today=TODAY) if i.rule == rule]


def test_the_key_defaults_to_off_and_is_read_in_camel_case():
    data = copy.deepcopy(BASE)
    data["teams"][0]["requirePriority"] = True
    spec = parse_spec(data, today=TODAY)
    assert spec.teams[0].require_priority and not spec.teams[1].require_priority


def test_a_slurm_team_cannot_require_a_priority_label():
    data = slurm_base()
    data["teams"][0]["requirePriority"] = True
    (found,) = _errors(data, "HPG-S003")
    assert found.startswith("HPG-S003 teams[0].requirePriority: only applies to an EKS-orchestrated cluster; "
                            "Kubernetes admission has no Slurm counterpart"), found
    assert "remove requirePriority (or set cluster.orchestrator: eks)" in found


def test_a_slurm_team_that_leaves_it_unset_is_not_refused():
    data = slurm_base()
    data["teams"][0]["requirePriority"] = False  # set, even to the default, is refused: the key means nothing there
    assert len(_errors(data, "HPG-S003")) == 1
    assert _errors(slurm_base(), "HPG-S003") == []


@pytest.mark.parametrize("change", [
    lambda d: d["teams"][0].update(priorityClasses=[]),
    lambda d: d["scheduler"].update(priorityClasses=[]),
], ids=["the team may use none", "the scheduler defines none"])
def test_requiring_a_label_the_team_cannot_use_is_refused(change):
    data = copy.deepcopy(BASE)
    data["teams"][0]["requirePriority"] = True
    change(data)
    with pytest.raises(SpecError) as e:
        parse_spec(data, today=TODAY)
    found = [str(i) for i in e.value.issues if i.path == "teams[0].requirePriority"]
    assert len(found) == 1 and found[0].startswith("HPG-Q007 teams[0].requirePriority: requires a priority class "
                                                   "label, but the team may use no priority class"), found
    assert "remove requirePriority" in found[0]


def test_requiring_a_label_with_a_class_to_use_is_accepted():
    data = copy.deepcopy(BASE)
    data["teams"][0]["requirePriority"] = True
    assert _errors(data, "HPG-Q007") == []
