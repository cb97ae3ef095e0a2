"""The simulated trace on the page: waits to admission over admitted work, the work never admitted with its
reason, usage over one time axis for old and new, and the red alarm for work a spec leaves unable ever to fit.

Every number is the simulator's (``simulate.spec_level.run_plan``) read through ``simulate.outcomes``: a
workload's wait ends at its first admission or at the end of the trace, the later end of the two runs, so a run
that stops early because its last workload can never start shortens nobody's wait.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ..plan import Plan
from ..simulate import Result
from ..simulate.outcomes import TeamWaits, Unadmitted, never_fits, outcomes, trace_end
from ..simulate.spec_level import TeamFigures, figures_json, run_plan
from ..simulate.timeline import CapacityTimeline
from ..simulate.trace import TraceRow
from . import charts
from .data import capacities
from .nodes import NodesRun, nodes_run
from .nodes_charts import NodesOverlay
from .nodes_section import add_nodes_parts, nodes_figure
from .sections import Alarm, Figure, Section
from .timeline import usage_by_team, usage_on_nodes


@dataclass(frozen=True)
class Simulation:
    """The simulator's run of the trace on one plan, and what it means per team up to the end of the trace."""

    figures: dict[str, TeamFigures]
    result: Result
    notes: list[str]
    waits: dict[str, TeamWaits]
    end_minute: float  # the end of the trace, shared by the runs compared
    nodes: Optional[NodesRun] = None  # with a capacity timeline: what the nodes did (``review_pack.nodes``)


def simulate_plans(plan: Plan, rows: Sequence[TraceRow], base_plan: Optional[Plan] = None,
                   capacity: Optional[CapacityTimeline] = None) -> tuple[Simulation, Optional[Simulation]]:
    """Run the trace on the plan (and on the base plan), both measured up to the same end of the trace; with
    ``capacity``, both on their instance groups as nodes under that one timeline."""
    new_run = run_plan(plan, rows, capacity)
    old_run = run_plan(base_plan, rows, capacity) if base_plan is not None else None
    end = trace_end(new_run[1], old_run[1] if old_run else None)
    new = Simulation(*new_run, outcomes(plan, rows, new_run[1], end), end, _nodes(plan, new_run[1], end))
    old = Simulation(*old_run, outcomes(base_plan, rows, old_run[1], end), end,
                     _nodes(base_plan, old_run[1], end)) if old_run and base_plan else None
    return new, old


def _nodes(plan: Plan, result: Result, end: float) -> Optional[NodesRun]:
    return nodes_run(plan, result, end) if result.nodes is not None else None


def never_fit_alarm(plan: Plan, rows: Sequence[TraceRow], base_plan: Optional[Plan] = None,
                    trace_name: str = "") -> Optional[Alarm]:
    """The workloads of the trace that no state of the cluster under ``plan`` would ever admit (larger than the
    team's quota plus what it may borrow, on every flavor it may use), each said to fit the base spec or not.
    None when every workload can fit."""
    before = {u.name for u in never_fits(base_plan, rows)} if base_plan is not None else None
    return unfit_alarm(never_fits(plan, rows), before, trace_name)


def unfit_alarm(stuck: Sequence[Unadmitted], before: Optional[set[str]], trace_name: str = "", *, where: str = "",
                limit: str = "larger than the team's quota plus what it may borrow, on every flavor it may use",
                old: str = "spec") -> Optional[Alarm]:
    """The red alarm naming ``stuck``, the workloads that can never be admitted (``limit``: why, in words;
    ``where``: appended to "unable ever to fit"), each said to fit the base (``before``: the names that did not,
    None without a base) or not. None when nothing is stuck."""
    if not stuck:
        return None
    what = "This change leaves" if before is not None else f"This {old} leaves"
    n = len(stuck)
    headline = (f"{what} {n} workload{'s' if n != 1 else ''} of the trace{f' {trace_name}' if trace_name else ''} "
                f"unable ever to fit{where}: {limit}. No amount of waiting admits it; only a change of the spec "
                "does.")
    items = []
    for u in stuck:
        was = ("" if before is None else
               f"; it did not fit the old {old} either" if u.name in before else f"; it fitted the old {old}")
        items.append(f"{u.team}: {u.name} ({u.accelerators} accelerators of {u.instance_type}): {u.reason}: "
                     f"{u.detail}{was}")
    return Alarm(headline, tuple(items))


