"""The exact sacctmgr commands a change causes: one builder per command (accounting.sh's functions spell them the
same way), and ``changes(old, new)``, the commands accounting.sh runs to take Slurm from one state to the other."""

from __future__ import annotations

from typing import Optional

from .slurm import ROOT_ACCOUNT
from .slurm_spelling import CLUSTER_VAR, PRUNE_NOTE, SACCTMGR, _arg, _csv, _depth, _qos_order, _tres, _tres_change
from .slurm_state import SlurmAccount, Qos, SlurmState, User


def add_qos(q: Qos) -> str:
    args = [f"{SACCTMGR} add qos {q.name}", _arg("Description", q.description), f"Priority={q.priority}"]
    if q.grp_tres:
        args.append(f"GrpTRES={_tres(q.grp_tres)}")
    if q.preempt:
        args.append(f"Preempt={_csv(q.preempt)}")
    if q.preempt_mode:
        args.append(f"PreemptMode={q.preempt_mode}")
    if q.flags:
        args.append(f"Flags={_csv(q.flags)}")
    return " ".join(args)


def _qos_sets(old: Qos, new: Qos) -> list[str]:
    sets = []
    if old.description != new.description:
        sets.append(_arg("Description", new.description))
    if old.priority != new.priority:
        sets.append(f"Priority={new.priority}")
    if old.grp_tres != new.grp_tres:
        sets.append(f"GrpTRES={_tres_change(old.grp_tres, new.grp_tres)}")
    if old.preempt != new.preempt:
        sets.append(f"Preempt={_csv(new.preempt)}")  # empty: Slurm's default, preempt nothing
    if new.preempt_mode and (old.preempt_mode or "").lower() != new.preempt_mode.lower():
        sets.append(f"PreemptMode={new.preempt_mode}")
    if new.flags and tuple(f.lower() for f in old.flags) != tuple(f.lower() for f in new.flags):
        sets.append(f"Flags={_csv(new.flags)}")
    return sets


def modify_qos(name: str, sets: list[str]) -> str:
    return f"{SACCTMGR} modify qos where name={name} set {' '.join(sets)}"


def add_account(a: SlurmAccount, cluster: str) -> str:
    args = [f"{SACCTMGR} add account {a.name}", f"Cluster={cluster}", f"Parent={a.parent}",
            _arg("Description", a.description), _arg("Organization", a.organization), f"Fairshare={a.fairshare}"]
    if a.grp_tres:
        args.append(f"GrpTRES={_tres(a.grp_tres)}")
    if a.grp_jobs is not None:
        args.append(f"GrpJobs={a.grp_jobs}")
    if a.qos:
        args.append(f"QOS={_csv(a.qos)}")
    if a.default_qos:
        args.append(f"DefaultQOS={a.default_qos}")
    return " ".join(args)


def _account_commands(old: SlurmAccount, new: SlurmAccount, cluster: str) -> list[str]:
    out = []
    entity = []
    if old.description != new.description:
        entity.append(_arg("Description", new.description))
    if old.organization != new.organization:
        entity.append(_arg("Organization", new.organization))
    if entity:
        out.append(f"{SACCTMGR} modify account where name={new.name} set {' '.join(entity)}")
    if old.parent != new.parent:
        out.append(f"{SACCTMGR} modify account where name={new.name} cluster={cluster} set Parent={new.parent}")
    sets = []
    if old.fairshare != new.fairshare:
        sets.append(f"Fairshare={new.fairshare}")
    if old.grp_tres != new.grp_tres:
        sets.append(f"GrpTRES={_tres_change(old.grp_tres, new.grp_tres)}")
    if old.grp_jobs != new.grp_jobs:
        sets.append(f"GrpJobs={-1 if new.grp_jobs is None else new.grp_jobs}")
    if old.qos != new.qos:
        sets.append(f"QOS={_csv(new.qos)}")
    if old.default_qos != new.default_qos and new.default_qos:
        sets.append(f"DefaultQOS={new.default_qos}")
    if sets:
        out.append(f"{SACCTMGR} modify account where name={new.name} cluster={cluster} set {' '.join(sets)}")
    return out


