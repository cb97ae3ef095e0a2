"""A run with a capacity timeline on the page: per team, waits for nodes and evictions by lost nodes with the
workloads they hit; the scale-ups, node losses and returns as events; the accelerators on the nodes over time.

Every number is the simulator's (``simulate.spec_level.run_plan`` with a ``CapacityTimeline``): the workloads'
``NodesResult`` and the lines of ``Result.timeline``. Like the rest of the page (``simulate.outcomes``), a wait
that has not ended by the end of the trace runs to that end, the later end of the runs compared, and waits are
taken over work that started, with the work that never started counted beside them, never folded in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from ..plan import Plan
from ..simulate import Result
from ..simulate.spec_level import _percentile
from ..simulate.spec_nodes import node_groups
from ..simulate.timeline import CapacityTimeline

_T = r"^t=(?P<t>[-0-9.e+]+)"
_READY = re.compile(_T + r": (?P<k>\d+) node\(s\) of (?P<g>\S+) on (?P<f>\S+) Ready \(scale-up\)")
_CHANGED = re.compile(_T + r": \d+ node\(s\) (?P<kind>added|lost) \((?P<parts>[^)]*)\)")
_PART = re.compile(r"^(?P<k>\d+) (?:to|of) (?P<g>\S+) on (?P<f>\S+)$")
_EVICTED = re.compile(_T + r": (?P<w>\S+) evicted from (?P<f>\S+): nodes of (?P<g>.+) lost under it$")
_ADMITTED = re.compile(_T + r"(?: cycle \d+)?: admitted (?P<w>\S+) in ")
_STARTED = re.compile(_T + r": (?P<w>\S+) started on the nodes of \S+$")

LOST, ADDED, READY = "nodes lost", "nodes added", "nodes Ready (scale-up)"


def _n(x: float) -> str:
    r = round(float(x), 1)
    return str(int(r)) if r.is_integer() else str(r)


@dataclass(frozen=True)
class Eviction:
    """A workload evicted because nodes under it were lost, and how long it waited to run again."""

    minute: float
    workload: str
    team: str
    accelerators: int
    flavor: str
    groups: str  # the node group(s) that lost the nodes
    restarted_minute: Optional[float]  # its next start on nodes; None: not again within the trace
    rewait_minutes: float  # to that start, or to the end of the trace

    def words(self) -> str:
        again = (f"started again at minute {_n(self.restarted_minute)}, {_n(self.rewait_minutes)} minutes later, "
                 "from the beginning" if self.restarted_minute is not None else
                 f"not started again within the trace (waited {_n(self.rewait_minutes)} minutes to its end)")
        return (f"{self.workload} ({self.accelerators} accelerators of {self.flavor}) evicted at minute "
                f"{_n(self.minute)}, nodes of {self.groups} lost; {again}")


@dataclass(frozen=True)
class NodeWait:
    """Admitted work that waited for nodes before its first start (quota held, no node to run on)."""

    workload: str
    accelerators: int
    flavor: str
    admitted_minute: float
    started_minute: Optional[float]  # None: never on nodes within the trace
    minutes: float  # admission to first start, or to the end of the trace

    def words(self) -> str:
        until = (f"started at minute {_n(self.started_minute)}" if self.started_minute is not None else
                 "never on nodes within the trace")
        return (f"{self.workload} ({self.accelerators} accelerators of {self.flavor}) admitted at minute "
                f"{_n(self.admitted_minute)}, waited {_n(self.minutes)} minutes for nodes: {until}")


@dataclass(frozen=True)
class TeamNodes:
    """One team's work on the nodes over the trace."""

    team: str
    dont_lend: bool
    submitted: int
    started: int  # workloads that started on nodes within the trace
    wait_p50_min: Optional[float]  # submission to first start on nodes, over work that started; None: none did
    wait_p95_min: Optional[float]
    never_started: int  # submitted, never on nodes within the trace (admitted or not)
    node_waits: tuple[NodeWait, ...]  # admitted work that waited for nodes before its first start, by name
    evictions: tuple[Eviction, ...]  # in the order they happened
    waiting_at_end: tuple[str, ...]  # admitted, not on nodes at the end of the run, by name

    @property
    def rewait_minutes(self) -> float:
        return sum(e.rewait_minutes for e in self.evictions)

    @property
    def broken_promise(self) -> bool:
        """A DontLend team's admitted work was evicted by lost nodes or waited for nodes."""
        return self.dont_lend and bool(self.evictions or self.node_waits)


