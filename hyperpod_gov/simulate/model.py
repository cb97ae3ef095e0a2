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
class NodeGroup:
    """Nodes that host admitted workloads (the simulator's own; Kueue knows only quota). Without any node group
    a run is Kueue's alone: quota is the only limit. See :mod:`.nodes` for what the nodes change."""

    name: str
    # Flavor -> what one node of it brings, per resource; a group of several flavors (a flexible instance group)
    # lists them in its order of preference.
    per_node: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]
    count: int  # the most nodes the group holds (InstanceCount, or the autoscaler's limit)
    present: int  # nodes at t=0, all of its first flavor
    autoscale: bool = False  # the autoscaler adds nodes (up to count) when admitted work waits for them

    @property
    def flavors(self) -> tuple[str, ...]:
        return tuple(f for f, _ in self.per_node)


@dataclass(frozen=True)
class CapacityEvent:
    """At ``at``, ``delta`` nodes join (positive) or leave (negative: a Spot interruption) ``group``, or the
    groups of ``flavor`` in the scenario's order when ``group`` is None. With a group, ``flavor`` says which of
    its flavors (None: its first one to add to, each in its order to take from)."""

    at: float
    group: Optional[str]
    delta: int
    flavor: Optional[str] = None


# What the autoscaler takes from "a workload waits for nodes" to "the nodes are Ready", unless stated.
DEFAULT_SCALE_UP_DELAY = 600.0


@dataclass(frozen=True)
class Scenario:
    """Everything one simulation run needs."""

    queues: tuple[QueueDef, ...]
    workloads: tuple[WorkloadDef, ...] = ()
    events: tuple[Event, ...] = ()
    fair_sharing: bool = False
    preemption_strategies: tuple[FairSharingStrategy, ...] = DEFAULT_STRATEGIES
    until: Optional[float] = None
    # The capacity timeline (optional): node groups, what joins and leaves when, the autoscaler's delay.
    node_groups: tuple[NodeGroup, ...] = ()
    capacity: tuple[CapacityEvent, ...] = ()
    scale_up_delay: float = DEFAULT_SCALE_UP_DELAY
