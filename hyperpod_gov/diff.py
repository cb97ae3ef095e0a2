"""What a spec change does, in governance terms first, then resource by resource."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from .explain import PAUSE_EFFECT, borrows, lends, owns
from .plan import IdentityPlan, Plan, TeamPlan


def _changed(label: str, old: Any, new: Any) -> list[str]:
    return [] if old == new else [f"{label}: {old} -> {new}"]


def _members(label: str, old: Iterable[str], new: Iterable[str]) -> list[str]:
    old_set, new_set = set(old), set(new)
    out = [f"{label}: + {x}" for x in sorted(new_set - old_set)]
    out += [f"{label}: - {x}" for x in sorted(old_set - new_set)]
    return out


def _identity(w: IdentityPlan) -> str:
    if w.created_target is not None:
        return f"{w.service_account} -> role {w.created_target.name} in {w.consumer}"
    if w.target_role_arn:
        return f"{w.service_account} -> {w.target_role_arn}"
    return f"{w.service_account} (same account)"


def _team_summary(tp: TeamPlan) -> str:
    return f"owns {owns(tp)}; can lend {lends(tp)}; may borrow {borrows(tp)}; weight {tp.fair_share_weight}"


def governance_diff(old_plan: Plan, new_plan: Plan) -> list[str]:
    """Plain-words lines: teams added or removed, quotas, borrow caps, sharing, priorities, people."""
    lines: list[str] = []
    lines += _changed("scheduler mode", old_plan.mode, new_plan.mode)
    lines += _changed("idle compute", old_plan.idle_compute, new_plan.idle_compute)
    old_cap, new_cap = old_plan.capacity(), new_plan.capacity()
    for itype in sorted(set(old_cap) | set(new_cap)):
        lines += _changed(f"capacity {itype} (instances)", old_cap.get(itype, 0), new_cap.get(itype, 0))
    old_pc = {p.name: p.weight for p in old_plan.priority_classes}
    new_pc = {p.name: p.weight for p in new_plan.priority_classes}
    for name in sorted(set(old_pc) | set(new_pc)):
        if name not in old_pc:
            lines.append(f"priority class {name} added (weight {new_pc[name]})")
        elif name not in new_pc:
            lines.append(f"priority class {name} removed (weight {old_pc[name]})")
        else:
            lines += _changed(f"priority class {name} weight", old_pc[name], new_pc[name])

    old_teams = {t.name: t for t in old_plan.tenants}
    new_teams = {t.name: t for t in new_plan.tenants}
    for name in sorted(set(old_teams) - set(new_teams)):
        lines.append(f"team {name} removed: its quota, access, workload identities and team objects are deleted "
                     f"(it {_team_summary(old_teams[name])})")
    for name in sorted(set(new_teams) - set(old_teams)):
        t = new_teams[name]
        lines.append(f"team {name} added{'' if t.active else ' paused'}: {_team_summary(t)}; "
                     f"{len(t.viewers)} viewer(s), {len(t.submitters)} submitter(s)")
    for name in sorted(set(old_teams) & set(new_teams)):
        o, n = old_teams[name], new_teams[name]
        prefix = f"team {name}"
        if o.active and not n.active:
            lines.append(f"{prefix} paused: {PAUSE_EFFECT}")
        elif n.active and not o.active:
            lines.append(f"{prefix} resumed: its queued work is admitted again, within its quota")
        lines += _changed(f"{prefix} owns", owns(o), owns(n))
        lines += _changed(f"{prefix} sharing", o.strategy, n.strategy)
        lines += _changed(f"{prefix} may borrow", borrows(o), borrows(n))
        lines += _changed(f"{prefix} can lend", lends(o), lends(n))
        lines += _changed(f"{prefix} fair-share weight", o.fair_share_weight, n.fair_share_weight)
        lines += _changed(f"{prefix} preempts its own lower-priority work", o.preempt_team_tasks, n.preempt_team_tasks)
        lines += _members(f"{prefix} can view", o.viewers, n.viewers)
        lines += _members(f"{prefix} can submit", o.submitters, n.submitters)
        lines += _members(f"{prefix} workload identity",
                          (_identity(i) for i in old_plan.identities if i.team == name),
                          (_identity(i) for i in new_plan.identities if i.team == name))
        lines += _members(f"{prefix} egress", (f"{e.cidr} {e.protocol} {list(e.ports)}" for e in o.egress),
                          (f"{e.cidr} {e.protocol} {list(e.ports)}" for e in n.egress))
        if o.contract != n.contract:
            lines.append(f"{prefix} contract changed")
    return lines


def _resources(templates: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(stack, lid): r for stack, t in templates.items() for lid, r in t.get("Resources", {}).items()}


def _objects(manifests: dict[str, Any]) -> dict[tuple[str, str, str], Any]:
    objs = [*manifests["cluster"], *(o for team in manifests["teams"].values() for o in team)]
    return {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in objs}


def _compare(old: dict, new: dict, render: Callable[[Any, Any], str]) -> list[str]:
    """``+`` added, ``-`` removed, ``~`` changed, one line per key, sorted."""
    lines = []
    for key in sorted(set(old) | set(new)):
        if key not in old:
            lines.append(f"+ {render(key, new[key])}")
        elif key not in new:
            lines.append(f"- {render(key, old[key])}")
        elif old[key] != new[key]:
            lines.append(f"~ {render(key, new[key])}")
    return lines


def resource_diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Resource-level lines from two ``testing.synth_snapshot`` structures: + added, - removed, ~ changed."""
    resources = _compare(_resources(old["templates"]), _resources(new["templates"]),
                         lambda key, r: f"{key[0]}/{key[1]} ({r['Type']})")
    objects = _compare(_objects(old["manifests"]), _objects(new["manifests"]),
                       lambda key, _: f"k8s {key[0]} {key[1] + '/' if key[1] else ''}{key[2]}")
    return resources + objects
