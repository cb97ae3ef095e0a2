"""The plan: every decision of a spec, made once, as plain frozen data.

``build.build_plan`` (through ``derive_plan``) is the only place that reads a ``GovernanceSpec`` on the way to
the emitters. Charts, constructs, stacks, ``explain``, ``diff``, the pipeline,
the simulator and ``drift`` take the ``Plan`` (or parts of it) and decide
nothing again: mode flags, every generated name, construct key and stack.
``derive_plan`` makes every decision in one pass, the monitoring plan
included (from the parts it has derived, before the ``Plan`` exists); nothing
is patched in afterwards. The invariants' findings are not part of the plan:
``invariants.check_plan`` finds them on it (``build_plan`` raises on the errors;
``invariants.plan_warnings`` gives the warnings). Each part that comes from a list in the spec carries its spec
path (``TeamPlan.path == "teams[3]"``), so findings name it without reading
the spec again. No CDK token ever enters the plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from .. import catalog
from ..spec._base import partition_of
from ..spec.instance_types import spec_catalog
from ..spec.cluster import DEDICATED_KEY, MIG_LABEL, InstanceGroup
from ..spec.models import AddonVersions, GovernanceSpec, HelmChart
from ..spec.monitoring import Monitoring
from . import names
from .access import PrincipalAccess, principal_access
from .addon_defaults import pinned
from .data import ImageRegistriesPlan, TeamStoragePlan, image_registries, storage_plans
from .api_access import ApiSource, api_sources
from .contracts import ConnectionPlan, ContractsPlan, StudioStack, contract_connections, retiring_teams, studio_stacks
from .endpoint_policies import Perimeter, perimeter
from .identity import IdentityPlan, identity_plans
from .kueue import cluster_queue_spec, covered_resources, kueue_manager_config
from .monitoring import MonitoringPlan, cluster_dashboard_pages, monitoring_plan
from .operators import OperatorAddon, kueue_external_frameworks, operator_addons, strict_mode_namespaces
from .quotas import Amounts, TeamPlan, amounts_for, governed_units, mig_profiles, plan_shared_pool, plan_team
from .regions import TaskGovernanceBackend, task_governance_backend
from .sharding import shard_of
from .slurm import SlurmPlan, slurm_plan
from .tools_policy import ToolsPolicyPlan, tools_policies
from .storage import DedicatedPlan, SharedStoragePlan, csi_driver_addon, dedicated_plans, shared_storage_plan

Mode = Literal["task-governance", "kueue"]
# Interface endpoints a private HyperPod/EKS cluster needs (DESIGN.md), in a fixed order; S3 comes as an
# interface endpoint too, so that pods reach it on VPC addresses that their NetworkPolicies allow.
INTERFACE_ENDPOINTS = ("EcrApi", "EcrDkr", "Ec2", "Sts", "Eks", "EksAuth", "Logs", "Monitoring", "SageMakerApi",
                       "Ssm", "S3Interface")
# A Slurm cluster (cluster.orchestrator: slurm) has no EKS API and no pods asking EKS Auth for credentials.
SLURM_INTERFACE_ENDPOINTS = tuple(e for e in INTERFACE_ENDPOINTS if e not in ("Eks", "EksAuth"))


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


def chart_plan(chart: HelmChart, base_dir: Optional[Path]) -> ChartPlan:
    if chart.source == "directory":
        directory = Path(chart.directory or "")
        if not directory.is_absolute():
            directory = (base_dir or Path.cwd()) / directory
        return ChartPlan("directory", None, None, None, directory)
    if chart.source == "oci":  # an OCI reference ends with the chart's name
        return ChartPlan("oci", (chart.oci or "").rstrip("/").rsplit("/", 1)[-1], chart.oci, chart.version, None)
    return ChartPlan("repository", chart.chart, chart.repository, chart.version, None)


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


@dataclass(frozen=True)
class Plan:
    """Every decision of one spec. Built once per run by ``build_plan``."""

    name: str
    mode: Mode
    account: str
    region: str
    partition: str
    cluster: ClusterPlan
    network: NetworkPlan
    cohort: str
    fair_sharing: bool
    idle_compute: str
    teams: tuple[TeamPlan, ...]  # sorted by name; the shared pool, if any, included
    flavors: tuple[FlavorPlan, ...]  # sorted by name
    priority_classes: tuple[PriorityClassPlan, ...]  # sorted by name
    covered_resources: tuple[str, ...]  # Kueue coveredResources, one resource group for all flavors
    principals: tuple[PrincipalAccess, ...]
    identities: tuple[IdentityPlan, ...]
    task_governance_backend: Optional[TaskGovernanceBackend]  # None in kueue mode
    policy_name: str
    stacks: StackLayout
    pipeline: PipelinePlan
    kueue_config: str  # Kueue's controller configuration (kueue mode)
    alerting: Monitoring  # the spec's monitoring settings: the platform's email, thresholds, team dashboards
    shared_pool_asked: Optional[str]  # sharedPool.name when the spec asks for a pool (None: it does not)
    # Instance type facts: the catalog plus the spec's instanceTypes. Look types up here, never in CATALOG.
    catalog: catalog.Catalog
    idle_resource_sharing: bool  # scheduler.idleResourceSharing (SchedulerConfig.IdleResourceSharing)
    contracts: ContractsPlan  # Unified Studio connections and retiring teams
    trusted_accounts: tuple[str, ...]  # accounts.trusted, sorted: whose principals may be given access
    monitoring: MonitoringPlan  # dashboards, alarms and topics, derived in the same pass (monitoring_plan)
    tags: tuple[tuple[str, str], ...]  # the spec's top-level tags, sorted: on every resource of every stack
    storage: tuple[TeamStoragePlan, ...] = ()  # per-team data: the team buckets, sorted by team (plan.data)
    # teams[].access.toolsPolicy: the IAM rights kubeconfig and the HyperPod CLI need, per team (sorted by team)
    tools_policies: tuple[ToolsPolicyPlan, ...] = ()
    # Shared storage and dedicated node groups (plan/storage.py): the file system and each team's volume; the
    # dedicated groups by team and type, with their Kueue flavors.
    shared_storage: Optional[SharedStoragePlan] = field(default=None, kw_only=True)
    dedicated: tuple[DedicatedPlan, ...] = field(default=(), kw_only=True)
    # Slurm-orchestrated clusters (cluster.orchestrator: slurm; plan/slurm.py): accounts, QOS, partitions and
    # POSIX identities. None for EKS.
    slurm: Optional[SlurmPlan] = field(default=None, kw_only=True)

    # --- mode flags: decided here, read everywhere ------------------------------------------------
    @property
    def task_governance(self) -> bool:
        return self.mode == "task-governance"

    @property
    def governance_only(self) -> bool:
        """``cluster.existing``: no capacity is created, only what governs the cluster that runs already."""
        return self.cluster.existing is not None

    @property
    def hyperpod_cluster_arn(self) -> Optional[str]:
        """The governed HyperPod cluster's ARN when the spec knows it (governance-only mode); otherwise the
        capacity stack creates the cluster and its ARN is a deploy-time reference."""
        return self.cluster.existing.hyperpod_arn if self.cluster.existing else None

    @property
    def kubectl_provider_function(self) -> str:
        """Governance-only mode: the name of the kubectl provider's function (the governance stack's)."""
        return names.kubectl_provider(self.name)

    @property
    def kubectl_service_token(self) -> str:
        """Governance-only mode: the ARN every stack's Kubernetes objects are applied through, a plain string."""
        return f"arn:{self.partition}:lambda:{self.region}:{self.account}:function:{self.kubectl_provider_function}"

    @property
    def owns_namespaces(self) -> bool:
        """In task-governance mode HyperPod creates each team namespace with the team's ComputeQuota."""
        return self.mode == "kueue"

    @property
    def emits_kueue_objects(self) -> bool:
        """The task-governance add-on owns the Kueue objects; emitting them would only have them overwritten."""
        return self.mode == "kueue"

    # --- convenience views ---------------------------------------------------------------------
    @property
    def cluster_policy(self) -> ClusterPolicyPlan:
        return ClusterPolicyPlan(self.policy_name, self.cluster.name, tuple((p.name, p.weight) for p in
                                                                           self.priority_classes),
                                 self.fair_sharing, self.idle_resource_sharing)

    @property
    def cluster_name(self) -> str:
        return self.cluster.name

    @property
    def eks_cluster_name(self) -> str:
        return self.cluster.eks_name

    @property
    def instance_groups(self) -> tuple[InstanceGroupPlan, ...]:
        return self.cluster.instance_groups

    @property
    def addon_versions(self) -> dict[str, Optional[str]]:
        """EKS add-on name -> pinned version (the spec's, else plan/addon_defaults.py's for the Kubernetes version)."""
        v = self.cluster.addon_versions
        out: dict[str, Optional[str]] = {
            "vpc-cni": v.vpc_cni,
            "kube-proxy": v.kube_proxy,
            "eks-pod-identity-agent": v.pod_identity_agent,
            "coredns": v.coredns,
            "amazon-cloudwatch-observability": v.cloudwatch_observability,
        }
        if self.task_governance:
            out["amazon-sagemaker-hyperpod-taskgovernance"] = v.task_governance
        out.update(csi_driver_addon(self.shared_storage))  # sharedStorage: the FSx CSI driver (plan/storage.py)
        e = self.cluster.existing
        if e is not None:  # only the add-ons installed on the existing cluster
            out = {k: val for k, val in out.items()
                   if (k == "amazon-cloudwatch-observability" and e.installs_observability)
                   or (k == "amazon-sagemaker-hyperpod-taskgovernance" and e.installs_scheduler)}
        # cluster.operators: their add-ons and prerequisites (plan/operators.py)
        out.update({a.name: a.version for a in self.operator_addons})
        return dict(sorted(out.items()))

    @property
    def strict_mode_namespaces(self) -> tuple[str, ...]:
        """Platform namespaces given an allow-all NetworkPolicy under the VPC CNI's strict mode (plan/operators.py)."""
        return strict_mode_namespaces(creates_cluster=not self.governance_only, addons=self.operator_addons,
                                      dependencies_chart=self.cluster.dependencies_chart is not None)

    @property
    def operator_addons(self) -> tuple[OperatorAddon, ...]:
        """The EKS add-ons of ``cluster.operators``, prerequisites first (plan/operators.py)."""
        return operator_addons(self.cluster.operators, self.cluster.addon_versions)

    @property
    def tenants(self) -> tuple[TeamPlan, ...]:
        """The spec's teams (the shared pool left out)."""
        return tuple(t for t in self.teams if not t.is_shared_pool)

    @property
    def shared_pool(self) -> Optional[TeamPlan]:
        return next((t for t in self.teams if t.is_shared_pool), None)

    def team(self, name: str) -> TeamPlan:
        for t in self.teams:
            if t.name == name:
                return t
        raise KeyError(name)

    def cluster_queue_spec(self, team: TeamPlan) -> dict[str, Any]:
        return cluster_queue_spec(self.cohort, self.covered_resources, team, dedicated=self.dedicated)

    def capacity(self) -> dict[str, int]:
        """Instances per instance type."""
        return {f.instance_type: f.instances for f in self.flavors}

    def flavor(self, instance_type: str) -> FlavorPlan:
        for f in self.flavors:
            if f.instance_type == instance_type:
                return f
        raise KeyError(instance_type)

    def unallocated(self, instance_type: str) -> int:
        """Capacity of one type that no team's quota holds, in the unit its quotas are counted in (partitions,
        accelerators or vCPU); the shared pool's holding counts as unallocated."""
        f = self.flavor(instance_type)
        owned = sum(f.governed(q.nominal) for t in self.tenants for q in t.flavors if q.instance_type == instance_type)
        return max(f.governed(f.capacity) - owned, 0)


