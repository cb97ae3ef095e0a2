"""The HyperPod operators of ``cluster.operators``: which EKS add-ons each one installs, in which order, with
which Pod Identity roles, and the one installed from a Helm chart (KubeRay). Plain data, read by the add-on
constructs, the plan's add-on versions (drift) and ``explain``; the sources of every name are in docs/operators.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..spec.cluster import INFERENCE_NOT_PROVISIONED, TRAINING_OPERATOR_KUBERNETES, AddonVersions

__all__ = ["INFERENCE_NOT_PROVISIONED", "TRAINING_OPERATOR_KUBERNETES", "operator_addons", "operator_charts"]

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
# The inference operator and what it needs, all from
# https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-setup.html (Method 2: add-on
# names, minimum versions, the namespace hyperpod-inference-system, the service accounts of the IRSA trust policies,
# the configuration values, the hyperpod-tls- bucket prefix). The add-on installs the AWS Load Balancer Controller
# and KEDA itself (alb.serviceAccount.create, keda.auth.aws.irsa: their roles are in its configuration).
INFERENCE_ADDON = "amazon-sagemaker-hyperpod-inference"
INFERENCE_NAMESPACE = "hyperpod-inference-system"
# https://docs.aws.amazon.com/eks/latest/userguide/workloads-add-ons-available-eks.html#mountpoint-for-s3-add-on
MOUNTPOINT_S3_CSI_ADDON = "aws-mountpoint-s3-csi-driver"
# https://docs.aws.amazon.com/eks/latest/userguide/workloads-add-ons-available-eks.html#add-ons-aws-fsx-csi-driver
FSX_CSI_ADDON = "aws-fsx-csi-driver"
# https://docs.aws.amazon.com/eks/latest/userguide/community-addons.html#addon-metrics-server
METRICS_SERVER_ADDON = "metrics-server"
# The ALB controller's policy, the file the setup page downloads (aws-load-balancer-controller v2.13.0,
# docs/install/iam_policy.json), shipped unchanged in hyperpod_gov/assets.
ALB_CONTROLLER_POLICY_FILE = "aws-load-balancer-controller-iam-policy-v2.13.0.json"
# The KEDA operator's permissions (setup page, "Create the KEDA operator role"): metrics reads, no resource-level
# permissions exist for them.
KEDA_ACTIONS = (
    ("cloudwatch:GetMetricData", "cloudwatch:GetMetricStatistics", "cloudwatch:ListMetrics"),
    ("aps:QueryMetrics", "aps:GetLabels", "aps:GetSeries", "aps:GetMetricMetadata"),
)

# Kueue queues HyperPodPyTorchJobs only when its configuration names the kind (sagemaker-eks-operator-install.html,
# "Kueue (optional)"): kueue mode adds it when a team may create them and the training operator runs
# (plan/workloads.py kueue_integrations).
HYPERPOD_PYTORCH_JOB_FRAMEWORK = "HyperPodPytorchJob.v1.sagemaker.amazonaws.com"


# KubeRay, the operator of RayJob, RayCluster and RayService: "HyperPod uses the open source operator without any
# changes", installed with Helm from KubeRay's chart repository, release kuberay-operator of chart kuberay-operator
# (https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-ray-install-kuberay.html). The page installs
# into the current namespace; here it gets its own, ray-system, the namespace Ray's own installation page uses
# ("rather than default to isolate the operator's service account from workload pods",
# https://docs.ray.io/en/master/kuberay/getting-started/operator-installation.html). The version is pinned
# (cluster.addonVersions.kuberayChart).
KUBERAY_CHART_REPOSITORY = "https://ray-project.github.io/kuberay-helm/"
KUBERAY_CHART = "kuberay-operator"
KUBERAY_NAMESPACE = "ray-system"


@dataclass(frozen=True)
class OperatorChart:
    """An operator installed from a Helm chart (the way its documentation installs it), not as an EKS add-on."""

    key: str  # construct id
    operator: str  # the cluster.operators entry
    chart: str
    repository: str
    version: str
    release: str
    namespace: str


def operator_charts(operators: tuple[str, ...], versions: AddonVersions) -> tuple[OperatorChart, ...]:
    """The Helm charts ``operators`` install: KubeRay for ``ray``. Kueue's Ray integrations wait for the ray.io
    CRDs (Kueue 0.19.2 pkg/controller/jobframework/setup.go WaitForAPI), so the order with Kueue is free."""
    if "ray" not in operators:
        return ()
    return (OperatorChart("KubeRay", "ray", KUBERAY_CHART, KUBERAY_CHART_REPOSITORY, versions.kuberay_chart,
                          KUBERAY_CHART, KUBERAY_NAMESPACE),)


# The namespaces of what hyperpod-gov installs on a cluster it creates, each with the objects that run there.
KUEUE_NAMESPACE = "kueue-system"  # the Kueue chart (kueue mode) and the task-governance add-on's Kueue
OBSERVABILITY_NAMESPACE = "amazon-cloudwatch"  # amazon-cloudwatch-observability
OPERATOR_NAMESPACES = {
    CERT_MANAGER_ADDON: "cert-manager",
    TRAINING_OPERATOR_ADDON: "aws-hyperpod",  # sagemaker-eks-operator-install.html
    SPACES_ADDON: "jupyter-k8s-system",
    INFERENCE_ADDON: INFERENCE_NAMESPACE,
}


def strict_mode_namespaces(*, creates_cluster: bool, addons: tuple["OperatorAddon", ...],
                           dependencies_chart: bool, charts: tuple[OperatorChart, ...] = ()) -> tuple[str, ...]:
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
    found |= {c.namespace for c in charts}
    if dependencies_chart:  # the HyperPod dependencies chart's agents (its aws-hyperpod namespace is fixed)
        found.add(OPERATOR_NAMESPACES[TRAINING_OPERATOR_ADDON])
    return tuple(sorted(found))


@dataclass(frozen=True)
class AddonRole:
    """A role an add-on's service account assumes: an AWS managed policy where AWS names one, plus the statements
    AWS documents beyond it.

    Pod Identity roles (``namespace`` empty) are associated in the add-on's namespace. IRSA roles (``namespace``
    set: the inference operator's, whose add-on takes IRSA role ARNs) trust the cluster's OIDC provider for
    ``system:serviceaccount:<namespace>:<service_account>`` only; ``via`` says how the add-on gets the role:
    ``service-account`` (the add-on's ``ServiceAccountRoleArn``) or a key of the inference add-on's
    configuration."""

    key: str  # construct id
    service_account: str
    managed_policy: Optional[str]
    why: str  # the role's description, and the reason the managed policy is acknowledged
    hyperpod_volumes: bool = False  # sagemaker:Attach/DetachClusterNodeVolume + eks:DescribeCluster (EBS CSI)
    namespace: str = ""  # IRSA: the service account's namespace
    via: str = "pod-identity"  # pod-identity | service-account | executionRoleArn | alb | keda
    policy_file: Optional[str] = None  # a policy document shipped in hyperpod_gov/assets (the ALB controller's)
    keda_metrics: bool = False  # KEDA_ACTIONS
    tls_bucket: bool = False  # the operator's objects in the TLS bucket (setup page's TLS bucket policy)
    # Mountpoint: (bucket, prefix) it may list and read, the teams' model sources (plan/workloads.py model_reads),
    # this account's buckets only; () reads nothing.
    s3_read: tuple[tuple[str, str], ...] = ()
    sagemaker_trust: bool = False  # also trusted by sagemaker.amazonaws.com (this account), as the setup page shows

    @property
    def irsa(self) -> bool:
        return bool(self.namespace)


@dataclass(frozen=True)
class OperatorAddon:
    """One EKS add-on an operator installs, and what it waits for."""

    key: str  # construct id
    name: str  # EKS add-on name
    version: Optional[str]  # None: EKS's default for the Kubernetes version
    roles: tuple[AddonRole, ...] = ()
    after: tuple[str, ...] = ()  # keys of the add-ons installed first
    pod_identity: bool = False  # its roles are assumed through the Pod Identity agent: install after it
    inference: bool = False  # the inference add-on: configuration values with its roles, the TLS bucket, the
    # HyperPod cluster ARN; installed after the nodes like the others


def operator_addons(operators: tuple[str, ...], versions: AddonVersions,
                    model_reads: tuple[tuple[str, str], ...] = ()) -> tuple[OperatorAddon, ...]:
    """The add-ons ``operators`` need, each once, prerequisites first (``inference`` only on a cluster
    hyperpod-gov creates: HPG-D005). ``model_reads``: the (bucket, prefix) the teams' inference endpoints may load
    models from (``plan.workloads.model_reads``), all the Mountpoint driver's role reads."""
    out: list[OperatorAddon] = []
    if {"training", "spaces", "inference"} & set(operators):
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
    if "inference" in operators:
        out.append(OperatorAddon(
            "MountpointS3CsiDriver", MOUNTPOINT_S3_CSI_ADDON, versions.mountpoint_s3_csi_driver,
            roles=(AddonRole("Role", "s3-csi-driver-sa", None,
                             "Mountpoint for Amazon S3 CSI driver (aws-mountpoint-s3-csi-driver) for inference "
                             "model weights", namespace="kube-system", via="service-account", s3_read=model_reads),),
        ))
        out.append(fsx_csi_addon_spec(versions.fsx_csi_driver))
        out.append(OperatorAddon("MetricsServer", METRICS_SERVER_ADDON, versions.metrics_server))
        out.append(OperatorAddon(
            "InferenceOperator", INFERENCE_ADDON, versions.inference_operator, inference=True,
            after=("CertManager", "MountpointS3CsiDriver", "FsxCsiDriver", "MetricsServer"),
            roles=(
                AddonRole("ExecutionRole", "hyperpod-inference-controller-manager",
                          "AmazonSageMakerHyperPodInferenceAccess",
                          "HyperPod inference operator (amazon-sagemaker-hyperpod-inference) execution role",
                          namespace=INFERENCE_NAMESPACE, via="executionRoleArn", tls_bucket=True,
                          sagemaker_trust=True),
                AddonRole("AlbControllerRole", "aws-load-balancer-controller", None,
                          "AWS Load Balancer Controller the HyperPod inference add-on installs",
                          namespace=INFERENCE_NAMESPACE, via="alb", policy_file=ALB_CONTROLLER_POLICY_FILE),
                AddonRole("KedaRole", "keda-operator", None,
                          "KEDA operator the HyperPod inference add-on installs (autoscaling on metrics)",
                          namespace=INFERENCE_NAMESPACE, via="keda", keda_metrics=True),
            ),
        ))
    return tuple(out)


def fsx_csi_addon_spec(version: str) -> OperatorAddon:
    """The FSx for Lustre CSI driver add-on with its IRSA role (AmazonFSxFullAccess, the policy the EKS user guide
    attaches to ``fsx-csi-controller-sa``). One definition, for whichever feature needs the driver."""
    return OperatorAddon(
        "FsxCsiDriver", FSX_CSI_ADDON, version,
        roles=(AddonRole("Role", "fsx-csi-controller-sa", "AmazonFSxFullAccess",
                         "FSx for Lustre CSI driver (aws-fsx-csi-driver)", namespace="kube-system",
                         via="service-account"),),
    )


def tls_bucket_name(spec_name: str, account: str, region: str) -> str:
    """The inference operator's TLS certificate bucket: the ``hyperpod-tls-`` prefix its managed policy's S3
    statements match (setup page), then the spec, account and region, so each cluster has its own; at most
    13 + 20 + 1 + 12 + 1 + 14 = 61 characters, within S3's 63."""
    return f"hyperpod-tls-{spec_name}-{account}-{region}"
