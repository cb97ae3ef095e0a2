"""Nodes under the quota: a capacity timeline, an autoscaler, and evictions when nodes leave.

Kueue admits by quota alone (nominal quota is not capacity) and knows nothing of nodes: an admitted
workload's pods are created and wait, Pending, until nodes can hold them; an autoscaler (Karpenter, which
HyperPod manages) reacts to those Pending pods. This module adds that layer under the unchanged Kueue model,
only for a scenario that declares node groups (:class:`.model.NodeGroup`); without any, nothing here runs.

- **Placement.** A workload admitted on a flavor that node groups provide holds its quota at once (Kueue's
  admission is untouched) and *starts* only when the flavor's nodes have room for its whole request; its
  ``duration`` counts from that start. Room is counted per flavor and resource in total (the sum of the
  present nodes' resources minus what running workloads use), not packed node by node. After each time's
  scheduling cycles, waiting workloads are placed in the kube-scheduler's order (priority, higher first;
  then admission time; then name), each one that fits, none blocking another. A flavor no node group
  provides is not bounded: its workloads start when admitted, as without node groups.
- **Autoscaler.** After placement, for each flavor (by name) whose admitted work still waits, the groups
  that autoscale and offer the flavor (in the scenario's order) are asked for the nodes that the waiting
  work lacks in all (what it requests, less the free room and the nodes already asked for), each group up
  to its ``count`` less its present, asked-for and reclaimed nodes. The nodes are Ready ``scale_up_delay``
  seconds later. Nodes are never removed when idle (no scale-in is modelled).
- **Timeline.** ``add N`` at T: N nodes join the group now (up to its ``count``; they also undo as many
  reclaimed nodes). ``lose N`` at T: N nodes leave now (as many as are there) and stay *reclaimed*: the
  autoscaler cannot ask for them again until an ``add`` returns them. A group that does not autoscale
  changes only through the timeline.
- **Evictions.** When a flavor's running work no longer fits its nodes, running workloads are evicted one
  at a time until the rest fits: the lowest priority first, then the most recently started, then by name.
  This rule is the simulator's, for determinism; Karpenter and HyperPod choose nothing: whatever ran on
  the reclaimed node dies. An evicted workload releases its quota and is requeued with its original
  creation time, as Kueue requeues an evicted workload; it is counted as a capacity eviction, never as a
  preemption, and its next run starts from the beginning (no checkpoint is modelled).
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from typing import Optional

from .cache import Workload
from .model import CapacityEvent, NodeGroup, Scenario
from .results import CapacityEviction, NodesResult, ScaleUp, WorkloadNodes, show_time


class _Group:
    __slots__ = ("d", "present", "asked", "reclaimed")

    def __init__(self, d: NodeGroup):
        self.d = d
        self.present: dict[str, int] = {f: 0 for f in d.flavors}
        self.present[d.flavors[0]] = d.present
        self.asked = 0  # nodes asked of the autoscaler, not yet Ready
        self.reclaimed = 0  # nodes the provider took back and has not returned

    @property
    def total(self) -> int:
        return sum(self.present.values())


class Nodes:
    """The node groups of one run, and which admitted workloads run on them."""

    def __init__(self, scenario: Scenario):
        self.delay = scenario.scale_up_delay
        self.groups = [_Group(g) for g in scenario.node_groups]
        self.by_name = {g.d.name: g for g in self.groups}
        self.per_node: dict[tuple[str, str], dict[str, int]] = {}
        self.by_flavor: dict[str, list[_Group]] = defaultdict(list)
        for g in self.groups:
            for f, res in g.d.per_node:
                self.per_node[(g.d.name, f)] = dict(res)
                self.by_flavor[f].append(g)
        self.capacity: dict[str, dict[str, int]] = {}
        for f in self.by_flavor:
            self._recount(f)
        self.used: dict[str, dict[str, int]] = {f: defaultdict(int) for f in self.by_flavor}
        self.running: dict[str, dict[str, Workload]] = {f: {} for f in self.by_flavor}
        self.waiting: dict[str, Workload] = {}
        self.started: dict[str, float] = {}
        self.first_started: dict[str, float] = {}
        self.node_seconds: dict[str, float] = defaultdict(float)
        self.evicted: dict[str, int] = defaultdict(int)
        self.evicted_at: dict[str, float] = {}  # evicted by lost nodes, not started since
        self.rewait: dict[str, float] = defaultdict(float)
        self.evictions: list[CapacityEviction] = []
        self.scale_ups: list[ScaleUp] = []
        self.arrivals: list[tuple[float, int, str, str, int]] = []  # (ready, seq, group, flavor, nodes)
        self.timeline = sorted(enumerate(scenario.capacity), key=lambda e: (e[1].at, e[0]))
        self.next_event = 0

    # ------------------------------------------------------------ the engine's hooks

    def next_time(self) -> Optional[float]:
        """The earliest timeline event or Ready nodes still to come."""
        times = []
        if self.next_event < len(self.timeline):
            times.append(self.timeline[self.next_event][1].at)
        if self.arrivals:
            times.append(self.arrivals[0][0])
        return min(times) if times else None

    def admitted(self, wl: Workload, now: float) -> bool:
        """A workload was admitted. True: its flavor is bounded and it waits for placement (its finish is
        scheduled when it starts); False: it starts now, as without nodes."""
        if wl.flavor in self.by_flavor:
            self.waiting[wl.name] = wl
            return True
        self._start(wl, now)
        return False

    def released(self, wl: Workload, now: float) -> None:
        """A workload left its quota (finished, preempted, or evicted here): its room on the nodes is free."""
        if self.waiting.pop(wl.name, None) is not None:
            return
        if wl.name not in self.started:
            return
        self.node_seconds[wl.name] += now - self.started.pop(wl.name)
        running = self.running.get(wl.flavor or "")
        if running is not None and running.pop(wl.name, None) is not None:
            used = self.used[wl.flavor]  # type: ignore[index]
            for r, v in wl.requests:
                used[r] -= v

    def due(self, now: float) -> tuple[list[tuple[str, str]], list[str]]:
        """Apply the Ready nodes and timeline events up to ``now``. Returns the flavors that lost nodes (each with
        the groups that lost them), to check for work that no longer fits, and lines for the timeline."""
        lines: list[str] = []
        shrunk: list[tuple[str, str]] = []
        while self.arrivals and self.arrivals[0][0] <= now:
            _t, _seq, name, flavor, n = heapq.heappop(self.arrivals)
            g = self.by_name[name]
            g.asked -= n
            k = max(0, min(n, g.d.count - g.reclaimed - g.total))
            g.present[flavor] += k
            self._recount(flavor)
            lines.append(f"t={show_time(now)}: {k} node(s) of {name} on {flavor} Ready (scale-up)"
                         + (f"; {n - k} no longer available" if k < n else ""))
        while self.next_event < len(self.timeline) and self.timeline[self.next_event][1].at <= now:
            ev = self.timeline[self.next_event][1]
            self.next_event += 1
            groups = [self.by_name[ev.group]] if ev.group is not None else self.by_flavor[ev.flavor or ""]
            if ev.delta > 0:
                lines.append(self._add(groups, ev, now))
            else:
                line, hit = self._lose(groups, ev, now)
                lines.append(line)
                shrunk += hit
        return shrunk, lines

    def victims(self, flavor: str) -> list[Workload]:
        """Running workloads to evict, in order, until the rest fits the flavor's nodes (module docstring)."""
        cap, used = self.capacity[flavor], dict(self.used[flavor])
        running = sorted(self.running[flavor].values(),
                         key=lambda w: (w.priority, -self.started[w.name], w.name))
        out = []
        for w in running:
            if all(used.get(r, 0) <= v for r, v in cap.items()):
                break
            out.append(w)
            for r, v in w.requests:
                used[r] = used.get(r, 0) - v
        return out

    def evicted_by_loss(self, wl: Workload, flavor: str, groups: str, now: float) -> None:
        self.evicted[wl.name] += 1
        self.evicted_at[wl.name] = now
        self.evictions.append(CapacityEviction(now, wl.name, wl.cq.name, flavor, groups))

    def place(self, now: float) -> list[Workload]:
        """Start every waiting workload that fits, in the kube-scheduler's order; then ask the autoscaler for
        what still waits. Returns the workloads started."""
        started = []
        if self.waiting:
            order = sorted(self.waiting.values(), key=lambda w: (-w.priority, w.admitted_at, w.name))
            for wl in order:
                f = wl.flavor
                cap, used = self.capacity[f], self.used[f]  # type: ignore[index]
                if all(used[r] + v <= cap[r] for r, v in wl.requests if r in cap):
                    del self.waiting[wl.name]
                    self.running[f][wl.name] = wl  # type: ignore[index]
                    for r, v in wl.requests:
                        used[r] += v
                    self._start(wl, now)
                    started.append(wl)
        if self.waiting:
            self._scale_up(now)
        return started

    def result(self, wls: dict[str, Workload], now: float) -> NodesResult:
        out = []
        for name in sorted(wls):
            run = self.node_seconds.get(name, 0.0) + (now - self.started[name] if name in self.started else 0.0)
            rewait = self.rewait.get(name, 0.0)
            if name in self.evicted_at and wls[name].state != "finished":
                rewait += now - self.evicted_at[name]
            out.append(WorkloadNodes(name, self.started.get(name), self.first_started.get(name), run,
                                     self.evicted.get(name, 0), name in self.waiting, rewait))
        groups = tuple((g.d.name, tuple(g.present.items())) for g in self.groups)
        return NodesResult(tuple(out), tuple(self.evictions), tuple(self.scale_ups), groups)

    # ------------------------------------------------------------ internals

    def _start(self, wl: Workload, now: float) -> None:
        if wl.name in self.evicted_at:
            self.rewait[wl.name] += now - self.evicted_at.pop(wl.name)
        self.started[wl.name] = now
        self.first_started.setdefault(wl.name, now)

    def _recount(self, flavor: str) -> None:
        cap: dict[str, int] = defaultdict(int)
        for g in self.by_flavor[flavor]:
            per = self.per_node[(g.d.name, flavor)]
            for r, v in per.items():
                cap[r] += v * g.present[flavor]
        self.capacity[flavor] = cap

    def _add(self, groups: list[_Group], ev: CapacityEvent, now: float) -> str:
        left = ev.delta
        added = []
        for g in groups:
            flavor = ev.flavor or g.d.flavors[0]
            k = max(0, min(left, g.d.count - g.total))
            if k <= 0:
                continue
            g.present[flavor] += k
            g.reclaimed = max(0, min(g.reclaimed - k, g.d.count - g.total))
            left -= k
            self._recount(flavor)
            added.append(f"{k} to {g.d.name} on {flavor}")
        line = f"t={show_time(now)}: {ev.delta - left} node(s) added ({', '.join(added) or 'no room'})"
        return line + (f"; {left} more would exceed the groups' count" if left else "")

    def _lose(self, groups: list[_Group], ev: CapacityEvent, now: float) -> tuple[str, list[tuple[str, str]]]:
        left = -ev.delta
        taken: list[str] = []
        hit: dict[str, list[str]] = {}
        for g in groups:
            for flavor in ([ev.flavor] if ev.flavor else list(g.d.flavors)):
                k = min(left, g.present[flavor])
                if k <= 0:
                    continue
                g.present[flavor] -= k
                g.reclaimed += k
                left -= k
                self._recount(flavor)
                taken.append(f"{k} of {g.d.name} on {flavor}")
                hit.setdefault(flavor, []).append(g.d.name)
        line = (f"t={show_time(now)}: {-ev.delta - left} node(s) lost ({', '.join(taken) or 'none there'})"
                + (f"; {left} more were not there" if left else ""))
        return line, [(f, ", ".join(names)) for f, names in hit.items()]

    def _scale_up(self, now: float) -> None:
        short: dict[str, dict[str, int]] = {}
        for wl in self.waiting.values():
            need = short.setdefault(wl.flavor, defaultdict(int))  # type: ignore[arg-type]
            for r, v in wl.requests:
                need[r] += v
        for flavor in sorted(short):
            need = short[flavor]
            cap, used = self.capacity[flavor], self.used[flavor]
            asked = defaultdict(int)
            for _t, _s, name, f, n in self.arrivals:
                if f == flavor:
                    for r, v in self.per_node[(name, f)].items():
                        asked[r] += v * n
            lack = {r: v + used[r] - cap[r] - asked[r] for r, v in need.items() if r in cap or r in asked}
            for g in self.by_flavor[flavor]:
                if not g.d.autoscale:
                    continue
                room = g.d.count - g.total - g.asked - g.reclaimed
                per = self.per_node[(g.d.name, flavor)]
                nodes = max((math.ceil(v / per[r]) for r, v in lack.items() if v > 0 and per.get(r)), default=0)
                n = min(nodes, room)
                if n <= 0:
                    continue
                g.asked += n
                ready = now + self.delay
                heapq.heappush(self.arrivals, (ready, len(self.scale_ups), g.d.name, flavor, n))
                self.scale_ups.append(ScaleUp(now, ready, g.d.name, flavor, n))
                for r in lack:
                    lack[r] -= n * per.get(r, 0)
