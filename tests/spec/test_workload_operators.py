"""HPG-D009: a team's approved workloads run on an operator the cluster has (cluster.operators, or on an existing
cluster cluster.existing.operators), each refusal with path, value and fix."""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional

import pytest

from hyperpod_gov.explain import explain
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.views import CLUSTER
from hyperpod_gov.plan.workloads import WORKLOAD_KINDS
from hyperpod_gov.spec import RULES, GovernanceSpec, SpecError, parse_spec, read_yaml
from hyperpod_gov.spec.rulebook import RuleBook
from hyperpod_gov.spec.workloads import APPROVED_WORKLOADS, operator_needed
from tests.conftest import BASE, EXAMPLES, TODAY, as_existing
from tests.security.test_hostile_specs import refused_well

CONTRACT = {"businessOwner": "b@example.com", "operationsOwner": "o@example.com", "costOwner": "c@example.com",
            "dataClassification": "internal", "reviewBy": "2027-06-30"}
APPROVED = "teams[0].contract.approvedWorkloads"


def approving(*words: str, operators: Optional[list[str]] = None, existing: bool = False,
              running: Optional[list[str]] = None) -> dict[str, Any]:
    """BASE with team-a approved for ``words``; ``operators``: cluster.operators (None: left out)."""
    data = copy.deepcopy(BASE)
    if existing:
        as_existing(data)
        data["cluster"]["existing"]["networkPolicyEnforcement"] = {"enforcer": "vpc-cni"}
    data["teams"][0]["contract"] = {**CONTRACT, "approvedWorkloads": list(words)}
    if operators is not None:
        data["cluster"]["operators"] = operators
    if running is not None:
        data["cluster"]["existing"]["operators"] = running
    return data


