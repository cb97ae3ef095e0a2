"""Quota arithmetic: what each team owns, may lend and may borrow, in Kueue units.

Pure functions over a validated spec. Amounts are whole units: accelerators,
vCPU, GiB of memory and MIG partitions per profile. Percentages round down.
Every instance type fact comes from the spec's ``catalog.Catalog``
(``spec.instance_types.spec_catalog``): catalogued types and the ones the spec declares.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal, Optional

from ..catalog import Catalog
from ..spec.instance_types import group_mig_profiles, spec_catalog
from ..spec.models import DEFAULT_BORROW_LIMIT_PERCENT, Contract, GovernanceSpec, Team
from ..spec.monitoring import AlarmOverrides
from . import names
from .amounts import ZERO, Allocated, Amounts, allocation_amounts, amounts_for, governed_units  # noqa: F401
from .data import TeamStoragePlan
from .identity import IdentityPlan
from .network import EgressPlan, egress_plan
from .slurm_accounts import SlurmTeamPlan  # slurm.py plans its teams from TeamPlan: it imports this module
from .storage import DedicatedPlan, TeamVolumePlan  # its amounts come from amounts.py, not from here
from .tools_policy import ToolsPolicyPlan
from .watches import TeamWatch

Strategy = Literal["Lend", "DontLend", "LendAndBorrow"]
PodSecurityLevel = Literal["baseline", "restricted"]


@dataclass(frozen=True)
class FlavorQuota:
    """A team's quota on one instance type, with its sharing limits."""

    instance_type: str
    accelerator_kind: Optional[str]
    nominal: Amounts
    lending_limit: Optional[Amounts]  # None: may lend all of nominal
    borrowing_limit: Optional[Amounts]  # None: unlimited (never emitted by this library)
    # The quota as the spec gave it (for ComputeQuota): exactly one of whole instances, accelerators,
    # vCPU with memory, or MIG partitions.
    count: Optional[int] = None
    accelerators: Optional[int] = None
    vcpu: Optional[int] = None
    memory_gib: Optional[int] = None
    partition: Optional[tuple[str, int]] = None  # (MIG profile, count)
    mig_resource: Optional[str] = None  # the type's GPUs are partitioned: nvidia.com/<profile>, else None

    @property
    def governed_resource(self) -> str:
        """The Kueue resource this flavor's quota is counted in: a MIG partition, the accelerator, or cpu."""
        return self.mig_resource or self.accelerator_kind or "cpu"

    def governed(self, amounts: "Amounts") -> int:
        """``amounts`` in the unit of ``governed_resource`` (partitions, accelerators or vCPU)."""
        return governed_units(amounts, self.accelerator_kind, self.mig_resource)

    @property
    def given(self) -> Optional[Allocated]:
        """The quota as the spec gave it, None where the team owns nothing of this type."""
        if all(v is None for v in (self.count, self.accelerators, self.vcpu, self.partition)):
            return None
        return Allocated(self.instance_type, self.count, self.accelerators, self.vcpu, self.memory_gib,
                         self.partition)


