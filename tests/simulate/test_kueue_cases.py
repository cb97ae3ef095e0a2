"""Scenarios mirroring Kueue v0.19.2's own tests and documentation; each names the case it mirrors.

Kueue's TestPreemption / TestFairPreemptions call the preemptor directly with
the admitted workloads already holding quota; here the same queues and
workloads run one scheduling cycle (``cycles=1``) and the preemptions chosen
must be Kueue's. (Where Kueue's test forces a Preempt assignment on a workload
the flavor assigner would admit by borrowing, the run admits it instead and
preempts nothing, which is what the test expects of the preemptor too.)
"""

from __future__ import annotations

import pytest

from .helpers import cq, preempted, run, state, wl

# ----------------------------------------------------------------- docs: site/content/en/docs/concepts/cluster_queue.md


def _docs(team_a: dict, team_b: dict, request: int) -> dict:
    return run([cq("team-a", 9, cohort="team-ab", **team_a), cq("team-b", 12, cohort="team-ab", **team_b)],
               [wl("job", "team-a", request)])


def test_docs_team_a_borrows_all_of_team_b_quota():
    out = _docs({}, {}, 21)
    assert state(out, "job") == "admitted" and out["workloads"]["job"]["borrowing"] is True
    assert state(_docs({}, {}, 22), "job") == "pending"


@pytest.mark.parametrize("request_cpu, expected", [(10, "admitted"), (11, "pending")])
def test_docs_borrowing_limit_one_caps_team_a_at_ten(request_cpu, expected):
    assert state(_docs({"bl": 1}, {}, request_cpu), "job") == expected


@pytest.mark.parametrize("request_cpu, expected", [(10, "admitted"), (11, "pending")])
def test_docs_lending_limit_one_on_team_b_caps_team_a_at_ten(request_cpu, expected):
    assert state(_docs({}, {"ll": 1}, request_cpu), "job") == expected


# ----------------------------------------------------------------- TestPreemption (pkg/scheduler/preemption/preemption_test.go)

STANDALONE = [cq("standalone", 6, within="LowerPriority")]
C12 = [cq("c1", 6, cohort="cohort", bl=6, within="LowerPriority", reclaim="LowerPriority"),
       cq("c2", 6, cohort="cohort", bl=6, within="Never", reclaim="Any")]
SHARED = [
    cq("a_standard", 1, cohort="with_shared_cq", bl=12, within="Never", reclaim="LowerPriority",
       bwc="LowerPriority", threshold=0),
    cq("b_standard", 1, cohort="with_shared_cq", bl=12, within="LowerPriority", reclaim="Any",
       bwc="LowerPriority", threshold=0),
    cq("a_best_effort", 1, cohort="with_shared_cq", bl=12, within="Never", reclaim="LowerPriority",
       bwc="LowerPriority", threshold=0),
    cq("b_best_effort", 0, cohort="with_shared_cq", bl=13, within="Never", reclaim="LowerPriority",
       bwc="LowerPriority", threshold=0),
    cq("shared", 10, cohort="with_shared_cq"),
]
LEND = [cq("lend1", 6, cohort="cohort-lend", ll=4, within="LowerPriority", reclaim="LowerPriority"),
        cq("lend2", 6, cohort="cohort-lend", ll=2, within="LowerPriority", reclaim="LowerPriority")]


def _admitted(queue: str, *specs: tuple) -> list[dict]:
    return [wl(name, queue, cpu, priority=prio, admitted="default") for name, cpu, prio in specs]


