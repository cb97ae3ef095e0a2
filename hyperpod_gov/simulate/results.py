"""What a run returns: per workload, per preemption and per queue, as frozen values.

The fields follow what Kueue reports in its objects' status (``apis/kueue/v1beta2/workload_types.go``,
``clusterqueue_types.go``: admission, ``status.fairSharing.weightedShare``) plus what a what-if needs over
time (wait, run time, usage integrals).
"""

from __future__ import annotations

from dataclasses import dataclass
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
class Result:
    """A whole run."""

    workloads: tuple[WorkloadResult, ...]  # sorted by name
    preemptions: tuple[PreemptionRecord, ...]  # in the order they happened
    queues: tuple[QueueResult, ...]  # sorted by name
    cycles: int
    end: float
    timeline: tuple[str, ...]
    fixed_point: bool  # False if --cycles or the safety cap stopped a time step early


def show_time(x: float) -> str:
    """A time in the timeline: whole seconds without a decimal point."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