def _trace_words(trace_name: str, rows: int, end: float) -> str:
    return f"trace {trace_name or '(unnamed)'} ({rows} workloads, minutes 0 to {charts.n(end)})"


def simulation_section(plan: Plan, new: Simulation, base_plan: Optional[Plan] = None,
                       old: Optional[Simulation] = None, trace_name: str = "", rows: int = 0,
                       timeline: str = "") -> Section:
    """Waits over admitted work beside the work never admitted, borrowed accelerator-hours, usage over one time
    axis per spec, the table of figures and the list of work never admitted, per team (old beside new). With a
    capacity timeline (``timeline``: its words, ``nodes.timeline_words``), also waits for nodes and evictions by
    lost nodes per team, usage on the nodes with the node events, and their table and lists."""
    trace = _trace_words(trace_name, rows, new.end_minute) + (f" on {timeline}" if timeline else "")
    s = Section("simulation", f"Simulated {trace}")
    s.figures.append(Figure(charts.wait_chart(new.waits, old.waits if old else None, trace=trace)))
    if new.nodes is not None:
        s.figures.append(nodes_figure(new.nodes, old.nodes if old else None, trace))
    s.figures.append(Figure(charts.borrowed_chart(new.figures, old.figures if old else None, trace=trace)))
    colour = charts.colours(sorted({t.name for p in (plan, base_plan) if p is not None for t in p.teams}))
    for prefix, label, p, sim in (("old-", "old: ", base_plan, old), ("", "new: " if old else "", plan, new)):
        if p is None or sim is None:
            continue
        teams = [t.name for t in p.teams]
        usage = usage_by_team(sim.result, teams) if sim.nodes is None else \
            usage_on_nodes(sim.result, teams, set(sim.nodes.bounded))
        types = capacities(p)
        whole = [tc.capacity for tc in types if tc.unit == "accelerators"]
        partitioned = any(tc.unit.endswith("partitions") for tc in types)
        capacity = sum(whole) if whole and not partitioned else None  # usage counts whole accelerators
        overlay = None if sim.nodes is None else NodesOverlay(sim.nodes, sim.end_minute)
        s.figures.append(Figure(charts.timeline_chart(usage, colour, prefix=prefix, label=label,
                                                      capacity=capacity if overlay is None else None,
                                                      end=sim.end_minute, trace=trace, shared_axis=old is not None,
                                                      nodes=overlay),
                                pair="timeline"))
    header = ["team", "spec", "submitted", "admitted", "never admitted", "wait p50 min (admitted)",
              "wait p95 min (admitted)", "acc-hours", "borrowed acc-h", "preempted", "preempted others"]
    body = []
    for team in sorted(set(new.waits) | set(old.waits if old else {})):
        for name, sim in (("old", old), ("new" if old else "", new)):
            if sim is None or team not in sim.waits:
                continue
            w = sim.waits[team]
            j = figures_json(sim.figures[team]) if team in sim.figures else {}
            body.append([(team, ""), (name or "-", ""), (str(w.submitted), ""), (str(w.admitted), ""),
                         (str(w.never_admitted), "never" if w.never_admitted else "")]
                        + [(charts.n(v) if v is not None else "-", "") for v in (w.wait_p50_min, w.wait_p95_min)]
                        + [("-" if j.get(k) is None else str(j[k]), "") for k in (
                            "acceleratorHours", "borrowedAcceleratorHours", "preempted", "preemptedOthers")])
    s.tables.append((header, body))
    never = [f"{f'{name} spec: ' if old else ''}{u.team}: {u.words()}"
             for name, sim in (("old", old), ("new", new)) if sim is not None
             for w in sim.waits.values() for u in w.never]
    s.lists.append((f"Never admitted within the trace (waited until minute {charts.n(new.end_minute)})", never))
    notes = [f"old spec: {n}" for n in (old.notes if old else [])] + [
        f"{'new spec: ' if old else ''}{n}" for n in new.notes]
    if notes:
        s.lists.append(("Trace rows the spec does not accept (counted above as never admitted)", notes))
    if new.nodes is not None:
        add_nodes_parts(s, new.nodes, old.nodes if old else None)
    return s
