"""Workload kinds: RBAC grants exactly the kinds a contract approves, and the admission policies (run in cel-python
on crafted objects) hold every kind's pod template, what the operators create, and the per-team limits.

The objects are the table's own examples (plan/workloads.py, what ``hyperpod-gov onboard`` prints), changed one
field at a time; the per-team values come from the team's rendered parameter ConfigMap.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

from hyperpod_gov.charts import render
from hyperpod_gov.charts.admission import (
    EPHEMERAL_CONTAINERS,
    PARAMS_NAMESPACE,
    TEAM_LIMITS_POLICY,
    pod_security_policy,
    queue_policy,
    team_limits_policy,
)
from hyperpod_gov.charts.tenant import LIMIT_RANGE
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.names import QUEUE_LABEL
from hyperpod_gov.plan.workloads import (
    PRIORITY_LABEL,
    WORKLOAD_KINDS,
    WorkloadKind,
    kinds_for,
    no_gpu_env,
    owners_of,
)
from hyperpod_gov.spec import SpecError, parse_spec
from tests.conftest import TODAY
from tests.security.cel import denials

NS = "hyperpod-ns-team-a"
QUEUE = f"{NS}-localqueue"
ALLOWED_IMAGES = ["public.ecr.aws/docker/library/", "763104351884.dkr.ecr.us-east-1.amazonaws.com/",
                  "public.ecr.aws/sagemaker/", "docker.io/rayproject/"]
CONTRACT = {"businessOwner": "b@example.com", "operationsOwner": "o@example.com", "costOwner": "c@example.com",
            "dataClassification": "internal", "reviewBy": "2027-06-30"}
BY_KIND = {k.kind: k for k in WORKLOAD_KINDS}
MEMBER = {"username": "arn:aws:sts::111111111111:assumed-role/A/alice", "groups": ["hyperpod-ns-team-a-submitters"]}


# team-a's inference endpoints load models from the prefix the table's example names (plan/workloads.py).
MODEL_GRANT = {"serviceAccount": "server", "grants": {"s3": [{"bucket": "example-bucket", "prefix": "models/"}]}}


def _spec(base: dict, **team_a: Any) -> dict:
    base["scheduler"]["priorityClasses"] = [{"name": "training", "weight": 80}, {"name": "urgent", "weight": 100}]
    base["cluster"]["operators"] = ["training", "inference", "spaces", "ray"]  # every kind's operator (HPG-D009)
    base["teams"][0].update(team_a)
    base["teams"][0]["workloadIdentities"] = [*base["teams"][0].get("workloadIdentities", []), MODEL_GRANT]
    return base


@pytest.fixture
def plan(base):
    spec = _spec(base, contract={**CONTRACT, "approvedWorkloads": ["training", "inference", "interactive", "ray"]},
                 priorityClasses=["training"], images=ALLOWED_IMAGES)
    return build_plan(parse_spec(spec, today=TODAY))


@pytest.fixture
def manifests(plan):
    return render(plan)


@pytest.fixture
def params(manifests) -> dict:
    (cm,) = [o for o in manifests.teams["team-a"] if o["kind"] == "ConfigMap"]
    return cm


def example(kind: WorkloadKind, priority: str = "training-priority") -> dict:
    return {"apiVersion": kind.api_version, "kind": kind.kind, **kind.example(NS, QUEUE, priority)}


def admit(obj: dict, params: dict, *, user: dict = MEMBER, level: str = "baseline", operation: str = "CREATE",
          subresource: str = "") -> list[str]:
    """Every denial of the team's three policies (Pod Security at ``level``, queue, team limits)."""
    out = []
    for policy in (pod_security_policy(level), queue_policy(), team_limits_policy()):
        out += denials(policy, obj, namespace=NS, operation=operation, user=user, params=params,
                       subresource=subresource)
    return out


def _templates(obj: dict) -> list[dict]:
    """The pod specs a team writes in ``obj`` (what the policies must see)."""
    spec = obj["spec"]
    if obj["kind"] == "Job":
        return [spec["template"]["spec"]]
    if obj["kind"] == "HyperPodPyTorchJob":
        return [r["template"]["spec"] for r in spec["replicaSpecs"]]
    return [r["template"]["spec"] for field, m in spec.items() if field.endswith("ReplicaSpecs") for r in m.values()]


