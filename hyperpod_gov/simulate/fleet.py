"""Fleet level: a trace dispatched over several clusters the way MultiKueue's AllAtOnce dispatcher does.

``simulate_fleet(workers, rows)`` takes the workers' plans (worker name -> single-cluster plan, in the order of
``dispatch.workers``) and a trace. The manager's ClusterQueue of a team, ``<team>-fleet``, is parsed from the spec
the fleet's plan emits (:mod:`hyperpod_gov.plan.multikueue`: no cohort, per flavor the sum of the team's nominal
quotas on the workers), and a team's work is offered to the workers of its set only (``FleetQueue.workers``, the
``spec.clusters`` of the MultiKueueConfig its check names). Each worker is the single-cluster simulation of its
plan, unchanged (:func:`.spec_level.scenario_from_plan`). The dispatch rules are :mod:`.fleet_run`'s; what is
not modelled is listed in docs/simulator.md ("Fleet").
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..plan import names
from ..plan.multikueue import FleetQueue
from ..plan.multikueue import manager_queue  # the plan's own derivation of a fleet queue
from .fleet_run import Cluster, Flight, FleetClock
from .model import QueueDef, Scenario, WorkloadDef
from .spec_level import (_accelerators, _requests, plan_priorities, plan_queues, queue_from_cluster_queue,
                         scenario_from_plan)
from .trace import TraceRow

DISPATCHER = "AllAtOnce"


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

    workers: tuple[str, ...]  # in dispatch order (each set's MultiKueueConfig.spec.clusters keeps it)
    teams: tuple[str, ...]  # the dispatched teams, sorted
    workloads: tuple[FleetWorkload, ...]  # sorted by name
    bounds: tuple[InFlightBound, ...]  # sorted by team, flavor, resource
    end: float
    notes: tuple[str, ...]  # trace rows left out, and why


def _team_queues(workers: Mapping[str, Any]) -> dict[str, dict[str, QueueDef]]:
    return {w: plan_queues(plan) for w, plan in workers.items()}


def _fleet_queues(workers: Mapping[str, Any], fleet_queues: Optional[Sequence[FleetQueue]]) -> list[FleetQueue]:
    """The manager's fleet queues: ``fleet_queues`` as given, or built from the workers as the plan builds them."""
    if fleet_queues is not None:
        return list(fleet_queues)
    on: dict[str, list] = {}
    for w, plan in workers.items():
        for team in plan.tenants:
            on.setdefault(team.name, []).append((w, team))
    return [manager_queue(name, on[name], True) for name in sorted(on)]


def manager_queues(workers: Mapping[str, Any], teams: Optional[Sequence[str]] = None,
                   fleet_queues: Optional[Sequence[FleetQueue]] = None) -> dict[str, QueueDef]:
    """Team -> its manager ClusterQueue, parsed from the ``spec`` the fleet's plan emits
    (:meth:`hyperpod_gov.plan.multikueue.FleetQueue.cluster_queue_spec`): no cohort, no preemption, per flavor the
    sum of the team's nominal quotas on the workers. ``fleet_queues``: the manager's
    (``multikueue_plans(...)[manager].queues``); by default built from the workers as the plan builds them."""
    chosen = None if teams is None else set(teams)
    return {fq.team: queue_from_cluster_queue(fq.cluster_queue, fq.cluster_queue_spec())
            for fq in _fleet_queues(workers, fleet_queues) if chosen is None or fq.team in chosen}


def team_sets(workers: Mapping[str, Any], fleet_queues: Sequence[FleetQueue]) -> dict[str, tuple[str, ...]]:
    """Team -> the workers its check's MultiKueueConfig lists (``FleetQueue.workers``, the plan's one source), in
    dispatch order; each must be a given worker that has the team."""
    sets = {}
    for fq in fleet_queues:
        wrong = [w for w in fq.workers if w not in workers or fq.team not in {t.name for t in workers[w].tenants}]
        if wrong:
            raise ValueError(f"team {fq.team}'s dispatch set {list(fq.workers)} names {', '.join(wrong)}: not a "
                             f"worker given ({', '.join(workers)}) with the team")
        sets[fq.team] = fq.workers
    return sets


def _union(requests: Iterable[tuple[tuple[str, int], ...]]) -> tuple[tuple[str, int], ...]:
    out: dict[str, int] = {}
    for req in requests:
        for r, v in req:
            out[r] = max(out.get(r, 0), v)
    return tuple(out.items())


def _flights(workers: Mapping[str, Any], queues: Mapping[str, Mapping[str, QueueDef]],
             manager: Mapping[str, QueueDef], sets: Mapping[str, tuple[str, ...]], rows: Sequence[TraceRow]
             ) -> tuple[dict[str, Flight], list[tuple[float, WorkloadDef]], list[str]]:
    """Each row's manager workload (its requests in the resources the manager's queue covers, as a worker counts
    them) and, per worker of its team's set that has its instance type, its copy there."""
    types = {w: {f.instance_type for f in plan.flavors} for w, plan in workers.items()}
    priorities = {w: plan_priorities(plan) for w, plan in workers.items()}
    dispatched = set(manager)
    skipped: dict[str, int] = {}
    amounts: dict[tuple, tuple] = {}  # (worker, type, accelerators, instances) -> (requests, accelerators)
    flights: dict[str, Flight] = {}
    subs: list[tuple[float, WorkloadDef]] = []
    for row in rows:
        eligible = [w for w in sets.get(row.team, ()) if row.instance_type in types[w]]
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
        covered = set(manager[row.team].covered_resources)
        mwl = WorkloadDef(name=row.name, queue=manager[row.team].name,
                          requests=tuple((r, v) for r, v in _union(requests) if r in covered),
                          priority=priorities[eligible[0]][row.priority_class], created=at, allowed_flavors=flavor,
                          labels=labels)
        flights[row.name] = Flight(row.name, row.team, acc, at, copies, row.duration_minutes * 60.0, flavor, labels)
        subs.append((at, mwl))
    notes = [f"{n} trace row(s) left out: {reason}" for reason, n in sorted(skipped.items())]
    return flights, subs, notes


def simulate_fleet(workers: Mapping[str, Any], rows: Sequence[TraceRow], *,
                   teams: Optional[Iterable[str]] = None,
                   fleet_queues: Optional[Sequence[FleetQueue]] = None) -> FleetResult:
    """Dispatch a trace over the workers (name -> single-cluster plan, in dispatch order) as MultiKueue's
    AllAtOnce dispatcher does, each team's work over the workers of its set. ``teams``: the dispatched teams
    (default: every team of any worker); rows of other teams are left out with a note. ``fleet_queues``: the
    manager's fleet queues as the fleet's plan has them (``multikueue_plans(...)[manager].queues``, each with its
    set of workers); by default derived from the workers the same way."""
    if not workers:
        raise ValueError("a fleet simulation needs at least one worker")
    queues = _team_queues(workers)
    fqs = _fleet_queues(workers, fleet_queues)
    mqueues = manager_queues(workers, None if teams is None else list(teams), fqs)
    unknown = sorted(set(teams or ()) - set(mqueues))
    if unknown:
        raise ValueError(f"dispatched team(s) {', '.join(unknown)} are on no worker")
    chosen = sorted(mqueues)
    flights, subs, notes = _flights(workers, queues, mqueues, team_sets(workers, fqs), rows)
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
