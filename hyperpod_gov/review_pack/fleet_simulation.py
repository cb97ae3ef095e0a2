"""A fleet's simulated trace on the review page: the run ``simulate FLEET`` makes (``simulate.fleet_cli``), read the
way the single-cluster page reads a run (``simulation.py``): waits over admitted work beside the work never admitted,
counted to one end of the trace for old and new, the work never admitted with its reason, usage on one time axis,
admissions per worker, and the red alarm for work the fleet leaves unable ever to fit anywhere.

A workload can never be admitted in a fleet when the manager's fleet queue of its team (the sum of its quotas on
the workers, no borrowing: ``plan.multikueue``) can never hold it, or when no worker could ever admit it: on each
worker it is larger than the team's quota plus what it may borrow there, or the worker lacks its team or instance
type. Each worker is judged by the single-cluster arithmetic (``simulate.outcomes.never_fits``), the manager by the
same test on its queue (``simulate.outcomes.fit_problem``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from ..plan import names
from ..plan.fleet import FleetPlan
from ..simulate import cache
from ..simulate.fleet import FleetResult, manager_queues
from ..simulate.fleet_cli import fleet_parts, fleet_simulation
from ..simulate.fleet_report import team_json
from ..simulate.figures import table_value
from ..simulate.outcomes import IN_USE, NOT_IN_SPEC, TeamWaits, Unadmitted, _resource_order, never_fits
from ..simulate.quantities import show_quantity
from ..simulate.spec_level import _accelerators, _percentile, _requests, plan_priorities
from ..simulate.trace import TraceRow
from . import charts
from .data import capacities
from .sections import Alarm, Figure, Section
from .simulation import unfit_alarm
from .timeline import usage_from_runs

NO_WORKER = "cannot fit any worker"  # on every worker: over its quota plus borrowing, or no such team or type there
OVER_FLEET = "over the fleet quota"  # larger than the manager's fleet queue of its team


@dataclass(frozen=True)
class FleetRun:
    """The fleet simulation of the trace on one fleet, and per team what it means up to the end of the trace."""

    fleet: FleetPlan
    result: FleetResult
    waits: dict[str, TeamWaits]
    end_minute: float  # the end of the trace, shared by the runs compared


def _offered(fleet: FleetPlan) -> Callable[[TraceRow], list[str]]:
    """The workers a row's copies go to: those of its team's fleet queue (the workers it has quota on, in dispatch
    order) that have its instance type."""
    workers, queues = fleet_parts(fleet)
    on = {q.team: q.workers for q in queues}
    types = {w: {f.instance_type for f in p.flavors} for w, p in workers.items()}
    return lambda row: [w for w in on.get(row.team, ()) if w in types and row.instance_type in types[w]]


def fleet_never_fits(fleet: FleetPlan, rows: Sequence[TraceRow]) -> list[Unadmitted]:
    """Every workload of the trace that no state of the fleet would ever admit (waits left at 0: nothing is run)."""
    workers, queues = fleet_parts(fleet)
    per_worker = {w: {u.name: u for u in never_fits(plan, rows)} for w, plan in workers.items()}
    mq = manager_queues(workers, [q.team for q in queues], queues)
    _cohorts, cqs = cache.build(tuple(mq.values()))
    offered = _offered(fleet)
    out = []
    for row in rows:
        has = offered(row)
        first = workers[has[0]] if has else None
        problem: Optional[tuple[str, str]] = None
        if row.team not in mq:
            problem = (NOT_IN_SPEC, f"team {row.team} is not dispatched by the fleet")
        elif first is None:
            problem = (NO_WORKER, f"no worker has team {row.team} with instance type {row.instance_type}")
        elif row.priority_class not in plan_priorities(first):
            problem = (NOT_IN_SPEC, f"priority class {row.priority_class} is not in the workers' specs")
        else:
            asks: dict[str, int] = {}
            for w in has:  # the manager's workload asks what the largest copy asks (simulate.fleet)
                for r, v in _requests(workers[w], row):
                    asks[r] = max(asks.get(r, 0), v)
            on_manager = _over_fleet_quota(cqs[mq[row.team].name], names.flavor(row.instance_type), asks)
            if on_manager is not None:
                problem = (OVER_FLEET, on_manager)
            elif all(row.name in per_worker[w] for w in has):
                problem = (NO_WORKER, "; ".join(f"on {w}: {per_worker[w][row.name].reason}: "
                                                f"{per_worker[w][row.name].detail}" for w in has))
        if problem is not None:
            acc = _accelerators(first, row) if first is not None else (row.accelerators or 0)
            out.append(Unadmitted(row.name, row.team, row.instance_type, acc, float(row.submit_minute), 0.0,
                                  *problem))
    return sorted(out, key=lambda u: (u.team, u.name))


def _over_fleet_quota(queue: Any, flavor: str, asks: dict[str, int]) -> Optional[str]:
    """Why the manager's fleet queue (no cohort: its nominal quota is all it may hold) never reserves ``asks``."""
    for resource, value in sorted(asks.items(), key=lambda rv: _resource_order(rv[0])):
        held = queue.nominal.get((flavor, resource))
        if held is not None and value > held:
            return (f"asks {show_quantity(resource, value)} {resource} on {flavor}; the team's fleet queue "
                    f"{queue.name} on the manager holds {show_quantity(resource, held)} (its quotas on the workers, "
                    "summed; the manager lends and borrows nothing)")
    return None