TEMPLATED = [k.kind for k in WORKLOAD_KINDS if k.kind not in ("InferenceEndpointConfig", "JumpStartModel",
                                                                "Workspace")]


# --- every approved kind: its example admitted, its pod fields checked -----------------------------------------

@pytest.mark.parametrize("kind", [k.kind for k in WORKLOAD_KINDS])
def test_every_kinds_example_is_admitted_in_the_teams_namespace(kind, params):
    assert admit(example(BY_KIND[kind]), params) == []


@pytest.mark.parametrize("kind", TEMPLATED)
def test_a_privileged_container_in_any_template_of_a_job_kind_is_refused(kind, params):
    obj = example(BY_KIND[kind])
    for spec in _templates(obj):
        bad = copy.deepcopy(obj)
        # the same template in the copy: change it there
        target = [s for s in _templates(bad) if s == spec][0]
        target["containers"][0]["securityContext"] = {"privileged": True}
        assert any("privileged containers" in m for m in admit(bad, params)), kind


def test_the_inference_endpoints_pod_fields_are_held_to_pod_security(params):
    obj = example(BY_KIND["InferenceEndpointConfig"])
    obj["spec"]["kubernetes"] = {"volumes": [{"name": "node", "hostPath": {"path": "/"}}]}
    assert any("hostPath volumes" in m for m in admit(obj, params))
    obj["spec"]["kubernetes"] = {"initContainers": [{"name": "i", "image": ALLOWED_IMAGES[0] + "busybox",
                                                     "securityContext": {"privileged": True}}]}
    assert any("privileged containers" in m for m in admit(obj, params))


def test_a_workspace_is_held_to_pod_security_through_its_security_contexts(params):
    obj = example(BY_KIND["Workspace"])
    obj["spec"]["containerSecurityContext"] = {"privileged": True}
    assert any("privileged containers" in m for m in admit(obj, params))
    obj = example(BY_KIND["Workspace"])
    obj["spec"]["podSecurityContext"] = {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}
    assert any("safe sysctls" in m for m in admit(obj, params))
    # restricted: the workspace container must drop privileges like any other
    assert any("allowPrivilegeEscalation" in m for m in admit(example(BY_KIND["Workspace"]), params,
                                                              level="restricted"))


@pytest.mark.parametrize("kind", [k.kind for k in WORKLOAD_KINDS])
def test_every_kind_must_name_the_teams_own_queue(kind, params):
    obj = example(BY_KIND[kind])
    obj["metadata"]["labels"][QUEUE_LABEL] = "hyperpod-ns-team-b-localqueue"
    assert any("goes through the team queue" in m for m in admit(obj, params))


# --- what a managed kind's controller creates -------------------------------------------------------------------

MPI_OPERATOR = {"username": "system:serviceaccount:mpi-operator:mpi-operator"}
TRAINING_OPERATOR = {"username": "system:serviceaccount:kubeflow:training-operator"}


def _owned(kind: str, api_version: str, owner_kind: str, owner_api: str, *, controller: bool = True) -> dict:
    spec = BY_KIND["Job"].example(NS, QUEUE, "training-priority")["spec"]["template"]["spec"]
    obj: dict = {"apiVersion": api_version, "kind": kind,
                 "metadata": {"name": "launcher", "namespace": NS, "labels": {},  # no queue label of its own
                              "ownerReferences": [{"apiVersion": owner_api, "kind": owner_kind, "name": "hello",
                                                   "uid": "0b9e", "controller": controller}]}}
    obj["spec"] = {"template": {"spec": spec}} if kind == "Job" else spec
    return obj


def test_the_mpijob_launcher_job_its_operator_creates_is_admitted(params):
    launcher = _owned("Job", "batch/v1", "MPIJob", "kubeflow.org/v2beta1")
    assert admit(launcher, params, user=MPI_OPERATOR) == []
    # and the launcher's pod, which the Job controller creates
    pod = _owned("Pod", "v1", "Job", "batch/v1")
    assert admit(pod, params, user={"username": "system:serviceaccount:kube-system:job-controller"}) == []


