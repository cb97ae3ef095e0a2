"""Fair-sharing preemption: take from the queue with the highest share while the strategies allow it.

Mirrors ``fairPreemptions`` / ``runFirstFsStrategy`` / ``runSecondFsStrategy`` /
``workloadFitsForFairSharing`` of ``pkg/scheduler/preemption/preemption.go`` and
``pkg/scheduler/preemption/fairsharing/ordering.go`` (TargetClusterQueueOrdering), ``fairsharing/strategy.go``
(LessThanOrEqualToFinalShare, LessThanInitialShare) and ``fairsharing/target.go`` of kubernetes-sigs/kueue
v0.19.2, for a flat cohort.
"""

from __future__ import annotations

import heapq
import math
from typing import Optional

from ..model import FairSharingStrategy
from ..cache import ClusterQueue, Workload
from ..fair_sharing import ShareAfterRemoval, compare_drs, drs
from ..resource_node import (
    add_usage,
    add_workload,
    available,
    available_at,
    borrowing_with,
    remove_usage,
    remove_workload,
)
from ..results import FR
from .common import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
    borrowers,
    candidate_key,
    fill_back,
    on,
    on_with_total,
    satisfies_policy,
)


def fair_preemptions(wl: Workload, frs: set[FR], usage: dict[FR, int],
                     strategies: tuple[FairSharingStrategy, ...],
                     shares_read: Optional[list] = None) -> list[tuple[Workload, str]]:
    """Preemptor.fairPreemptions with runFirstFsStrategy / runSecondFsStrategy (flat cohort).

    When the strategies run (they read the candidates' queues' dominant shares, so their whole usage),
    True is appended to ``shares_read``; a search that ends before them reads those queues only on
    ``frs``' flavors."""
    cq = wl.cq
    p = cq.d.preemption
    # The candidates in CandidatesOrdering, grouped by queue as the target ordering takes them: on() keeps
    # each queue's in that order already.
    by_cq: dict[str, list[Workload]] = {}
    # Per queue, the candidates' usage summed (what taking them all out would free).
    freed: list[tuple[ClusterQueue, dict[FR, int]]] = []
    if p.within_cluster_queue != "Never":
        own, total = _allowed(wl, cq, frs, p.within_cluster_queue)
        if own:
            by_cq[cq.name] = own
            freed.append((cq, total))
    if cq.cohort is not None and p.reclaim_within_cohort != "Never":
        for other in borrowers(cq, frs):
            if p.reclaim_within_cohort != "Any":
                users, total = _allowed(wl, other, frs, p.reclaim_within_cohort)
            else:
                users, total = on_with_total(other, frs)
            if users:
                by_cq[other.name] = users
                freed.append((other, total))
    if not by_cq or not _fits_without_all(cq, usage, freed):
        return []
    if shares_read is not None:
        shares_read.append(True)
    by_cq = {name: list(users) for name, users in by_cq.items()}  # the strategies pop them
    for fr, v in usage.items():  # SimulateUsageAddition of the preemptor
        add_usage(cq, fr, v)
    fits, targets, retry = fs_first(wl, by_cq, frs, usage, strategies[0])
    if not fits and len(strategies) > 1:
        fits, targets = fs_second(wl, retry, usage, targets)
    for fr, v in usage.items():
        remove_usage(cq, fr, v)
    if not fits:
        for t, _ in targets:
            add_workload(t)
        return []
    targets = fill_back(cq, usage, targets, True)
    for t, _ in targets:
        add_workload(t)
    return targets


def _allowed(wl: Workload, member: ClusterQueue, frs: set[FR], policy: str) -> tuple[list[Workload], dict[FR, int]]:
    """The member's candidates (:func:`.common.on`) that ``policy`` lets ``wl`` preempt, and their usage
    summed. Kept with :func:`.common.on`'s list: the policy reads only the two priorities and creation times."""
    key = ("allowed", frozenset(frs), policy, wl.priority, wl.created if policy == "LowerOrNewerEqualPriority" else None)
    found = member.on_cache.get(key)
    if found is None:
        users = [c for c in on(member, frs) if satisfies_policy(wl, c, policy)]
        found = member.on_cache[key] = (users, _summed(users))
    return found


