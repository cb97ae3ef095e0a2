"""The fleet's clock: a MultiKueue manager and its workers, each a single-cluster Kueue run, dispatching AllAtOnce.

Every cluster is the simulator's own engine (:class:`.clock.Engine`, so the same Kueue semantics), driven step by
step instead of to its end. What MultiKueue adds (kubernetes-sigs/kueue v0.19.2,
``pkg/controller/admissionchecks/multikueue/workload.go`` and the AllAtOnce dispatcher) is here:

- a workload is submitted to the manager; when it gets a quota reservation there (the manager's ClusterQueue
  ``<team>-fleet``, quota = the sum of the workers'), it is *in flight*: a copy is created, at that time, on every
  worker of the MultiKueueConfig its team's check names (the team's set, ``Flight.copies``) that has its
  instance type (``remoteClientsForAC`` in ``workload.go``);
- the worker that admits a copy first wins (``bestMatchByCondition(Admitted)``: the earliest
  ``LastTransitionTime``); the other copies are deleted. Within one instant the workers schedule one after the
  other in dispatch order (the order of the workers given; each set's ``spec.clusters`` keeps it), one scheduling
  cycle each in turn (cycle k of every worker before cycle k+1 of any): a worker that admits a copy outright
  wins over one that must first preempt for it (its victims go at the end of the cycle that chose them, and it
  admits in a later cycle), equal cycles go to the earlier worker, and a copy another worker has already
  admitted is gone before a later worker's next cycle. The manager reaches its fixed point before each round;
- the copy runs on its worker for its duration; when it finishes the manager's workload finishes and releases
  the manager's quota;
- the manager evicting its workload (its own preemption) deletes every copy, the running one too; a worker
  evicting the running copy (preemption there) makes the manager's admission check ``Retry``: the manager's
  workload is evicted and queued again, and dispatched anew when it gets quota again.

Copies exist only while the manager holds quota for them, so the manager's quota bounds what is in flight.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Optional

from .cache import Workload
from .clock import Engine
from .flavorassigner import Assignment
from .model import Scenario, WorkloadDef


class Cluster(Engine):
    """One cluster's Kueue, driven by the fleet's clock: it reports what it admitted and evicted."""

    def __init__(self, scenario: Scenario):
        super().__init__(scenario)
        self.admitted_now: list[Workload] = []
        self.evicted_now: list[Workload] = []
        self.dirty = False  # something happened since its last fixed point
        self.cycles_now = 0  # cycles run at the current instant

    def _admit(self, wl: Workload, a: Assignment, initial: bool = False) -> None:
        super()._admit(wl, a, initial)
        self.admitted_now.append(wl)

    def _evict(self, wl: Workload, lost_nodes: bool = False) -> None:
        super()._evict(wl, lost_nodes)
        self.evicted_now.append(wl)

    def _stale_finish(self, item: tuple[float, str, int]) -> bool:
        wl = self.wls.get(item[1])  # a deleted copy is gone from wls
        return wl is None or wl.finish_token != item[2] or wl.state != "admitted"

    def next_finish(self) -> Optional[float]:
        while self.finishes and self._stale_finish(self.finishes[0]):
            heapq.heappop(self.finishes)
        return self.finishes[0][0] if self.finishes else None

    def finish_due(self) -> list[Workload]:
        """The workloads whose run ends by now, finished (their quota released), in the clock's order."""
        done = []
        while self.finishes and self.finishes[0][0] <= self.now:
            _, name, token = heapq.heappop(self.finishes)
            wl = self.wls.get(name)
            if wl is not None and wl.finish_token == token and wl.state == "admitted":
                self._finish(wl)
                done.append(wl)
                self.dirty = True
        return done

    def submit(self, d: WorkloadDef) -> None:
        self._submit(d, self.now)
        self.dirty = True

    def delete(self, name: str) -> None:
        """The workload object is deleted: its quota (if it held any) released, gone from the queues."""
        wl = self.wls.pop(name, None)
        if wl is not None and wl.state != "finished":
            self._finish(wl)
            self.dirty = True

    def settle(self) -> None:
        """Scheduling cycles to a fixed point (the single-cluster clock's step at one time; the fleet reports no
        pending reasons, so the waiting ones are not explained at the end)."""
        self.dirty = True
        while self.dirty:
            self.step()

    def step(self) -> None:
        """One scheduling cycle; the cluster stays dirty until a cycle changes nothing (the fixed-point rule of
        :meth:`.clock.Engine._cycles_to_fixed_point`, with its safety cap per instant)."""
        self.cycles_now += 1
        if self.cycles_now > 4 * len(self.wls) + 16:
            self.fixed_point = False
            self.dirty = False
            return
        changed, _heads = self.run_cycle()
        self.dirty = changed


@dataclass
class Flight:
    """One workload of the trace through the fleet (mutable while the run goes on)."""

    name: str
    team: str
    accelerators: int
    submitted_at: float
    # worker of its team's set -> its copy's (ClusterQueue, requests as that worker counts them, priority), in
    # dispatch order
    copies: dict[str, tuple[str, tuple[tuple[str, int], ...], int]]
    duration: float
    allowed_flavors: tuple[str, ...]
    labels: tuple[tuple[str, str], ...]
    reserved_at: Optional[float] = None  # first quota reservation on the manager
    placed_at: Optional[float] = None  # first admission on a worker
    dispatches: int = 0  # quota reservations on the manager
    offered: list[str] = field(default_factory=list)  # workers that hold a copy now
    cluster: Optional[str] = None  # the worker it runs on now
    started: float = 0.0
    placements: list[tuple[str, float, float]] = field(default_factory=list)  # (worker, start, seconds run)
    evicted_on_workers: int = 0
    finished: bool = False