def test_a_pytorchjobs_pods_and_an_inference_deployments_pods_are_admitted(params):
    assert admit(_owned("Pod", "v1", "PyTorchJob", "kubeflow.org/v1"), params, user=TRAINING_OPERATOR) == []
    assert admit(_owned("Pod", "v1", "ReplicaSet", "apps/v1"), params,
                 user={"username": "system:serviceaccount:kube-system:replicaset-controller"}) == []


FORGED = [
    ("a team member writes the owner", _owned("Job", "batch/v1", "MPIJob", "kubeflow.org/v2beta1"), MEMBER),
    ("a service account of the team's namespace writes it", _owned("Job", "batch/v1", "MPIJob",
                                                                     "kubeflow.org/v2beta1"),
     {"username": f"system:serviceaccount:{NS}:trainer"}),
    ("the owner is a kind that does not create Jobs", _owned("Job", "batch/v1", "PyTorchJob", "kubeflow.org/v1"),
     MPI_OPERATOR),
    ("the owner's group is not the managed kind's", _owned("Job", "batch/v1", "MPIJob", "evil.example.com/v1"),
     MPI_OPERATOR),
    ("the owner is not the controller", _owned("Job", "batch/v1", "MPIJob", "kubeflow.org/v2beta1",
                                               controller=False), MPI_OPERATOR),
    ("a pod claims an unmanaged owner", _owned("Pod", "v1", "StatefulSet", "apps/v1"),
     {"username": "system:serviceaccount:kube-system:statefulset-controller"}),
]


@pytest.mark.parametrize("name,obj,user", FORGED, ids=[f[0] for f in FORGED])
def test_a_hand_made_object_that_claims_an_owner_is_still_held_to_the_queue(name, obj, user, params):
    assert any("goes through the team queue" in m for m in admit(obj, params, user=user))


def test_the_owner_table_names_the_mpi_launcher_and_the_deployment_chain():
    # The MPI launcher, KubeRay's Redis cleanup Job (RayCluster) and a RayJob's submitter Job.
    assert owners_of("batch", "Job") == (("kubeflow.org", "MPIJob"), ("ray.io", "RayCluster"), ("ray.io", "RayJob"))
    assert owners_of("ray.io", "RayCluster") == (("ray.io", "RayJob"), ("ray.io", "RayService"))
    assert ("apps", "ReplicaSet") in owners_of("", "Pod") and ("kubeflow.org", "PyTorchJob") in owners_of("", "Pod")
    assert owners_of("apps", "Deployment") == tuple(sorted(
        (k.group, k.kind) for k in WORKLOAD_KINDS if k.kind in ("InferenceEndpointConfig", "JumpStartModel",
                                                                 "Workspace")))


# --- priority classes -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [k.kind for k in WORKLOAD_KINDS])
def test_a_priority_label_outside_the_teams_list_is_refused(kind, params):
    assert any(f"{PRIORITY_LABEL}: urgent-priority is not a priority class team team-a may use" in m
               for m in admit(example(BY_KIND[kind], priority="urgent-priority"), params))


def test_allowed_priority_classes_are_the_teams_list_and_default_to_all(plan):
    by_name = {t.name: t for t in plan.tenants}
    assert by_name["team-a"].kueue_priority_classes == ("training-priority",)
    assert by_name["team-b"].kueue_priority_classes == ("training-priority", "urgent-priority")


def test_system_node_critical_is_refused_on_a_pod_and_in_a_job_template(params):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS, "labels": {
        QUEUE_LABEL: QUEUE}}, "spec": copy.deepcopy(_templates(example(BY_KIND["Job"]))[0])}
    assert admit(pod, params) == []
    for obj in (pod, example(BY_KIND["Job"])):
        for spec in [obj["spec"]] if obj["kind"] == "Pod" else _templates(obj):
            spec["priorityClassName"] = "system-node-critical"
        assert any("priorityClassName may name only the team's priority classes" in m for m in admit(obj, params))