def fleet_waits(fleet: FleetPlan, rows: Sequence[TraceRow], result: FleetResult,
                end_minute: float) -> dict[str, TeamWaits]:
    """Per team: waits to the first admission on a worker over admitted work, and every workload never admitted by
    ``end_minute`` with its reason (never fits anywhere; held on the manager; in flight, no worker admitted it)."""
    unfit = {u.name: u for u in fleet_never_fits(fleet, rows)}
    by_name = {w.name: w for w in result.workloads}
    manager = fleet.fleet.dispatch.manager if fleet.fleet.dispatch else "the manager"
    offered = _offered(fleet)
    waits: dict[str, list[float]] = {t: [] for t in result.teams}
    never: dict[str, list[Unadmitted]] = {t: [] for t in result.teams}
    submitted: dict[str, int] = {t: 0 for t in result.teams}
    for row in rows:
        submitted[row.team] = submitted.get(row.team, 0) + 1
        waits.setdefault(row.team, [])
        w = by_name.get(row.name)
        if w is not None and w.placed_at is not None:
            waits[row.team].append((w.placed_at - w.submitted_at) / 60.0)
            continue
        u = unfit.get(row.name)
        if u is not None:
            reason, detail = u.reason, u.detail
        elif w is None:
            reason, detail = NOT_IN_SPEC, "left out of the dispatch (see the notes)"
        elif w.state == "waiting":
            reason, detail = IN_USE, f"held on {manager}: the team's fleet quota (the in-flight bound) was in use"
        else:
            reason, detail = IN_USE, (f"in flight: copies on {', '.join(offered(row))}, admitted by none before "
                                      "the end")
        accelerators = w.accelerators if w is not None else u.accelerators if u is not None else 0
        never.setdefault(row.team, []).append(Unadmitted(
            row.name, row.team, row.instance_type, accelerators, float(row.submit_minute),
            max(end_minute - row.submit_minute, 0.0), reason, detail))
    return {team: TeamWaits(team, submitted.get(team, 0), len(waits[team]), _percentile(waits[team], 50),
                            _percentile(waits[team], 95), tuple(sorted(never.get(team, ()), key=lambda u: u.name)))
            for team in sorted(waits)}


def simulate_fleets(fleet: FleetPlan, rows: Sequence[TraceRow], base: Optional[FleetPlan] = None
                    ) -> tuple[FleetRun, Optional[FleetRun]]:
    """The trace on the fleet (and on the base fleet), both measured up to the same end of the trace."""
    new_result = fleet_simulation(fleet, rows)
    old_result = fleet_simulation(base, rows) if base is not None else None
    end = max(new_result.end, old_result.end if old_result else 0.0) / 60.0
    new = FleetRun(fleet, new_result, fleet_waits(fleet, rows, new_result, end), end)
    old = FleetRun(base, old_result, fleet_waits(base, rows, old_result, end), end) \
        if base is not None and old_result is not None else None
    return new, old


def fleet_never_fit_alarm(fleet: FleetPlan, rows: Sequence[TraceRow], base: Optional[FleetPlan] = None,
                          trace_name: str = "") -> Optional[Alarm]:
    """The red alarm: the workloads no state of the fleet would ever admit, each said to fit the base fleet or not."""
    before = {u.name for u in fleet_never_fits(base, rows)} if base is not None else None
    return unfit_alarm(fleet_never_fits(fleet, rows), before, trace_name, where=" anywhere in the fleet",
                       limit="larger than the team's fleet quota on the manager, or than its quota plus what it "
                             "may borrow on every worker it is dispatched to", old="fleet")


