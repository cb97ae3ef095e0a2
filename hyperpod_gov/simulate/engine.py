"""A deterministic model of Kueue v0.19 admission in flat cohorts.

Each part names the Kueue function (tag v0.19.2) it mirrors. Quota state is
kept incrementally: a ClusterQueue's usage and its cohort's usage change only
when a workload is admitted, evicted or finishes (or, within one cycle, when
a head reserves capacity), exactly as ``addUsage``/``removeUsage`` in
``pkg/cache/scheduler/resource_node.go`` keep them.

Feature gates are at their v0.19.2 defaults: PrioritySortingWithinCohort,
FlavorFungibility, FlavorFungibilityPreserveScanProgress,
FairSharingPreemptWithinNominal, FairSharingPrioritizeNonBorrowing and
SchedulingEquivalenceHashing on; PrioritizePreemptorWorkloads,
RecomputeAssignmentUponPreemptionTargetsOverlap and
SchedulerTimestampPreemptionBuffer off. Partial admission, TAS, admission
checks, waitForPodsReady and hierarchical cohorts are out of scope.

Speed-ups never change an outcome: each one (memo of a nomination while no
admission or eviction happened, heap instead of a scan for the fair-sharing
target queue, shares computed instead of simulated) was checked against the
straightforward version on random scenarios.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from .model import Event, QueueDef, Scenario, WorkloadDef
from .quantities import show_quantity

FR = tuple[str, str]  # (flavor, resource)

# Granular modes of pkg/scheduler/flavorassigner (preemptionMode), worst to best.
NO_FIT, NO_CANDIDATES, PREEMPT, RECLAIM, FIT = range(5)
_MODE_NAMES = {NO_FIT: "NoFit", NO_CANDIDATES: "Preempt", PREEMPT: "Preempt", RECLAIM: "Preempt", FIT: "Fit"}

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"

# Requeue reasons of pkg/cache/queue.
_NO_FIT = "NoFit"
_NO_CANDIDATES = "PreemptionNoCandidates"
_FAILED_AFTER_NOMINATION = "FailedAfterNomination"
_PENDING_PREEMPTION = "PendingPreemption"

# Preemption variants of pkg/scheduler/preemption/classical/hierarchical_preemption.go.
_WITHIN_CQ, _HIERARCHICAL_RECLAIM, _RECLAIM_WITHOUT_BORROWING, _RECLAIM_WHILE_BORROWING = range(1, 5)
_VARIANT_REASON = {
    _WITHIN_CQ: IN_CLUSTER_QUEUE,
    _HIERARCHICAL_RECLAIM: IN_COHORT_RECLAMATION,
    _RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
    _RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING,
}


@dataclass(frozen=True)
class PreemptionRecord:
    at: float
    cycle: int
    victim: str
    preemptor: str
    reason: str


@dataclass(frozen=True)
class WorkloadResult:
    name: str
    queue: str
    state: str  # admitted | pending | finished
    flavor: Optional[str]
    admitted_at: Optional[float]
    borrowing: bool
    preempted_count: int
    preempting_count: int
    submitted_at: float
    first_admitted_at: Optional[float]
    run_seconds: float  # time it held quota, over all its runs
    pending_reason: str  # why it waits at the end ('' unless pending)
    priority: int
    requests: tuple[tuple[str, int], ...]
    labels: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class QueueResult:
    name: str
    usage: tuple[tuple[FR, int], ...]  # at the end, every (flavor, resource) of the queue
    nominal: tuple[tuple[FR, int], ...]
    weighted_share: int  # Kueue's status.fairSharing.weightedShare
    usage_seconds: tuple[tuple[FR, float], ...]  # integral of usage over time
    borrowed_seconds: tuple[tuple[FR, float], ...]  # integral of usage above nominal over time


@dataclass(frozen=True)
class Result:
    workloads: tuple[WorkloadResult, ...]  # sorted by name
    preemptions: tuple[PreemptionRecord, ...]  # in the order they happened
    queues: tuple[QueueResult, ...]  # sorted by name
    cycles: int
    end: float
    timeline: tuple[str, ...]
    fixed_point: bool  # False if --cycles or the safety cap stopped a time step early


# ---------------------------------------------------------------- state


class _Cohort:
    __slots__ = ("name", "cqs", "subtree", "usage", "lendable", "generation", "borrowers")

    def __init__(self, name: str):
        self.name = name
        self.cqs: list[_CQ] = []
        self.subtree: dict[FR, int] = defaultdict(int)  # SubtreeQuota: what the members lend
        self.usage: dict[FR, int] = defaultdict(int)  # what the members use of it
        self.lendable: dict[str, int] = defaultdict(int)  # per resource name, over all flavors
        self.generation = 0
        self.borrowers: dict[FR, set] = defaultdict(set)  # (flavor, resource) -> queues using more than nominal


class _WL:
    __slots__ = (
        "d", "name", "priority", "created", "requests", "cq", "state", "flavor", "usage", "admitted_at",
        "borrowing", "preempted_count", "preempting_count", "submitted_at", "first_admitted_at", "run_seconds",
        "pending_reason", "token", "finish_token", "last_tried", "last_cycle", "last_generation", "where", "hash",
        "cand_key",
    )

    def __init__(self, d: WorkloadDef, cq: "_CQ", submitted_at: float):
        self.d = d
        self.name = d.name
        self.priority = d.priority
        self.created = d.created
        self.requests = d.requests
        self.cq = cq
        self.state = "pending"
        self.flavor: Optional[str] = None
        self.usage: dict[FR, int] = {}
        self.admitted_at: Optional[float] = None
        self.borrowing = False
        self.preempted_count = 0
        self.preempting_count = 0
        self.submitted_at = submitted_at
        self.first_admitted_at: Optional[float] = None
        self.run_seconds = 0.0
        self.pending_reason = "not yet considered by a scheduling cycle"
        self.token = 0
        self.finish_token = 0
        self.last_tried: Optional[int] = None  # LastAssignment.LastTriedFlavorIdx (one pod set, one group)
        self.last_cycle = 0
        self.last_generation = 0
        self.where = ""  # active | inadmissible | '' (admitted or finished)
        # workload.computeSchedulingHash: priority, requests and pod spec shape (here: the allowed flavors).
        self.hash = (d.priority, d.requests, d.allowed_flavors)
        self.cand_key: tuple = ()  # CandidatesOrdering after the queue test, set on admission


class _CQ:
    __slots__ = (
        "d", "name", "cohort", "flavors", "nominal", "bl", "ll", "lq", "usage", "weight", "strict",
        "admitted", "heap", "inadmissible", "pw", "covered", "last_t", "usage_s", "borrowed_s", "ver", "drs_cache",
        "quota_list", "bulk", "on_flavor", "on_cache",
    )

    def __init__(self, d: QueueDef, cohort: Optional[_Cohort]):
        self.d = d
        self.name = d.name
        self.cohort = cohort
        self.flavors = [f.name for f in d.flavors]
        self.covered = set(d.covered_resources)
        self.nominal: dict[FR, int] = {}
        self.bl: dict[FR, Optional[int]] = {}
        self.ll: dict[FR, Optional[int]] = {}
        self.lq: dict[FR, int] = {}
        for f in d.flavors:
            for r, q in f.resources:
                fr = (f.name, r)
                self.nominal[fr] = q.nominal
                self.bl[fr] = q.borrowing_limit
                self.ll[fr] = q.lending_limit
                # resourceNode.localQuota: what the queue keeps for itself.
                self.lq[fr] = max(0, q.nominal - q.lending_limit) if q.lending_limit is not None else 0
        self.usage: dict[FR, int] = defaultdict(int)
        self.weight = d.fair_sharing_weight
        self.strict = d.queueing_strategy == "StrictFIFO"
        self.admitted: dict[str, _WL] = {}
        self.heap: list = []
        self.inadmissible: dict[str, _WL] = {}
        self.pw: Optional[_WL] = None  # preemptorWorkload of pkg/cache/queue/cluster_queue.go
        self.last_t = 0.0
        self.usage_s: dict[FR, float] = defaultdict(float)
        self.borrowed_s: dict[FR, float] = defaultdict(float)
        self.ver = 0  # bumped on every usage change: keys the cached dominant resource share
        self.drs_cache: Optional[tuple[int, "_DRS"]] = None
        self.quota_list = [(fr, fr[1], n) for fr, n in self.nominal.items()]
        self.bulk: set = set()  # hashToBulkMoveReason: equivalence classes parked as inadmissible
        self.on_flavor: dict[str, dict[str, "_WL"]] = defaultdict(dict)  # admitted workloads by flavor
        self.on_cache: dict = {}  # frozenset of (flavor, resource) -> its admitted users; emptied on change


# ---------------------------------------------------------------- quota math (resource_node.go)


def _local_available(cq: _CQ, fr: FR) -> int:
    """LocalAvailable."""
    return max(0, cq.lq.get(fr, 0) - cq.usage[fr])


def _add_usage(cq: _CQ, fr: FR, v: int) -> None:
    """addUsage: the part beyond the queue's local quota is stored in the cohort."""
    local = _local_available(cq, fr)
    u = cq.usage[fr] = cq.usage[fr] + v
    cq.ver += 1
    co = cq.cohort
    if co is not None:
        if v > local:
            co.usage[fr] += v - local
        if u > cq.nominal.get(fr, 0):
            co.borrowers[fr].add(cq)


