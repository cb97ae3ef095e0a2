"""Entry ordering: in which order one cycle's heads (entries) are tried.

Mirrors ``makeClassicalIterator`` / ``entryOrdering`` of ``pkg/scheduler/scheduler.go`` (classic:
not borrowing first, higher priority, older) and ``pkg/scheduler/fair_sharing_iterator.go``
(fairSharingIterator, entryComparer.less: the tournament per cohort by dominant resource share) of
kubernetes-sigs/kueue v0.19.2. Where Kueue leaves the order undefined (map order), the tie is broken by
queue name, then workload name.
"""

from __future__ import annotations

from .cache import Workload
from .fair_sharing import share_with
from .flavorassigner import Assignment

Entry = tuple[Workload, Assignment]


def order_classical(entries: list[Entry]) -> list[Entry]:
    """makeClassicalIterator: not borrowing first, higher priority, older; then queue and workload name."""
    return sorted(entries, key=lambda e: (e[1].borrow, -e[0].priority, e[0].created, e[0].cq.name, e[0].name))


def order_fair(entries: list[Entry]) -> list[Entry]:
    """fairSharingIterator: per cohort, the tournament winner first (entryComparer.less).

    A queue's share depends only on its own usage, and within a cycle only the queue whose head was
    just popped changes usage, so the tournament's successive winners are the entries sorted once.
    Cohorts are independent; they are taken in name order, queues without a cohort by their name.
    """
    keyed = []
    for wl, a in entries:
        cq = wl.cq
        if cq.cohort is None:
            keyed.append(((cq.name, ""), (), (wl, a)))
            continue
        # drs(cq, a.usage): whether it borrows on the requested flavors, and its CompareDRS key. Kept per
        # equivalence class and flavor (the same usage) while the queue's usage stays (its version).
        ck = (wl.klass, a.flavor)
        cached = cq.share_cache.get(ck) if wl.klass is not None else None
        if cached is not None and cached[0] == cq.ver:
            borrowing_on, share = cached[1]
        else:
            borrowing_on, share = found = share_with(cq, a.usage)
            if wl.klass is not None:
                cq.share_cache[ck] = (cq.ver, found)
        # entryComparer.less as a sort key: not borrowing on the requested flavors first, lower share
        # (CompareDRS's key), higher priority, older, then names.
        keyed.append(((cq.cohort.name, "~"), (borrowing_on, share, -wl.priority, wl.created, cq.name, wl.name),
                      (wl, a)))
    keyed.sort(key=_first_two)
    return [e for _k, _f, e in keyed]


def _first_two(k: tuple) -> tuple:
    return k[0], k[1]
