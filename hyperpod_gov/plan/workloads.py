"""The workload kinds a team may create, by the kinds of work its contract approves.

One table (``WORKLOAD_KINDS``) says, for every kind a team can submit: its API group, version and resource,
the approved-workload words that admit it (``teams[].contract.approvedWorkloads``), the operator that runs it
(``cluster.operators``), where its pod templates live (a CEL expression over ``object``, for the admission
policies), which objects its controller creates in the team namespace (the queue policy lets those through),
and a minimal manifest (``hyperpod-gov onboard`` prints it; the tests admit it). RBAC, the Pod Security policy,
the queue policy and the onboarding page all read this table, so a kind is added in one place.
"""

from __future__ import annotations

import copy

from dataclasses import dataclass
from typing import Any, Callable, Optional

# The approved-workload words a contract may use (the spec refuses others); the table below says what each admits.
from ..spec.workloads import (  # noqa: F401 (re-exported)
    APPROVED_WORKLOADS, EXPERIMENTATION, FINE_TUNING, INFERENCE, INTERACTIVE, TRAINING,
)
from .quotas import TeamPlan

# A team without a contract, or whose contract names no approved workloads, may run training work (what every
# team could do before contracts existed).
DEFAULT_APPROVED: tuple[str, ...] = (TRAINING,)
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"  # Kueue's WorkloadPriorityClass label (names.QUEUE_LABEL: the queue)
CORE = ""  # the core API group ("v1": Pod, Service)
APPS = "apps"


@dataclass(frozen=True)
class WorkloadKind:
    """One kind a team may create (a Kubernetes resource), and what governs it."""

    kind: str  # "PyTorchJob"
    group: str  # API group ("" is the core group)
    version: str  # the served version the examples use
    resource: str  # plural resource name, as RBAC and admission rules name it
    approved_by: tuple[str, ...]  # approved-workload words that admit it
    operator: Optional[str]  # cluster.operators entry that installs its controller (None: Kubernetes or chart)
    pod_specs: str  # CEL over `object`: the list of its pod specs ("[]": it has no pod template)
    # (group, kind) of the objects its controller creates in the namespace (the queue policy admits them)
    creates: tuple[tuple[str, str], ...]
    example: Callable[[str, str, str], dict[str, Any]]  # (namespace, local queue, priority class) -> manifest
    # CEL over `object`: container-like objects outside its pod specs (image, env or environmentVariables,
    # resources), for the image, GPU-environment and accelerator checks; "[]": none.
    containers: str = "[]"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _meta(name: str, namespace: str, queue: str, priority: str) -> dict[str, Any]:
    return {"name": name, "namespace": namespace,
            "labels": {"kueue.x-k8s.io/queue-name": queue, PRIORITY_LABEL: priority}}


EXAMPLE_IMAGE = "public.ecr.aws/docker/library/python:3.11-slim"
_RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
# A container that requests no GPU says so to the NVIDIA container toolkit: an image's own
# ``ENV NVIDIA_VISIBLE_DEVICES=all`` (every CUDA base image has it) would otherwise give it every GPU of the node.
# The team-limits policy requires this entry on every such container (charts/team_limits.py).
VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"
NO_DEVICES = ("void", "none")  # the toolkit's values for "no GPU"; void: not even the driver's libraries


def no_gpu_env() -> dict[str, str]:
    """The ``env`` entry every container without a GPU request carries: ``NVIDIA_VISIBLE_DEVICES=void``."""
    return {"name": VISIBLE_DEVICES, "value": NO_DEVICES[0]}


def _pod(image: str = EXAMPLE_IMAGE) -> dict[str, Any]:
    return {"restartPolicy": "Never", "containers": [{
        "name": "main", "image": image, "command": ["python", "-c", "print('hello')"],
        "env": [no_gpu_env()],
        "resources": copy.deepcopy(_RESOURCES),  # each container its own: a shared mapping dumps as a YAML anchor
    }]}


def _replica_map(field: str, names: tuple[str, ...]) -> Callable[[str, str, str], dict[str, Any]]:
    def example(ns: str, queue: str, priority: str) -> dict[str, Any]:
        return {"metadata": _meta("hello", ns, queue, priority),
                "spec": {field: {n: {"replicas": 1, "restartPolicy": "Never", "template": {"spec": _pod()}}
                                 for n in names}}}
    return example


