"""Fair sharing's measure: a ClusterQueue's dominant resource share (DRS) and how two compare.

Mirrors ``pkg/cache/scheduler/fair_sharing.go`` of kubernetes-sigs/kueue v0.19.2 (dominantResourceShare,
CompareDRS, PreciseWeightedShare, roundedWeightedShare) for a flat cohort: the share is the largest
borrowed/lendable ratio (x1000) over resource names, divided by the queue's weight.
"""

from __future__ import annotations

import math
from typing import Optional

from .cache import ClusterQueue, Workload
from .results import FR


class DRS:
    """A dominant resource share: the ratio, the weight it is divided by, the (flavor, resource)s borrowed."""

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


def compare_drs(a: DRS, b: DRS) -> int:
    """CompareDRS: a queue with weight 0 that borrows sorts after every other."""
    ka, kb = a.key, b.key
    return (ka > kb) - (ka < kb)


def drs(cq: ClusterQueue, extra: Optional[dict[FR, int]] = None) -> DRS:
    """dominantResourceShare: the largest borrowed/lendable ratio (x1000) over resource names."""
    if extra is None:
        cached = cq.drs_cache
        if cached is not None and cached[0] == cq.ver:
            return cached[1]
    co = cq.cohort
    if co is None:
        return DRS(0.0, cq.weight, ())
    lendable_of = co.lendable
    if extra is None:
        # The borrowed amounts per resource name are kept incrementally (resource_node.add_usage).
        if not cq.over:
            d = DRS(0.0, cq.weight, ())
        else:
            ratio = 0.0
            for r, b in cq.over_r.items():
                if b > 0:
                    lendable = lendable_of.get(r, 0)
                    if lendable > 0:
                        x = b * 1000.0 / lendable
                        if x > ratio:
                            ratio = x
            d = DRS(ratio, cq.weight, tuple(cq.over))
        cq.drs_cache = (cq.ver, d)
        return d
    borrowing: dict[str, int] = {}
    borrowed: list[FR] = []
    usage = cq.usage
    for fr, r, quota in cq.quota_list:
        amount = usage[fr] - quota + extra.get(fr, 0)
        if amount > 0:
            borrowing[r] = borrowing.get(r, 0) + amount
            borrowed.append(fr)
    if not borrowing:
        return DRS(0.0, cq.weight, ())
    ratio = 0.0
    for r, b in borrowing.items():
        lendable = lendable_of.get(r, 0)
        if lendable > 0:
            x = b * 1000.0 / lendable
            if x > ratio:
                ratio = x
    return DRS(ratio, cq.weight, tuple(borrowed))


def share_with(cq: ClusterQueue, extra: dict[FR, int]) -> tuple[bool, tuple]:
    """For a queue in a cohort: whether ``drs(cq, extra)`` borrows on any of ``extra``'s (flavor,
    resource)s, and its CompareDRS key. Computed from the queue's borrowed amounts per resource name
    (kept with the usage), as :class:`ShareAfterRemoval` is: only ``extra``'s flavor-resources change."""
    borrowed = None
    borrowing_on = False
    usage, nominal = cq.usage, cq.nominal
    for fr, v in extra.items():
        quota = nominal.get(fr)
        if quota is None:
            continue
        amount = usage[fr] - quota
        after = amount + v
        if after > 0:
            borrowing_on = True
        else:
            after = 0
        before = amount if amount > 0 else 0
        if before != after:
            if borrowed is None:
                borrowed = dict(cq.over_r)
            borrowed[fr[1]] += after - before
    if borrowed is None:
        if not cq.over:
            return borrowing_on, (0, 0.0)
        borrowed = cq.over_r
    ratio = 0.0
    lendable_of = cq.cohort.lendable
    for r, b in borrowed.items():
        if b > 0:
            lendable = lendable_of.get(r, 0)
            if lendable > 0:
                x = b * 1000.0 / lendable
                if x > ratio:
                    ratio = x
    weight = cq.weight
    if weight == 0 and ratio != 0:
        return borrowing_on, (1, ratio)
    return borrowing_on, (0, 0.0 if ratio == 0 else ratio / weight)


class ShareAfterRemoval:
    """A queue's dominant resource share (as a CompareDRS key) with one of its workloads taken out.

    Equal to ``drs(cq, {fr: -v})`` but computed from the queue's borrowed amounts per resource name:
    only the removed workload's flavor-resources change.
    """

    __slots__ = ("cq", "lendable", "weight")

    def __init__(self, cq: ClusterQueue):
        self.cq = cq
        self.lendable = cq.cohort.lendable
        self.weight = cq.weight

    def key(self, wl: Workload) -> tuple:
        """The CompareDRS key of the queue's share with ``wl`` taken out (ComputeTargetShareAfterRemoval)."""
        cq = self.cq
        borrowed = dict(cq.over_r)
        usage, nominal = cq.usage, cq.nominal
        for fr, v in wl.usage.items():
            quota = nominal.get(fr)
            if quota is None:
                continue
            amount = usage[fr] - quota
            before = amount if amount > 0 else 0
            after = amount - v if amount > v else 0
            if before != after:
                borrowed[fr[1]] += after - before
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