# --- images --------------------------------------------------------------------------------------------------

def _debug(image: str) -> dict:
    """kubectl debug: the running pod with one more ephemeral container, sent to pods/ephemeralcontainers."""
    spec = copy.deepcopy(_templates(example(BY_KIND["Job"]))[0])
    spec["nodeName"] = "hyperpod-i-0123456789abcdef0"
    spec["ephemeralContainers"] = [{"name": "debugger", "image": image, "targetContainerName": "main",
                                    "env": [no_gpu_env()]}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS, "labels": {
        QUEUE_LABEL: QUEUE}}, "spec": spec}


IMAGE_CHANGES: list[tuple[str, str, Callable[[dict, str], None]]] = [
    ("container", "Job", lambda o, img: _templates(o)[0]["containers"][0].update(image=img)),
    ("init container", "PyTorchJob", lambda o, img: _templates(o)[0].update(
        initContainers=[{"name": "init", "image": img, "env": [no_gpu_env()]}])),
    ("ephemeral container in a template", "HyperPodPyTorchJob", lambda o, img: _templates(o)[0].update(
        ephemeralContainers=[{"name": "debug", "image": img, "env": [no_gpu_env()]}])),
    ("inference worker", "InferenceEndpointConfig", lambda o, img: o["spec"]["worker"].update(image=img)),
    ("inference init container", "InferenceEndpointConfig", lambda o, img: o["spec"].update(
        kubernetes={"initContainers": [{"name": "init", "image": img, "env": [no_gpu_env()]}]})),
    ("workspace image", "Workspace", lambda o, img: o["spec"].update(image=img)),
    ("workspace init container", "Workspace", lambda o, img: o["spec"].update(
        initContainers=[{"name": "init", "image": img, "env": [no_gpu_env()]}])),
]


@pytest.mark.parametrize("name,kind,change", IMAGE_CHANGES, ids=[c[0] for c in IMAGE_CHANGES])
def test_an_image_outside_the_teams_registries_is_refused(name, kind, change, params):
    obj = example(BY_KIND[kind])
    change(obj, ALLOWED_IMAGES[0] + "busybox:1.36")
    assert admit(obj, params) == []
    # a look-alike host: the prefixes end at a '/' boundary
    change(obj, "public.ecr.aws.attacker.example/docker/library/busybox:1.36")
    assert any("not from the team's registries" in m for m in admit(obj, params))


def test_kubectl_debug_is_matched_and_held_to_the_image_and_pod_rules(params):
    assert admit(_debug(ALLOWED_IMAGES[0] + "busybox:1.36"), params, operation="UPDATE",
                 subresource="ephemeralcontainers") == []
    found = admit(_debug("docker.io/nicolaka/netshoot"), params, operation="UPDATE", subresource="ephemeralcontainers")
    assert any("not from the team's registries" in m for m in found)
    privileged = _debug(ALLOWED_IMAGES[0] + "busybox:1.36")
    privileged["spec"]["ephemeralContainers"][0]["securityContext"] = {"privileged": True}
    assert any("privileged containers" in m for m in admit(privileged, params, operation="UPDATE",
                                                           subresource="ephemeralcontainers"))


def test_without_teams_images_any_image_is_allowed(manifests):
    (cm,) = [o for o in manifests.teams["team-b"] if o["kind"] == "ConfigMap"]
    obj = example(BY_KIND["Job"])
    _templates(obj)[0]["containers"][0]["image"] = "docker.io/anything:latest"
    obj["metadata"]["namespace"] = "hyperpod-ns-team-b"
    assert denials(team_limits_policy(), obj, namespace="hyperpod-ns-team-b", params=cm) == []


# --- GPUs and resources ---------------------------------------------------------------------------------------

