"""The HyperPod cluster, the EKS cluster that orchestrates it, its VPC, instance groups and add-ons."""

from __future__ import annotations

import re
from typing import Any, Literal, Optional

from pydantic import Field, field_validator, model_validator

from ._base import SpecModel, check_ipv4_cidr, check_label, spec_error
from .instance_types import InstanceTypeRef, MigProfileName
from .shared_storage import SharedStorage
from .slurm import ClusterSlurm, GroupSlurm
from .types import KUBERNETES_VERSIONS, MIN_KUBERNETES, AdminCidr, IamPrincipal


AVAILABILITY_ZONE = re.compile(r"\A[a-z]{2}(-[a-z]+)+-[0-9][a-z]\Z", re.ASCII)
# Helm sources and versions reach the helm command line of the kubectl handler: printable ASCII, no spaces.
HELM_TOKEN = re.compile(r"\A[!-~]{1,512}\Z", re.ASCII)


# Kubernetes label and taint keys: an optional DNS subdomain prefix and '/', then a name of at most 63 characters
# (the service's pattern for ClusterKubernetesTaint.Key; labels follow Kubernetes' own rule, which is the same).
K8S_KEY = re.compile(r"\A(?:(?P<prefix>[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)/)?"
                     r"(?P<name>[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)\Z", re.ASCII)
K8S_VALUE = re.compile(r"\A(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z", re.ASCII)
# The label HyperPod's GPU operator reads to partition GPUs: the plan sets it from `mig`, so the quotas know it.
MIG_LABEL = "nvidia.com/mig.config"
# Labels HyperPod sets on its nodes itself (instance group, health status): a spec label there would fight them.
RESERVED_LABEL_PREFIXES = ("sagemaker.amazonaws.com/",)
# The label and taint key a dedicated group (instanceGroups[].dedicatedTo) carries, value the team's name: the plan
# sets both, so the spec's own labels and taints may not use the key.
DEDICATED_KEY = "hyperpod-gov.io/dedicated"
TRAINING_PLAN_ARN = re.compile(r"\Aarn:aws[a-z-]*:sagemaker:[a-z0-9-]+:[0-9]{12}:training-plan/[A-Za-z0-9._-]{1,255}\Z",
                               re.ASCII)
KMS_KEY = re.compile(
    r"\A(arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:(key/(mrk-)?[0-9a-f-]{32,36}|alias/[A-Za-z0-9/_-]{1,250})"
    r"|(mrk-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(mrk-)?[0-9a-f]{32}"
    r"|alias/[A-Za-z0-9/_-]{1,250})\Z", re.ASCII)
SUBNET_ID = re.compile(r"\Asubnet-([0-9a-f]{8}|[0-9a-f]{17})\Z", re.ASCII)
VPC_ID = re.compile(r"\Avpc-([0-9a-f]{8}|[0-9a-f]{17})\Z", re.ASCII)
# s3://bucket/prefix: a bucket name as S3 allows it (3..63, lowercase, digits, '.', '-'), then a key prefix.
S3_URI = re.compile(r"\As3://(?P<bucket>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?P<prefix>/[!-~]{0,900})?\Z", re.ASCII)
DeepHealthCheck = Literal["InstanceStress", "InstanceConnectivity", "MultiNodeTrainingValidation"]


def check_k8s_key(key: str, what: str) -> str:
    m = K8S_KEY.match(key)
    if not m or len(m.group("name")) > 63 or len(m.group("prefix") or "") > 253:
        raise spec_error(f"{key!r} is not a Kubernetes {what} key",
                         "write an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' or '.', "
                         "starting and ending with a letter or digit (e.g. example.com/pool)")
    return key


def check_k8s_value(value: str, what: str) -> str:
    if len(value) > 63 or not K8S_VALUE.match(value):
        raise spec_error(f"{value!r} is not a Kubernetes {what} value",
                         "use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or "
                         "digit (e.g. reserved)")
    return value


def check_subnet_ids(ids: tuple[str, ...]) -> tuple[str, ...]:
    for subnet in ids:
        if not SUBNET_ID.match(subnet):
            raise spec_error(f"{subnet!r} is not a subnet id", "write it as EC2 shows it, e.g. subnet-0123456789abcdef0")
    if len(set(ids)) != len(ids):
        raise spec_error("lists a subnet twice", "list each subnet once")
    return ids


