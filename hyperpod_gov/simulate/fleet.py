"""Fleet level: a trace dispatched over several clusters the way MultiKueue's AllAtOnce dispatcher does.

``simulate_fleet(workers, rows)`` takes the workers' plans (worker name -> single-cluster plan, in the order of
``MultiKueueConfig.spec.clusters``) and a trace. The manager's ClusterQueue of a team, ``<team>-fleet``, has no
cohort and, per flavor and resource, the sum of the nominal quotas of the team's ClusterQueues on the workers (what
MultiKueue documents the manager's quota should be, and what the fleet's plan derives); its queueing strategy,
preemption within the queue and priorities are the team's own. Each worker is the single-cluster simulation of its
plan, unchanged (:func:`.spec_level.scenario_from_plan`). The dispatch rules are :mod:`.fleet_run`'s; what is not
modelled is listed in docs/simulator.md ("Fleet").
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..plan import names
from .fleet_run import Cluster, Flight, FleetClock
from .model import FlavorQuotas, Preemption, QueueDef, ResourceQuota, Scenario, WorkloadDef
from .spec_level import _accelerators, _requests, plan_priorities, plan_queues, scenario_from_plan
from .trace import TraceRow

DISPATCHER = "AllAtOnce"


def manager_queue_name(team: str) -> str:
    """The manager's ClusterQueue (and LocalQueue) of a dispatched team (docs/simulator.md, "Fleet")."""
    return f"{team}-fleet"


@dataclass(frozen=True)
class FleetWorkload:
    """One trace workload at the end of a fleet run."""

    name: str
    team: str
    # waiting (no quota on the manager) | in-flight (manager quota held, no worker admitted it) | running | finished
    state: str
    submitted_at: float
    reserved_at: Optional[float]  # its first quota reservation on the manager
    placed_at: Optional[float]  # its first admission on a worker (the end of its wait)
    cluster: Optional[str]  # the worker it runs on, or ran on last
    placements: tuple[tuple[str, float, float], ...]  # (worker, start, seconds run), one per admission on a worker
    dispatches: int  # times the manager reserved quota for it (and copied it to the workers)
    evicted_on_workers: int  # times its worker evicted it (Retry: the manager queued it again)
    preempted_by_manager: int  # times the manager preempted it within the team's fleet quota
    accelerators: int


@dataclass(frozen=True)
class InFlightBound:
    """The manager's quota of a team on one flavor and resource, and the most it held at once."""

    team: str
    flavor: str
    resource: str
    bound: int
    peak: int


@dataclass(frozen=True)
class FleetResult:
    """A whole fleet run."""

    workers: tuple[str, ...]  # in MultiKueueConfig.spec.clusters order
    teams: tuple[str, ...]  # the dispatched teams, sorted
    workloads: tuple[FleetWorkload, ...]  # sorted by name
    bounds: tuple[InFlightBound, ...]  # sorted by team, flavor, resource
    end: float
    notes: tuple[str, ...]  # trace rows left out, and why


def _team_queues(workers: Mapping[str, Any]) -> dict[str, dict[str, QueueDef]]:
    return {w: plan_queues(plan) for w, plan in workers.items()}


def manager_queues(workers: Mapping[str, Any], teams: Sequence[str],
                   queues: Optional[Mapping[str, Mapping[str, QueueDef]]] = None) -> dict[str, QueueDef]:
    """Team -> its manager ClusterQueue: no cohort, per flavor and resource the sum of the workers' nominal quotas
    (flavors and resources in the order the workers list them); queueing strategy, preemption within the queue
    and fair-sharing weight from the team's queue on its first worker."""
    queues = queues or _team_queues(workers)
    out = {}
    for team in teams:
        sums: dict[str, dict[str, int]] = {}
        template = None
        for w in workers:
            q = queues[w].get(team)
            if q is None:
                continue
            template = template or q
            for f in q.flavors:
                per = sums.setdefault(f.name, {})
                for r, quota in f.resources:
                    per[r] = per.get(r, 0) + quota.nominal
        if template is None:
            continue
        out[team] = QueueDef(
            name=manager_queue_name(team),
            cohort=None,
            fair_sharing_weight=template.fair_sharing_weight,
            queueing_strategy=template.queueing_strategy,
            preemption=Preemption(within_cluster_queue=template.preemption.within_cluster_queue),
            flavors=tuple(FlavorQuotas(f, tuple((r, ResourceQuota(nominal=v)) for r, v in per.items()))
                          for f, per in sums.items()),
        )
    return out


def _union(requests: Iterable[tuple[tuple[str, int], ...]]) -> tuple[tuple[str, int], ...]:
    out: dict[str, int] = {}
    for req in requests:
        for r, v in req:
            out[r] = max(out.get(r, 0), v)
    return tuple(out.items())


