"""One scheduling cycle: nominate each queue's head, order the entries, admit or preempt, requeue.

Mirrors ``pkg/scheduler/scheduler.go`` of kubernetes-sigs/kueue v0.19.2 (Scheduler.schedule,
getInitialAssignments / nominate, fits, admit / assumeWorkload, requeueAndUpdate,
reserveCapacityForUnreclaimablePreempt / quotaResourcesToReserve) for a flat cohort. An eviction completes
at the end of the cycle that chose it. The time loop that drives the cycles is :mod:`.clock`.

Feature gates are at their v0.19.2 defaults: PrioritySortingWithinCohort, FlavorFungibility,
FlavorFungibilityPreserveScanProgress, FairSharingPreemptWithinNominal, FairSharingPrioritizeNonBorrowing
and SchedulingEquivalenceHashing on; PrioritizePreemptorWorkloads,
RecomputeAssignmentUponPreemptionTargetsOverlap and SchedulerTimestampPreemptionBuffer off. Partial
admission, TAS, admission checks, waitForPodsReady and hierarchical cohorts are out of scope.

Speed-ups never change an outcome: each one (a nomination remembered while nothing it read changed,
:mod:`.memo`; preemption simulations that can only refine the borrowing level run when that is read; heap
instead of a scan for the fair-sharing target queue; shares kept with the usage, or computed instead of
simulated) was checked against the straightforward version on random scenarios and the benchmarks.
"""

from __future__ import annotations

import heapq
from typing import Optional

from . import cache
from .cache import ClusterQueue, Workload
from .flavorassigner import NO_CANDIDATES, PREEMPT, RECLAIM, Assignment, assign_flavors, last_assignment_outdated
from .model import Scenario
from .ordering import order_classical, order_fair
from .preemption import Preemptor
from .memo import NominationMemo
from .nodes import Nodes
from .queue import QueueManager
from .resource_node import add_usage, add_workload, available, put_back, remove_usage, remove_workload, take_out
from .results import FR, PreemptionRecord, show_time

# Requeue reasons of pkg/cache/queue.
_NO_FIT = "NoFit"
_NO_CANDIDATES = "PreemptionNoCandidates"
_FAILED_AFTER_NOMINATION = "FailedAfterNomination"
_PENDING_PREEMPTION = "PendingPreemption"


def _committed(cq: ClusterQueue, flavor: Optional[str]) -> None:
    """The queue's committed state changed on ``flavor`` (what :mod:`.memo` validates against)."""
    cq.commits += 1
    co = cq.cohort
    if co is not None:
        co.flavor_commits[flavor] += 1
        for fr in cq.borrowing:
            co.borrower_commits[fr] += 1