@dataclass(frozen=True)
class NodeEvent:
    """Nodes that joined or left a group: a timeline event (added, lost) or the autoscaler's nodes Ready."""

    minute: float
    kind: str  # LOST | ADDED | READY
    group: str
    flavor: str
    nodes: int
    asked_minute: Optional[float] = None  # READY: when the autoscaler asked for them

    def words(self) -> str:
        if self.kind == READY:
            return (f"minute {_n(self.minute)}: {self.nodes} node(s) of {self.group} ({self.flavor}) Ready, asked "
                    f"by the autoscaler at minute {_n(self.asked_minute or 0)}")
        verb = "lost (reclaimed: the autoscaler cannot ask for them until they are added back)" \
            if self.kind == LOST else "added by the timeline"
        return f"minute {_n(self.minute)}: {self.nodes} node(s) of {self.group} ({self.flavor}) {verb}"


@dataclass(frozen=True)
class NodesRun:
    """What the nodes did in one spec's run, up to the end of the trace."""

    teams: dict[str, TeamNodes]
    events: tuple[NodeEvent, ...]  # in the order they happened
    on_nodes: tuple[tuple[float, int], ...]  # (minute, accelerators on the nodes present from then on)
    pending_scale_ups: tuple[str, ...]  # asked for, not Ready by the end of the run (words)
    bounded: frozenset[str]  # the flavors node groups provide


def timeline_words(name: str, timeline: CapacityTimeline) -> str:
    """"capacity timeline elastic-spot-loss.csv (2 events, scale-up delay 10 minutes)"."""
    n = len(timeline.rows)
    return (f"capacity timeline {name or '(unnamed)'} ({n} event{'s' if n != 1 else ''}, scale-up delay "
            f"{_n(timeline.scale_up_delay_minutes)} minutes)")


def _accelerators_per_node(plan: Plan) -> dict[tuple[str, str], int]:
    """(node group, flavor) -> accelerators one node brings (whole GPUs, as the usage counts them)."""
    out = {}
    for g, ng in zip(plan.instance_groups, node_groups(plan)):
        for t, (flavor, _requests) in zip(g.types, ng.per_node):
            out[(ng.name, flavor)] = plan.catalog.lookup(t).accelerators
    return out


def _events(plan: Plan, result: Result) -> tuple[tuple[NodeEvent, ...], tuple[tuple[float, int], ...], tuple[str, ...]]:
    """The run's node events in order, the accelerators on the nodes present over time (from the groups' nodes at
    minute 0), and the scale-ups asked for that were not Ready by the end of the run."""
    nodes = result.nodes
    if nodes is None:
        raise ValueError("a run without node groups has no node events")
    per_node = _accelerators_per_node(plan)
    level = sum(ng.present * per_node[(ng.name, ng.flavors[0])] for ng in node_groups(plan))
    steps: list[tuple[float, int]] = [(0.0, level)]
    asked = sorted(range(len(nodes.scale_ups)), key=lambda i: (nodes.scale_ups[i].ready, i))  # the Ready order
    events: list[NodeEvent] = []
    ready_seen = 0
    for line in result.timeline:
        changes: list[tuple[str, str, str, int, Optional[float]]] = []
        if m := _READY.match(line):
            up = nodes.scale_ups[asked[ready_seen]]
            ready_seen += 1
            if (up.group, up.flavor) != (m.group("g"), m.group("f")):
                raise ValueError(f"scale-up {up} does not match the line {line!r}")
            changes.append((READY, m.group("g"), m.group("f"), int(m.group("k")), up.at / 60.0))
        elif m := _CHANGED.match(line):
            kind = ADDED if m.group("kind") == "added" else LOST
            for part in m.group("parts").split(", "):
                if p := _PART.match(part):
                    changes.append((kind, p.group("g"), p.group("f"), int(p.group("k")), None))
        else:
            continue
        minute = float(m.group("t")) / 60.0
        for kind, group, flavor, k, at in changes:
            events.append(NodeEvent(minute, kind, group, flavor, k, at))
            level += (-k if kind == LOST else k) * per_node[(group, flavor)]
            if steps[-1][0] == minute:
                steps[-1] = (minute, level)
            else:
                steps.append((minute, level))
    pending = tuple(f"the autoscaler asked {u.nodes} node(s) of {u.group} ({u.flavor}) at minute {_n(u.at / 60)}, "
                    f"Ready at minute {_n(u.ready / 60)}, after the end of the run"
                    for u in (nodes.scale_ups[i] for i in asked[ready_seen:]))
    return tuple(events), tuple(steps), pending


