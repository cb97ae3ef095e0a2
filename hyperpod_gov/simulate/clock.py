"""The clock: time advances from event to event; at each time, cycles run until a fixed point.

Kueue has no clock of its own (it reacts to API events); this is the simulator's. At each time it applies
that time's finishes and events (submissions, finishes), then runs scheduling cycles (:mod:`.scheduler`)
until one admits, preempts and parks nothing, or ``--cycles`` is used up, as SIMULATOR.md states. Usage is
integrated over time for the results.
"""

from __future__ import annotations

import heapq

from .cache import ClusterQueue, Workload
from .fair_sharing import drs
from .flavorassigner import Assignment
from .model import Event, WorkloadDef
from .resource_node import borrowing_with
from .results import QueueResult, Result, WorkloadResult, show_time
from .scheduler import Scheduler


class Engine(Scheduler):
    """One simulation run over a scenario. Use :func:`hyperpod_gov.simulate.simulate`."""

    def run(self) -> Result:
        s = self.s
        for d in s.workloads:
            cq = self.cqs[d.queue]
            wl = Workload(d, cq, d.created)
            self.wls[d.name] = wl
            if d.admitted_flavor is not None:
                a = Assignment()
                a.flavor = d.admitted_flavor
                a.usage = {(d.admitted_flavor, r): v for r, v in d.requests}
                a.borrow = 1 if any(borrowing_with(cq, fr, v) for fr, v in a.usage.items()) and cq.cohort else 0
                self.now = d.admitted_at
                self._admit(wl, a, initial=True)
            else:
                self.queues.push(wl)
        self.now = 0.0
        for cq in self.cq_order:
            cq.last_t = 0.0
        events = sorted(enumerate(s.events), key=lambda e: (e[1].at, e[0]))
        ev_i = 0
        times = [0.0]
        while True:
            t = times.pop() if times else None
            if t is None:
                candidates = []
                if ev_i < len(events):
                    candidates.append(events[ev_i][1].at)
                while self.finishes and self._stale_finish(self.finishes[0]):
                    heapq.heappop(self.finishes)
                if self.finishes:
                    candidates.append(self.finishes[0][0])
                if self.nodes is not None:
                    t_nodes = self.nodes.next_time()
                    if t_nodes is not None:
                        candidates.append(t_nodes)
                if not candidates:
                    break
                t = min(candidates)
            if s.until is not None and t > s.until:
                break
            self.now = max(self.now, t)
            while self.finishes and self.finishes[0][0] <= self.now:
                _, name, token = heapq.heappop(self.finishes)
                wl = self.wls[name]
                if wl.finish_token == token and wl.state == "admitted":
                    self._finish(wl)
            if self.nodes is not None:
                self._capacity_changes()
            while ev_i < len(events) and events[ev_i][1].at <= self.now:
                self._apply(events[ev_i][1])
                ev_i += 1
            done = not self._cycles_to_fixed_point()
            if self.nodes is not None:
                self._place()
            if done:
                break
        end = s.until if s.until is not None else self.now
        self.now = max(self.now, end)
        return self._result()

    def _stale_finish(self, item: tuple[float, str, int]) -> bool:
        wl = self.wls[item[1]]
        return wl.finish_token != item[2] or wl.state != "admitted"

    def _apply(self, ev: Event) -> None:
        if ev.finish is not None:
            wl = self.wls.get(ev.finish)
            if wl is not None and wl.state != "finished":
                self._finish(wl)
        if ev.submit is not None:
            self._submit(ev.submit, ev.at)

    def _cycles_to_fixed_point(self) -> bool:
        """Cycles until one changes nothing. False once --cycles is used up."""
        cap = 4 * len(self.wls) + 16  # every cycle that changes something admits, preempts or parks a head
        for _ in range(cap):
            if self.max_cycles is not None and self.cycle >= self.max_cycles:
                self.fixed_point = False
                return False
            changed, _heads = self.run_cycle()
            if not changed:
                for cq in self.cq_order:
                    if cq.heap:
                        self.queues.explain_waiting(cq)
                return True
        self.fixed_point = False
        self.timeline.append(f"t={show_time(self.now)}: no fixed point after {cap} cycles; moving on")
        return True

    def _result(self) -> Result:
        for cq in self.cq_order:
            self._integrate(cq)
        wls = []
        for name in sorted(self.wls):
            w = self.wls[name]
            run = w.run_seconds + (self.now - w.admitted_at if w.state == "admitted" and w.admitted_at is not None else 0)
            wls.append(WorkloadResult(
                name=w.name, queue=w.cq.name, state=w.state, flavor=w.flavor, admitted_at=w.admitted_at,
                borrowing=w.borrowing, preempted_count=w.preempted_count, preempting_count=w.preempting_count,
                submitted_at=w.submitted_at, first_admitted_at=w.first_admitted_at, run_seconds=run,
                pending_reason=w.pending_reason if w.state == "pending" else "", priority=w.priority,
                requests=w.requests, labels=w.d.labels,
            ))
        queues = []
        for cq in self.cq_order:
            frs = list(cq.nominal)
            queues.append(QueueResult(
                name=cq.name,
                usage=tuple((fr, cq.usage[fr]) for fr in frs),
                nominal=tuple((fr, cq.nominal[fr]) for fr in frs),
                weighted_share=drs(cq).rounded(),
                usage_seconds=tuple((fr, cq.usage_s.get(fr, 0.0)) for fr in frs),
                borrowed_seconds=tuple((fr, cq.borrowed_s.get(fr, 0.0)) for fr in frs),
            ))
        nodes = self.nodes.result(self.wls, self.now) if self.nodes is not None else None
        return Result(tuple(wls), tuple(self.preemptions), tuple(queues), self.cycle, self.now,
                      tuple(self.timeline), self.fixed_point, nodes)

    # ------------------------------------------------------------ nodes under the quota (nodes.py)

    def _capacity_changes(self) -> None:
        """Ready nodes and the timeline's events up to now; work that no longer fits its nodes is evicted."""
        assert self.nodes is not None
        shrunk, lines = self.nodes.due(self.now)
        self.timeline += lines
        touched: dict[str, ClusterQueue] = {}
        for flavor, groups in shrunk:
            for wl in self.nodes.victims(flavor):
                self.nodes.evicted_by_loss(wl, flavor, groups, self.now)
                self.timeline.append(f"t={show_time(self.now)}: {wl.name} evicted from {flavor}: "
                                     f"nodes of {groups} lost under it")
                touched[wl.cq.name] = wl.cq
                self._evict(wl, lost_nodes=True)
        for cq in touched.values():
            self.queues.requeue_inadmissible(cq)

    def _place(self) -> None:
        """Start what the nodes can hold now; the autoscaler asks for what still waits."""
        assert self.nodes is not None
        asked = len(self.nodes.scale_ups)
        for wl in self.nodes.place(self.now):
            self.timeline.append(f"t={show_time(self.now)}: {wl.name} started on the nodes of {wl.flavor}")
            if wl.d.duration is not None:
                self._schedule_finish(wl)
        for up in self.nodes.scale_ups[asked:]:
            self.timeline.append(f"t={show_time(self.now)}: the autoscaler asks {up.nodes} node(s) of {up.group} "
                                 f"on {up.flavor}, Ready at t={show_time(up.ready)}")

    def _submit(self, d: WorkloadDef, at: float) -> None:
        cq = self.cqs[d.queue]
        wl = Workload(d, cq, at)
        self.wls[d.name] = wl
        self.queues.add_pending(wl)