def _map_specs(field: str) -> str:
    return f"(has(object.spec.{field}) ? object.spec.{field}.map(k, object.spec.{field}[k].template.spec) : [])"


def _or(path: str, default: str) -> str:
    """CEL: ``object.<path>`` if every step of it is set, else ``default``."""
    parts = path.split(".")
    guard = " && ".join(f"has(object.{'.'.join(parts[: i + 1])})" for i in range(1, len(parts)))
    return f"({guard} ? object.{path} : {default})"


# InferenceEndpointConfig (inference.sagemaker.aws.amazon.com/v1, the storage version; v1alpha1 still served) has
# no pod template. Source: the CRD in aws/sagemaker-hyperpod-cli,
# helm_chart/HyperPodHelmChart/charts/inference-operator/config/crd/
# inference.sagemaker.aws.amazon.com_inferenceendpointconfigs.yaml. What a team writes of the pod: spec.worker
# (image, environmentVariables, resources, command: one container, no securityContext), and spec.kubernetes
# (initContainers: full containers; volumes: full pod volumes, hostPath among them; serviceAccountName,
# schedulerName). The Pod Security checks see the init containers and volumes as a pod spec; the worker is checked
# as a container (image, GPU environment, accelerators). The operator makes the pods (through a Deployment);
# they are checked again when they are created.
_IEC_SPECS = (f"[{{'initContainers': {_or('spec.kubernetes.initContainers', '[]')}, "
              f"'volumes': {_or('spec.kubernetes.volumes', '[]')}}}]")
# Workspace (workspace.jupyter.org/v1alpha1, the only version; HyperPod spaces run the jupyter-k8s operator).
# Source: jupyter-infra/jupyter-k8s config/crd/bases/workspace.jupyter.org_workspaces.yaml and
# internal/controller/deployment_builder.go, which builds one container from spec.image, spec.env,
# spec.resources and spec.containerSecurityContext, the pod's securityContext from spec.podSecurityContext, and
# adds spec.initContainers; spec.volumes only name PersistentVolumeClaims. The same pod spec, written in CEL:
_WORKSPACE_SPECS = (
    f"[{{'securityContext': {_or('spec.podSecurityContext', '{}')}, "
    f"'initContainers': {_or('spec.initContainers', '[]')}, "
    f"'containers': [{{'name': 'workspace', 'image': {_or('spec.image', chr(39) * 2)}, "
    f"'securityContext': {_or('spec.containerSecurityContext', '{}')}, 'env': {_or('spec.env', '[]')}, "
    f"'resources': {_or('spec.resources', '{}')}}}]}}]"
)
# The HyperPod inference operator and the spaces operator create Deployments (the inference operator's ClusterRole
# writes apps/*; jupyter-k8s's Workspace controller Owns(&appsv1.Deployment{})), which Kubernetes turns into
# ReplicaSets and Pods. A team creates neither: the operators need no Deployment or Service from the team.
_DEPLOYMENT = ((APPS, "Deployment"),)


def _inference_endpoint(ns: str, queue: str, priority: str) -> dict[str, Any]:
    return {"metadata": _meta("hello", ns, queue, priority), "spec": {
        "modelName": "hello", "instanceType": "ml.g5.2xlarge", "invocationEndpoint": "invocations",
        "modelSourceConfig": {"modelSourceType": "s3", "modelLocation": "models/hello",
                              "s3Storage": {"bucketName": "example-bucket", "region": "us-east-1"}},
        "worker": {"image": "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.32.0-lmi14.0.0-cu126",
                   "modelInvocationPort": {"containerPort": 8080},
                   "modelVolumeMount": {"name": "model-weights", "mountPath": "/opt/ml/model"},
                   "resources": {"requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": 1},
                                 "limits": {"nvidia.com/gpu": 1}}}}}


def _jumpstart_model(ns: str, queue: str, priority: str) -> dict[str, Any]:
    return {"metadata": _meta("hello", ns, queue, priority), "spec": {
        "model": {"modelId": "huggingface-llm-mistral-7b-instruct", "acceptEula": True},
        "server": {"instanceType": "ml.g5.8xlarge"}}}