def _flights(workers: Mapping[str, Any], queues: Mapping[str, Mapping[str, QueueDef]], teams: Sequence[str],
             rows: Sequence[TraceRow]) -> tuple[dict[str, Flight], list[tuple[float, WorkloadDef]], list[str]]:
    """Each row's manager workload and, per worker that has its team and instance type, its copy there."""
    types = {w: {f.instance_type for f in plan.flavors} for w, plan in workers.items()}
    priorities = {w: plan_priorities(plan) for w, plan in workers.items()}
    dispatched = set(teams)
    skipped: dict[str, int] = {}
    amounts: dict[tuple, tuple] = {}  # (worker, type, accelerators, instances) -> (requests, accelerators)
    flights: dict[str, Flight] = {}
    subs: list[tuple[float, WorkloadDef]] = []
    for row in rows:
        eligible = [w for w in workers if row.team in queues[w] and row.instance_type in types[w]]
        reason = None
        if row.team not in dispatched:
            reason = f"team {row.team} is not dispatched by the fleet"
        elif not eligible:
            reason = f"no worker has team {row.team} with instance type {row.instance_type}"
        elif row.priority_class not in priorities[eligible[0]]:
            reason = f"priority class {row.priority_class} is not in the workers' specs"
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        at = row.submit_minute * 60.0
        flavor = (names.flavor(row.instance_type),)
        copies = {}
        requests = []
        for w in eligible:
            key = (w, row.instance_type, row.accelerators, row.instances)
            if key not in amounts:
                amounts[key] = (_requests(workers[w], row), _accelerators(workers[w], row))
            copies[w] = (queues[w][row.team].name, amounts[key][0], priorities[w][row.priority_class])
            requests.append(amounts[key][0])
        acc = amounts[(eligible[0],) + key[1:]][1]
        labels = (("team", row.team), ("accelerators", str(acc)))
        mwl = WorkloadDef(name=row.name, queue=manager_queue_name(row.team), requests=_union(requests),
                          priority=priorities[eligible[0]][row.priority_class], created=at, allowed_flavors=flavor,
                          labels=labels)
        flights[row.name] = Flight(row.name, row.team, acc, at, copies, row.duration_minutes * 60.0, flavor, labels)
        subs.append((at, mwl))
    notes = [f"{n} trace row(s) left out: {reason}" for reason, n in sorted(skipped.items())]
    return flights, subs, notes


def simulate_fleet(workers: Mapping[str, Any], rows: Sequence[TraceRow], *,
                   teams: Optional[Iterable[str]] = None) -> FleetResult:
    """Dispatch a trace over the workers (name -> single-cluster plan, in MultiKueueConfig order) as MultiKueue's
    AllAtOnce dispatcher does. ``teams``: the dispatched teams (default: every team of any worker); rows of other
    teams are left out with a note."""
    if not workers:
        raise ValueError("a fleet simulation needs at least one worker")
    queues = _team_queues(workers)
    all_teams = sorted({t for qs in queues.values() for t in qs})
    chosen = sorted(set(teams)) if teams is not None else all_teams
    unknown = [t for t in chosen if t not in all_teams]
    if unknown:
        raise ValueError(f"dispatched team(s) {', '.join(unknown)} are on no worker")
    mqueues = manager_queues(workers, chosen, queues)
    flights, subs, notes = _flights(workers, queues, chosen, rows)
    manager = Cluster(Scenario(queues=tuple(mqueues[t] for t in chosen)))
    clusters = {w: Cluster(scenario_from_plan(plan, [])[0]) for w, plan in workers.items()}
    clock = FleetClock(manager, clusters, flights, subs)
    # The run allocates many short-lived objects and leaves no cycles to collect: the cyclic collector's walks over
    # the engines' live workloads cost a tenth of the run (bench/fleet_simulate_bench.py), memory is the same.
    collecting = gc.isenabled()
    gc.disable()
    try:
        end = clock.run()
    finally:
        if collecting:
            gc.enable()
    bounds = []
    for team in chosen:
        q = mqueues[team]
        for f in q.flavors:
            for r, quota in f.resources:
                bounds.append(InFlightBound(team, f.name, r, quota.nominal, clock.peak.get((q.name, f.name, r), 0)))
    mwls = manager.wls
    out = []
    for name in sorted(flights):
        f = flights[name]
        m = mwls[name]
        if f.finished:
            state = "finished"
        elif f.cluster is not None:
            state = "running"
        elif m.state == "admitted":
            state = "in-flight"
        else:
            state = "waiting"
        placements = list(f.placements)
        if f.cluster is not None:
            placements.append((f.cluster, f.started, end - f.started))
        last = placements[-1][0] if placements else None
        out.append(FleetWorkload(
            name=name, team=f.team, state=state, submitted_at=f.submitted_at, reserved_at=f.reserved_at,
            placed_at=f.placed_at, cluster=last, placements=tuple(placements), dispatches=f.dispatches,
            evicted_on_workers=f.evicted_on_workers,
            preempted_by_manager=m.preempted_count - f.evicted_on_workers, accelerators=f.accelerators,
        ))
    return FleetResult(workers=tuple(workers), teams=tuple(chosen), workloads=tuple(out),
                       bounds=tuple(sorted(bounds, key=lambda b: (b.team, b.flavor, b.resource))), end=end,
                       notes=tuple(notes))
