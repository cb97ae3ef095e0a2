"""Kueue mode queues every kind a team may create: each kind of a rendered submitter Role has its Kueue integration
in the rendered controller Configuration (``integrations.frameworks`` or ``externalFrameworks``).

The kinds are read from the rendered Roles (charts/rbac.py), not from the table that builds both; the integration of
each resource is written here from Kueue v0.19.2's source (pkg/controller/jobs/*/..._controller.go, FrameworkName;
the HyperPod training operator's external framework from sagemaker-eks-operator-install.html), so a kind added to
the table without its integration, or an integration dropped from the Configuration, fails here.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest

from hyperpod_gov.charts import render
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.kueue_frameworks import KUEUE_INTEGRATIONS
from hyperpod_gov.plan.workloads import WORKLOAD_KINDS, kueue_integrations
from hyperpod_gov.spec import parse_spec
from hyperpod_gov.spec.workloads import APPROVED_WORKLOADS
from tests.conftest import BASE, TODAY

# (API group, resource) -> (the Kueue integration that queues it, external?, the operator that serves its CRD).
# The inference operator and the spaces operator run their pods through Deployments: Kueue's "deployment"
# integration (which needs "pod") queues those pods; nothing takes their own kinds.
COVERED_BY: dict[tuple[str, str], tuple[str, bool, str | None]] = {
    ("batch", "jobs"): ("batch/job", False, None),
    ("kubeflow.org", "pytorchjobs"): ("kubeflow.org/pytorchjob", False, None),
    ("kubeflow.org", "tfjobs"): ("kubeflow.org/tfjob", False, None),
    ("kubeflow.org", "mpijobs"): ("kubeflow.org/mpijob", False, None),
    ("sagemaker.amazonaws.com", "hyperpodpytorchjobs"): ("HyperPodPytorchJob.v1.sagemaker.amazonaws.com", True,
                                                         "training"),
    ("inference.sagemaker.aws.amazon.com", "inferenceendpointconfigs"): ("deployment", False, "inference"),
    ("inference.sagemaker.aws.amazon.com", "jumpstartmodels"): ("deployment", False, "inference"),
    ("workspace.jupyter.org", "workspaces"): ("deployment", False, "spaces"),
    ("ray.io", "rayjobs"): ("ray.io/rayjob", False, "ray"),
    ("ray.io", "rayclusters"): ("ray.io/raycluster", False, "ray"),
    ("ray.io", "rayservices"): ("ray.io/rayservice", False, "ray"),
}
# What a submitter Role grants besides workload kinds (opt-in exec, Secrets, ConfigMaps): not work Kueue queues.
NOT_WORK = {("", "pods/exec"), ("", "secrets"), ("", "configmaps")}
# Kueue v0.19.2 enables "pod" with "deployment" (ImplicitlyEnabledFrameworkNames); the Configuration names it.
NEEDS = {"deployment": "pod"}
CONTRACT = {"businessOwner": "b@example.com", "operationsOwner": "o@example.com", "costOwner": "c@example.com",
            "dataClassification": "internal", "reviewBy": "2027-06-30"}


def every_workload_spec(mode: str = "kueue") -> dict[str, Any]:
    """BASE in ``mode`` with every operator, team-a approved for every workload word."""
    data = copy.deepcopy(BASE)
    data["scheduler"]["mode"] = mode
    data["cluster"]["operators"] = ["training", "inference", "spaces", "ray"]
    data["teams"][0]["contract"] = {**CONTRACT, "approvedWorkloads": list(APPROVED_WORKLOADS)}
    return data


def submitter_resources(plan) -> set[tuple[str, str]]:
    """(API group, resource) of every rule of every team's rendered ``submitter`` Role."""
    found = set()
    for objects in render(plan).teams.values():
        for role in (o for o in objects if o["kind"] == "Role" and o["metadata"]["name"] == "submitter"):
            found |= {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    return found - NOT_WORK


def uncovered(plan) -> list[str]:
    """Each kind a submitter may create on ``plan``'s cluster that its Kueue Configuration does not queue."""
    config = json.loads(plan.kueue_config)["integrations"]
    frameworks, external = set(config["frameworks"]), set(config.get("externalFrameworks", []))
    running = set(plan.cluster.operators) | set(plan.cluster.existing.operators if plan.cluster.existing else ())
    problems = []
    for group, resource in sorted(submitter_resources(plan)):
        if (group, resource) not in COVERED_BY:
            problems.append(f"{group}/{resource}: no known Kueue integration")
            continue
        name, is_external, operator = COVERED_BY[(group, resource)]
        if operator is not None and operator not in running:
            continue  # no CRD on this cluster: nothing to queue
        if name not in (external if is_external else frameworks):
            problems.append(f"{group}/{resource}: {name} is not enabled")
        if name in NEEDS and NEEDS[name] not in frameworks:
            problems.append(f"{group}/{resource}: {name} needs {NEEDS[name]}, which is not enabled")
    return problems


def _kueue_plan(data: dict[str, Any]):
    plan = build_plan(parse_spec(data, today=TODAY))
    assert plan.mode == "kueue"
    return plan


def test_every_kind_of_the_startup_example_is_queued_by_its_kueue_integration(startup_spec):
    plan = build_plan(startup_spec)
    assert plan.mode == "kueue" and submitter_resources(plan)
    assert uncovered(plan) == []


def test_every_kind_of_every_workload_is_queued_by_its_kueue_integration():
    plan = _kueue_plan(every_workload_spec())
    assert {r for _, r in submitter_resources(plan)} == {k.resource for k in WORKLOAD_KINDS}
    assert uncovered(plan) == []
    config = json.loads(plan.kueue_config)["integrations"]
    assert config == {
        "frameworks": ["batch/job", "deployment", "kubeflow.org/mpijob", "kubeflow.org/pytorchjob",
                       "kubeflow.org/tfjob", "pod", "ray.io/raycluster", "ray.io/rayjob", "ray.io/rayservice"],
        "externalFrameworks": ["HyperPodPytorchJob.v1.sagemaker.amazonaws.com"],
    }


@pytest.mark.parametrize("dropped", sorted({n for n, _, _ in COVERED_BY.values()} | {"pod"}))
def test_dropping_any_one_integration_leaves_a_kind_unqueued(dropped):
    plan = _kueue_plan(every_workload_spec())
    config = json.loads(plan.kueue_config)
    for key in ("frameworks", "externalFrameworks"):
        config["integrations"][key] = [n for n in config["integrations"][key] if n != dropped]
    found = uncovered(replace(plan, kueue_config=json.dumps(config)))
    assert found and all(dropped in problem for problem in found), found


def test_a_kind_whose_integration_is_unknown_is_reported():
    plan = _kueue_plan(every_workload_spec())
    assert submitter_resources(plan) - set(COVERED_BY) == set()
    del_one = {k: v for k, v in COVERED_BY.items() if k != ("ray.io", "rayservices")}
    missing = submitter_resources(plan) - set(del_one)
    assert missing == {("ray.io", "rayservices")}


def test_integrations_follow_the_kinds_the_teams_may_create_and_the_operators_that_run():
    data = every_workload_spec()
    data["teams"][0]["contract"]["approvedWorkloads"] = ["training"]
    data["cluster"]["operators"] = []  # no HyperPod training operator: no HyperPodPyTorchJob CRD to queue
    plan = _kueue_plan(data)
    config = json.loads(plan.kueue_config)["integrations"]
    assert config == {"frameworks": ["batch/job", "kubeflow.org/mpijob", "kubeflow.org/pytorchjob",
                                     "kubeflow.org/tfjob", "pod"]}
    assert uncovered(plan) == []


def test_the_ray_integrations_come_with_a_ray_team_alone():
    data = every_workload_spec()
    data["teams"][0]["contract"]["approvedWorkloads"] = ["ray"]
    plan = _kueue_plan(data)
    frameworks, external = kueue_integrations(plan.tenants, plan.cluster.operators)
    # team-b has no contract: training work (Jobs, Kubeflow jobs, HyperPodPyTorchJobs).
    assert {"ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice"} <= set(frameworks)
    assert "deployment" not in frameworks and external == ("HyperPodPytorchJob.v1.sagemaker.amazonaws.com",)


def test_each_kind_names_one_of_kueues_integrations():
    assert {k.kueue for k in WORKLOAD_KINDS} <= set(KUEUE_INTEGRATIONS)


def test_on_an_existing_cluster_the_operators_running_there_count():
    from tests.conftest import as_existing

    data = every_workload_spec()
    as_existing(data)
    data["cluster"]["existing"]["networkPolicyEnforcement"] = {"enforcer": "vpc-cni"}
    data["cluster"]["existing"]["installs"] = {"scheduler": True}
    data["cluster"]["existing"]["operators"] = ["ray"]  # KubeRay runs there; hyperpod-gov installs nothing
    del data["cluster"]["operators"]
    data["teams"][0]["contract"]["approvedWorkloads"] = ["training", "ray"]
    plan = _kueue_plan(data)
    frameworks = json.loads(plan.kueue_config)["integrations"]["frameworks"]
    assert {"ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice"} <= set(frameworks)
    assert uncovered(plan) == []
