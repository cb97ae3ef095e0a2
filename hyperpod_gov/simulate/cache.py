"""The scheduler's view of the cluster: cohorts, ClusterQueues and workloads with their quota state.

Mirrors ``pkg/cache/scheduler/cohort_snapshot.go`` and ``clusterqueue_snapshot.go`` (kubernetes-sigs/kueue
v0.19.2) for a flat cohort, and ``pkg/workload/workload.go`` (``Info``, ``computeSchedulingHash``) for a
workload with one pod set. The quota arithmetic over these objects is in :mod:`.resource_node`; the queues
of pending workloads are in :mod:`.queue`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Optional

from .model import QueueDef, WorkloadDef
from .results import FR


class Cohort:
    """CohortSnapshot of a flat cohort: what its members lend (SubtreeQuota) and use of it."""

    __slots__ = ("name", "cqs", "subtree", "usage", "lendable", "generation", "borrowers", "flavor_commits",
                 "borrower_commits", "borrowers_cache", "borrowers_changes")

    def __init__(self, name: str):
        self.name = name
        self.cqs: list[ClusterQueue] = []
        self.subtree: dict[FR, int] = defaultdict(int)  # SubtreeQuota: what the members lend
        self.usage: dict[FR, int] = defaultdict(int)  # what the members use of it
        self.lendable: dict[str, int] = defaultdict(int)  # per resource name, over all flavors
        self.generation = 0
        self.borrowers: dict[FR, set] = defaultdict(set)  # (flavor, resource) -> queues using more than nominal
        self.flavor_commits: dict[str, int] = defaultdict(int)  # per flavor: admissions and releases of members
        # Per (flavor, resource): the commits of the queues in borrowers[fr], summed (for memo.py).
        self.borrower_commits: dict[FR, int] = defaultdict(int)
        self.borrowers_cache: dict[frozenset, list] = {}  # preemption.common.borrowers; emptied on a change
        self.borrowers_changes: dict[FR, int] = defaultdict(int)  # per (flavor, resource): joins and leaves


class Workload:
    """workload.Info plus the simulator's own bookkeeping (queue position, results so far)."""

    __slots__ = (
        "d", "name", "priority", "created", "requests", "cq", "state", "flavor", "usage", "admitted_at",
        "borrowing", "preempted_count", "preempting_count", "submitted_at", "first_admitted_at", "run_seconds",
        "pending_reason", "token", "finish_token", "last_tried", "last_cycle", "last_generation", "where", "hash",
        "cand_key", "klass", "scans",
    )

    def __init__(self, d: WorkloadDef, cq: "ClusterQueue", submitted_at: float):
        self.d = d
        self.name = d.name
        self.priority = d.priority
        self.created = d.created
        self.requests = d.requests
        self.cq = cq
        self.state = "pending"
        self.flavor: Optional[str] = None
        self.usage: dict[FR, int] = {}
        self.admitted_at: Optional[float] = None
        self.borrowing = False
        self.preempted_count = 0
        self.preempting_count = 0
        self.submitted_at = submitted_at
        self.first_admitted_at: Optional[float] = None
        self.run_seconds = 0.0
        self.pending_reason = "not yet considered by a scheduling cycle"
        self.token = 0
        self.finish_token = 0
        self.last_tried: Optional[int] = None  # LastAssignment.LastTriedFlavorIdx (one pod set, one group)
        self.last_cycle = 0
        self.last_generation = 0
        self.where = ""  # active | inadmissible | '' (admitted or finished)
        # workload.computeSchedulingHash: priority, requests and pod spec shape (here: the allowed flavors).
        self.hash = (d.priority, d.requests, d.allowed_flavors)
        self.cand_key: tuple = ()  # CandidatesOrdering after the queue test, set on admission
        self.klass: Optional[int] = None  # its equivalence class in the nomination memo (memo.py)
        self.scans: dict[int, tuple] = {}  # flavor assignment's scan from each start (flavorassigner.py)


