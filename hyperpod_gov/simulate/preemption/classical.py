"""Classic preemption: victims within the queue, then reclaimed from borrowers, in CandidatesOrdering.

Mirrors ``pkg/scheduler/preemption/classical/candidate_generator.go`` (NewCandidateIterator),
``classical/hierarchical_preemption.go`` (classifyPreemptionVariant) and ``classicalPreemptions`` /
``queueUnderNominalInResourcesNeedingPreemption`` of ``pkg/scheduler/preemption/preemption.go``
(kubernetes-sigs/kueue v0.19.2), for a flat cohort.
"""

from __future__ import annotations

from ..cache import ClusterQueue, Workload
from ..resource_node import add_workload, remove_workload, within_nominal
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
    hierarchy: list[tuple[Workload, int]] = []
    priority: list[tuple[Workload, int]] = []
    if cq.cohort is not None and p.reclaim_within_cohort != "Never":
        # QuantitiesFitInQuota on the queue itself.
        advantage = all(cq.usage[fr] + v <= cq.nominal.get(fr, 0) for fr, v in usage.items())
        bucket = hierarchy if advantage else priority
        for other in borrowers(cq, frs):
            for cand in on(other, frs):
                v = classify(wl, cand, advantage)
                if v:
                    bucket.append((cand, v))
        # Runs already in order per queue: the sort merges them (other queues first in CandidatesOrdering).
        bucket.sort(key=_entry_key)
    candidates = hierarchy + priority + same
    forbidden = p.borrow_within_cohort == "Never"
    if not hierarchy and not priority or (forbidden and not under_nominal(cq, frs)):
        attempts = [True]
    elif forbidden and not hierarchy:
        attempts = [False, True]
    else:
        attempts = [True, False]
    for borrow in attempts:
        targets: list[tuple[Workload, str]] = []
        for cand, variant in candidates:
            if cand.cq is not cq:
                if borrow and variant == _RECLAIM_WITHOUT_BORROWING:
                    continue
                if within_nominal(cand.cq, frs):
                    continue
            remove_workload(cand)
            targets.append((cand, _VARIANT_REASON[variant]))
            if workload_fits(cq, usage, borrow):
                targets = fill_back(cq, usage, targets, borrow)
                for t, _ in targets:
                    add_workload(t)
                return targets
        for t, _ in targets:
            add_workload(t)
    return []


def _entry_key(e: tuple[Workload, int]) -> tuple:
    return e[0].cand_key


def under_nominal(cq: ClusterQueue, frs: set[FR]) -> bool:
    """queueUnderNominalInResourcesNeedingPreemption."""
    return all(cq.nominal.get(fr, 0) > cq.usage[fr] for fr in frs)
