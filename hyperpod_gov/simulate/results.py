"""What a run returns: per workload, per preemption and per queue, as frozen values.

The fields follow what Kueue reports in its objects' status (``apis/kueue/v1beta2/workload_types.go``,
``clusterqueue_types.go``: admission, ``status.fairSharing.weightedShare``) plus what a what-if needs over
time (wait, run time, usage integrals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Optional

FR = tuple[str, str]  # (flavor, resource)


@dataclass(frozen=True)
class PreemptionRecord:
    """One eviction: when, in which cycle, who was evicted for whom, and Kueue's reason."""

    at: float
    cycle: int
    victim: str
    preemptor: str
    reason: str


@dataclass(frozen=True)
class WorkloadResult:
    """One workload at the end of the run."""

    name: str
    queue: str
    state: str  # admitted | pending | finished
    flavor: Optional[str]
    admitted_at: Optional[float]
    borrowing: bool
    preempted_count: int
    preempting_count: int
    submitted_at: float
    first_admitted_at: Optional[float]
    run_seconds: float  # time it held quota, over all its runs
    pending_reason: str  # why it waits at the end ('' unless pending)
    priority: int
    requests: tuple[tuple[str, int], ...]
    labels: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class QueueResult:
    """One ClusterQueue at the end of the run."""

    name: str
    usage: tuple[tuple[FR, int], ...]  # at the end, every (flavor, resource) of the queue
    nominal: tuple[tuple[FR, int], ...]
    weighted_share: int  # Kueue's status.fairSharing.weightedShare
    usage_seconds: tuple[tuple[FR, float], ...]  # integral of usage over time
    borrowed_seconds: tuple[tuple[FR, float], ...]  # integral of usage above nominal over time


@dataclass(frozen=True)
class CapacityEviction:
    """A workload evicted because nodes it ran on left (a capacity loss, not a Kueue preemption)."""

    at: float
    workload: str
    queue: str
    flavor: str
    group: str  # the node group that lost the nodes


@dataclass(frozen=True)
class ScaleUp:
    """Nodes the autoscaler asked for at ``at`` for work waiting for nodes; Ready at ``ready``."""

    at: float
    ready: float
    group: str
    flavor: str
    nodes: int


@dataclass(frozen=True)
class WorkloadNodes:
    """One workload on the nodes, at the end of a run with node groups."""

    name: str
    started_at: Optional[float]  # when its current run started on nodes; None: not running now
    first_started_at: Optional[float]  # its first start on nodes (the end of its wait)
    node_seconds: float  # time it ran on nodes, over all its runs
    capacity_evictions: int  # times nodes it ran on left under it
    waiting_for_nodes: bool  # admitted (holds quota) but no node holds it at the end
    rewait_seconds: float = 0.0  # from each eviction by lost nodes to its next start (or the end of the run)


@dataclass(frozen=True)
class NodesResult:
    """What the node groups did in a run (only runs with node groups have one)."""

    workloads: tuple[WorkloadNodes, ...]  # sorted by name
    evictions: tuple[CapacityEviction, ...]  # in the order they happened
    scale_ups: tuple[ScaleUp, ...]  # in the order they were asked for
    groups: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # group -> nodes per flavor at the end

    def of(self, name: str) -> Optional[WorkloadNodes]:
        return self._by_name.get(name)

    @cached_property
    def _by_name(self) -> dict[str, WorkloadNodes]:
        return {w.name: w for w in self.workloads}


@dataclass(frozen=True)
class Result:
    """A whole run."""

    workloads: tuple[WorkloadResult, ...]  # sorted by name
    preemptions: tuple[PreemptionRecord, ...]  # in the order they happened
    queues: tuple[QueueResult, ...]  # sorted by name
    cycles: int
    end: float
    timeline: tuple[str, ...]
    fixed_point: bool  # False if --cycles or the safety cap stopped a time step early
    # The nodes' part of a run with node groups; None without. Left out of repr so that a run without node
    # groups prints (and digests, bench/simulate_bench.py) exactly as before the nodes existed.
    nodes: Optional[NodesResult] = field(default=None, repr=False)


def show_time(x: float) -> str:
    """A time in the timeline: whole seconds without a decimal point."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