PREEMPTION_CASES = {
    "preempt lowest priority": (
        STANDALONE, _admitted("standalone", ("low", 2, -1), ("mid", 2, 0), ("high", 2, 1)),
        wl("in", "standalone", 2, priority=1), {("low", "InClusterQueue")}),
    "preempt multiple": (
        STANDALONE, _admitted("standalone", ("low", 2, -1), ("mid", 2, 0), ("high", 2, 1)),
        wl("in", "standalone", 3, priority=1), {("low", "InClusterQueue"), ("mid", "InClusterQueue")}),
    "no preemption for low priority": (
        STANDALONE, _admitted("standalone", ("low", 3, -1), ("mid", 3, 0)),
        wl("in", "standalone", 1, priority=-1), set()),
    "not enough low priority workloads": (
        STANDALONE, _admitted("standalone", ("low", 3, -1), ("mid", 3, 0)),
        wl("in", "standalone", 4), set()),
    "some free quota, preempt low priority": (
        STANDALONE, _admitted("standalone", ("low", 1, -1), ("mid", 1, 0), ("high", 3, 1)),
        wl("in", "standalone", 2, priority=1), {("low", "InClusterQueue")}),
    "minimal set excludes low priority": (
        STANDALONE, _admitted("standalone", ("low", 1, -1), ("mid", 2, 0), ("high", 3, 1)),
        wl("in", "standalone", 2, priority=1), {("mid", "InClusterQueue")}),
    "reclaim quota from borrower": (
        C12, _admitted("c1", ("c1-low", 3, -1)) + _admitted("c2", ("c2-mid", 3, 0), ("c2-high", 6, 1)),
        wl("in", "c1", 3, priority=1), {("c2-mid", "InCohortReclamation")}),
    "no workloads borrowing": (
        C12, _admitted("c1", ("c1-high", 4, 1)) + _admitted("c2", ("c2-low-1", 4, -1)),
        wl("in", "c1", 4, priority=1), set()),
    "not enough workloads borrowing": (
        C12, _admitted("c1", ("c1-high", 4, 1)) + _admitted("c2", ("c2-low-1", 4, -1), ("c2-low-2", 4, -1)),
        wl("in", "c1", 4, priority=1), set()),
    "preempting locally and borrowing same resource in cohort": (
        C12, _admitted("c1", ("c1-med", 4, 0), ("c1-low", 4, -1)) + _admitted("c2", ("c2-low-1", 4, -1)),
        wl("in", "c1", 4, priority=1), {("c1-low", "InClusterQueue")}),
    "do not reclaim borrowed quota from same priority for withinCohort=ReclaimFromLowerPriority": (
        C12, _admitted("c1", ("c1", 2, 0)) + _admitted("c2", ("c2-1", 4, 0), ("c2-2", 4, 0)),
        wl("in", "c1", 4), set()),
    "reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny": (
        C12, _admitted("c1", ("c1-1", 4, 0), ("c1-2", 4, 1)) + _admitted("c2", ("c2", 2, 0)),
        wl("in", "c2", 4), {("c1-1", "InCohortReclamation")}),
    "use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue while borrowing": (
        SHARED, _admitted("a_best_effort", ("a_best_effort_low", 10, -1))
        + _admitted("b_best_effort", ("b_best_effort_low", 1, -1)),
        wl("in", "a_standard", 10), {("a_best_effort_low", "InCohortReclaimWhileBorrowing")}),
    "use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above "
    "MaxPriorityThreshold, if borrowing is required even after the preemption": (
        SHARED, _admitted("b_standard", ("b_standard", 10, 1)), wl("in", "a_standard", 10, priority=2), set()),
    "use BorrowWithinCohort; allow preempting a lower-priority workload with priority above MaxPriorityThreshold, "
    "if borrowing is not required after the preemption": (
        SHARED, _admitted("b_standard", ("b_standard", 13, 1)), wl("in", "a_standard", 1, priority=2),
        {("b_standard", "InCohortReclamation")}),
    "reclaim quota from lender": (
        LEND, _admitted("lend1", ("lend1-low", 3, -1)) + _admitted("lend2", ("lend2-mid", 3, 0), ("lend2-high", 4, 1)),
        wl("in", "lend1", 3, priority=1), {("lend2-mid", "InCohortReclamation")}),
    "preempt from all ClusterQueues in cohort-lend": (
        LEND, _admitted("lend1", ("lend1-low", 3, -1), ("lend1-mid", 2, 0))
        + _admitted("lend2", ("lend2-low", 3, -1), ("lend2-mid", 4, 0)),
        wl("in", "lend1", 4), {("lend1-low", "InClusterQueue"), ("lend2-low", "InCohortReclamation")}),
    "cannot preempt from other ClusterQueues if exceeds requestable quota including lending limit": (
        LEND, _admitted("lend2", ("lend2-low", 10, -1)), wl("in", "lend1", 9), set()),
}