def nodes_run(plan: Plan, result: Result, end_minute: float) -> NodesRun:
    """Per team of the plan, its work on the nodes up to ``end_minute`` (the end of the trace shared by the runs
    compared), and the node events of the run."""
    nodes = result.nodes
    if nodes is None:
        raise ValueError("nodes_run reads a run with a capacity timeline")
    labels = {w.name: dict(w.labels) for w in result.workloads}
    evictions: dict[str, list[Eviction]] = {}
    evicted: dict[str, tuple[float, str, str]] = {}  # workload -> its eviction not yet followed by a start
    admitted: dict[str, float] = {}  # workload -> its latest admission before its first start
    started: set[str] = set()
    for line in result.timeline:
        if (m := _ADMITTED.match(line)) and m.group("w") not in started:
            admitted[m.group("w")] = float(m.group("t")) / 60.0
        elif m := _EVICTED.match(line):
            evicted[m.group("w")] = (float(m.group("t")) / 60.0, m.group("f"), m.group("g"))
        elif m := _STARTED.match(line):
            started.add(m.group("w"))
            if m.group("w") in evicted:
                _record(evictions, labels[m.group("w")], m.group("w"), evicted.pop(m.group("w")),
                        float(m.group("t")) / 60.0, end_minute)
    for name, eviction in evicted.items():
        _record(evictions, labels[name], name, eviction, None, end_minute)
    if sum(len(v) for v in evictions.values()) != len(nodes.evictions):
        raise ValueError("the run's evictions by lost nodes do not match its timeline")
    teams = {}
    for team in plan.teams:
        mine = [w for w in result.workloads if labels[w.name].get("team") == team.name]
        waits, waited = [], []
        for w in mine:
            n = nodes.of(w.name)
            first = n.first_started_at if n is not None else None
            if first is not None:
                waits.append((first - w.submitted_at) / 60.0)
            if w.name not in admitted or n is None or (first is None and not n.waiting_for_nodes):
                continue  # on a flavor no node group bounds, or not admitted (waiting for quota) at the end
            until = first / 60.0 if first is not None else end_minute
            if until > admitted[w.name]:
                waited.append(NodeWait(w.name, int(labels[w.name].get("accelerators", "0")), w.flavor or "-",
                                       admitted[w.name], None if first is None else first / 60.0,
                                       until - admitted[w.name]))
        at_end = tuple(w.name for w in mine if (n := nodes.of(w.name)) is not None and n.waiting_for_nodes)
        teams[team.name] = TeamNodes(team.name, team.strategy == "DontLend", len(mine), len(waits),
                                     _percentile(waits, 50), _percentile(waits, 95), len(mine) - len(waits),
                                     tuple(sorted(waited, key=lambda x: x.workload)),
                                     tuple(sorted(evictions.get(team.name, ()), key=lambda e: (e.minute, e.workload))),
                                     at_end)
    events, steps, pending = _events(plan, result)
    bounded = frozenset(f for ng in node_groups(plan) for f in ng.flavors)
    return NodesRun(dict(sorted(teams.items())), events, steps, pending, bounded)


def _record(out: dict[str, list[Eviction]], lab: dict[str, str], name: str, eviction: tuple[float, str, str],
            restart: Optional[float], end: float) -> None:
    """An eviction of ``name``: it waits to ``restart`` (its next start on nodes) or to the end of the trace."""
    minute, flavor, groups = eviction
    team = lab.get("team", "")
    until = restart if restart is not None else end
    out.setdefault(team, []).append(Eviction(minute, name, team, int(lab.get("accelerators", "0")), flavor, groups,
                                             restart, max(until - minute, 0.0)))


def caution_items(runs: list[tuple[str, Any]]) -> list[str]:
    """Per spec run (prefix, ``NodesRun``), every admitted workload of a DontLend team that lost its nodes or
    waited for them: the promise of a reserved quota the nodes did not keep."""
    items = []
    for prefix, run in runs:
        for t in run.teams.values():
            if not t.broken_promise:
                continue
            items += [f"{prefix}{t.team} (DontLend): {e.words()}" for e in t.evictions]
            items += [f"{prefix}{t.team} (DontLend): {w.words()}" for w in t.node_waits]
    return items