@dataclass(frozen=True)
class TeamPlan:
    """Everything a team gets, derived from the spec."""

    name: str
    namespace: str
    cluster_queue: str
    local_queue: str
    viewers_group: str
    submitters_group: str
    fair_share_weight: int
    strategy: Strategy
    borrow_limit_percent: int  # 0 when the team cannot borrow
    preempt_team_tasks: str
    flavors: tuple[FlavorQuota, ...]  # every flavor of the cluster, sorted; nominal 0 where it owns none
    is_shared_pool: bool = False
    quota_name: str = ""  # ComputeQuota name (task-governance mode)
    queue_reader: str = ""  # ClusterRole that lets the team read its own ClusterQueue
    contract: Optional[Contract] = None
    egress: tuple[EgressPlan, ...] = ()  # sorted, link-local carved out
    service_accounts: tuple[str, ...] = ()  # sorted
    viewers: tuple[str, ...] = ()  # IAM principal ARNs, as the spec lists them
    submitters: tuple[str, ...] = ()
    pod_security: PodSecurityLevel = "baseline"  # enforced on every pod in the namespace, both modes
    pod_exec: bool = False  # submitters may exec into the team's pods
    write_secrets: bool = False  # submitters may read and write Secrets
    write_config_maps: bool = False  # submitters may read and write ConfigMaps
    active: bool = True  # False: paused (ActivationState Disabled; kueue stopPolicy Hold)
    absolute_borrow_limits: tuple[Allocated, ...] = ()  # sorted by instance type; only with LendAndBorrow
    idle_resource_sharing: bool = True  # the cluster's scheduler.idleResourceSharing
    alarms: Optional[AlarmOverrides] = None  # teams[].alarms: this team's thresholds (None: monitoring.alarms)
    # Cost-allocation tags on the team's resources, sorted: the spec's top-level tags, then the team's own (the
    # team's win on a shared key).
    tags: tuple[tuple[str, str], ...] = ()
    # teams[].priorityClasses: the spec names of the scheduler's priority classes the team may use, sorted (the
    # spec's default: all); and teams[].images: the registry prefixes its images must start with (): any image).
    priority_classes: tuple[str, ...] = ()
    image_prefixes: tuple[str, ...] = ()
    require_priority: bool = False  # teams[].requirePriority: admission refuses its work without a priority label
    # The team's other parts, built with it in one pass (derive.py): its workload identities (sorted as
    # Plan.identities), its bucket (teams[].storage.bucket: create), its tools policy (teams[].access.toolsPolicy),
    # its volume on the shared file system (cluster.sharedStorage) and its dedicated groups by instance type
    # (instanceGroups[].dedicatedTo). The shared pool has none of them. Each part is compared on its own (its view
    # or table), so a team's equality stays its own decisions: quota, sharing, access and namespace settings.
    identities: tuple[IdentityPlan, ...] = field(default=(), kw_only=True, compare=False)
    storage: Optional[TeamStoragePlan] = field(default=None, kw_only=True, compare=False)
    tools_policy: Optional[ToolsPolicyPlan] = field(default=None, kw_only=True, compare=False)
    volume: Optional["TeamVolumePlan"] = field(default=None, kw_only=True, compare=False)
    dedicated: tuple["DedicatedPlan", ...] = field(default=(), kw_only=True, compare=False)
    # What is watched for the team: its metrics, alarms with their owners, its dashboard (monitoring.py's team_watch,
    # from the team's own decisions, its contract and teams[].alarms; derive.py adds it as the team is built). The
    # shared pool has one too (no alarms). Compared in the monitoring view.
    monitoring: Optional[TeamWatch] = field(default=None, kw_only=True, compare=False)
    # The team as Slurm accounting knows it (slurm.py's slurm_team; a Slurm cluster's teams only, the shared pool
    # has none). Compared in the Slurm view.
    slurm: Optional[SlurmTeamPlan] = field(default=None, kw_only=True, compare=False)
    # Where the spec declares the team ("teams[3]", the pool "sharedPool"): findings name it. A list position, so
    # not part of the team's identity (reordering teams changes no decision).
    path: str = field(kw_only=True, compare=False)

    @property
    def owned(self) -> tuple[FlavorQuota, ...]:
        return tuple(f for f in self.flavors if not f.nominal.is_zero)

    @property
    def kueue_priority_classes(self) -> tuple[str, ...]:
        """The Kueue WorkloadPriorityClass names the team may label its work with
        (``kueue.x-k8s.io/priority-class``): those of ``priority_classes``, in the same order."""
        return tuple(names.priority_class(p) for p in self.priority_classes)

    @property
    def can_lend(self) -> bool:
        return self.strategy != "DontLend"

    @property
    def can_borrow(self) -> bool:
        return self.strategy == "LendAndBorrow" and self.idle_resource_sharing


def capacity(spec: GovernanceSpec) -> dict[str, int]:
    """Instances per instance type across all instance groups."""
    return spec.cluster.capacity


def mig_profiles(spec: GovernanceSpec) -> dict[str, Optional[str]]:
    """Per instance type of the cluster, the MIG profile its GPUs are partitioned into (None: whole GPUs)."""
    return group_mig_profiles(spec)


def _limits(strategy: Strategy, percent: int, nominal: Amounts, absolute: Optional[Amounts],
            sharing: bool) -> tuple[Optional[Amounts], Amounts]:
    """(lendingLimit, borrowingLimit) per DESIGN.md's semantics table.

    An absolute borrow limit on the type replaces the percentage; without idle resource sharing nobody borrows.
    """
    if strategy == "DontLend":
        return ZERO, ZERO
    if strategy == "Lend" or not sharing:
        return None, ZERO
    return None, absolute if absolute is not None else nominal.percent(percent)


