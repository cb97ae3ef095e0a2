"""The HyperPod cluster and the EKS cluster that orchestrates it.

Its parts live beside it: the VPC and API access in ``network``, instance groups in ``instance_groups``, add-ons
and Helm charts in ``addons``, governance-only mode in ``existing``; the names other modules import from here are
re-exported.
"""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator

from ._base import SpecModel, check_label, spec_error
from .addons import (ADDON_VERSION, INFERENCE_NOT_PROVISIONED, TRAINING_OPERATOR_KUBERNETES, AddonVersions, HelmChart,
                     HelmSource, Operator)
from .existing import Existing
from .instance_groups import DEDICATED_KEY, MIG_LABEL, DeepHealthCheck, InstanceGroup
from .network import ApiAccess, Vpc
from .shared_storage import SharedStorage
from .slurm import ClusterSlurm
from .types import KUBERNETES_VERSIONS, MIN_KUBERNETES, AdminCidr, IamPrincipal

__all__ = [
    "ADDON_VERSION", "DEDICATED_KEY", "INFERENCE_NOT_PROVISIONED", "MIG_LABEL", "TRAINING_OPERATOR_KUBERNETES",
    "AddonVersions", "ApiAccess", "Cluster", "DeepHealthCheck", "Existing", "HelmChart", "HelmSource", "InstanceGroup",
    "Operator", "Vpc",
]


# A repository name, or a name prefix ending in '/' (the CreateRepository pattern, segment by segment).
ECR_REPOSITORY_PREFIX = re.compile(r"\A(?=.{2,256}\Z)(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*(?:[a-z0-9]+(?:[._-][a-z0-9]+)*)?\Z",
                                   re.ASCII)
ECR_REPOSITORY_ARN = re.compile(r"\Aarn:aws[a-z-]*:ecr:[a-z0-9-]+:[0-9]{12}:repository/(?=.{2,256}\Z)"
                                r"(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*\Z", re.ASCII)


