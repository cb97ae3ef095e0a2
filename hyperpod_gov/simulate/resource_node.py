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

from typing import Iterable, Optional

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
        if u > (nominal or 0) and fr not in cq.borrowing:
            cq.borrowing.add(fr)
            co.borrowers[fr].add(cq)
            co.borrower_commits[fr] += cq.commits
            co.borrowers_changes[fr] += 1
            co.borrowers_cache.clear()


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
        if u <= (nominal or 0) and fr in cq.borrowing:
            cq.borrowing.discard(fr)
            co.borrowers[fr].discard(cq)
            co.borrower_commits[fr] -= cq.commits
            co.borrowers_changes[fr] += 1
            co.borrowers_cache.clear()


def _over(cq: ClusterQueue, fr: FR, before: int, after: int) -> None:
    """The queue's usage above nominal on ``fr`` goes from ``before`` to ``after``."""
    cq.over_r[fr[1]] += after - before
    if after > 0:
        cq.over.add(fr)
    else:
        cq.over.discard(fr)


def limits(cq: ClusterQueue, fr: FR) -> tuple[int, int, Optional[int], int, int]:
    """What the arithmetic below reads of ``fr`` that is fixed once the cohort is built: (nominal quota,
    local quota, borrowing limit, :func:`potential`, the cohort's SubtreeQuota), kept on the queue."""
    lim = cq.limits.get(fr)
    if lim is None:
        nominal = cq.nominal.get(fr, 0)
        lq = cq.lq.get(fr, 0)
        bl = cq.bl.get(fr)
        co = cq.cohort
        subtree = co.subtree.get(fr, 0) if co is not None else 0
        lim = cq.limits[fr] = (nominal, lq, bl, potential(cq, fr), subtree)
    return lim


def available_quota(nominal: int, lq: int, bl: Optional[int], subtree: int, used: int,
                    cohort_used: Optional[int]) -> int:
    """Kueue's available() for a queue (resource_node.go), clamped at 0 as ClusterQueueSnapshot.Available does:
    its unused local quota plus what the cohort may still lend it, capped by its borrowing limit. The one place
    the formula is written; :func:`available`, ``flavorassigner.quota_check`` and
    ``preemption.common.workload_fits`` call it.

    ``nominal``, ``lq`` (local quota), ``bl`` (borrowing limit) and ``subtree`` (the cohort's SubtreeQuota) are
    the queue's fixed :func:`limits`; ``used`` its usage of the resource, ``cohort_used`` the cohort's usage of
    what the members lend, None when the queue is in no cohort (the root: its nominal quota minus its usage).
    """
    if cohort_used is None:
        free = nominal - used
    else:
        parent = subtree - cohort_used
        if bl is not None:
            # What the queue may still borrow: its lendable part unused, plus the borrowing limit.
            capped = nominal - lq - (used - lq if used > lq else 0) + bl
            if capped < parent:
                parent = capped
        free = (lq - used if lq > used else 0) + parent
    return free if free > 0 else 0


def available(cq: ClusterQueue, fr: FR, delta: int = 0) -> int:
    """ClusterQueueSnapshot.Available / available(): unused quota, local plus what the cohort may lend.

    ``delta`` evaluates it as if the queue used ``delta`` more (less, if negative) of ``fr``.
    """
    now = cq.usage[fr]
    used = now + delta
    co = cq.cohort
    if co is None:
        return available_quota(cq.nominal.get(fr, 0), 0, None, 0, used, None)
    cohort_used = co.usage[fr]
    if delta:  # the cohort holds max(0, usage - localQuota) of each member
        lq = cq.lq.get(fr, 0)
        cohort_used += (used - lq if used > lq else 0) - (now - lq if now > lq else 0)
    return available_at(cq, fr, used, cohort_used)


def available_at(cq: ClusterQueue, fr: FR, used: int, cohort_used: int) -> int:
    """:func:`available` of a queue in a cohort, had the queue used ``used`` of ``fr`` and the cohort
    ``cohort_used`` (its usage of what the members lend)."""
    nominal, lq, bl, _most, subtree = cq.limits.get(fr) or limits(cq, fr)
    return available_quota(nominal, lq, bl, subtree, used, cohort_used)


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
    usage, nominal = cq.usage, cq.nominal
    for fr in frs:
        if usage[fr] > nominal.get(fr, 0):
            return False
    return True


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


def take_out(wl: Workload) -> None:
    """The workload's usage taken out of its queue and the cohort, and nothing else: what a preemption
    search tries (classic preemption, scheduler.fits) reads only these. The bookkeeping derived from the
    usage (the amounts above nominal, the cohort's borrowers, the version keying the cached share) is left
    as it is, so every ``take_out`` must be undone by ``put_back`` before anything else reads the queue."""
    cq = wl.cq
    usage = cq.usage
    co = cq.cohort
    lq = cq.lq
    for fr, v in wl.usage.items():
        before = usage[fr]
        usage[fr] = before - v
        if co is not None:
            stored_in_parent = before - lq.get(fr, 0)
            if stored_in_parent > 0:
                co.usage[fr] -= v if v < stored_in_parent else stored_in_parent


def put_back(wl: Workload) -> None:
    """Undo :func:`take_out` (the usage arithmetic of :func:`add_usage`)."""
    cq = wl.cq
    usage = cq.usage
    co = cq.cohort
    lq = cq.lq
    for fr, v in wl.usage.items():
        before = usage[fr]
        usage[fr] = before + v
        if co is not None:
            q = lq.get(fr, 0)
            local = q - before if q > before else 0
            if v > local:
                co.usage[fr] += v - local