# A container without a GPU request must say NVIDIA_VISIBLE_DEVICES=void (or none) as a literal env value: the
# image's own ENV NVIDIA_VISIBLE_DEVICES=all (every CUDA image) otherwise gives it every GPU of the node. Each case:
# the container's env, whether it has a GPU, whether the rule refuses it. The "image ENV" case is the bypass the old
# rule (forbid the name without a GPU) admitted: no env at all.
VOID = {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}
ALL = {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}
FROM_CONFIG_MAP = {"name": "NVIDIA_VISIBLE_DEVICES", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "gpus"}}}
ENV_CASES = [
    ("image ENV, no env", [], {}, True),
    ("envFrom only", [], {"envFrom": [{"configMapRef": {"name": "gpus"}}]}, True),
    ("void", [VOID], {}, False),
    ("none", [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "none"}], {}, False),
    ("void beside envFrom (env wins)", [VOID], {"envFrom": [{"configMapRef": {"name": "gpus"}}]}, False),
    ("all", [ALL], {}, True),
    ("void then all (the last wins)", [VOID, ALL], {}, True),
    ("valueFrom", [FROM_CONFIG_MAP], {}, True),
    ("empty value", [{"name": "NVIDIA_VISIBLE_DEVICES", "value": ""}], {}, True),
]
GPU_LIMIT = {"limits": {"nvidia.com/gpu": 1}}


@pytest.mark.parametrize("name,env,extra,refused", ENV_CASES, ids=[c[0] for c in ENV_CASES])
def test_a_container_without_a_gpu_must_say_no_gpu_with_a_literal_void(name, env, extra, refused, params):
    obj = example(BY_KIND["PyTorchJob"])
    container = _templates(obj)[0]["containers"][0]
    container.update(env=env, **extra)
    found = admit(obj, params)
    if refused:
        assert any("must set env NVIDIA_VISIBLE_DEVICES: void" in m for m in found), found
    else:
        assert found == [], found  # void and none admitted, beside envFrom too
    container["resources"] = GPU_LIMIT  # a container that requests a GPU: unchanged, whatever its env
    assert admit(obj, params) == [], name


GPU_CASES = [
    ("a GPU limit", {"limits": {"nvidia.com/gpu": 1}}, False),
    ("a MIG partition", {"limits": {"nvidia.com/mig-1g.10gb": 1}}, False),
    ("zero GPUs", {"limits": {"nvidia.com/gpu": 0}}, True),
    ("only CPU", {"limits": {"cpu": "8"}}, True),
]


@pytest.mark.parametrize("name,resources,refused", GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_what_counts_as_a_gpu_request(name, resources, refused, params):
    obj = example(BY_KIND["Job"])
    container = _templates(obj)[0]["containers"][0]
    container.update(resources=resources, env=[ALL])
    assert any("NVIDIA_VISIBLE_DEVICES" in m for m in admit(obj, params)) == refused


def _kubectl_debug(env: list) -> dict:
    pod = _debug(ALLOWED_IMAGES[0] + "busybox:1.36")
    pod["spec"]["ephemeralContainers"][0]["env"] = env
    return pod


# Every place a team writes a container: (kind, how to add a container without a GPU with ``env``).
CONTAINER_PLACES: list[tuple[str, str, Callable[[dict, list], None]]] = [
    ("container", "Job", lambda o, env: _templates(o)[0]["containers"][0].update(env=env)),
    ("init container", "TFJob", lambda o, env: _templates(o)[0].update(
        initContainers=[{"name": "init", "image": ALLOWED_IMAGES[0] + "busybox", "env": env}])),
    ("ephemeral container in a template", "MPIJob", lambda o, env: _templates(o)[-1].update(
        ephemeralContainers=[{"name": "debug", "image": ALLOWED_IMAGES[0] + "busybox", "env": env}])),
    ("HyperPod replica", "HyperPodPyTorchJob", lambda o, env: _templates(o)[0]["containers"][0].update(env=env)),
    ("inference worker without a GPU", "InferenceEndpointConfig", lambda o, env: o["spec"]["worker"].update(
        resources={"requests": {"cpu": "4"}}, environmentVariables=env)),
    ("inference init container", "InferenceEndpointConfig", lambda o, env: o["spec"].update(
        kubernetes={"initContainers": [{"name": "init", "image": ALLOWED_IMAGES[0] + "busybox", "env": env}]})),
    ("workspace", "Workspace", lambda o, env: o["spec"].update(env=env)),
    ("workspace init container", "Workspace", lambda o, env: o["spec"].update(
        initContainers=[{"name": "init", "image": ALLOWED_IMAGES[0] + "busybox", "env": env}])),
]


@pytest.mark.parametrize("name,kind,change", CONTAINER_PLACES, ids=[c[0] for c in CONTAINER_PLACES])
def test_every_container_a_team_writes_needs_the_override(name, kind, change, params):
    obj = example(BY_KIND[kind])
    change(obj, [VOID])
    assert admit(obj, params) == []
    for env in ([], [ALL], [FROM_CONFIG_MAP]):
        change(obj, env)
        assert any("must set env NVIDIA_VISIBLE_DEVICES: void" in m for m in admit(obj, params)), (name, env)


def test_kubectl_debug_needs_the_override_too(params):
    assert admit(_kubectl_debug([VOID]), params, operation="UPDATE", subresource="ephemeralcontainers") == []
    assert any("must set env NVIDIA_VISIBLE_DEVICES: void" in m
               for m in admit(_kubectl_debug([]), params, operation="UPDATE", subresource="ephemeralcontainers"))


def _operator_pod(owner_kind: str, owner_api: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "p", "namespace": NS, "labels": {QUEUE_LABEL: QUEUE},
        "ownerReferences": [{"apiVersion": owner_api, "kind": owner_kind, "name": "o", "uid": "1", "controller": True}]},
        "spec": {"containers": [{"name": "sidecar", "image": ALLOWED_IMAGES[0] + "busybox"}]}}