def _remove_usage(cq: _CQ, fr: FR, v: int) -> None:
    """removeUsage."""
    stored_in_parent = cq.usage[fr] - cq.lq.get(fr, 0)
    u = cq.usage[fr] = cq.usage[fr] - v
    cq.ver += 1
    co = cq.cohort
    if co is not None:
        if stored_in_parent > 0:
            co.usage[fr] -= min(v, stored_in_parent)
        if u <= cq.nominal.get(fr, 0):
            co.borrowers[fr].discard(cq)


def _available(cq: _CQ, fr: FR, delta: int = 0) -> int:
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


def _potential(cq: _CQ, fr: FR) -> int:
    """PotentialAvailable / potentialAvailable(): the largest request the queue could ever hold."""
    nominal = cq.nominal.get(fr, 0)
    if cq.cohort is None:
        return nominal
    avail = cq.lq.get(fr, 0) + cq.cohort.subtree[fr]
    bl = cq.bl.get(fr)
    if bl is not None:
        avail = min(nominal + bl, avail)
    return avail


def _borrowing_with(cq: _CQ, fr: FR, v: int) -> bool:
    """ClusterQueueSnapshot.BorrowingWith."""
    return cq.nominal.get(fr, 0) < cq.usage[fr] + v


def _within_nominal(cq: _CQ, frs: Iterable[FR]) -> bool:
    """IsWithinNominalInResources."""
    return all(cq.usage[fr] <= cq.nominal.get(fr, 0) for fr in frs)


def _lowest_subtree(cq: _CQ, fr: FR, v: int) -> tuple[int, bool]:
    """classical.FindHeightOfLowestSubtreeThatFits for a flat cohort: (borrowing level, may reclaim in hierarchy)."""
    if cq.cohort is None or not _borrowing_with(cq, fr, v):
        return 0, cq.cohort is not None
    return 1, False


def _add_wl(wl: _WL) -> None:
    for fr, v in wl.usage.items():
        _add_usage(wl.cq, fr, v)


def _remove_wl(wl: _WL) -> None:
    for fr, v in wl.usage.items():
        _remove_usage(wl.cq, fr, v)


# ---------------------------------------------------------------- fair sharing (fair_sharing.go)


class _DRS:
    __slots__ = ("ratio", "weight", "borrowed", "key")

    def __init__(self, ratio: float, weight: float, borrowed: tuple[FR, ...]):
        self.ratio = ratio
        self.weight = weight
        self.borrowed = borrowed
        # CompareDRS as a sort key: weight-0 borrowers after all others (among them by ratio), else by share.
        if weight == 0 and ratio != 0:
            self.key = (1, ratio)
        else:
            self.key = (0, 0.0 if ratio == 0 else ratio / weight)

    @property
    def borrowing(self) -> bool:
        return bool(self.borrowed)

    def share(self) -> float:
        """PreciseWeightedShare."""
        if self.ratio == 0:
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and self.ratio != 0

    def rounded(self) -> int:
        """roundedWeightedShare: what status.fairSharing.weightedShare shows."""
        if self.zero_weight_borrows():
            return 2**63 - 1
        return int(math.ceil(self.share()))