@pytest.mark.parametrize("case", sorted(PREEMPTION_CASES))
def test_classical_preemption_matches_kueue_TestPreemption(case):
    queues, admitted, incoming, want = PREEMPTION_CASES[case]
    out = run(queues, admitted + [incoming], cycles=1)
    assert preempted(out) == want
    assert all(p["preemptor"] == "in" for p in out["preemptions"])
    if want:  # Kueue admits the preemptor only once the evictions completed
        assert state(out, "in") == "pending"


def test_preempt_newer_workloads_with_the_same_priority():
    """TestPreemption "preempt newer workloads with the same priority" (LowerOrNewerEqualPriority)."""
    queues = [cq("preventStarvation", 6, within="LowerOrNewerEqualPriority")]
    admitted = [wl("wl1", "preventStarvation", 2, priority=2, admitted="default", created=0),
                wl("wl2", "preventStarvation", 2, priority=1, admitted="default", created=15),
                wl("wl3", "preventStarvation", 2, priority=1, admitted="default", created=15)]
    out = run(queues, admitted + [wl("in", "preventStarvation", 2, priority=1, created=0)], cycles=1)
    assert preempted(out) == {("wl2", "InClusterQueue")}


# ----------------------------------------------------------------- TestFairPreemptions (preemption_fair_test.go)

def _fair_cqs(weights: dict | None = None) -> list[dict]:
    weights = weights or {}
    base = [cq(n, 3, cohort="all", within="LowerPriority", reclaim="Any", bwc="LowerPriority", threshold=-3,
               weight=weights.get(n)) for n in ("a", "b", "c")]
    return base + [cq("preemptible", 0, cohort="all")]


def _units(queue: str, names: list[str], priority: int = 0) -> list[dict]:
    return [wl(n, queue, 1, priority=priority, admitted="default") for n in names]


