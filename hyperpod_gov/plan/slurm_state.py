"""The desired Slurm state of a plan, as plain frozen data: accounting (accounts, QOS, user associations), the
slurm.conf settings and partition access, and the POSIX groups and data directories.

``desired_state(plan.slurm)`` derives it from ``Plan.slurm`` (``hyperpod_gov.slurm.desired(plan)`` wraps it);
``slurm/render`` turns it into scripts and ``slurm/dump`` (reading ``sacctmgr dump`` and ``sacctmgr show qos``)
into the same types, so the two compare field by field. Every tuple is
sorted; a value left ``None`` is one hyperpod-gov does not set (Slurm's default or the parent's stands).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .slurm import BORROW_PRIORITY, ROOT_ACCOUNT, TRES_GPU, SlurmPlan, Tres, borrow_qos

# Priority factor weights (slurm.conf PriorityWeight*): a class's QOS priority (0..100 of the highest) outweighs
# fair share, as a Kueue priority class orders work before fair sharing does.
PRIORITY_WEIGHT_QOS = 100000
PRIORITY_WEIGHT_FAIRSHARE = 10000
DATA_DIR_MODE = "2770"  # group-owned, setgid so new files stay the team's, nothing for others
PREEMPT_REQUEUE = "REQUEUE"
FLAG_NO_RESERVE = "NoReserve"


@dataclass(frozen=True, order=True)
class Qos:
    """A QOS with the attributes hyperpod-gov sets (sacctmgr(1), "QOS")."""

    name: str
    description: str
    priority: int = 0
    grp_tres: Tres = ()  # GrpTRES, sorted by TRES name
    preempt: tuple[str, ...] = ()  # Preempt: the QOS this one may preempt, sorted
    preempt_mode: Optional[str] = None  # PreemptMode when this QOS's jobs are preempted (None: the cluster's)
    flags: tuple[str, ...] = ()  # Flags, sorted (NoReserve)


@dataclass(frozen=True, order=True)
class SlurmAccount:
    """An account association (cluster, account) with the attributes hyperpod-gov sets (``hyperpod_gov.slurm``
    exports it as ``Account``; the plan keeps ``Account`` for the spec's AWS accounts)."""

    name: str
    parent: str
    description: str
    organization: str
    fairshare: int = 1
    grp_tres: Tres = ()  # GrpTRES, sorted
    grp_jobs: Optional[int] = None  # GrpJobs: 0 while the team is paused (running jobs finish, nothing starts)
    qos: tuple[str, ...] = ()  # QOS the association may use, sorted
    default_qos: Optional[str] = None


@dataclass(frozen=True, order=True)
class User:
    """A user association (cluster, account, user), and the user's default account."""

    name: str
    account: str
    default_account: str


@dataclass(frozen=True, order=True)
class Partition:
    """Who may run in a compute partition (slurm.conf partition line keys)."""

    name: str
    allow_accounts: tuple[str, ...]  # AllowAccounts, sorted
    allow_qos: tuple[str, ...]  # AllowQos, sorted


@dataclass(frozen=True)
class ConfState:
    """The slurm.conf state hyperpod-gov owns: global settings (in order) and partition access."""

    settings: tuple[tuple[str, str], ...]
    partitions: tuple[Partition, ...] = ()  # () when the partition lines are HyperPod's (Managed, Overwrite)


@dataclass(frozen=True, order=True)
class PosixGroup:
    """A team's POSIX group, the same gid on every node."""

    name: str
    gid: int
    members: tuple[str, ...]  # sorted


@dataclass(frozen=True, order=True)
class PosixUser:
    """A team member's POSIX user, the same uid on every node; its primary group is its first team's (by team
    name), the other teams' groups are supplementary."""

    name: str
    uid: int
    group: str
    groups: tuple[str, ...]  # supplementary, sorted


@dataclass(frozen=True, order=True)
class DataDir:
    path: str
    group: str
    mode: str = DATA_DIR_MODE


@dataclass(frozen=True)
class SlurmState:
    """Slurm accounting, configuration and POSIX identities, as hyperpod-gov sets them."""

    accounts: tuple[SlurmAccount, ...]  # parents before children, then by name
    qos: tuple[Qos, ...]  # by name
    users: tuple[User, ...]  # by user, then account
    conf: Optional[ConfState] = None  # None where it is not known (a dump holds the accounting only)
    groups: tuple[PosixGroup, ...] = ()
    posix_users: tuple[PosixUser, ...] = ()
    data_dirs: tuple[DataDir, ...] = ()
    cluster: Optional[str] = None  # Slurm's ClusterName (lowercase) where known

    def account(self, name: str) -> SlurmAccount:
        return next(a for a in self.accounts if a.name == name)

    def qos_named(self, name: str) -> Qos:
        return next(q for q in self.qos if q.name == name)


def _tres_gpu(plan: SlurmPlan) -> bool:
    return plan.gpu_gres and plan.governs_gpus


def conf_settings(plan: SlurmPlan) -> tuple[tuple[str, str], ...]:
    """The global slurm.conf lines, in the order they are written."""
    out = [
        ("PriorityType", "priority/multifactor"),
        ("PriorityWeightFairshare", str(PRIORITY_WEIGHT_FAIRSHARE if plan.fair_sharing else 0)),
        ("PriorityWeightQOS", str(PRIORITY_WEIGHT_QOS)),
        ("PreemptType", "preempt/qos"),
        ("PreemptMode", PREEMPT_REQUEUE),
        ("JobRequeue", "1"),
        ("AccountingStorageEnforce", "associations,limits,qos,safe"),
    ]
    if _tres_gpu(plan):
        out += [("GresTypes", "gpu"), ("AccountingStorageTRES", TRES_GPU)]
    if plan.restrict_task_view:
        # Studio's task view of a Slurm cluster lists what squeue shows the role's SSMSessionRunAs user: only its
        # own jobs once other users' are private (AWS, "Restrict task view in Studio for Slurm clusters").
        out.append(("PrivateData", "jobs"))
    return tuple(out)


def desired_state(sp: SlurmPlan) -> SlurmState:
    """``desired`` over the Slurm part of a plan."""
    org = sp.organisation
    std = sp.standard_qos
    borrowers = sp.borrow_qos
    qos = [Qos(std, f"{org}: work without a priority class", 0, preempt=borrowers)]
    qos += [Qos(p.name, f"{org}: priority class {p.name}", p.weight, preempt=borrowers) for p in sp.priority_classes]
    accounts = [SlurmAccount(org, ROOT_ACCOUNT, f"{org}: hyperpod-gov organisation", org,
                             qos=tuple(sorted({std, *(p.name for p in sp.priority_classes)})), default_qos=std)]
    users: dict[tuple[str, str], User] = {}
    default_account: dict[str, str] = {}
    for team in sp.teams:  # sorted by name: a user of several teams defaults to the first team's account
        classes = tuple(sorted({std, *team.priority_classes}))
        paused = None if team.active else 0
        accounts.append(SlurmAccount(team.account, org, f"{org}: team {team.name}", org, team.fairshare,
                                     grp_jobs=paused, qos=classes, default_qos=std))
        subs, guaranteed = [], []
        for partition in team.partitions:
            if team.limit(partition):
                sub = team.sub_account(partition)
                subs.append(sub)
                guaranteed.append(sub)
                accounts.append(SlurmAccount(sub, team.account, f"{org}: team {team.name} on partition {partition}",
                                             org, grp_tres=team.limit(partition), grp_jobs=paused, qos=classes,
                                             default_qos=std))
            cap = team.borrow_limit(partition)
            if cap:
                # Borrowed jobs run under an account of their own (no GrpTRES; the QOS caps them): under the
                # guaranteed sub-account they would count against the guarantee and hold the team's own work back.
                own = borrow_qos(team.name, partition)
                qos.append(Qos(own, f"{org}: {team.name} borrowing on {partition}", BORROW_PRIORITY,
                               grp_tres=cap, preempt_mode=PREEMPT_REQUEUE, flags=(FLAG_NO_RESERVE,)))
                sub = team.borrow_account(partition)
                subs.append(sub)
                accounts.append(SlurmAccount(sub, team.account, f"{org}: team {team.name} borrowing on partition "
                                             f"{partition}", org, grp_jobs=paused, qos=(own,), default_qos=own))
        for user in team.users:
            default_account.setdefault(user, (guaranteed or subs or [""])[0])
            for sub in subs:
                users[(user, sub)] = User(user, sub, "")
    user_rows = tuple(sorted(User(u.name, u.account, default_account[u.name]) for u in users.values()))
    partitions = tuple(Partition(p.name, p.accounts, p.qos) for p in sp.partitions) if sp.edits_partitions else ()
    members: dict[str, set[str]] = {}
    user_groups: dict[str, list[str]] = {}
    for team in sp.teams:
        members.setdefault(team.group, set()).update(team.users)
        for user in team.users:
            user_groups.setdefault(user, []).append(team.group)
    gids, uids = dict(sp.gids), dict(sp.uids)
    return SlurmState(
        accounts=tuple(accounts),
        qos=tuple(sorted(qos)),
        users=user_rows,
        conf=ConfState(conf_settings(sp), partitions),
        groups=tuple(sorted(PosixGroup(g, gids[g], tuple(sorted(m))) for g, m in members.items())),
        posix_users=tuple(sorted(PosixUser(u, uids[u], gs[0], tuple(sorted(set(gs[1:]) - {gs[0]})))
                                 for u, gs in user_groups.items())),
        data_dirs=tuple(sorted(DataDir(t.data_path, t.group) for t in sp.teams)),
        cluster=sp.cluster_name.lower(),
    )
