"""Quota arithmetic of the resource tree (a flat cohort: queues under one cohort node).

Mirrors ``pkg/cache/scheduler/resource_node.go`` (localQuota, addUsage/removeUsage, available,
potentialAvailable), ``clusterqueue_snapshot.go`` (Available, PotentialAvailable, BorrowingWith,
IsWithinNominalInResources) and ``pkg/scheduler/preemption/classical/hierarchical_preemption.go``
(FindHeightOfLowestSubtreeThatFits) of kubernetes-sigs/kueue v0.19.2. Usage is kept incrementally: a queue's
usage and its cohort's change only when a workload is admitted, evicted or finishes (or, within one cycle,
when a head reserves capacity), exactly as ``addUsage``/``removeUsage`` keep them. Amounts are whole numbers
in a resource's base unit (``pkg/resources``).
"""

from __future__ import annotations

from typing import Iterable

from .cache import ClusterQueue, Workload
from .results import FR


def local_available(cq: ClusterQueue, fr: FR) -> int:
    """LocalAvailable."""
    return max(0, cq.lq.get(fr, 0) - cq.usage[fr])


def add_usage(cq: ClusterQueue, fr: FR, v: int) -> None:
    """addUsage: the part beyond the queue's local quota is stored in the cohort."""
    usage = cq.usage
    before = usage[fr]
    lq = cq.lq.get(fr, 0)
    local = lq - before if lq > before else 0  # LocalAvailable
    u = usage[fr] = before + v
    cq.ver += 1
    nominal = cq.nominal.get(fr)
    if nominal is not None and (u > nominal or before > nominal):
        _over(cq, fr, before - nominal if before > nominal else 0, u - nominal if u > nominal else 0)
    co = cq.cohort
    if co is not None:
        if v > local:
            co.usage[fr] += v - local
        if u > (nominal or 0):
            co.borrowers[fr].add(cq)


def remove_usage(cq: ClusterQueue, fr: FR, v: int) -> None:
    """removeUsage."""
    usage = cq.usage
    before = usage[fr]
    stored_in_parent = before - cq.lq.get(fr, 0)
    u = usage[fr] = before - v
    cq.ver += 1
    nominal = cq.nominal.get(fr)
    if nominal is not None and (u > nominal or before > nominal):
        _over(cq, fr, before - nominal if before > nominal else 0, u - nominal if u > nominal else 0)
    co = cq.cohort
    if co is not None:
        if stored_in_parent > 0:
            co.usage[fr] -= min(v, stored_in_parent)
        if u <= (nominal or 0):
            co.borrowers[fr].discard(cq)


def _over(cq: ClusterQueue, fr: FR, before: int, after: int) -> None:
    """The queue's usage above nominal on ``fr`` goes from ``before`` to ``after``."""
    cq.over_r[fr[1]] += after - before
    if after > 0:
        cq.over.add(fr)
    else:
        cq.over.discard(fr)


def available(cq: ClusterQueue, fr: FR, delta: int = 0) -> int:
    """ClusterQueueSnapshot.Available / available(): unused quota, local plus what the cohort may lend.

    ``delta`` evaluates it as if the queue used ``delta`` more (less, if negative) of ``fr``.
    """
    nominal = cq.nominal.get(fr, 0)
    used = cq.usage[fr] + delta
    if cq.cohort is None:
        return max(0, nominal - used)
    co = cq.cohort
    lq = cq.lq.get(fr, 0)
    cohort_used = co.usage[fr]
    if delta:  # the cohort holds max(0, usage - localQuota) of each member
        cohort_used += max(0, used - lq) - max(0, cq.usage[fr] - lq)
    parent = co.subtree[fr] - cohort_used
    bl = cq.bl.get(fr)
    if bl is not None:
        stored = nominal - lq
        used_in_parent = max(0, used - lq)
        parent = min(stored - used_in_parent + bl, parent)
    return max(0, max(0, lq - used) + parent)


def potential(cq: ClusterQueue, fr: FR) -> int:
    """PotentialAvailable / potentialAvailable(): the largest request the queue could ever hold."""
    nominal = cq.nominal.get(fr, 0)
    if cq.cohort is None:
        return nominal
    avail = cq.lq.get(fr, 0) + cq.cohort.subtree[fr]
    bl = cq.bl.get(fr)
    if bl is not None:
        avail = min(nominal + bl, avail)
    return avail


def borrowing_with(cq: ClusterQueue, fr: FR, v: int) -> bool:
    """ClusterQueueSnapshot.BorrowingWith."""
    return cq.nominal.get(fr, 0) < cq.usage[fr] + v


def within_nominal(cq: ClusterQueue, frs: Iterable[FR]) -> bool:
    """IsWithinNominalInResources."""
    return all(cq.usage[fr] <= cq.nominal.get(fr, 0) for fr in frs)


def lowest_subtree(cq: ClusterQueue, fr: FR, v: int) -> tuple[int, bool]:
    """classical.FindHeightOfLowestSubtreeThatFits for a flat cohort: (borrowing level, may reclaim in hierarchy)."""
    if cq.cohort is None or not borrowing_with(cq, fr, v):
        return 0, cq.cohort is not None
    return 1, False


def add_workload(wl: Workload) -> None:
    """The workload's usage added to its queue (and the cohort): ClusterQueueSnapshot.AddUsage."""
    for fr, v in wl.usage.items():
        add_usage(wl.cq, fr, v)


def remove_workload(wl: Workload) -> None:
    """The workload's usage taken out: ClusterQueueSnapshot.RemoveUsage (a preemption simulated or done)."""
    for fr, v in wl.usage.items():
        remove_usage(wl.cq, fr, v)
