"""Spec level: a governance plan's queues, exactly as ``kueue`` mode emits them, run over a trace.

The queues come from :func:`hyperpod_gov.plan.kueue.cluster_queue_spec` and the fair-sharing
configuration from :func:`hyperpod_gov.plan.kueue.fair_sharing_config` (parsed, not re-derived), both
built from the plan's one declaration of the Kueue settings (``plan.kueue.KUEUE_SETTINGS``), so the
simulator sees what the cluster would get.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence, get_args

from ..plan import amounts_for, names
from ..plan.kueue import KUEUE_SETTINGS, KueueSettings, cluster_queue_spec, fair_sharing_config
from ..spec.errors import SpecError, SpecIssue
from .engine import Result, simulate
from .model import (
    Event,
    FairSharingStrategy,
    FlavorQuotas,
    Preemption,
    QueueDef,
    ResourceQuota,
    Scenario,
    WorkloadDef,
)
from .quantities import parse_quantity
from .spec_nodes import amounts_requests, team_node_figures, with_capacity
from .timeline import CapacityTimeline
from .trace import TraceRow


def _quantity(resource: str, value: Any, where: str) -> int:
    parsed = parse_quantity(resource, value)
    if parsed is None:  # the plan emitted something Kueue would reject: a bug in the plan, not user input
        raise SpecError([SpecIssue(where, "is not a quantity", value, "report this: the plan emitted it")])
    return parsed


def queue_from_cluster_queue(name: str, spec: dict[str, Any]) -> QueueDef:
    """Parse a ClusterQueue ``spec`` dict (one resource group) into the simulator's queue."""
    groups = spec.get("resourceGroups") or []
    flavors = []
    for g in groups:
        for f in g.get("flavors", []):
            resources = []
            for r in f.get("resources", []):
                rn = r["name"]
                where = f"ClusterQueue {name} flavor {f['name']} resource {rn}"
                resources.append((rn, ResourceQuota(
                    nominal=_quantity(rn, r["nominalQuota"], where),
                    borrowing_limit=_quantity(rn, r["borrowingLimit"], where) if "borrowingLimit" in r else None,
                    lending_limit=_quantity(rn, r["lendingLimit"], where) if "lendingLimit" in r else None,
                )))
            flavors.append(FlavorQuotas(f["name"], tuple(resources)))
    p = spec.get("preemption") or {}
    bwc = p.get("borrowWithinCohort") or {}
    fs = spec.get("fairSharing") or {}
    weight = fs.get("weight", 1)
    return QueueDef(
        name=name,
        stopped=spec.get("stopPolicy", "None") != "None",
        cohort=spec.get("cohortName") or None,
        fair_sharing_weight=float(weight),
        queueing_strategy=spec.get("queueingStrategy", "BestEffortFIFO"),
        preemption=Preemption(
            within_cluster_queue=p.get("withinClusterQueue", "Never"),
            reclaim_within_cohort=p.get("reclaimWithinCohort", "Never"),
            borrow_within_cohort=bwc.get("policy", "Never"),
            max_priority_threshold=bwc.get("maxPriorityThreshold"),
        ),
        flavors=tuple(flavors),
    )


def plan_queues(plan: Any, settings: KueueSettings = KUEUE_SETTINGS) -> dict[str, QueueDef]:
    """Team name -> its ClusterQueue, built from the exact spec kueue mode emits."""
    return {
        team.name: queue_from_cluster_queue(team.cluster_queue,
                                            cluster_queue_spec(plan.cohort, plan.covered_resources, team, settings))
        for team in plan.teams
    }


def fair_sharing_from_config(config: dict[str, Any]) -> tuple[bool, tuple[FairSharingStrategy, ...]]:
    """Parse the ``fairSharing`` block of Kueue's controller Configuration: (enabled, preemption strategies)."""
    known = get_args(FairSharingStrategy)
    strategies = tuple(config.get("preemptionStrategies") or ())
    for i, s in enumerate(strategies):
        if s not in known:  # the plan emitted a strategy this Kueue model does not know: a bug, not user input
            raise SpecError([SpecIssue(f"fairSharing.preemptionStrategies[{i}]", f"is not one of {', '.join(known)}",
                                       s, "report this: the plan emitted it")])
    return bool(config.get("enable")), strategies


def plan_fair_sharing(plan: Any,
                      settings: KueueSettings = KUEUE_SETTINGS) -> tuple[bool, tuple[FairSharingStrategy, ...]]:
    """Whether the plan's Kueue runs fair sharing, and with which preemption strategies, as its
    controller Configuration states them."""
    return fair_sharing_from_config(fair_sharing_config(bool(plan.fair_sharing), settings))


