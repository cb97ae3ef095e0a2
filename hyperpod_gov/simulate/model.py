"""What the simulator reads: Kueue queues and workloads as frozen values.

Amounts are whole numbers in a resource's base unit: ``cpu`` in millicores,
``memory`` (and any resource written with a binary or decimal suffix) in
bytes, other resources (accelerators, pods) in units. Times are seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

WithinPolicy = Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"]
ReclaimPolicy = Literal["Never", "LowerPriority", "Any"]
BorrowPolicy = Literal["Never", "LowerPriority"]
QueueingStrategy = Literal["BestEffortFIFO", "StrictFIFO"]
FairSharingStrategy = Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]

DEFAULT_STRATEGIES: tuple[FairSharingStrategy, ...] = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")


@dataclass(frozen=True)
class ResourceQuota:
    """One resource of one flavor in a ClusterQueue; ``None`` limits mean Kueue's default (unlimited / lends all)."""

    nominal: int
    borrowing_limit: Optional[int] = None
    lending_limit: Optional[int] = None


@dataclass(frozen=True)
class FlavorQuotas:
    """A flavor of the queue's single resource group, with its quota per resource."""

    name: str
    resources: tuple[tuple[str, ResourceQuota], ...]  # in the order given

    def quota(self, resource: str) -> Optional[ResourceQuota]:
        for name, q in self.resources:
            if name == resource:
                return q
        return None


@dataclass(frozen=True)
class Preemption:
    """ClusterQueue ``spec.preemption``; defaults are Kueue's."""

    within_cluster_queue: WithinPolicy = "Never"
    reclaim_within_cohort: ReclaimPolicy = "Never"
    borrow_within_cohort: BorrowPolicy = "Never"
    max_priority_threshold: Optional[int] = None


@dataclass(frozen=True)
class FlavorFungibility:
    """ClusterQueue ``spec.flavorFungibility``; defaults are Kueue's."""

    when_can_borrow: Literal["MayStopSearch", "TryNextFlavor"] = "MayStopSearch"
    when_can_preempt: Literal["MayStopSearch", "TryNextFlavor"] = "TryNextFlavor"


@dataclass(frozen=True)
class QueueDef:
    """A ClusterQueue."""

    name: str
    cohort: Optional[str] = None
    fair_sharing_weight: float = 1.0
    queueing_strategy: QueueingStrategy = "BestEffortFIFO"
    preemption: Preemption = field(default_factory=Preemption)
    flavor_fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)
    flavors: tuple[FlavorQuotas, ...] = ()
    # spec.stopPolicy Hold (or HoldAndDrain): the queue admits nothing; its quota stays in the cohort.
    stopped: bool = False

    @property
    def covered_resources(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for f in self.flavors:
            for r, _ in f.resources:
                seen[r] = None
        return tuple(seen)


@dataclass(frozen=True)
class WorkloadDef:
    """A workload with one pod set; ``requests`` is its total request."""

    name: str
    queue: str
    requests: tuple[tuple[str, int], ...]
    priority: int = 0
    created: float = 0
    duration: Optional[float] = None  # seconds it runs once admitted; None: to the end
    admitted_flavor: Optional[str] = None  # already admitted when the run starts
    admitted_at: float = 0
    # Flavors the pods may land on (node selector); None: any flavor of the queue.
    allowed_flavors: Optional[tuple[str, ...]] = None
    # Free-form label carried to the results (the spec level keeps the team and instance type here).
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Event:
    """Something that happens at a time: a running workload finishes, or a workload is submitted."""

    at: float
    finish: Optional[str] = None
    submit: Optional[WorkloadDef] = None


@dataclass(frozen=True)
class Scenario:
    """Everything one simulation run needs."""

    queues: tuple[QueueDef, ...]
    workloads: tuple[WorkloadDef, ...] = ()
    events: tuple[Event, ...] = ()
    fair_sharing: bool = False
    preemption_strategies: tuple[FairSharingStrategy, ...] = DEFAULT_STRATEGIES
    until: Optional[float] = None
