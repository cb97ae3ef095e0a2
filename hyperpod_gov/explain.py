"""Plain-text review of an allocation: what each team owns, lends, borrows and may run."""

from __future__ import annotations

from .plan import GovernancePlan, TeamPlan
from .plan.quotas import FlavorQuota
from .spec.models import GovernanceSpec


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


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(x.rstrip() for x in out)


def explain(spec: GovernanceSpec, plan: GovernancePlan) -> str:
    """A review of the allocation that a person can read without the YAML."""
    classes = ", ".join(f"{p.name} ({p.weight})" for p in sorted(plan.priority_classes, key=lambda p: -p.weight))
    teams_by_name = {t.name: t for t in spec.teams}
    rows = []
    for t in plan.teams:
        rows.append(
            [
                t.name + (" (shared pool)" if t.is_shared_pool else ""),
                owns(t),
                lends(t),
                borrows(t),
                str(t.fair_share_weight),
                t.preempt_team_tasks,
            ]
        )
    capacity = ", ".join(f"{f.instances} x {f.instance_type}" for f in plan.flavors)
    parts = [
        f"Spec {spec.name}: cluster {spec.cluster.name}, {spec.scheduler.mode} mode, idle compute "
        f"{spec.scheduler.idle_compute}",
        f"Capacity: {capacity}",
        f"Priority classes (highest first; work without a class runs last): {classes or 'none'}",
        "",
        _table(["TEAM", "OWNS", "CAN LEND", "MAY BORROW", "WEIGHT", "PREEMPTS OWN"], rows),
    ]
    access_rows = []
    for t in plan.teams:
        team = teams_by_name.get(t.name)
        if team is None:
            continue
        access_rows.append(
            [
                t.name,
                t.namespace,
                "; ".join(_role_name(a) for a in team.access.viewers) or "-",
                "; ".join(_role_name(a) for a in team.access.submitters) or "-",
                ", ".join(p.name for p in plan.priority_classes) or "-",
            ]
        )
    parts += ["", _table(["TEAM", "NAMESPACE", "CAN VIEW", "CAN SUBMIT", "PRIORITY CLASSES"], access_rows)]
    return "\n".join(parts) + "\n"


def _role_name(arn: str) -> str:
    """Short form of an IAM ARN: account/role-name."""
    account = arn.split(":")[4]
    return f"{account}:{arn.split(':', 5)[5]}"
