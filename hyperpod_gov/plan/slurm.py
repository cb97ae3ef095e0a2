"""The Slurm part of the plan: partitions, accounts, QOS and POSIX identities of a Slurm-orchestrated cluster.

Pure decisions over a validated spec (``cluster.orchestrator: slurm``); ``plan/slurm_state.py`` turns them
into the desired accounting and configuration state and ``hyperpod_gov.slurm.render`` into scripts. The mapping
(docs/slurm.md):

- the organisation is an account under ``root``, each team an account under it with its fair share;
- a team's guarantee on an instance type is a sub-account ``<team>_<partition>`` with ``GrpTRES`` (whole
  instances ``node``, GPUs ``gres/gpu``, vCPU and memory ``cpu`` and ``mem``), pinned to the type's partition by
  ``AllowAccounts`` where the spec lets hyperpod-gov edit partition lines (``configStrategy: Merge``);
- borrowing is a QOS ``<team>_<partition>_borrow`` whose ``GrpTRES`` is the borrow cap, lowest priority, preempted
  by requeue by every other QOS of the cluster; borrowed jobs run under their own account of the same name (a
  sibling of the guaranteed sub-account under the team, no GrpTRES, only the borrow QOS), so that they do not count
  against the guarantee (Slurm adds every job of an association to its usage);
- each priority class is a QOS of its name with its weight as ``Priority``; work without a class runs in the
  ``<org>_standard`` QOS (priority 0), every account's default.

Generated names join spec names with '_', which no team, priority class or partition name contains, so that no two
(team, partition) pairs share a name.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Optional

from ..catalog import Catalog
from ..spec.models import GovernanceSpec
from ..spec.slurm import SHARED_MOUNT, ClusterSlurm, TeamSlurm
from .quotas import FlavorQuota, TeamPlan
from .slurm_accounts import (  # noqa: F401  (re-exported: callers import them from here)
    SEPARATOR, SlurmLimit, SlurmTeamPlan, Tres, account, borrow_account, borrow_qos)

ROOT_ACCOUNT = "root"
DEFAULT_DATA_ROOT = SHARED_MOUNT  # the teams' data directories are below it (spec.slurm.check_data_path)
# Slurm's TRES names of what a quota counts (sacctmgr(1), "TRES"): whole nodes, GPUs (with GresTypes=gpu and
# AccountingStorageTRES=gres/gpu), CPUs and memory in megabytes.
TRES_NODE = "node"
TRES_GPU = "gres/gpu"
TRES_CPU = "cpu"
TRES_MEM = "mem"
GPU_KIND = "nvidia.com/gpu"
# The most a borrow QOS is worth in priority: the lowest there is, below every class (priority classes weigh 0..100).
BORROW_PRIORITY = 0
MIB_PER_GIB = 1024
# POSIX ids of the users and groups hyperpod-gov creates: the same on every node (jobs run as the user on compute
# nodes, files on the shared file system carry the numbers), so they are derived from the names, not allocated by
# each node's useradd. Above the ranges distributions and LDAP defaults use, below the 'nobody' ids.
POSIX_ID_BASE = 200000
POSIX_ID_SLOTS = 100000


def posix_ids(names: list[str] | set[str]) -> tuple[tuple[str, int], ...]:
    """A stable id per name, sorted by name: a hash of the name in ``POSIX_ID_SLOTS``, the next free slot on a
    collision (names taken in sorted order, so the same names always get the same ids)."""
    taken: set[int] = set()
    out = []
    for name in sorted(set(names)):
        slot = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big") % POSIX_ID_SLOTS
        while slot in taken:
            slot = (slot + 1) % POSIX_ID_SLOTS
        taken.add(slot)
        out.append((name, POSIX_ID_BASE + slot))
    return tuple(out)


def standard_qos(org: str) -> str:
    """The QOS of work without a priority class."""
    return f"{org}{SEPARATOR}standard"


@dataclass(frozen=True)
class SlurmGroupPlan:
    """One instance group's Slurm role (SlurmConfig)."""

    name: str
    instance_type: str
    count: int
    node_type: str  # Controller | Login | Compute
    partition: Optional[str]  # Compute groups only
    dedicated_to: Optional[str] = None  # instanceGroups[].dedicatedTo
    path: str = field(kw_only=True, compare=False)


@dataclass(frozen=True)
class SlurmPartitionPlan:
    """A compute partition: its groups, instance types and who may use it."""

    name: str
    groups: tuple[str, ...]  # sorted
    instance_types: tuple[str, ...]  # sorted
    nodes: int
    dedicated_to: Optional[str]  # every group of the partition is dedicated to this team
    accounts: tuple[str, ...]  # AllowAccounts: the guaranteed and borrowing sub-accounts that may run here, sorted
    qos: tuple[str, ...]  # AllowQos: the QOS that may run here, sorted


