"""The simulation section's parts for a run with a capacity timeline: the chart and table of waits for nodes and
evictions by lost nodes per team, the evicted workloads, the admitted work that waited for nodes, the node
events in order; and the red caution when a DontLend team's admitted work lost its nodes or waited for them."""

from __future__ import annotations

from typing import Optional

from . import charts
from .nodes import NodesRun, caution_items
from .nodes_charts import nodes_wait_chart
from .sections import Alarm, Figure, Section

CAUTION_ID = "capacity-caution"


def _runs(new: NodesRun, old: Optional[NodesRun]) -> list[tuple[str, NodesRun]]:
    """(prefix, run) for each spec, old first; the prefix names the spec only when there are two."""
    return [(p, r) for p, r in (("old spec: ", old), ("new spec: " if old else "", new)) if r is not None]


def nodes_figure(new: NodesRun, old: Optional[NodesRun], trace: str) -> Figure:
    """Waits for nodes and evictions by lost nodes per team, old beside new."""
    return Figure(nodes_wait_chart(new.teams, old.teams if old else None, trace=trace))


def add_nodes_parts(s: Section, new: NodesRun, old: Optional[NodesRun]) -> None:
    """The table per team and spec, then the evictions (each workload), the admitted work that waited for nodes
    and the node events, as lists."""
    header = ["team", "spec", "started on nodes", "wait to nodes p50 min", "wait to nodes p95 min",
              "never on nodes", "admitted, waited for nodes", "evicted (nodes lost)", "rewait min",
              "waiting for nodes at the end"]
    body = []
    for team in sorted(set(new.teams) | set(old.teams if old else {})):
        for name, run in (("old", old), ("new" if old else "", new)):
            if run is None or team not in run.teams:
                continue
            t = run.teams[team]
            red = "never" if t.broken_promise else ""
            body.append([(team + (" (DontLend)" if t.dont_lend else ""), ""), (name or "-", ""),
                         (f"{t.started} of {t.submitted}", ""),
                         *[(charts.n(v) if v is not None else "-", "") for v in (t.wait_p50_min, t.wait_p95_min)],
                         (str(t.never_started), "never" if t.never_started else ""),
                         (str(len(t.node_waits)), red), (str(len(t.evictions)), "never" if t.evictions else ""),
                         (charts.n(t.rewait_minutes), red), (str(len(t.waiting_at_end)), red)])
    s.tables.append((header, body))
    runs = _runs(new, old)
    s.lists.append(("Evictions by lost nodes, per team (an evicted workload releases its quota and runs again from "
                    "the beginning)", [f"{p}{t.team}: {e.words()}" for p, r in runs for t in r.teams.values()
                                       for e in t.evictions]))
    s.lists.append(("Admitted work that waited for nodes before its first start (quota held, nothing running)",
                    [f"{p}{t.team}: {w.words()}" for p, r in runs for t in r.teams.values() for w in t.node_waits]))
    s.lists.append(("Node events: the timeline's losses and returns, the autoscaler's nodes Ready",
                    [f"{p}{e.words()}" for p, r in runs for e in r.events]
                    + [f"{p}{w}" for p, r in runs for w in r.pending_scale_ups]))


def capacity_caution(new: NodesRun, old: Optional[NodesRun], timeline: str) -> Optional[Alarm]:
    """The red caution, before any chart: every admitted workload of a DontLend team that lost its nodes or
    waited for them, in either spec's run. None when there is none."""
    items = caution_items(_runs(new, old))
    if not items:
        return None
    headline = (f"Under the {timeline}, admitted work of a DontLend team lost its nodes or waited for them: its "
                "reserved quota admitted it, and the nodes to run it were not there. A DontLend quota promises "
                "quota, not nodes.")
    return Alarm(headline, tuple(items), id=CAUTION_ID)
