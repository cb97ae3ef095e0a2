"""teams[].requirePriority: the team's parameters say so, and the team-limits policy refuses its work without a
kueue.x-k8s.io/priority-class label (issue 56: unlabeled work silently ran at the lowest priority)."""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov.charts import render
from hyperpod_gov.charts.admission import TEAM_LIMITS_POLICY, team_limits_policy
from hyperpod_gov.charts.team_limits import REQUIRE_PRIORITY_KEY
from hyperpod_gov.diff import governance_changes
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.names import QUEUE_LABEL
from hyperpod_gov.plan.workloads import PRIORITY_LABEL, WORKLOAD_KINDS
from hyperpod_gov.spec import parse_spec
from tests.charts.test_workloads import (BY_KIND, CONTRACT, MEMBER, MPI_OPERATOR, NS, _owned, _spec, admit,
                                         example)
from tests.conftest import TODAY
from tests.security.cel import denials

KINDS = ["Pod", *(k.kind for k in WORKLOAD_KINDS)]
REFUSED = f"team team-a requires a priority class on its work (teams[].requirePriority): add the label {PRIORITY_LABEL}"


def _data(base, **team_a) -> dict:
    return _spec(base, contract={**CONTRACT, "approvedWorkloads": ["training", "inference", "interactive"]},
                 priorityClasses=["training"], **team_a)


@pytest.fixture
def plan(base):
    return build_plan(parse_spec(_data(base, requirePriority=True), today=TODAY))


@pytest.fixture
def manifests(plan):
    return render(plan)


def _params(manifests, team: str) -> dict:
    (cm,) = [o for o in manifests.teams[team] if o["kind"] == "ConfigMap"]
    return cm


@pytest.fixture
def params(manifests) -> dict:
    return _params(manifests, "team-a")


def _work(kind: str, priority: str | None = "training-priority") -> dict:
    """The kind's example (a bare Pod for "Pod"), with the priority label ``priority`` (None: without it)."""
    if kind == "Pod":
        job = example(BY_KIND["Job"])
        obj = {"apiVersion": "v1", "kind": "Pod", "metadata": copy.deepcopy(job["metadata"]),
               "spec": copy.deepcopy(job["spec"]["template"]["spec"])}
    else:
        obj = example(BY_KIND[kind])
    obj["metadata"]["labels"].pop(PRIORITY_LABEL)
    if priority is not None:
        obj["metadata"]["labels"][PRIORITY_LABEL] = priority
    return obj


def test_the_teams_parameters_carry_the_requirement_and_only_its_own(plan, manifests):
    by_name = {t.name: t for t in plan.tenants}
    assert by_name["team-a"].require_priority and not by_name["team-b"].require_priority
    assert _params(manifests, "team-a")["data"][REQUIRE_PRIORITY_KEY] == "true"
    assert REQUIRE_PRIORITY_KEY not in _params(manifests, "team-b")["data"]


@pytest.mark.parametrize("kind", KINDS)
def test_work_without_a_priority_label_is_refused_when_the_team_requires_one(kind, params):
    found = admit(_work(kind, None), params)
    assert len(found) == 1 and found[0].startswith(REFUSED), found
    assert "ConfigMap hyperpod-gov-system/team-a" in found[0]


@pytest.mark.parametrize("kind", KINDS)
def test_work_labelled_with_an_allowed_class_is_admitted(kind, params):
    assert admit(_work(kind), params) == []


@pytest.mark.parametrize("kind", ["Job", "PyTorchJob"])
def test_a_label_outside_the_teams_classes_is_still_refused_by_the_class_check(kind, params):
    found = admit(_work(kind, "urgent-priority"), params)
    assert len(found) == 1 and "is not a priority class team team-a may use" in found[0], found


@pytest.mark.parametrize("kind", KINDS)
def test_without_the_requirement_unlabelled_work_is_admitted(kind, params):
    relaxed = copy.deepcopy(params)
    del relaxed["data"][REQUIRE_PRIORITY_KEY]
    assert admit(_work(kind, None), relaxed) == []
    relaxed["data"][REQUIRE_PRIORITY_KEY] = "false"
    assert admit(_work(kind, None), relaxed) == []


def test_another_teams_parameters_are_unaffected(manifests):
    team_b = _params(manifests, "team-b")
    obj = _work("Job", None)
    obj["metadata"]["namespace"] = "hyperpod-ns-team-b"
    assert denials(team_limits_policy(), obj, namespace="hyperpod-ns-team-b", params=team_b) == []


def test_what_a_managed_controller_makes_is_held_through_its_owner(params):
    launcher = _owned("Job", "batch/v1", "MPIJob", "kubeflow.org/v2beta1")
    assert PRIORITY_LABEL not in launcher["metadata"]["labels"]
    assert admit(launcher, params, user=MPI_OPERATOR) == []
    pod = _owned("Pod", "v1", "Job", "batch/v1")
    assert admit(pod, params, user={"username": "system:serviceaccount:kube-system:job-controller"}) == []
    # the same objects written by a team member are the team's own work
    assert any(m.startswith(REFUSED) for m in admit(launcher, params, user=MEMBER))


def test_an_update_may_not_remove_the_label_but_work_created_unlabelled_before_is_updated(params):
    labelled, unlabelled = _work("Job"), _work("Job", None)
    policy = team_limits_policy()
    update = {"namespace": NS, "operation": "UPDATE", "params": params}
    assert denials(policy, unlabelled, old_object=unlabelled, **update) == []
    assert denials(policy, labelled, old_object=unlabelled, **update) == []
    found = denials(policy, unlabelled, old_object=labelled, **update)
    assert len(found) == 1 and found[0].startswith(REFUSED), found


def test_removing_the_condition_admits_unlabelled_work(params):
    """The refusal is the new validation's: the policy without it admits what it refused."""
    policy = team_limits_policy()
    kept = [v for v in policy["validations"] if "requirePriority" not in v.get("messageExpression", "")]
    assert len(kept) == len(policy["validations"]) - 1
    obj = _work("Job", None)
    assert denials(policy, obj, namespace=NS, params=params) != []
    assert denials({**policy, "validations": kept}, obj, namespace=NS, params=params) == []


def test_the_queue_label_alone_is_not_enough(params):
    obj = _work("Pod", None)
    assert obj["metadata"]["labels"] == {QUEUE_LABEL: f"{NS}-localqueue"}
    assert any(m.startswith(REFUSED) for m in admit(obj, params))


def test_the_policy_name_is_the_team_limits_policy(manifests):
    (binding,) = [o for o in manifests.teams["team-a"] if o["kind"] == "ValidatingAdmissionPolicyBinding"
                  and o["spec"]["policyName"] == TEAM_LIMITS_POLICY]
    assert binding["spec"]["paramRef"]["name"] == "team-a"


# --- diff and explain ---------------------------------------------------------------------------------------------

def test_diff_shows_the_requirement_turned_on_and_it_is_no_privilege_change(base):
    old = build_plan(parse_spec(_data(copy.deepcopy(base)), today=TODAY))
    new = build_plan(parse_spec(_data(copy.deepcopy(base), requirePriority=True), today=TODAY))
    changes = [c for c in governance_changes(old, new) if c.path == "teams[].requirePriority"]
    assert [(c.key, c.old, c.new, c.privilege) for c in changes] == [("team-a", "off", "on", None)], changes