def _workspace(ns: str, queue: str, priority: str) -> dict[str, Any]:
    return {"metadata": _meta("hello", ns, queue, priority), "spec": {
        "displayName": "hello", "image": "public.ecr.aws/sagemaker/sagemaker-distribution:latest-cpu",
        "env": [no_gpu_env()], "resources": copy.deepcopy(_RESOURCES)}}


WORKLOAD_KINDS: tuple[WorkloadKind, ...] = (
    WorkloadKind("Job", "batch", "v1", "jobs", (TRAINING, FINE_TUNING), None,
                 "[object.spec.template.spec]", ((CORE, "Pod"),),
                 lambda ns, q, p: {"metadata": _meta("hello", ns, q, p),
                                   "spec": {"suspend": True, "template": {"spec": _pod()}}}),
    # Kubeflow training operator v1: each replica type's pods, created by the operator.
    WorkloadKind("PyTorchJob", "kubeflow.org", "v1", "pytorchjobs", (TRAINING, FINE_TUNING), None,
                 _map_specs("pytorchReplicaSpecs"), ((CORE, "Pod"),),
                 _replica_map("pytorchReplicaSpecs", ("Master",))),
    WorkloadKind("TFJob", "kubeflow.org", "v1", "tfjobs", (TRAINING, FINE_TUNING), None,
                 _map_specs("tfReplicaSpecs"), ((CORE, "Pod"),), _replica_map("tfReplicaSpecs", ("Worker",))),
    # mpi-operator v2 runs the launcher as a batch Job it owns (its pod is the Job controller's), and the workers
    # as Pods (kubeflow/mpi-operator v2: pkg/controller/mpi_job_controller.go, newLauncherJob and newWorker).
    WorkloadKind("MPIJob", "kubeflow.org", "v2beta1", "mpijobs", (TRAINING, FINE_TUNING), None,
                 _map_specs("mpiReplicaSpecs"), (("batch", "Job"), (CORE, "Pod")),
                 _replica_map("mpiReplicaSpecs", ("Launcher", "Worker"))),
    WorkloadKind("HyperPodPyTorchJob", "sagemaker.amazonaws.com", "v1", "hyperpodpytorchjobs",
                 (TRAINING, FINE_TUNING), "training",
                 "(has(object.spec.replicaSpecs) ? object.spec.replicaSpecs.map(r, r.template.spec) : [])",
                 ((CORE, "Pod"),),
                 lambda ns, q, p: {"metadata": _meta("hello", ns, q, p), "spec": {"replicaSpecs": [
                     {"name": "pod", "replicas": 1, "template": {"spec": _pod()}}]}}),
    WorkloadKind("InferenceEndpointConfig", "inference.sagemaker.aws.amazon.com", "v1", "inferenceendpointconfigs",
                 (INFERENCE,), "inference", _IEC_SPECS, _DEPLOYMENT, _inference_endpoint,
                 containers="(has(object.spec.worker) ? [object.spec.worker] : [])"),
    # JumpStartModel (same group and CRD source, ..._jumpstartmodels.yaml, v1): no image, container or volume;
    # the operator picks the JumpStart image and the resources from spec.server.instanceType. Admission checks its
    # queue and priority labels; the pods the operator creates are checked as Pods.
    WorkloadKind("JumpStartModel", "inference.sagemaker.aws.amazon.com", "v1", "jumpstartmodels", (INFERENCE,),
                 "inference", "[]", _DEPLOYMENT, _jumpstart_model),
    WorkloadKind("Workspace", "workspace.jupyter.org", "v1alpha1", "workspaces", (INTERACTIVE, EXPERIMENTATION),
                 "spaces", _WORKSPACE_SPECS, _DEPLOYMENT, _workspace),
)

# What Kubernetes itself creates below the operators' Deployments: (owner group, owner kind) -> what it creates.
# Not kinds a team creates (no RBAC verb); listed so that the queue policy knows the chain down to the Pods.
CONTROLLER_CHAIN: tuple[tuple[tuple[str, str], tuple[tuple[str, str], ...]], ...] = (
    ((APPS, "Deployment"), ((APPS, "ReplicaSet"),)),
    ((APPS, "ReplicaSet"), ((CORE, "Pod"),)),
)


