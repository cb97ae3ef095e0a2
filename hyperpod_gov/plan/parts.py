"""The plan's parts (``plan.py``): the cluster, its instance groups, network, flavors, priority classes, admins,
the stack layout and the pipeline, as plain frozen data. ``derive_cluster.py`` and ``derive_stacks.py`` build them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..spec.cluster import DEDICATED_KEY, MIG_LABEL
from ..spec.elastic import guaranteed_instances
from ..spec.models import AddonVersions
from .api_access import ApiSource
from .contracts import StudioStack
from .data import ImageRegistriesPlan
from .endpoint_policies import Perimeter
from .identity import IdentityPlan
from .quotas import Amounts, governed_units
from .slurm import AccountingDatabasePlan, SlurmGroupPlan


@dataclass(frozen=True)
class PriorityClassPlan:
    name: str  # as in the spec
    kueue_name: str  # WorkloadPriorityClass name
    weight: int


@dataclass(frozen=True)
class ClusterPolicyPlan:
    """The task-governance cluster policy (``ClusterSchedulerConfig``) of the cluster."""

    name: str
    cluster_name: str  # HyperPod
    priority_classes: tuple[tuple[str, int], ...]  # (spec name, weight), sorted by name
    fair_sharing: bool
    idle_resource_sharing: bool


@dataclass(frozen=True)
class FlavorPlan:
    name: str
    instance_type: str
    instances: int
    accelerator_kind: Optional[str]
    mig_resource: Optional[str] = None  # the GPUs are partitioned: nvidia.com/<profile> instead of accelerator_kind
    per_instance: Amounts = field(kw_only=True)  # what one instance brings (its GPUs as partitions when partitioned)
    capacity: Amounts = field(kw_only=True)  # what all the cluster's instances of the type bring

    def governed(self, amounts: Amounts) -> int:
        """``amounts`` in the unit a quota on this type is counted in (partitions, accelerators or vCPU)."""
        return governed_units(amounts, self.accelerator_kind, self.mig_resource)


@dataclass(frozen=True)
class TaintPlan:
    key: str
    value: Optional[str]
    effect: str  # NoSchedule | PreferNoSchedule | NoExecute


@dataclass(frozen=True)
class LifecyclePlan:
    """Where a group's lifecycle scripts are: the shipped ones (``own`` False) or the spec's bucket and prefix."""

    source_s3_uri: str
    on_create: str
    bucket: Optional[str] = None  # own scripts: the bucket the execution role may read
    prefix: str = ""  # own scripts: the key prefix under it ("" for the whole bucket)

    @property
    def own(self) -> bool:
        return self.bucket is not None


@dataclass(frozen=True)
class PatchingPlan:
    """``instanceGroups[].patching`` in the service's terms: ScheduledUpdateConfig and AutoPatchConfig share the
    DeploymentConfig (batch, wait, rollback alarms)."""

    schedule_expression: Optional[str]  # cron(...): the one-time start or the recurring schedule; None: none
    auto: Optional[str]  # AutoPatchConfig.PatchingStrategy (WhenIdle | WhenAllIdle); None: no automatic patches
    batch: Optional[tuple[str, int]] = None  # MaximumBatchSize (Type, Value)
    wait_seconds: Optional[int] = None
    rollback_alarms: tuple[str, ...] = ()  # sorted

    @property
    def deployment_config(self) -> Optional[dict[str, Any]]:
        out: dict[str, Any] = {}
        if self.rollback_alarms:
            out["AutoRollbackConfiguration"] = [{"AlarmName": a} for a in self.rollback_alarms]
        if self.batch is not None:
            out["RollingUpdatePolicy"] = {"MaximumBatchSize": {"Type": self.batch[0], "Value": self.batch[1]}}
        if self.wait_seconds is not None:
            out["WaitIntervalInSeconds"] = self.wait_seconds
        return out or None


@dataclass(frozen=True)
class InstanceGroupPlan:
    name: str
    instance_type: str
    count: int
    volume_size_gb: Optional[int]
    accelerated: bool  # deep health checks stress accelerators and their interconnect
    mig_profile: Optional[str] = None  # every GPU partitioned into this MIG profile (instanceGroups[].mig)
    path: str = field(kw_only=True, compare=False)  # "cluster.instanceGroups[1]": where the spec declares it
    training_plan_arn: Optional[str] = field(default=None, kw_only=True)
    subnet_ids: tuple[str, ...] = field(default=(), kw_only=True)  # OverrideVpcConfig.Subnets, sorted; () none
    labels: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)  # the spec's labels, sorted by key
    taints: tuple[TaintPlan, ...] = field(default=(), kw_only=True)  # sorted by key and effect
    lifecycle: Optional[LifecyclePlan] = field(default=None, kw_only=True)  # None: the shipped scripts
    volume_kms_key_id: Optional[str] = field(default=None, kw_only=True)
    deep_health_checks: tuple[str, ...] = field(default=(), kw_only=True)  # resolved: the spec's or the default
    deep_health_checks_given: bool = field(default=False, kw_only=True)  # the spec names them (drift compares)
    threads_per_core: Optional[int] = field(default=None, kw_only=True)
    dedicated_to: Optional[str] = field(default=None, kw_only=True)  # instanceGroups[].dedicatedTo: the team
    # a Slurm cluster's group: its Slurm role (SlurmConfig: node type, partition); None with EKS
    slurm: Optional[SlurmGroupPlan] = field(default=None, kw_only=True)
    # elastic capacity (issue 57): a flexible group's types in the spec's order of preference (() one type),
    # MinInstanceCount, on-demand | spot, the node image and the patching window
    instance_types: tuple[str, ...] = field(default=(), kw_only=True)
    min_count: Optional[int] = field(default=None, kw_only=True)
    capacity_type: str = field(default="on-demand", kw_only=True)
    image_id: Optional[str] = field(default=None, kw_only=True)
    image_release_version: Optional[str] = field(default=None, kw_only=True)
    patching: Optional[PatchingPlan] = field(default=None, kw_only=True)
    autoscaled: bool = field(default=False, kw_only=True)  # cluster.autoScaling: Karpenter scales the group

    @property
    def types(self) -> tuple[str, ...]:
        """Every instance type the group may run (a flexible group's, else its one type)."""
        return self.instance_types or (self.instance_type,)

    @property
    def guaranteed(self) -> int:
        """On-Demand instances the group keeps: none on Spot or where Karpenter scales it (from 0); else minCount
        where set (the group is InService with that many, and continuous provisioning adds the rest), else count."""
        return guaranteed_instances(self.count, self.min_count, self.capacity_type, self.autoscaled)

    @property
    def interruptible(self) -> int:
        """Instances that can be reclaimed with the work on them: a Spot group's count."""
        return self.count if self.capacity_type == "spot" else 0

    @property
    def elastic(self) -> int:
        """On-Demand instances there only after a scale-up (Karpenter's, or continuous provisioning's above
        minCount)."""
        return self.count - self.guaranteed - self.interruptible

    @property
    def instance_count(self) -> int:
        """InstanceCount as created: 0 where Karpenter scales the group (AWS: it starts at 0 and scales it there
        otherwise), else count."""
        return 0 if self.autoscaled else self.count

    @property
    def kubernetes_labels(self) -> dict[str, str]:
        """Node labels HyperPod applies to the group (``KubernetesConfig.Labels``), sorted: the spec's labels and,
        on a partitioned group, ``nvidia.com/mig.config: all-<profile>``, which has HyperPod's GPU operator
        partition every GPU, and on a dedicated group ``hyperpod-gov.io/dedicated: <team>`` (the spec refuses
        labels of those keys, so they never conflict)."""
        out = dict(self.labels)
        if self.mig_profile is not None:
            out[MIG_LABEL] = "all-" + self.mig_profile.removeprefix("mig-")
        if self.dedicated_to is not None:
            out[DEDICATED_KEY] = self.dedicated_to
        return dict(sorted(out.items()))


@dataclass(frozen=True)
class ExistingVpcPlan:
    """An existing VPC the cluster goes into (``cluster.vpc.vpcId``; or, with ``vpc_id`` None, the ``ec2.IVpc`` the
    CDK app gives ``HyperPodGovernance``, ``cluster.vpc.fromApp``): nothing is looked up at synth."""

    vpc_id: Optional[str]
    private_subnet_ids: tuple[str, ...]  # in the spec's order, one per availability_zones entry
    create_endpoints: bool
    create_flow_logs: bool


@dataclass(frozen=True)
class NetworkPlan:
    cidr: str
    availability_zones: tuple[str, ...]
    private_mask: int
    public_mask: int
    interface_endpoints: tuple[str, ...]  # the endpoints created: () with an existing VPC that has its own
    existing: Optional[ExistingVpcPlan] = field(default=None, kw_only=True)  # None: a new VPC
    # endpoint policies: whose principals and resources the endpoints admit (None: no policy, as before)
    perimeter: Optional[Perimeter] = field(default=None, kw_only=True)

    @property
    def creates_vpc(self) -> bool:
        return self.existing is None

    @property
    def flow_logs(self) -> bool:
        """A new VPC always gets flow logs; an existing one where the spec asks."""
        return self.existing is None or self.existing.create_flow_logs

    @property
    def gateway_endpoint(self) -> bool:
        """The S3 gateway endpoint needs the private route tables: only a new VPC has them in the plan."""
        return self.existing is None


@dataclass(frozen=True)
class ChartPlan:
    """Where the HyperPod dependencies Helm chart comes from: exactly one of a repository, an OCI reference or a
    directory (resolved against the spec's folder)."""

    source: str  # repository | oci | directory
    chart: Optional[str]  # chart name (repository and oci)
    repository: Optional[str]  # Helm repository URL or OCI reference
    version: Optional[str]
    directory: Optional[Path]


@dataclass(frozen=True)
class AdminPlan:
    principal_arn: str
    key: str  # construct id: readable name plus a hash of the whole ARN
    path: str = field(kw_only=True, compare=False)  # "cluster.admins[0]": where the spec lists it


@dataclass(frozen=True)
class ExistingClusterPlan:
    """A HyperPod cluster that runs already (``cluster.existing``): governance-only mode."""

    hyperpod_arn: str  # the cluster policy's and quotas' ClusterArn, a plain string (no stack exports it)
    vpc_id: str
    subnet_ids: tuple[str, ...]  # where the kubectl handler runs, in the spec's order
    security_group_id: str  # the kubectl handler's
    installs_scheduler: bool  # the task-governance add-on or the Kueue chart (scheduler.mode)
    installs_observability: bool  # the CloudWatch Observability add-on
    self_managed_kueue: bool  # a Kueue outside the add-on runs there
    # existing.networkPolicyEnforcement: vpc-cni, other (with the spec's reason), or None (not stated: HPG-E006)
    network_policy_enforcer: Optional[str] = field(default=None, kw_only=True)
    network_policy_reason: Optional[str] = field(default=None, kw_only=True)
    # existing.operators: HyperPod operators that run there already, installed outside hyperpod-gov (sorted)
    operators: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class SlurmOrchestratorPlan:
    """A Slurm cluster's ``Orchestrator.Slurm``: how HyperPod treats slurm.conf and the external accounting
    database the spec names (None: HyperPod's own)."""

    config_strategy: str  # Managed | Overwrite | Merge
    accounting_database: Optional[AccountingDatabasePlan]


@dataclass(frozen=True)
class ClusterPlan:
    name: str  # HyperPod
    eks_name: str
    eks_arn: str  # arn:<partition>:eks:<region>:<account>:cluster/<eks_name>, known before deploy
    kubernetes_version: str
    authentication_mode: str  # API (default) or API_AND_CONFIG_MAP
    endpoint_access: str
    admin_cidrs: tuple[str, ...]
    admins: tuple[AdminPlan, ...]
    instance_groups: tuple[InstanceGroupPlan, ...]  # sorted by name
    addon_versions: AddonVersions
    dependencies_chart: Optional[ChartPlan]  # None: not installed (synth warns)
    lifecycle_bucket: str
    node_recovery: str = field(default="Automatic", kw_only=True)  # cluster.nodeRecovery: Automatic | None
    node_provisioning_mode: Optional[str] = field(default=None, kw_only=True)  # Continuous, or the service's default
    existing: Optional[ExistingClusterPlan] = field(default=None, kw_only=True)  # governance-only mode: the cluster runs already
    # cluster.operators: the HyperPod operators installed (sorted); with existing, only the ones the spec lists
    operators: tuple[str, ...] = field(default=(), kw_only=True)
    # cluster.imageRegistries (per-team data): None keeps the nodes' pull right on every repository of the region
    image_registries: Optional[ImageRegistriesPlan] = field(default=None, kw_only=True)
    # cluster.viewers (sorted ARNs, read-only everywhere) and cluster.memberClusterReads (charts/cluster_rbac.py)
    viewers: tuple[str, ...] = field(default=(), kw_only=True)
    member_cluster_reads: bool = field(default=True, kw_only=True)
    # cluster.apiAccess: networks admitted to the private API endpoint on 443, sorted by kind and value
    api_access: tuple[ApiSource, ...] = field(default=(), kw_only=True)
    # cluster.orchestrator: slurm: Orchestrator.Slurm (None: the EKS orchestrator, Orchestrator.Eks)
    slurm: Optional[SlurmOrchestratorPlan] = field(default=None, kw_only=True)
    # cluster.autoScaling: karpenter (AutoScaling, ClusterRole, NodeClass and NodePool per group); None: fixed counts
    auto_scaling: Optional[str] = field(default=None, kw_only=True)


@dataclass(frozen=True)
class Shard:
    """One stack of a sharded group: its name, index and members (team names or principal ARNs), sorted."""

    name: str
    index: int
    members: tuple[str, ...]


@dataclass(frozen=True)
class ConsumerStack:
    name: str
    account_name: str
    account: str
    region: str
    identities: tuple[IdentityPlan, ...]


@dataclass(frozen=True)
class StackLayout:
    """Stack names and what goes where. ``cdk deploy`` and the pipeline use the same names."""

    capacity: Optional[str]  # None in governance-only mode: the cluster runs already
    governance: Optional[str]  # None for a Slurm cluster: its governance runs on the controller (docs/slurm-stacks.md)
    monitoring: Optional[str]  # the shared alarm key, the platform topic and the cluster dashboards; None for Slurm
    access: tuple[Shard, ...]  # access entries, sharded by a hash of the principal ARN
    teams: tuple[Shard, ...]  # per-team resources, sharded by a hash of the team name
    consumers: tuple[ConsumerStack, ...]
    pipeline: str
    dashboards: tuple[str, ...]  # cluster dashboard pages 2, 3, ...: one stack each (page 1 is in monitoring)
    team_shards: int  # deployment.teamStacks: how many shards the teams are hashed into
    access_shards: int  # deployment.accessStacks
    studio: tuple[StudioStack, ...]  # Unified Studio connections, one stack per domain account and region

    def team_stack(self, team: str) -> Shard:
        return next(s for s in self.teams if team in s.members)

    @property
    def all_names(self) -> tuple[str, ...]:
        return (*((self.capacity,) if self.capacity else ()), *(n for n in (self.governance, self.monitoring) if n),
                *self.dashboards, *(s.name for s in self.access),
                *(s.name for s in self.teams),
                *(c.name for c in self.consumers), *(s.name for s in self.studio))


@dataclass(frozen=True)
class PipelinePlan:
    name: str  # CodePipeline name
    account: str
    region: str
    repository: Optional[str]
    branch: str
    connection_arn: Optional[str]
