"""Classic preemption: victims within the queue, then reclaimed from borrowers, in CandidatesOrdering.

Mirrors ``pkg/scheduler/preemption/classical/candidate_generator.go`` (NewCandidateIterator),
``classical/hierarchical_preemption.go`` (classifyPreemptionVariant) and ``classicalPreemptions`` /
``queueUnderNominalInResourcesNeedingPreemption`` of ``pkg/scheduler/preemption/preemption.go``
(kubernetes-sigs/kueue v0.19.2), for a flat cohort.
"""

from __future__ import annotations

import heapq
import itertools

from ..cache import ClusterQueue, Workload
from ..resource_node import put_back, take_out, within_nominal
from ..results import FR
from .common import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    borrowers,
    fill_back,
    on,
    satisfies_policy,
    workload_fits,
)

# Preemption variants of pkg/scheduler/preemption/classical/hierarchical_preemption.go.
_WITHIN_CQ, _HIERARCHICAL_RECLAIM, _RECLAIM_WITHOUT_BORROWING, _RECLAIM_WHILE_BORROWING = range(1, 5)
_VARIANT_REASON = {
    _WITHIN_CQ: IN_CLUSTER_QUEUE,
    _HIERARCHICAL_RECLAIM: IN_COHORT_RECLAMATION,
    _RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
    _RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING,
}


def classify(wl: Workload, cand: Workload, advantage: bool) -> int:
    """classical.classifyPreemptionVariant (0 = Never) of a candidate that uses the resources to free."""
    cq = wl.cq
    p = cq.d.preemption
    policy = p.within_cluster_queue if cand.cq is cq else p.reclaim_within_cohort
    if not satisfies_policy(wl, cand, policy):
        return 0
    if cand.cq is cq:
        return _WITHIN_CQ
    if advantage:
        return _HIERARCHICAL_RECLAIM
    if p.borrow_within_cohort == "Never":
        return _RECLAIM_WITHOUT_BORROWING
    threshold = p.max_priority_threshold
    if cand.priority >= wl.priority or (threshold is not None and cand.priority > threshold):
        return _RECLAIM_WITHOUT_BORROWING
    return _RECLAIM_WHILE_BORROWING


def classical_preemptions(wl: Workload, frs: set[FR], usage: dict[FR, int]) -> list[tuple[Workload, str]]:
    """Preemptor.classicalPreemptions with classical.NewCandidateIterator (flat cohort)."""
    cq = wl.cq
    p = cq.d.preemption
    same: list[tuple[Workload, int]] = []
    if p.within_cluster_queue != "Never":
        # on() holds the workloads using frs, already in CandidatesOrdering.
        policy = p.within_cluster_queue
        same = [(cand, _WITHIN_CQ) for cand in on(cq, frs) if satisfies_policy(wl, cand, policy)]
    others: list[ClusterQueue] = []
    in_cohort = False  # the hierarchy or the priority bucket of the candidate generator is not empty
    advantage = False
    if cq.cohort is not None and p.reclaim_within_cohort != "Never":
        # QuantitiesFitInQuota on the queue itself.
        advantage = all(cq.usage[fr] + v <= cq.nominal.get(fr, 0) for fr, v in usage.items())
        others = borrowers(cq, frs)
        in_cohort = any(classify(wl, cand, advantage) for other in others for cand in on(other, frs))
    hierarchy = in_cohort and advantage  # candidates of other queues go to the hierarchy bucket, else priority
    forbidden = p.borrow_within_cohort == "Never"
    if not in_cohort or (forbidden and not under_nominal(cq, frs)):
        attempts = [True]
    elif forbidden and not hierarchy:
        attempts = [False, True]
    else:
        attempts = [True, False]
    for borrow in attempts:
        # Without the advantage, and with borrowWithinCohort Never, every candidate of another queue is
        # reclaimed without borrowing: an attempt that allows borrowing skips them all.
        skip_others = borrow and not advantage and p.borrow_within_cohort == "Never"
        targets: list[tuple[Workload, str]] = []
        # The loop only reads quota usage (within_nominal, workload_fits): the candidates are taken out
        # and given back with take_out / put_back.
        for cand, variant in itertools.chain(() if skip_others else _in_cohort(wl, others, frs, advantage, borrow),
                                             same):
            take_out(cand)
            targets.append((cand, _VARIANT_REASON[variant]))
            if workload_fits(cq, usage, borrow):
                targets = fill_back(cq, usage, targets, borrow, put_back, take_out)
                for t, _ in targets:
                    put_back(t)
                return targets
        for t, _ in targets:
            put_back(t)
    return []


def _in_cohort(wl: Workload, others: list[ClusterQueue], frs: set[FR], advantage: bool, borrow: bool):
    """The other queues' candidates that the loop takes, in CandidatesOrdering, produced as it takes them.

    Each queue's candidates (:func:`.common.on`) are in that order already; a heap merges them. A queue
    back within nominal on the resources to free is dropped: the loop skips its candidates from then on
    (only taking out its own workloads changes that, and those are the ones it skips)."""
    heap = []
    for other in others:
        lst = on(other, frs)
        if lst:
            heap.append((lst[0].cand_key, 0, lst, other))
    heapq.heapify(heap)
    # classify() for a candidate of another queue, written out: this runs for every candidate taken.
    p = wl.cq.d.preemption
    policy = p.reclaim_within_cohort
    priority, created = wl.priority, wl.created
    threshold = p.max_priority_threshold
    if advantage:
        fixed = _HIERARCHICAL_RECLAIM
    elif p.borrow_within_cohort == "Never":
        fixed = _RECLAIM_WITHOUT_BORROWING
    else:
        fixed = 0  # by the candidate's priority
    heappop, heapreplace = heapq.heappop, heapq.heapreplace
    while heap:
        _k, i, lst, other = heap[0]
        if within_nominal(other, frs):
            heappop(heap)
            continue
        cand = lst[i]
        i += 1
        if i < len(lst):
            heapreplace(heap, (lst[i].cand_key, i, lst, other))
        else:
            heappop(heap)
        cp = cand.priority
        if policy == "LowerPriority":  # satisfies_policy
            allowed = priority > cp
        elif policy == "LowerOrNewerEqualPriority":
            allowed = priority > cp or (priority == cp and created < cand.created)
        else:
            allowed = policy == "Any"
        if not allowed:
            continue
        if fixed:
            v = fixed
        elif cp >= priority or (threshold is not None and cp > threshold):
            v = _RECLAIM_WITHOUT_BORROWING
        else:
            v = _RECLAIM_WHILE_BORROWING
        if not (borrow and v == _RECLAIM_WITHOUT_BORROWING):
            yield cand, v


def under_nominal(cq: ClusterQueue, frs: set[FR]) -> bool:
    """queueUnderNominalInResourcesNeedingPreemption."""
    return all(cq.nominal.get(fr, 0) > cq.usage[fr] for fr in frs)
