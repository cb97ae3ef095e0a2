"""The governance spec: one frozen pydantic model per concept (see DESIGN.md)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Literal, Optional

from pydantic import AfterValidator, Field, field_validator, model_validator

from .. import catalog
from ._base import (
    EMAIL,
    IAM_PRINCIPAL_ARN,
    IAM_ROLE_ARN,
    SpecModel,
    check_account_id,
    check_ipv4_cidr,
    check_label,
    check_region,
    spec_error,
)

MAX_NAME = 40  # team and priority-class names (HyperPod TeamName pattern allows 40)
MAX_PREFIX = 20  # spec.name prefixes IAM role and bucket names, which have tight limits
MIN_KUBERNETES = (1, 30)
DEFAULT_BORROW_LIMIT_PERCENT = 50


def _check_principal(arn: str) -> str:
    if not IAM_PRINCIPAL_ARN.match(arn):
        raise spec_error(
            "is not an IAM role or user ARN",
            "use arn:aws:iam::ACCOUNT:role/NAME (a group or a wildcard cannot be mapped to Kubernetes)",
        )
    return arn


IamPrincipal = Annotated[str, AfterValidator(_check_principal)]
InstanceTypeName = Annotated[str, AfterValidator(lambda v: _check_instance_type(v))]
AccountId = Annotated[str, AfterValidator(check_account_id)]
Region = Annotated[str, AfterValidator(check_region)]
AdminCidr = Annotated[str, AfterValidator(lambda v: check_ipv4_cidr(v, allow_any=False))]
Port = Annotated[int, Field(ge=1, le=65535)]


def _check_instance_type(value: str) -> str:
    if value not in catalog.CATALOG:
        family = value.rsplit(".", 1)[0]
        near = [t for t in catalog.known_types() if t.startswith(family + ".")]
        hint = ", ".join(near) if near else "see hyperpod_gov/catalog.py for the supported types"
        raise spec_error("is not a HyperPod instance type this library knows", f"use one of: {hint}")
    return value


class Account(SpecModel):
    """The capacity account: where the cluster, its accelerators and its governance live."""

    id: AccountId = Field(description="12-digit AWS account id (quote it in YAML).")
    region: Region = Field(description="AWS region code, e.g. us-east-1.")


class ConsumerAccount(Account):
    """An account whose roles tenant workloads assume through EKS Pod Identity."""

    name: str = Field(description="Short DNS-1123 name of the account, used in stack names.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="consumer account name", max_len=MAX_NAME)


class Accounts(SpecModel):
    """The AWS accounts the spec deploys to."""

    capacity: Account = Field(description="The account and region that hold the HyperPod cluster.")
    consumers: tuple[ConsumerAccount, ...] = Field(
        default=(),
        description="Accounts holding data that workloads reach cross-account (default: none).",
    )


class Vpc(SpecModel):
    """The cluster's VPC."""

    availability_zones: tuple[str, ...] = Field(
        default=(),
        description="AZ names for the subnets (default: the region's a, b, c... up to maxAzs). Given explicitly, "
        "synth needs no AWS lookup.",
    )

    cidr: str = Field(default="10.192.0.0/16", description="IPv4 CIDR of the VPC (default: 10.192.0.0/16).")
    max_azs: int = Field(
        default=2, ge=2, le=6, description="Availability zones with private subnets (default: 2; EKS needs 2)."
    )

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        check_ipv4_cidr(v, allow_any=False)
        prefix = int(v.split("/")[1])
        if not 16 <= prefix <= 24:
            raise spec_error(
                f"a /{prefix} VPC is outside what a HyperPod cluster can use",
                "use a prefix between /16 and /24 (HyperPod nodes take many IPs; /16 is usual)",
            )
        return v


class InstanceGroup(SpecModel):
    """One HyperPod instance group: identical instances of one type."""

    name: str = Field(description="Instance group name (DNS-1123 label, at most 63 characters).")
    instance_type: InstanceTypeName = Field(description="HyperPod instance type, e.g. ml.p5.48xlarge.")
    count: int = Field(ge=0, le=5000, description="Number of instances in the group.")
    volume_size_gb: Optional[int] = Field(
        default=None,
        ge=1,
        le=16384,
        description="Extra EBS volume per instance in GB (default: none beyond the root volume).",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="instance group name", max_len=63)


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

    @property
    def source(self) -> HelmSource:
        return "repository" if self.repository else "oci" if self.oci else "directory"