def availability_zones(spec: GovernanceSpec) -> tuple[str, ...]:
    """AZs from the spec, or the region's first ``maxAzs`` letters (no lookup, so synth stays offline); for an
    existing VPC one per private subnet (the region's a, b, ... in order where the spec names none)."""
    vpc = spec.cluster.vpc
    if vpc.availability_zones:
        return tuple(vpc.availability_zones)
    region = spec.accounts.capacity.region
    count = len(vpc.private_subnet_ids) if vpc.vpc_id else vpc.max_azs  # fromApp: the app's VPC has its own
    return tuple(f"{region}{'abcdefghijklmnop'[i % 16]}" for i in range(count))


def network_plan(spec: GovernanceSpec) -> NetworkPlan:
    vpc = spec.cluster.vpc
    private, public = subnet_masks(vpc.cidr, vpc.max_azs)
    existing = None
    if vpc.vpc_id is not None or vpc.from_app:
        existing = ExistingVpcPlan(vpc.vpc_id, tuple(vpc.private_subnet_ids), bool(vpc.create_endpoints),
                                   vpc.create_flow_logs)
    wanted = SLURM_INTERFACE_ENDPOINTS if spec.cluster.orchestrator == "slurm" else INTERFACE_ENDPOINTS
    endpoints = wanted if existing is None or existing.create_endpoints else ()
    return NetworkPlan(cidr=vpc.cidr, availability_zones=availability_zones(spec), private_mask=private,
                       public_mask=public, interface_endpoints=endpoints, existing=existing,
                       perimeter=perimeter(spec.accounts, partition_of(spec.accounts.capacity.region)))