def plan_priorities(plan: Any) -> dict[str, int]:
    """Priority class (spec name and WorkloadPriorityClass name) -> weight; '' -> the lowest weight."""
    out: dict[str, int] = {}
    for pc in plan.priority_classes:
        out[pc.name] = pc.weight
        out[pc.kueue_name] = pc.weight
    out[""] = min((pc.weight for pc in plan.priority_classes), default=0)
    return out


def trace_checks(plan: Any) -> dict[str, Iterable[str]]:
    """Names a trace row may use with this plan (for :func:`load_trace`)."""
    return {
        "teams": [t.name for t in plan.teams],
        "priority_classes": [k for k in plan_priorities(plan) if k],
        "instance_types": [f.instance_type for f in plan.flavors],
    }


def _mig_resource(plan: Any, instance_type: str) -> Optional[str]:
    """The MIG resource a partitioned type's flavor offers instead of whole GPUs (None: whole GPUs)."""
    for f in plan.flavors:
        if f.instance_type == instance_type:
            return getattr(f, "mig_resource", None)
    return None


def _amounts(plan: Any, row: TraceRow):
    """The row's Kueue amounts. On a partitioned type whole instances bring their GPUs as partitions, and
    ``accelerators: N`` asks for N GPUs' worth of partitions (the flavor offers no whole GPUs)."""
    mig = _mig_resource(plan, row.instance_type)
    if mig is None:
        return amounts_for(row.instance_type, count=row.instances, accelerators=row.accelerators,
                           catalog=plan.catalog)
    profile = mig.removeprefix("nvidia.com/")
    if row.instances is not None:
        return amounts_for(row.instance_type, count=row.instances, mig_profile=profile, catalog=plan.catalog)
    found = plan.catalog.lookup(row.instance_type).mig_profile(profile)
    per_gpu = found.per_gpu if found else 1
    return amounts_for(row.instance_type, partition=(profile, (row.accelerators or 0) * per_gpu), catalog=plan.catalog)


def _requests(plan: Any, row: TraceRow) -> tuple[tuple[str, int], ...]:
    return amounts_requests(plan, row.instance_type, _amounts(plan, row))


def _accelerators(plan: Any, row: TraceRow) -> int:
    """GPUs (or other accelerators) the row asks for, whole or partitioned alike."""
    if row.accelerators is not None:
        return row.accelerators
    return (row.instances or 0) * plan.catalog.lookup(row.instance_type).accelerators


def _gpu_per_unit(plan: Any) -> dict[str, float]:
    """Accelerator resources of the plan, with how many whole accelerators one unit is (a MIG slice: 1/per-GPU)."""
    out: dict[str, float] = {}
    for f in plan.flavors:
        if f.accelerator_kind:
            out[f.accelerator_kind] = 1.0
        mig = getattr(f, "mig_resource", None)
        if mig:
            found = plan.catalog.lookup(f.instance_type).mig_profile(mig)
            out[mig] = 1.0 / (found.per_gpu if found else 1)
    return out


def scenario_from_plan(plan: Any, rows: Sequence[TraceRow],
                       settings: KueueSettings = KUEUE_SETTINGS) -> tuple[Scenario, list[str]]:
    """The plan's queues and Kueue configuration (with ``settings``, by default the plan's own) and the
    trace's workloads (as submit events). Rows the plan cannot take are left out and described in the
    returned notes."""
    queues = plan_queues(plan, settings)
    fair, strategies = plan_fair_sharing(plan, settings)
    priorities = plan_priorities(plan)
    types = {f.instance_type for f in plan.flavors}
    notes: list[str] = []
    events = []
    skipped: dict[str, int] = {}
    for row in rows:
        reason = None
        if row.team not in queues:
            reason = f"team {row.team} is not in this spec"
        elif row.instance_type not in types:
            reason = f"instance type {row.instance_type} is not in this cluster"
        elif row.priority_class not in priorities:
            reason = f"priority class {row.priority_class} is not in this spec"
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        q = queues[row.team]
        wl = WorkloadDef(
            name=row.name,
            queue=q.name,
            requests=_requests(plan, row),
            priority=priorities[row.priority_class],
            created=row.submit_minute * 60.0,
            duration=row.duration_minutes * 60.0,
            allowed_flavors=(names.flavor(row.instance_type),),
            labels=(("team", row.team), ("accelerators", str(_accelerators(plan, row)))),
        )
        events.append(Event(at=row.submit_minute * 60.0, submit=wl))
    for reason, n in sorted(skipped.items()):
        notes.append(f"{n} trace row(s) left out: {reason}")
    events.sort(key=lambda e: (e.at, e.submit.name if e.submit else ""))
    scenario = Scenario(queues=tuple(queues.values()), events=tuple(events), fair_sharing=fair,
                        preemption_strategies=strategies)
    return scenario, notes