class ClusterQueue:
    """ClusterQueueSnapshot with one resource group, and its queue of pending workloads."""

    __slots__ = (
        "d", "name", "cohort", "flavors", "nominal", "bl", "ll", "lq", "usage", "weight", "strict",
        "admitted", "heap", "inadmissible", "pw", "covered", "last_t", "usage_s", "borrowed_s", "ver", "drs_cache",
        "quota_list", "bulk", "on_flavor", "on_cache", "over_r", "over", "commits", "limits", "reasons",
        "share_cache", "borrowing",
    )

    def __init__(self, d: QueueDef, cohort: Optional[Cohort]):
        self.d = d
        self.name = d.name
        self.cohort = cohort
        self.flavors = [f.name for f in d.flavors]
        self.covered = set(d.covered_resources)
        self.nominal: dict[FR, int] = {}
        self.bl: dict[FR, Optional[int]] = {}
        self.ll: dict[FR, Optional[int]] = {}
        self.lq: dict[FR, int] = {}
        for f in d.flavors:
            for r, q in f.resources:
                fr = (f.name, r)
                self.nominal[fr] = q.nominal
                self.bl[fr] = q.borrowing_limit
                self.ll[fr] = q.lending_limit
                # resourceNode.localQuota: what the queue keeps for itself.
                self.lq[fr] = max(0, q.nominal - q.lending_limit) if q.lending_limit is not None else 0
        self.usage: dict[FR, int] = defaultdict(int)
        self.weight = d.fair_sharing_weight
        self.strict = d.queueing_strategy == "StrictFIFO"
        self.admitted: dict[str, Workload] = {}
        self.heap: list = []
        self.inadmissible: dict[str, Workload] = {}
        self.pw: Optional[Workload] = None  # preemptorWorkload of pkg/cache/queue/cluster_queue.go
        self.last_t = 0.0
        self.usage_s: dict[FR, float] = defaultdict(float)
        self.borrowed_s: dict[FR, float] = defaultdict(float)
        self.ver = 0  # bumped on every usage change: keys the cached dominant resource share
        self.drs_cache: Optional[tuple] = None
        self.quota_list = [(fr, fr[1], n) for fr, n in self.nominal.items()]
        # Kept by resource_node.add_usage/remove_usage for the dominant resource share: per resource name,
        # the usage above nominal summed over the flavors; and the (flavor, resource)s above nominal.
        self.over_r: dict[str, int] = {fr[1]: 0 for fr in self.nominal}
        self.over: set[FR] = set()
        self.bulk: set = set()  # hashToBulkMoveReason: equivalence classes parked as inadmissible
        self.on_flavor: dict[str, dict[str, Workload]] = defaultdict(dict)  # admitted workloads by flavor
        self.on_cache: dict = {}  # frozenset of (flavor, resource) -> its admitted users; emptied on change
        self.commits = 0  # admissions and releases so far
        self.borrowing: set[FR] = set()  # the (flavor, resource)s where the cohort counts it a borrower
        # Per (flavor, resource), what the quota arithmetic reads that never changes once the cohort is built:
        # see resource_node.limits.
        self.limits: dict[FR, tuple] = {}
        self.reasons: dict[tuple, str] = {}  # flavor assignment's reason texts, each formatted once
        self.share_cache: dict[tuple, tuple] = {}  # the fair ordering's keys (ordering.py), by version


def build(queues: tuple[QueueDef, ...]) -> tuple[dict[str, Cohort], dict[str, ClusterQueue]]:
    """The cohorts and ClusterQueues of a scenario, each cohort's SubtreeQuota summed from its members
    (``resource_node.go`` accumulateFromChild). Both maps are in name order."""
    cohorts: dict[str, Cohort] = {}
    cqs: dict[str, ClusterQueue] = {}
    for q in sorted(queues, key=lambda q: q.name):
        co = None
        if q.cohort:
            co = cohorts.setdefault(q.cohort, Cohort(q.cohort))
        cq = ClusterQueue(q, co)
        cqs[q.name] = cq
        if co is not None:
            co.cqs.append(cq)
            for fr, nominal in cq.nominal.items():
                lends = nominal - cq.lq[fr]
                co.subtree[fr] += lends
                co.lendable[fr[1]] += lends
    return cohorts, cqs
