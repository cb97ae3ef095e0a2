"""``explain --format json``: the same plan as one JSON document (``hyperpod_gov/schemas/explain.json``).

Every value is taken from the plan, as ``explain``'s text is; ``hyperpod_gov.explain`` re-exports
:func:`explain_json`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Iterable, Optional

from .cost.inventory import resource_counts
from .plan import Plan
from .plan.elastic import capacity_lines, line_json
from .plan.quotas import Allocated, Amounts, TeamPlan
from .plan.slurm_task_view import task_view, view_json
from .plan.unified_studio import CREATE_PROJECT, MEMBER_POOL, OVERRIDE_PROJECT_OWNERS
from .plan.views_studio import studio_domains_of
from .plan.words import borrows, lends, owns


def _amounts(a: Optional[Amounts]) -> Optional[dict[str, Any]]:
    if a is None:
        return None
    return {"accelerators": a.accelerators, "vcpu": a.vcpu, "memoryGib": a.memory_gib,
            "partitions": {resource: n for resource, n in a.partitions}}


def _allocated(a: Allocated) -> dict[str, Any]:
    return {"instanceType": a.instance_type, "count": a.count, "accelerators": a.accelerators, "vcpu": a.vcpu,
            "memoryGib": a.memory_gib,
            "partition": {"profile": a.partition[0], "count": a.partition[1]} if a.partition else None}


def _team_json(plan: Plan, t: TeamPlan) -> dict[str, Any]:
    return {
        "name": t.name,
        "namespace": t.namespace,
        "sharedPool": t.is_shared_pool,
        "active": t.active,
        "quota": [{"instanceType": f.instance_type, "acceleratorKind": f.accelerator_kind,
                   "migResource": f.mig_resource, **_amounts(f.nominal),  # type: ignore[dict-item]
                   "lendingLimit": _amounts(f.lending_limit), "borrowingLimit": _amounts(f.borrowing_limit)}
                  for f in t.owned],
        "sharing": {"strategy": t.strategy, "canLend": t.can_lend, "canBorrow": t.can_borrow,
                    "borrowLimitPercent": t.borrow_limit_percent,
                    "absoluteBorrowLimits": [_allocated(a) for a in t.absolute_borrow_limits]},
        "fairShareWeight": t.fair_share_weight,
        "preemptTeamTasks": t.preempt_team_tasks,
        "priorityClasses": list(t.priority_classes),
        "viewers": list(t.viewers),
        "submitters": list(t.submitters),
        "identities": [{"serviceAccount": i.service_account, "sourceRoleArn": i.source_role_arn,
                        "targetRoleArn": i.target_role_arn, "consumer": i.consumer}
                       for i in t.identities],
        "words": {"owns": owns(t), "lends": lends(t), "borrows": borrows(t)},
        # teams[].contract: a team without a contract is shared and states no network path (contracts/events.py)
        "isolation": t.contract.isolation if t.contract else "shared",
        "networkPath": t.contract.network_path if t.contract else None,
        **({"studioTaskView": view_json(task_view(plan.slurm, t.slurm, t.contract))}
           if plan.slurm is not None and t.slurm is not None else {}),
    }


def _cost_json(plan: Plan, today: dt.date) -> dict[str, Any]:
    """``resources``: the billed resources per CloudFormation type (``cost.resource_counts``, the synthesized
    counts); ``cost``: the fixed monthly lines on ``today``, their total and the EKS support tier they assume."""
    from .cost.page import cost_lines, monthly_total, tier_of

    lines = cost_lines(plan, today)
    tier = tier_of(plan, today)
    return {
        "resources": resource_counts(plan),
        "cost": {
            "day": today.isoformat(),
            "monthlyUsd": round(monthly_total(lines), 2),
            "kubernetesSupport": None if tier is None else {
                "version": tier.version, "tier": tier.tier, "until": tier.until.isoformat(),
                "controlPlaneUsdPerHour": tier.hourly_usd},
            "lines": [{"item": c.item, "count": c.count, "rate": c.rate,
                       "monthlyUsd": None if c.monthly is None else round(c.monthly, 2), "source": c.source}
                      for c in lines],
        },
    }


def explain_json(plan: Plan, warnings: Iterable[Any] = (), *, environment: Optional[str] = None,
                 today: Optional[dt.date] = None) -> dict[str, Any]:
    """``explain`` as one JSON document (``hyperpod_gov/schemas/explain.json``), every value taken from the plan.

    ``warnings``: the spec rules' and plan invariants' findings the spec does not acknowledge (``cli.review_of``).
    Teams in the plan's order (the shared pool, if any, marked ``sharedPool``); capacity per instance type, and
    ``capacityKinds``: guaranteed, elastic and interruptible per type and per flexible group (``plan.elastic``);
    ``stacks``: every stack's name in deploy order (``StackLayout.all_names``); ``resources`` and ``cost``: what
    the text's cost lines say (``today``, default the day it runs, dates the EKS support tier).
    """
    from .schemas import issue_json

    return {
        "spec": plan.name,
        "environment": environment,
        "cluster": plan.cluster_name,
        "orchestrator": "slurm" if plan.slurm is not None else "eks",
        "mode": plan.mode,
        "idleCompute": plan.idle_compute,
        "idleResourceSharing": plan.idle_resource_sharing,
        **_scheduling_json(plan),
        **_studio_json(plan),
        "capacity": [{"instanceType": f.instance_type, "instances": f.instances, "acceleratorKind": f.accelerator_kind,
                      "migResource": f.mig_resource, "accelerators": f.capacity.accelerators,
                      "acceleratorsPerInstance": f.per_instance.accelerators, "vcpu": f.capacity.vcpu,
                      "memoryGib": f.capacity.memory_gib,
                      "partitions": {resource: n for resource, n in f.capacity.partitions}} for f in plan.flavors],
        "capacityKinds": [line_json(line) for line in capacity_lines(plan.instance_groups, plan.catalog)],
        "priorityClasses": [{"name": p.name, "weight": p.weight}
                            for p in sorted(plan.priority_classes, key=lambda p: (-p.weight, p.name))],
        "teams": [_team_json(plan, t) for t in plan.teams],
        "stacks": list(plan.stacks.all_names),
        **_cost_json(plan, today or dt.date.today()),
        "warnings": [issue_json(w, environment) for w in warnings],
    }


def _studio_json(plan: Plan) -> dict[str, Any]:
    """explain --format json's Unified Studio delegation (unifiedStudio), present only when the spec has it: each
    domain with the units, profiles and projects it creates and who holds each grant."""
    domains = studio_domains_of(plan)
    if not domains:
        return {}
    return {"unifiedStudio": [{
        "domain": d.id, "account": d.account, "region": d.region,
        "domainUnits": [{"name": u.name, "parent": u.parent, "owners": list(u.owners), "projectProfiles": list(u.profiles),
                         "projectCreators": list(u.grantees(CREATE_PROJECT)),
                         "projectOwnersOverride": list(u.grantees(OVERRIDE_PROJECT_OWNERS)),
                         "memberPool": list(u.grantees(MEMBER_POOL))} for u in d.units],
        "projectProfiles": [{"name": p.name, "environments": [e.name for e in p.environments]} for p in d.profiles],
        "projects": [{"name": p.name, "team": p.team, "domainUnit": p.unit, "projectProfile": p.profile,
                      "owners": list(p.owners), "members": list(p.members)} for p in d.projects],
    } for d in domains.values()]}


def _scheduling_json(plan: Plan) -> dict[str, Any]:
    """explain --format json's scheduling controls, present only when the spec sets them."""
    out: dict[str, Any] = {}
    if plan.gang_scheduling is not None:
        out["gangScheduling"] = plan.gang_scheduling.wait_for_pods_ready()
    if plan.topology is not None:
        out["topology"] = {"levels": list(plan.topology.levels),
                           "kueueTopology": plan.topology.name if plan.emits_kueue_objects else None}
    return out