def _compare_drs(a: _DRS, b: _DRS) -> int:
    """CompareDRS: a queue with weight 0 that borrows sorts after every other."""
    ka, kb = a.key, b.key
    return (ka > kb) - (ka < kb)


def _drs(cq: _CQ, extra: Optional[dict[FR, int]] = None) -> _DRS:
    """dominantResourceShare: the largest borrowed/lendable ratio (x1000) over resource names."""
    if extra is None:
        cached = cq.drs_cache
        if cached is not None and cached[0] == cq.ver:
            return cached[1]
    co = cq.cohort
    if co is None:
        return _DRS(0.0, cq.weight, ())
    borrowing: dict[str, int] = {}
    borrowed: list[FR] = []
    usage = cq.usage
    for fr, r, quota in cq.quota_list:
        amount = usage[fr] - quota
        if extra is not None:
            amount += extra.get(fr, 0)
        if amount > 0:
            borrowing[r] = borrowing.get(r, 0) + amount
            borrowed.append(fr)
    if not borrowing:
        d = _DRS(0.0, cq.weight, ())
    else:
        ratio, dominant = 0.0, ""
        lendable_of = co.lendable
        for r, b in borrowing.items():
            lendable = lendable_of.get(r, 0)
            if lendable > 0:
                x = b * 1000.0 / lendable
                if x > ratio or (x == ratio and r < dominant):
                    ratio, dominant = x, r
        d = _DRS(ratio, cq.weight, tuple(borrowed))
    if extra is None:
        cq.drs_cache = (cq.ver, d)
    return d


class _ShareAfterRemoval:
    """A queue's dominant resource share (as a CompareDRS key) with one of its workloads taken out.

    Equal to ``_drs(cq, {fr: -v})`` but computed from the queue's borrowed amounts once per queue visit:
    only the removed workload's flavor-resources change.
    """

    __slots__ = ("amounts", "base", "lendable", "weight")

    def __init__(self, cq: _CQ):
        self.amounts = {fr: cq.usage[fr] - quota for fr, _r, quota in cq.quota_list}
        self.base: dict[str, int] = {}
        for fr, amount in self.amounts.items():
            if amount > 0:
                self.base[fr[1]] = self.base.get(fr[1], 0) + amount
        self.lendable = cq.cohort.lendable
        self.weight = cq.weight

    def key(self, wl: "_WL") -> tuple:
        borrowed = dict(self.base)
        for fr, v in wl.usage.items():
            amount = self.amounts.get(fr)
            if amount is None:
                continue
            before = amount if amount > 0 else 0
            after = amount - v if amount > v else 0
            if before != after:
                borrowed[fr[1]] = borrowed.get(fr[1], 0) - before + after
        ratio = 0.0
        for r, b in borrowed.items():
            if b > 0:
                lendable = self.lendable.get(r, 0)
                if lendable > 0:
                    x = b * 1000.0 / lendable
                    if x > ratio:
                        ratio = x
        if self.weight == 0 and ratio != 0:
            return (1, ratio)
        return (0, 0.0 if ratio == 0 else ratio / self.weight)


# ---------------------------------------------------------------- assignments


class _Assignment:
    __slots__ = ("flavor", "modes", "borrow", "mode", "tried", "reasons", "usage", "targets", "fungible_mode")

    def __init__(self):
        self.flavor: Optional[str] = None
        self.modes: dict[str, int] = {}  # resource -> granular mode on the chosen flavor
        self.borrow = 0
        self.mode = NO_FIT  # representative granular mode
        self.tried: Optional[int] = None
        self.reasons: list[str] = []
        self.usage: dict[FR, int] = {}
        self.targets: list[tuple[_WL, str]] = []

    @property
    def representative(self) -> str:
        """Assignment.RepresentativeMode: NoFit, Preempt or Fit."""
        return _MODE_NAMES[self.mode] if self.flavor is not None else "NoFit"


