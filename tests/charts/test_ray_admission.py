"""Ray kinds (RayJob, RayCluster, RayService) through the generated admission policies and RBAC, run in cel-python:
the table's examples admitted in the team's namespace; every pod template a team writes (head group, worker groups,
a RayJob's submitter pod) held to Pod Security, the image registries and the GPU rules; the queue label required;
what KubeRay creates (the RayJob's RayCluster and submitter Job, a RayCluster's Pods) admitted through its owner,
and a team member who writes such an owner by hand still held to the queue.

Fixtures and helpers are test_workloads.py's (team-a approved for training, inference, interactive and ray).
"""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov.plan.names import QUEUE_LABEL
from hyperpod_gov.plan.workloads import PRIORITY_LABEL, RAY_IMAGE, kinds_for
from tests.charts.test_workloads import (  # noqa: F401 (fixtures)
    ALLOWED_IMAGES, BY_KIND, MEMBER, NS, QUEUE, _allows, _roles, admit, example, manifests, params, plan,
)

RAY_KINDS = ("RayJob", "RayCluster", "RayService")
KUBERAY = {"username": "system:serviceaccount:ray-system:kuberay-operator"}


def ray_pod_specs(obj: dict) -> list[dict]:
    """Every pod spec a team writes in a Ray object (head, workers, a RayJob's submitter), by hand from the CRDs."""
    spec = obj["spec"]
    cluster = {"RayJob": spec.get("rayClusterSpec"), "RayCluster": spec,
               "RayService": spec.get("rayClusterConfig")}[obj["kind"]]
    found = [cluster["headGroupSpec"]["template"]["spec"]]
    found += [w["template"]["spec"] for w in cluster.get("workerGroupSpecs", [])]
    if "submitterPodTemplate" in spec:
        found.append(spec["submitterPodTemplate"]["spec"])
    return found


def each_pod_spec(kind: str):
    """(label, object) with one pod spec of ``kind``'s example handed over to be changed."""
    obj = example(BY_KIND[kind])
    for i in range(len(ray_pod_specs(obj))):
        changed = copy.deepcopy(obj)
        yield i, changed, ray_pod_specs(changed)[i]


@pytest.mark.parametrize("kind", RAY_KINDS)
def test_a_ray_example_is_admitted_in_the_teams_namespace_and_uses_the_ray_image(kind, params):
    obj = example(BY_KIND[kind])
    assert admit(obj, params) == []
    assert {c["image"] for s in ray_pod_specs(obj) for c in s["containers"]} == {RAY_IMAGE}
    assert len(ray_pod_specs(obj)) == (3 if kind == "RayJob" else 2)  # head, worker (and the submitter)


@pytest.mark.parametrize("kind", RAY_KINDS)
def test_a_ray_object_without_the_queue_label_or_with_another_teams_queue_is_refused(kind, params):
    obj = example(BY_KIND[kind])
    del obj["metadata"]["labels"][QUEUE_LABEL]
    assert any("goes through the team queue" in m for m in admit(obj, params))
    obj["metadata"]["labels"][QUEUE_LABEL] = "hyperpod-ns-team-b-localqueue"
    assert any("goes through the team queue" in m for m in admit(obj, params))


@pytest.mark.parametrize("kind", RAY_KINDS)
def test_a_ray_object_with_a_priority_outside_the_teams_list_is_refused(kind, params):
    obj = example(BY_KIND[kind])
    obj["metadata"]["labels"][PRIORITY_LABEL] = "urgent-priority"
    assert admit(obj, params) != []


@pytest.mark.parametrize("kind", RAY_KINDS)
def test_a_privileged_container_in_any_ray_pod_template_is_refused(kind, params):
    for i, obj, spec in each_pod_spec(kind):
        spec["containers"][0]["securityContext"] = {"privileged": True}
        assert any("privileged containers" in m for m in admit(obj, params)), (kind, i)


@pytest.mark.parametrize("kind", RAY_KINDS)
def test_an_image_outside_the_teams_registries_in_any_ray_pod_template_is_refused(kind, params):
    for i, obj, spec in each_pod_spec(kind):
        spec["containers"][0]["image"] = "evil.example.com/ray:latest"
        assert any("team's registries" in m for m in admit(obj, params)), (kind, i)


