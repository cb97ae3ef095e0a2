"""What a spec-level run means for each workload of the trace, with nothing dropped or cut short.

A workload's wait ends at its first admission. A workload never admitted waited from its submission to the end
of the trace: the later end of the runs being compared (:func:`trace_end`), so that two specs are measured over
the same minutes and a run that ends early, because its last workload can never start, does not shorten
anyone's wait. Wait percentiles are taken over admitted work only; work never admitted is counted beside them
and listed with its reason, never folded into a percentile where a shorter run would make it look better.

Whether a workload can ever fit is the simulator's own arithmetic (:func:`.resource_node.potential`, Kueue's
``PotentialAvailable``) over the queues the plan emits: the largest request a queue could hold on a flavor with
the whole cluster idle, its quota plus what it may borrow and the cohort lends. ``hyperpod-gov simulate``'s
figures (:func:`.spec_level.team_figures`) are left as the simulator contract states them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from . import cache
from .engine import Result
from .quantities import show_quantity
from .resource_node import potential
from .spec_level import _accelerators, _percentile, plan_priorities, scenario_from_plan
from .trace import TraceRow

# Why a workload was not admitted by the end of the trace.
OVER_QUOTA = "over quota"  # larger than its team's quota plus its borrowing limit
CANNOT_BORROW = "cannot borrow"  # larger than its team's quota, and the team may borrow nothing (or not enough is lent)
NO_FLAVOR = "cannot fit any flavor"  # no flavor of its team's queue offers what it asks
NOT_IN_SPEC = "not in this spec"  # its team or priority class is not in the spec: Kueue would not take it
IN_USE = "quota in use until the end"  # it would fit an idle cluster; others held the quota until the trace ended


@dataclass(frozen=True)
class Unadmitted:
    """A workload of the trace that was never admitted before the trace ended."""

    name: str
    team: str
    instance_type: str
    accelerators: int
    submitted_minute: float
    waited_minutes: float  # from submission to the end of the trace (at least; it never started)
    reason: str  # one of the constants above
    detail: str  # what the simulator says (or, for a row it never saw, why the spec refuses it)

    @property
    def ever_fits(self) -> bool:
        """Whether any state of the cluster admits it (False: only a change of the spec does)."""
        return self.reason == IN_USE

    def words(self) -> str:
        return (f"{self.name} ({self.accelerators} accelerators of {self.instance_type}, submitted at minute "
                f"{_num(self.submitted_minute)}, waited {_num(self.waited_minutes)} minutes to the end of the "
                f"trace): {self.reason}: {self.detail}")


@dataclass(frozen=True)
class TeamWaits:
    """One team's waits over a trace: percentiles over admitted work, and the work never admitted."""

    team: str
    submitted: int
    admitted: int
    wait_p50_min: Optional[float]  # over admitted work; None: nothing admitted
    wait_p95_min: Optional[float]
    never: tuple[Unadmitted, ...]  # sorted by name

    @property
    def never_admitted(self) -> int:
        return len(self.never)


def _num(x: float) -> str:
    r = round(float(x), 1)
    return str(int(r)) if r.is_integer() else str(r)


def trace_end(*results: Optional[Result]) -> float:
    """The end of the trace in minutes: the later end of the runs compared (one axis, one horizon for both)."""
    return max((r.end for r in results if r is not None), default=0.0) / 60.0


def _resource_order(resource: str) -> tuple[int, str]:
    """Accelerators first, then any other resource, then cpu and memory: the one a person asked for."""
    return ({"cpu": 1, "memory": 2}.get(resource, 0), resource)


def fit_problem(queue: Any, flavors: Optional[Sequence[str]], requests: Sequence[tuple[str, int]]
                ) -> Optional[tuple[str, str]]:
    """(reason, detail) when no flavor of ``queue`` (a :class:`.cache.ClusterQueue`) may ever hold ``requests``,
    each flavor judged with the cluster idle; None when one may. ``flavors``: the flavors the workload allows."""
    allowed = [f for f in queue.flavors if flavors is None or f in flavors]
    if not allowed:
        return NO_FLAVOR, f"ClusterQueue {queue.name} has no flavor {', '.join(flavors or ())}"
    first: Optional[tuple[str, str]] = None
    for flavor in allowed:
        problem = None
        for resource, value in sorted(requests, key=lambda rv: _resource_order(rv[0])):
            fr = (flavor, resource)
            if fr not in queue.nominal:
                problem = (NO_FLAVOR, f"flavor {flavor} of ClusterQueue {queue.name} offers no {resource}")
                break
            most = potential(queue, fr)
            if value <= most:
                continue
            nominal, limit = queue.nominal[fr], queue.bl.get(fr)
            asks = f"asks {show_quantity(resource, value)} {resource} on {flavor}"
            if limit == 0:
                problem = (CANNOT_BORROW, f"{asks}; its quota is {show_quantity(resource, nominal)} and it may "
                           "borrow nothing")
            elif limit is not None and value > nominal + limit:
                problem = (OVER_QUOTA, f"{asks}; its quota is {show_quantity(resource, nominal)} and it may borrow "
                           f"{show_quantity(resource, limit)} more, {show_quantity(resource, nominal + limit)} at most")
            else:
                problem = (CANNOT_BORROW, f"{asks}; its quota is {show_quantity(resource, nominal)} and the other "
                           f"teams lend it {show_quantity(resource, most - nominal)} at most")
            break
        if problem is None:
            return None
        first = first or problem
    return first


