"""Plain-text review of an allocation: what each team owns, lends, borrows and may run."""

from __future__ import annotations

from .plan import Plan
from .plan.invariants import plan_warnings
from .plan.views import dedicated_groups, shared_file_system, team_columns
from .plan.words import NO_IDLE_SHARING, PAUSE_EFFECT, borrows, lends, owns, paused, unowned

__all__ = ["explain", "owns", "lends", "borrows", "paused", "unowned", "PAUSE_EFFECT", "NO_IDLE_SHARING"]

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
    columns = {t.name: team_columns(t) for t in plan.teams}
    headers = ["TEAM", *(h for h, _ in columns[plan.teams[0].name])] if plan.teams else ["TEAM"]
    rows = [[t.name + (" (shared pool)" if t.is_shared_pool else "") + ("" if t.active else " (paused)"),
             *(v for _, v in columns[t.name])] for t in plan.teams]
    capacity = ", ".join(f"{f.instances} x {f.instance_type}"
                         + (f" (GPUs as {f.mig_resource.removeprefix('nvidia.com/')})" if f.mig_resource else "")
                         for f in plan.flavors)
    nobody = unowned(plan)
    parts = [
        f"Spec {plan.name}: cluster {plan.cluster_name}, {plan.mode} mode ({_backend(plan)}), idle compute "
        f"{plan.idle_compute}" + ("" if plan.idle_resource_sharing else f", {NO_IDLE_SHARING}: no team borrows"),
        *([f"Governs an existing cluster: {plan.cluster.existing.hyperpod_arn} (EKS {plan.eks_cluster_name}); "
           "creates no VPC, EKS or HyperPod cluster"] if plan.cluster.existing else []),
        f"Capacity: {capacity}",
        # Dedicated node groups and shared storage: which group is whose, and the teams' file system.
        *([f"Dedicated groups: {'; '.join(dedicated_groups(plan))}"] if plan.dedicated else []),
        *([f"Shared file system: {shared_file_system(plan)}"] if plan.shared_storage is not None else []),
        "Owned by nobody (runs only borrowed work): " + (", ".join(nobody) if nobody else "nothing"),
        f"Priority classes (highest first; work without a class runs last): {classes or 'none'}",
        "",
        _table(headers, rows),
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
    parts += ["", "Monitoring (CloudWatch):", *(f"  {line}" for line in plan.monitoring.counts.lines())]
    stacks = plan.stacks
    parts += ["", f"Stacks: {stacks.capacity + ', ' if stacks.capacity else ''}{stacks.governance}, {stacks.monitoring}, {len(stacks.access)} "
                  f"access, {len(stacks.teams)} team, {len(stacks.consumers)} consumer"]
    for issue in plan_warnings(plan):
        parts.append(f"Note: {issue}")
    return "\n".join(parts) + "\n"


def _role_name(arn: str) -> str:
    """Short form of an IAM ARN: account/role-name."""
    account = arn.split(":")[4]
    return f"{account}:{arn.split(':', 5)[5]}"