def _capacity(fleet: FleetPlan) -> Optional[int]:
    """The workers' accelerators, when every governed type counts whole accelerators (as the usage does)."""
    workers, _queues = fleet_parts(fleet)
    types = [tc for p in workers.values() for tc in capacities(p)]
    whole = [tc.capacity for tc in types if tc.unit == "accelerators"]
    return sum(whole) if whole and not any(tc.unit.endswith("partitions") for tc in types) else None


def fleet_simulation_section(new: FleetRun, old: Optional[FleetRun] = None, trace_name: str = "",
                             rows: int = 0) -> Section:
    """Admissions per worker, waits over admitted work beside the work never admitted, usage over one time axis
    per fleet, the team table (waits to admission or to the end, ">=" where cut) and the work never admitted."""
    trace = (f"trace {trace_name or '(unnamed)'} ({rows} workloads, minutes 0 to {charts.n(new.end_minute)}) "
             "dispatched over the workers")
    s = Section("fleet-simulation", f"Simulated {trace}")
    runs = [("old", old), ("new" if old else "", new)]
    workers = list(old.result.workers if old else ()) + [w for w in new.result.workers
                                                         if not old or w not in old.result.workers]
    admissions = [(name or "admissions", shade, {w: float(sum(1 for x in r.result.workloads for c, *_ in x.placements
                                                              if c == w)) if w in r.result.workers else None
                                                 for w in workers})
                  for (name, r), shade in zip(runs, (charts.OLD, charts.NEW)) if r is not None]
    s.figures.append(Figure(charts.paired_bars(
        "trace-admissions", "Admissions per worker", f"Admissions on each worker cluster, {trace}"
        + (", old fleet beside new" if old else "") + ": a workload admitted again after an eviction counts again.",
        workers, admissions, "admissions", "admissions", missing="not a worker")))
    s.figures.append(Figure(charts.wait_chart(new.waits, old.waits if old else None, trace=trace)))
    teams = sorted({t for _n, r in runs if r is not None for t in r.waits})
    colour = charts.colours(teams)
    for prefix, label, r in (("old-", "old: ", old), ("", "new: " if old else "", new)):
        if r is None:
            continue
        usage = usage_from_runs([(w.team, start, secs, w.accelerators) for w in r.result.workloads
                                 for _c, start, secs in w.placements], teams, r.end_minute)
        s.figures.append(Figure(charts.timeline_chart(usage, colour, prefix=prefix, label=label,
                                                      capacity=_capacity(r.fleet), end=r.end_minute, trace=trace,
                                                      shared_axis=old is not None, capacity_of="the workers'"),
                                pair="timeline"))
    header = ["team", "fleet", "submitted", "admitted", "never admitted", "wait p50 min (admitted)",
              "wait p95 min (admitted)", "wait p95 min (to admission or end)", *(f"admissions on {w}" for w in workers),
              "held back by the manager", "evicted on workers"]
    body = []
    for team in teams:
        for name, r in runs:
            if r is None or team not in r.waits:
                continue
            w = r.waits[team]
            j = team_json(r.result, r.end_minute * 60.0).get(team, {})
            per = j.get("admissionsPerCluster", {})
            body.append([(team, ""), (name or "-", ""), (str(w.submitted), ""), (str(w.admitted), ""),
                         (str(w.never_admitted), "never" if w.never_admitted else "")]
                        + [(charts.n(v) if v is not None else "-", "") for v in (w.wait_p50_min, w.wait_p95_min)]
                        + [(table_value(j, "waitP95Minutes") if j else "-", "")]
                        + [(str(per[c]) if c in per else "-", "") for c in workers]
                        + [(str(j.get("inFlightBoundHits", "-")), ""), (str(j.get("evictedOnWorkers", "-")), "")])
    s.tables.append((header, body))
    never = [f"{f'{name} fleet: ' if old else ''}{u.team}: {u.words()}"
             for name, r in (("old", old), ("new", new)) if r is not None
             for w in r.waits.values() for u in w.never]
    s.lists.append((f"Never admitted within the trace (waited until minute {charts.n(new.end_minute)})", never))
    notes = [f"{f'{name} fleet: ' if old else ''}{n}" for name, r in (("old", old), ("new", new)) if r is not None
             for n in r.result.notes]
    if notes:
        s.lists.append(("Trace rows the fleet does not dispatch (counted above as never admitted)", notes))
    return s
