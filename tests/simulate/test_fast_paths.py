"""The arithmetic written out for speed computes what the straightforward composition computes (random states)."""

from __future__ import annotations

import pytest

from hyperpod_gov.simulate.fair_sharing import drs, share_with
from hyperpod_gov.simulate.flavorassigner import FIT, NO_FIT, quota_check
from hyperpod_gov.simulate.preemption.common import workload_fits
from hyperpod_gov.simulate.quantities import show_quantity
from hyperpod_gov.simulate.resource_node import (
    add_usage,
    available,
    borrowing_with,
    lowest_subtree,
    potential,
    remove_usage,
)

from .test_preemption_search import SEEDS, _states

REQUESTS = (0, 1, 3, 6, 20)


def _available(cq, fr, delta=0):
    """resource_node.available as Kueue's available() reads: local quota left plus what the cohort lends."""
    used = cq.usage[fr] + delta
    if cq.cohort is None:
        return max(0, cq.nominal.get(fr, 0) - used)
    lq = cq.lq.get(fr, 0)
    cohort_used = cq.cohort.usage[fr] + max(0, used - lq) - max(0, cq.usage[fr] - lq)
    parent = cq.cohort.subtree[fr] - cohort_used
    bl = cq.bl.get(fr)
    if bl is not None:
        parent = min(cq.nominal.get(fr, 0) - lq - max(0, used - lq) + bl, parent)
    return max(0, max(0, lq - used) + parent)


def _quota_check(wl, fr, val, oracle):
    """fitsResourceQuota up to the oracle, composed of potential, lowest_subtree and available."""
    cq = wl.cq
    most = potential(cq, fr)
    if val > most:
        return NO_FIT, 0, (f"insufficient quota for {fr[1]} in flavor {fr[0]}, request {show_quantity(fr[1], val)} > "
                           f"maximum capacity {show_quantity(fr[1], most)}")
    borrow, may_reclaim = lowest_subtree(cq, fr, val)
    free = available(cq, fr)
    if val <= free:
        return FIT, borrow, ""
    reason = (f"insufficient unused quota for {fr[1]} in flavor {fr[0]}, "
              f"{show_quantity(fr[1], val - free)} more needed")
    if cq.nominal.get(fr, 0) >= val or may_reclaim or oracle.can_preempt_while_borrowing(cq):
        return None, borrow, reason
    return NO_FIT, borrow, reason


class _Head:
    """The parts of a workload quota_check reads."""

    def __init__(self, cq):
        self.cq = cq


def _frs(cq):
    return [(f, r) for f in cq.flavors for r in ("cpu", "gpu", "memory")]  # memory: in no flavor


@pytest.mark.parametrize("seed", SEEDS)
def test_available_is_the_local_quota_left_plus_what_the_cohort_lends(seed):
    for e in _states(seed):
        for _ in _overcommitted(e):
            for cq in e.cq_order:
                for fr in _frs(cq):
                    for delta in (0, -1, -3, 2):
                        assert available(cq, fr, delta) == _available(cq, fr, delta), (seed, cq.name, fr, delta)


@pytest.mark.parametrize("seed", SEEDS)
def test_quota_check_is_potential_lowest_subtree_and_available_composed(seed):
    checked = 0
    for e in _states(seed):
        for _ in _overcommitted(e):
            for cq in e.cq_order:
                head = _Head(cq)
                for fr in _frs(cq):
                    for val in REQUESTS:
                        assert quota_check(head, fr, val, e.preemptor) == _quota_check(head, fr, val, e.preemptor), \
                            (seed, cq.name, fr, val)
                        checked += 1
    assert checked


@pytest.mark.parametrize("seed", SEEDS)
def test_share_with_a_request_is_the_dominant_resource_share_with_it_added(seed):
    checked = 0
    for e in _states(seed):
        for cq in e.cq_order:
            if cq.cohort is None:
                continue
            for f in cq.flavors:
                for val in REQUESTS:
                    for extra in ({(f, "cpu"): val}, {(f, "cpu"): val, (f, "gpu"): 1}, {(f, "gpu"): val},
                                  {(f, "memory"): val}):
                        d = drs(cq, extra)
                        assert share_with(cq, extra) == (any(fr in extra for fr in d.borrowed), d.key), \
                            (seed, cq.name, extra)
                        checked += 1
    assert checked


@pytest.mark.parametrize("seed", SEEDS)
def test_the_borrowers_commits_summed_are_kept_with_who_borrows(seed):
    checked = 0
    for e in _states(seed):
        for co in e.cohorts.values():
            for fr in set(co.borrowers) | set(co.borrower_commits):
                queues = co.borrowers.get(fr, set())
                assert co.borrower_commits.get(fr, 0) == sum(q.commits for q in queues), (seed, co.name, fr)
                checked += 1
            for q in co.cqs:
                assert q.borrowing == {fr for fr, queues in co.borrowers.items() if q in queues}, (seed, q.name)
    assert checked


def _overcommitted(e):
    """The state as it is, then with each queue in turn using 30 cpus more of each flavor than it holds
    (as workloads admitted before the run may): the cohort then has less than nothing left to lend."""
    yield
    for cq in e.cq_order:
        for f in cq.flavors:
            add_usage(cq, (f, "cpu"), 30)
            yield
            remove_usage(cq, (f, "cpu"), 30)


@pytest.mark.parametrize("seed", SEEDS)
def test_workload_fits_is_available_and_borrowing_with_composed(seed):
    checked = 0
    for e in _states(seed):
        for _ in _overcommitted(e):
            for cq in e.cq_order:
                for f in cq.flavors:
                    for val in REQUESTS:
                        for usage in ({(f, "cpu"): val}, {(f, "cpu"): val, (f, "gpu"): 1}, {(f, "memory"): val}):
                            for allow in (True, False):
                                expected = all((allow or not borrowing_with(cq, fr, v)) and v <= _available(cq, fr)
                                               for fr, v in usage.items())
                                assert workload_fits(cq, usage, allow) == expected, (seed, cq.name, usage, allow)
                                checked += 1
    assert checked