def add_user(u: User, cluster: str) -> str:
    return f"{SACCTMGR} add user {u.name} Cluster={cluster} Account={u.account}"


def set_default_account(user: str, account: str, cluster: str) -> str:
    return f"{SACCTMGR} modify user where name={user} cluster={cluster} set DefaultAccount={account}"


def delete_user(u: User, cluster: str) -> str:
    return f"{SACCTMGR} delete user where name={u.name} account={u.account} cluster={cluster}"


def delete_account(name: str, cluster: str) -> str:
    return f"{SACCTMGR} delete account where name={name} cluster={cluster}"


def delete_qos(name: str) -> str:
    return f"{SACCTMGR} delete qos where name={name}"



EMPTY = SlurmState(accounts=(), qos=(), users=())


def _organisation(state: SlurmState) -> Optional[str]:
    """The account under root that holds the teams (the one hyperpod-gov manages), if the state has one."""
    return next((a.name for a in state.accounts if a.parent == ROOT_ACCOUNT), None)


def _managed(state: SlurmState, org: Optional[str]) -> set[str]:
    """The accounts under ``org`` in ``state``, ``org`` itself excluded: what pruning may delete."""
    parents = {a.name: a.parent for a in state.accounts}
    out = set()
    for name in parents:
        at, hops = name, 0
        while at in parents and at != org and hops <= len(parents):
            at, hops = parents[at], hops + 1
        if org is not None and at == org and name != org:
            out.add(name)
    return out


def changes(old: Optional[SlurmState], new: Optional[SlurmState]) -> list[str]:
    """The sacctmgr commands accounting.sh runs on a cluster in state ``old`` (e.g. read back with ``sacctmgr
    dump``) to reach ``new``, in its order and spelling; what it deletes only with ``HPG_SLURM_PRUNE=1`` comes last,
    as comments. Only the organisation's accounts and QOS are ever deleted. None stands for no Slurm state (an EKS
    spec)."""
    old, new = old or EMPTY, new or EMPTY
    cluster = new.cluster or old.cluster or CLUSTER_VAR
    out: list[str] = []
    old_qos = {q.name: q for q in old.qos}
    for q in _qos_order(new.qos):
        if q.name not in old_qos:
            out.append(add_qos(q))
        else:
            sets = _qos_sets(old_qos[q.name], q)
            if sets:
                out.append(modify_qos(q.name, sets))
    old_accounts = {a.name: a for a in old.accounts}
    depth = _depth(new.accounts)
    for a in sorted(new.accounts, key=lambda a: (depth[a.name], a.name)):
        if a.name not in old_accounts:
            out.append(add_account(a, cluster))
        else:
            out += _account_commands(old_accounts[a.name], a, cluster)
    pairs = {(u.name, u.account) for u in old.users}
    default = {u.name: u.default_account for u in old.users}
    for u in new.users:
        if (u.name, u.account) not in pairs:
            out.append(add_user(u, cluster))
            default.setdefault(u.name, u.account)  # a new user's default is the first account it is added to
            pairs.add((u.name, u.account))
    for name, account in sorted({(u.name, u.default_account) for u in new.users}):
        if default.get(name) != account:
            out.append(set_default_account(name, account, cluster))
    org = _organisation(new) or _organisation(old)
    managed = _managed(old, org)
    wanted = {(u.name, u.account) for u in new.users}
    new_accounts = {a.name for a in new.accounts}
    old_depth = _depth(old.accounts)
    prune = [delete_user(u, cluster) for u in sorted(old.users)
             if (u.name, u.account) not in wanted and (u.account in managed or u.account == org)]
    prune += [delete_account(name, cluster)
              for name in sorted(managed - new_accounts, key=lambda n: (-old_depth[n], n))]
    new_qos = {q.name for q in new.qos}
    prune += [delete_qos(q.name) for q in sorted(old.qos)
              if q.name not in new_qos and org is not None and q.description.startswith(f"{org}: ")]
    out += [f"# with HPG_SLURM_PRUNE=1 ({PRUNE_NOTE}): {c}" for c in prune]
    return out
