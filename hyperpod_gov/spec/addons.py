"""What runs on the EKS cluster besides the teams' work: pinned EKS add-on versions, the HyperPod operators, and
where a Helm chart comes from (cluster.dependenciesChart)."""

from __future__ import annotations

import re
from typing import Any, Literal, Optional

from pydantic import Field, field_validator, model_validator

from ._base import SpecModel, spec_error


# Helm sources and versions reach the helm command line of the kubectl handler: printable ASCII, no spaces.
HELM_TOKEN = re.compile(r"\A[!-~]{1,512}\Z", re.ASCII)


HelmSource = Literal["repository", "oci", "directory"]


class HelmChart(SpecModel):
    """Where a Helm chart comes from: a Helm repository, an OCI reference or a local directory."""

    repository: Optional[str] = Field(default=None, description="Helm repository URL (with `chart`).")
    chart: Optional[str] = Field(default=None, description="Chart name in the repository.")
    oci: Optional[str] = Field(default=None, description="OCI reference, e.g. oci://registry/path/chart.")
    directory: Optional[str] = Field(
        default=None, description="Local chart directory, uploaded as a CDK asset (relative to the spec file)."
    )
    version: Optional[str] = Field(default=None, description="Chart version (required for repository and oci).")

    @model_validator(mode="after")
    def _one_source(self) -> "HelmChart":
        given = [k for k in ("repository", "oci", "directory") if getattr(self, k)]
        if len(given) != 1:
            raise spec_error(
                f"names {len(given)} chart sources ({', '.join(given) or 'none'})",
                "give exactly one of repository (with chart and version), oci (with version) or directory",
            )
        if self.repository and not (self.chart and self.version):
            raise spec_error("a repository chart needs chart and version", "add chart: NAME and version: X.Y.Z")
        if self.oci and not self.version:
            raise spec_error("an OCI chart needs a version", "add version: X.Y.Z")
        return self

    @field_validator("repository", "chart", "oci", "version")
    @classmethod
    def _token(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not HELM_TOKEN.match(v):
            raise spec_error("holds a space, a control character or a character that is not ASCII",
                             "write the URL, chart name or version as Helm expects it, e.g. 1.2.3")
        return v

    @field_validator("directory")
    @classmethod
    def _directory(cls, v: Optional[str]) -> Optional[str]:
        if v is None:
            return v
        if not v.isascii() or not v.isprintable() or "\\" in v:
            raise spec_error("holds a character that is not printable ASCII (or a backslash)",
                             "write a relative path with '/' inside the spec's folder, e.g. charts/hyperpod")
        parts = v.split("/")
        if v.startswith("/") or v.startswith("~") or ".." in parts:
            raise spec_error(
                "leaves the spec's folder (an absolute path, '~' or '..'), and the whole folder it names is "
                "uploaded into the cloud assembly",
                "put the chart in a folder next to the spec and name it relative to the spec, e.g. charts/hyperpod",
            )
        return v

    @property
    def source(self) -> HelmSource:
        return "repository" if self.repository else "oci" if self.oci else "directory"


def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v.split("-")[0]))


# cluster.operators: the HyperPod operators hyperpod-gov can install (docs/operators.md).
Operator = Literal["training", "inference", "spaces", "ray"]
# Kubernetes versions the training operator supports
# (https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-eks-operator.html, "Supported versions").
TRAINING_OPERATOR_KUBERNETES = ("1.28", "1.29", "1.30", "1.31", "1.32", "1.33")

# Why `inference` is refused at validate (HPG-D005) on an existing cluster: what the inference add-on needs that
# hyperpod-gov provisions only on a cluster it creates. Every item is from
# https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-setup.html
INFERENCE_NOT_PROVISIONED = (
    "an IAM OIDC provider for the EKS cluster (the operator's execution role, the ALB controller's and KEDA's roles "
    "are IRSA roles): the cluster may already have one, and IAM allows one provider per issuer URL",
    "the aws-mountpoint-s3-csi-driver and aws-fsx-csi-driver add-ons, which an existing cluster may run already",
    "load-balancer tags on the VPC's subnets, which hyperpod-gov does not own there",
)

# sagemaker-hyperpod-model-deployment-setup.html ("minimum version" of each add-on)
INFERENCE_MINIMUM = {
    "inference_operator": "v1.0.0-eksbuild.1",
    "mountpoint_s3_csi_driver": "v1.14.1-eksbuild.1",
    "fsx_csi_driver": "v1.6.0-eksbuild.1",
    "metrics_server": "v0.7.2-eksbuild.4",
}