def subnet_masks(cidr: str, azs: int) -> tuple[int, int]:
    """(private, public) prefix lengths: private subnets take half the VPC, public ones are small (NAT only)."""
    prefix = int(cidr.split("/")[1])
    private = prefix + max(1, math.ceil(math.log2(azs))) + 1
    return private, min(28, private + 4)


def _cluster(spec: GovernanceSpec, base_dir: Optional[Path], cat: catalog.Catalog) -> ClusterPlan:
    c = spec.cluster
    groups = tuple(_group(g, i, cat) for i, g in sorted(enumerate(c.instance_groups), key=lambda ig: ig[1].name))
    admin_index = {arn: i for i, arn in reversed(list(enumerate(c.admins)))}  # the first listing of each ARN
    e = c.existing
    eks_name = e.eks_cluster_name if e else names.eks_cluster(c.name)
    return ClusterPlan(
        name=c.name,
        eks_name=eks_name,
        eks_arn=f"arn:{partition_of(spec.accounts.capacity.region)}:eks:{spec.accounts.capacity.region}:"
                f"{spec.accounts.capacity.id}:cluster/{eks_name}",
        kubernetes_version=c.kubernetes_version,
        authentication_mode=c.authentication_mode,
        endpoint_access=c.endpoint_access,
        admin_cidrs=tuple(c.admin_cidrs),
        admins=tuple(AdminPlan(arn, names.principal_key(arn), path=f"cluster.admins[{admin_index[arn]}]")
                     for arn in sorted(c.admins)),
        instance_groups=groups,
        addon_versions=pinned(c.addon_versions, c.kubernetes_version),  # every add-on pinned (addon_defaults)
        dependencies_chart=chart_plan(c.dependencies_chart, base_dir) if c.dependencies_chart else None,
        lifecycle_bucket=names.lifecycle_bucket(spec.name, spec.accounts.capacity.id, spec.accounts.capacity.region),
        node_recovery=c.node_recovery,
        node_provisioning_mode=c.node_provisioning_mode,
        # With existing, the cluster runs its own operators unless the spec lists the ones to install.
        operators=tuple(sorted(set(c.operators))) if e is None or "operators" in c.model_fields_set else (),
        image_registries=image_registries(spec, partition_of(spec.accounts.capacity.region)),
        viewers=tuple(sorted(set(c.viewers))),
        member_cluster_reads=c.member_cluster_reads,
        existing=ExistingClusterPlan(
            hyperpod_arn=e.hyper_pod_cluster_arn, vpc_id=e.vpc_id, subnet_ids=tuple(e.subnet_ids),
            security_group_id=e.security_group_id, installs_scheduler=e.installs.scheduler,
            installs_observability=e.installs.observability, self_managed_kueue=e.self_managed_kueue,
        ) if e else None,
        api_access=api_sources(c),
    )


