"""Drift and import for Slurm-orchestrated HyperPod clusters (``cluster.orchestrator: slurm``).

The AWS side is ``DescribeCluster``: ``Orchestrator.Slurm`` (``SlurmConfigStrategy``, ``AccountingDatabase``) and
each instance group (type, count, ``SlurmConfig.NodeType``, ``SlurmConfig.PartitionNames``). The accounting is not
in any AWS API: it lives in slurmdbd on the controller, so drift and import read it from a ``sacctmgr dump`` (and
``sacctmgr -P show qos``) the operator gives with ``--slurm-dump`` / ``--slurm-qos`` (``hyperpod_gov.slurm.dump``),
and compare it with ``model.desired(plan)``. Items use Slurm's own option names as fields (``GrpTRES``,
``Fairshare``, ``QOS``, ...), and the kinds ``SlurmAccount``, ``SlurmQos`` and ``SlurmUser``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from ..plan.fields import compare as compare_fields
from ..plan.plan import Plan
from ..plan.slurm import ROOT_ACCOUNT, SEPARATOR
from ..plan.tables import INSTANCE_GROUP
from ..slurm.dump import governed
from ..slurm.model import Account, Qos, SlurmState, User, desired
from ..slurm.render import changes
from .drift import DriftItem
from .importer import ImportResult, _issues, _label, _s
from .read import LiveCluster

def _tres(tres: tuple[tuple[str, int], ...]) -> Optional[str]:
    return ",".join(f"{k}={v}" for k, v in tres) or None


def _list(values: tuple[str, ...]) -> Optional[list[str]]:
    return list(values) or None


def _team_of(plan: Plan, account: str) -> Optional[str]:
    sp = plan.slurm
    assert sp is not None
    for t in sp.teams:
        if account == t.account or account.startswith(t.account + SEPARATOR):
            return t.name
    return None


def _item(kind: str, name: str, field: str, expected: Any, actual: Any, team: Optional[str]) -> DriftItem:
    return DriftItem(kind, name, "changed", field, expected, actual, team=team, label=field)


def _group_items(plan: Plan, cluster: LiveCluster) -> list[DriftItem]:
    sp = plan.slurm
    assert sp is not None
    items: list[DriftItem] = []
    live = {g["InstanceGroupName"]: g for g in cluster.instance_groups}
    planned = {g.name: g for g in plan.instance_groups}
    roles = {g.name: g for g in sp.groups}
    for name in sorted(set(live) | set(planned)):
        e, a = planned.get(name), live.get(name)
        if a is None:
            items.append(DriftItem("InstanceGroup", name, "missing"))
            continue
        if e is None:
            items.append(DriftItem("InstanceGroup", name, "unexpected"))
            continue
        for d in compare_fields(INSTANCE_GROUP, e, a, {}):
            if not d.field.startswith("KubernetesConfig"):  # EKS only
                items.append(DriftItem("InstanceGroup", name, "changed", d.field, d.expected, d.actual,
                                       label=d.row.label, unit=d.row.unit))
        role, config = roles[name], a.get("SlurmConfig") or {}
        if config.get("NodeType") != role.node_type:
            items.append(_item("InstanceGroup", name, "SlurmConfig.NodeType", role.node_type, config.get("NodeType"),
                               None))
        want = [role.partition] if role.partition else None
        have = config.get("PartitionNames") or None
        if have != want:
            items.append(_item("InstanceGroup", name, "SlurmConfig.PartitionNames", want, have, None))
    return items


def _cluster_items(plan: Plan, cluster: LiveCluster) -> list[DriftItem]:
    sp = plan.slurm
    assert sp is not None
    live = (cluster.raw.get("Orchestrator") or {}).get("Slurm") or {}
    items = []
    strategy = live.get("SlurmConfigStrategy", "Managed")  # the service's default
    if strategy != sp.config_strategy:
        items.append(_item("Cluster", cluster.name, "Orchestrator.Slurm.SlurmConfigStrategy", sp.config_strategy,
                           strategy, None))
    db, live_db = sp.accounting_database, live.get("AccountingDatabase") or {}
    planned = {"Endpoint": db.endpoint, "SecretArn": db.secret_arn, "Name": db.name, "Port": db.port} if db else {}
    for member in ("Endpoint", "SecretArn", "Name", "Port"):
        e, a = planned.get(member), live_db.get(member)
        if db and e is None:
            continue  # Name and Port left to the service's defaults
        if e != a:
            items.append(_item("Cluster", cluster.name, f"Orchestrator.Slurm.AccountingDatabase.{member}", e, a,
                               None))
    return items


def _account_items(plan: Plan, want: Account, have: Account) -> list[DriftItem]:
    team = _team_of(plan, want.name)
    pairs = [("Parent", want.parent, have.parent), ("Fairshare", want.fairshare, have.fairshare),
             ("GrpTRES", _tres(want.grp_tres), _tres(have.grp_tres)), ("GrpJobs", want.grp_jobs, have.grp_jobs),
             ("QOS", _list(want.qos), _list(have.qos)), ("DefaultQOS", want.default_qos, have.default_qos),
             ("Description", want.description, have.description),
             ("Organization", want.organization.lower(), have.organization.lower())]
    return [_item("SlurmAccount", want.name, f, e, a, team) for f, e, a in pairs if e != a]


def _qos_items(plan: Plan, want: Qos, have: Qos, team: Optional[str]) -> list[DriftItem]:
    pairs = [("Description", want.description, have.description), ("Priority", want.priority, have.priority),
             ("GrpTRES", _tres(want.grp_tres), _tres(have.grp_tres)), ("Preempt", _list(want.preempt),
                                                                       _list(have.preempt))]
    if want.preempt_mode:
        pairs.append(("PreemptMode", want.preempt_mode, have.preempt_mode))
    if want.flags:
        pairs.append(("Flags", _list(tuple(f.lower() for f in want.flags)),
                      _list(tuple(f.lower() for f in have.flags))))
    return [_item("SlurmQos", want.name, f, e, a, team) for f, e, a in pairs if e != a]


def accounting_items(plan: Plan, live: SlurmState) -> list[DriftItem]:
    """The differences between the organisation's live accounting and ``desired(plan)``."""
    sp = plan.slurm
    assert sp is not None
    want = desired(plan)
    have = governed(live, sp.organisation)
    borrow_team = {q: t.name for t in sp.teams for q in (f"{t.name}{SEPARATOR}{lim.partition.lower()}{SEPARATOR}"
                                                         "borrow" for lim in t.borrow)}
    items: list[DriftItem] = []
    live_accounts = {a.name: a for a in have.accounts}
    planned_accounts = {a.name: a for a in want.accounts}
    for name in sorted(set(live_accounts) | set(planned_accounts)):
        e, a = planned_accounts.get(name), live_accounts.get(name)
        team = _team_of(plan, name)
        if a is None:
            items.append(DriftItem("SlurmAccount", name, "missing", team=team))
        elif e is None:
            items.append(DriftItem("SlurmAccount", name, "unexpected", team=team))
        else:
            items += _account_items(plan, e, a)
    live_qos, planned_qos = {q.name: q for q in have.qos}, {q.name: q for q in want.qos}
    # A QOS the spec plans but that someone else describes (not '<org>: ...') is still the spec's.
    live_qos.update({q.name: q for q in live.qos if q.name in planned_qos})
    for name in sorted(set(live_qos) | set(planned_qos)):
        e, a = planned_qos.get(name), live_qos.get(name)
        team = borrow_team.get(name)
        if a is None:
            items.append(DriftItem("SlurmQos", name, "missing", team=team))
        elif e is None:
            items.append(DriftItem("SlurmQos", name, "unexpected", team=team))
        else:
            items += _qos_items(plan, e, a, team)
    live_users = {(u.name, u.account): u for u in have.users}
    planned_users = {(u.name, u.account): u for u in want.users}
    for key in sorted(set(live_users) | set(planned_users)):
        e, a = planned_users.get(key), live_users.get(key)
        name, team = f"{key[0]}/{key[1]}", _team_of(plan, key[1])
        if a is None:
            items.append(DriftItem("SlurmUser", name, "missing", team=team))
        elif e is None:
            items.append(DriftItem("SlurmUser", name, "unexpected", team=team))
        elif e.default_account != a.default_account:
            items.append(_item("SlurmUser", name, "DefaultAccount", e.default_account, a.default_account, team))
    return items


