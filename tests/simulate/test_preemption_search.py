"""The shortcuts of the preemption searches compute what the straightforward steps would (random states)."""

from __future__ import annotations

import pytest

from hyperpod_gov.simulate import parse_scenario
from hyperpod_gov.simulate.engine import Engine
from hyperpod_gov.simulate.preemption.fairsharing import _fits_without_all, _summed
from hyperpod_gov.simulate.resource_node import add_workload, available, put_back, remove_workload, take_out

from .helpers import cq, preempted, run, wl
from .test_properties import random_scenario

SEEDS = range(40)


def _states(seed: int):
    """Engines stopped after 1, 2 and 3 cycles of a random scenario: queues with workloads admitted."""
    for cycles in (1, 2, 3):
        e = Engine(parse_scenario(random_scenario(seed)), cycles)
        e.run()
        yield e


def _usage(e: Engine) -> tuple:
    queues = tuple(sorted((cq.name, fr, v) for cq in e.cq_order for fr, v in cq.usage.items() if v))
    cohorts = tuple(sorted((co.name, fr, v) for co in e.cohorts.values() for fr, v in co.usage.items() if v))
    return queues, cohorts


@pytest.mark.parametrize("seed", SEEDS)
def test_take_out_and_put_back_change_the_usage_as_remove_and_add_workload_do(seed):
    for e in _states(seed):
        before = _usage(e)
        for cq in e.cq_order:
            for w in list(cq.admitted.values()):
                remove_workload(w)
                removed = _usage(e)
                add_workload(w)
                take_out(w)
                assert _usage(e) == removed, (seed, w.name)
                put_back(w)
                assert _usage(e) == before, (seed, w.name)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_fair_sharing_bound_is_the_fit_with_every_candidate_taken_out(seed):
    checked = 0
    for e in _states(seed):
        for cq in e.cq_order:
            members = cq.cohort.cqs if cq.cohort is not None else [cq]
            for f in cq.flavors:
                for request in (1, 3, 6):
                    usage = {(f, r): request for r in ("cpu", "gpu") if (f, r) in cq.nominal}
                    # Every member's admitted workloads on f as the candidates, and the first half of each.
                    for part in (1.0, 0.5):
                        groups = []
                        for m in members:
                            cands = [w for w in m.admitted.values() if w.flavor == f]
                            cands = cands[: int(len(cands) * part + 0.5)]
                            if cands:
                                groups.append((m, cands))
                        freed = [(m, _summed(cands)) for m, cands in groups]
                        for _m, cands in groups:
                            for w in cands:
                                take_out(w)
                        expected = all(v <= available(cq, fr) for fr, v in usage.items())
                        for _m, cands in groups:
                            for w in cands:
                                put_back(w)
                        assert _fits_without_all(cq, usage, freed) == expected, (seed, cq.name, f, request, part)
                        checked += 1
    assert checked


def test_classic_reclaim_skips_a_borrower_once_it_is_back_within_nominal():
    # alpha (nominal 6) needs all of it; beta and gamma (nominal 2 each) borrow 2 each, so 4 are free.
    # Lower priority goes first: beta's b1 and b2 bring beta back to its nominal (6 free); its b3 is then
    # skipped (Kueue: a candidate's queue must still be borrowing), and gamma's c1 makes alpha fit.
    queues = [cq("alpha", 6, cohort="co", reclaim="Any"), cq("beta", 2, cohort="co"), cq("gamma", 2, cohort="co")]
    workloads = [wl("b1", "beta", 1, admitted="default"), wl("b2", "beta", 1, admitted="default"),
                 wl("b3", "beta", 2, admitted="default"),
                 wl("c1", "gamma", 2, priority=1, admitted="default"), wl("c2", "gamma", 2, priority=1, admitted="default"),
                 wl("a1", "alpha", 6)]
    out = run(queues, workloads, cycles=1)
    assert preempted(out) == {("b1", "InCohortReclamation"), ("b2", "InCohortReclamation"),
                              ("c1", "InCohortReclamation")}