def test_a_pod_an_operator_makes_is_checked_through_its_template_not_again(params):
    # The inference and spaces operators add containers of their own to the pods of a checked template: a Pod a
    # managed controller makes (its owner and the request's service account) skips the override; a team member
    # writing the same owner into a bare Pod does not.
    controller = {"username": "system:serviceaccount:kube-system:replicaset-controller", "groups": []}
    pod = _operator_pod("ReplicaSet", "apps/v1")
    assert not any("NVIDIA_VISIBLE_DEVICES" in m for m in admit(pod, params, user=controller))
    assert any("must set env NVIDIA_VISIBLE_DEVICES: void" in m for m in admit(pod, params))
    team_pod = {"username": f"system:serviceaccount:{NS}:trainer", "groups": []}
    assert any("must set env NVIDIA_VISIBLE_DEVICES: void" in m for m in admit(pod, params, user=team_pod))


def test_nvidia_capability_variables_need_a_gpu_request(params):
    obj = example(BY_KIND["Job"])
    container = _templates(obj)[0]["containers"][0]
    container["env"] = [VOID, {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "all"}]
    assert any("NVIDIA_DRIVER_CAPABILITIES and NVIDIA_DISABLE_REQUIRE" in m for m in admit(obj, params))
    container["resources"] = GPU_LIMIT
    assert admit(obj, params) == []


@pytest.mark.parametrize("path", ["/var/run/nvidia-container-devices/all", "/run/nvidia-container-devices/all"])
def test_no_volume_is_mounted_where_the_toolkit_reads_its_device_list(path, params):
    obj = example(BY_KIND["Job"])
    spec = _templates(obj)[0]
    spec["volumes"] = [{"name": "x", "emptyDir": {}}]
    spec["containers"][0]["volumeMounts"] = [{"name": "x", "mountPath": path}]
    assert any("nvidia-container-devices" in m for m in admit(obj, params))
    iec = example(BY_KIND["InferenceEndpointConfig"])
    iec["spec"]["worker"]["modelVolumeMount"]["mountPath"] = path
    assert any("nvidia-container-devices" in m for m in admit(iec, params))


def test_the_inference_worker_may_not_ask_for_every_gpu_without_one(params):
    obj = example(BY_KIND["InferenceEndpointConfig"])
    obj["spec"]["worker"]["environmentVariables"] = [ALL]
    assert admit(obj, params) == []  # the example requests a GPU
    obj["spec"]["worker"]["resources"] = {"requests": {"cpu": "4"}}
    assert any("NVIDIA_VISIBLE_DEVICES" in m for m in admit(obj, params))