def _summed(workloads: list[Workload]) -> dict[FR, int]:
    total: dict[FR, int] = {}
    for w in workloads:
        for fr, v in w.usage.items():
            total[fr] = total.get(fr, 0) + v
    return total


def _fits_without_all(cq: ClusterQueue, usage: dict[FR, int],
                      freed: list[tuple[ClusterQueue, dict[FR, int]]]) -> bool:
    """Whether the preemptor would fit with every candidate gone. The strategies only ever take
    candidates, and taking one never makes the preemptor fit less (workloadFitsForFairSharing reads only
    quota usage): if it does not fit with all of them gone, the search finds no targets. Most searches
    of a busy cohort end so; this answers them without running the strategies, and without taking the
    candidates out: ``freed`` holds, per queue, the usage they would leave (what removeUsage subtracts)."""
    co = cq.cohort
    if co is None:
        return all(v <= available(cq, fr, -sum(t.get(fr, 0) for _m, t in freed)) for fr, v in usage.items())
    for fr, v in usage.items():
        used = cq.usage[fr]
        cohort_used = co.usage[fr]
        for member, total in freed:
            t = total.get(fr, 0)
            if t:
                u = member.usage[fr]
                lq = member.lq.get(fr, 0)
                # The cohort holds max(0, usage - localQuota) of each member.
                cohort_used -= (u - lq if u > lq else 0) - (u - t - lq if u - t > lq else 0)
                if member is cq:
                    used -= t
        if v > available_at(cq, fr, used, cohort_used):
            return False
    return True


def fits_fs(cq: ClusterQueue, usage: dict[FR, int]) -> bool:
    """workloadFitsForFairSharing: the preemptor's simulated usage taken out again for the check
    (computed, not applied: the queue's state is left alone)."""
    return all(v <= available(cq, fr, -v) for fr, v in usage.items())


def _group(candidates: list[Workload]) -> dict[str, list[Workload]]:
    """Candidates by queue name, each queue's in the order given."""
    by_cq: dict[str, list[Workload]] = {}
    for c in candidates:
        lst = by_cq.get(c.cq.name)
        if lst is None:
            by_cq[c.cq.name] = [c]
        else:
            lst.append(c)
    return by_cq


def fs_targets(preemptor_cq: ClusterQueue, by_cq: dict[str, list[Workload]]):
    """fairsharing.TargetClusterQueueOrdering.Iter for a flat cohort: the queue with the highest share first.

    ``by_cq`` holds each queue's candidates (none empty) in CandidatesOrdering; the iteration pops them."""
    pruned: set[str] = set()
    key = candidate_key(preemptor_cq)
    queues = {name: lst[0].cq for name, lst in by_cq.items()}

    # nextTarget scans every queue of the cohort for the highest share. Between two calls only the
    # queue that just lost a workload changes, and a pruned queue never comes back (usage only falls),
    # so a heap with lazily refreshed entries picks the same queue.
    heap: list = []

    def entry(member: ClusterQueue) -> Optional[tuple]:
        cands = by_cq.get(member.name)
        cached = member.drs_cache
        d = cached[1] if cached is not None and cached[0] == member.ver else drs(member)
        if (not d.borrowed and member is not preemptor_cq) or not cands:
            pruned.add(member.name)
            return None
        k = d.key
        return ((-k[0], -k[1]), key(cands[0]), member.name, member.ver, len(cands), member)

    def push(member: ClusterQueue) -> None:
        if member.name not in pruned:
            e = entry(member)
            if e is not None:
                heapq.heappush(heap, e)

    if preemptor_cq.cohort is not None:
        # Queues without candidates are pruned by nextTarget on sight and never chosen.
        for name in sorted(queues):
            e = entry(queues[name])
            if e is not None:
                heap.append(e)
        heapq.heapify(heap)

    def next_target() -> Optional[ClusterQueue]:
        while heap:
            *_, ver, n, member = heap[0]
            if member.name in pruned:
                heapq.heappop(heap)
                continue
            if ver != member.ver or n != len(by_cq[member.name]):
                heapq.heappop(heap)
                push(member)
                continue
            return member
        return None

    def iterate():
        if preemptor_cq.cohort is None:
            while preemptor_cq.name not in pruned and by_cq.get(preemptor_cq.name):
                yield preemptor_cq
            return
        while True:
            target = next_target()
            if target is None:
                return
            yield target

    return by_cq, pruned, iterate()


