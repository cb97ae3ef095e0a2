"""The governance views of Slurm-orchestrated clusters (``views.py``; cluster.orchestrator: slurm; plan/slurm.py,
docs/slurm.md): the cluster's accounting, its instance groups' and teams' Slurm parts."""

from __future__ import annotations

from typing import Any

from .model import Plan
from .slurm_commands import changes
from .slurm_state import desired_state
from .views_base import Row, View, _on_off, _when, _widens


def _tres_words(tres: tuple[tuple[str, int], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in tres) or "none"


def _slurm_state(plan: Plan) -> Any:
    """The desired accounting state (plan/slurm_state.py), None for EKS: the sacctmgr row compares it."""
    if plan.slurm is None:
        return None
    return desired_state(plan.slurm)


def _sacctmgr_lines(title: str, old: Any, new: Any) -> list[str]:
    return [f"{title} accounting: {c}" for c in changes(old, new)]


def _slurm_qos(plan: Plan) -> tuple[str, ...]:
    state = _slurm_state(plan)
    if state is None:
        return ()
    return tuple(f"{q.name}: priority {q.priority}" + (f", GrpTRES={_tres_words(q.grp_tres)}" if q.grp_tres else "")
                 + (f", preempts {','.join(q.preempt)}" if q.preempt else "")
                 + (f", preempted by {q.preempt_mode}" if q.preempt_mode else "") for q in state.qos)


def _slurm_partitions(plan: Plan) -> tuple[str, ...]:
    sp = plan.slurm
    if sp is None:
        return ()
    return tuple(f"{p.name} ({', '.join(p.instance_types)}): "
                 + (f"AllowAccounts={','.join(p.accounts) or 'root'} AllowQos={','.join(p.qos)}"
                    if sp.edits_partitions else "open to every account (HyperPod's partition line)")
                 for p in sp.partitions)


def _slurm_settings(plan: Plan) -> tuple[str, ...]:
    state = _slurm_state(plan)
    return tuple(f"{k}={v}" for k, v in state.conf.settings) if state is not None and state.conf else ()


def _accounting_database(plan: Plan) -> str:
    sp = plan.slurm
    if sp is None:
        return "none (EKS)"
    db = sp.accounting_database
    if db is None:
        return "the controller's own MariaDB"
    return (f"{db.endpoint}:{db.port or 'default port'}/{db.name or 'the service default schema'}, credentials "
            f"from {db.secret_arn}")


SLURM = View(
    name="slurm",
    spec="cluster.slurm",
    objects=lambda plan: {"": plan},
    title=lambda key: "slurm",
    rows=(
        Row("orchestrator", "cluster.orchestrator", lambda p: "slurm" if p.slurm else "eks", ("slurm",)),
        Row("configuration strategy", "cluster.slurm.configStrategy",
            lambda p: p.slurm.config_strategy if p.slurm else "none (EKS)", ("slurm",)),
        Row("accounting database", "cluster.slurm.accountingDatabase", _accounting_database, ("slurm",),
            privilege=_when(lambda o, n: o != n and not n.startswith("none"),
                            "the cluster's accounting (accounts, limits, users) now lives in another database")),
        Row("GPUs tracked as GRES", "cluster.slurm.gpuGres",
            lambda p: _on_off(p.slurm.gpu_gres) if p.slurm else "none (EKS)", ("slurm",)),
        Row("Studio task view", "cluster.slurm.restrictTaskView",
            lambda p: ("restricted (PrivateData=jobs)" if p.slurm.restrict_task_view else "every task to every user")
            if p.slurm else "none (EKS)", ("slurm",),
            privilege=_when(lambda o, n: o != n and n.startswith("every"),
                            "every Slurm user, and every Studio user, now sees every job of the cluster")),
        Row("task history kept", "cluster.slurm.accountingRetentionDays",
            lambda p: (f"{p.slurm.accounting_retention_days} days" if p.slurm.accounting_retention_days else
                       "forever (nothing purged)") if p.slurm else "none (EKS)", ("slurm",)),
        Row("settings", "cluster.slurm|scheduler.idleCompute", _slurm_settings, ("slurm",), members=True),
        Row("QOS", "scheduler.priorityClasses|teams[].sharing", _slurm_qos, ("slurm",), members=True),
        Row("partition", "cluster.instanceGroups[].slurm.partition|cluster.instanceGroups[].dedicatedTo",
            _slurm_partitions, ("slurm",), members=True,
            privilege=_widens("these accounts and QOS may run on the partition's nodes")),
        # The exact accounting commands the change causes (the same as accounting.sh runs).
        Row("accounting", "teams[].slurm|teams[].quota|teams[].fairShareWeight", _slurm_state, ("slurm",),
            lines=_sacctmgr_lines),
    ),
)

SLURM_GROUPS = View(
    name="slurm group",
    spec="cluster.instanceGroups[].slurm",
    objects=lambda plan: {g.name: g for g in plan.slurm.groups} if plan.slurm else {},
    title=lambda key: f"instance group {key} (Slurm)",
    rows=(
        Row("node type", "cluster.instanceGroups[].slurm.nodeType", lambda g: g.node_type,
            ("node_type", "name", "instance_type", "count")),
        Row("partition", "cluster.instanceGroups[].slurm.partition", lambda g: g.partition or "none",
            ("partition", "dedicated_to")),
    ),
    added=lambda key, g: f"instance group {key} (Slurm) added: {g.node_type}"
    + (f" in partition {g.partition}" if g.partition else ""),
    removed=lambda key, g: f"instance group {key} (Slurm) removed: {g.node_type}"
    + (f" in partition {g.partition}" if g.partition else ""),
)


def _limits_words(limits: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(f"{lim.partition}: {_tres_words(lim.tres)}" for lim in limits)


SLURM_TEAMS = View(
    name="slurm team",
    spec="teams[].slurm",
    objects=lambda plan: {t.name: t for t in plan.slurm.teams} if plan.slurm else {},
    title=lambda key: f"team {key} (Slurm)",
    rows=(
        Row("account", "teams[].name", lambda t: t.account, ("account", "name")),
        Row("Fairshare", "teams[].fairShareWeight", lambda t: t.fairshare, ("fairshare", "fair_share_weight")),
        Row("guaranteed (GrpTRES)", "teams[].quota", lambda t: _limits_words(t.guaranteed), ("guaranteed",),
            members=True),
        Row("borrow cap (borrow QOS GrpTRES)", "teams[].sharing", lambda t: _limits_words(t.borrow),
            ("borrow", "strategy"), members=True, privilege=_widens("the team may run this much more on idle nodes")),
        Row("QOS", "teams[].priorityClasses", lambda t: t.priority_classes, ("priority_classes", "preempt_team_tasks"),
            members=True, privilege=_widens("the team's jobs may run at this priority")),
        Row("paused", "teams[].active", lambda t: "no" if t.active else "yes (GrpJobs=0)", ("active",)),
        Row("users", "teams[].slurm.users", lambda t: t.users, ("users",), members=True,
            privilege=_widens("may submit under the team's accounts and read and write its data directory")),
        Row("Studio user", "teams[].slurm.studioUser", lambda t: t.studio_user or "none", ("studio_user",),
            privilege=_when(lambda o, n: o != n and n != "none",
                            "the team's Studio role now runs on the cluster as this user (SSMSessionRunAs)")),
        Row("group", "teams[].slurm.group", lambda t: t.group, ("group",),
            privilege=_when(lambda o, n: o != n, "the team's data directory now belongs to another group")),
        # posix.sh gives the directory to the team's group as root (chgrp, chmod 2770): moving it hands the team a
        # directory it did not have, and the old one stays the team's (nothing is deleted or regrouped back).
        Row("data directory", "teams[].slurm.dataPath", lambda t: t.data_path, ("data_path",),
            privilege=_when(lambda o, n: o != n, "the team's group is given this directory of the shared file "
                            "system (owner group, mode 2770, set as root); the old one stays the team's")),
    ),
    added=lambda key, t: f"team {key} (Slurm) added: account {t.account}, {len(t.users)} user(s)",
    removed=lambda key, t: f"team {key} (Slurm) removed: its accounts stay in Slurm until accounting.sh runs "
    "with HPG_SLURM_PRUNE=1 (deleting an association cancels its running jobs)",
)
