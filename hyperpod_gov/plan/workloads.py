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
    APPROVED_WORKLOADS, EXPERIMENTATION, FINE_TUNING, INFERENCE, INTERACTIVE, RAY, TRAINING,
)
from .kueue_frameworks import (
    KUEUE_DEPLOYMENT, KUEUE_HYPERPOD_PYTORCH_JOB, KUEUE_JOB, KUEUE_MPIJOB, KUEUE_POD, KUEUE_PYTORCHJOB,
    KUEUE_RAYCLUSTER, KUEUE_RAYJOB, KUEUE_RAYSERVICE, KUEUE_TFJOB, KueueIntegration,
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
    # The Kueue integration that queues it in kueue mode (KUEUE_INTEGRATIONS): the controller Configuration
    # enables it for every kind a team may create (``kueue_integrations``).
    kueue: KueueIntegration
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


def _has(path: str) -> str:
    """CEL: every step of ``object.<path>`` is set."""
    parts = path.split(".")
    return " && ".join(f"has(object.{'.'.join(parts[: i + 1])})" for i in range(1, len(parts)))


def _or(path: str, default: str) -> str:
    """CEL: ``object.<path>`` if every step of it is set, else ``default``."""
    return f"({_has(path)} ? object.{path} : {default})"


def _ray_specs(cluster: str) -> str:
    """CEL: the pod specs of the Ray cluster spec at ``object.<cluster>``: its head group's and each worker group's
    (KubeRay ray.io/v1 CRDs, ray-operator/config/crd/bases/ray.io_rayclusters.yaml: headGroupSpec.template,
    workerGroupSpecs[].template)."""
    head, workers = f"{cluster}.headGroupSpec", f"{cluster}.workerGroupSpecs"
    return (f"({_has(head)} ? [object.{head}.template.spec] : []) + "
            f"({_has(workers)} ? object.{workers}.map(w, w.template.spec) : [])")


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


# Ray (KubeRay v1.6.2, ray-operator/controllers/ray/): a RayCluster's controller Owns Pods, Services and Secrets and
# creates the Redis cleanup batch Job of GCS fault tolerance (raycluster_controller.go, SetControllerReference on
# each); a RayJob's Owns the RayCluster it creates, Services and its submitter batch Job (rayjob_controller.go;
# spec.submitterPodTemplate is that Job's pod); a RayService's Owns its RayClusters and Services
# (rayservice_controller.go). Which of them admission sees: the RayCluster, the batch Jobs and the Pods.
_RAY_CLUSTER_CREATES = (("batch", "Job"), (CORE, "Pod"), (CORE, "Service"))
_RAY_JOB_CREATES = (("batch", "Job"), (CORE, "Service"), ("ray.io", "RayCluster"))
_RAY_SERVICE_CREATES = ((CORE, "Service"), ("ray.io", "RayCluster"))
RAY_IMAGE = "docker.io/rayproject/ray:2.46.0"
_RAY_SUBMITTER = "(has(object.spec.submitterPodTemplate) && has(object.spec.submitterPodTemplate.spec) ? " \
                 "[object.spec.submitterPodTemplate.spec] : [])"


def _ray_container(name: str, memory: str = "1Gi") -> dict[str, Any]:
    """A CPU-only Ray container: 1 CPU and ``memory`` (KubeRay v1.6.2's ray-operator/config/samples/
    ray-cluster.sample.yaml gives its head 5Gi, its workers 1Gi)."""
    amounts = {"cpu": "1", "memory": memory}
    return {"name": name, "image": RAY_IMAGE, "env": [no_gpu_env()],
            "resources": {"requests": dict(amounts), "limits": dict(amounts)}}


def _ray_cluster_spec() -> dict[str, Any]:
    """A Ray cluster of one head and one worker, CPU only (requests equal to limits, no GPU for the toolkit)."""
    head = {"containers": [_ray_container("ray-head", "5Gi")]}
    return {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": head}},
            "workerGroupSpecs": [{"groupName": "workers", "replicas": 1, "minReplicas": 1, "maxReplicas": 1,
                                  "rayStartParams": {},
                                  "template": {"spec": {"containers": [_ray_container("ray-worker")]}}}]}


def _ray_job(ns: str, queue: str, priority: str) -> dict[str, Any]:
    # The submitter pod is written out: KubeRay's default one (the head's image, no env) would lack the
    # NVIDIA_VISIBLE_DEVICES entry the team-limits policy requires of a container without a GPU.
    return {"metadata": _meta("hello", ns, queue, priority), "spec": {
        "entrypoint": "python -c \"import ray; ray.init(); print(ray.cluster_resources())\"",
        "shutdownAfterJobFinishes": True, "rayClusterSpec": _ray_cluster_spec(),
        "submitterPodTemplate": {"spec": {"restartPolicy": "Never",
                                          "containers": [_ray_container("ray-job-submitter")]}}}}


def _ray_cluster(ns: str, queue: str, priority: str) -> dict[str, Any]:
    return {"metadata": _meta("hello", ns, queue, priority), "spec": _ray_cluster_spec()}


def _ray_service(ns: str, queue: str, priority: str) -> dict[str, Any]:
    return {"metadata": _meta("hello", ns, queue, priority), "spec": {
        "serveConfigV2": "applications: []\n", "rayClusterConfig": _ray_cluster_spec()}}


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
                                   "spec": {"suspend": True, "template": {"spec": _pod()}}},
                 KUEUE_JOB),
    # Kubeflow training operator v1: each replica type's pods, created by the operator.
    WorkloadKind("PyTorchJob", "kubeflow.org", "v1", "pytorchjobs", (TRAINING, FINE_TUNING), None,
                 _map_specs("pytorchReplicaSpecs"), ((CORE, "Pod"),),
                 _replica_map("pytorchReplicaSpecs", ("Master",)), KUEUE_PYTORCHJOB),
    WorkloadKind("TFJob", "kubeflow.org", "v1", "tfjobs", (TRAINING, FINE_TUNING), None,
                 _map_specs("tfReplicaSpecs"), ((CORE, "Pod"),), _replica_map("tfReplicaSpecs", ("Worker",)),
                 KUEUE_TFJOB),
    # mpi-operator v2 runs the launcher as a batch Job it owns (its pod is the Job controller's), and the workers
    # as Pods (kubeflow/mpi-operator v2: pkg/controller/mpi_job_controller.go, newLauncherJob and newWorker).
    WorkloadKind("MPIJob", "kubeflow.org", "v2beta1", "mpijobs", (TRAINING, FINE_TUNING), None,
                 _map_specs("mpiReplicaSpecs"), (("batch", "Job"), (CORE, "Pod")),
                 _replica_map("mpiReplicaSpecs", ("Launcher", "Worker")), KUEUE_MPIJOB),
    WorkloadKind("HyperPodPyTorchJob", "sagemaker.amazonaws.com", "v1", "hyperpodpytorchjobs",
                 (TRAINING, FINE_TUNING), "training",
                 "(has(object.spec.replicaSpecs) ? object.spec.replicaSpecs.map(r, r.template.spec) : [])",
                 ((CORE, "Pod"),),
                 lambda ns, q, p: {"metadata": _meta("hello", ns, q, p), "spec": {"replicaSpecs": [
                     {"name": "pod", "replicas": 1, "template": {"spec": _pod()}}]}},
                 KUEUE_HYPERPOD_PYTORCH_JOB),
    WorkloadKind("InferenceEndpointConfig", "inference.sagemaker.aws.amazon.com", "v1", "inferenceendpointconfigs",
                 (INFERENCE,), "inference", _IEC_SPECS, _DEPLOYMENT, _inference_endpoint, KUEUE_DEPLOYMENT,
                 containers="(has(object.spec.worker) ? [object.spec.worker] : [])"),
    # JumpStartModel (same group and CRD source, ..._jumpstartmodels.yaml, v1): no image, container or volume;
    # the operator picks the JumpStart image and the resources from spec.server.instanceType. Admission checks its
    # queue and priority labels; the pods the operator creates are checked as Pods.
    WorkloadKind("JumpStartModel", "inference.sagemaker.aws.amazon.com", "v1", "jumpstartmodels", (INFERENCE,),
                 "inference", "[]", _DEPLOYMENT, _jumpstart_model, KUEUE_DEPLOYMENT),
    WorkloadKind("Workspace", "workspace.jupyter.org", "v1alpha1", "workspaces", (INTERACTIVE, EXPERIMENTATION),
                 "spaces", _WORKSPACE_SPECS, _DEPLOYMENT, _workspace, KUEUE_DEPLOYMENT),
    # Ray (KubeRay ray.io/v1): each kind has its Kueue integration (rayjob, raycluster, rayservice in Kueue 0.19.2),
    # which suspends it until admitted and queues its head and worker groups as one workload.
    WorkloadKind("RayJob", "ray.io", "v1", "rayjobs", (RAY,), "ray",
                 f"{_ray_specs('spec.rayClusterSpec')} + {_RAY_SUBMITTER}", _RAY_JOB_CREATES, _ray_job, KUEUE_RAYJOB),
    WorkloadKind("RayCluster", "ray.io", "v1", "rayclusters", (RAY,), "ray", _ray_specs("spec"),
                 _RAY_CLUSTER_CREATES, _ray_cluster, KUEUE_RAYCLUSTER),
    WorkloadKind("RayService", "ray.io", "v1", "rayservices", (RAY,), "ray", _ray_specs("spec.rayClusterConfig"),
                 _RAY_SERVICE_CREATES, _ray_service, KUEUE_RAYSERVICE),
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


def kueue_integrations(teams: tuple[TeamPlan, ...],
                       operators: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``integrations.frameworks`` and ``integrations.externalFrameworks`` of Kueue's Configuration (kueue mode),
    each sorted: the integration of every kind a team of ``teams`` may create whose operator runs on the cluster
    (``operators``: the installed ones and, on an existing cluster, the ones running there; a kind of no operator
    always), and ``pod`` always (a team's bare Pods, which the queue policy admits with its queue label)."""
    kinds = {k for team in teams for k in kinds_for(team) if k.operator is None or k.operator in operators}
    frameworks = {KUEUE_POD.name} | {k.kueue.name for k in kinds if not k.kueue.external}
    return tuple(sorted(frameworks)), tuple(sorted({k.kueue.name for k in kinds if k.kueue.external}))


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

