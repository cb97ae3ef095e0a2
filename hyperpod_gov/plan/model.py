"""The ``Plan``: every decision of one spec, as one frozen dataclass of its parts (``plan.py`` says what it holds;
``derive.py`` builds it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Optional

from .. import catalog
from ..spec.monitoring import Monitoring
from . import names
from .access import PrincipalAccess
from .contracts import ContractsPlan
from .data import TeamStoragePlan
from .identity import IdentityPlan
from .kueue import cluster_queue_spec
from .monitoring import MonitoringPlan
from .prometheus import ADDON as PROMETHEUS_ADDON, PrometheusPlan, prometheus_plan
from .operators import OperatorAddon, OperatorChart, operator_addons, operator_charts, strict_mode_namespaces
from .parts import (
    ClusterPlan,
    ClusterPolicyPlan,
    FlavorPlan,
    InstanceGroupPlan,
    NetworkPlan,
    PipelinePlan,
    PriorityClassPlan,
    StackLayout,
)
from .quotas import TeamPlan
from .regions import TaskGovernanceBackend
from .scheduling import GangSchedulingPlan, TopologyPlan
from .slurm import SlurmPlan
from .storage import DedicatedPlan, SharedStoragePlan, csi_driver_addon
from .tools_policy import ToolsPolicyPlan
from .workloads import model_reads


Mode = Literal["task-governance", "kueue"]


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
    # Scheduling controls (plan/scheduling.py): scheduler.gangScheduling and scheduler.topology. None: not set.
    gang_scheduling: Optional[GangSchedulingPlan] = field(default=None, kw_only=True)
    topology: Optional[TopologyPlan] = field(default=None, kw_only=True)

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
        if self.alerting.prometheus is not None and self.slurm is None:  # monitoring.prometheus: the EKS add-on
            out[PROMETHEUS_ADDON] = v.hyperpod_observability
        e = self.cluster.existing
        if e is not None:  # only the add-ons installed on the existing cluster
            out = {k: val for k, val in out.items()
                   if (k == "amazon-cloudwatch-observability" and e.installs_observability) or k == PROMETHEUS_ADDON
                   or (k == "amazon-sagemaker-hyperpod-taskgovernance" and e.installs_scheduler)}
        # cluster.operators: their add-ons and prerequisites (plan/operators.py)
        out.update({a.name: a.version for a in self.operator_addons})
        return dict(sorted(out.items()))

    @cached_property
    def prometheus(self) -> Optional[PrometheusPlan]:
        """monitoring.prometheus and monitoring.grafana: the add-on, alerting rules and dashboards
        (plan/prometheus.py); None without them."""
        shard_of = {team: shard.name for shard in self.stacks.teams for team in shard.members}
        return prometheus_plan(self.alerting, (t.monitoring for t in self.teams if t.monitoring is not None),
                               self.cluster.addon_versions.hyperpod_observability,
                               lambda team, key: names.alarm_topic(self.name, key, shard_of.get(team, "")),
                               names.prometheus_workspace(self.name),
                               slurm_extension=None if self.slurm is None
                               else self.cluster.addon_versions.observability_extension)

    @property
    def strict_mode_namespaces(self) -> tuple[str, ...]:
        """Platform namespaces given an allow-all NetworkPolicy under the VPC CNI's strict mode (plan/operators.py)."""
        return strict_mode_namespaces(creates_cluster=not self.governance_only, addons=self.operator_addons,
                                      dependencies_chart=self.cluster.dependencies_chart is not None,
                                      charts=self.operator_charts)

    @property
    def operator_addons(self) -> tuple[OperatorAddon, ...]:
        """The EKS add-ons of ``cluster.operators``, prerequisites first (plan/operators.py)."""
        return operator_addons(self.cluster.operators, self.cluster.addon_versions, model_reads(self.tenants))

    @property
    def operator_charts(self) -> tuple[OperatorChart, ...]:
        """The Helm charts of ``cluster.operators`` (KubeRay for ray; plan/operators.py)."""
        return operator_charts(self.cluster.operators, self.cluster.addon_versions)

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
        return cluster_queue_spec(self.cohort, self.covered_resources, team, dedicated=team.dedicated)

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