@dataclass(frozen=True)
class SlurmSide:
    """Whether the accounting was compared (a dump was given) and the commands accounting.sh would run."""

    checked: bool
    reason: str = ""
    commands: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"accounting": "checked" if self.checked else "not checked"}
        if not self.checked:
            out["reason"] = self.reason
        else:
            out["commands"] = list(self.commands)
        return out

    def text(self) -> str:
        if not self.checked:
            return f"Slurm accounting: not checked: {self.reason}\n"
        if not self.commands:
            return "Slurm accounting: checked (the dump matches the spec).\n"
        lines = ["Slurm accounting: checked; slurm/accounting.sh on the controller would run:"]
        lines += [f"  {c}" for c in self.commands]
        return "\n".join(lines) + "\n"


def compare_slurm(plan: Plan, cluster: LiveCluster, live: Optional[SlurmState]) -> tuple[list[DriftItem], SlurmSide]:
    """Every difference of a Slurm cluster (and of its accounting, when ``live`` is given) from the plan."""
    items = _cluster_items(plan, cluster) + _group_items(plan, cluster)
    if live is None:
        return items, SlurmSide(False, "no --slurm-dump given (run `sacctmgr dump CLUSTER file=FILE` on the "
                                "controller)")
    if live.cluster and plan.slurm and live.cluster != plan.slurm.cluster_name.lower():
        items.append(_item("Cluster", cluster.name, "ClusterName", plan.slurm.cluster_name.lower(), live.cluster,
                           None))
    items += accounting_items(plan, live)
    want = desired(plan)
    have = governed(live, plan.slurm.organisation if plan.slurm else "")
    if not live.qos:  # no QOS listing: do not plan QOS commands from an unknown state
        have = SlurmState(accounts=have.accounts, qos=want.qos, users=have.users, cluster=have.cluster)
    return items, SlurmSide(True, commands=tuple(changes(have, want)))