@dataclass(frozen=True)
class PriorityQosPlan:
    name: str  # the QOS: the class's spec name
    weight: int  # Priority


@dataclass(frozen=True)
class AccountingDatabasePlan:
    endpoint: str
    secret_arn: str
    name: Optional[str]
    port: Optional[int]


@dataclass(frozen=True)
class SlurmPlan:
    """Every Slurm decision of a spec."""

    cluster_name: str  # the HyperPod cluster, also Slurm's ClusterName default for the scripts
    config_strategy: str  # Managed | Overwrite | Merge
    accounting_database: Optional[AccountingDatabasePlan]
    organisation: str  # the account under root holding every team
    groups: tuple[SlurmGroupPlan, ...]  # sorted by name
    partitions: tuple[SlurmPartitionPlan, ...]  # compute partitions, sorted by name
    teams: tuple[SlurmTeamPlan, ...]  # sorted by name
    priority_classes: tuple[PriorityQosPlan, ...]  # sorted by name
    standard_qos: str
    gpu_gres: bool  # the nodes declare GPUs as GRES: GresTypes=gpu, AccountingStorageTRES=gres/gpu
    fair_sharing: bool  # scheduler.idleCompute: fair-share (PriorityWeightFairshare > 0)
    uids: tuple[tuple[str, int], ...] = ()  # every team user's uid, sorted by name (posix_ids)
    gids: tuple[tuple[str, int], ...] = ()  # every team group's gid, sorted by name
    restrict_task_view: bool = False  # cluster.slurm.restrictTaskView: PrivateData=jobs
    accounting_retention_days: Optional[int] = None  # cluster.slurm.accountingRetentionDays: slurmdbd's Purge*After

    @property
    def edits_partitions(self) -> bool:
        """Whether hyperpod-gov may set AllowAccounts/AllowQos on HyperPod's partition lines (Merge keeps manual
        edits; Managed and Overwrite replace them)."""
        return self.config_strategy == "Merge"

    @property
    def borrow_qos(self) -> tuple[str, ...]:
        """Every borrow QOS of the cluster, sorted: what every other QOS preempts."""
        return tuple(sorted(borrow_qos(t.name, lim.partition) for t in self.teams for lim in t.borrow))

    @property
    def governs_gpus(self) -> bool:
        return any(name == TRES_GPU for t in self.teams for lim in t.guaranteed + t.borrow for name, _ in lim.tres)

    def team(self, name: str) -> SlurmTeamPlan:
        return next(t for t in self.teams if t.name == name)


