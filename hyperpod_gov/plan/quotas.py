"""Quota arithmetic: what each team owns, may lend and may borrow, in Kueue units.

Pure functions over a validated spec. Amounts are whole units: accelerators,
vCPU and GiB of memory. Percentages round down.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal, Optional

from .. import catalog
from ..spec.models import Contract, EgressRule, GovernanceSpec, QuotaEntry, Team
from . import names

Strategy = Literal["Lend", "DontLend", "LendAndBorrow"]
PodSecurityLevel = Literal["baseline", "restricted"]


@dataclass(frozen=True, order=True)
class Amounts:
    """Accelerators, vCPU and memory (GiB) on one instance type."""

    accelerators: int
    vcpu: int
    memory_gib: int

    def percent(self, p: int) -> "Amounts":
        return Amounts(self.accelerators * p // 100, self.vcpu * p // 100, self.memory_gib * p // 100)

    @property
    def is_zero(self) -> bool:
        return not (self.accelerators or self.vcpu or self.memory_gib)


ZERO = Amounts(0, 0, 0)


@dataclass(frozen=True)
class FlavorQuota:
    """A team's quota on one instance type, with its sharing limits."""

    instance_type: str
    accelerator_kind: Optional[str]
    nominal: Amounts
    lending_limit: Optional[Amounts]  # None: may lend all of nominal
    borrowing_limit: Optional[Amounts]  # None: unlimited (never emitted by this library)
    # The quota as the spec gave it (for ComputeQuota): whole instances or accelerators.
    count: Optional[int] = None
    accelerators: Optional[int] = None


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
    egress: tuple[EgressRule, ...] = ()  # sorted
    service_accounts: tuple[str, ...] = ()  # sorted
    viewers: tuple[str, ...] = ()  # IAM principal ARNs, as the spec lists them
    submitters: tuple[str, ...] = ()
    pod_security: PodSecurityLevel = "baseline"  # enforced on every pod in the namespace, both modes
    pod_exec: bool = False  # submitters may exec into the team's pods
    write_secrets: bool = False  # submitters may read and write Secrets
    write_config_maps: bool = False  # submitters may read and write ConfigMaps

    @property
    def owned(self) -> tuple[FlavorQuota, ...]:
        return tuple(f for f in self.flavors if not f.nominal.is_zero)

    @property
    def can_lend(self) -> bool:
        return self.strategy != "DontLend"

    @property
    def can_borrow(self) -> bool:
        return self.strategy == "LendAndBorrow"


def capacity(spec: GovernanceSpec) -> dict[str, int]:
    """Instances per instance type across all instance groups."""
    return spec.cluster.capacity


def amounts_for(instance_type: str, *, count: int | None = None, accelerators: int | None = None) -> Amounts:
    """Kueue amounts for whole instances, or pro rata for a number of accelerators."""
    facts = catalog.lookup(instance_type)
    if accelerators is not None:
        per = facts.accelerators
        return Amounts(accelerators, accelerators * facts.vcpu // per, accelerators * facts.memory_gib // per)
    n = count or 0
    return Amounts(n * facts.accelerators, n * facts.vcpu, n * facts.memory_gib)


def entry_amounts(entry: QuotaEntry) -> Amounts:
    return amounts_for(entry.instance_type, count=entry.count, accelerators=entry.accelerators)


def _limits(strategy: Strategy, percent: int, nominal: Amounts) -> tuple[Optional[Amounts], Amounts]:
    """(lendingLimit, borrowingLimit) per DESIGN.md's semantics table."""
    if strategy == "DontLend":
        return ZERO, ZERO
    if strategy == "Lend":
        return None, ZERO
    return None, nominal.percent(percent)


def _flavor(instance_type: str, strategy: Strategy, percent: int, entry: QuotaEntry | None) -> FlavorQuota:
    nominal = entry_amounts(entry) if entry else ZERO
    lending, borrowing = _limits(strategy, percent, nominal)
    return FlavorQuota(
        instance_type=instance_type,
        accelerator_kind=catalog.lookup(instance_type).accelerator_kind,
        nominal=nominal,
        lending_limit=lending,
        borrowing_limit=borrowing,
        count=entry.count if entry else None,
        accelerators=entry.accelerators if entry else None,
    )


def plan_team(spec: GovernanceSpec, team: Team) -> TeamPlan:
    by_type = {q.instance_type: q for q in team.quota}
    percent = team.sharing.effective_borrow_limit_percent
    strategy = team.sharing.strategy
    return TeamPlan(
        name=team.name,
        namespace=names.namespace(team.name),
        cluster_queue=names.cluster_queue(team.name),
        local_queue=names.local_queue(team.name),
        viewers_group=names.viewers_group(team.name),
        submitters_group=names.submitters_group(team.name),
        fair_share_weight=team.fair_share_weight,
        strategy=strategy,
        borrow_limit_percent=percent,
        preempt_team_tasks=team.preempt_team_tasks,
        flavors=tuple(_flavor(t, strategy, percent, by_type.get(t)) for t in capacity(spec)),
        quota_name=names.compute_quota(team.name),
        queue_reader=names.queue_reader(team.name),
        contract=team.contract,
        egress=tuple(sorted(team.egress, key=lambda e: (e.cidr, e.protocol, e.ports))),
        service_accounts=tuple(sorted(w.service_account for w in team.workload_identities)),
        viewers=tuple(team.access.viewers),
        submitters=tuple(team.access.submitters),
        pod_security=team.pod_security,
        pod_exec=team.access.pod_exec,
        write_secrets=team.access.write_secrets,
        write_config_maps=team.access.write_config_maps,
    )


def shared_pool_quota(spec: GovernanceSpec) -> tuple[QuotaEntry, ...]:
    """``capacity - sum(quotas)`` per instance type, as quota entries (empty types left out).

    Types that any team quotes in accelerators are counted in accelerators, the
    others in whole instances.
    """
    used_acc: dict[str, int] = defaultdict(int)
    in_acc: set[str] = set()
    for team in spec.teams:
        for q in team.quota:
            facts = catalog.lookup(q.instance_type)
            if q.accelerators is not None:
                in_acc.add(q.instance_type)
                used_acc[q.instance_type] += q.accelerators
            else:
                used_acc[q.instance_type] += (q.count or 0) * max(facts.accelerators, 1)
    entries = []
    for itype, instances in capacity(spec).items():
        per = max(catalog.lookup(itype).accelerators, 1)
        left = instances * per - used_acc.get(itype, 0)
        if left <= 0:
            continue
        if itype in in_acc and catalog.lookup(itype).accelerators:
            entries.append(QuotaEntry(instance_type=itype, accelerators=left))
        elif left % per == 0:
            entries.append(QuotaEntry(instance_type=itype, count=left // per))
        else:
            entries.append(QuotaEntry(instance_type=itype, accelerators=left))
    return tuple(entries)


def plan_shared_pool(spec: GovernanceSpec) -> Optional[TeamPlan]:
    pool = spec.shared_pool
    if pool is None:
        return None
    entries = shared_pool_quota(spec)
    if not entries:
        return None
    pseudo = Team(
        name=pool.name,
        fair_share_weight=pool.fair_share_weight,
        quota=entries,
        sharing={"strategy": pool.strategy},
    )
    plan = plan_team(spec, pseudo)
    return TeamPlan(**{**plan.__dict__, "is_shared_pool": True})
