"""Kueue's integrations (v0.19.2, the chart kueue mode installs) that queue the kinds of ``plan/workloads.py``.

Each ``WorkloadKind`` names the one that covers it; the controller Configuration enables those of the kinds the
teams may create (``plan.workloads.kueue_integrations``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .operators import HYPERPOD_PYTORCH_JOB_FRAMEWORK


@dataclass(frozen=True)
class KueueIntegration:
    """One Kueue integration (v0.19.2, the chart kueue mode installs): a built-in framework of
    ``integrations.frameworks`` (its ``FrameworkName`` in pkg/controller/jobs/<name>/<name>_controller.go), or an
    ``integrations.externalFrameworks`` entry (``Kind.version.group``) for a kind whose controller does the
    suspending itself.

    Kueue treats a pod's owner as a job only when its integration is enabled (pkg/controller/jobframework/
    integrationmanager.go, ``getJobTypeForOwner`` walks the enabled integrations and the external ones): a kind
    whose integration is off is not one workload, its pods are queued one by one or not at all."""

    name: str
    external: bool = False


# Built-in integrations of Kueue v0.19.2 the table uses (pkg/controller/jobs/...: job, kubeflow/jobs/pytorchjob,
# kubeflow/jobs/tfjob, mpijob (kubeflow.org/v2beta1 MPIJobs), rayjob, raycluster, rayservice, deployment, pod).
KUEUE_JOB = KueueIntegration("batch/job")
KUEUE_PYTORCHJOB = KueueIntegration("kubeflow.org/pytorchjob")
KUEUE_TFJOB = KueueIntegration("kubeflow.org/tfjob")
KUEUE_MPIJOB = KueueIntegration("kubeflow.org/mpijob")
KUEUE_RAYJOB = KueueIntegration("ray.io/rayjob")
KUEUE_RAYCLUSTER = KueueIntegration("ray.io/raycluster")
KUEUE_RAYSERVICE = KueueIntegration("ray.io/rayservice")
# The operators of the inference and spaces kinds run their pods through Deployments (plan/workloads.py,
# _DEPLOYMENT). Kueue's deployment integration (deployment/deployment_controller.go: ImplicitlyEnabledFrameworkNames
# ["pod"]; deployment_webhook.go Default) copies the Deployment's queue and priority labels onto its pod template and
# marks the pods suspended by their parent; each pod is then queued as a pod of its own (serving work: a replica more
# or less is not a new job). Kueue walks Pod -> ReplicaSet -> Deployment (reconciler.go
# FindAncestorJobManagedByKueue; integrationmanager.go isKnownOwner: "ReplicaSet is an interim owner from Pod to
# Deployment") and stops at the operator's kind, which is no integration. No Kueue integration takes the inference
# or spaces kinds themselves, and LeaderWorkerSet is not what these operators create.
KUEUE_DEPLOYMENT = KueueIntegration("deployment")
# Bare Pods (pod/pod_controller.go): the queue policy lets a team's own Pods through only with its queue label.
KUEUE_POD = KueueIntegration("pod")
# HyperPodPyTorchJob: "Kueue (optional)" of sagemaker-eks-operator-install.html names it as an external framework.
KUEUE_HYPERPOD_PYTORCH_JOB = KueueIntegration(HYPERPOD_PYTORCH_JOB_FRAMEWORK, external=True)
KUEUE_INTEGRATIONS: tuple[KueueIntegration, ...] = (
    KUEUE_JOB, KUEUE_PYTORCHJOB, KUEUE_TFJOB, KUEUE_MPIJOB, KUEUE_RAYJOB, KUEUE_RAYCLUSTER, KUEUE_RAYSERVICE,
    KUEUE_DEPLOYMENT, KUEUE_POD, KUEUE_HYPERPOD_PYTORCH_JOB,
)
