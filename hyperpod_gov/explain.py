"""Plain-text review of an allocation: what each team owns, lends, borrows and may run."""

from __future__ import annotations

from .plan import Plan, TeamPlan
from .plan.quotas import FlavorQuota, amounts_for

_UNITS = {"nvidia.com/gpu": "GPU", "aws.amazon.com/neurondevice": "Neuron device"}


def _amount(f: FlavorQuota, n: int) -> str:
    unit = _UNITS.get(f.accelerator_kind or "", "vCPU")
    return f"{n} {unit}{'s' if n != 1 else ''} ({f.instance_type})"


def _main_amount(f: FlavorQuota, which: str) -> int:
    amounts = getattr(f, which)
    if amounts is None:
        amounts = f.nominal
    return amounts.accelerators if f.accelerator_kind else amounts.vcpu


def owns(team: TeamPlan) -> str:
    return ", ".join(_amount(f, _main_amount(f, "nominal")) for f in team.owned) or "nothing"


def lends(team: TeamPlan) -> str:
    if not team.can_lend:
        return "nothing (DontLend)"
    return "idle share of " + owns(team) if team.owned else "nothing"


def borrows(team: TeamPlan) -> str:
    if not team.can_borrow:
        return f"nothing ({team.strategy})"
    caps = [_amount(f, _main_amount(f, "borrowing_limit")) for f in team.owned]
    return f"up to {', '.join(caps) or 'nothing'} ({team.borrow_limit_percent}%)"


def unowned(plan: Plan) -> list[str]:
    """Capacity per instance type that no team (nor the shared pool) owns: it runs only borrowed work."""
    out = []
    for flavor in plan.flavors:
        kind = flavor.accelerator_kind
        owned_by_teams = [next(f for f in t.flavors if f.instance_type == flavor.instance_type) for t in plan.teams]
        total = amounts_for(flavor.instance_type, count=flavor.instances)
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
        [t.name + (" (shared pool)" if t.is_shared_pool else ""), owns(t), lends(t), borrows(t),
         str(t.fair_share_weight), t.preempt_team_tasks]
        for t in plan.teams
    ]
    capacity = ", ".join(f"{f.instances} x {f.instance_type}" for f in plan.flavors)
    nobody = unowned(plan)
    parts = [
        f"Spec {plan.name}: cluster {plan.cluster_name}, {plan.mode} mode ({_backend(plan)}), idle compute "
        f"{plan.idle_compute}",
        f"Capacity: {capacity}",
        "Owned by nobody (runs only borrowed work): " + (", ".join(nobody) if nobody else "nothing"),
        f"Priority classes (highest first; work without a class runs last): {classes or 'none'}",
        "",
        _table(["TEAM", "OWNS", "CAN LEND", "MAY BORROW", "WEIGHT", "PREEMPTS OWN"], rows),
    ]
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
