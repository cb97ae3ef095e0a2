"""Entry ordering: in which order one cycle's heads (entries) are tried.

Mirrors ``makeClassicalIterator`` / ``entryOrdering`` of ``pkg/scheduler/scheduler.go`` (classic:
not borrowing first, higher priority, older) and ``pkg/scheduler/fair_sharing_iterator.go``
(fairSharingIterator, entryComparer.less: the tournament per cohort by dominant resource share) of
kubernetes-sigs/kueue v0.19.2. Where Kueue leaves the order undefined (map order), the tie is broken by
queue name, then workload name.
"""

from __future__ import annotations

import functools

from .cache import Workload
from .fair_sharing import compare_drs, drs
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
            keyed.append(((cq.name, ""), None, (wl, a)))
            continue
        d = drs(cq, a.usage)
        borrowing_on = any(fr in a.usage for fr in d.borrowed)
        keyed.append(((cq.cohort.name, "~"), (borrowing_on, d, -wl.priority, wl.created, cq.name, wl.name), (wl, a)))

    def cmp(x, y) -> int:
        if x[0] != y[0]:
            return -1 if x[0] < y[0] else 1
        if x[1] is None:
            return 0
        if fair_less(x[1], y[1]):
            return -1
        return 1 if fair_less(y[1], x[1]) else 0

    keyed.sort(key=functools.cmp_to_key(cmp))
    return [e for _k, _f, e in keyed]


def fair_less(a: tuple, b: tuple) -> bool:
    """entryComparer.less: not borrowing on the requested flavors, lower share, higher priority, older, then names."""
    if a[0] != b[0]:
        return not a[0]
    c = compare_drs(a[1], b[1])
    if c != 0:
        return c < 0
    return a[2:] < b[2:]