FAIR_CASES = {
    "reclaim nominal from user using the most": (
        _units("a", ["a1", "a2", "a3"]) + _units("b", ["b1", "b2", "b3", "b4", "b5"]) + _units("c", ["c1"]),
        wl("c_incoming", "c", 1), {("b1", "InCohortReclamation")}, None),
    "can reclaim from queue using less, if taking the latest workload from user using the most isn't enough": (
        [wl("a1", "a", 3, admitted="default"), wl("a2", "a", 1, admitted="default"),
         wl("b1", "b", 2, admitted="default"), wl("b2", "b", 3, admitted="default")],
        wl("c_incoming", "c", 3), {("a1", "InCohortReclamation")}, None),
    "reclaim borrowable quota from user using the most": (
        _units("a", ["a1", "a2", "a3"]) + _units("b", ["b1", "b2", "b3", "b4", "b5"]) + _units("c", ["c1"]),
        wl("a_incoming", "a", 1), {("b1", "InCohortFairSharing")}, None),
    "preempt one from each CQ borrowing": (
        [wl("a1", "a", "500m", admitted="default"), wl("a2", "a", "500m", admitted="default"),
         wl("a3", "a", 3, admitted="default"), wl("b1", "b", "500m", admitted="default"),
         wl("b2", "b", "500m", admitted="default"), wl("b3", "b", 3, admitted="default")],
        wl("c_incoming", "c", 2), {("a1", "InCohortReclamation"), ("b1", "InCohortReclamation")}, None),
    "can't preempt when everyone under nominal": (
        _units("a", ["a1", "a2", "a3"]) + _units("b", ["b1", "b2", "b3"]) + _units("c", ["c1", "c2", "c3"]),
        wl("c_incoming", "c", 1), set(), None),
    "can't preempt when it would switch the imbalance": (
        _units("a", ["a1", "a2", "a3"]) + _units("b", ["b1", "b2", "b3", "b4", "b5"]),
        wl("a_incoming", "a", 2), set(), None),
    "can preempt lower priority workloads from same CQ": (
        _units("a", ["a1_low", "a2_low"], -1) + _units("a", ["a3", "a4"]) + _units("b", ["b1", "b2", "b3", "b4", "b5"]),
        wl("a_incoming", "a", 2), {("a1_low", "InClusterQueue"), ("a2_low", "InClusterQueue")}, None),
    "can preempt a combination of same CQ and highest user": (
        _units("a", ["a_low"], -1) + _units("a", ["a2", "a3"]) + _units("b", ["b1", "b2", "b3", "b4", "b5", "b6"]),
        wl("a_incoming", "a", 2), {("a_low", "InClusterQueue"), ("b1", "InCohortFairSharing")}, None),
    "preempt huge workload if there is no other option, as long as the target CQ gets a lower share": (
        [wl("b1", "b", 9, admitted="default")], wl("a_incoming", "a", 2), {("b1", "InCohortReclamation")}, None),
    "can't preempt huge workload if the incoming is also huge": (
        [wl("a1", "a", 2, admitted="default"), wl("b1", "b", 7, admitted="default")],
        wl("a_incoming", "a", 5), set(), None),
    "preempt from target and others even if over nominal": (
        [wl("a1_low", "a", 2, priority=-1, admitted="default"), wl("a2_low", "a", 1, priority=-1, admitted="default"),
         wl("b1", "b", 3, admitted="default"), wl("b2", "b", 3, admitted="default")],
        wl("a_incoming", "a", 4), {("a1_low", "InClusterQueue"), ("b1", "InCohortFairSharing")}, None),
    "prefer to preempt workloads that don't make the target CQ have the biggest share": (
        [wl("b1", "b", 2, admitted="default"), wl("b2", "b", 1, admitted="default"),
         wl("b3", "b", 2, admitted="default"), wl("c1", "c", 1, admitted="default")],
        wl("a_incoming", "a", "3.5"), {("b2", "InCohortFairSharing")}, None),
    "preempt from different cluster queues if the end result has a smaller max share": (
        [wl("b1", "b", 2, admitted="default"), wl("b2", "b", "2.5", admitted="default"),
         wl("c1", "c", 2, admitted="default"), wl("c2", "c", "2.5", admitted="default")],
        wl("a_incoming", "a", "3.5"), {("b1", "InCohortFairSharing"), ("c1", "InCohortFairSharing")}, None),
    "scenario above does not flap": (
        [wl("a1", "a", "3.5", admitted="default"), wl("b2", "b", "2.5", admitted="default"),
         wl("c2", "c", "2.5", admitted="default")],
        wl("b_incoming", "b", 2), set(), None),
    "cannot preempt if it would make the candidate CQ go under nominal after preempting one element": (
        [wl("b1", "b", 3, admitted="default"), wl("b2", "b", 3, admitted="default"), wl("c1", "c", 3, admitted="default")],
        wl("a_incoming", "a", 4), set(), None),
    "workloads under priority threshold not capriciously preempted": (
        _units("a", ["a1", "a2", "a3"]) + _units("b", ["b1", "b2", "b3"])
        + _units("preemptible", ["preemptible1", "preemptible2", "preemptible3"], -3),
        wl("a_incoming", "a", 2), set(), None),
    "preempt lower priority first, even if big": (
        [wl("a1", "a", 3, admitted="default"), wl("b_low", "b", 5, admitted="default"),
         wl("b_high", "b", 1, priority=1, admitted="default")],
        wl("a_incoming", "a", 1), {("b_low", "InCohortFairSharing")}, ["LessThanInitialShare"]),
    "preempt workload that doesn't transfer the imbalance, even if high priority": (
        [wl("a1", "a", 3, admitted="default"), wl("b_low", "b", 5, admitted="default"),
         wl("b_high", "b", 1, priority=1, admitted="default")],
        wl("a_incoming", "a", 1), {("b_high", "InCohortFairSharing")}, ["LessThanOrEqualToFinalShare"]),
}


