"""The HyperPod operators of ``cluster.operators``: which EKS add-ons each one installs, in which order, with
which Pod Identity roles. Plain data, read by the add-on constructs, the plan's add-on versions (drift) and
``explain``; the sources of every name are in docs/operators.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..spec.cluster import INFERENCE_NOT_PROVISIONED, TRAINING_OPERATOR_KUBERNETES, AddonVersions

__all__ = ["INFERENCE_NOT_PROVISIONED", "TRAINING_OPERATOR_KUBERNETES", "operator_addons", "kueue_external_frameworks"]

# https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-eks-operator-install.html (add-on name, namespace
# aws-hyperpod, service account hp-training-operator-controller-manager, AmazonSageMakerHyperPodTrainingOperatorAccess)
TRAINING_OPERATOR_ADDON = "amazon-sagemaker-hyperpod-training-operator"
# https://docs.aws.amazon.com/eks/latest/userguide/community-addons.html#addon-cert-manager; the oldest version AWS
# lists for the HyperPod operators: sagemaker-hyperpod-model-deployment-setup.html ("Cert Manager (minimum version:
# v1.18.2-eksbuild.2)").
CERT_MANAGER_ADDON = "cert-manager"
# https://docs.aws.amazon.com/eks/latest/userguide/workloads-add-ons-available-eks.html#add-ons-amazon-sagemaker-spaces;
# its roles: https://docs.aws.amazon.com/sagemaker/latest/dg/permission-setup.html
SPACES_ADDON = "amazon-sagemaker-spaces"
# The spaces' volumes (permission-setup.html, "IAM Role for EBS CSI Driver Add-on: always required"); the HyperPod
# additions to its role: https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-ebs.html
EBS_CSI_ADDON = "aws-ebs-csi-driver"
# https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-setup.html
INFERENCE_ADDON = "amazon-sagemaker-hyperpod-inference"

# Kueue queues HyperPodPyTorchJobs only when its configuration names the kind (sagemaker-eks-operator-install.html,
# "Kueue (optional)"): kueue mode adds it with the training operator.
HYPERPOD_PYTORCH_JOB_FRAMEWORK = "HyperPodPytorchJob.v1.sagemaker.amazonaws.com"


def kueue_external_frameworks(operators: tuple[str, ...]) -> tuple[str, ...]:
    """Kueue's ``integrations.externalFrameworks`` for the installed operators."""
    return (HYPERPOD_PYTORCH_JOB_FRAMEWORK,) if "training" in operators else ()


# The namespaces of what hyperpod-gov installs on a cluster it creates, each with the objects that run there.
KUEUE_NAMESPACE = "kueue-system"  # the Kueue chart (kueue mode) and the task-governance add-on's Kueue
OBSERVABILITY_NAMESPACE = "amazon-cloudwatch"  # amazon-cloudwatch-observability
OPERATOR_NAMESPACES = {
    CERT_MANAGER_ADDON: "cert-manager",
    TRAINING_OPERATOR_ADDON: "aws-hyperpod",  # sagemaker-eks-operator-install.html
    SPACES_ADDON: "jupyter-k8s-system",
}


def strict_mode_namespaces(*, creates_cluster: bool, addons: tuple["OperatorAddon", ...],
                           dependencies_chart: bool) -> tuple[str, ...]:
    """Namespaces whose pods keep today's traffic under the VPC CNI's strict mode (an allow-all NetworkPolicy
    each), sorted.

    Strict mode gives a pod no traffic that no NetworkPolicy allows, CoreDNS included ("you must have a network
    policy for every endpoint that your pods need to access": cni-network-policy-configure.html, step 1). Team
    namespaces have their own policies; the platform's namespaces get one that allows everything, as before.
    Only on a cluster hyperpod-gov creates: on an existing one the VPC CNI is not hyperpod-gov's.
    """
    if not creates_cluster:
        return ()
    # A created cluster always runs Kueue (its chart or the task-governance add-on's) and the observability agent.
    found = {"kube-system", KUEUE_NAMESPACE, OBSERVABILITY_NAMESPACE}
    found |= {OPERATOR_NAMESPACES[a.name] for a in addons if a.name in OPERATOR_NAMESPACES}
    if dependencies_chart:  # the HyperPod dependencies chart's agents (its aws-hyperpod namespace is fixed)
        found.add(OPERATOR_NAMESPACES[TRAINING_OPERATOR_ADDON])
    return tuple(sorted(found))


@dataclass(frozen=True)
class AddonRole:
    """A Pod Identity role an add-on's service account assumes: one AWS managed policy, plus inline statements
    where AWS documents more (``extra``: the EBS CSI driver's HyperPod actions)."""

    key: str  # construct id
    service_account: str
    managed_policy: str
    why: str  # the role's description, and the reason the managed policy is acknowledged
    hyperpod_volumes: bool = False  # sagemaker:Attach/DetachClusterNodeVolume + eks:DescribeCluster (EBS CSI)


@dataclass(frozen=True)
class OperatorAddon:
    """One EKS add-on an operator installs, and what it waits for."""

    key: str  # construct id
    name: str  # EKS add-on name
    version: Optional[str]  # None: EKS's default for the Kubernetes version
    roles: tuple[AddonRole, ...] = ()
    after: tuple[str, ...] = ()  # keys of the add-ons installed first
    pod_identity: bool = False  # its roles are assumed through the Pod Identity agent: install after it


def operator_addons(operators: tuple[str, ...], versions: AddonVersions) -> tuple[OperatorAddon, ...]:
    """The add-ons ``operators`` need, each once, prerequisites first (``inference`` is refused at validate)."""
    out: list[OperatorAddon] = []
    if "training" in operators or "spaces" in operators:
        out.append(OperatorAddon("CertManager", CERT_MANAGER_ADDON, versions.cert_manager))
    if "training" in operators:
        out.append(OperatorAddon(
            "TrainingOperator", TRAINING_OPERATOR_ADDON, versions.training_operator, after=("CertManager",),
            pod_identity=True,
            roles=(AddonRole("Role", "hp-training-operator-controller-manager",
                             "AmazonSageMakerHyperPodTrainingOperatorAccess",
                             "HyperPod training operator (amazon-sagemaker-hyperpod-training-operator)"),),
        ))
    if "spaces" in operators:
        out.append(OperatorAddon(
            "EbsCsiDriver", EBS_CSI_ADDON, versions.ebs_csi_driver, pod_identity=True,
            roles=(AddonRole("Role", "ebs-csi-controller-sa", "service-role/AmazonEBSCSIDriverPolicy",
                             "EBS CSI driver (aws-ebs-csi-driver) for HyperPod spaces' volumes",
                             hyperpod_volumes=True),),
        ))
        out.append(OperatorAddon(
            "Spaces", SPACES_ADDON, versions.spaces, after=("CertManager", "EbsCsiDriver"), pod_identity=True,
            roles=(AddonRole("ControllerRole", "jupyter-k8s-controller-manager",
                             "AmazonSageMakerSpacesControllerPolicy",
                             "HyperPod spaces controller (amazon-sagemaker-spaces)"),),
        ))
    return tuple(out)
