"""What both preemption algorithms share: the policy test, the candidate order, who uses what.

Mirrors ``pkg/scheduler/preemption/common/preemption_policy.go`` (SatisfiesPreemptionPolicy),
``common/ordering.go`` (CandidatesOrdering) and the helpers of ``pkg/scheduler/preemption/preemption.go``
(workloadFits, fillBackWorkloads, the preemption reasons) of kubernetes-sigs/kueue v0.19.2.
"""

from __future__ import annotations

from typing import Callable

from ..cache import ClusterQueue, Workload
from ..resource_node import add_workload, available_quota, limits, remove_workload
from ..results import FR

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"


def satisfies_policy(preemptor: Workload, candidate: Workload, policy: str) -> bool:
    """common.SatisfiesPreemptionPolicy (no timestamp buffer)."""
    lower = preemptor.priority > candidate.priority
    if policy == "LowerPriority":
        return lower
    if policy == "LowerOrNewerEqualPriority":
        return lower or (preemptor.priority == candidate.priority and preemptor.created < candidate.created)
    return policy == "Any"


def uses(wl: Workload, frs: set[FR]) -> bool:
    """classical.WorkloadUsesResources."""
    return any(fr in frs for fr in wl.usage)


def candidate_key(preemptor_cq: ClusterQueue) -> Callable[[Workload], tuple]:
    """common.CandidatesOrdering: other queues first, lower priority, most recently admitted; then by name."""
    return lambda w: (w.cq is preemptor_cq, w.cand_key)


def on(cq: ClusterQueue, frs: set[FR]) -> list[Workload]:
    """The queue's admitted workloads that use any of ``frs`` (WorkloadUsesResources), in CandidatesOrdering
    within the queue (lower priority, most recently admitted, then by name). Kept until the queue admits or
    releases a workload."""
    key = frozenset(frs)
    out = cq.on_cache.get(key)
    if out is None:
        out = []
        for f in sorted({f for f, _ in frs}):
            out += [w for w in cq.on_flavor.get(f, {}).values() if uses(w, frs)]
        out.sort(key=_cand_key)
        cq.on_cache[key] = out
    return out


def on_total(cq: ClusterQueue, frs: set[FR]) -> dict[FR, int]:
    """The usage of :func:`on`'s workloads summed per (flavor, resource); kept as long as :func:`on`."""
    key = ("total", frozenset(frs))
    out = cq.on_cache.get(key)
    if out is None:
        out = {}
        for w in on(cq, frs):
            for fr, v in w.usage.items():
                out[fr] = out.get(fr, 0) + v
        cq.on_cache[key] = out
    return out


def _cand_key(w: Workload) -> tuple:
    return w.cand_key


def on_with_total(cq: ClusterQueue, frs: set[FR]) -> tuple[list[Workload], dict[FR, int]]:
    """:func:`on` and :func:`on_total` together, kept as they are."""
    key = ("with total", frozenset(frs))
    out = cq.on_cache.get(key)
    if out is None:
        out = cq.on_cache[key] = (on(cq, frs), on_total(cq, frs))
    return out


def borrowers(cq: ClusterQueue, frs: set[FR]) -> list[ClusterQueue]:
    """The other queues of the cohort above nominal on any of ``frs`` (cqIsBorrowing), by name. The
    cohort keeps the list (with ``cq``) until a queue starts or stops borrowing (resource_node.add_usage)."""
    co = cq.cohort
    key = frozenset(frs)
    every = co.borrowers_cache.get(key)
    if every is None:
        found: dict[str, ClusterQueue] = {}
        for fr in frs:
            for other in co.borrowers.get(fr, ()):
                found[other.name] = other
        every = co.borrowers_cache[key] = [found[n] for n in sorted(found)]
    return [q for q in every if q is not cq]


def workload_fits(cq: ClusterQueue, usage: dict[FR, int], allow_borrowing: bool) -> bool:
    """preemption.workloadFits: for each (flavor, resource), not borrowing_with (unless allowed) and
    within :func:`.resource_node.available`, read as :func:`~.resource_node.available_quota` of the queue's fixed
    limits (the preemption searches ask it after every candidate they take)."""
    used_of = cq.usage
    co = cq.cohort
    for fr, v in usage.items():
        nominal, lq, bl, _most, subtree = cq.limits.get(fr) or limits(cq, fr)
        used = used_of[fr]
        if not allow_borrowing and nominal < used + v:
            return False
        if v > available_quota(nominal, lq, bl, subtree, used, None if co is None else co.usage[fr]):
            return False
    return True


def fill_back(cq: ClusterQueue, usage: dict[FR, int], targets: list, borrow: bool,
              add: Callable[[Workload], None] = add_workload,
              remove: Callable[[Workload], None] = remove_workload) -> list:
    """fillBackWorkloads: give back every victim the preemptor can do without, newest choice kept.
    ``add``/``remove`` are how the targets were taken out (and are given back)."""
    for i in range(len(targets) - 2, -1, -1):
        add(targets[i][0])
        if workload_fits(cq, usage, borrow):
            targets[i] = targets[-1]
            targets.pop()
        else:
            remove(targets[i][0])
    return targets
