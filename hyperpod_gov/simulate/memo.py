"""Nominations remembered while nothing they read has changed (the simulator's own; no Kueue counterpart).

Kueue nominates every head anew each cycle. Most heads of a busy cohort fail the same way again and again
(parked, requeued when anything in the cohort finishes, nominated, parked), so the simulator keeps each
nomination with the versions of what it read, and gives it again, unchanged, while those versions hold.

What a nomination reads (flavor assignment, the preemption oracle, the preemption targets) is:

- its own ClusterQueue: usage and admitted workloads (``ClusterQueue.commits``);
- per flavor it tried, the cohort's usage of that flavor, and which queues borrow it and what they run
  there (``Cohort.flavor_commits``; a queue starts or stops borrowing a flavor only when its usage of that
  flavor changes);
- the queues that borrow those flavors: what they run there (covered by the flavor's version), and, if a
  fair-sharing search ran its strategies, their whole usage, for their dominant resource share
  (``ClusterQueue.commits``; ``Assignment.shares_read``). While the flavor versions hold, the set of those queues holds too, and as
  commits only grow, their commits summed per (flavor, resource) (``Cohort.borrower_commits``) hold exactly
  when each of them does: one number per (flavor, resource) instead of one per borrowing queue.

Every admission and release bumps the versions it touches; the temporary usage of one cycle (capacity
reserved, preemptions pending) is gone before the next cycle nominates. Equivalent heads share an entry
(same queue, priority, requests and flavor scan start, and creation time where the queue's policy reads it),
as they share one answer.
"""

from __future__ import annotations

from typing import Optional

from .cache import ClusterQueue, Workload
from .flavorassigner import Assignment, Oracle, quota_check


class NominationMemo:
    """Assignments by equivalence key, each with the versions it was computed at."""

    def __init__(self) -> None:
        self.entries: dict[tuple, tuple] = {}
        self.classes: dict[tuple, int] = {}  # equivalence key -> a number, given once per workload

    def key(self, wl: Workload, start: int) -> tuple:
        """The entry of ``wl``'s equivalence class for a flavor scan from ``start``."""
        k = wl.klass
        if k is None:
            loe = wl.cq.d.preemption.within_cluster_queue == "LowerOrNewerEqualPriority"
            full = (wl.cq.name, wl.hash, wl.created if loe else None)
            k = wl.klass = self.classes.setdefault(full, len(self.classes))
        return (k, start)

    def get(self, key: tuple) -> Optional[Assignment]:
        """The remembered assignment if nothing it read has changed since."""
        entry = self.entries.get(key)
        if entry is None:
            return None
        a, cq, commits, flavors, sums, reads, values, wl, oracle = entry
        if cq.commits != commits:
            return None
        co = cq.cohort
        if co is not None:
            fc = co.flavor_commits
            for f, v in flavors:
                if fc[f] != v:
                    break
            else:
                # Nothing admitted or released on the flavors: the borrowers matter only through their
                # shares, read only if a fair-sharing search ran its strategies.
                if a.shares_read:
                    bc = co.borrower_commits
                    for fr, v in sums:
                        if bc[fr] != v:
                            return None
                return a
            # Something was admitted or released on a flavor. What the nomination read of the cohort may
            # still be as it was: the usage of those (flavor, resource)s, who borrows them (no queue joined
            # or left) and what the borrowers hold (their commits).
            bc = co.borrower_commits
            for fr, v in sums:
                if bc[fr] != v:
                    return None
            usage, changes = co.usage, co.borrowers_changes
            rose = False
            for fr, u, c in values:
                if changes[fr] != c:
                    return None
                now = usage[fr]
                if now != u:
                    if now < u:
                        return None
                    rose = True
            if rose:
                # The cohort uses more of them than it did, and nothing else it read changed. Each search
                # found no targets: with more cohort usage every fit it tried fails again (available quota
                # only falls as usage rises) over the same candidates, so it finds none again. The quota
                # checks are made again; if they answer as before, so does the whole nomination.
                if not a.found_none or oracle is None:
                    return None
                for fr, val, answer in a.quota:
                    if quota_check(wl, fr, val, oracle) != answer:
                        return None
                entry[6] = tuple((fr, usage[fr], c) for fr, _u, c in values)
            entry[3] = tuple((f, fc[f]) for f, _v in flavors)  # the shortcut holds again
        return a

    def put(self, key: tuple, wl: Workload, start: int, a: Assignment, oracle: Optional[Oracle] = None) -> None:
        """Remember ``a``, computed just now for ``wl`` with its flavor scan from ``start`` (``oracle``: the
        preemptor it asked, to make its quota checks again)."""
        cq: ClusterQueue = wl.cq
        co = cq.cohort
        flavors: tuple = ()
        sums: tuple = ()
        values: tuple = ()
        old = self.entries.get(key)
        if old is not None:
            reads = old[5]  # the same key reads the same flavors and (flavor, resource)s
        else:
            reads = None
            if co is not None:
                allowed = wl.d.allowed_flavors
                tried = tuple(f for f in cq.flavors[start:] if allowed is None or f in allowed)
                reads = (tried, tuple((f, r) for f in tried for r, _ in wl.requests))
        if co is not None:
            tried, frs = reads
            fc = co.flavor_commits
            flavors = tuple((f, fc[f]) for f in tried)
            bc = co.borrower_commits
            sums = tuple((fr, bc[fr]) for fr in frs)
            usage, changes = co.usage, co.borrowers_changes
            values = tuple((fr, usage[fr], changes[fr]) for fr in frs)
        self.entries[key] = [a, cq, cq.commits, flavors, sums, reads, values, wl, oracle]
