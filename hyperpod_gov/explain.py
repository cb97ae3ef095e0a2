"""Plain-text review of an allocation: what each team owns, lends, borrows and may run."""

from __future__ import annotations

from .plan import Plan, TeamPlan
from .plan.quotas import Amounts, FlavorQuota, amounts_for

_UNITS = {"nvidia.com/gpu": "GPU", "aws.amazon.com/neurondevice": "Neuron device"}
# What pausing a team (teams[].active: false) does, in both modes.
PAUSE_EFFECT = ("nothing new of the team is admitted (ComputeQuota ActivationState: Disabled; kueue mode: "
                "ClusterQueue stopPolicy: Hold); work already admitted keeps running until it ends; its queued work "
                "waits; its namespace, access and objects stay")
NO_IDLE_SHARING = "idle resource sharing is off"


def _amount(f: FlavorQuota, n: int) -> str:
    unit = _UNITS.get(f.accelerator_kind or "", "vCPU")
    return f"{n} {unit}{'s' if n != 1 else ''} ({f.instance_type})"


def _describe(f: FlavorQuota, amounts: Amounts) -> str:
    """An amount on one flavor in the unit the flavor is governed in: partitions, accelerators or vCPU."""
    if f.mig_resource:
        profile = f.mig_resource.removeprefix("nvidia.com/")
        return f"{amounts.partition(f.mig_resource)} x {profile} ({f.instance_type})"
    if f.accelerator_kind:
        return _amount(f, amounts.accelerators)
    if f.vcpu is not None:  # given as vCPU and memory: both matter
        return f"{amounts.vcpu} vCPU + {amounts.memory_gib} GiB ({f.instance_type})"
    return _amount(f, amounts.vcpu)


def _main_amount(f: FlavorQuota, which: str) -> int:
    amounts = getattr(f, which)
    if amounts is None:
        amounts = f.nominal
    return f.governed(amounts)


def owns(team: TeamPlan) -> str:
    return ", ".join(_describe(f, f.nominal) for f in team.owned) or "nothing"


def lends(team: TeamPlan) -> str:
    if not team.can_lend:
        return "nothing (DontLend)"
    if not team.idle_resource_sharing:
        return f"nothing ({NO_IDLE_SHARING})"
    return "idle share of " + owns(team) if team.owned else "nothing"


def borrows(team: TeamPlan) -> str:
    if not team.can_borrow:
        reason = team.strategy if team.strategy != "LendAndBorrow" else NO_IDLE_SHARING
        return f"nothing ({reason})"
    absolute = {b.instance_type for b in team.absolute_borrow_limits}
    caps = [_describe(f, f.borrowing_limit or f.nominal) for f in team.flavors
            if f in team.owned or f.instance_type in absolute]
    how = f"{team.borrow_limit_percent}%"
    if absolute:
        how += "; absolute on " + ", ".join(sorted(absolute))
    return f"up to {', '.join(caps) or 'nothing'} ({how})"


def paused(plan: Plan) -> list[str]:
    """The paused teams, each with what pausing does to its work."""
    return [f"{t.name}: {PAUSE_EFFECT}" for t in plan.tenants if not t.active]


def unowned(plan: Plan) -> list[str]:
    """Capacity per instance type that no team (nor the shared pool) owns: it runs only borrowed work."""
    out = []
    for flavor in plan.flavors:
        owned_by_teams = [next(f for f in t.flavors if f.instance_type == flavor.instance_type) for t in plan.teams]
        profile = flavor.mig_resource.removeprefix("nvidia.com/") if flavor.mig_resource else None
        total = amounts_for(flavor.instance_type, count=flavor.instances, mig_profile=profile, catalog=plan.catalog)
        if flavor.mig_resource:
            left = total.partition(flavor.mig_resource) - sum(f.nominal.partition(flavor.mig_resource)
                                                                for f in owned_by_teams)
            if left > 0:
                out.append(f"{left} x {profile} ({flavor.instance_type})")
            continue
        kind = flavor.accelerator_kind
        used = sum((f.nominal.accelerators if kind else f.nominal.vcpu) for f in owned_by_teams)
        left = (total.accelerators if kind else total.vcpu) - used
        if left > 0:
            out.append(_amount(owned_by_teams[0], left) if owned_by_teams else f"{left} ({flavor.instance_type})")
    return out


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(x.rstrip() for x in out)


def _backend(plan: Plan) -> str:
    if plan.task_governance_backend == "native":
        return "cluster policy and quotas as native CloudFormation resources"
    if plan.task_governance_backend == "custom-resource":
        return (f"cluster policy and quotas through an SDK-backed custom resource ({plan.region}'s CloudFormation "
                "has no AWS::SageMaker::ClusterSchedulerConfig / ComputeQuota)")
    return "Kueue objects emitted by hyperpod-gov"


def explain(plan: Plan) -> str:
    """A review of the allocation that a person can read without the YAML."""
    classes = ", ".join(f"{p.name} ({p.weight})" for p in sorted(plan.priority_classes, key=lambda p: -p.weight))
    rows = [
        [t.name + (" (shared pool)" if t.is_shared_pool else "") + ("" if t.active else " (paused)"), owns(t),
         lends(t), borrows(t),
         str(t.fair_share_weight), t.preempt_team_tasks]
        for t in plan.teams
    ]
    capacity = ", ".join(f"{f.instances} x {f.instance_type}"
                         + (f" (GPUs as {f.mig_resource.removeprefix('nvidia.com/')})" if f.mig_resource else "")
                         for f in plan.flavors)
    nobody = unowned(plan)
    parts = [
        f"Spec {plan.name}: cluster {plan.cluster_name}, {plan.mode} mode ({_backend(plan)}), idle compute "
        f"{plan.idle_compute}" + ("" if plan.idle_resource_sharing else f", {NO_IDLE_SHARING}: no team borrows"),
        f"Capacity: {capacity}",
        "Owned by nobody (runs only borrowed work): " + (", ".join(nobody) if nobody else "nothing"),
        f"Priority classes (highest first; work without a class runs last): {classes or 'none'}",
        "",
        _table(["TEAM", "OWNS", "CAN LEND", "MAY BORROW", "WEIGHT", "PREEMPTS OWN"], rows),
    ]
    stopped = paused(plan)
    if stopped:
        parts += ["", "Paused teams:", *(f"  {line}" for line in stopped)]
    access_rows = [
        [t.name, t.namespace, "; ".join(_role_name(a) for a in t.viewers) or "-",
         "; ".join(_role_name(a) for a in t.submitters) or "-", ", ".join(p.name for p in plan.priority_classes) or "-"]
        for t in plan.tenants
    ]
    parts += ["", _table(["TEAM", "NAMESPACE", "CAN VIEW", "CAN SUBMIT", "PRIORITY CLASSES"], access_rows)]
    if plan.monitoring is not None:
        parts += ["", "Monitoring (CloudWatch):", *(f"  {line}" for line in plan.monitoring.counts.lines())]
    stacks = plan.stacks
    parts += ["", f"Stacks: {stacks.capacity}, {stacks.governance}, {stacks.monitoring}, {len(stacks.access)} "
                  f"access, {len(stacks.teams)} team, {len(stacks.consumers)} consumer"]
    for issue in plan.warnings:
        parts.append(f"Note: {issue}")
    return "\n".join(parts) + "\n"


def _role_name(arn: str) -> str:
    """Short form of an IAM ARN: account/role-name."""
    account = arn.split(":")[4]
    return f"{account}:{arn.split(':', 5)[5]}"