def owners_of(group: str, kind: str) -> tuple[tuple[str, str], ...]:
    """The (group, kind) of every controller that creates ``group``/``kind`` objects: the managed kinds of
    ``WORKLOAD_KINDS`` (``creates``) and Kubernetes' own controllers below them (``CONTROLLER_CHAIN``); sorted."""
    found = {(k.group, k.kind) for k in WORKLOAD_KINDS if (group, kind) in k.creates}
    found |= {owner for owner, made in CONTROLLER_CHAIN if (group, kind) in made}
    return tuple(sorted(found))


def controller_created() -> tuple[tuple[str, str], ...]:
    """(group, kind) of every object some managed controller creates, sorted."""
    made = {c for k in WORKLOAD_KINDS for c in k.creates} | {c for _, cs in CONTROLLER_CHAIN for c in cs}
    return tuple(sorted(made))


def approved(team: TeamPlan) -> tuple[str, ...]:
    """The approved-workload words of a team (its contract's, or ``DEFAULT_APPROVED``)."""
    words = team.contract.approved_workloads if team.contract is not None else ()
    return tuple(words) or DEFAULT_APPROVED


def kinds_for(team: TeamPlan) -> tuple[WorkloadKind, ...]:
    """The kinds ``team`` may create, in table order."""
    words = set(approved(team))
    return tuple(k for k in WORKLOAD_KINDS if words.intersection(k.approved_by))


INFERENCE_ENDPOINT = "InferenceEndpointConfig"


@dataclass(frozen=True)
class ModelSources:
    """Where a team's inference endpoints may load a model from (an InferenceEndpointConfig's
    ``spec.modelSourceConfig``): the capacity account's S3 prefixes its workload identities are granted
    (``teams[].workloadIdentities[].grants.s3``) and its own directory on the shared file system
    (``cluster.sharedStorage``).

    The inference add-on's Mountpoint role reads the prefixes of every team (``model_reads``, plan/operators.py);
    admission holds each team to its own (charts/team_limits.py). The team bucket is none of them: its bucket
    policy refuses every principal outside the team, the driver's role among them."""

    s3: tuple[tuple[str, str], ...] = ()  # (bucket, prefix): prefix "" (the whole bucket) or ending at '/', sorted
    fsx_directory: Optional[str] = None  # "/<team>" on the shared file system; None without cluster.sharedStorage


def model_sources(team: TeamPlan) -> ModelSources:
    """The model sources of ``team``: none unless it may create InferenceEndpointConfigs."""
    if INFERENCE_ENDPOINT not in {k.kind for k in kinds_for(team)}:
        return ModelSources()
    s3 = {(a.bucket, a.prefix) for identity in team.identities for a in identity.grants.s3}
    return ModelSources(tuple(sorted(s3)), team.volume.directory if team.volume is not None else None)


def model_reads(teams: tuple[TeamPlan, ...]) -> tuple[tuple[str, str], ...]:
    """(bucket, prefix) of every team's S3 model sources, sorted: what the Mountpoint driver's role may read."""
    return tuple(sorted({source for team in teams for source in model_sources(team).s3}))


def pod_specs_expression(kinds: tuple[WorkloadKind, ...] = WORKLOAD_KINDS) -> str:
    """CEL over ``object``: the pod specs of a Pod or of any of ``kinds`` (others: none)."""
    expr = "[]"
    for k in reversed(kinds):
        expr = f"object.kind == '{k.kind}' ? {k.pod_specs} : {expr}"
    return f"object.kind == 'Pod' ? [object.spec] : {expr}"


def extra_containers_expression(kinds: tuple[WorkloadKind, ...] = WORKLOAD_KINDS) -> str:
    """CEL over ``object``: the container-like objects of ``kinds`` that are not in a pod spec (others: none)."""
    expr = "[]"
    for k in reversed(kinds):
        if k.containers != "[]":
            expr = f"object.kind == '{k.kind}' ? {k.containers} : {expr}"
    return expr

