"""A nomination the simulator remembers is given again only while nothing it read has changed."""

from __future__ import annotations

import pytest

from hyperpod_gov.simulate import parse_scenario
from hyperpod_gov.simulate.engine import Engine
from hyperpod_gov.simulate.memo import NominationMemo

from .helpers import cq, preempted, run, state, wl
from .test_properties import random_scenario


def _cpu(name: str, nominal: int) -> dict:
    return {"name": name, "resources": {"cpu": {"nominal": nominal}}}


def test_a_borrowers_admission_on_another_flavor_raises_its_share_and_the_head_tried_again_preempts():
    # f holds 10 cpus (alpha 4, lender 6), g 4 (lender). beta borrows 3 on f; alpha's head `w` (4 on f) would
    # borrow 4: share 4000/14 = 286 against beta's 3000/14 = 214, so no strategy lets it preempt beta.
    # In the same cycle beta's `b2` is admitted on g: beta now borrows 7 (500). alpha is StrictFIFO, so `w`
    # is tried again in the next cycle and must see beta's new share, though nothing changed on f.
    queues = [
        cq("alpha", cohort="co", reclaim="Any", strategy="StrictFIFO", flavors=[_cpu("f", 4)]),
        cq("beta", cohort="co", flavors=[_cpu("f", 0), _cpu("g", 0)]),
        cq("lender", cohort="co", flavors=[_cpu("f", 6), _cpu("g", 4)]),
    ]
    workloads = [
        wl("a1", "alpha", 4, admitted="f"),
        wl("b1", "beta", 3, admitted="f"),
        wl("w", "alpha", 4, created=1),
        wl("b2", "beta", 4, created=1),
    ]
    out = run(queues, workloads, fair=True)
    assert out["workloads"]["b2"]["flavor"] == "g"
    assert preempted(out) == {("b1", "InCohortFairSharing")}
    assert state(out, "w") == "admitted" and state(out, "b1") == "pending"


class _Forgetful(NominationMemo):
    """A memo that never gives a nomination again: every head is nominated anew, as Kueue does."""

    def get(self, key: tuple):
        return None


@pytest.mark.parametrize("seed", range(300))
def test_remembered_nominations_give_the_results_of_nominating_every_head_anew(seed):
    scenario = parse_scenario(random_scenario(seed))
    remembered = Engine(scenario).run()
    anew = Engine(scenario)
    anew.memo = _Forgetful()
    assert repr(anew.run()) == repr(remembered)


def test_an_entry_is_not_given_again_once_the_cohort_uses_less_of_what_it_read():
    # The cohort lends 4 cpus (alpha 1, beta 3); beta's b1 (5, preemptable) and b2 (2) were admitted before the
    # run: the cohort uses 7, so alpha's a1 (3) has none free, and even with b1 gone 2 are used: no targets.
    queues = [cq("alpha", 1, cohort="co", reclaim="LowerPriority", bwc="LowerPriority"), cq("beta", 3, cohort="co")]
    e = Engine(parse_scenario({"queues": queues, "workloads": [
        wl("b1", "beta", 5, admitted="default"), wl("b2", "beta", 2, priority=5, admitted="default"),
        wl("a1", "alpha", 3, priority=1, created=1)]}), 0)
    e.run()
    head, co = e.wls["a1"], e.cohorts["co"]
    a = e._nominate(head)
    assert a.found_none and not a.targets
    key = e.memo.key(head, 0)
    fr = ("default", "cpu")
    co.flavor_commits["default"] += 1  # something was admitted or released on the flavor ...
    assert e.memo.get(key) is a  # ... and the cohort's usage is as it was
    co.flavor_commits["default"] += 1
    co.usage[fr] -= 1000  # 6 used: still none free (the quota checks answer the same), but with b1 gone 3 are
    assert e.memo.get(key) is None
    assert [t.name for t, _ in e._nominate_uncached(head).targets] == ["b1"]