class Cluster(SpecModel):
    """The HyperPod cluster and the EKS cluster that orchestrates it."""

    name: str = Field(description="HyperPod cluster name; the EKS cluster is named <name>-eks (with existing: the "
                      "existing cluster's name).")
    orchestrator: Literal["eks", "slurm"] = Field(
        default="eks",
        description="What schedules the cluster's work: eks (default; HyperPod task governance or Kueue on an EKS "
        "cluster) or slurm (slurmctld on a Controller group; the teams become Slurm accounts, QOS and partitions, "
        "see docs/slurm.md).",
    )
    slurm: Optional[ClusterSlurm] = Field(
        default=None,
        description="With orchestrator: slurm: {configStrategy: Managed | Overwrite | Merge, accountingDatabase: "
        "{endpoint, secretArn, name, port}} (Orchestrator.Slurm). Default: Managed, the controller's own "
        "accounting database.",
    )
    existing: Optional[Existing] = Field(
        default=None,
        description="Govern a HyperPod cluster that runs already (governance-only mode): no VPC, EKS cluster, "
        "HyperPod cluster or lifecycle bucket is created. Default: none, hyperpod-gov creates the cluster.",
    )
    kubernetes_version: str = Field(
        default="1.33", description="EKS Kubernetes version, at least 1.30 (task governance needs it). Quote it."
    )
    endpoint_access: Literal["private", "public-and-private"] = Field(
        default="private", description="EKS API endpoint access (default: private, reachable only in the VPC)."
    )
    admin_cidrs: tuple[AdminCidr, ...] = Field(
        default=(), description="CIDRs allowed to the public endpoint; only with public-and-private."
    )
    api_access: ApiAccess = Field(
        default_factory=ApiAccess,
        description="Networks admitted to the private API endpoint on TCP 443 (a VPN, a peered VPC, an admin "
        "subnet): {cidrs, securityGroupIds, prefixListIds}, each entry with a description. Default: none, only the "
        "cluster's nodes and the kubectl handler reach it. The public endpoint (public-and-private) stays limited "
        "to adminCidrs.",
    )
    vpc: Vpc = Field(default_factory=Vpc, description="The VPC (default: 10.192.0.0/16 over 2 AZs).")
    authentication_mode: Literal["API", "API_AND_CONFIG_MAP"] = Field(
        default="API",
        description="How EKS authenticates IAM principals. API (default): access entries only. API_AND_CONFIG_MAP "
        "also honours the aws-auth ConfigMap, a second way in that anyone who may edit it can use; only for "
        "tools that still need it.",
    )
    admins: tuple[IamPrincipal, ...] = Field(
        default=(), description="IAM role or user ARNs given cluster-admin access entries (default: none)."
    )
    viewers: tuple[IamPrincipal, ...] = Field(
        default=(),
        description="IAM role or user ARNs that see every team's work without acting on it (console dashboards, "
        "SageMaker Studio users who only view): an access entry onto a group bound to a read-only ClusterRole "
        "(task-governance state, jobs, pods, events; no logs, Secrets or writes). Default: none, team members see "
        "their own namespaces only.",
    )
    member_cluster_reads: bool = Field(
        default=True,
        description="Give every team's viewers and submitters the cluster-wide reads the HyperPod CLI and the "
        "Studio UI need to render (namespaces and nodes get/list, CRDs get, Kueue resource flavors and priority "
        "classes). Default: true; false leaves them only their namespaces' Roles (hyp namespace discovery and "
        "list-cluster then fail).",
    )
    instance_groups: tuple[InstanceGroup, ...] = Field(
        min_length=1, description="HyperPod instance groups; their capacity bounds every quota."
    )
    addon_versions: AddonVersions = Field(
        default_factory=AddonVersions, description="Pinned EKS add-on and Kueue chart versions."
    )
    dependencies_chart: Optional[HelmChart] = Field(
        default=None,
        description="Where the HyperPod dependencies Helm chart (health-monitoring agent etc.) comes from. "
        "Default: not installed, and synth warns (HyperPod node health checks need it).",
    )
    node_recovery: Literal["Automatic", "None"] = Field(
        default="Automatic",
        description="Automatic (default): HyperPod replaces or reboots a faulty node. None: it only labels the "
        "node. Cluster-wide: the service has no per-group setting.",
    )
    operators: tuple[Operator, ...] = Field(
        default=("training",),
        description="HyperPod operators installed once the nodes run: training (the HyperPod "
        "training operator, HyperPodPyTorchJob), inference (the HyperPod inference operator) and spaces "
        "(JupyterLab and Code Editor spaces) as EKS add-ons, and ray (the KubeRay operator, from its Helm chart). "
        "Default: [training]. With cluster.existing the governance stack "
        "installs the ones this key lists, and none when the key is left out (the cluster runs its own). See "
        "docs/operators.md.",
    )
    auto_scaling: Optional[Literal["karpenter"]] = Field(
        default=None,
        description="karpenter: HyperPod-managed Karpenter scales the groups between minCount and count "
        "(AutoScaling {Mode: Enable, AutoScalerType: Karpenter}, a ClusterRole, and per group a HyperpodNodeClass "
        "and a NodePool); needs nodeProvisioningMode: Continuous and nodeRecovery: Automatic. Default: none, every "
        "group runs its count.",
    )
    node_provisioning_mode: Optional[Literal["Continuous"]] = Field(
        default=None,
        description="Continuous: HyperPod keeps provisioning a group's missing instances instead of failing the "
        "whole operation (default: the service's standard provisioning).",
    )
    image_registries: Optional[tuple[str, ...]] = Field(
        default=None,
        min_length=1,
        description="ECR repositories of the spec's accounts the nodes may pull images from: repository ARNs, "
        "names of the capacity account's repositories (team-a/trainer), or name prefixes ending in '/' (team-a/). "
        "Repositories of other accounts (the AWS-owned registries of the EKS add-ons and HyperPod agents) stay "
        "reachable. Default: every repository of the region, as before.",
    )

    @field_validator("image_registries")
    @classmethod
    def _registries(cls, v: Optional[tuple[str, ...]]) -> Optional[tuple[str, ...]]:
        for entry in v or ():
            if entry.startswith("arn:"):
                if not ECR_REPOSITORY_ARN.match(entry):
                    raise spec_error(f"{entry!r} is not an ECR repository ARN",
                                     "use arn:aws:ecr:REGION:ACCOUNT:repository/NAME, or a name prefix like team-a/")
            elif not ECR_REPOSITORY_PREFIX.match(entry):
                raise spec_error(f"{entry!r} is not an ECR repository name or name prefix",
                                 "use lowercase segments joined by '/', e.g. team-a/trainer, or team-a/ for a prefix")
        return v
    shared_storage: Optional[SharedStorage] = Field(
        default=None,
        description="File systems the teams share, each team in its own directory: {fsxLustre: {...}} (default: "
        "none).",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="cluster name", max_len=59)

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version(cls, v: object) -> object:
        if isinstance(v, float):
            # YAML drops a trailing zero (1.30 -> 1.3): the version meant is the supported one it abbreviates.
            meant = next((k for k in KUBERNETES_VERSIONS if float(k) == v and k != str(v)), str(v))
            raise spec_error(
                f"is a number, and YAML reads {meant} as {v}",
                f"quote the version, e.g. kubernetesVersion: \"{meant}\"",
            )
        if isinstance(v, str):
            m = re.fullmatch(r"1\.(\d+)", v, re.ASCII)
            if not m:
                raise spec_error("is not a Kubernetes minor version", 'write it as "1.33"')
            if (1, int(m.group(1))) < MIN_KUBERNETES:
                raise spec_error(
                    "is older than 1.30, which HyperPod task governance needs",
                    'use "1.30" or later (e.g. "1.33")',
                )
            if v not in KUBERNETES_VERSIONS:
                raise spec_error(
                    "has no kubectl layer in this release of hyperpod-gov (the kubectl handler must match the cluster)",
                    f"use one of {', '.join(KUBERNETES_VERSIONS)}",
                )
        return v

    @property
    def eks_cluster_name(self) -> str:
        return self.existing.eks_cluster_name if self.existing else f"{self.name}-eks"

    @property
    def capacity(self) -> dict[str, int]:
        """The most instances of each instance type the groups can hold, sorted by type: a flexible group counts
        under each of its types (``plan.elastic`` splits this into guaranteed, elastic and interruptible)."""
        out: dict[str, int] = {}
        for group in self.instance_groups:  # a flexible group may run all its instances as any of its types
            for itype in group.types:
                out[itype] = out.get(itype, 0) + group.count
        return dict(sorted(out.items()))