def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v.split("-")[0]))


ADDON_VERSION = re.compile(r"^v\d+\.\d+\.\d+-eksbuild\.\d+$")


class AddonVersions(SpecModel):
    """Pinned EKS add-on versions. Check what a region offers with `aws eks describe-addon-versions`."""

    cloudwatch_observability: str = Field(
        default="v4.1.0-eksbuild.1",
        description="amazon-cloudwatch-observability; at least v3.1.0 (Kueue metrics need v2.4.0, Pod Identity v3.1.0).",
    )
    task_governance: str = Field(
        default="v1.6.0-eksbuild.1",
        description="amazon-sagemaker-hyperpod-taskgovernance (task-governance mode; v1.6.0 bundles Kueue 0.19.2).",
    )
    vpc_cni: Optional[str] = Field(default=None, description="vpc-cni (default: EKS's default, >= 1.18.3 on 1.30+).")
    coredns: Optional[str] = Field(default=None, description="coredns (default: EKS's default for the version).")
    kube_proxy: Optional[str] = Field(default=None, description="kube-proxy (default: EKS's default).")
    pod_identity_agent: Optional[str] = Field(default=None, description="eks-pod-identity-agent (default: EKS's).")
    kueue_chart: str = Field(default="0.19.2", description="Kueue Helm chart version (kueue mode), 0.19.x.")

    @field_validator("cloudwatch_observability", "task_governance", "vpc_cni", "coredns", "kube_proxy",
                     "pod_identity_agent")
    @classmethod
    def _format(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not ADDON_VERSION.match(v):
            raise spec_error("is not an EKS add-on version", "write it as EKS lists it, e.g. v1.6.0-eksbuild.1")
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

    @field_validator("vpc_cni")
    @classmethod
    def _cni(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and _version_tuple(v[1:]) < (1, 18, 3):
            raise spec_error("is older than v1.18.3, which HyperPod on EKS needs", "use v1.18.3 or later")
        return v

    @field_validator("kueue_chart")
    @classmethod
    def _kueue(cls, v: str) -> str:
        if not re.fullmatch(r"0\.19\.\d+", v):
            raise spec_error("is not a Kueue 0.19.x chart version", "use 0.19.2 (the Kueue objects are v1beta2)")
        return v


class Cluster(SpecModel):
    """The HyperPod cluster and the EKS cluster that orchestrates it."""

    name: str = Field(description="HyperPod cluster name; the EKS cluster is named <name>-eks.")
    kubernetes_version: str = Field(
        default="1.33", description="EKS Kubernetes version, at least 1.30 (task governance needs it). Quote it."
    )
    endpoint_access: Literal["private", "public-and-private"] = Field(
        default="private", description="EKS API endpoint access (default: private, reachable only in the VPC)."
    )
    admin_cidrs: tuple[AdminCidr, ...] = Field(
        default=(), description="CIDRs allowed to the public endpoint; only with public-and-private."
    )
    vpc: Vpc = Field(default_factory=Vpc, description="The VPC (default: 10.192.0.0/16 over 2 AZs).")
    admins: tuple[IamPrincipal, ...] = Field(
        default=(), description="IAM role or user ARNs given cluster-admin access entries (default: none)."
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

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="cluster name", max_len=59)

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version(cls, v: object) -> object:
        if isinstance(v, float):
            raise spec_error(
                "is a number, and YAML reads 1.30 as 1.3",
                f"quote the version, e.g. kubernetesVersion: \"{v}\"",
            )
        if isinstance(v, str):
            m = re.fullmatch(r"1\.(\d+)", v)
            if not m:
                raise spec_error("is not a Kubernetes minor version", 'write it as "1.33"')
            if (1, int(m.group(1))) < MIN_KUBERNETES:
                raise spec_error(
                    "is older than 1.30, which HyperPod task governance needs",
                    'use "1.30" or later (e.g. "1.33")',
                )
        return v

    @property
    def eks_cluster_name(self) -> str:
        return f"{self.name}-eks"

    @property
    def capacity(self) -> dict[str, int]:
        """Instances per instance type across all instance groups, sorted by type."""
        out: dict[str, int] = {}
        for group in self.instance_groups:
            out[group.instance_type] = out.get(group.instance_type, 0) + group.count
        return dict(sorted(out.items()))


class PriorityClass(SpecModel):
    """A class of work; higher weight goes first and may preempt lower."""

    name: str = Field(description="DNS-1123 label, at most 40 characters.")
    weight: int = Field(ge=0, le=100, description="0..100, 100 is the highest priority.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="priority class name", max_len=MAX_NAME)


class Scheduler(SpecModel):
    """How the cluster schedules and shares work."""

    mode: Literal["task-governance", "kueue"] = Field(
        default="task-governance",
        description="task-governance (default): the managed HyperPod feature; kueue: open-source Kueue objects.",
    )
    idle_compute: Literal["fair-share", "first-come-first-serve"] = Field(
        default="fair-share",
        description="How idle capacity is handed out (default: fair-share, by fairShareWeight).",
    )
    priority_classes: tuple[PriorityClass, ...] = Field(
        default=(),
        max_length=10,
        description="At most 10. Work without a class has priority 0, the lowest (default: none).",
    )


class QuotaEntry(SpecModel):
    """Capacity a team owns on one instance type: whole instances or accelerators."""

    instance_type: InstanceTypeName = Field(description="Instance type of an instance group.")
    count: Optional[int] = Field(default=None, ge=1, description="Whole instances owned.")
    accelerators: Optional[int] = Field(default=None, ge=1, description="Accelerators (GPUs, Neuron devices) owned.")

    @model_validator(mode="after")
    def _one_amount(self) -> "QuotaEntry":
        if (self.count is None) == (self.accelerators is None):
            raise spec_error(
                "needs exactly one of count and accelerators",
                "write count: N for whole instances or accelerators: N for GPUs/Neuron devices",
            )
        return self


class Sharing(SpecModel):
    """Whether a team lends its idle capacity and borrows others'."""

    strategy: Literal["Lend", "DontLend", "LendAndBorrow"] = Field(
        default="LendAndBorrow",
        description="Lend: lends idle capacity, never borrows. DontLend: neither. "
        "LendAndBorrow (default): both, up to borrowLimitPercent.",
    )
    borrow_limit_percent: Optional[int] = Field(
        default=None,
        description="Only with LendAndBorrow: the most a team may borrow, as a percentage of what it owns, "
        f"1..500 (default: {DEFAULT_BORROW_LIMIT_PERCENT}, HyperPod's own default).",
    )

    @property
    def effective_borrow_limit_percent(self) -> int:
        """The percentage of owned capacity this team may borrow on top (0 when it cannot borrow)."""
        if self.strategy != "LendAndBorrow":
            return 0
        return DEFAULT_BORROW_LIMIT_PERCENT if self.borrow_limit_percent is None else self.borrow_limit_percent


class Access(SpecModel):
    """Who may see the team's work and who may act on it."""

    viewers: tuple[IamPrincipal, ...] = Field(
        default=(), description="IAM role/user ARNs that may view the team's work."
    )
    submitters: tuple[IamPrincipal, ...] = Field(
        default=(), description="IAM role/user ARNs that may submit, change and delete the team's jobs (and view)."
    )


class S3Access(SpecModel):
    """Access to one S3 prefix."""

    bucket: str = Field(description="Bucket name.")
    prefix: str = Field(default="", description="Key prefix, e.g. datasets/ (default: the whole bucket).")
    access: Literal["read", "read-write"] = Field(default="read", description="default: read.")

    @field_validator("bucket")
    @classmethod
    def _bucket(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", v):
            raise spec_error("is not an S3 bucket name", "use 3-63 lowercase letters, digits, '.' and '-'")
        return v

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, v: str) -> str:
        if "*" in v or v.startswith("/"):
            raise spec_error("may not contain '*' or start with '/'", "write the literal prefix, e.g. datasets/")
        return v


KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[0-9a-f-]{36}$")


class TargetRole(SpecModel):
    """A role the library creates in a consumer account for one workload identity."""

    account: str = Field(description="Name of a declared consumer account (accounts.consumers[].name).")
    name: str = Field(description="Role name in that account (IAM role name rules, at most 64 characters).")
    s3: tuple[S3Access, ...] = Field(default=(), description="S3 prefixes the role may read or write.")
    kms_keys: tuple[str, ...] = Field(default=(), description="KMS key ARNs the role may decrypt with.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.fullmatch(r"[\w+=,.@-]{1,64}", v):
            raise spec_error("is not an IAM role name", "use at most 64 letters, digits and +=,.@_-")
        return v

    @field_validator("kms_keys")
    @classmethod
    def _keys(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for arn in v:
            if not KMS_KEY_ARN.match(arn):
                raise spec_error(f"{arn!r} is not a KMS key ARN", "use arn:aws:kms:REGION:ACCOUNT:key/KEY-ID")
        return v


class WorkloadIdentity(SpecModel):
    """A Kubernetes service account whose pods get AWS credentials through EKS Pod Identity."""

    service_account: str = Field(description="ServiceAccount name in the team namespace (DNS-1123 label).")
    target_role_arn: Optional[str] = Field(
        default=None,
        description="An existing role in a declared consumer account to assume cross-account (default: none).",
    )
    target_role: Optional[TargetRole] = Field(
        default=None,
        description="A role for the library to create in a consumer account, with only the data access named here "
        "(instead of targetRoleArn).",
    )

    @field_validator("service_account")
    @classmethod
    def _sa(cls, v: str) -> str:
        return check_label(v, what="service account name", max_len=63)

    @field_validator("target_role_arn")
    @classmethod
    def _role(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not IAM_ROLE_ARN.match(v):
            raise spec_error("is not an IAM role ARN", "use arn:aws:iam::ACCOUNT:role/NAME")
        return v

    @model_validator(mode="after")
    def _one_target(self) -> "WorkloadIdentity":
        if self.target_role_arn and self.target_role:
            raise spec_error(
                "names both targetRoleArn and targetRole",
                "use targetRoleArn for an existing role, or targetRole for one the library creates, not both",
            )
        return self

    @property
    def target_account(self) -> Optional[str]:
        """Account id of an existing target role (``targetRoleArn``)."""
        m = IAM_ROLE_ARN.match(self.target_role_arn or "")
        return m.group(1) if m else None


class EgressRule(SpecModel):
    """An extra egress allow on top of the team's default-deny policy."""

    cidr: str = Field(description="Destination IPv4 CIDR.")
    ports: tuple[Port, ...] = Field(min_length=1, description="Destination ports (1..65535).")
    protocol: Literal["TCP", "UDP"] = Field(default="TCP", description="Protocol (default: TCP).")

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        return check_ipv4_cidr(v, allow_any=True)


class Contract(SpecModel):
    """The connection contract: who answers for the team's use of the cluster."""

    business_owner: str = Field(description="Email of the business owner.")
    operations_owner: str = Field(description="Email of the person who runs the team's workloads.")
    cost_owner: str = Field(description="Email of the person who pays.")
    data_classification: Literal["public", "internal", "confidential", "restricted"] = Field(
        description="Most sensitive data the team's workloads handle."
    )
    approved_workloads: tuple[str, ...] = Field(
        default=(), description="Kinds of work approved, e.g. training, fine-tuning, inference."
    )
    review_by: dt.date = Field(description="Date by which the contract must be reviewed (YYYY-MM-DD).")

    @field_validator("business_owner", "operations_owner", "cost_owner")
    @classmethod
    def _email(cls, v: str) -> str:
        if not EMAIL.match(v):
            raise spec_error("is not an email address", "use an address such as owner@example.com")
        return v


class Team(SpecModel):
    """A tenant of the cluster: its capacity, sharing policy, people and workloads."""

    name: str = Field(description="DNS-1123 label, at most 40 characters; namespace hyperpod-ns-<name>.")
    fair_share_weight: int = Field(
        default=100, ge=0, le=100, description="0..100; share of idle capacity (default: 100)."
    )
    quota: tuple[QuotaEntry, ...] = Field(
        default=(), max_length=15, description="Capacity the team owns, per instance type (at most 15 entries)."
    )
    sharing: Sharing = Field(
        default_factory=Sharing, description="Lending and borrowing (default: LendAndBorrow, 50%)."
    )
    preempt_team_tasks: Literal["LowerPriority", "Never"] = Field(
        default="LowerPriority",
        description="default: LowerPriority, a team's own urgent work may preempt its own lower-priority work.",
    )
    access: Access = Field(default_factory=Access, description="Who may view and who may submit (default: nobody).")
    workload_identities: tuple[WorkloadIdentity, ...] = Field(
        default=(), description="Service accounts with AWS credentials (default: none)."
    )
    egress: tuple[EgressRule, ...] = Field(default=(), description="Extra egress allows (default: none).")
    contract: Optional[Contract] = Field(default=None, description="Owners and review date (recommended).")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="team name", max_len=MAX_NAME)

    @property
    def namespace(self) -> str:
        return f"hyperpod-ns-{self.name}"


class SharedPool(SpecModel):
    """A pseudo-team that holds the capacity no team owns: capacity minus the sum of quotas."""

    name: str = Field(default="shared", description="Team name of the pool (default: shared).")
    strategy: Literal["Lend", "LendAndBorrow"] = Field(
        default="Lend", description="default: Lend, the pool lends everything and never borrows."
    )
    fair_share_weight: int = Field(default=0, ge=0, le=100, description="default: 0, the pool borrows last.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="shared pool name", max_len=MAX_NAME)


DEFAULT_TEAM_STACKS = 16


class Pipeline(SpecModel):
    """The CDK pipeline that ships the spec (values may also come from CDK context)."""

    repository: Optional[str] = Field(default=None, description="owner/repo of the spec repository "
                                      "(default: CDK context pipelineRepository).")
    branch: str = Field(default="main", description="Branch that deploys (default: main).")
    connection_arn: Optional[str] = Field(default=None, description="CodeConnections ARN for the repository "
                                          "(default: CDK context pipelineConnectionArn).")
    account: Optional[AccountId] = Field(default=None,
                                         description="Account of the pipeline (default: the capacity account).")
    region: Optional[Region] = Field(default=None, description="Region of the pipeline (default: the capacity region).")

    @field_validator("repository")
    @classmethod
    def _repo(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not re.fullmatch(r"[\w.-]+/[\w.-]+", v):
            raise spec_error("is not owner/repo", "write the repository as owner/name, e.g. acme/ml-governance")
        return v

    @field_validator("connection_arn")
    @classmethod
    def _connection(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not re.fullmatch(
            r"arn:aws[a-z-]*:(codeconnections|codestar-connections):[a-z0-9-]+:[0-9]{12}:connection/[\w-]+", v
        ):
            raise spec_error("is not a CodeConnections ARN",
                             "use arn:aws:codeconnections:REGION:ACCOUNT:connection/ID")
        return v


class Deployment(SpecModel):
    """How the generated resources are split into stacks and shipped."""

    team_stacks: int = Field(
        default=DEFAULT_TEAM_STACKS,
        ge=1,
        le=100,
        description="Stacks that per-team resources are spread over by a hash of the team name (default: 16, "
        "enough for 300+ teams under CloudFormation's 500-resource limit). Changing it moves teams between "
        "stacks: set it once.",
    )
    pipeline: Optional[Pipeline] = Field(default=None, description="The multi-account CDK pipeline (optional).")


class GovernanceSpec(SpecModel):
    """The whole governance spec of one shared HyperPod cluster."""

    name: str = Field(description=f"DNS-1123 label, at most {MAX_PREFIX} characters; prefixes AWS resource names.")
    accounts: Accounts = Field(description="The capacity account and the consumer accounts.")
    cluster: Cluster = Field(description="The HyperPod cluster and its EKS cluster.")
    scheduler: Scheduler = Field(default_factory=Scheduler, description="Scheduling and sharing.")
    teams: tuple[Team, ...] = Field(default=(), description="The tenants.")
    shared_pool: Optional[SharedPool] = Field(default=None, description="Optional pool of unallocated capacity.")
    deployment: Deployment = Field(default_factory=Deployment, description="Stack layout and delivery.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="spec name", max_len=MAX_PREFIX)