class Scheduler:
    """The scheduler's state over one scenario and its cycle. :class:`.clock.Engine` runs it over time."""

    def __init__(self, scenario: Scenario, max_cycles: Optional[int] = None):
        self.s = scenario
        self.max_cycles = max_cycles
        self.fair = scenario.fair_sharing
        self.strategies = scenario.preemption_strategies
        self.cohorts, self.cqs = cache.build(scenario.queues)
        self.cq_order = list(self.cqs.values())  # in name order
        self.queues = QueueManager()
        self.preemptor = Preemptor(self.fair, self.strategies)
        self.wls: dict[str, Workload] = {}
        self.now = 0.0
        self.cycle = 0
        self.preemptions: list[PreemptionRecord] = []
        self.timeline: list[str] = []
        self.finishes: list[tuple[float, str, int]] = []  # (time, name, token)
        self.fixed_point = True
        self.memo = NominationMemo()
        # Node groups under the quota (nodes.py): None without any, and then nothing below reads them.
        self.nodes = Nodes(scenario) if scenario.node_groups else None

    # ------------------------------------------------------------ bookkeeping

    def _integrate(self, cq: ClusterQueue) -> None:
        dt = self.now - cq.last_t
        if dt > 0:
            for fr, u in cq.usage.items():
                if u:
                    cq.usage_s[fr] += u * dt
                    over = u - cq.nominal.get(fr, 0)
                    if over > 0:
                        cq.borrowed_s[fr] += over * dt
        cq.last_t = self.now

    def _admit(self, wl: Workload, a: Assignment, initial: bool = False) -> None:
        """Scheduler.admit / assumeWorkload: the workload holds its quota from now on."""
        cq = wl.cq
        self._integrate(cq)
        wl.flavor = a.flavor
        wl.usage = dict(a.usage)
        add_workload(wl)
        _committed(cq, wl.flavor)
        cq.admitted[wl.name] = wl
        cq.on_flavor[wl.flavor][wl.name] = wl
        cq.on_cache.clear()
        wl.state = "admitted"
        wl.where = ""
        wl.admitted_at = self.now
        wl.cand_key = (wl.priority, -self.now, cq.name, wl.name)
        if wl.first_admitted_at is None:
            wl.first_admitted_at = self.now
        wl.borrowing = a.borrow > 0
        wl.pending_reason = ""
        wl.last_tried = None
        if cq.pw is wl:
            cq.pw = None
        if cq.cohort is not None:
            cq.cohort.generation += 1
        if self.nodes is not None and self.nodes.admitted(wl, self.now):
            pass  # it waits for nodes; its run (and so its finish) starts when it is placed
        elif wl.d.duration is not None:  # _schedule_finish, inline: this runs once per admission
            wl.finish_token = self.queues.next_token()
            heapq.heappush(self.finishes, (self.now + wl.d.duration, wl.name, wl.finish_token))
        when = f"t={show_time(self.now)}: {wl.name} already admitted" if initial else \
            f"t={show_time(self.now)} cycle {self.cycle}: admitted {wl.name}"
        self.timeline.append(f"{when} in {cq.name} on {a.flavor}" + (" (borrowing)" if wl.borrowing else ""))

    def _schedule_finish(self, wl: Workload) -> None:
        wl.finish_token = self.queues.next_token()
        heapq.heappush(self.finishes, (self.now + wl.d.duration, wl.name, wl.finish_token))  # type: ignore[operator]

    def _release(self, wl: Workload) -> None:
        cq = wl.cq
        self._integrate(cq)
        if self.nodes is not None:
            self.nodes.released(wl, self.now)
        remove_workload(wl)
        _committed(cq, wl.flavor)
        del cq.admitted[wl.name]
        del cq.on_flavor[wl.flavor][wl.name]
        cq.on_cache.clear()
        wl.run_seconds += self.now - (wl.admitted_at or 0.0)
        wl.finish_token = 0
        if cq.cohort is not None:
            cq.cohort.generation += 1

    def _finish(self, wl: Workload) -> None:
        if wl.state == "admitted":
            self._release(wl)
            self.queues.requeue_inadmissible(wl.cq)
        elif wl.state == "pending":
            wl.cq.inadmissible.pop(wl.name, None)
            wl.where = ""
            if wl.cq.pw is wl:
                wl.cq.pw = None
        wl.state = "finished"
        wl.pending_reason = ""
        self.timeline.append(f"t={show_time(self.now)}: {wl.name} finished")

    def _evict(self, wl: Workload, lost_nodes: bool = False) -> None:
        """The eviction completes: quota released, the workload pending again with its original timestamp.
        ``lost_nodes``: its nodes left (nodes.py), which is not a preemption."""
        self._release(wl)
        wl.state = "pending"
        wl.flavor = None
        wl.usage = {}
        wl.admitted_at = None
        wl.borrowing = False
        wl.last_tried = None
        if lost_nodes:
            wl.pending_reason = "evicted: the nodes it ran on were lost; waiting to be admitted again"
        else:
            wl.preempted_count += 1
            wl.pending_reason = "preempted; waiting to be admitted again"
        self.queues.push(wl)

    # ------------------------------------------------------------ one scheduling cycle (scheduler.go)

    def _nominate(self, wl: Workload) -> Assignment:
        """Scheduler.getInitialAssignments: assignment, then preemption targets if it needs preemption.

        The answer is remembered while nothing it read changes (:mod:`.memo`): an equivalent head (same
        queue, priority, requests, flavor scan start) gets it again instead of a new computation.
        """
        cq = wl.cq
        start = wl.last_tried + 1 if wl.last_tried is not None and not last_assignment_outdated(wl, self.cycle) else 0
        key = (wl.klass, start) if wl.klass is not None else self.memo.key(wl, start)
        a = self.memo.get(key)
        if a is not None:
            wl.last_tried = a.tried
            wl.last_cycle = self.cycle
            wl.last_generation = cq.cohort.generation if cq.cohort is not None else 0
            return a
        a = self._nominate_uncached(wl)
        self.memo.put(key, wl, start, a, self.preemptor)
        return a

    def _nominate_uncached(self, wl: Workload) -> Assignment:
        self.preemptor.new_state()
        a = assign_flavors(wl, self.cycle, self.preemptor)
        wl.last_tried = a.tried
        wl.last_cycle = self.cycle
        wl.last_generation = wl.cq.cohort.generation if wl.cq.cohort is not None else 0
        if a.flavor is not None and a.mode in (NO_CANDIDATES, PREEMPT, RECLAIM):
            frs = {(a.flavor, r) for r, m in a.modes.items() if m in (NO_CANDIDATES, PREEMPT, RECLAIM)}
            a.targets = self.preemptor.get_targets(wl, frs, a.usage)
        # The borrowing level is read by the classical ordering, and by the capacity reservation of a head
        # without candidates whose queue cannot reclaim everything, where it may borrow (_to_reserve).
        if a.pending is not None and (not self.fair or (
                not a.targets and wl.cq.d.preemption.reclaim_within_cohort != "Any"
                and any(wl.cq.bl.get(fr) != 0 for fr in a.usage))):
            a.resolve()
        a.shares_read = bool(self.preemptor.shares_read)
        a.found_none = not self.preemptor.found_any
        return a

    def run_cycle(self) -> tuple[bool, int]:
        """Scheduler.schedule. Returns (something changed, number of heads)."""
        heads = []
        stopped_moved = False
        for cq in self.cq_order:
            if not cq.heap:  # nothing pending (an active sticky preemptor has its entry in the heap too)
                continue
            wl = self.queues.pop_head(cq)
            if wl is None:
                continue
            if cq.d.stopped:  # nominate: an inactive ClusterQueue's heads are inadmissible
                wl.pending_reason = f"ClusterQueue {cq.name} is inactive (stopPolicy Hold)"
                self.queues.park(wl)
                stopped_moved = True
                continue
            heads.append(wl)
        if not heads:
            return stopped_moved, 0
        self.cycle += 1
        scan_before = {wl.name: wl.last_tried for wl in heads}
        entries = [(wl, self._nominate(wl)) for wl in heads]
        temp: list[tuple[ClusterQueue, FR, int]] = []
        preempted: dict[str, Workload] = {}
        victims: list[tuple[Workload, Workload, str]] = []
        reservers: dict[str, None] = {}
        outcome: dict[str, str] = {}
        admitted_any = False

        def process(wl: Workload, a: Assignment) -> None:
            nonlocal admitted_any
            cq = wl.cq
            mode = a.representative
            if mode == "NoFit":
                outcome[wl.name] = _NO_FIT
                wl.pending_reason = a.why() or "no flavor fits"
                return
            if mode == "Preempt" and not a.targets:
                outcome[wl.name] = _NO_CANDIDATES
                wl.pending_reason = "needs preemption but no workload may be preempted: " + a.why()
                if cq.d.preemption.reclaim_within_cohort != "Any":  # reserveCapacityForUnreclaimablePreempt
                    for fr, v in self._to_reserve(cq, a).items():
                        if v > 0:
                            add_usage(cq, fr, v)
                            temp.append((cq, fr, v))
                            reservers[wl.name] = None
                return
            if any(t.name in preempted for t, _ in a.targets):
                outcome[wl.name] = _FAILED_AFTER_NOMINATION
                wl.pending_reason = "overlapping preemption targets with another workload"
                return
            if not self._fits_now(cq, a, preempted):
                outcome[wl.name] = _FAILED_AFTER_NOMINATION
                wl.pending_reason = "no longer fits after processing another workload"
                if reservers:
                    wl.pending_reason += (f" (capacity reserved this cycle by {', '.join(reservers)}, which waits "
                                          "for quota it cannot preempt for)")
                return
            for t, _ in a.targets:
                preempted[t.name] = t
            if mode == "Preempt":
                for fr, v in a.usage.items():
                    add_usage(cq, fr, v)
                    temp.append((cq, fr, v))
                for t, reason in a.targets:
                    victims.append((t, wl, reason))
                wl.last_tried = None  # markPreemptionOutcome
                outcome[wl.name] = _PENDING_PREEMPTION
                wl.pending_reason = f"waiting for the preemption of {len(a.targets)} workload(s)"
                return
            self._admit(wl, a)
            admitted_any = True
            outcome[wl.name] = "admitted"

        if self.fair:
            for wl, a in order_fair(entries):
                process(wl, a)
        else:
            for wl, a in order_classical(entries):
                process(wl, a)

        moved = False
        for wl, _a in entries:  # requeueAndUpdate
            reason = outcome[wl.name]
            if reason == "admitted":
                continue
            cq = wl.cq
            if reason == _PENDING_PREEMPTION:
                cq.pw = wl
            immediate = cq.strict or reason in (_FAILED_AFTER_NOMINATION, _PENDING_PREEMPTION)
            if immediate:
                self.queues.push(wl)
            else:
                self.queues.park(wl)
                if reason in (_NO_FIT, _NO_CANDIDATES):
                    self.queues.bulk_park(cq, wl)
                moved = True
        for cq, fr, v in temp:
            remove_usage(cq, fr, v)
        touched: dict[str, ClusterQueue] = {}
        for victim, preemptor, reason in victims:
            self.preemptions.append(PreemptionRecord(self.now, self.cycle, victim.name, preemptor.name, reason))
            self.timeline.append(
                f"t={show_time(self.now)} cycle {self.cycle}: {preemptor.name} preempts {victim.name} ({reason})")
            preemptor.preempting_count += 1
            self._evict(victim)
            touched[victim.cq.name] = victim.cq
        for cq in touched.values():
            self.queues.requeue_inadmissible(cq)
        # A head whose flavor scan will resume elsewhere next cycle (FlavorFungibilityPreserveScanProgress)
        # makes the next cycle differ, so this one is not a fixed point yet.
        rescan = any(scan_before[wl.name] != wl.last_tried for wl, _a in entries if outcome[wl.name] != "admitted")
        return admitted_any or bool(victims) or moved or rescan, len(heads)

    def _fits_now(self, cq: ClusterQueue, a: Assignment, preempted: dict[str, Workload]) -> bool:
        """scheduler.fits: with this cycle's victims (and the entry's own) taken out."""
        gone = dict(preempted)
        for t, _ in a.targets:
            gone[t.name] = t
        for t in gone.values():
            take_out(t)
        ok = all(available(cq, fr) >= v for fr, v in a.usage.items())
        for t in gone.values():
            put_back(t)
        return ok

    @staticmethod
    def _to_reserve(cq: ClusterQueue, a: Assignment) -> dict[FR, int]:
        """quotaResourcesToReserve. With a borrowing limit of 0 both branches reserve what is left of the
        nominal quota (a reservation of 0 or less is none), so the borrowing level is read only elsewhere."""
        out = {}
        for fr, v in a.usage.items():
            nominal = cq.nominal.get(fr, 0)
            bl = cq.bl.get(fr)
            if bl != 0 and a.borrow > 0:
                out[fr] = v if bl is None else min(v, nominal + bl - cq.usage[fr])
            else:
                out[fr] = max(0, min(v, nominal - cq.usage[fr]))
        return out
