"""HyperPod instance groups: identical instances of one type, with their MIG layout, Kubernetes labels and taints,
lifecycle scripts, and (on a Slurm cluster) their Slurm role."""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from ._base import SpecModel, check_label, spec_error
from .elastic import IMAGE_ID, Image, Patching
from .instance_types import InstanceTypeRef, MigProfileName
from .network import check_subnet_ids
from .slurm import GroupSlurm


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
    instance_type: InstanceTypeRef = Field(
        description="HyperPod instance type, e.g. ml.p5.48xlarge. A flexible group gives instanceTypes instead, and "
        "this is its first type.")
    instance_types: tuple[InstanceTypeRef, ...] = Field(
        default=(), max_length=20,
        description="A flexible group (InstanceRequirements.InstanceTypes): 2 to 20 types HyperPod may launch, in "
        "order of preference, instead of instanceType; they share one accelerator (HPG-K006) and quotas on them "
        "count accelerators or vCPU, not instances (default: one type, instanceType).")
    count: int = Field(
        ge=0, le=5000,
        description="Number of instances in the group (InstanceCount); with cluster.autoScaling the most the "
        "autoscaler runs, and the NodePool's limit.")
    autoscale: bool = Field(
        default=False,
        description="HyperPod-managed Karpenter scales the group between 0 and count nodes as work queues (needs "
        "cluster.autoScaling: karpenter): it starts at 0 instances (InstanceCount 0, as AWS requires), runs no deep "
        "health checks, and gets a HyperpodNodeClass and a NodePool. Default: false, the group runs count "
        "instances.")
    min_count: Optional[int] = Field(
        default=None, ge=0, le=5000,
        description="MinInstanceCount: the instances a group that does not autoscale needs to become InService "
        "(with continuous provisioning HyperPod keeps adding the rest up to count); at most count. The service "
        "keeps no floor afterwards, and Karpenter none either, so it is refused on an autoscaled group (HPG-K003). "
        "Default: none.")
    capacity: Literal["on-demand", "spot"] = Field(
        default="on-demand",
        description="on-demand (default) or spot (CapacityRequirements): Spot nodes cost less and can be "
        "reclaimed, evicting the work on them.")
    image_id: Optional[str] = Field(
        default=None,
        description="The AMI of the group's nodes (ImageId): a HyperPod public or custom AMI id, or default "
        "(default: HyperPod's current AMI).")
    image: Optional[Image] = Field(
        default=None, description="{releaseVersion: MAJOR.MINOR.PATCH}: a HyperPod AMI release instead of imageId.")
    patching: Optional[Patching] = Field(
        default=None,
        description="When HyperPod updates the nodes' image: {start | schedule, auto, batch, waitSeconds, "
        "rollbackAlarms} (ScheduledUpdateConfig, AutoPatchConfig; default: only when you update the cluster).")
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

    @model_validator(mode="before")
    @classmethod
    def _flexible(cls, data: object) -> object:
        """instanceTypes names a flexible group: its first type stands as instanceType (which it may not give)."""
        if isinstance(data, dict):
            types = data.get("instanceTypes", data.get("instance_types"))
            if types is not None:
                if "instanceType" in data or "instance_type" in data:
                    raise spec_error("gives both instanceType and instanceTypes (the service takes one: InstanceType "
                                     "or InstanceRequirements)",
                                     "give instanceTypes for a flexible group, or instanceType for one type")
                if isinstance(types, (list, tuple)) and types:
                    data = {**data, "instanceType": types[0]}
        return data

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="instance group name", max_len=63)

    @field_validator("instance_types")
    @classmethod
    def _types(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if v and len(v) < 2:
            raise spec_error("lists one type, and a flexible group has several",
                             "write instanceType: <type> for one type, or list 2 to 20 types")
        if len(set(v)) != len(v):
            raise spec_error("lists a type twice", "list each instance type once")
        return v

    @field_validator("image_id")
    @classmethod
    def _image(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not IMAGE_ID.match(v):
            raise spec_error("is not an AMI id", "give ami- and 8 to 17 hex digits (e.g. ami-0123456789abcdef0), "
                             "or default")
        return v

    @property
    def types(self) -> tuple[str, ...]:
        """Every instance type the group may run: its instanceTypes, or its one instanceType."""
        return self.instance_types or (self.instance_type,)

    @property
    def flexible(self) -> bool:
        return bool(self.instance_types)

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
        if self.min_count is not None and self.min_count > self.count:
            raise spec_error(f"minCount {self.min_count} is more than count {self.count} (MinInstanceCount must be at "
                             "most InstanceCount)", f"lower minCount to at most {self.count}, or raise count")
        if self.image_id is not None and self.image is not None:
            raise spec_error("gives both imageId and image.releaseVersion",
                             "give one: an AMI id (imageId) or a HyperPod release (image.releaseVersion)")
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
