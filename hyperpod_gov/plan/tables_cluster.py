"""The HyperPod cluster's tables (``tables.py``): the cluster and each instance group."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .fields import Field, Table, member_value
from .tables_common import _DEPLOY_TIME, _TAGS, same_arn

_SLURM = "a Slurm cluster's: its drift and import read it with the accounting (live/slurm.py)"


def _live_count(live: Mapping[str, Any]) -> tuple[str, Any]:
    """DescribeCluster reports TargetCount (what the group is scaling to) and CurrentCount; CloudFormation's
    InstanceCount is the target."""
    member = "TargetCount" if "TargetCount" in live else "CurrentCount"
    return member, live.get(member)


def _storage(group: Any) -> Optional[list[dict[str, Any]]]:
    if not group.volume_size_gb:
        return None
    ebs: dict[str, Any] = {"VolumeSizeInGB": group.volume_size_gb}
    if group.volume_kms_key_id:
        ebs["VolumeKmsKeyId"] = group.volume_kms_key_id
    return [{"EbsVolumeConfig": ebs}]


def _live_sorted(member: str, live_member: str) -> Any:
    """The live list at ``live_member``, sorted (the service keeps no order for it)."""
    def read(live: Mapping[str, Any]) -> tuple[str, Any]:
        value = member_value(live, live_member)
        return live_member, sorted(value) if isinstance(value, list) else value
    return read


def _desired(what: str) -> Any:
    """DescribeCluster reports ``KubernetesConfig.Desired<what>`` (what was asked for) and ``Current<what>``
    (what the nodes have now): the desired ones are what the spec governs."""
    def read(live: Mapping[str, Any]) -> tuple[str, Any]:
        config = live.get("KubernetesConfig") or {}
        member = f"Desired{what}" if f"Desired{what}" in config else f"Current{what}"
        return f"KubernetesConfig.{member}", config.get(member)
    return read


def _taints(group: Any) -> Optional[list[dict[str, str]]]:
    return [{k: v for k, v in (("Key", t.key), ("Value", t.value), ("Effect", t.effect)) if v is not None}
            for t in group.taints] or None


def _same_taints(planned: Any, live: Any, context: Mapping[str, Any]) -> bool:
    def key(items: Any) -> list[tuple[str, str, str]]:
        return sorted((t.get("Key", ""), t.get("Value") or "", t.get("Effect", "")) for t in items or ())
    return key(planned) == key(live)


def _lifecycle_member(what: str) -> Any:
    def get(group: Any) -> Optional[str]:
        if group.lifecycle is None:
            return None
        return group.lifecycle.source_s3_uri if what == "SourceS3Uri" else group.lifecycle.on_create
    return get


def _own_else_shipped(what: str) -> Any:
    """emit: the group's own lifecycle scripts, else the shipped ones (the context's lifecycle bucket URI and its
    entrypoint, ``LifeCycleConfig.<what>``)."""
    own = _lifecycle_member(what)

    def deploy(group: Any, context: Mapping[str, Any]) -> Optional[str]:
        return own(group) if group.lifecycle is not None else context.get(f"LifeCycleConfig.{what}")
    return deploy


def _kubernetes(get: Any) -> Any:
    """A Kubernetes member of an EKS cluster's group: a Slurm group's nodes have no Kubernetes labels or taints (a
    dedicated one keeps to its partition)."""
    return lambda group: None if group.slurm is not None else get(group)


def _node_security_group(group: Any, context: Mapping[str, Any]) -> Any:
    """emit: the cluster's node security group (the context's) where the group has subnets of its own: the service
    requires one with them."""
    return context.get("OverrideVpcConfig.SecurityGroupIds") if group.subnet_ids else None


def _slurm_group(get: Any) -> Any:
    return lambda group: None if group.slurm is None else get(group.slurm)


def _slurm_cluster(get: Any) -> Any:
    return lambda cluster: None if cluster.slurm is None else get(cluster.slurm)


def _database(get: Any) -> Any:
    return _slurm_cluster(lambda s: None if s.accounting_database is None else get(s.accounting_database))


def _database_row(member: str, label: str) -> Field:
    """The row of one member of ``Orchestrator.Slurm.AccountingDatabase`` (its spec key: the member in camelCase)."""
    key = member[:1].lower() + member[1:]
    return Field(f"Orchestrator.Slurm.AccountingDatabase.{member}", label, f"slurm.accountingDatabase.{key}",
                 get=_database(lambda d: getattr(d, _SNAKE[member])), plan_fields=("slurm",), drift=_SLURM,
                 imports=_SLURM)


_SNAKE = {"Endpoint": "endpoint", "SecretArn": "secret_arn", "Name": "name", "Port": "port"}


def _eks_arn(cluster: Any) -> Optional[str]:
    return cluster.eks_arn if cluster.slurm is None else None


def _eks_arn_reference(cluster: Any, context: Mapping[str, Any]) -> Optional[str]:
    """emit: the EKS cluster's ARN as the context gives it (a reference to the cluster the stack creates), else
    the planned one; none on a Slurm cluster."""
    planned = _eks_arn(cluster)
    return None if planned is None else context.get("Orchestrator.Eks.ClusterArn", planned)


def _min_count(live: Mapping[str, Any]) -> tuple[str, Any]:
    """DescribeCluster reports MinInstanceCount as MinCount."""
    return "MinCount", live.get("MinCount")


def _desired_types(live: Mapping[str, Any]) -> tuple[str, Any]:
    """DescribeCluster reports a flexible group's InstanceRequirements as ``DesiredInstanceTypes`` (what was asked
    for, in order of preference) and ``CurrentInstanceTypes``: the desired ones are what the spec governs."""
    config = live.get("InstanceRequirements") or {}
    member = "DesiredInstanceTypes" if "DesiredInstanceTypes" in config else "CurrentInstanceTypes"
    value = config.get(member)
    return f"InstanceRequirements.{member}", list(value) if value is not None else None


def _desired_top(what: str) -> Any:
    """DescribeCluster reports ``Desired<what>`` (what was asked for) and ``Current<what>`` (what runs)."""
    def read(live: Mapping[str, Any]) -> tuple[str, Any]:
        member = f"Desired{what}" if f"Desired{what}" in live else f"Current{what}"
        return member, live.get(member)
    return read


def _same_capacity(planned: Any, live: Any, context: Mapping[str, Any]) -> bool:
    """No CapacityRequirements, or OnDemand, is On-Demand."""
    return ("Spot" in (planned or {})) == ("Spot" in (live or {}))


def _capacity_to_spec(live: Any) -> Optional[str]:
    return "spot" if "Spot" in (live or {}) else None


def _scheduled_update(group: Any) -> Optional[dict[str, Any]]:
    p = group.patching
    if p is None or p.schedule_expression is None:
        return None
    out: dict[str, Any] = {"ScheduleExpression": p.schedule_expression}
    if p.deployment_config:
        out["DeploymentConfig"] = p.deployment_config
    return out


def _auto_patch(group: Any) -> Optional[dict[str, Any]]:
    p = group.patching
    if p is None or p.auto is None:
        return None
    out: dict[str, Any] = {"PatchingStrategy": p.auto}
    if p.deployment_config:
        out["DeploymentConfig"] = p.deployment_config
    return out


def _deployment(config: Any) -> Optional[dict[str, Any]]:
    """The DeploymentConfig members the spec governs (batch, wait, rollback alarms, the alarms sorted: the
    service keeps no order for them); RollbackMaximumBatchSize, which the spec does not set, is left out."""
    if not config:
        return None
    out: dict[str, Any] = {}
    alarms = sorted(a.get("AlarmName", "") for a in config.get("AutoRollbackConfiguration") or ())
    if alarms:
        out["AutoRollbackConfiguration"] = [{"AlarmName": a} for a in alarms]
    batch = (config.get("RollingUpdatePolicy") or {}).get("MaximumBatchSize")
    if batch:
        out["RollingUpdatePolicy"] = {"MaximumBatchSize": dict(batch)}
    if config.get("WaitIntervalInSeconds") is not None:
        out["WaitIntervalInSeconds"] = config["WaitIntervalInSeconds"]
    return out or None


def _governed(value: Any, key: str) -> Optional[dict[str, Any]]:
    """A patching member (``key`` and its DeploymentConfig) as the spec governs it."""
    if not value:
        return None
    out: dict[str, Any] = {key: value.get(key)}
    deployment = _deployment(value.get("DeploymentConfig"))
    if deployment:
        out["DeploymentConfig"] = deployment
    return out


def _live_patching(member: str, key: str) -> Any:
    """The live ``member`` (ScheduledUpdateConfig, AutoPatchConfig) as the spec governs it: DescribeCluster's
    AutoPatchConfig adds the service's Current/DesiredPatchSchedule (NextPatchDate, set when a patch AMI is
    released), IdleWaitWindowInSeconds and DrainPolicy (API-only members the spec does not set), left out."""
    def read(live: Mapping[str, Any]) -> tuple[str, Any]:
        return member, _governed(live.get(member), key)
    return read


def _same_patching(key: str) -> Any:
    def same(planned: Any, live: Any, context: Mapping[str, Any]) -> bool:
        return _governed(planned, key) == _governed(live, key)
    return same


def _same_autoscaling(planned: Any, live: Any, context: Mapping[str, Any]) -> bool:
    """Off is no AutoScaling or Mode Disable; on is Mode Enable (Karpenter, the only AutoScalerType)."""
    return ((planned or {}).get("Mode") == "Enable") == ((live or {}).get("Mode") == "Enable")


def _autoscaling_to_spec(live: Any) -> Optional[str]:
    return "karpenter" if (live or {}).get("Mode") == "Enable" else None


def volume_of(live_storage: Any) -> Optional[int]:
    """The data volume's size from ``InstanceStorageConfigs`` (the root volume left out)."""
    for storage in live_storage or ():
        ebs = storage.get("EbsVolumeConfig") or {}
        if ebs.get("VolumeSizeInGB") and not ebs.get("RootVolume"):
            return int(ebs["VolumeSizeInGB"])
    return None