def test_accelerator_requests_must_equal_their_limits(params):
    obj = example(BY_KIND["Job"])
    container = _templates(obj)[0]["containers"][0]
    container["resources"] = {"requests": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 4, "cpu": "8"},
                              "limits": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 4}}
    assert admit(obj, params) == []
    container["resources"]["limits"]["nvidia.com/gpu"] = 4
    assert any("request must equal its limit" in m for m in admit(obj, params))
    del container["resources"]["limits"]
    assert any("request must equal its limit" in m for m in admit(obj, params))


def test_every_team_namespace_gets_default_requests(manifests, plan):
    for team in plan.tenants:
        (lr,) = [o for o in manifests.teams[team.name] if o["kind"] == "LimitRange"]
        assert lr["metadata"] == {**lr["metadata"], "name": LIMIT_RANGE, "namespace": team.namespace}
        (limit,) = lr["spec"]["limits"]
        assert limit["type"] == "Container" and set(limit["defaultRequest"]) == {"cpu", "memory"}
        assert "default" not in limit  # a default limit could undercut a container's own request


# --- RBAC and the parameters ------------------------------------------------------------------------------------

def _allows(rules: list[dict], verb: str, group: str, resource: str) -> bool:
    return any(group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules)


def _roles(manifests, team: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in manifests.teams[team] if o["kind"] == "Role"}


def test_rbac_grants_exactly_the_kinds_a_team_may_create(manifests, plan):
    for team in plan.tenants:
        roles = _roles(manifests, team.name)
        mine = {k.kind for k in kinds_for(team)}
        for k in WORKLOAD_KINDS:
            assert _allows(roles["submitter"]["rules"], "create", k.group, k.resource) == (k.kind in mine), \
                (team.name, k.kind)
            assert _allows(roles["viewer"]["rules"], "list", k.group, k.resource) == (k.kind in mine)


def test_a_team_without_inference_cannot_create_inference_kinds(manifests):
    team_b = _roles(manifests, "team-b")["submitter"]["rules"]  # no contract: training only
    team_a = _roles(manifests, "team-a")["submitter"]["rules"]
    for kind in ("InferenceEndpointConfig", "JumpStartModel"):
        k = BY_KIND[kind]
        assert not _allows(team_b, "create", k.group, k.resource)
        assert _allows(team_a, "create", k.group, k.resource)


@pytest.mark.parametrize("example_name", ["enterprise", "startup"])
def test_no_role_grants_kubectl_debug_or_the_teams_parameters(example_name, request):
    manifests = render(build_plan(request.getfixturevalue(f"{example_name}_spec")))
    for obj in manifests.all():
        if obj["kind"] in ("Role", "ClusterRole"):
            resources = {r for rule in obj["rules"] for r in rule.get("resources", [])}
            assert EPHEMERAL_CONTAINERS not in resources, obj["metadata"]
            assert obj["kind"] == "Role" or "configmaps" not in resources, obj["metadata"]
            assert obj["metadata"].get("namespace") != PARAMS_NAMESPACE


def test_each_team_is_bound_to_the_limits_policy_with_its_own_parameters(manifests, plan, params):
    assert params["metadata"]["namespace"] == PARAMS_NAMESPACE and params["metadata"]["name"] == "team-a"
    assert params["data"] == {"team": "team-a", "images": "prefixes", "priority-class.training-priority":
                              "training-priority", **{f"image-prefix.{i}": p for i, p in
                                                      enumerate(sorted(ALLOWED_IMAGES))},
                              "model-s3.0": "example-bucket/models/"}
    for team in plan.tenants:
        (binding,) = [o for o in manifests.teams[team.name] if o["kind"] == "ValidatingAdmissionPolicyBinding"
                      and o["spec"]["policyName"] == TEAM_LIMITS_POLICY]
        assert binding["spec"]["paramRef"] == {"name": team.name, "namespace": PARAMS_NAMESPACE,
                                               "parameterNotFoundAction": "Deny"}
    assert team_limits_policy()["paramKind"] == {"apiVersion": "v1", "kind": "ConfigMap"}


