"""Properties over random scenarios (fixed seeds): quota limits hold after every cycle, bookkeeping stays
equal to a recount, runs are deterministic and independent of input order, and at a fixed point every
pending workload that would fit has a stated reason."""

from __future__ import annotations

import json
import random
from collections import defaultdict

import pytest

from hyperpod_gov.simulate import parse_scenario
from hyperpod_gov.simulate.engine import Engine, _available
from hyperpod_gov.simulate.report import result_json

SEEDS = range(100)


def random_scenario(seed: int) -> dict:
    rng = random.Random(seed)
    flavors = ["f1", "f2"][: rng.randint(1, 2)]
    queues = []
    for i in range(rng.randint(2, 4)):
        cohort = "all" if rng.random() < 0.85 else None
        fl = []
        for f in flavors:
            res = {}
            for r in ("cpu", "gpu"):
                q = {"nominal": rng.randint(0, 8)}
                if cohort and rng.random() < 0.4:
                    q["borrowingLimit"] = rng.randint(0, 6)
                if cohort and rng.random() < 0.4:
                    q["lendingLimit"] = rng.randint(0, q["nominal"])
                res[r] = q
            fl.append({"name": f, "resources": res})
        q = {"name": f"q{i}", "flavors": fl,
             "queueingStrategy": rng.choice(["BestEffortFIFO", "BestEffortFIFO", "StrictFIFO"]),
             "fairSharingWeight": rng.choice([0, 1, 1, 2]),
             "preemption": {
                 "withinClusterQueue": rng.choice(["Never", "LowerPriority", "LowerOrNewerEqualPriority"]),
                 "reclaimWithinCohort": rng.choice(["Never", "LowerPriority", "Any"]),
                 "borrowWithinCohort": {"policy": rng.choice(["Never", "LowerPriority"]),
                                        "maxPriorityThreshold": rng.choice([None, 0, 1])}},
             "flavorFungibility": {"whenCanBorrow": rng.choice(["MayStopSearch", "TryNextFlavor"]),
                                   "whenCanPreempt": rng.choice(["MayStopSearch", "TryNextFlavor"])}}
        if cohort:
            q["cohort"] = cohort
        queues.append(q)
    workloads, events = [], []
    for j in range(rng.randint(4, 25)):
        w = {"name": f"w{j:02d}", "queue": rng.choice(queues)["name"], "priority": rng.randint(-1, 2),
             "requests": {"cpu": rng.randint(1, 6), **({"gpu": rng.randint(1, 4)} if rng.random() < 0.6 else {})},
             "created": rng.randint(0, 50)}
        if rng.random() < 0.8:
            w["duration"] = rng.randint(10, 200)
        if rng.random() < 0.5:
            workloads.append(w)
        else:
            at = w.pop("created") + rng.randint(0, 100)
            events.append({"at": at, "submit": w})
    return {"fairSharing": rng.random() < 0.5, "queues": queues, "workloads": workloads, "events": events,
            "preemptionStrategies": rng.choice([["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
                                                ["LessThanInitialShare"], ["LessThanOrEqualToFinalShare"]])}


class CheckedEngine(Engine):
    """Checks the invariants after every scheduling cycle, and the fixed-point property after every time step."""

    def run_cycle(self):
        out = super().run_cycle()
        check_quota(self)
        return out

    def _cycles_to_fixed_point(self):
        ok = super()._cycles_to_fixed_point()
        if self.fixed_point:
            check_fixed_point(self)
        return ok


def check_quota(e: Engine) -> None:
    for cohort in e.cohorts.values():
        recount = defaultdict(int)
        for cq in cohort.cqs:
            for fr, v in cq.usage.items():
                recount[fr] += max(0, v - cq.lq.get(fr, 0))
        assert {k: v for k, v in recount.items() if v} == {k: v for k, v in cohort.usage.items() if v}, \
            "incremental cohort usage differs from a recount"
    for cq in e.cq_order:
        held = defaultdict(int)
        for w in cq.admitted.values():
            for fr, v in w.usage.items():
                held[fr] += v
        assert {k: v for k, v in held.items() if v} == {k: v for k, v in cq.usage.items() if v}
        for fr, v in cq.usage.items():
            nominal = cq.nominal.get(fr, 0)
            if cq.cohort is None:
                assert v <= nominal, f"{cq.name} {fr}: {v} above nominal {nominal}"
            elif cq.bl.get(fr) is not None:
                assert v <= nominal + cq.bl[fr], f"{cq.name} {fr}: {v} above nominal + borrowingLimit"
    for cohort in e.cohorts.values():
        frs = {fr for cq in cohort.cqs for fr in cq.nominal}
        for fr in frs:
            total = sum(cq.usage[fr] for cq in cohort.cqs)
            assert total <= sum(cq.nominal.get(fr, 0) for cq in cohort.cqs), f"cohort over-admitted on {fr}"
            for lender in cohort.cqs:
                ll = lender.ll.get(fr)
                if ll is None:
                    continue
                others = [cq for cq in cohort.cqs if cq is not lender]
                used = sum(cq.usage[fr] for cq in others)
                assert used <= sum(cq.nominal.get(fr, 0) for cq in others) + ll, \
                    f"{lender.name} lent more than its lendingLimit on {fr}"


def check_fixed_point(e: Engine) -> None:
    for w in e.wls.values():
        if w.state != "pending":
            continue
        fits = any(all(v <= _available(w.cq, (f, r)) for r, v in w.requests) for f in w.cq.flavors)
        if fits:
            assert w.pending_reason and not w.pending_reason.startswith("not yet"), (w.name, w.pending_reason)
            assert w.where == "inadmissible" or "reserved" in w.pending_reason or "behind" in w.pending_reason, \
                f"{w.name} fits but waits: {w.pending_reason}"


@pytest.mark.parametrize("seed", SEEDS)
def test_random_scenario_keeps_every_limit_and_is_deterministic(seed):
    data = random_scenario(seed)
    first = CheckedEngine(parse_scenario(data)).run()
    second = Engine(parse_scenario(data)).run()
    assert json.dumps(result_json(first)) == json.dumps(result_json(second))
    # Reordering queues and workloads in the file changes nothing (ties are broken by name).
    shuffled = dict(data, queues=list(reversed(data["queues"])), workloads=list(reversed(data["workloads"])))
    third = Engine(parse_scenario(shuffled)).run()
    assert json.dumps(result_json(first)) == json.dumps(result_json(third))
    for w in first.workloads:
        if w.state == "pending":
            assert w.pending_reason


def test_random_scenarios_exercise_preemption_and_borrowing():
    """The generator is not vacuous: across the seeds, workloads borrow, preempt and stay pending."""
    reasons, borrowed, pending = set(), 0, 0
    for seed in SEEDS:
        r = Engine(parse_scenario(random_scenario(seed))).run()
        reasons |= {p.reason for p in r.preemptions}
        borrowed += sum(1 for w in r.workloads if w.borrowing)
        pending += sum(1 for w in r.workloads if w.state == "pending")
    assert {"InClusterQueue", "InCohortReclamation", "InCohortFairSharing"} <= reasons
    assert borrowed and pending