def _flavor(instance_type: str, strategy: Strategy, percent: int, given: Optional[Allocated], *, catalog: Catalog,
            mig_profile: Optional[str], absolute: Optional[Allocated], sharing: bool) -> FlavorQuota:
    nominal = allocation_amounts(given, catalog=catalog, mig_profile=mig_profile) if given else ZERO
    cap = allocation_amounts(absolute, catalog=catalog, mig_profile=mig_profile) if absolute else None
    lending, borrowing = _limits(strategy, percent, nominal, cap, sharing)
    facts = catalog.lookup(instance_type)
    found = facts.mig_profile(mig_profile) if mig_profile else None
    return FlavorQuota(
        instance_type=instance_type,
        accelerator_kind=facts.accelerator_kind,
        nominal=nominal,
        lending_limit=lending,
        borrowing_limit=borrowing,
        count=given.count if given else None,
        accelerators=given.accelerators if given else None,
        vcpu=given.vcpu if given else None,
        memory_gib=given.memory_gib if given else None,
        partition=given.partition if given else None,
        mig_resource=found.resource if found else None,
    )


def _flavors(spec: GovernanceSpec, cat: Catalog, strategy: Strategy, percent: int, given: dict[str, Allocated],
             absolute: dict[str, Allocated]) -> tuple[FlavorQuota, ...]:
    """One flavor quota per instance type of the cluster, in the cluster's order."""
    migs = mig_profiles(spec)
    sharing = spec.scheduler.idle_resource_sharing
    return tuple(
        _flavor(t, strategy, percent, given.get(t), catalog=cat, mig_profile=migs.get(t), absolute=absolute.get(t),
                sharing=sharing)
        for t in capacity(spec)
    )


def plan_team(spec: GovernanceSpec, team: Team, cat: Optional[Catalog] = None, *, path: str,
              identities: tuple[IdentityPlan, ...] = (), storage: Optional[TeamStoragePlan] = None,
              tools_policy: Optional[ToolsPolicyPlan] = None, volume: Optional["TeamVolumePlan"] = None,
              dedicated: tuple["DedicatedPlan", ...] = ()) -> TeamPlan:
    """Everything one team of the spec gets; ``path`` is where the spec declares it (``teams[3]``); the other
    keywords are the team's own parts of the plan, which ``derive_plan`` builds first."""
    cat = cat or spec_catalog(spec)
    percent = team.sharing.effective_borrow_limit_percent
    strategy = team.sharing.strategy
    absolute = {b.instance_type: Allocated.of(b) for b in team.sharing.absolute_borrow_limits}
    return TeamPlan(
        name=team.name,
        path=path,
        namespace=names.namespace(team.name),
        cluster_queue=names.cluster_queue(team.name),
        local_queue=names.local_queue(team.name),
        viewers_group=names.viewers_group(team.name),
        submitters_group=names.submitters_group(team.name),
        fair_share_weight=team.fair_share_weight,
        strategy=strategy,
        borrow_limit_percent=percent,
        preempt_team_tasks=team.preempt_team_tasks,
        flavors=_flavors(spec, cat, strategy, percent, {q.instance_type: Allocated.of(q) for q in team.quota},
                         absolute),
        quota_name=names.compute_quota(team.name),
        queue_reader=names.queue_reader(team.name),
        contract=team.contract,
        tags=tuple(sorted({**spec.tags, **team.tags}.items())),
        egress=egress_plan(team.egress),
        service_accounts=tuple(sorted(w.service_account for w in team.workload_identities)),
        viewers=tuple(team.access.viewers),
        submitters=tuple(team.access.submitters),
        pod_security=team.pod_security,
        pod_exec=team.access.pod_exec,
        write_secrets=team.access.write_secrets,
        write_config_maps=team.access.write_config_maps,
        active=team.active,
        absolute_borrow_limits=tuple(absolute[t] for t in sorted(absolute)) if strategy == "LendAndBorrow" else (),
        idle_resource_sharing=spec.scheduler.idle_resource_sharing,
        alarms=team.alarms,
        priority_classes=team_priority_classes(spec, team),
        image_prefixes=tuple(sorted(set(team.images))),
        require_priority=team.require_priority,
        identities=identities,
        storage=storage,
        tools_policy=tools_policy,
        volume=volume,
        dedicated=dedicated,
    )


def team_priority_classes(spec: GovernanceSpec, team: Optional[Team]) -> tuple[str, ...]:
    """The priority classes ``team`` may use (``teams[].priorityClasses``; None, the pool: every class), sorted."""
    chosen = team.priority_classes if team is not None else None
    defined = {p.name for p in spec.scheduler.priority_classes}
    return tuple(sorted(defined if chosen is None else defined.intersection(chosen)))


