"""A HyperPod cluster that runs already (cluster.existing): hyperpod-gov governs it and creates no capacity."""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, ValidationInfo, field_validator

from ._base import SpecModel, spec_error
from .addons import Operator
from .network import SECURITY_GROUP_ID, SUBNET_ID, VPC_ID


HYPERPOD_CLUSTER_ARN = re.compile(
    r"\Aarn:(aws[a-z-]*):sagemaker:([a-z]{2}(?:-[a-z]+)+-[0-9]):([0-9]{12}):cluster/([a-z0-9]{12})\Z", re.ASCII)
EKS_CLUSTER_NAME = re.compile(r"\A[0-9A-Za-z][A-Za-z0-9_-]{0,99}\Z", re.ASCII)


class Installs(SpecModel):
    """What hyperpod-gov installs on an existing cluster; everything else is assumed to run there already."""

    scheduler: bool = Field(
        default=False,
        description="Install the scheduler of scheduler.mode: the task-governance add-on (task-governance) or the "
        "Kueue Helm chart (kueue). Default: false, the cluster runs it already.",
    )
    observability: bool = Field(
        default=False,
        description="Install the CloudWatch Observability add-on (with its agent's Pod Identity role). Default: "
        "false, the cluster runs it already (or goes without the dashboards' Kueue and node metrics).",
    )


# The words of a written reason (as an acknowledgement's): "ok" or "n/a" tells a reviewer nothing.
MIN_ENFORCEMENT_REASON = 10


class NetworkPolicyEnforcement(SpecModel):
    """What enforces the teams' NetworkPolicies on the existing cluster (they are emitted, default-deny, either way).

    Kubernetes stores a NetworkPolicy whether or not anything enforces it; on EKS the VPC CNI enforces them only
    with its add-on configured so (``enableNetworkPolicy``, off by default), and hyperpod-gov does not configure the
    add-ons of a cluster it did not create. Until the spec says which enforcer runs, validate warns (HPG-E006)."""

    enforcer: Literal["vpc-cni", "other"] = Field(
        description="vpc-cni: the EKS add-on vpc-cni with configurationValues enableNetworkPolicy \"true\" and "
        "env.NETWORK_POLICY_ENFORCING_MODE strict (a new pod is isolated until its policies apply); `hyperpod-gov "
        "preflight` reads the add-on and asks for a fix otherwise. other: another network plugin enforces them "
        "(e.g. Cilium or Calico), which preflight cannot check: give the reason.",
    )
    reason: Optional[str] = Field(
        default=None, validate_default=True,
        description=f"With enforcer: other (required there, at least {MIN_ENFORCEMENT_REASON} characters): what "
        "enforces the NetworkPolicies and how that was checked, e.g. \"Cilium 1.16 (kube-system); the platform "
        "team's default-deny test passes\". Refused with vpc-cni, which preflight checks instead.",
    )

    @field_validator("reason")
    @classmethod
    def _reason(cls, v: Optional[str], info: ValidationInfo) -> Optional[str]:
        enforcer = info.data.get("enforcer")
        if enforcer == "vpc-cni" and v is not None:
            raise spec_error("is only read with enforcer: other (with vpc-cni, preflight checks the add-on)",
                             "remove reason, or set enforcer: other if another plugin enforces the policies")
        if enforcer == "other" and (v is None or len(v.strip()) < MIN_ENFORCEMENT_REASON):
            what = "is missing" if v is None else f"is shorter than {MIN_ENFORCEMENT_REASON} characters"
            raise spec_error(f"{what}: with enforcer: other nothing checks that the teams' NetworkPolicies are "
                             "enforced",
                             "say what enforces them and how that was checked, e.g. reason: \"Cilium 1.16 "
                             "(kube-system); the platform team's default-deny test passes\"")
        return v


