"""The workload kinds a team may create, by the kinds of work its contract approves.

One table (``WORKLOAD_KINDS``) says, for every kind a team can submit: its API group, version and resource,
the approved-workload words that admit it (``teams[].contract.approvedWorkloads``), the operator that runs it
(``cluster.operators``), where its pod templates live (a CEL expression over ``object``, for the admission
policies), which objects its controller creates in the team namespace (the queue policy lets those through),
and a minimal manifest (``hyperpod-gov onboard`` prints it; the tests admit it). RBAC, the Pod Security policy,
the queue policy and the onboarding page all read this table, so a kind is added in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional

if TYPE_CHECKING:
    from .plan import Plan
    from .quotas import TeamPlan

# The approved-workload words a contract may use, and what each admits.
TRAINING = "training"
FINE_TUNING = "fine-tuning"
INFERENCE = "inference"
INTERACTIVE = "interactive"
APPROVED_WORKLOADS: tuple[str, ...] = (TRAINING, FINE_TUNING, INFERENCE, INTERACTIVE)
# A team without a contract, or whose contract names no approved workloads, may run training work (what every
# team could do before contracts existed).
DEFAULT_APPROVED: tuple[str, ...] = (TRAINING,)


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

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _meta(name: str, namespace: str, queue: str, priority: str) -> dict[str, Any]:
    return {"name": name, "namespace": namespace,
            "labels": {"kueue.x-k8s.io/queue-name": queue, "kueue.x-k8s.io/priority-class": priority}}


def _pod(image: str = "public.ecr.aws/docker/library/python:3.11-slim") -> dict[str, Any]:
    return {"restartPolicy": "Never", "containers": [{
        "name": "main", "image": image, "command": ["python", "-c", "print('hello')"],
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
    }]}


def _replica_map(field: str, names: tuple[str, ...]) -> Callable[[str, str, str], dict[str, Any]]:
    def example(ns: str, queue: str, priority: str) -> dict[str, Any]:
        return {"metadata": _meta("hello", ns, queue, priority),
                "spec": {field: {n: {"replicas": 1, "restartPolicy": "Never", "template": {"spec": _pod()}}
                                 for n in names}}}
    return example


def _map_specs(field: str) -> str:
    return f"(has(object.spec.{field}) ? object.spec.{field}.map(k, object.spec.{field}[k].template.spec) : [])"


WORKLOAD_KINDS: tuple[WorkloadKind, ...] = (
    WorkloadKind("Job", "batch", "v1", "jobs", (TRAINING, FINE_TUNING), None,
                 "[object.spec.template.spec]", (("", "Pod"),),
                 lambda ns, q, p: {"metadata": _meta("hello", ns, q, p),
                                   "spec": {"suspend": True, "template": {"spec": _pod()}}}),
    WorkloadKind("PyTorchJob", "kubeflow.org", "v1", "pytorchjobs", (TRAINING, FINE_TUNING), None,
                 _map_specs("pytorchReplicaSpecs"), (("", "Pod"),), _replica_map("pytorchReplicaSpecs", ("Master",))),
    WorkloadKind("TFJob", "kubeflow.org", "v1", "tfjobs", (TRAINING, FINE_TUNING), None,
                 _map_specs("tfReplicaSpecs"), (("", "Pod"),), _replica_map("tfReplicaSpecs", ("Worker",))),
    # mpi-operator v2 runs the launcher as a batch Job it owns, and the workers as Pods.
    WorkloadKind("MPIJob", "kubeflow.org", "v2beta1", "mpijobs", (TRAINING, FINE_TUNING), None,
                 _map_specs("mpiReplicaSpecs"), (("batch", "Job"), ("", "Pod")),
                 _replica_map("mpiReplicaSpecs", ("Launcher", "Worker"))),
    WorkloadKind("HyperPodPyTorchJob", "sagemaker.amazonaws.com", "v1", "hyperpodpytorchjobs",
                 (TRAINING, FINE_TUNING), "training",
                 "(has(object.spec.replicaSpecs) ? object.spec.replicaSpecs.map(r, r.template.spec) : [])",
                 (("", "Pod"),),
                 lambda ns, q, p: {"metadata": _meta("hello", ns, q, p), "spec": {"replicaSpecs": [
                     {"name": "pod", "replicas": 1, "template": {"spec": _pod()}}]}}),
)


def approved(team: "TeamPlan") -> tuple[str, ...]:
    """The approved-workload words of a team (its contract's, or ``DEFAULT_APPROVED``)."""
    words = team.contract.approved_workloads if team.contract is not None else ()
    return tuple(words) or DEFAULT_APPROVED


def kinds_for(team: "TeamPlan") -> tuple[WorkloadKind, ...]:
    """The kinds ``team`` may create, in table order."""
    words = set(approved(team))
    return tuple(k for k in WORKLOAD_KINDS if words.intersection(k.approved_by))


def pod_specs_expression(kinds: tuple[WorkloadKind, ...] = WORKLOAD_KINDS) -> str:
    """CEL over ``object``: the pod specs of a Pod or of any of ``kinds`` (others: none)."""
    expr = "[]"
    for k in reversed(kinds):
        expr = f"object.kind == '{k.kind}' ? {k.pod_specs} : {expr}"
    return f"object.kind == 'Pod' ? [object.spec] : {expr}"


def allowed_priority_classes(plan: "Plan", team: "TeamPlan") -> tuple[str, ...]:
    """The Kueue WorkloadPriorityClass names ``team`` may label its work with (``kueue.x-k8s.io/priority-class``)."""
    return tuple(p.kueue_name for p in plan.priority_classes)