def tres_of(flavor: FlavorQuota, amounts_attr: str, cat: Catalog) -> Tres:
    """A quota (``nominal``) or borrow cap (``borrowing_limit``) on one type as TRES: whole instances as ``node``
    when the spec counts instances, else GPUs as ``gres/gpu``, else ``cpu`` and ``mem`` (MiB)."""
    amounts = getattr(flavor, amounts_attr)
    if amounts is None or amounts.is_zero:
        return ()
    facts = cat.lookup(flavor.instance_type)
    if flavor.count is not None:
        per = facts.accelerators if flavor.accelerator_kind else facts.vcpu
        unit = amounts.accelerators if flavor.accelerator_kind else amounts.vcpu
        return ((TRES_NODE, unit // per if per else 0),)
    if flavor.accelerator_kind:
        return ((TRES_GPU, amounts.accelerators),)
    return ((TRES_CPU, amounts.vcpu), (TRES_MEM, amounts.memory_gib * MIB_PER_GIB))


def _partition_of_type(groups: tuple[SlurmGroupPlan, ...]) -> dict[str, str]:
    """Each instance type's compute partition (the first by name where a type is in several: HPG-S rules refuse
    that when a team has a quota on the type)."""
    out: dict[str, str] = {}
    for g in sorted(groups, key=lambda g: (g.partition or "", g.name)):
        if g.node_type == "Compute" and g.partition:
            out.setdefault(g.instance_type, g.partition)
    return out


def _limits(team: TeamPlan, where: dict[str, str], attr: str, cat: Catalog) -> tuple[SlurmLimit, ...]:
    out = []
    for f in team.flavors:
        partition = where.get(f.instance_type)
        tres = tres_of(f, attr, cat)
        if partition and tres and any(n for _, n in tres):
            out.append(SlurmLimit(partition, f.instance_type, tuple(sorted(tres))))
    return tuple(sorted(out, key=lambda lim: lim.partition))


def slurm_groups(spec: GovernanceSpec) -> tuple[SlurmGroupPlan, ...]:
    """The instance groups as Slurm nodes, sorted by name (the Slurm view of ``cluster.instanceGroups``)."""
    return tuple(sorted(
        (SlurmGroupPlan(g.name, g.instance_type, g.count, g.slurm.node_type if g.slurm else "Compute",
                        g.slurm.partition if g.slurm else None, g.dedicated_to,
                        path=f"cluster.instanceGroups[{i}]")
         for i, g in enumerate(spec.cluster.instance_groups)),
        key=lambda g: g.name))


def slurm_team(tp: TeamPlan, settings: Optional[TeamSlurm], groups: tuple[SlurmGroupPlan, ...],
               cat: Catalog) -> SlurmTeamPlan:
    """A team as Slurm accounting knows it, from its own decisions and its ``teams[].slurm`` settings
    (``derive_plan`` builds it with the team: ``TeamPlan.slurm``)."""
    where = _partition_of_type(groups)
    return SlurmTeamPlan(
        name=tp.name,
        account=account(tp.name),
        fair_share_weight=tp.fair_share_weight,
        fairshare=max(tp.fair_share_weight, 1),
        strategy=tp.strategy,
        guaranteed=_limits(tp, where, "nominal", cat),
        borrow=_limits(tp, where, "borrowing_limit", cat) if tp.can_borrow else (),
        priority_classes=tuple(sorted(tp.priority_classes)),
        preempt_team_tasks=tp.preempt_team_tasks,
        active=tp.active,
        users=tuple(sorted(settings.users)) if settings else (),
        group=(settings.group if settings and settings.group else tp.name),
        data_path=(settings.data_path if settings and settings.data_path else f"{DEFAULT_DATA_ROOT}/{tp.name}"),
        studio_user=settings.studio_user if settings else None,
        path=tp.path,
    )


def slurm_plan(spec: GovernanceSpec, teams: tuple[TeamPlan, ...],
               groups: tuple[SlurmGroupPlan, ...]) -> Optional[SlurmPlan]:
    """The Slurm plan of a ``cluster.orchestrator: slurm`` spec, of its teams' own Slurm parts (``TeamPlan.slurm``;
    capacity no team owns, the shared pool's, is simply idle in Slurm: anyone's borrow QOS may use it) and the
    groups of ``slurm_groups``; None for EKS."""
    cluster = spec.cluster
    if cluster.orchestrator != "slurm":
        return None
    settings = cluster.slurm or ClusterSlurm()
    org = spec.name
    std = standard_qos(org)
    team_plans = [tp.slurm for tp in teams if tp.slurm is not None]
    slurm_teams = tuple(sorted(team_plans, key=lambda t: t.name))
    classes = tuple(sorted((PriorityQosPlan(p.name, p.weight) for p in spec.scheduler.priority_classes),
                           key=lambda p: p.name))
    partitions = []
    for name in sorted({g.partition for g in groups if g.node_type == "Compute" and g.partition}):
        members = [g for g in groups if g.partition == name and g.node_type == "Compute"]
        dedicated = {g.dedicated_to for g in members}
        owner = next(iter(dedicated)) if len(dedicated) == 1 else None
        users = [t for t in slurm_teams if name in t.partitions and (owner is None or t.name == owner)]
        accounts = tuple(sorted(a for t in users for a in t.accounts_on(name)))
        qos = {std, *(q for t in users for q in t.priority_classes)}
        qos.update(borrow_qos(t.name, name) for t in users if t.borrow_limit(name))
        partitions.append(SlurmPartitionPlan(
            name=name,
            groups=tuple(g.name for g in members),
            instance_types=tuple(sorted({g.instance_type for g in members})),
            nodes=sum(g.count for g in members),
            dedicated_to=owner,
            accounts=accounts,
            qos=tuple(sorted(qos)),
        ))
    db = settings.accounting_database
    return SlurmPlan(
        cluster_name=cluster.name,
        config_strategy=settings.config_strategy,
        accounting_database=(AccountingDatabasePlan(db.endpoint, db.secret_arn, db.name, db.port) if db else None),
        organisation=org,
        groups=groups,
        partitions=tuple(partitions),
        teams=slurm_teams,
        priority_classes=classes,
        standard_qos=std,
        gpu_gres=settings.gpu_gres,
        fair_sharing=spec.scheduler.idle_compute == "fair-share",
        uids=posix_ids({u for t in slurm_teams for u in t.users}),
        gids=posix_ids({t.group for t in slurm_teams}),
        restrict_task_view=settings.restrict_task_view,
        accounting_retention_days=settings.accounting_retention_days,
    )