# --- import -------------------------------------------------------------------------------------------------------


def _partition_types(cluster: LiveCluster) -> dict[str, str]:
    out: dict[str, str] = {}
    for g in cluster.instance_groups:
        for p in (g.get("SlurmConfig") or {}).get("PartitionNames") or ():
            out.setdefault(p.lower(), g.get("InstanceType", ""))
    return out


def _quota_entry(itype: str, tres: dict[str, int]) -> Optional[str]:
    if "node" in tres:
        return f"{{instanceType: {_s(itype)}, count: {tres['node']}}}"
    if "gres/gpu" in tres:
        return f"{{instanceType: {_s(itype)}, accelerators: {tres['gres/gpu']}}}"
    if "cpu" in tres:
        memory = f", memoryGib: {tres['mem'] // 1024}" if tres.get("mem") else ""
        return f"{{instanceType: {_s(itype)}, vcpu: {tres['cpu']}{memory}}}"
    return None


def _team_lines(org: str, team: Account, state: SlurmState, types: dict[str, str]) -> list[str]:
    subs = [a for a in state.accounts if a.parent == team.name]
    out = [f"  - name: {_s(team.name)}", f"    fairShareWeight: {min(team.fairshare, 100)}"
           + ("  # Slurm's Fairshare was above 100" if team.fairshare > 100 else "")]
    if team.grp_jobs == 0:
        out.append("    active: false  # GrpJobs=0: the team is paused")
    quota, borrow = [], []
    for sub in subs:
        partition = sub.name[len(team.name) + 1:] if sub.name.startswith(team.name + SEPARATOR) else sub.name
        itype = types.get(partition, "")
        entry = _quota_entry(itype, dict(sub.grp_tres)) if itype else None
        if entry:
            quota.append(entry)
        elif sub.grp_tres:
            out.append(f"    # account {sub.name}: GrpTRES={_tres(sub.grp_tres)} on a partition no group has")
        cap = next((q for q in state.qos if q.name == f"{sub.name}{SEPARATOR}borrow"), None)
        if cap is not None and sub.grp_tres:
            nominal, limit = dict(sub.grp_tres), dict(cap.grp_tres)
            key = next((k for k in ("node", "gres/gpu", "cpu") if k in nominal and k in limit), None)
            if key:
                borrow.append(limit[key] * 100 // max(nominal[key], 1))
    out.append("    quota: [" + ", ".join(quota) + "]" if quota else "    quota: []  # no GrpTRES on a sub-account")
    if borrow:
        out.append(f"    sharing: {{strategy: LendAndBorrow, borrowLimitPercent: {max(borrow)}}}  # from the "
                   "borrow QOS caps")
    else:
        out.append("    sharing: {strategy: Lend}  # guessed: no borrow QOS (DontLend needs a dedicated partition)")
    users = sorted({u.name for u in state.users if u.account in {team.name, *(s.name for s in subs)}})
    out.append(f"    slurm: {{users: [{', '.join(_s(u) for u in users)}]}}" if users
               else "    # slurm: {users: [...]}  # no user associations in the dump")
    return out


def spec_from_live_slurm(cluster: LiveCluster, live: Optional[SlurmState]) -> ImportResult:
    """A Slurm spec of a live Slurm cluster: its groups and strategy, and with a dump, its teams and QOS."""
    slurm = (cluster.raw.get("Orchestrator") or {}).get("Slurm") or {}
    orgs = [a for a in (live.accounts if live else ()) if a.parent == ROOT_ACCOUNT]
    org = orgs[0].name if len(orgs) == 1 else _label(cluster.name, 20)
    why = ("the one account under root in the dump" if len(orgs) == 1 else
           "guessed from the cluster name (the dump has no single account under root)")
    lines = [
        f"# Imported by `hyperpod-gov import` from Slurm-orchestrated HyperPod cluster {cluster.name}",
        f"# ({cluster.arn}).",
        "# The accounting comes from a sacctmgr dump" + (" given with --slurm-dump." if live else
                                                         " (none given: teams left as placeholders)."),
        f"name: {_s(org)}  # {why}",
        "accounts:",
        f"  capacity: {{id: {json.dumps(cluster.account)}, region: {_s(cluster.region)}}}",
        "cluster:",
        f"  name: {_s(cluster.name)}",
        "  orchestrator: slurm",
        f"  slurm: {{configStrategy: {slurm.get('SlurmConfigStrategy', 'Managed')}}}",
    ]
    db = slurm.get("AccountingDatabase")
    if db:
        lines[-1] = lines[-1][:-1] + ", accountingDatabase: {" + ", ".join(
            f"{k[0].lower() + k[1:]}: {_s(db[k])}" for k in ("Endpoint", "SecretArn", "Name", "Port") if k in db) + "}}"
    lines.append("  instanceGroups:")
    for g in cluster.instance_groups:
        config = g.get("SlurmConfig") or {}
        role = f"nodeType: {config.get('NodeType', 'Compute')}"
        if config.get("PartitionNames"):
            role += f", partition: {_s(config['PartitionNames'][0])}"
        count = g.get("TargetCount", g.get("CurrentCount", 0))
        lines += [f"    - name: {_s(_label(g.get('InstanceGroupName', ''), 63))}",
                  f"      instanceType: {_s(g.get('InstanceType', ''))}", f"      count: {count}",
                  f"      slurm: {{{role}}}"]
    mine = governed(live, org) if live else None
    classes = [q for q in (mine.qos if mine else ()) if q.description.startswith(f"{org}: priority class ")]
    lines.append("scheduler:")
    lines.append("  priorityClasses: [" + ", ".join(f"{{name: {_s(q.name)}, weight: {q.priority}}}"
                                                     for q in classes) + "]")
    teams = [a for a in (mine.accounts if mine else ()) if a.parent == org]
    if teams and mine is not None:
        lines.append("teams:")
        types = _partition_types(cluster)
        for team in teams:
            lines += _team_lines(org, team, mine, types)
    else:
        lines.append("teams: []  # give --slurm-dump to import the teams from the accounting")
    text = "\n".join(lines) + "\n"
    return ImportResult(text, _issues(text))