# Deep health checks HyperPod runs on an accelerated node when the spec names none: they stress accelerators and
# their interconnect, which CPU types do not have.
DEFAULT_DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")


def _group(g: InstanceGroup, index: int, cat: catalog.Catalog) -> InstanceGroupPlan:
    accelerated = cat.lookup(g.instance_type).accelerators > 0
    if g.deep_health_checks is not None:
        checks = tuple(g.deep_health_checks)
    else:
        checks = DEFAULT_DEEP_HEALTH_CHECKS if accelerated else ()
    lifecycle = (LifecyclePlan(g.lifecycle.source_s3_uri, g.lifecycle.on_create, g.lifecycle.bucket,
                               g.lifecycle.prefix) if g.lifecycle else None)
    return InstanceGroupPlan(
        g.name, g.instance_type, g.count, g.volume_size_gb, accelerated, g.mig.profile if g.mig else None,
        path=f"cluster.instanceGroups[{index}]",
        training_plan_arn=g.training_plan_arn,
        subnet_ids=tuple(sorted(g.subnet_ids)),
        labels=tuple(sorted(g.labels.items())),
        # A dedicated group's taint joins the spec's (which may not use its key): KubernetesConfig.Taints.
        taints=tuple(sorted((*(TaintPlan(t.key, t.value, t.effect) for t in g.taints),
                             *((TaintPlan(DEDICATED_KEY, g.dedicated_to, "NoSchedule"),) if g.dedicated_to else ())),
                            key=lambda t: (t.key, t.effect))),
        lifecycle=lifecycle,
        volume_kms_key_id=g.volume_kms_key_id,
        deep_health_checks=checks,
        deep_health_checks_given=g.deep_health_checks is not None,
        threads_per_core=g.threads_per_core,
        dedicated_to=g.dedicated_to,
    )