class FleetClock:
    """The manager and the workers over one trace: see the module's docstring for the dispatch rules."""

    def __init__(self, manager: Cluster, workers: dict[str, Cluster], flights: dict[str, Flight],
                 submissions: list[tuple[float, WorkloadDef]]):
        self.manager = manager
        self.workers = workers  # in dispatch order
        self.flights = flights
        self.subs = sorted(submissions, key=lambda s: (s[0], s[1].name))
        self.unplaced: dict[str, Flight] = {}  # in flight, no worker has admitted it yet (in dispatch order)
        self.to_offer: dict[str, list[Flight]] = {w: [] for w in workers}  # dispatched, copy not yet created
        self.peak: dict[tuple[str, str, str], int] = {}  # (queue, flavor, resource) -> most in flight at once
        self.now = 0.0

    def run(self) -> float:
        i = 0
        clusters = [self.manager, *self.workers.values()]
        while True:
            times = [w.next_finish() for w in self.workers.values()]
            candidates = [t for t in times if t is not None]
            if i < len(self.subs):
                candidates.append(self.subs[i][0])
            if not candidates:
                break
            self.now = max(self.now, min(candidates))
            for c in clusters:
                c.now = self.now
                c.cycles_now = 0
            for name, w in self.workers.items():
                for wl in w.finish_due():
                    self._finished(name, wl)
            while i < len(self.subs) and self.subs[i][0] <= self.now:
                self.manager.submit(self.subs[i][1])
                i += 1
            self._settle()
        for c in clusters:
            c.now = self.now
            for cq in c.cq_order:
                c._integrate(cq)
        return self.now

    # ------------------------------------------------------------ one instant

    def _settle(self) -> None:
        m = self.manager
        while True:
            if m.dirty:
                m.admitted_now.clear()
                m.evicted_now.clear()
                m.settle()
                for wl in m.evicted_now:  # the manager preempted it: every copy is deleted
                    self._recall(self.flights[wl.name])
                for wl in m.admitted_now:
                    f = self.flights[wl.name]
                    if wl.state == "admitted" and f.name not in self.unplaced and f.cluster is None:
                        self._dispatch(f, wl)
                m.admitted_now.clear()
                m.evicted_now.clear()
            for name, w in self.workers.items():
                todo = self.to_offer[name]
                if todo:
                    for f in todo:  # copies are created in dispatch order, at the dispatch's time
                        if f.name in self.unplaced and name not in f.offered:
                            queue, requests, priority = f.copies[name]
                            w.submit(WorkloadDef(f.name, queue, requests, priority, self.now, f.duration,
                                                 allowed_flavors=f.allowed_flavors, labels=f.labels))
                            f.offered.append(name)
                    todo.clear()
                if not w.dirty:
                    continue
                w.admitted_now.clear()
                w.evicted_now.clear()
                w.step()
                for wl in w.evicted_now:
                    f = self.flights[wl.name]
                    if f.cluster == name and w.wls.get(wl.name) is wl:  # the running copy: Retry
                        self._retry(f, name)
                for wl in w.admitted_now:
                    f = self.flights.get(wl.name)
                    if f is not None and f.cluster is None and w.wls.get(wl.name) is wl and wl.state == "admitted":
                        self._place(f, name)
                w.admitted_now.clear()
                w.evicted_now.clear()
            if not m.dirty and not any(w.dirty for w in self.workers.values()):
                return

    def _dispatch(self, f: Flight, wl: Workload) -> None:
        f.dispatches += 1
        if f.reserved_at is None:
            f.reserved_at = self.now
        self.unplaced[f.name] = f
        for w in f.copies:
            self.to_offer[w].append(f)
        cq = wl.cq
        for fr in wl.usage:
            key = (cq.name, fr[0], fr[1])
            u = cq.usage[fr]
            if u > self.peak.get(key, 0):
                self.peak[key] = u

    def _place(self, f: Flight, worker: str) -> None:
        f.cluster = worker
        f.started = self.now
        if f.placed_at is None:
            f.placed_at = self.now
        self.unplaced.pop(f.name, None)
        for other in f.offered:
            if other != worker:
                self.workers[other].delete(f.name)
        f.offered = [worker]

    def _end_run(self, f: Flight) -> None:
        assert f.cluster is not None
        f.placements.append((f.cluster, f.started, self.now - f.started))
        f.cluster = None

    def _recall(self, f: Flight) -> None:
        """The manager no longer holds quota for it: every copy is deleted (the running one too)."""
        if f.cluster is not None:
            self._end_run(f)
        for w in f.offered:
            self.workers[w].delete(f.name)
        f.offered = []
        self.unplaced.pop(f.name, None)

    def _retry(self, f: Flight, worker: str) -> None:
        """Its worker evicted it: the admission check goes Retry, the manager's workload is evicted and queued."""
        f.evicted_on_workers += 1
        self._recall(f)
        m = self.manager
        mwl = m.wls[f.name]
        if mwl.state == "admitted":
            m._evict(mwl)
            m.queues.requeue_inadmissible(mwl.cq)
            m.dirty = True

    def _finished(self, worker: str, wl: Workload) -> None:
        f = self.flights.get(wl.name)
        if f is None or f.cluster != worker:
            return
        self._end_run(f)
        f.finished = True
        f.offered = []
        self.workers[worker].wls.pop(wl.name, None)
        m = self.manager
        mwl = m.wls[f.name]
        if mwl.state == "admitted":
            m._finish(mwl)
            m.dirty = True
