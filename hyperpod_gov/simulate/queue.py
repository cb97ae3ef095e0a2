"""The queues of pending workloads: each ClusterQueue's active heap, its inadmissible set, requeueing.

Mirrors ``pkg/cache/queue/cluster_queue.go`` (PushOrUpdate, Pop, the sticky preemptorWorkload of a
BestEffortFIFO queue, handleInadmissibleHash / hashToBulkMoveReason), ``inadmissible_workloads.go`` and
``manager.go`` (QueueInadmissibleWorkloads) of kubernetes-sigs/kueue v0.19.2. The heap orders by priority,
then the queue-order timestamp (``created``), then the name; entries are invalidated lazily by a token.
"""

from __future__ import annotations

import heapq
from typing import Optional

from .cache import ClusterQueue, Workload


class QueueManager:
    """Pending workloads of every ClusterQueue. ``next_token`` also numbers the clock's finish events."""

    def __init__(self) -> None:
        self.seq = 0

    def next_token(self) -> int:
        """A number never handed out before: invalidates older heap or finish entries of a workload."""
        self.seq += 1
        return self.seq

    def park(self, wl: Workload) -> None:
        """Into the queue's inadmissible set, until something in its cohort changes."""
        wl.where = "inadmissible"
        wl.cq.inadmissible[wl.name] = wl

    def add_pending(self, wl: Workload) -> None:
        """ClusterQueue.PushOrUpdate: a workload of an equivalence class already parked is parked too."""
        if not wl.cq.strict and wl.hash in wl.cq.bulk:
            self.park(wl)
            wl.pending_reason = "an equivalent workload (same priority and requests) could not be admitted"
        else:
            self.push(wl)

    def bulk_park(self, cq: ClusterQueue, head: Workload) -> None:
        """handleInadmissibleHash: park every equivalent workload of a BestEffortFIFO queue with the head."""
        if cq.strict:
            return
        h = head.hash
        cq.bulk.add(h)
        for entry in cq.heap:
            w = entry[4]
            if w.token == entry[3] and w.where == "active" and w is not head and w.hash == h:
                self.park(w)
                w.pending_reason = f"equivalent to {head.name}, which could not be admitted ({head.pending_reason})"

    def push(self, wl: Workload) -> None:
        """Into the active heap: priority first, then the queue-order timestamp, then the name."""
        wl.token = self.next_token()
        wl.where = "active"
        heapq.heappush(wl.cq.heap, (-wl.priority, wl.created, wl.name, wl.token, wl))

    def pop_head(self, cq: ClusterQueue) -> Optional[Workload]:
        """ClusterQueue.Pop; a BestEffortFIFO queue's sticky preemptor comes first."""
        pw = cq.pw
        if pw is not None and not cq.strict and pw.where == "active" and pw.state == "pending":
            pw.where = ""
            return pw
        heap = cq.heap
        while heap:
            entry = heapq.heappop(heap)
            wl = entry[4]
            if wl.token == entry[3] and wl.where == "active":
                wl.where = ""
                return wl
        return None

    def requeue_inadmissible(self, cq: ClusterQueue) -> None:
        """QueueInadmissibleWorkloads for the queue's cohort (or the queue alone)."""
        members = cq.cohort.cqs if cq.cohort is not None else [cq]
        for member in members:
            if member.bulk:
                member.bulk.clear()
            if member.inadmissible:
                for name in sorted(member.inadmissible):
                    self.push(member.inadmissible[name])
                member.inadmissible.clear()

    @staticmethod
    def explain_waiting(cq: ClusterQueue) -> None:
        """At a fixed point, what waits in the active heap waits behind the head (retried every cycle)."""
        active = list({id(e[-1]): e[-1] for e in cq.heap
                       if e[-1].token == e[3] and e[-1].where == "active" and e[-1].state == "pending"}.values())
        if len(active) < 2:
            return
        pw = cq.pw if cq.pw is not None and not cq.strict and cq.pw in active else None
        head = pw or min(active, key=lambda w: (-w.priority, w.created, w.name))
        kind = "StrictFIFO" if cq.strict else "BestEffortFIFO"
        for w in active:
            if w is not head:
                w.pending_reason = (f"behind {head.name}, the head of {kind} queue {cq.name}, which is retried "
                                    f"every cycle ({head.pending_reason})")
