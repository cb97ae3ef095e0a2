"""``hyperpod-gov onboard``: the page, and every manifest it prints run through the generated admission policies
(their CEL in cel-python, bound by namespace as the API server binds them) and RBAC: admitted and allowed in the
team's namespace, refused in another team's."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
import yaml

from hyperpod_gov.charts.render import render
from hyperpod_gov.cli import main
from hyperpod_gov.onboard import example_kinds, onboarding_team, render_onboarding
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.connect import hyperpod_context_command, kubeconfig_command
from hyperpod_gov.plan.workloads import WORKLOAD_KINDS, kinds_for
from hyperpod_gov.spec import SpecError, load_spec
from tests.charts.rbac_eval import Authorizer, Request
from tests.conftest import EXAMPLES, TODAY

ENTERPRISE = EXAMPLES / "enterprise.yaml"
PLAN = build_plan(load_spec(ENTERPRISE, today=TODAY))
MANIFESTS = render(PLAN)
AUTHZ = Authorizer(MANIFESTS.all())
RESOURCE = {k.kind: (k.group, k.resource) for k in WORKLOAD_KINDS}


def admission_denials(objects: list[dict[str, Any]], obj: dict[str, Any], namespace: str) -> list[str]:
    """Every message of every ValidatingAdmissionPolicy bound to ``namespace`` (by the binding's namespace label
    selector) that ``obj`` fails on CREATE, with the binding's parameter object where it names one (the
    evaluator of tests/security/cel.py)."""
    from tests.security.cel import denials

    policies = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"}
    params = {(o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects if o["kind"] == "ConfigMap"}
    labels = {"kubernetes.io/metadata.name": namespace}
    failed = []
    for b in (o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"):
        selector = b["spec"].get("matchResources", {}).get("namespaceSelector", {})
        wanted = selector.get("matchLabels", {})
        if any(labels.get(k) != v for k, v in wanted.items()):
            continue
        if any(e["operator"] == "In" and namespace not in e["values"]
               for e in selector.get("matchExpressions", []) if e["key"] == "kubernetes.io/metadata.name"):
            continue
        ref = b["spec"].get("paramRef")
        param = params.get((ref.get("namespace"), ref["name"])) if ref else None
        failed += denials(policies[b["spec"]["policyName"]]["spec"], obj, namespace=namespace, params=param)
    return failed


def yaml_blocks(page: str) -> list[dict[str, Any]]:
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", page, re.S)]


def _other(team):
    teams = list(PLAN.tenants)
    return teams[(teams.index(team) + 1) % len(teams)]


CASES = [pytest.param(team.name, i, id=f"{team.name}-{k.kind}")
         for team in PLAN.tenants for i, k in enumerate(example_kinds(PLAN, team))]


@pytest.mark.parametrize("team_name, index", CASES)
def test_every_printed_manifest_is_admitted_in_the_team_namespace_and_refused_in_another(team_name, index):
    team = PLAN.team(team_name)
    manifest = yaml_blocks(render_onboarding(PLAN, team))[index]
    group, resource = RESOURCE[manifest["kind"]]
    assert manifest["metadata"]["namespace"] == team.namespace
    assert admission_denials(MANIFESTS.all(), manifest, team.namespace) == []
    assert AUTHZ.allowed([team.submitters_group], Request("create", group, resource, namespace=team.namespace))
    assert not AUTHZ.allowed([team.viewers_group], Request("create", group, resource, namespace=team.namespace))

    other = _other(team)
    moved = copy.deepcopy(manifest)
    moved["metadata"]["namespace"] = other.namespace
    assert admission_denials(MANIFESTS.all(), moved, other.namespace) != []
    assert not AUTHZ.allowed([team.submitters_group], Request("create", group, resource, namespace=other.namespace))


def test_the_page_prints_one_manifest_per_kind_the_team_may_create():
    # an InferenceEndpointConfig only with a model source the team may use (tests/charts/test_model_sources.py)
    for team in PLAN.tenants:
        page = render_onboarding(PLAN, team)
        blocks = yaml_blocks(page)
        assert [b["kind"] for b in blocks] == [k.kind for k in example_kinds(PLAN, team)]
        assert {b["apiVersion"] for b in blocks} == {k.api_version for k in example_kinds(PLAN, team)}
        assert all(f"### {k.kind}" in page for k in kinds_for(team))


def test_the_page_names_the_commands_namespace_queue_and_labels_as_the_plan_has_them():
    team = PLAN.team("speech")
    page = render_onboarding(PLAN, team)
    roles = [p.principal_arn for p in PLAN.principals if "speech" in p.teams]
    assert roles
    for arn in roles:
        assert f"`{arn}`" in page
        assert kubeconfig_command(PLAN, role_arn=arn) in page
    assert hyperpod_context_command(PLAN, team.namespace) in page
    assert f"`{team.namespace}`" in page and f"`{team.local_queue}`" in page
    for label in team.kueue_priority_classes:
        assert f"`{label}`" in page
    for block in yaml_blocks(page):
        labels = block["metadata"]["labels"]
        assert labels["kueue.x-k8s.io/queue-name"] == team.local_queue
        assert labels["kueue.x-k8s.io/priority-class"] in team.kueue_priority_classes


def test_an_inference_only_team_is_offered_no_training_kinds():
    page = render_onboarding(PLAN, PLAN.team("inference-platform"))
    kinds = {b["kind"] for b in yaml_blocks(page)}
    assert not kinds & {"Job", "PyTorchJob", "TFJob", "MPIJob", "HyperPodPyTorchJob"}
    if not kinds:
        assert "None of the kinds" in page


def test_an_unknown_team_names_the_teams():
    with pytest.raises(SpecError) as err:
        onboarding_team(PLAN, "nope")
    assert "use one of: applied-research, foundation-models, inference-platform, recommendations, speech" in str(err.value)


def test_the_command_prints_the_page_and_exits_1_for_an_unknown_team(capsys):
    assert main(["onboard", str(ENTERPRISE), "speech"]) == 0
    assert capsys.readouterr().out == render_onboarding(PLAN, PLAN.team("speech"))
    assert main(["onboard", str(ENTERPRISE), "nope"]) == 1
    err = capsys.readouterr().err
    assert "TEAM: is not a team of the spec ('nope')" in err and "speech" in err


def test_no_onboarding_page_carries_yaml_anchors():
    """A manifest to copy and `kubectl apply` is plain YAML: no `&id001` / `*id001` (an MPIJob's launcher and worker
    once shared their resources mapping)."""
    from hyperpod_gov.onboard import render_onboarding
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.spec import load_spec
    from tests.conftest import EXAMPLES, TODAY

    for example in ("enterprise.yaml", "startup.yaml", "existing.yaml"):
        plan = build_plan(load_spec(EXAMPLES / example, today=TODAY))
        for team in plan.tenants:
            page = render_onboarding(plan, team)
            assert "&id0" not in page and "*id0" not in page, (example, team.name)