def shared_pool_quota(spec: GovernanceSpec, cat: Optional[Catalog] = None) -> tuple[Allocated, ...]:
    """``capacity - sum(quotas)`` per instance type, as the pool's quota (empty types left out).

    On a type whose GPUs are partitioned (instanceGroups[].mig), the pool gets the partitions left; on a type
    some team owns in vCPU and memory, the vCPU and memory left. Otherwise types that any team quotes in
    accelerators are counted in accelerators, the others in whole instances.
    """
    cat = cat or spec_catalog(spec)
    migs = mig_profiles(spec)
    used_acc: dict[str, int] = defaultdict(int)
    used: dict[str, Amounts] = defaultdict(lambda: ZERO)
    in_acc: set[str] = set()
    in_vcpu: set[str] = set()
    for team in spec.teams:
        for q in team.quota:
            facts = cat.get(q.instance_type)
            if facts is None:
                continue
            used[q.instance_type] = used[q.instance_type] + allocation_amounts(
                q, catalog=cat, mig_profile=migs.get(q.instance_type))
            if q.vcpu is not None:
                in_vcpu.add(q.instance_type)
            if q.accelerators is not None:
                in_acc.add(q.instance_type)
                used_acc[q.instance_type] += q.accelerators
            else:
                used_acc[q.instance_type] += (q.count or 0) * max(facts.accelerators, 1)
    entries = []
    for itype, instances in capacity(spec).items():
        facts = cat.lookup(itype)
        profile = migs.get(itype)
        if profile is not None and (found := facts.mig_profile(profile)) is not None:
            total = amounts_for(itype, count=instances, mig_profile=profile, catalog=cat)
            left_parts = total.partition(found.resource) - used[itype].partition(found.resource)
            if left_parts > 0:
                entries.append(Allocated(itype, partition=(found.name, left_parts)))
            continue
        if itype in in_vcpu:
            total = amounts_for(itype, count=instances, catalog=cat)
            vcpu, memory = total.vcpu - used[itype].vcpu, total.memory_gib - used[itype].memory_gib
            if vcpu > 0 and memory > 0:
                entries.append(Allocated(itype, vcpu=vcpu, memory_gib=memory))
            continue
        per = max(facts.accelerators, 1)
        left = instances * per - used_acc.get(itype, 0)
        if left <= 0:
            continue
        if itype in in_acc and facts.accelerators:
            entries.append(Allocated(itype, accelerators=left))
        elif left % per == 0:
            entries.append(Allocated(itype, count=left // per))
        else:
            entries.append(Allocated(itype, accelerators=left))
    return tuple(entries)


def plan_shared_pool(spec: GovernanceSpec, cat: Optional[Catalog] = None) -> Optional[TeamPlan]:
    """The shared pool's plan, built from what no team owns (None: no pool asked for, or nothing left).

    Like a team with no access, identities or egress; what a team gets by default and the pool does not set
    (preemption of its own tasks, Pod Security level) is read from the spec's ``Team`` field defaults.
    """
    pool = spec.shared_pool
    if pool is None:
        return None
    cat = cat or spec_catalog(spec)
    given = shared_pool_quota(spec, cat)
    if not given:
        return None
    percent = DEFAULT_BORROW_LIMIT_PERCENT if pool.strategy == "LendAndBorrow" else 0
    defaults = Team.model_fields
    return TeamPlan(
        name=pool.name,
        path="sharedPool",
        tags=tuple(sorted(spec.tags.items())),
        namespace=names.namespace(pool.name),
        cluster_queue=names.cluster_queue(pool.name),
        local_queue=names.local_queue(pool.name),
        viewers_group=names.viewers_group(pool.name),
        submitters_group=names.submitters_group(pool.name),
        fair_share_weight=pool.fair_share_weight,
        strategy=pool.strategy,
        borrow_limit_percent=percent,
        preempt_team_tasks=defaults["preempt_team_tasks"].default,
        flavors=_flavors(spec, cat, pool.strategy, percent, {g.instance_type: g for g in given}, {}),
        is_shared_pool=True,
        quota_name=names.compute_quota(pool.name),
        queue_reader=names.queue_reader(pool.name),
        pod_security=defaults["pod_security"].default,
        idle_resource_sharing=spec.scheduler.idle_resource_sharing,
        priority_classes=team_priority_classes(spec, None),
    )