INSTANCE_GROUP = Table(
    kind="InstanceGroup",
    label="instance group",
    spec="cluster.instanceGroups[]",
    fields=(
        Field("InstanceGroupName", "name", "name", get=lambda g: g.name, plan_fields=("name",),
              drift="the key instance groups are matched by", to_spec=str),
        # A flexible group's type is InstanceRequirements' (the row below): what DescribeCluster reports as its
        # InstanceType is not documented, so it is compared on a group of one type only.
        Field("InstanceType", "instance type", "instanceType",
              get=lambda g: None if g.instance_types else g.instance_type,
              plan_fields=("instance_type", "instance_types"), to_spec=str, when=lambda g: not g.instance_types),
        # A flexible group (InstanceRequirements, exclusive with InstanceType): its types in order of preference.
        Field("InstanceRequirements.InstanceTypes", "instance types", "instanceTypes",
              get=lambda g: list(g.instance_types) or None, plan_fields=("instance_types",),
              live_member=_desired_types,
              imports="a list: the importer writes it itself (instanceTypes in place of instanceType, from "
                      "InstanceRequirements.DesiredInstanceTypes)"),
        # An autoscaled group's target count is the autoscaler's to move between minCount and count: not compared.
        Field("InstanceCount", "the instance count", "count", get=lambda g: g.instance_count,
              plan_fields=("count", "autoscaled"), live_member=_live_count, to_spec=int, when=lambda g: not g.autoscaled),
        # Compared where the spec sets it: what DescribeCluster reports for a group created without one is not
        # documented.
        Field("MinInstanceCount", "the minimum instance count", "minCount", get=lambda g: g.min_count,
              plan_fields=("min_count",), live_member=_min_count, to_spec=int,
              when=lambda g: g.min_count is not None),
        Field("CapacityRequirements", "capacity type (Spot or On-Demand)", "capacity",
              get=lambda g: {"Spot": {}} if g.capacity_type == "spot" else None, plan_fields=("capacity_type",),
              same=_same_capacity, to_spec=_capacity_to_spec),
        Field("ExecutionRole", "execution role", "", drift=_DEPLOY_TIME, imports=_DEPLOY_TIME),
        # Own scripts are the spec's; the shipped ones are in the lifecycle bucket, a deploy-time reference.
        Field("LifeCycleConfig.SourceS3Uri", "lifecycle scripts", "lifecycle.sourceS3Uri",
              get=_lifecycle_member("SourceS3Uri"), plan_fields=("lifecycle",),
              when=lambda g: g.lifecycle is not None, deploy=_own_else_shipped("SourceS3Uri"),
              imports="the shipped scripts' bucket is hyperpod-gov's; own scripts are a nested key the importer "
                      "does not write"),
        Field("LifeCycleConfig.OnCreate", "lifecycle entrypoint", "lifecycle.onCreate",
              get=_lifecycle_member("OnCreate"), plan_fields=("lifecycle",),
              when=lambda g: g.lifecycle is not None, deploy=_own_else_shipped("OnCreate"),
              imports="written with lifecycle.sourceS3Uri"),
        Field("InstanceStorageConfigs", "data volume (GiB)", "volumeSizeGb", get=_storage,
              plan_fields=("volume_size_gb", "volume_kms_key_id"),
              drift="HyperPod adds its root volume to what it reports; import reads the data volume's size (its "
                    "KMS key, volumeKmsKeyId, is not imported)",
              to_spec=volume_of),
        Field("KubernetesConfig.Labels", "node labels", "labels",
              get=_kubernetes(lambda g: g.kubernetes_labels or None),
              plan_fields=("mig_profile", "labels", "dedicated_to", "slurm"), live_member=_desired("Labels"),
              imports="a mapping (KubernetesConfig.DesiredLabels): the importer writes flat values only; the MIG "
                      "profile is guessed from the compute quotas' partitions"),
        Field("KubernetesConfig.Taints", "node taints", "taints|dedicatedTo", get=_kubernetes(_taints),
              plan_fields=("taints", "slurm"),
              live_member=_desired("Taints"), same=_same_taints,
              imports="a list of {key, value, effect}: the importer writes flat values only"),
        Field("OnStartDeepHealthChecks", "deep health checks", "deepHealthChecks|instanceType",
              get=lambda g: list(g.deep_health_checks) or None,
              plan_fields=("deep_health_checks", "accelerated", "deep_health_checks_given"),
              # The default follows the instance type, which is compared; checks the spec names are compared.
              when=lambda g: g.deep_health_checks_given,
              same=lambda planned, live, context: sorted(planned or ()) == sorted(live or ()),
              imports="the default follows the instance type; an explicit list the importer does not write"),
        Field("TrainingPlanArn", "training plan", "trainingPlanArn", get=lambda g: g.training_plan_arn,
              plan_fields=("training_plan_arn",), same=same_arn, to_spec=str),
        # The node security group is the cluster's, a deploy-time reference; the subnets are the spec's.
        Field("OverrideVpcConfig.Subnets", "subnets", "subnetIds", get=lambda g: list(g.subnet_ids) or None,
              plan_fields=("subnet_ids",), live_member=_live_sorted("OverrideVpcConfig.Subnets",
                                                                    "OverrideVpcConfig.Subnets"),
              imports="a list: the importer writes flat values only"),
        Field("OverrideVpcConfig.SecurityGroupIds", "security groups", "subnetIds", deploy=_node_security_group,
              drift="the node security group, a deploy-time reference", imports=_DEPLOY_TIME),
        # The node image: compared where the spec names one (the service picks its current AMI otherwise).
        Field("ImageId", "node image (AMI)", "imageId", get=lambda g: g.image_id, plan_fields=("image_id",),
              when=lambda g: g.image_id is not None, live_member=_desired_top("ImageId"),
              imports="DescribeCluster reports the AMI every group runs (DesiredImageId), HyperPod's own included: "
                      "import cannot tell a pinned AMI from the service's choice, and does not write it"),
        Field("ImageReleaseVersion", "HyperPod AMI release", "image.releaseVersion",
              get=lambda g: g.image_release_version, plan_fields=("image_release_version",),
              when=lambda g: g.image_release_version is not None, live_member=_desired_top("ImageReleaseVersion"),
              imports="a nested key the importer does not write"),
        Field("ScheduledUpdateConfig", "scheduled image update", "patching", get=_scheduled_update,
              plan_fields=("patching",), live_member=_live_patching("ScheduledUpdateConfig", "ScheduleExpression"),
              same=_same_patching("ScheduleExpression"), imports="a structure the importer does not write"),
        Field("AutoPatchConfig", "automatic patching", "patching.auto", get=_auto_patch, plan_fields=("patching",),
              live_member=_live_patching("AutoPatchConfig", "PatchingStrategy"),
              same=_same_patching("PatchingStrategy"), imports="a structure the importer does not write"),
        # Compared only where the spec sets it: without it the service reports the instance type's own value.
        Field("ThreadsPerCore", "threads per core", "threadsPerCore", get=lambda g: g.threads_per_core,
              plan_fields=("threads_per_core",), when=lambda g: g.threads_per_core is not None, to_spec=int),
        # A Slurm cluster's group: its drift compares them with the accounting (live/slurm.py), and so does import.
        Field("SlurmConfig.NodeType", "Slurm node type", "slurm.nodeType", get=_slurm_group(lambda s: s.node_type),
              plan_fields=("slurm",), drift=_SLURM, imports=_SLURM),
        Field("SlurmConfig.PartitionNames", "Slurm partition", "slurm.partition",
              get=_slurm_group(lambda s: [s.partition] if s.partition else None), plan_fields=("slurm",),
              drift=_SLURM, imports=_SLURM),
    ),
)