@pytest.mark.parametrize("case", sorted(FAIR_CASES))
def test_fair_sharing_preemption_matches_kueue_TestFairPreemptions(case):
    admitted, incoming, want, strategies = FAIR_CASES[case]
    out = run(_fair_cqs(), admitted + [incoming], cycles=1, fair=True, strategies=strategies)
    assert preempted(out) == want


def _weighted_cqs(weights: dict) -> list[dict]:
    return [cq(n, 3, cohort="all", within="LowerPriority", reclaim="Any", weight=weights.get(n)) for n in "abc"]


def test_cq_with_higher_weight_can_preempt_more():
    """TestFairPreemptions "CQ with higher weight can preempt more"."""
    admitted = _units("a", ["a1", "a2", "a3"]) + _units("b", ["b1", "b2", "b3", "b4", "b5", "b6"])
    out = run(_weighted_cqs({"a": 2}), admitted + [wl("a_incoming", "a", 2)], cycles=1, fair=True)
    assert preempted(out) == {("b1", "InCohortFairSharing"), ("b2", "InCohortFairSharing")}


def test_can_preempt_anything_borrowing_from_cq_with_weight_zero():
    """TestFairPreemptions "can preempt anything borrowing from CQ with 0 weight"."""
    admitted = _units("a", ["a1", "a2", "a3"]) + _units("b", ["b1", "b2", "b3", "b4", "b5", "b6"])
    out = run(_weighted_cqs({"b": 0}), admitted + [wl("a_incoming", "a", 3)], cycles=1, fair=True)
    assert preempted(out) == {("b1", "InCohortFairSharing"), ("b2", "InCohortFairSharing"),
                              ("b3", "InCohortFairSharing")}
    before = run(_weighted_cqs({"b": 0}), admitted, cycles=1, fair=True)
    assert before["queues"]["b"]["weightedShare"] == 2**63 - 1  # a weight-0 queue that borrows
    assert out["queues"]["b"]["weightedShare"] == 0  # back within its nominal quota


# ----------------------------------------------------------------- TestSchedule (pkg/scheduler/scheduler_test.go)

def _eng() -> list[dict]:
    return [
        cq("eng-alpha", cohort="eng", flavors=[
            {"name": "on-demand", "resources": {"cpu": {"nominal": 50, "borrowingLimit": 50}}},
            {"name": "spot", "resources": {"cpu": {"nominal": 100, "borrowingLimit": 0}}}]),
        cq("eng-beta", cohort="eng", within="LowerPriority", reclaim="Any", flavors=[
            {"name": "on-demand", "resources": {"cpu": {"nominal": 50, "borrowingLimit": 10}}},
            {"name": "spot", "resources": {"cpu": {"nominal": 0, "borrowingLimit": 100}}}]),
    ]


def test_single_cluster_queue_full():
    """TestSchedule "single clusterQueue full"."""
    out = run([cq("sales", 50)], [wl("assigned", "sales", 40, admitted="default"), wl("new", "sales", 11)], cycles=1)
    assert state(out, "new") == "pending" and out["queues"]["sales"]["usage"]["default"]["cpu"] == 40


def test_admit_in_same_cohort_with_no_borrowing():
    """TestSchedule "admit in same cohort with no borrowing"."""
    out = run(_eng(), [wl("a", "eng-alpha", 40), wl("b", "eng-beta", 40)], cycles=1)
    assert [out["workloads"][n]["flavor"] for n in "ab"] == ["on-demand", "on-demand"]


def test_cannot_borrow_if_cohort_was_assigned_and_would_result_in_overadmission():
    """TestSchedule "cannot borrow if cohort was assigned and would result in overadmission"."""
    out = run(_eng(), [wl("a", "eng-alpha", 45), wl("b", "eng-beta", 56)], cycles=1)
    assert state(out, "a") == "admitted" and state(out, "b") == "pending"