def stack_layout(spec: GovernanceSpec, teams: tuple[TeamPlan, ...], principals: tuple[PrincipalAccess, ...],
                 identities: tuple[IdentityPlan, ...], connections: tuple[ConnectionPlan, ...]) -> StackLayout:
    """Every stack of the capacity and consumer accounts, named and filled: the one place that decides it."""
    d = spec.deployment

    def shards(keys: list[str], count: int, label) -> tuple[Shard, ...]:
        groups: dict[int, list[str]] = {}
        for key in keys:
            groups.setdefault(shard_of(key, count), []).append(key)
        return tuple(Shard(names.stack(spec.name, label(i)), i, tuple(sorted(groups[i]))) for i in sorted(groups))

    consumers = []
    for c in sorted(spec.accounts.consumers, key=lambda c: c.name):
        mine = tuple(i for i in identities if i.consumer == c.name)
        if mine:
            consumers.append(ConsumerStack(names.stack(spec.name, f"consumer-{c.name}"), c.name, c.id, c.region, mine))
    # The first cluster dashboard page lives in the monitoring stack, each further page in a stack of its own: a page
    # stays in its stack when teams are added (rows shift between pages in place), and no stack nears 1 MB.
    if spec.cluster.orchestrator == "slurm":
        return slurm_stack_layout(spec)
    pages = cluster_dashboard_pages(tuple(t.name for t in teams))
    return StackLayout(
        capacity=None if spec.cluster.existing else names.stack(spec.name, "capacity"),
        governance=names.stack(spec.name, "governance"),
        monitoring=names.stack(spec.name, "monitoring"),
        access=shards([p.principal_arn for p in principals], d.access_stacks, names.access_shard),
        teams=shards([t.name for t in teams if not t.is_shared_pool], d.team_stacks, names.team_shard),
        consumers=tuple(consumers),
        pipeline=names.stack(spec.name, "pipeline"),
        dashboards=tuple(names.stack(spec.name, names.dashboards_shard(i)) for i in range(1, len(pages))),
        team_shards=d.team_stacks,
        access_shards=d.access_stacks,
        studio=studio_stacks(spec.name, connections),
    )


# Slurm stacks (cluster.orchestrator: slurm; docs/slurm-stacks.md): the capacity stack alone holds the cluster and
# the governance it applies on the controller; the EKS-only stacks (governance, monitoring, access, teams,
# consumer roles, Unified Studio connections) have nothing to hold.
def slurm_stack_layout(spec: GovernanceSpec) -> StackLayout:
    """The stacks of a Slurm spec: the capacity stack (and the pipeline's name)."""
    d = spec.deployment
    return StackLayout(capacity=names.stack(spec.name, "capacity"), governance=None, monitoring=None, access=(),
                       teams=(), consumers=(), pipeline=names.stack(spec.name, "pipeline"), dashboards=(),
                       team_shards=d.team_stacks, access_shards=d.access_stacks, studio=())


def _pipeline(spec: GovernanceSpec) -> PipelinePlan:
    p = spec.deployment.pipeline
    return PipelinePlan(
        name=names.code_pipeline(spec.name),
        account=(p.account if p else None) or spec.accounts.capacity.id,
        region=(p.region if p else None) or spec.accounts.capacity.region,
        repository=p.repository if p else None,
        branch=p.branch if p else "main",
        connection_arn=p.connection_arn if p else None,
    )