CLUSTER = Table(
    kind="Cluster",
    label="HyperPod cluster",
    spec="cluster",
    fields=(
        Field("ClusterName", "name", "name", get=lambda c: c.name, plan_fields=("name",),
              drift="the key the cluster is read by", to_spec=str),
        Field("InstanceGroups", "instance groups", "instanceGroups",
              drift="compared group by group (the InstanceGroup table)", imports="read group by group"),
        Field("NodeRecovery", "node recovery", "nodeRecovery", get=lambda c: c.node_recovery,
              plan_fields=("node_recovery",), default="Automatic", to_spec=str),
        Field("AutoScaling", "autoscaling", "autoScaling",
              get=lambda c: {"Mode": "Enable", "AutoScalerType": "Karpenter"} if c.auto_scaling else None,
              plan_fields=("auto_scaling",), same=_same_autoscaling, to_spec=_autoscaling_to_spec),
        Field("ClusterRole", "autoscaling role", "autoScaling", plan_fields=("auto_scaling",),
              deploy=lambda c, context: context.get("ClusterRole") if c.auto_scaling else None,
              drift=_DEPLOY_TIME, imports=_DEPLOY_TIME),
        Field("NodeProvisioningMode", "node provisioning", "nodeProvisioningMode",
              get=lambda c: c.node_provisioning_mode, plan_fields=("node_provisioning_mode",), to_spec=str),
        # The EKS cluster the spec derives from the HyperPod cluster's name (plan.cluster.eks_arn).
        Field("Orchestrator.Eks.ClusterArn", "EKS cluster", "name", get=_eks_arn, deploy=_eks_arn_reference,
              plan_fields=("eks_arn", "eks_name"), same=same_arn,
              imports="import notes an EKS cluster not named <name>-eks"),
        # A Slurm cluster's orchestrator: its drift compares them (live/slurm.py), and so does import.
        Field("Orchestrator.Slurm.SlurmConfigStrategy", "Slurm configuration strategy", "slurm.configStrategy",
              get=_slurm_cluster(lambda s: s.config_strategy), plan_fields=("slurm",), drift=_SLURM, imports=_SLURM),
        *(_database_row(member, label) for member, label in (
            ("Endpoint", "Slurm accounting database"), ("SecretArn", "Slurm accounting database secret"),
            ("Name", "Slurm accounting database name"), ("Port", "Slurm accounting database port"))),
        Field("VpcConfig.SecurityGroupIds", "security groups", "vpc",
              drift="the node security group, a deploy-time reference", imports="not read by import"),
        Field("VpcConfig.Subnets", "subnets", "vpc", drift="the VPC's private subnets, deploy-time references",
              imports="not read by import"),
        Field("Tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
)