def test_can_borrow_if_cohort_was_assigned_and_will_not_result_in_overadmission():
    """TestSchedule "can borrow if cohort was assigned and will not result in overadmission"."""
    out = run(_eng(), [wl("a", "eng-alpha", 45), wl("b", "eng-beta", 55)], cycles=1)
    assert state(out, "a") == "admitted" and state(out, "b") == "admitted"
    assert out["workloads"]["b"]["borrowing"] is True


def test_capacity_blocked_when_lender_not_guaranteed_to_reclaim():
    """TestSchedule "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=Never)":
    the head that needs preemption but has no candidates reserves quota for the cycle."""
    queues = [cq("ClusterQueueA", 2, cohort="root", reclaim="Never", resource="gpu"),
              cq("ClusterQueueB", 0, cohort="root", resource="gpu")]
    wls = [wl("a1-admitted", "ClusterQueueA", admitted="default", requests={"gpu": 1}),
           wl("a2-pending", "ClusterQueueA", requests={"gpu": 2}),
           wl("b1-pending", "ClusterQueueB", requests={"gpu": 1})]
    out = run(queues, wls, cycles=1)
    assert state(out, "a2-pending") == "pending" and state(out, "b1-pending") == "pending"
    # With ReclaimWithinCohort=Any nothing is reserved: b1 borrows the free GPU in the same cycle.
    queues[0]["preemption"]["reclaimWithinCohort"] = "Any"
    assert state(run(queues, wls, cycles=1), "b1-pending") == "admitted"


def test_fair_sharing_schedules_workload_with_lowest_share_first():
    """scheduler_fs_test "fair sharing schedule workload with lowest drf after admission": of two heads that
    cannot both borrow, the one whose queue ends with the lower share goes first."""
    queues = [cq("a", 2, cohort="all"), cq("b", 2, cohort="all"), cq("c", 2, cohort="all")]
    wls = [wl("a-big", "a", 5, created=0), wl("b-small", "b", 3, created=1)]
    out = run(queues, wls, cycles=1, fair=True)
    assert state(out, "b-small") == "admitted" and state(out, "a-big") == "pending"
    classic = run(queues, wls, cycles=1, fair=False)  # classic order: both borrow, so the older one
    assert state(classic, "a-big") == "admitted" and state(classic, "b-small") == "pending"


def test_fallback_to_next_flavor_when_first_needs_preemption():
    """TestSchedule "admit to second flavor when first needs preemption; WhenCanPreempt: TryNextFlavor"."""
    flavors = [{"name": "on-demand", "resources": {"cpu": {"nominal": 2}}},
               {"name": "spot", "resources": {"cpu": {"nominal": 2}}}]
    queues = [cq("q", within="LowerPriority", flavors=flavors)]
    wls = [wl("low", "q", 2, priority=-1, admitted="on-demand"), wl("in", "q", 2, priority=1)]
    out = run(queues, wls, cycles=1)
    assert out["workloads"]["in"]["flavor"] == "spot" and not out["preemptions"]
    queues[0]["flavorFungibility"] = {"whenCanPreempt": "MayStopSearch"}
    out = run(queues, wls, cycles=1)
    assert preempted(out) == {("low", "InClusterQueue")}


def test_fair_sharing_in_cq_preemption_for_cq_without_cohort():
    """scheduler_fs_test "fair sharing: in-CQ preemption for CQ without cohort; repro for nil pointer panic"."""
    queues = [cq("solo", 4, within="LowerPriority")]
    admitted = [wl("low", "solo", 2, priority=-1, admitted="default"), wl("mid", "solo", 2, admitted="default")]
    out = run(queues, admitted + [wl("high", "solo", 2, priority=1)], cycles=1, fair=True)
    assert preempted(out) == {("low", "InClusterQueue")}
    # Preempting every lower-priority workload would still not make room: nothing is preempted.
    admitted[1]["priority"] = 1
    out = run(queues, admitted + [wl("huge", "solo", 4, priority=1)], cycles=1, fair=True)
    assert preempted(out) == set() and state(out, "huge") == "pending"
