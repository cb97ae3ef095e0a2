"""The preemptor: which workloads a head would evict, and what that means for flavor assignment.

Mirrors ``Preemptor.GetTargets`` of ``pkg/scheduler/preemption/preemption.go`` (classic or fair-sharing
preemption, by the configuration) and ``pkg/scheduler/preemption/preemption_oracle.go``
(PreemptionOracle.SimulatePreemption) of kubernetes-sigs/kueue v0.19.2.
"""

from __future__ import annotations

from ..model import FairSharingStrategy
from ..cache import ClusterQueue, Workload
from ..flavorassigner import NO_CANDIDATES, PREEMPT, RECLAIM
from ..resource_node import lowest_subtree, put_back, take_out
from ..results import FR
from .classical import classical_preemptions
from .fairsharing import fair_preemptions


class Preemptor:
    """Preemption as configured: fair sharing on or off, and its strategies (Kueue's ``fairSharing`` config)."""

    def __init__(self, fair: bool, strategies: tuple[FairSharingStrategy, ...]):
        self.fair = fair
        self.strategies = strategies
        self.answers: dict = {}
        # Whether a fair-sharing search since new_state() ran the strategies (read other queues' shares).
        self.shares_read: list = []
        self.found_any = False  # whether a search since new_state() found targets

    def new_state(self) -> None:
        """Forget the answers given so far: the quota state they were computed in is about to change.

        Within one nomination the state does not change, and a workload asking only for the resource the
        oracle simulates asks the same question twice (oracle, then targets): it is answered once.
        """
        self.answers.clear()
        self.shares_read.clear()
        self.found_any = False

    def get_targets(self, wl: Workload, frs: set[FR], usage: dict[FR, int]) -> list[tuple[Workload, str]]:
        """Preemptor.GetTargets: the victims (with Kueue's reason each) that let ``usage`` fit, or none."""
        key = (wl.name, frozenset(frs), frozenset(usage.items()))
        found = self.answers.get(key)
        if found is None:
            if self.fair:
                found = fair_preemptions(wl, frs, usage, self.strategies, self.shares_read)
            else:
                found = classical_preemptions(wl, frs, usage)
            self.answers[key] = found
        if found:
            self.found_any = True
        return found

    def simulate_preemption(self, wl: Workload, fr: FR, val: int) -> tuple[int, int]:
        """PreemptionOracle.SimulatePreemption: (mode, borrowing level after the preemptions)."""
        cq = wl.cq
        targets = self.get_targets(wl, {fr}, {fr: val})
        if not targets:
            return NO_CANDIDATES, lowest_subtree(cq, fr, val)[0]
        victims = [t for t, _ in targets]
        for t in victims:
            take_out(t)
        after = lowest_subtree(cq, fr, val)[0]
        for t in victims:
            put_back(t)
        same = any(t.cq is cq for t in victims)
        return (PREEMPT if same else RECLAIM), after

    def can_preempt_while_borrowing(self, cq: ClusterQueue) -> bool:
        """Whether the queue may preempt to fit a request it would borrow for (fitsResourceQuota)."""
        p = cq.d.preemption
        return p.borrow_within_cohort != "Never" or (self.fair and p.reclaim_within_cohort != "Never")