def issues(data: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_spec(data, today=TODAY)
    return [str(i) for i in info.value.issues if i.rule == "HPG-D009"]


# (label, spec, every string one HPG-D009 message must hold)
REFUSED: list[tuple[str, dict[str, Any], list[str]]] = [
    ("inference without the inference operator (default operators)", approving("training", "inference"),
     [f"{APPROVED}[1]", "'inference'", "team team-a", "InferenceEndpointConfigs and JumpStartModels",
      "HyperPod inference operator", "cluster.operators: [training]",
      "add inference to cluster.operators (operators: [training, inference])",
      "or remove inference from the contract's approvedWorkloads"]),
    ("interactive without the spaces operator", approving("interactive", operators=["training", "inference"]),
     [f"{APPROVED}[0]", "'interactive'", "Workspaces", "spaces operator",
      "add spaces to cluster.operators (operators: [training, inference, spaces])"]),
    ("experimentation with no operator at all", approving("training", "experimentation", operators=[]),
     [f"{APPROVED}[1]", "'experimentation'", "Workspaces", "cluster.operators: []",
      "operators: [spaces]", "or remove experimentation"]),
    ("inference on an existing cluster that states no operator", approving("inference", existing=True),
     [f"{APPROVED}[0]", "'inference'", "cluster.operators installs [], cluster.existing.operators runs []",
      "install the inference operator on the cluster (docs/operators.md) and add inference to "
      "cluster.existing.operators"]),
    ("interactive on an existing cluster that runs only inference",
     approving("interactive", existing=True, running=["inference"]),
     [f"{APPROVED}[0]", "cluster.existing.operators runs [inference]",
      "add spaces to cluster.existing.operators if it runs there already, or to cluster.operators"]),
    ("ray without the ray operator (default operators)", approving("training", "ray"),
     [f"{APPROVED}[1]", "'ray'", "team team-a", "RayJobs, RayClusters and RayServices", "KubeRay operator",
      "cluster.operators: [training]", "add ray to cluster.operators (operators: [training, ray])",
      "or remove ray from the contract's approvedWorkloads"]),
    ("ray on an existing cluster that runs only training", approving("ray", existing=True, running=["training"]),
     [f"{APPROVED}[0]", "cluster.existing.operators runs [training]",
      "add ray to cluster.existing.operators if it runs there already, or to cluster.operators"]),
    ("an operator said to run already and installed again",
     approving("interactive", existing=True, operators=["spaces"], running=["spaces"]),
     ["cluster.existing.operators[0]", "'spaces'", "cluster.operators installs it too",
      "remove spaces from cluster.operators"]),
]


@pytest.mark.parametrize("data, expected", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_a_team_approved_for_work_no_installed_operator_runs_is_refused(data, expected):
    found = issues(data)
    assert [m for m in found if all(e in m for e in expected)], found


# Hostile-spec style: the whole rendered error holds the path and value, every problem a fix, no traceback.
HOSTILE: list[tuple[str, Callable[[], dict[str, Any]], Optional[str]]] = [
    ("inference only, operators emptied", lambda: approving("inference", operators=[]),
     f"HPG-D009 {APPROVED}[0]: lets team team-a create InferenceEndpointConfigs"),
    ("experimentation twice", lambda: approving("experimentation", "experimentation"),
     f"HPG-D009 {APPROVED}[0]: lets team team-a create Workspaces"),
    ("existing.operators naming one twice", lambda: approving("inference", existing=True,
                                                              running=["inference", "inference"]),
     "cluster.existing.operators: names an operator twice"),
    ("existing.operators naming an unknown operator", lambda: approving("training", existing=True,
                                                                        running=["notebooks"]),
     "cluster.existing.operators[0]: is not one of the allowed values ('notebooks')"),
    ("inference with the inference operator", lambda: approving("inference", operators=["training", "inference"]),
     None),
    ("interactive and experimentation with spaces", lambda: approving("interactive", "experimentation",
                                                                      operators=["spaces"]), None),
    ("ray with the ray operator", lambda: approving("training", "ray", operators=["training", "ray"]), None),
    ("ray on an existing cluster that runs KubeRay", lambda: approving("ray", existing=True, running=["ray"]), None),
    ("existing cluster where hyperpod-gov installs KubeRay", lambda: approving(
        "ray", existing=True, operators=["ray"]), None),
    ("training with no operator (Kubernetes Jobs)", lambda: approving("training", "fine-tuning", operators=[]), None),
    ("existing cluster that runs inference and spaces", lambda: approving(
        "inference", "interactive", existing=True, running=["inference", "spaces"]), None),
    ("existing cluster where hyperpod-gov installs spaces", lambda: approving(
        "interactive", existing=True, operators=["spaces"]), None),
]


@pytest.mark.parametrize("label, make, expected", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_operator_specs_are_refused_well_or_accepted(label, make, expected):
    refused_well(make(), expected)


def test_a_repeated_word_is_reported_once():
    assert len(issues(approving("experimentation", "experimentation"))) == 1
    assert len(issues(approving("interactive", "experimentation"))) == 2  # each word its own path


def test_a_team_without_a_contract_runs_training_and_needs_no_operator():
    data = copy.deepcopy(BASE)
    data["cluster"]["operators"] = []
    parse_spec(data, today=TODAY)


def test_the_enterprise_example_without_its_operators_is_refused_for_each_serving_and_notebook_team():
    data = read_yaml(EXAMPLES / "enterprise.yaml")
    assert data["cluster"].pop("operators") == ["training", "inference", "spaces"]
    found = issues(data)
    assert [m.split(":")[0] for m in found] == [
        "HPG-D009 teams[1].contract.approvedWorkloads[0]", "HPG-D009 teams[2].contract.approvedWorkloads[1]",
        "HPG-D009 teams[3].contract.approvedWorkloads[2]"], found


def test_slurm_clusters_are_not_checked():
    # enterprise-slurm's teams approve inference and experimentation; Slurm partitions run any work.
    parse_spec(read_yaml(EXAMPLES / "enterprise-slurm.yaml"), today=TODAY)


def test_the_rule_is_registered_as_an_error():
    (rule,) = [r for r in RULES.rules if r.id == "HPG-D009"]
    assert rule.level == "error"


def test_the_refusal_is_the_rules_alone():
    """Every other rule passes the spec that HPG-D009 refuses: without the rule, nothing would catch it."""
    spec = GovernanceSpec.model_validate(approving("training", "inference"))  # the models only, no rules
    without = RuleBook(RULES.name, tuple(r for r in RULES.rules if r.id != "HPG-D009"))
    assert [i for i in without.run(spec, TODAY) if i.severity == "error"] == []
    (found,) = [i for i in RULES.run(spec, TODAY) if i.severity == "error"]
    assert (found.rule, found.path) == ("HPG-D009", f"{APPROVED}[1]")


def test_the_word_to_operator_table_follows_the_workload_kinds():
    """spec.workloads.OPERATOR_NEEDED says what plan/workloads.py WORKLOAD_KINDS says: a word needs an operator
    when every kind it admits runs on that operator."""
    for word in APPROVED_WORKLOADS:
        kinds = [k for k in WORKLOAD_KINDS if word in k.approved_by]
        operators = {k.operator for k in kinds}
        if None in operators:
            assert operator_needed(word) is None, word
        else:
            (op,) = operators
            assert operator_needed(word) == (op, tuple(k.kind for k in kinds)), word


def test_an_existing_clusters_running_operators_reach_the_plan_the_cluster_view_and_explain():
    plan = build_plan(parse_spec(approving("inference", "interactive", existing=True,
                                           running=["spaces", "inference"]), today=TODAY))
    assert plan.cluster.existing.operators == ("inference", "spaces")
    (row,) = [r for r in CLUSTER.rows if r.spec == "cluster.existing.operators"]
    assert row.members and row.get(plan) == ("inference", "spaces")
    assert "Operators: none installed by hyperpod-gov; running already: inference, spaces" in explain(plan)
    created = build_plan(parse_spec(approving("training"), today=TODAY))
    assert row.get(created) == ()


def test_the_docs_existing_cluster_example_is_accepted_for_the_work_it_names():
    import yaml

    from tests.conftest import ROOT

    page = (ROOT / "docs" / "operators.md").read_text()
    (block,) = [b.split("```", 1)[0] for b in page.split("```yaml\n")[1:] if "existing:" in b.split("```", 1)[0]]
    cluster = yaml.safe_load(block)["cluster"]
    data = approving("training", "inference", "interactive", existing=True, operators=cluster["operators"],
                     running=cluster["existing"]["operators"])
    spec = parse_spec(data, today=TODAY)
    assert (spec.cluster.operators, spec.cluster.existing.operators) == (("spaces",), ("training", "inference"))