@pytest.mark.parametrize("kind", RAY_KINDS)
def test_a_ray_container_without_a_gpu_must_say_no_gpu(kind, params):
    for i, obj, spec in each_pod_spec(kind):
        spec["containers"][0]["env"] = []
        assert admit(obj, params) != [], (kind, i)


def test_a_host_path_in_a_ray_worker_is_refused(params):
    obj = example(BY_KIND["RayCluster"])
    obj["spec"]["workerGroupSpecs"][0]["template"]["spec"]["volumes"] = [{"name": "n", "hostPath": {"path": "/"}}]
    assert any("hostPath volumes" in m for m in admit(obj, params))


def _made_by(kind: str, api_version: str, owner_kind: str, *, spec: dict) -> dict:
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": "hello-raycluster", "namespace": NS, "labels": {},  # no queue label of its own
                         "ownerReferences": [{"apiVersion": "ray.io/v1", "kind": owner_kind, "name": "hello",
                                              "uid": "0b9e", "controller": True}]},
            "spec": spec}


def test_what_kuberay_creates_is_admitted_through_its_owner(params):
    job = example(BY_KIND["RayJob"])
    cluster = _made_by("RayCluster", "ray.io/v1", "RayJob", spec=job["spec"]["rayClusterSpec"])
    assert admit(cluster, params, user=KUBERAY) == []
    assert admit(_made_by("RayCluster", "ray.io/v1", "RayService", spec=job["spec"]["rayClusterSpec"]), params,
                 user=KUBERAY) == []
    submitter = _made_by("Job", "batch/v1", "RayJob", spec={"template": job["spec"]["submitterPodTemplate"]})
    assert admit(submitter, params, user=KUBERAY) == []
    head = _made_by("Pod", "v1", "RayCluster", spec=job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"])
    assert admit(head, params, user=KUBERAY) == []


def test_what_kuberay_creates_is_still_held_to_the_pod_rules(params):
    spec = copy.deepcopy(example(BY_KIND["RayCluster"])["spec"]["headGroupSpec"]["template"]["spec"])
    spec["containers"][0]["securityContext"] = {"privileged": True}
    assert any("privileged containers" in m for m in admit(_made_by("Pod", "v1", "RayCluster", spec=spec), params,
                                                            user=KUBERAY))


@pytest.mark.parametrize("user", [MEMBER, {"username": f"system:serviceaccount:{NS}:trainer"}],
                         ids=["a team member", "a service account of the team"])
def test_a_hand_made_ray_cluster_claiming_a_rayjob_owner_is_still_held_to_the_queue(user, params):
    spec = example(BY_KIND["RayJob"])["spec"]["rayClusterSpec"]
    assert any("goes through the team queue" in m
               for m in admit(_made_by("RayCluster", "ray.io/v1", "RayJob", spec=spec), params, user=user))


def test_a_ray_cluster_claiming_an_owner_that_creates_no_ray_clusters_is_held_to_the_queue(params):
    spec = example(BY_KIND["RayJob"])["spec"]["rayClusterSpec"]
    forged = _made_by("RayCluster", "ray.io/v1", "RayCluster", spec=spec)
    assert any("goes through the team queue" in m for m in admit(forged, params, user=KUBERAY))


def test_only_a_team_approved_for_ray_may_create_ray_kinds(manifests, plan):
    team_a = _roles(manifests, "team-a")["submitter"]["rules"]
    team_b = _roles(manifests, "team-b")["submitter"]["rules"]  # no contract: training only
    for kind in RAY_KINDS:
        k = BY_KIND[kind]
        assert _allows(team_a, "create", k.group, k.resource), kind
        assert not _allows(team_b, "create", k.group, k.resource), kind
    (team,) = [t for t in plan.tenants if t.name == "team-a"]
    assert set(RAY_KINDS) <= {k.kind for k in kinds_for(team)}


def test_the_ray_examples_allowed_image_is_a_registry_prefix_of_the_test_team():
    assert any(RAY_IMAGE.startswith(p) for p in ALLOWED_IMAGES)