def _is_preferred(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """flavorassigner.isPreferred with the default preference (BorrowingOverPreemption)."""
    if a[0] == NO_FIT:
        return False
    if b[0] == NO_FIT:
        return True
    a_nc, b_nc = a[0] == NO_CANDIDATES, b[0] == NO_CANDIDATES
    if a_nc != b_nc:
        return not a_nc
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def _should_try_next(mode: tuple[int, int], cq: _CQ) -> bool:
    """flavorassigner.shouldTryNextFlavor."""
    if mode[0] in (NO_FIT, NO_CANDIDATES):
        return True
    ff = cq.d.flavor_fungibility
    if mode[0] in (PREEMPT, RECLAIM) and ff.when_can_preempt == "TryNextFlavor":
        return True
    return mode[1] != 0 and ff.when_can_borrow == "TryNextFlavor"


def _satisfies_policy(preemptor: _WL, candidate: _WL, policy: str) -> bool:
    """common.SatisfiesPreemptionPolicy (no timestamp buffer)."""
    lower = preemptor.priority > candidate.priority
    if policy == "LowerPriority":
        return lower
    if policy == "LowerOrNewerEqualPriority":
        return lower or (preemptor.priority == candidate.priority and preemptor.created < candidate.created)
    return policy == "Any"


def _uses(wl: _WL, frs: set[FR]) -> bool:
    """classical.WorkloadUsesResources."""
    return any(fr in frs for fr in wl.usage)


# ---------------------------------------------------------------- the engine


class Engine:
    """One simulation run over a scenario. Use :func:`simulate`."""

    def __init__(self, scenario: Scenario, max_cycles: Optional[int] = None):
        self.s = scenario
        self.max_cycles = max_cycles
        self.fair = scenario.fair_sharing
        self.strategies = scenario.preemption_strategies
        self.cohorts: dict[str, _Cohort] = {}
        self.cqs: dict[str, _CQ] = {}
        for q in sorted(scenario.queues, key=lambda q: q.name):
            co = None
            if q.cohort:
                co = self.cohorts.setdefault(q.cohort, _Cohort(q.cohort))
            cq = _CQ(q, co)
            self.cqs[q.name] = cq
            if co is not None:
                co.cqs.append(cq)
                for fr, nominal in cq.nominal.items():
                    lends = nominal - cq.lq[fr]  # accumulateFromChild
                    co.subtree[fr] += lends
                    co.lendable[fr[1]] += lends
        self.cq_order = sorted(self.cqs.values(), key=lambda c: c.name)
        self.wls: dict[str, _WL] = {}
        self.now = 0.0
        self.cycle = 0
        self.preemptions: list[PreemptionRecord] = []
        self.timeline: list[str] = []
        self.finishes: list[tuple[float, str, int]] = []  # (time, name, token)
        self.fixed_point = True
        self.seq = 0
        self.epoch = 0  # bumped on every admission and release: the committed state nominations read
        self.memo_epoch = -1
        self.memo: dict = {}

    # ------------------------------------------------------------ queues (pkg/cache/queue)

    def _park(self, wl: _WL) -> None:
        wl.where = "inadmissible"
        wl.cq.inadmissible[wl.name] = wl

    def _add_pending(self, wl: _WL) -> None:
        """ClusterQueue.PushOrUpdate: a workload of an equivalence class already parked is parked too."""
        if not wl.cq.strict and wl.hash in wl.cq.bulk:
            self._park(wl)
            wl.pending_reason = "an equivalent workload (same priority and requests) could not be admitted"
        else:
            self._push(wl)

    def _bulk_park(self, cq: _CQ, head: _WL) -> None:
        """handleInadmissibleHash: park every equivalent workload of a BestEffortFIFO queue with the head."""
        if cq.strict:
            return
        cq.bulk.add(head.hash)
        for *_, token, w in cq.heap:
            if w.token == token and w.where == "active" and w.hash == head.hash and w is not head:
                self._park(w)
                w.pending_reason = f"equivalent to {head.name}, which could not be admitted ({head.pending_reason})"

    def _push(self, wl: _WL) -> None:
        """Into the active heap: priority first, then the queue-order timestamp, then the name."""
        self.seq += 1
        wl.token = self.seq
        wl.where = "active"
        heapq.heappush(wl.cq.heap, (-wl.priority, wl.created, wl.name, wl.token, wl))

    def _pop_head(self, cq: _CQ) -> Optional[_WL]:
        """ClusterQueue.Pop; a BestEffortFIFO queue's sticky preemptor comes first."""
        pw = cq.pw
        if pw is not None and not cq.strict and pw.where == "active" and pw.state == "pending":
            pw.where = ""
            return pw
        while cq.heap:
            *_, token, wl = heapq.heappop(cq.heap)
            if wl.token == token and wl.where == "active":
                wl.where = ""
                return wl
        return None

    def _requeue_inadmissible(self, cq: _CQ) -> None:
        """QueueInadmissibleWorkloads for the queue's cohort (or the queue alone)."""
        members = cq.cohort.cqs if cq.cohort is not None else [cq]
        for member in members:
            member.bulk.clear()
            for name in sorted(member.inadmissible):
                self._push(member.inadmissible[name])
            member.inadmissible.clear()

    def _submit(self, d: WorkloadDef, at: float) -> None:
        cq = self.cqs[d.queue]
        wl = _WL(d, cq, at)
        self.wls[d.name] = wl
        self._add_pending(wl)

    # ------------------------------------------------------------ bookkeeping

    def _integrate(self, cq: _CQ) -> None:
        dt = self.now - cq.last_t
        if dt > 0:
            for fr, u in cq.usage.items():
                if u:
                    cq.usage_s[fr] += u * dt
                    over = u - cq.nominal.get(fr, 0)
                    if over > 0:
                        cq.borrowed_s[fr] += over * dt
        cq.last_t = self.now

    def _admit(self, wl: _WL, a: _Assignment, initial: bool = False) -> None:
        """Scheduler.admit / assumeWorkload: the workload holds its quota from now on."""
        cq = wl.cq
        self._integrate(cq)
        self.epoch += 1
        wl.flavor = a.flavor
        wl.usage = dict(a.usage)
        _add_wl(wl)
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
        if wl.d.duration is not None:
            self.seq += 1
            wl.finish_token = self.seq
            heapq.heappush(self.finishes, (self.now + wl.d.duration, wl.name, self.seq))
        when = f"t={_t(self.now)}: {wl.name} already admitted" if initial else \
            f"t={_t(self.now)} cycle {self.cycle}: admitted {wl.name}"
        self.timeline.append(f"{when} in {cq.name} on {a.flavor}" + (" (borrowing)" if wl.borrowing else ""))

    def _release(self, wl: _WL) -> None:
        cq = wl.cq
        self._integrate(cq)
        self.epoch += 1
        _remove_wl(wl)
        del cq.admitted[wl.name]
        del cq.on_flavor[wl.flavor][wl.name]
        cq.on_cache.clear()
        wl.run_seconds += self.now - (wl.admitted_at or 0.0)
        wl.finish_token = 0
        if cq.cohort is not None:
            cq.cohort.generation += 1

    def _finish(self, wl: _WL) -> None:
        if wl.state == "admitted":
            self._release(wl)
            self._requeue_inadmissible(wl.cq)
        elif wl.state == "pending":
            wl.cq.inadmissible.pop(wl.name, None)
            wl.where = ""
            if wl.cq.pw is wl:
                wl.cq.pw = None
        wl.state = "finished"
        wl.pending_reason = ""
        self.timeline.append(f"t={_t(self.now)}: {wl.name} finished")

    def _evict(self, wl: _WL) -> None:
        """The eviction completes: quota released, the workload pending again with its original timestamp."""
        self._release(wl)
        wl.state = "pending"
        wl.flavor = None
        wl.usage = {}
        wl.admitted_at = None
        wl.borrowing = False
        wl.preempted_count += 1
        wl.last_tried = None
        wl.pending_reason = "preempted; waiting to be admitted again"
        self._push(wl)

    # ------------------------------------------------------------ flavor assignment (flavorassigner.go)

    def _assign(self, wl: _WL) -> _Assignment:
        """FlavorAssigner.assignFlavors + findFlavorForPodSets for one pod set and one resource group."""
        cq = wl.cq
        a = _Assignment()
        missing = [r for r, _ in wl.requests if r not in cq.covered]
        if missing:
            a.reasons.append(f"resource {missing[0]} unavailable in ClusterQueue")
            return a
        best: Optional[tuple[str, dict[str, int], tuple[int, int]]] = None
        best_mode = (NO_FIT, 1 << 30)
        start = 0
        last = wl.last_tried
        if last is not None and not self._last_assignment_outdated(wl):
            start = last + 1
        attempted = -1
        for idx in range(start, len(cq.flavors)):
            attempted = idx
            fname = cq.flavors[idx]
            allowed = wl.d.allowed_flavors
            if allowed is not None and fname not in allowed:
                a.reasons.append(f"flavor {fname} doesn't match node affinity")
                continue
            rep = (FIT, 0)
            modes: dict[str, int] = {}
            # fitsResourceQuota per resource. The quota checks are cheap and do not depend on each other, so
            # they all run first; a NoFit anywhere makes the flavor NoFit without simulating any preemption.
            to_simulate = []
            for r, val in wl.requests:
                fr = (fname, r)
                mode, borrow, reason = self._quota_check(wl, fr, val)
                if reason:
                    a.reasons.append(reason)
                if mode is None:
                    to_simulate.append((r, fr, val, borrow))
                    continue
                m = (mode, borrow)
                if _is_preferred(rep, m):
                    rep = m
                if rep[0] == NO_FIT:
                    break
                modes[r] = mode
            if rep[0] != NO_FIT:
                for r, fr, val, borrow_now in to_simulate:
                    if rep[0] == NO_CANDIDATES and borrow_now <= rep[1]:
                        # Whatever the simulation finds, (NoCandidates, rep borrow) stays the worst mode.
                        modes[r] = NO_CANDIDATES
                        continue
                    m = self._simulate_preemption(wl, fr, val)
                    if _is_preferred(rep, m):
                        rep = m
                    modes[r] = m[0]
            if not _should_try_next(rep, cq):
                best, best_mode = (fname, modes, rep), rep
                break
            if _is_preferred(rep, best_mode):
                best, best_mode = (fname, modes, rep), rep
        if best is None:
            return a
        a.flavor, a.modes, rep = best
        a.mode = rep[0]
        a.borrow = rep[1]
        a.tried = None if attempted == len(cq.flavors) - 1 else attempted
        a.usage = {(a.flavor, r): v for r, v in wl.requests}
        return a

    def _last_assignment_outdated(self, wl: _WL) -> bool:
        """lastAssignmentOutdated with FlavorFungibilityPreserveScanProgress on."""
        if self.cycle - wl.last_cycle <= 1:
            return False
        gen = wl.cq.cohort.generation if wl.cq.cohort is not None else 0
        return gen > wl.last_generation

    def _quota_check(self, wl: _WL, fr: FR, val: int) -> tuple[Optional[int], int, str]:
        """FlavorAssigner.fitsResourceQuota up to the preemption oracle: mode None means 'simulate preemption'
        (the borrow returned is then the level without preemption, which a NoCandidates result keeps)."""
        cq = wl.cq
        if val > _potential(cq, fr):
            return NO_FIT, 0, (
                f"insufficient quota for {fr[1]} in flavor {fr[0]}, request {show_quantity(fr[1], val)} > "
                f"maximum capacity {show_quantity(fr[1], _potential(cq, fr))}"
            )
        borrow, may_reclaim = _lowest_subtree(cq, fr, val)
        available = _available(cq, fr)
        if val <= available:
            return FIT, borrow, ""
        reason = (f"insufficient unused quota for {fr[1]} in flavor {fr[0]}, "
                  f"{show_quantity(fr[1], val - available)} more needed")
        if cq.nominal.get(fr, 0) >= val or may_reclaim or self._can_preempt_while_borrowing(cq):
            return None, borrow, reason
        return NO_FIT, borrow, reason

    def _simulate_preemption(self, wl: _WL, fr: FR, val: int) -> tuple[int, int]:
        """PreemptionOracle.SimulatePreemption: (mode, borrowing level after the preemptions)."""
        cq = wl.cq
        targets = self._get_targets(wl, {fr}, {fr: val})
        if not targets:
            return NO_CANDIDATES, _lowest_subtree(cq, fr, val)[0]
        victims = [t for t, _ in targets]
        for t in victims:
            _remove_wl(t)
        after = _lowest_subtree(cq, fr, val)[0]
        for t in victims:
            _add_wl(t)
        same = any(t.cq is cq for t in victims)
        return (PREEMPT if same else RECLAIM), after

    def _can_preempt_while_borrowing(self, cq: _CQ) -> bool:
        p = cq.d.preemption
        return p.borrow_within_cohort != "Never" or (self.fair and p.reclaim_within_cohort != "Never")

    # ------------------------------------------------------------ preemption (pkg/scheduler/preemption)

    def _candidate_key(self, preemptor_cq: _CQ) -> Callable[[_WL], tuple]:
        """common.CandidatesOrdering: other queues first, lower priority, most recently admitted; then by name."""
        return lambda w: (w.cq is preemptor_cq, w.cand_key)

    def _get_targets(self, wl: _WL, frs: set[FR], usage: dict[FR, int]) -> list[tuple[_WL, str]]:
        """Preemptor.GetTargets."""
        if self.fair:
            return self._fair_preemptions(wl, frs, usage)
        return self._classical_preemptions(wl, frs, usage)

    @staticmethod
    def _on(cq: _CQ, frs: set[FR]) -> list[_WL]:
        """The queue's admitted workloads that use any of ``frs`` (WorkloadUsesResources), by name."""
        key = frozenset(frs)
        out = cq.on_cache.get(key)
        if out is None:
            out = []
            for f in sorted({f for f, _ in frs}):
                out += [w for w in cq.on_flavor.get(f, {}).values() if _uses(w, frs)]
            cq.on_cache[key] = out
        return out

    @staticmethod
    def _borrowers(cq: _CQ, frs: set[FR]) -> list[_CQ]:
        """The other queues of the cohort above nominal on any of ``frs`` (cqIsBorrowing), by name."""
        found: dict[str, _CQ] = {}
        for fr in frs:
            for other in cq.cohort.borrowers.get(fr, ()):
                if other is not cq:
                    found[other.name] = other
        return [found[n] for n in sorted(found)]

    def _workload_fits(self, cq: _CQ, usage: dict[FR, int], allow_borrowing: bool) -> bool:
        """preemption.workloadFits."""
        for fr, v in usage.items():
            if not allow_borrowing and _borrowing_with(cq, fr, v):
                return False
            if v > _available(cq, fr):
                return False
        return True

    def _classify(self, wl: _WL, cand: _WL, frs: set[FR], advantage: bool) -> int:
        """classical.classifyPreemptionVariant (0 = Never)."""
        cq = wl.cq
        p = cq.d.preemption
        if not _uses(cand, frs):
            return 0
        policy = p.within_cluster_queue if cand.cq is cq else p.reclaim_within_cohort
        if not _satisfies_policy(wl, cand, policy):
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

    def _classical_preemptions(self, wl: _WL, frs: set[FR], usage: dict[FR, int]) -> list[tuple[_WL, str]]:
        """Preemptor.classicalPreemptions with classical.NewCandidateIterator (flat cohort)."""
        cq = wl.cq
        p = cq.d.preemption
        key = self._candidate_key(cq)
        same: list[tuple[_WL, int]] = []
        if p.within_cluster_queue != "Never":
            for cand in self._on(cq, frs):
                v = self._classify(wl, cand, frs, False)
                if v:
                    same.append((cand, v))
        hierarchy: list[tuple[_WL, int]] = []
        priority: list[tuple[_WL, int]] = []
        if cq.cohort is not None and p.reclaim_within_cohort != "Never":
            # QuantitiesFitInQuota on the queue itself.
            advantage = all(cq.usage[fr] + v <= cq.nominal.get(fr, 0) for fr, v in usage.items())
            bucket = hierarchy if advantage else priority
            for other in self._borrowers(cq, frs):
                for cand in self._on(other, frs):
                    v = self._classify(wl, cand, frs, advantage)
                    if v:
                        bucket.append((cand, v))
        for lst in (same, hierarchy, priority):
            lst.sort(key=lambda e: key(e[0]))
        candidates = hierarchy + priority + same
        forbidden = p.borrow_within_cohort == "Never"
        if not hierarchy and not priority or (forbidden and not self._under_nominal(cq, frs)):
            attempts = [True]
        elif forbidden and not hierarchy:
            attempts = [False, True]
        else:
            attempts = [True, False]
        for borrow in attempts:
            targets: list[tuple[_WL, str]] = []
            for cand, variant in candidates:
                if cand.cq is not cq:
                    if borrow and variant == _RECLAIM_WITHOUT_BORROWING:
                        continue
                    if _within_nominal(cand.cq, frs):
                        continue
                _remove_wl(cand)
                targets.append((cand, _VARIANT_REASON[variant]))
                if self._workload_fits(cq, usage, borrow):
                    targets = self._fill_back(cq, usage, targets, borrow)
                    for t, _ in targets:
                        _add_wl(t)
                    return targets
            for t, _ in targets:
                _add_wl(t)
        return []

    @staticmethod
    def _under_nominal(cq: _CQ, frs: set[FR]) -> bool:
        """queueUnderNominalInResourcesNeedingPreemption."""
        return all(cq.nominal.get(fr, 0) > cq.usage[fr] for fr in frs)

    def _fill_back(self, cq: _CQ, usage: dict[FR, int], targets: list, borrow: bool) -> list:
        """fillBackWorkloads: give back every victim the preemptor can do without, newest choice kept."""
        for i in range(len(targets) - 2, -1, -1):
            _add_wl(targets[i][0])
            if self._workload_fits(cq, usage, borrow):
                targets[i] = targets[-1]
                targets.pop()
            else:
                _remove_wl(targets[i][0])
        return targets

    def _fair_preemptions(self, wl: _WL, frs: set[FR], usage: dict[FR, int]) -> list[tuple[_WL, str]]:
        """Preemptor.fairPreemptions with runFirstFsStrategy / runSecondFsStrategy (flat cohort)."""
        cq = wl.cq
        p = cq.d.preemption
        candidates: list[_WL] = []
        if p.within_cluster_queue != "Never":
            candidates += [c for c in self._on(cq, frs) if _satisfies_policy(wl, c, p.within_cluster_queue)]
        if cq.cohort is not None and p.reclaim_within_cohort != "Never":
            for other in self._borrowers(cq, frs):
                on = self._on(other, frs)
                if p.reclaim_within_cohort == "Any":
                    candidates += on
                else:
                    candidates += [c for c in on if _satisfies_policy(wl, c, p.reclaim_within_cohort)]
        if not candidates:
            return []
        candidates.sort(key=self._candidate_key(cq))
        for fr, v in usage.items():  # SimulateUsageAddition of the preemptor
            _add_usage(cq, fr, v)
        fits, targets, retry = self._fs_first(wl, candidates, frs, usage)
        if not fits and len(self.strategies) > 1:
            fits, targets = self._fs_second(wl, retry, usage, targets)
        for fr, v in usage.items():
            _remove_usage(cq, fr, v)
        if not fits:
            for t, _ in targets:
                _add_wl(t)
            return []
        targets = self._fill_back(cq, usage, targets, True)
        for t, _ in targets:
            _add_wl(t)
        return targets

    def _fits_fs(self, cq: _CQ, usage: dict[FR, int]) -> bool:
        """workloadFitsForFairSharing: the preemptor's simulated usage taken out again for the check
        (computed, not applied: the queue's state is left alone)."""
        return all(v <= _available(cq, fr, -v) for fr, v in usage.items())

    def _fs_targets(self, preemptor_cq: _CQ, candidates: list[_WL]):
        """fairsharing.TargetClusterQueueOrdering.Iter for a flat cohort: the queue with the highest share first."""
        by_cq: dict[str, list[_WL]] = {}
        for c in candidates:
            lst = by_cq.get(c.cq.name)
            if lst is None:
                by_cq[c.cq.name] = [c]
            else:
                lst.append(c)
        pruned: set[str] = set()
        key = self._candidate_key(preemptor_cq)
        queues = {c.cq.name: c.cq for c in candidates}

        # nextTarget scans every queue of the cohort for the highest share. Between two calls only the
        # queue that just lost a workload changes, and a pruned queue never comes back (usage only falls),
        # so a heap with lazily refreshed entries picks the same queue.
        heap: list = []

        def entry(member: _CQ) -> Optional[tuple]:
            cands = by_cq.get(member.name)
            cached = member.drs_cache
            d = cached[1] if cached is not None and cached[0] == member.ver else _drs(member)
            if (not d.borrowed and member is not preemptor_cq) or not cands:
                pruned.add(member.name)
                return None
            k = d.key
            return ((-k[0], -k[1]), key(cands[0]), member.name, member.ver, len(cands), member)

        def push(member: _CQ) -> None:
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

        def next_target() -> Optional[_CQ]:
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

    def _fs_first(self, wl: _WL, candidates: list[_WL], frs: set[FR], usage: dict[FR, int]):
        cq = wl.cq
        strategy = self.strategies[0]
        by_cq, _pruned, it = self._fs_targets(cq, candidates)
        targets: list[tuple[_WL, str]] = []
        retry: list[_WL] = []
        within_nominal = not any(_borrowing_with(cq, fr, 0) for fr in frs)
        for target in it:
            queue = by_cq[target.name]
            if target is cq or within_nominal:
                cand = queue.pop(0)
                _remove_wl(cand)
                targets.append((cand, IN_CLUSTER_QUEUE if target is cq else IN_COHORT_RECLAMATION))
                if self._fits_fs(cq, usage):
                    return True, targets, []
                continue
            preemptor_new, target_old = _drs(cq), _drs(target)
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
                    _remove_wl(cand)
                    targets.append((cand, IN_COHORT_FAIR_SHARING))
                    if self._fits_fs(cq, usage):
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
                        if rest and name not in _pruned and _drs(rest[0].cq).borrowed:
                            retry += rest
                            by_cq[name] = []
                    return False, targets, retry
                continue
            share_after = _ShareAfterRemoval(target)
            while queue:
                cand = queue.pop(0)
                if preemptor_new.key <= share_after.key(cand):  # ComputeTargetShareAfterRemoval, strategy
                    _remove_wl(cand)
                    targets.append((cand, IN_COHORT_FAIR_SHARING))
                    if self._fits_fs(cq, usage):
                        return True, targets, []
                    break
                retry.append(cand)
        return False, targets, retry

    def _fs_second(self, wl: _WL, retry: list[_WL], usage: dict[FR, int], targets: list):
        cq = wl.cq
        by_cq, pruned, it = self._fs_targets(cq, retry)
        for target in it:
            passed = _compare_drs(_drs(cq), _drs(target)) < 0  # LessThanInitialShare, as Kueue hard-codes it
            if not passed:
                # Queues come highest share first and the preemptor's share is fixed here: none will pass.
                return False, targets
            cand = by_cq[target.name].pop(0)
            if passed:
                _remove_wl(cand)
                targets.append((cand, IN_COHORT_FAIR_SHARING))
                if self._fits_fs(cq, usage):
                    return True, targets
            pruned.add(target.name)
        return False, targets

    # ------------------------------------------------------------ one scheduling cycle (scheduler.go)

    def _nominate(self, wl: _WL) -> _Assignment:
        """Scheduler.getInitialAssignments: assignment, then preemption targets if it needs preemption.

        Between two admissions or evictions nothing the assignment reads changes, so equivalent heads
        (same queue, priority, requests, flavor scan start) get the same answer: it is computed once.
        """
        cq = wl.cq
        start = wl.last_tried + 1 if wl.last_tried is not None and not self._last_assignment_outdated(wl) else 0
        loe = cq.d.preemption.within_cluster_queue == "LowerOrNewerEqualPriority"
        memo_key = (cq.name, wl.hash, start, wl.created if loe else None)
        if self.memo_epoch != self.epoch:
            self.memo.clear()
            self.memo_epoch = self.epoch
        a = self.memo.get(memo_key)
        if a is not None:
            wl.last_tried = a.tried
            wl.last_cycle = self.cycle
            wl.last_generation = cq.cohort.generation if cq.cohort is not None else 0
            return a
        a = self._nominate_uncached(wl)
        self.memo[memo_key] = a
        return a

    def _nominate_uncached(self, wl: _WL) -> _Assignment:
        a = self._assign(wl)
        wl.last_tried = a.tried
        wl.last_cycle = self.cycle
        wl.last_generation = wl.cq.cohort.generation if wl.cq.cohort is not None else 0
        if a.flavor is not None and a.mode in (NO_CANDIDATES, PREEMPT, RECLAIM):
            frs = {(a.flavor, r) for r, m in a.modes.items() if m in (NO_CANDIDATES, PREEMPT, RECLAIM)}
            a.targets = self._get_targets(wl, frs, a.usage)
        return a

    def _order_classical(self, entries: list[tuple[_WL, _Assignment]]) -> list[tuple[_WL, _Assignment]]:
        """makeClassicalIterator: not borrowing first, higher priority, older; then queue and workload name."""
        return sorted(entries, key=lambda e: (e[1].borrow, -e[0].priority, e[0].created, e[0].cq.name, e[0].name))

    def _order_fair(self, entries: list[tuple[_WL, _Assignment]]) -> list[tuple[_WL, _Assignment]]:
        """fairSharingIterator: per cohort, the tournament winner first (entryComparer.less).

        A queue's share depends only on its own usage, and within a cycle only the queue whose head was
        just popped changes usage, so the tournament's successive winners are the entries sorted once.
        Cohorts are independent; they are taken in name order, queues without a cohort by their name.
        """
        keyed = []
        for wl, a in entries:
            cq = wl.cq
            if cq.cohort is None:
                keyed.append(((cq.name, ""), None, (wl, a)))
                continue
            d = _drs(cq, a.usage)
            borrowing_on = any(fr in a.usage for fr in d.borrowed)
            keyed.append(((cq.cohort.name, "~"), (borrowing_on, d, -wl.priority, wl.created, cq.name, wl.name), (wl, a)))

        def cmp(x, y) -> int:
            if x[0] != y[0]:
                return -1 if x[0] < y[0] else 1
            if x[1] is None:
                return 0
            if _fair_less(x[1], y[1]):
                return -1
            return 1 if _fair_less(y[1], x[1]) else 0

        keyed.sort(key=functools.cmp_to_key(cmp))
        return [e for _k, _f, e in keyed]

    def run_cycle(self) -> tuple[bool, int]:
        """Scheduler.schedule. Returns (something changed, number of heads)."""
        heads = []
        stopped_moved = False
        for cq in self.cq_order:
            wl = self._pop_head(cq)
            if wl is None:
                continue
            if cq.d.stopped:  # nominate: an inactive ClusterQueue's heads are inadmissible
                wl.pending_reason = f"ClusterQueue {cq.name} is inactive (stopPolicy Hold)"
                self._park(wl)
                stopped_moved = True
                continue
            heads.append(wl)
        if not heads:
            return stopped_moved, 0
        self.cycle += 1
        scan_before = {wl.name: wl.last_tried for wl in heads}
        entries = [(wl, self._nominate(wl)) for wl in heads]
        temp: list[tuple[_CQ, FR, int]] = []
        preempted: dict[str, _WL] = {}
        victims: list[tuple[_WL, _WL, str]] = []
        reservers: dict[str, None] = {}
        outcome: dict[str, str] = {}
        admitted_any = False

        def process(wl: _WL, a: _Assignment) -> None:
            nonlocal admitted_any
            cq = wl.cq
            mode = a.representative
            if mode == "NoFit":
                outcome[wl.name] = _NO_FIT
                wl.pending_reason = "; ".join(dict.fromkeys(a.reasons)) or "no flavor fits"
                return
            if mode == "Preempt" and not a.targets:
                outcome[wl.name] = _NO_CANDIDATES
                wl.pending_reason = "needs preemption but no workload may be preempted: " + "; ".join(
                    dict.fromkeys(a.reasons))
                if cq.d.preemption.reclaim_within_cohort != "Any":  # reserveCapacityForUnreclaimablePreempt
                    for fr, v in self._to_reserve(cq, a).items():
                        if v > 0:
                            _add_usage(cq, fr, v)
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
                    _add_usage(cq, fr, v)
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
            for wl, a in self._order_fair(entries):
                process(wl, a)
        else:
            for wl, a in self._order_classical(entries):
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
                self._push(wl)
            else:
                self._park(wl)
                if reason in (_NO_FIT, _NO_CANDIDATES):
                    self._bulk_park(cq, wl)
                moved = True
        for cq, fr, v in temp:
            _remove_usage(cq, fr, v)
        touched: dict[str, _CQ] = {}
        for victim, preemptor, reason in victims:
            self.preemptions.append(PreemptionRecord(self.now, self.cycle, victim.name, preemptor.name, reason))
            self.timeline.append(
                f"t={_t(self.now)} cycle {self.cycle}: {preemptor.name} preempts {victim.name} ({reason})")
            preemptor.preempting_count += 1
            self._evict(victim)
            touched[victim.cq.name] = victim.cq
        for cq in touched.values():
            self._requeue_inadmissible(cq)
        # A head whose flavor scan will resume elsewhere next cycle (FlavorFungibilityPreserveScanProgress)
        # makes the next cycle differ, so this one is not a fixed point yet.
        rescan = any(scan_before[wl.name] != wl.last_tried for wl, _a in entries if outcome[wl.name] != "admitted")
        return admitted_any or bool(victims) or moved or rescan, len(heads)

    def _fits_now(self, cq: _CQ, a: _Assignment, preempted: dict[str, _WL]) -> bool:
        """scheduler.fits: with this cycle's victims (and the entry's own) taken out."""
        gone = dict(preempted)
        for t, _ in a.targets:
            gone[t.name] = t
        for t in gone.values():
            _remove_wl(t)
        ok = all(_available(cq, fr) >= v for fr, v in a.usage.items())
        for t in gone.values():
            _add_wl(t)
        return ok

    @staticmethod
    def _to_reserve(cq: _CQ, a: _Assignment) -> dict[FR, int]:
        """quotaResourcesToReserve."""
        out = {}
        for fr, v in a.usage.items():
            nominal = cq.nominal.get(fr, 0)
            if a.borrow > 0:
                bl = cq.bl.get(fr)
                out[fr] = v if bl is None else min(v, nominal + bl - cq.usage[fr])
            else:
                out[fr] = max(0, min(v, nominal - cq.usage[fr]))
        return out

    # ------------------------------------------------------------ time

    def run(self) -> Result:
        s = self.s
        for d in s.workloads:
            cq = self.cqs[d.queue]
            wl = _WL(d, cq, d.created)
            self.wls[d.name] = wl
            if d.admitted_flavor is not None:
                a = _Assignment()
                a.flavor = d.admitted_flavor
                a.usage = {(d.admitted_flavor, r): v for r, v in d.requests}
                a.borrow = 1 if any(_borrowing_with(cq, fr, v) for fr, v in a.usage.items()) and cq.cohort else 0
                self.now = d.admitted_at
                self._admit(wl, a, initial=True)
            else:
                self._push(wl)
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
            while ev_i < len(events) and events[ev_i][1].at <= self.now:
                self._apply(events[ev_i][1])
                ev_i += 1
            if not self._cycles_to_fixed_point():
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
                    self._explain_waiting(cq)
                return True
        self.fixed_point = False
        self.timeline.append(f"t={_t(self.now)}: no fixed point after {cap} cycles; moving on")
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
                weighted_share=_drs(cq).rounded(),
                usage_seconds=tuple((fr, cq.usage_s.get(fr, 0.0)) for fr in frs),
                borrowed_seconds=tuple((fr, cq.borrowed_s.get(fr, 0.0)) for fr in frs),
            ))
        return Result(tuple(wls), tuple(self.preemptions), tuple(queues), self.cycle, self.now,
                      tuple(self.timeline), self.fixed_point)


    def _explain_waiting(self, cq: _CQ) -> None:
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


def _fair_less(a: tuple, b: tuple) -> bool:
    """entryComparer.less: not borrowing on the requested flavors, lower share, higher priority, older, then names."""
    if a[0] != b[0]:
        return not a[0]
    c = _compare_drs(a[1], b[1])
    if c != 0:
        return c < 0
    return a[2:] < b[2:]


def _t(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def simulate(scenario: Scenario, *, cycles: Optional[int] = None) -> Result:
    """Run a scenario to its end (or for ``cycles`` scheduling cycles in total)."""
    return Engine(scenario, cycles).run()