def _mig_resource(facts: catalog.InstanceType, profile: Optional[str]) -> Optional[str]:
    found = facts.mig_profile(profile) if profile else None
    return found.resource if found else None


def derive_plan(spec: GovernanceSpec, base_dir: Optional[Path]) -> Plan:
    """Every decision of the spec in one pass, unchecked (``build.build_plan`` checks the invariants on it)."""
    region = spec.accounts.capacity.region
    partition = partition_of(region)
    cat = spec_catalog(spec)
    migs = mig_profiles(spec)
    teams = [plan_team(spec, t, cat, path=f"teams[{i}]") for i, t in enumerate(spec.teams)]
    pool = plan_shared_pool(spec, cat)
    if pool is not None:
        teams.append(pool)
    sorted_teams = tuple(sorted(teams, key=lambda t: t.name))
    flavors = tuple(
        FlavorPlan(names.flavor(t), t, n, cat.lookup(t).accelerator_kind,
                   _mig_resource(cat.lookup(t), migs.get(t)),
                   per_instance=amounts_for(t, count=1, mig_profile=migs.get(t), catalog=cat),
                   capacity=amounts_for(t, count=n, mig_profile=migs.get(t), catalog=cat))
        for t, n in spec.cluster.capacity.items()
    )
    principals = principal_access(spec)
    identities = identity_plans(spec, partition=partition)
    stacks = stack_layout(spec, sorted_teams, principals, identities, contract_connections(spec))
    mode: Mode = spec.scheduler.mode
    fair_sharing = spec.scheduler.idle_compute == "fair-share"
    covered = covered_resources([f.accelerator_kind for f in flavors if not f.mig_resource],
                                [f.mig_resource for f in flavors])
    monitoring = monitoring_plan(_Governed(spec.name, region, spec.monitoring, sorted_teams, flavors, covered,
                                           spec.cluster.eks_cluster_name))
    cluster = _cluster(spec, base_dir, cat)
    return Plan(
        name=spec.name,
        mode=mode,
        account=spec.accounts.capacity.id,
        region=region,
        partition=partition,
        cluster=cluster,
        network=network_plan(spec),
        cohort=names.cohort(spec.name),
        fair_sharing=fair_sharing,
        idle_compute=spec.scheduler.idle_compute,
        teams=sorted_teams,
        flavors=flavors,
        priority_classes=tuple(
            sorted(
                (PriorityClassPlan(p.name, names.priority_class(p.name), p.weight)
                 for p in spec.scheduler.priority_classes),
                key=lambda p: p.name,
            )
        ),
        covered_resources=covered,
        principals=principals,
        identities=identities,
        task_governance_backend=(
            task_governance_backend(region, spec.scheduler.task_governance_resources)
            if mode == "task-governance" else None
        ),
        policy_name=names.cluster_policy(spec.name),
        stacks=stacks,
        pipeline=_pipeline(spec),
        kueue_config=kueue_manager_config(fair_sharing, external_frameworks=kueue_external_frameworks(cluster.operators)),
        alerting=spec.monitoring,
        shared_pool_asked=spec.shared_pool.name if spec.shared_pool else None,
        catalog=cat,
        idle_resource_sharing=spec.scheduler.idle_resource_sharing,
        contracts=ContractsPlan(studio=stacks.studio, retiring=retiring_teams(spec)),
        trusted_accounts=tuple(sorted(spec.accounts.trusted)),
        monitoring=monitoring,
        tags=tuple(sorted(spec.tags.items())),
        storage=storage_plans(spec, identities),
        tools_policies=tools_policies(spec, partition=partition, eks_name=spec.cluster.eks_cluster_name),
        shared_storage=shared_storage_plan(spec),
        dedicated=dedicated_plans(spec, cat, migs),
        slurm=slurm_plan(spec, sorted_teams, cat),
    )


@dataclass(frozen=True)
class _Governed:
    """The parts the monitoring plan reads (``monitoring.Governed``), before the plan that holds them exists."""

    name: str
    region: str
    alerting: Monitoring
    teams: tuple[TeamPlan, ...]
    flavors: tuple[FlavorPlan, ...]
    covered_resources: tuple[str, ...]
    eks_cluster_name: str