@dataclass(frozen=True)
class TeamFigures:
    """What one team saw in a run."""

    team: str
    submitted: int
    admitted: int
    waiting: int
    wait_p50_min: Optional[float]
    wait_p95_min: Optional[float]
    accelerator_hours: float
    borrowed_accelerator_hours: float
    preempted: int
    preempted_others: int
    # With a capacity timeline only (None without; left out of repr, so a run without one prints as before):
    # evictions because nodes were lost, and admitted work still waiting for nodes at the end.
    evicted_by_capacity: Optional[int] = field(default=None, repr=False)
    wait_after_loss_min: Optional[float] = field(default=None, repr=False)  # eviction to next start, summed
    waiting_for_nodes: Optional[int] = field(default=None, repr=False)


def _percentile(values: list[float], p: float) -> Optional[float]:
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    k = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[k - 1]


def team_figures(plan: Any, result: Result) -> dict[str, TeamFigures]:
    """Per team: submitted, admitted, still waiting, wait p50/p95 (a workload still waiting counts the time
    it waited up to the end), accelerator-hours used and borrowed, preemptions suffered and caused."""
    queue_team = {t.cluster_queue: t.name for t in plan.teams}
    per_unit = _gpu_per_unit(plan)
    by_team: dict[str, list] = {t.name: [] for t in plan.teams}
    for w in result.workloads:
        by_team[queue_team[w.queue]].append(w)
    borrowed: dict[str, float] = {}
    for q in result.queues:
        team = queue_team[q.name]
        borrowed[team] = sum(s * per_unit[r] for (_f, r), s in q.borrowed_seconds if r in per_unit) / 3600.0
    nodes = result.nodes
    out = {}
    for team, wls in by_team.items():
        waits = []
        if nodes is None:
            for w in wls:
                if w.first_admitted_at is not None:
                    waits.append((w.first_admitted_at - w.submitted_at) / 60.0)
                elif w.state == "pending":
                    waits.append((result.end - w.submitted_at) / 60.0)
            acc_hours = sum(w.run_seconds * int(dict(w.labels).get("accelerators", "0")) for w in wls) / 3600.0
            extra: dict[str, Any] = {}
        else:
            waits, acc_hours, extra = team_node_figures(wls, nodes, result.end)
        out[team] = TeamFigures(
            team=team,
            submitted=len(wls),
            admitted=sum(1 for w in wls if w.first_admitted_at is not None),
            waiting=sum(1 for w in wls if w.state == "pending"),
            wait_p50_min=_percentile(waits, 50),
            wait_p95_min=_percentile(waits, 95),
            accelerator_hours=round(acc_hours, 2),
            borrowed_accelerator_hours=round(borrowed.get(team, 0.0), 2),
            preempted=sum(w.preempted_count for w in wls),
            preempted_others=sum(w.preempting_count for w in wls),
            **extra,
        )
    return out


def run_plan(plan: Any, rows: Sequence[TraceRow], capacity: Optional[CapacityTimeline] = None
             ) -> tuple[dict[str, TeamFigures], Result, list[str]]:
    """Simulate a trace on a plan: (figures per team, the raw result, notes about rows left out). With
    ``capacity``, on the plan's instance groups as nodes, with that timeline (:mod:`.spec_nodes`)."""
    scenario, notes = scenario_from_plan(plan, rows)
    if capacity is not None:
        scenario = with_capacity(scenario, plan, capacity)
    result = simulate(scenario)
    return team_figures(plan, result), result, notes


def figures_json(f: TeamFigures) -> dict[str, Any]:
    return {
        "submitted": f.submitted,
        "admitted": f.admitted,
        "waiting": f.waiting,
        "waitP50Minutes": _round(f.wait_p50_min),
        "waitP95Minutes": _round(f.wait_p95_min),
        "acceleratorHours": f.accelerator_hours,
        "borrowedAcceleratorHours": f.borrowed_accelerator_hours,
        "preempted": f.preempted,
        "preemptedOthers": f.preempted_others,
        **({} if f.evicted_by_capacity is None else {"evictedByCapacityLoss": f.evicted_by_capacity,
                                                       "waitAfterLossMinutes": _round(f.wait_after_loss_min),
                                                       "waitingForNodes": f.waiting_for_nodes}),
    }


def _round(x: Optional[float]) -> Optional[float]:
    if x is None:
        return None
    r = round(x, 1)
    return int(r) if r.is_integer() else r