def test_another_teams_parameters_do_not_admit_this_teams_work(manifests):
    (team_b,) = [o for o in manifests.teams["team-b"] if o["kind"] == "ConfigMap"]
    obj = example(BY_KIND["Job"], priority="urgent-priority")
    # team-b's values would admit urgent-priority; team-a's binding names team-a's ConfigMap, never team-b's
    assert denials(team_limits_policy(), obj, namespace=NS, params=team_b) == []
    (team_a,) = [o for o in manifests.teams["team-a"] if o["kind"] == "ConfigMap"]
    assert denials(team_limits_policy(), obj, namespace=NS, params=team_a)


# --- the spec -----------------------------------------------------------------------------------------------

def _issues(spec: dict) -> list[str]:
    try:
        parse_spec(spec, today=TODAY)
    except SpecError as e:
        return [str(i) for i in e.issues]
    return []


def test_an_unknown_approved_workload_word_is_a_spec_error(base):
    found = _issues(_spec(base, contract={**CONTRACT, "approvedWorkloads": ["training", "batch-inference"]}))
    assert any(i.startswith("teams[0].contract.approvedWorkloads") and "'batch-inference'" in i
               and "training, fine-tuning, inference, interactive, experimentation" in i for i in found), found


def test_priority_classes_must_be_the_schedulers(base):
    found = _issues(_spec(base, priorityClasses=["training", "critical", "training"]))
    assert any(i.startswith("HPG-Q007 teams[0].priorityClasses[1]") and "use one of: training, urgent" in i
               for i in found), found
    assert any(i.startswith("HPG-Q007 teams[0].priorityClasses[2]") and "twice" in i for i in found), found


@pytest.mark.parametrize("prefix", ["public.ecr.aws", "public.ecr.aws/docker", "Public.ECR.aws/", " x/", "/"])
def test_an_image_prefix_ends_at_a_slash_after_a_registry_host(prefix, base):
    found = _issues(_spec(base, images=[prefix]))
    assert any(i.startswith("teams[0].images") and "is not a registry prefix" in i for i in found), found


def test_a_team_with_no_priority_classes_may_label_nothing(base):
    plan = build_plan(parse_spec(_spec(base, priorityClasses=[]), today=TODAY))
    team = next(t for t in plan.tenants if t.name == "team-a")
    assert team.kueue_priority_classes == ()


# --- diff ---------------------------------------------------------------------------------------------------

def test_widening_priority_classes_images_or_approved_kinds_is_a_privilege_change(base):
    from hyperpod_gov.diff import governance_diff as governance_changes

    old = build_plan(parse_spec(_spec(copy.deepcopy(base), priorityClasses=["training"], images=ALLOWED_IMAGES[:1]),
                                today=TODAY))
    new = build_plan(parse_spec(_spec(copy.deepcopy(base), priorityClasses=["training", "urgent"], images=[],
                                      contract={**CONTRACT, "approvedWorkloads": ["training", "inference"]}),
                                today=TODAY))
    lines = governance_changes(old, new)
    assert any(line.startswith("team team-a priority classes: + urgent (privilege:") for line in lines), lines
    assert any(line.startswith("team team-a images: + any image (privilege:") for line in lines), lines
    assert any(line.startswith("team team-a may create: + InferenceEndpointConfig (privilege:") for line in lines), \
        lines
    # narrowing is a change, not a privilege change
    back = [line for line in governance_changes(new, old) if "priority classes" in line]
    assert back and not any("privilege" in line for line in back), back


def test_explain_lists_each_teams_own_priority_classes(plan):
    from hyperpod_gov.explain import explain

    rows = {line.split()[0]: line for line in explain(plan).splitlines() if line.startswith(("team-a ", "team-b "))}
    assert rows["team-a"].rstrip().endswith("  training"), rows
    assert rows["team-b"].rstrip().endswith("training, urgent"), rows