def outcomes(plan: Any, rows: Sequence[TraceRow], result: Result, end_minute: float) -> dict[str, TeamWaits]:
    """Per team of the plan (and per team of the trace the plan lacks): waits to admission over admitted work and
    every workload never admitted by ``end_minute`` (see :func:`trace_end`), with its reason."""
    scenario, _notes = scenario_from_plan(plan, rows)
    _cohorts, cqs = cache.build(scenario.queues)
    defs = {e.submit.name: e.submit for e in scenario.events if e.submit is not None}
    by_name = {w.name: w for w in result.workloads}
    team_queue = {t.name: t.cluster_queue for t in plan.teams}
    types = {f.instance_type for f in plan.flavors}
    priorities = plan_priorities(plan)
    waits: dict[str, list[float]] = {t.name: [] for t in plan.teams}
    never: dict[str, list[Unadmitted]] = {t.name: [] for t in plan.teams}
    submitted: dict[str, int] = {t.name: 0 for t in plan.teams}
    for row in rows:
        submitted[row.team] = submitted.get(row.team, 0) + 1
        waits.setdefault(row.team, [])
        w = by_name.get(row.name)
        if w is not None and w.first_admitted_at is not None:
            waits[row.team].append((w.first_admitted_at - w.submitted_at) / 60.0)
            continue
        if row.team not in team_queue:
            problem: Optional[tuple[str, str]] = (NOT_IN_SPEC, f"team {row.team} is not in this spec")
        elif row.instance_type not in types:
            problem = (NO_FLAVOR, f"instance type {row.instance_type} is not in this cluster")
        elif row.priority_class not in priorities:
            problem = (NOT_IN_SPEC, f"priority class {row.priority_class} is not in this spec")
        else:
            d = defs[row.name]
            problem = fit_problem(cqs[d.queue], d.allowed_flavors, d.requests)
            said = w.pending_reason if w is not None and w.pending_reason else ""
            if problem is None:
                problem = (IN_USE, said or "still pending")
            elif said:  # the simulator's own words (Kueue's), after the plain ones
                problem = (problem[0], f"{problem[1]} (the simulator: {said})")
        accelerators = _accelerators(plan, row) if row.instance_type in types else (row.accelerators or 0)
        never.setdefault(row.team, []).append(Unadmitted(
            row.name, row.team, row.instance_type, accelerators, float(row.submit_minute),
            max(end_minute - row.submit_minute, 0.0), problem[0], problem[1]))
    return {team: TeamWaits(team, submitted.get(team, 0), len(waits[team]), _percentile(waits[team], 50),
                            _percentile(waits[team], 95), tuple(sorted(never.get(team, ()), key=lambda u: u.name)))
            for team in sorted(waits)}


def never_fits(plan: Any, rows: Sequence[TraceRow]) -> list[Unadmitted]:
    """Every workload of the trace that no state of the cluster under ``plan`` would ever admit, without running
    the trace (waits are left at 0: nothing was simulated)."""
    empty = Result((), (), (), 0, 0.0, (), True)
    out = []
    for waits in outcomes(plan, rows, empty, 0.0).values():
        out += [u for u in waits.never if not u.ever_fits]
    return sorted(out, key=lambda u: (u.team, u.name))


def _show(x: Optional[float]) -> str:
    return "-" if x is None else _num(x)


def effect_lines(old_plan: Any, new_plan: Any, rows: Sequence[TraceRow]) -> list[str]:
    """For ``diff --trace``: per team, p95 wait over admitted work and the work never admitted (named, with its
    reason), old -> new, both measured to the same end of the trace; then borrowed accelerator-hours and
    preemptions suffered. A team whose work never starts under the new spec cannot read as waiting less."""
    from .spec_level import figures_json, run_plan

    old_fig, old_result, _n1 = run_plan(old_plan, rows)
    new_fig, new_result, _n2 = run_plan(new_plan, rows)
    end = trace_end(old_result, new_result)
    old_w, new_w = outcomes(old_plan, rows, old_result, end), outcomes(new_plan, rows, new_result, end)
    lines = []
    for team in sorted(set(old_fig) | set(new_fig)):
        if team not in old_fig or team not in new_fig:
            lines.append(f"team {team} is only in the {'new' if team in new_fig else 'old'} spec")
            continue
        a, b = figures_json(old_fig[team]), figures_json(new_fig[team])
        wa, wb = old_w[team], new_w[team]
        never = f"never admitted within the trace {wa.never_admitted} -> {wb.never_admitted}"
        if wb.never:
            never += " (" + "; ".join(f"{u.name}: {u.reason}" for u in wb.never) + ")"
        lines.append(
            f"team {team}: p95 wait over admitted work goes from {_show(wa.wait_p95_min)} to "
            f"{_show(wb.wait_p95_min)} minutes; {never}; borrowed accelerator-hours from "
            f"{a['borrowedAcceleratorHours']} to {b['borrowedAcceleratorHours']}; "
            f"preempted {a['preempted']} -> {b['preempted']} time(s)")
    return lines