ADDON_VERSION = re.compile(r"\Av\d+\.\d+\.\d+-eksbuild\.\d+\Z", re.ASCII)


class AddonVersions(SpecModel):
    """Pinned EKS add-on versions. Check what a region offers with `aws eks describe-addon-versions`."""

    cloudwatch_observability: str = Field(
        default="v4.1.0-eksbuild.1",
        description="amazon-cloudwatch-observability; at least v3.1.0 (Kueue metrics need v2.4.0, Pod Identity v3.1.0).",
    )
    # The troubleshooting page of the add-on names v1.0.5-eksbuild.1 as the version that tolerates restricted
    # instance groups (hyperpod-observability-addon-troubleshooting.md).
    hyperpod_observability: str = Field(
        default="v1.0.5-eksbuild.1",
        description="amazon-sagemaker-hyperpod-observability (monitoring.prometheus); at least v1.0.5-eksbuild.1.",
    )
    # A Slurm cluster's HyperPod extension (CreateClusterExtension: MAJOR.MINOR.PATCH, the API reference's example
    # 1.0.0); check a region with `aws sagemaker list-cluster-extension-versions --extension-name
    # sagemaker-observability`.
    observability_extension: str = Field(
        default="1.0.0",
        description="sagemaker-observability, the HyperPod extension of a Slurm cluster (monitoring.prometheus on "
        "cluster.orchestrator: slurm), MAJOR.MINOR.PATCH; the only key of addonVersions a Slurm spec may set.",
    )
    task_governance: str = Field(
        default="v1.6.0-eksbuild.1",
        description="amazon-sagemaker-hyperpod-taskgovernance (task-governance mode; v1.6.0 bundles Kueue 0.19.2).",
    )
    vpc_cni: Optional[str] = Field(default=None, description="vpc-cni, at least v1.18.3 (default: docs/addons.md's pin for the Kubernetes version).")
    coredns: Optional[str] = Field(default=None, description="coredns (default: docs/addons.md's pin for the Kubernetes version).")
    kube_proxy: Optional[str] = Field(default=None, description="kube-proxy (default: docs/addons.md's pin for the Kubernetes version).")
    pod_identity_agent: Optional[str] = Field(default=None, description="eks-pod-identity-agent (default: docs/addons.md's pin).")
    kueue_chart: str = Field(default="0.19.2", description="Kueue Helm chart version (kueue mode), 0.19.x.")
    # KubeRay 1.6.2: the ray.io/v1 API Kueue 0.19.2's Ray integrations are built against (its go.mod).
    kuberay_chart: str = Field(
        default="1.6.2",
        description="kuberay-operator Helm chart version (cluster.operators: ray), 1.x (ray.io/v1; default: 1.6.2, "
        "the KubeRay Kueue 0.19.2 is built against).",
    )
    # --- cluster.operators (docs/operators.md names the source of each default) ---------------------------
    training_operator: str = Field(
        default="v1.0.1-eksbuild.1",
        description="amazon-sagemaker-hyperpod-training-operator (cluster.operators: training).",
    )
    cert_manager: str = Field(
        default="v1.18.2-eksbuild.2",
        description="cert-manager, the EKS community add-on the HyperPod operators need (at least v1.18.2-eksbuild.2).",
    )
    spaces: str = Field(
        default="v0.2.1-eksbuild.1",
        description="amazon-sagemaker-spaces, HyperPod spaces (cluster.operators: spaces); at least v0.2.0.",
    )
    ebs_csi_driver: Optional[str] = Field(
        default=None,
        description="aws-ebs-csi-driver, the spaces' volumes, at least v1.47.0 (default: docs/addons.md's pin for the "
        "Kubernetes version).",
    )
    # The oldest versions the inference add-on works with (sagemaker-hyperpod-model-deployment-setup.html).
    inference_operator: str = Field(
        default="v1.0.0-eksbuild.1",
        description="amazon-sagemaker-hyperpod-inference (cluster.operators: inference); at least v1.0.0.",
    )
    mountpoint_s3_csi_driver: str = Field(
        default="v1.14.1-eksbuild.1",
        description="aws-mountpoint-s3-csi-driver, model weights from S3 (inference); at least v1.14.1-eksbuild.1.",
    )
    fsx_csi_driver: str = Field(
        default="v1.6.0-eksbuild.1",
        description="aws-fsx-csi-driver, model weights from FSx for Lustre (inference); at least v1.6.0-eksbuild.1.",
    )
    metrics_server: str = Field(
        default="v0.7.2-eksbuild.4",
        description="metrics-server, the EKS community add-on (inference autoscaling); at least v0.7.2-eksbuild.4.",
    )

    @field_validator("cloudwatch_observability", "hyperpod_observability", "task_governance", "vpc_cni", "coredns", "kube_proxy",
                     "pod_identity_agent", "training_operator", "cert_manager", "spaces", "ebs_csi_driver",
                     "inference_operator", "mountpoint_s3_csi_driver", "fsx_csi_driver", "metrics_server")
    @classmethod
    def _format(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not ADDON_VERSION.match(v):
            raise spec_error("is not an EKS add-on version", "write it as EKS lists it, e.g. v1.6.0-eksbuild.1")
        return v

    @field_validator("observability_extension")
    @classmethod
    def _extension(cls, v: str) -> str:
        if not re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", v, re.ASCII):
            raise spec_error("is not a HyperPod extension version",
                             "write MAJOR.MINOR.PATCH as list-cluster-extension-versions lists it, e.g. 1.0.0")
        return v

    @field_validator("cloudwatch_observability")
    @classmethod
    def _observability(cls, v: str) -> str:
        if _version_tuple(v[1:]) < (3, 1, 0):
            raise spec_error(
                "is older than v3.1.0",
                "use v3.1.0 or later: Kueue metrics need v2.4.0 and EKS Pod Identity for the agent v3.1.0",
            )
        return v

    @field_validator("hyperpod_observability")
    @classmethod
    def _hyperpod_observability(cls, v: str) -> str:
        if _version_tuple(v[1:]) < (1, 0, 5):
            raise spec_error("is older than v1.0.5", "use v1.0.5-eksbuild.1 or later (check describe-addon-versions)")
        return v

    @field_validator("vpc_cni")
    @classmethod
    def _cni(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and _version_tuple(v[1:]) < (1, 18, 3):
            raise spec_error("is older than v1.18.3, which HyperPod on EKS needs", "use v1.18.3 or later")
        return v

    @field_validator("cert_manager")
    @classmethod
    def _cert_manager(cls, v: str) -> str:
        if _version_tuple(v[1:]) < (1, 18, 2):
            raise spec_error("is older than v1.18.2, the oldest cert-manager AWS lists for the HyperPod operators",
                             "use v1.18.2-eksbuild.2 or later")
        return v

    @field_validator("spaces")
    @classmethod
    def _spaces(cls, v: str) -> str:
        if _version_tuple(v[1:]) < (0, 2, 0):
            raise spec_error("is older than v0.2.0", "use v0.2.0 or later (e.g. v0.2.1-eksbuild.1)")
        return v

    @field_validator("ebs_csi_driver")
    @classmethod
    def _ebs(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and _version_tuple(v[1:]) < (1, 47, 0):
            raise spec_error("is older than v1.47.0, which volumes on HyperPod nodes need", "use v1.47.0 or later")
        return v

    @field_validator("inference_operator", "mountpoint_s3_csi_driver", "fsx_csi_driver", "metrics_server")
    @classmethod
    def _inference_minimum(cls, v: str, info: Any) -> str:
        oldest = INFERENCE_MINIMUM[info.field_name]
        if _version_tuple(v[1:].split("-")[0]) < _version_tuple(oldest[1:].split("-")[0]):
            raise spec_error(f"is older than {oldest}, the oldest version AWS lists for the HyperPod inference add-on",
                             f"use {oldest} or later")
        return v

    @field_validator("kuberay_chart")
    @classmethod
    def _kuberay(cls, v: str) -> str:
        if not re.fullmatch(r"1\.\d+\.\d+", v, re.ASCII):
            raise spec_error("is not a KubeRay 1.x chart version", "use 1.6.2 (the Ray kinds are ray.io/v1)")
        return v

    @field_validator("kueue_chart")
    @classmethod
    def _kueue(cls, v: str) -> str:
        if not re.fullmatch(r"0\.19\.\d+", v, re.ASCII):
            raise spec_error("is not a Kueue 0.19.x chart version", "use 0.19.2 (the Kueue objects are v1beta2)")
        return v
