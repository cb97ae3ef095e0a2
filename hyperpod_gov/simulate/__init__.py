"""What-if simulator: Kueue v0.19 admission in flat cohorts, at queue level or over a spec's plan."""

from .engine import PreemptionRecord, QueueResult, Result, WorkloadResult, simulate
from .model import (
    CapacityEvent,
    Event,
    FlavorQuotas,
    NodeGroup,
    Preemption,
    QueueDef,
    ResourceQuota,
    Scenario,
    WorkloadDef,
)
from .scenario import load_scenario, parse_scenario

__all__ = [
    "CapacityEvent",
    "Event",
    "FlavorQuotas",
    "NodeGroup",
    "Preemption",
    "PreemptionRecord",
    "QueueDef",
    "QueueResult",
    "ResourceQuota",
    "Result",
    "Scenario",
    "WorkloadDef",
    "WorkloadResult",
    "load_scenario",
    "parse_scenario",
    "simulate",
]