class Existing(SpecModel):
    """A HyperPod cluster (EKS-orchestrated) that runs already: hyperpod-gov governs it and creates no capacity.

    With ``existing``, ``kubernetesVersion`` and ``instanceGroups`` describe the cluster as it runs (validation and
    the quota checks use them) and ``vpc.cidr`` is the existing VPC's CIDR (the teams' NetworkPolicies allow HTTPS
    to it); keys that only shape a cluster hyperpod-gov creates are refused (rule HPG-D004)."""

    hyper_pod_cluster_arn: str = Field(
        description="ARN of the HyperPod cluster, arn:aws:sagemaker:REGION:ACCOUNT:cluster/ID, in the capacity "
        "account and region; the cluster policy and the quotas apply to it."
    )
    eks_cluster_name: str = Field(description="Name of the EKS cluster that orchestrates it.")
    vpc_id: str = Field(description="The EKS cluster's VPC, vpc-...")
    subnet_ids: tuple[str, ...] = Field(
        min_length=1, max_length=16,
        description="Private subnets of that VPC that reach the EKS API; the kubectl handler runs in them.",
    )
    security_group_id: str = Field(
        description="Security group of the kubectl handler: the cluster's security group must let it reach the "
        "API on 443 (e.g. the EKS cluster security group itself)."
    )
    installs: Installs = Field(
        default_factory=Installs,
        description="What hyperpod-gov installs (default: nothing; the scheduler and observability run already).",
    )
    network_policy_enforcement: Optional[NetworkPolicyEnforcement] = Field(
        default=None,
        description="What enforces the teams' NetworkPolicies there, {enforcer: vpc-cni} or {enforcer: other, "
        "reason: ...}. Default: not stated, and validate warns (HPG-E006): the policies are emitted but may be "
        "enforced by nothing (the vpc-cni add-on's enableNetworkPolicy is off by default).",
    )
    operators: tuple[Operator, ...] = Field(
        default=(),
        description="HyperPod operators that run on the cluster already, installed outside hyperpod-gov (the "
        "SageMaker console's quick install, `aws eks create-addon`, `helm install`): training, inference, spaces, "
        "ray. Teams may be approved for the workloads they run (HPG-D009); hyperpod-gov installs none of them "
        "(cluster.operators lists what it installs). Default: none stated.",
    )
    self_managed_kueue: bool = Field(
        default=False,
        description="Kueue installed outside the task-governance add-on (Helm chart, manifests) runs on the "
        "cluster. Default: false. In task-governance mode the add-on cannot be installed next to it (HPG-Q006).",
    )

    @field_validator("operators")
    @classmethod
    def _operators(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(v)) != len(v):
            raise spec_error("names an operator twice", "list each operator once")
        return v

    @field_validator("hyper_pod_cluster_arn")
    @classmethod
    def _arn(cls, v: str) -> str:
        if not HYPERPOD_CLUSTER_ARN.match(v):
            raise spec_error("is not a HyperPod cluster ARN",
                             "copy ClusterArn from `aws sagemaker describe-cluster --cluster-name NAME`, e.g. "
                             "arn:aws:sagemaker:us-west-2:111111111111:cluster/abcd1234efgh")
        return v

    @field_validator("eks_cluster_name")
    @classmethod
    def _eks(cls, v: str) -> str:
        if not EKS_CLUSTER_NAME.match(v):
            raise spec_error("is not an EKS cluster name",
                             "use 1 to 100 letters, digits, '-' and '_', starting with a letter or digit (the "
                             "name in `aws eks list-clusters`)")
        return v

    @field_validator("vpc_id")
    @classmethod
    def _vpc(cls, v: str) -> str:
        if not VPC_ID.match(v):
            raise spec_error("is not a VPC id", "write it as EC2 shows it, e.g. vpc-0123456789abcdef0")
        return v

    @field_validator("subnet_ids")
    @classmethod
    def _subnets(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for s in v:
            if not SUBNET_ID.match(s):
                raise spec_error(f"{s!r} is not a subnet id", "write it as EC2 shows it, e.g. subnet-0123456789abcdef0")
        if len(set(v)) != len(v):
            raise spec_error("names a subnet twice", "list each subnet once")
        return v

    @field_validator("security_group_id")
    @classmethod
    def _sg(cls, v: str) -> str:
        if not SECURITY_GROUP_ID.match(v):
            raise spec_error("is not a security group id", "write it as EC2 shows it, e.g. sg-0123456789abcdef0")
        return v

    @property
    def arn_parts(self) -> tuple[str, str, str]:
        """(partition, region, account) of the HyperPod cluster ARN."""
        m = HYPERPOD_CLUSTER_ARN.match(self.hyper_pod_cluster_arn)
        assert m is not None  # validated above
        return m.group(1), m.group(2), m.group(3)