def fs_first(wl: Workload, by_cq: dict[str, list[Workload]], frs: set[FR], usage: dict[FR, int],
             strategy: FairSharingStrategy):
    """runFirstFsStrategy: (fits, targets so far, candidates to retry with the second strategy)."""
    cq = wl.cq
    by_cq, _pruned, it = fs_targets(cq, by_cq)
    targets: list[tuple[Workload, str]] = []
    retry: list[Workload] = []
    preemptor_within_nominal = not any(borrowing_with(cq, fr, 0) for fr in frs)
    for target in it:
        queue = by_cq[target.name]
        if target is cq or preemptor_within_nominal:
            cand = queue.pop(0)
            remove_workload(cand)
            targets.append((cand, IN_CLUSTER_QUEUE if target is cq else IN_COHORT_RECLAMATION))
            if fits_fs(cq, usage):
                return True, targets, []
            continue
        preemptor_new, target_old = drs(cq), drs(target)
        if preemptor_new.share() == math.inf and target_old.share() != math.inf:
            retry += queue
            queue.clear()
            continue
        final_share = strategy == "LessThanOrEqualToFinalShare"
        if not final_share or target_old.key < preemptor_new.key:
            # LessThanInitialShare does not look at the candidate; and taking a workload out never raises
            # a share, so below the preemptor's new share no candidate of this queue can pass either.
            if preemptor_new.key < target_old.key:
                cand = queue.pop(0)
                remove_workload(cand)
                targets.append((cand, IN_COHORT_FAIR_SHARING))
                if fits_fs(cq, usage):
                    return True, targets, []
                continue
            retry += queue
            queue.clear()
            if not by_cq.get(cq.name):
                # The preemptor's share only falls when its own workloads go, and it has none left to
                # offer; every queue still to come has a share no higher than this one: all fail too.
                for name in sorted(by_cq):
                    rest = by_cq[name]
                    # Queues already pruned, or not borrowing (nextTarget would prune them), are never visited.
                    if rest and name not in _pruned and drs(rest[0].cq).borrowed:
                        retry += rest
                        by_cq[name] = []
                return False, targets, retry
            continue
        share_after = ShareAfterRemoval(target)
        while queue:
            cand = queue.pop(0)
            if preemptor_new.key <= share_after.key(cand):  # ComputeTargetShareAfterRemoval, strategy
                remove_workload(cand)
                targets.append((cand, IN_COHORT_FAIR_SHARING))
                if fits_fs(cq, usage):
                    return True, targets, []
                break
            retry.append(cand)
    return False, targets, retry


def fs_second(wl: Workload, retry: list[Workload], usage: dict[FR, int], targets: list):
    """runSecondFsStrategy over what the first strategy left: (fits, targets)."""
    cq = wl.cq
    by_cq, pruned, it = fs_targets(cq, _group(retry))
    for target in it:
        passed = compare_drs(drs(cq), drs(target)) < 0  # LessThanInitialShare, as Kueue hard-codes it
        if not passed:
            # Queues come highest share first and the preemptor's share is fixed here: none will pass.
            return False, targets
        cand = by_cq[target.name].pop(0)
        if passed:
            remove_workload(cand)
            targets.append((cand, IN_COHORT_FAIR_SHARING))
            if fits_fs(cq, usage):
                return True, targets
        pruned.add(target.name)
    return False, targets