class Vpc(SpecModel):
    """The cluster's VPC: a new one from a CIDR (default), or an existing one by id with its private subnets."""

    vpc_id: Optional[str] = Field(
        default=None,
        description="An existing VPC to use instead of creating one (with privateSubnetIds, cidr and "
        "createEndpoints); hyperpod-gov then creates no VPC, subnets or NAT gateway (default: a new VPC).",
    )
    from_app: bool = Field(
        default=False,
        description="The VPC comes from the CDK app: HyperPodGovernance(..., vpc=network.vpc) gives it (an "
        "ec2.IVpc of another stack) and the cluster uses its private subnets; with cidr (the VPC's) and "
        "createEndpoints, as for vpcId. hyperpod-gov synth, which has no app, refuses such a spec (default: false).",
    )
    private_subnet_ids: tuple[str, ...] = Field(
        default=(),
        max_length=16,
        description="With vpcId: the private subnets (at least two, in different AZs) the EKS cluster, the "
        "HyperPod nodes and the endpoints use; they reach the internet or the endpoints as the VPC routes them.",
    )
    create_endpoints: Optional[bool] = Field(
        default=None,
        description="With vpcId (required there): true creates the interface endpoints a private cluster needs "
        "in the private subnets (the VPC must not have them yet; S3 as an interface endpoint only: the route tables "
        "a gateway endpoint needs are not in the spec); false uses the VPC's own.",
    )
    create_flow_logs: bool = Field(
        default=False,
        description="With vpcId: also create encrypted flow logs of the VPC (default: false, the VPC's owner logs "
        "it). A new VPC always gets them.",
    )

    availability_zones: tuple[str, ...] = Field(
        default=(),
        description="AZ names for the subnets (default: the region's a, b, c... up to maxAzs). Given explicitly, "
        "synth needs no AWS lookup.",
    )

    cidr: str = Field(
        default="10.192.0.0/16",
        description="IPv4 CIDR of the VPC (default: 10.192.0.0/16). With vpcId, the existing VPC's CIDR "
        "(required: the teams' NetworkPolicies and the endpoints allow HTTPS from it).",
    )
    max_azs: int = Field(
        default=2, ge=2, le=6, description="Availability zones with private subnets (default: 2; EKS needs 2)."
    )

    @field_validator("availability_zones")
    @classmethod
    def _azs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for az in v:
            if not AVAILABILITY_ZONE.match(az):
                raise spec_error(f"{az!r} is not an availability zone name",
                                 "write the region and a letter, e.g. us-east-1a")
        return v

    @field_validator("vpc_id")
    @classmethod
    def _vpc_id(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not VPC_ID.match(v):
            raise spec_error(f"{v!r} is not a VPC id", "write it as EC2 shows it, e.g. vpc-0123456789abcdef0")
        return v

    @field_validator("private_subnet_ids")
    @classmethod
    def _subnets(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_subnet_ids(v)

    @model_validator(mode="after")
    def _existing(self) -> "Vpc":
        given = self.model_fields_set
        if self.from_app:
            if self.vpc_id is not None or self.private_subnet_ids:
                raise spec_error("sets fromApp with vpcId or privateSubnetIds", "give the VPC once: fromApp (the "
                                 "app's ec2.IVpc) or vpcId with privateSubnetIds")
            missing = [alias for k, alias in (("cidr", "cidr"), ("create_endpoints", "createEndpoints"))
                       if k not in given]
            if missing:
                raise spec_error(f"sets fromApp but does not give {', '.join(missing)}",
                                 "add them: cidr: the app's VPC's CIDR, createEndpoints: true or false")
            return self
        if self.vpc_id is None:
            extra = [k for k, alias in (("private_subnet_ids", "privateSubnetIds"),
                                        ("create_endpoints", "createEndpoints"),
                                        ("create_flow_logs", "createFlowLogs")) if k in given]
            if extra:
                names = ", ".join(alias for k, alias in (("private_subnet_ids", "privateSubnetIds"),
                                                         ("create_endpoints", "createEndpoints"),
                                                         ("create_flow_logs", "createFlowLogs")) if k in extra)
                raise spec_error(f"sets {names} without vpcId", "add vpcId: vpc-... of the existing VPC, or remove "
                                 f"{names} to create a new VPC")
            return self
        missing = [alias for k, alias in (("cidr", "cidr"), ("create_endpoints", "createEndpoints")) if k not in given]
        if len(self.private_subnet_ids) < 2:
            missing.insert(0, "privateSubnetIds (at least two, in two AZs: EKS needs two)")
        if missing:
            raise spec_error(f"uses the existing VPC {self.vpc_id} but does not give {', '.join(missing)}",
                             "add them, e.g. privateSubnetIds: [subnet-..., subnet-...], cidr: the VPC's CIDR, "
                             "createEndpoints: false (nothing is looked up at synth)")
        if "max_azs" in given:
            raise spec_error("sets maxAzs for an existing VPC, whose subnets are given",
                             "remove maxAzs: the AZs are those of privateSubnetIds")
        if self.availability_zones and len(self.availability_zones) != len(self.private_subnet_ids):
            raise spec_error(f"lists {len(self.availability_zones)} availability zones for "
                             f"{len(self.private_subnet_ids)} private subnets",
                             "give each subnet's AZ, in the order of privateSubnetIds, or leave availabilityZones out")
        return self

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


class Mig(SpecModel):
    """NVIDIA Multi-Instance GPU partitioning of an instance group: one profile on every GPU."""

    profile: MigProfileName = Field(
        description="MIG profile every GPU of the group is partitioned into, as HyperPod names it (mig-1g.10gb); "
        "the GPU must offer it (catalog.py lists the profiles per instance type)."
    )


class Taint(SpecModel):
    """A Kubernetes taint HyperPod puts on every node of the group (KubernetesConfig.Taints)."""

    key: str = Field(description="Taint key, e.g. nvidia.com/gpu or example.com/reserved.")
    value: Optional[str] = Field(default=None, description="Taint value (default: none).")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        description="NoSchedule | PreferNoSchedule | NoExecute: what happens to pods that do not tolerate it."
    )

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        if v == DEDICATED_KEY:
            raise spec_error(f"{DEDICATED_KEY} is the taint of a dedicated group, which the plan sets",
                             "set dedicatedTo: <team> on the group instead")
        return check_k8s_key(v, "taint")

    @field_validator("value")
    @classmethod
    def _value(cls, v: Optional[str]) -> Optional[str]:
        return v if v is None else check_k8s_value(v, "taint")


class Lifecycle(SpecModel):
    """The group's own lifecycle scripts, instead of the ones hyperpod-gov ships."""

    source_s3_uri: str = Field(
        description="s3://bucket/prefix/ holding the scripts. The execution role is given read access to exactly "
        "this bucket and prefix."
    )
    on_create: str = Field(description="The entrypoint script's file name under sourceS3Uri, e.g. on_create.sh.")

    @field_validator("source_s3_uri")
    @classmethod
    def _uri(cls, v: str) -> str:
        m = S3_URI.match(v)
        if not m or ".." in m.group("bucket") or "*" in v:
            raise spec_error("is not an s3://bucket/prefix URI",
                             "write the bucket and the prefix of the scripts, e.g. s3://sagemaker-acme-lifecycle/eks/")
        return v

    @field_validator("on_create")
    @classmethod
    def _entrypoint(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9._-][A-Za-z0-9._/-]{0,127}", v, re.ASCII) or ".." in v.split("/"):
            raise spec_error("is not a script file name",
                             "name the entrypoint script relative to sourceS3Uri, e.g. on_create.sh")
        return v

    @property
    def bucket(self) -> str:
        m = S3_URI.match(self.source_s3_uri)
        assert m is not None
        return m.group("bucket")

    @property
    def prefix(self) -> str:
        """The key prefix under the bucket, without a leading '/' ("" for the whole bucket)."""
        m = S3_URI.match(self.source_s3_uri)
        assert m is not None
        return (m.group("prefix") or "").lstrip("/")


class InstanceGroup(SpecModel):
    """One HyperPod instance group: identical instances of one type."""

    name: str = Field(description="Instance group name (DNS-1123 label, at most 63 characters).")
    instance_type: InstanceTypeRef = Field(description="HyperPod instance type, e.g. ml.p5.48xlarge.")
    count: int = Field(ge=0, le=5000, description="Number of instances in the group.")
    mig: Optional[Mig] = Field(
        default=None,
        description="Every GPU of the group is partitioned into one MIG profile, e.g. {profile: mig-1g.10gb}; "
        "quotas on the type are then given as partitions (default: whole GPUs).",
    )
    volume_size_gb: Optional[int] = Field(
        default=None,
        ge=1,
        le=16384,
        description="Extra EBS volume per instance in GB (default: none beyond the root volume).",
    )

    training_plan_arn: Optional[str] = Field(
        default=None,
        description="SageMaker training plan whose reserved capacity the group runs on "
        "(arn:aws:sagemaker:REGION:ACCOUNT:training-plan/NAME; default: on-demand capacity).",
    )
    subnet_ids: tuple[str, ...] = Field(
        default=(),
        max_length=16,
        description="Subnets of the group's instances instead of the cluster's (OverrideVpcConfig), e.g. one AZ "
        "for EFA or a capacity reservation; the node security group stays (default: the cluster's private subnets).",
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Kubernetes labels HyperPod puts on every node of the group (KubernetesConfig.Labels), "
        "merged with the MIG label the group's `mig` sets (default: none).",
    )
    taints: tuple[Taint, ...] = Field(
        default=(), max_length=50,
        description="Kubernetes taints on every node of the group, [{key, value, effect}] (default: none).",
    )
    lifecycle: Optional[Lifecycle] = Field(
        default=None,
        description="Own lifecycle scripts {sourceS3Uri, onCreate} (default: the scripts hyperpod-gov ships, "
        "in its sagemaker- bucket).",
    )
    volume_kms_key_id: Optional[str] = Field(
        default=None,
        description="KMS key (id, ARN or alias) encrypting the data volume of volumeSizeGb (default: the "
        "AWS-managed EBS key).",
    )
    deep_health_checks: Optional[tuple[DeepHealthCheck, ...]] = Field(
        default=None,
        description="Deep health checks HyperPod runs when a node starts; [] runs none (default: InstanceStress "
        "and InstanceConnectivity on accelerated types, none on CPU types).",
    )
    threads_per_core: Optional[Literal[1, 2]] = Field(
        default=None, description="1 turns multithreading off, 2 on (default: the instance type's own)."
    )
    dedicated_to: Optional[str] = Field(
        default=None,
        description="A team whose work alone runs on the group: its nodes get the label and the NoSchedule taint "
        f"{DEDICATED_KEY}=<team>, admission refuses other teams' pods that tolerate or select them, and the team's "
        "queue places its work there (default: none, every team may use the group).",
    )

    slurm: Optional[GroupSlurm] = Field(
        default=None,
        description="With cluster.orchestrator: slurm (required there, refused otherwise): the group's Slurm role, "
        "{nodeType: Controller | Login | Compute, partition: NAME} (SlurmConfig; partition on Compute groups only).",
    )

    @model_validator(mode="before")
    @classmethod
    def _node_recovery(cls, data: object) -> object:
        if isinstance(data, dict) and ("nodeRecovery" in data or "node_recovery" in data):
            raise spec_error(
                "sets nodeRecovery, but HyperPod recovers nodes cluster-wide (CreateCluster.NodeRecovery; "
                "CloudFormation has no per-group setting either)",
                "set cluster.nodeRecovery: Automatic | None and remove it from the instance group",
            )
        return data

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="instance group name", max_len=63)

    @field_validator("dedicated_to")
    @classmethod
    def _dedicated(cls, v: Optional[str]) -> Optional[str]:
        return v if v is None else check_label(v, what="team name", max_len=40)

    @field_validator("training_plan_arn")
    @classmethod
    def _plan(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not TRAINING_PLAN_ARN.match(v):
            raise spec_error("is not a training plan ARN",
                             "copy it from `aws sagemaker list-training-plans`, e.g. "
                             "arn:aws:sagemaker:us-east-1:111111111111:training-plan/p5-reserved")
        return v

    @field_validator("subnet_ids")
    @classmethod
    def _subnets(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_subnet_ids(v)

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: dict[str, str]) -> dict[str, str]:
        for key, value in v.items():
            check_k8s_key(key, "label")
            check_k8s_value(value, "label")
            if key == MIG_LABEL:
                raise spec_error(f"sets {MIG_LABEL}, which the group's MIG layout owns",
                                 "partition the GPUs with mig: {profile: ...} instead (the quotas then count "
                                 "partitions)")
            if key == DEDICATED_KEY:
                raise spec_error(f"{DEDICATED_KEY} is the label of a dedicated group, which the plan sets",
                                 "set dedicatedTo: <team> on the group instead")
            if key.startswith(RESERVED_LABEL_PREFIXES):
                raise spec_error(f"{key!r} is under a prefix HyperPod sets on its nodes itself",
                                 "use a prefix of your own, e.g. example.com/pool")
        return dict(sorted(v.items()))

    @field_validator("volume_kms_key_id")
    @classmethod
    def _kms(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not KMS_KEY.match(v):
            raise spec_error("is not a KMS key id, key ARN or alias",
                             "give the key's ARN, e.g. arn:aws:kms:us-east-1:111111111111:key/"
                             "1234abcd-12ab-34cd-56ef-1234567890ab")
        return v

    @field_validator("deep_health_checks")
    @classmethod
    def _checks(cls, v: Optional[tuple[str, ...]]) -> Optional[tuple[str, ...]]:
        if v is not None and len(set(v)) != len(v):
            raise spec_error("lists a check twice", "list each deep health check once")
        return v

    @model_validator(mode="after")
    def _combinations(self) -> "InstanceGroup":
        if self.volume_kms_key_id is not None and not self.volume_size_gb:
            raise spec_error("volumeKmsKeyId encrypts the data volume, and the group has none",
                             "set volumeSizeGb too, or remove volumeKmsKeyId")
        seen = set()
        for t in self.taints:
            if (t.key, t.effect) in seen:
                raise spec_error(f"taints {t.key!r} with {t.effect} twice",
                                 "give each key and effect one taint")
            seen.add((t.key, t.effect))
        return self


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
Operator = Literal["training", "inference", "spaces"]
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
    task_governance: str = Field(
        default="v1.6.0-eksbuild.1",
        description="amazon-sagemaker-hyperpod-taskgovernance (task-governance mode; v1.6.0 bundles Kueue 0.19.2).",
    )
    vpc_cni: Optional[str] = Field(default=None, description="vpc-cni, at least v1.18.3 (default: docs/addons.md's pin for the Kubernetes version).")
    coredns: Optional[str] = Field(default=None, description="coredns (default: docs/addons.md's pin for the Kubernetes version).")
    kube_proxy: Optional[str] = Field(default=None, description="kube-proxy (default: docs/addons.md's pin for the Kubernetes version).")
    pod_identity_agent: Optional[str] = Field(default=None, description="eks-pod-identity-agent (default: docs/addons.md's pin).")
    kueue_chart: str = Field(default="0.19.2", description="Kueue Helm chart version (kueue mode), 0.19.x.")
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

    @field_validator("cloudwatch_observability", "task_governance", "vpc_cni", "coredns", "kube_proxy",
                     "pod_identity_agent", "training_operator", "cert_manager", "spaces", "ebs_csi_driver",
                     "inference_operator", "mountpoint_s3_csi_driver", "fsx_csi_driver", "metrics_server")
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

    @field_validator("kueue_chart")
    @classmethod
    def _kueue(cls, v: str) -> str:
        if not re.fullmatch(r"0\.19\.\d+", v, re.ASCII):
            raise spec_error("is not a Kueue 0.19.x chart version", "use 0.19.2 (the Kueue objects are v1beta2)")
        return v


HYPERPOD_CLUSTER_ARN = re.compile(
    r"\Aarn:(aws[a-z-]*):sagemaker:([a-z]{2}(?:-[a-z]+)+-[0-9]):([0-9]{12}):cluster/([a-z0-9]{12})\Z", re.ASCII)
EKS_CLUSTER_NAME = re.compile(r"\A[0-9A-Za-z][A-Za-z0-9_-]{0,99}\Z", re.ASCII)
VPC_ID = re.compile(r"\Avpc-(?:[0-9a-f]{8}|[0-9a-f]{17})\Z", re.ASCII)
SUBNET_ID = re.compile(r"\Asubnet-(?:[0-9a-f]{8}|[0-9a-f]{17})\Z", re.ASCII)
SECURITY_GROUP_ID = re.compile(r"\Asg-(?:[0-9a-f]{8}|[0-9a-f]{17})\Z", re.ASCII)


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
    self_managed_kueue: bool = Field(
        default=False,
        description="Kueue installed outside the task-governance add-on (Helm chart, manifests) runs on the "
        "cluster. Default: false. In task-governance mode the add-on cannot be installed next to it (HPG-Q006).",
    )

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


# A repository name, or a name prefix ending in '/' (the CreateRepository pattern, segment by segment).
ECR_REPOSITORY_PREFIX = re.compile(r"\A(?=.{2,256}\Z)(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*(?:[a-z0-9]+(?:[._-][a-z0-9]+)*)?\Z",
                                   re.ASCII)
ECR_REPOSITORY_ARN = re.compile(r"\Aarn:aws[a-z-]*:ecr:[a-z0-9-]+:[0-9]{12}:repository/(?=.{2,256}\Z)"
                                r"(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*\Z", re.ASCII)
# --- cluster.apiAccess: networks admitted to the private EKS endpoint ---------------------------------------------
PREFIX_LIST_ID = re.compile(r"\Apl-(?:[0-9a-f]{8}|[0-9a-f]{17})\Z", re.ASCII)
# What EC2 accepts in a security group rule's description (AuthorizeSecurityGroupIngress, IpRange.Description).
RULE_DESCRIPTION = re.compile(r"\A[A-Za-z0-9 ._\-:/()#,@\[\]+=&;{}!$*]{1,255}\Z", re.ASCII)
_DESCRIPTION = ("Who or what this network is, e.g. 'Corporate VPN' (the security group rule's description: at most "
                "255 letters, digits, spaces and ._-:/()#,@[]+=&;{}!$*).")


def _check_description(v: str) -> str:
    if not RULE_DESCRIPTION.match(v):
        raise spec_error("is not a security group rule description",
                         "use at most 255 letters, digits, spaces and ._-:/()#,@[]+=&;{}!$*, e.g. 'Corporate VPN'")
    return v


class ApiCidr(SpecModel):
    """An IPv4 network admitted to the private EKS API endpoint on TCP 443."""

    cidr: AdminCidr = Field(description="IPv4 CIDR, e.g. a VPN's or a peered VPC's (never 0.0.0.0/0).")
    description: str = Field(description=_DESCRIPTION)

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return _check_description(v)


class ApiSecurityGroup(SpecModel):
    """A security group whose members are admitted to the private EKS API endpoint on TCP 443."""

    id: str = Field(description="Security group id, sg-..., in the cluster's VPC or a peered one.")
    description: str = Field(description=_DESCRIPTION)

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return _check_description(v)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not SECURITY_GROUP_ID.match(v):
            raise spec_error("is not a security group id", "write it as EC2 shows it, e.g. sg-0123456789abcdef0")
        return v


class ApiPrefixList(SpecModel):
    """A managed prefix list whose networks are admitted to the private EKS API endpoint on TCP 443."""

    id: str = Field(description="Managed prefix list id, pl-... (each of its entries counts against the security "
                    "group's rule quota).")
    description: str = Field(description=_DESCRIPTION)

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return _check_description(v)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not PREFIX_LIST_ID.match(v):
            raise spec_error("is not a managed prefix list id",
                             "write it as `aws ec2 describe-managed-prefix-lists` shows it, e.g. pl-0123456789abcdef0")
        return v


class ApiAccess(SpecModel):
    """Networks admitted to the private EKS API endpoint: ingress on TCP 443 of the EKS cluster security group."""

    cidrs: tuple[ApiCidr, ...] = Field(
        default=(), max_length=50, description="IPv4 networks, [{cidr, description}] (default: none).")
    security_group_ids: tuple[ApiSecurityGroup, ...] = Field(
        default=(), max_length=50, description="Security groups, [{id, description}] (default: none).")
    prefix_list_ids: tuple[ApiPrefixList, ...] = Field(
        default=(), max_length=10, description="Managed prefix lists, [{id, description}] (default: none).")

    @model_validator(mode="after")
    def _once(self) -> "ApiAccess":
        for key, values in (("cidrs", [c.cidr for c in self.cidrs]),
                            ("securityGroupIds", [g.id for g in self.security_group_ids]),
                            ("prefixListIds", [p.id for p in self.prefix_list_ids])):
            repeated = sorted({v for v in values if values.count(v) > 1})
            if repeated:
                raise spec_error(f"{key} lists {', '.join(repeated)} twice", "list each network once")
        return self


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
        description="HyperPod operators installed as EKS add-ons once the nodes run: training (the HyperPod "
        "training operator, HyperPodPyTorchJob), inference (the HyperPod inference operator) and spaces "
        "(JupyterLab and Code Editor spaces). Default: [training]. With cluster.existing the governance stack "
        "installs the ones this key lists, and none when the key is left out (the cluster runs its own). See "
        "docs/operators.md.",
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
        """Instances per instance type across all instance groups, sorted by type."""
        out: dict[str, int] = {}
        for group in self.instance_groups:
            out[group.instance_type] = out.get(group.instance_type, 0) + group.count
        return dict(sorted(out.items()))
