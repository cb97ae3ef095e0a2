"""``hyperpod-gov onboard``: the page, and every manifest it prints run through the generated admission policies
(their CEL in cel-python, bound by namespace as the API server binds them) and RBAC: admitted and allowed in the
team's namespace, refused in another team's."""

from __future__ import annotations

import copy
import re
from typing import Any

import celpy
import pytest
import yaml
from celpy import celtypes

from hyperpod_gov.charts.rbac import JOB_KINDS
from hyperpod_gov.charts.render import render
from hyperpod_gov.cli import main
from hyperpod_gov.onboard import onboarding_team, render_onboarding
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.connect import hyperpod_context_command, kubeconfig_command
from hyperpod_gov.plan.workloads import WORKLOAD_KINDS, allowed_priority_classes, kinds_for
from hyperpod_gov.spec import SpecError, load_spec
from tests.charts.rbac_eval import Authorizer, Request
from tests.conftest import EXAMPLES, TODAY

ENTERPRISE = EXAMPLES / "enterprise.yaml"
PLAN = build_plan(load_spec(ENTERPRISE, today=TODAY))
MANIFESTS = render(PLAN)
AUTHZ = Authorizer(MANIFESTS.all())
RESOURCE = {k.kind: (k.group, k.resource) for k in WORKLOAD_KINDS}
ENV = celpy.Environment()


PROGRAMS: dict[str, Any] = {}


def _run(expression: str, activation: dict[str, Any]) -> Any:
    if expression not in PROGRAMS:
        PROGRAMS[expression] = ENV.program(ENV.compile(expression))
    return PROGRAMS[expression].evaluate(activation)


def admission_denials(objects: list[dict[str, Any]], obj: dict[str, Any], namespace: str) -> list[str]:
    """Every message of every ValidatingAdmissionPolicy bound to ``namespace`` (by the binding's namespace label
    selector) that ``obj`` fails on CREATE; evaluation order as in tests/security/cel.py."""
    policies = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"}
    labels = {"kubernetes.io/metadata.name": namespace}
    group, resource = RESOURCE[obj["kind"]]
    failed = []
    for b in (o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"):
        wanted = b["spec"].get("matchResources", {}).get("namespaceSelector", {}).get("matchLabels", {})
        if any(labels.get(k) != v for k, v in wanted.items()):
            continue
        policy = policies[b["spec"]["policyName"]]["spec"]
        if not any(group in r["apiGroups"] and resource in r["resources"] and "CREATE" in r["operations"]
                   for r in policy["matchConstraints"]["resourceRules"]):
            continue
        activation: dict[str, Any] = {"object": celpy.json_to_cel(obj),
                                      "request": celpy.json_to_cel({"namespace": namespace, "operation": "CREATE"})}
        if not all(bool(_run(c["expression"], activation)) for c in policy.get("matchConditions", [])):
            continue
        values: dict[Any, Any] = {}
        for v in policy.get("variables", []):
            activation["variables"] = celtypes.MapType(values)
            values[celtypes.StringType(v["name"])] = _run(v["expression"], activation)
        activation["variables"] = celtypes.MapType(values)
        for v in policy["validations"]:
            result = _run(v["expression"], activation)
            if isinstance(result, Exception) or not bool(result):
                failed.append(v.get("message") or str(_run(v["messageExpression"], activation)))
    return failed


def yaml_blocks(page: str) -> list[dict[str, Any]]:
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", page, re.S)]


def _other(team):
    teams = list(PLAN.tenants)
    return teams[(teams.index(team) + 1) % len(teams)]


# Kinds the onboarding page names that the team Roles or the admission policies do not cover yet (charts/rbac.py
# JOB_KINDS, charts/admission.py): the page is right to list them (kinds_for), the emitters must follow.
NOT_YET_GOVERNED = {k.kind for k in WORKLOAD_KINDS
                    if not any(k.group == g and k.resource in r for g, r in JOB_KINDS)}

CASES = [pytest.param(team.name, i, id=f"{team.name}-{k.kind}",
                      marks=[pytest.mark.xfail(strict=True, reason="charts/rbac.py and the admission policies do "
                                               "not cover this kind yet")] if k.kind in NOT_YET_GOVERNED else [])
         for team in PLAN.tenants for i, k in enumerate(kinds_for(team))]


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
    for team in PLAN.tenants:
        blocks = yaml_blocks(render_onboarding(PLAN, team))
        assert [b["kind"] for b in blocks] == [k.kind for k in kinds_for(team)]
        assert {b["apiVersion"] for b in blocks} == {k.api_version for k in kinds_for(team)}


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
    for label in allowed_priority_classes(PLAN, team):
        assert f"`{label}`" in page
    for block in yaml_blocks(page):
        labels = block["metadata"]["labels"]
        assert labels["kueue.x-k8s.io/queue-name"] == team.local_queue
        assert labels["kueue.x-k8s.io/priority-class"] in allowed_priority_classes(PLAN, team)


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
