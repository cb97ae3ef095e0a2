"""How the cluster schedules and shares work: mode, idle compute, priority classes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ._base import SpecModel, check_label
from .types import MAX_NAME


class PriorityClass(SpecModel):
    """A class of work; higher weight goes first and may preempt lower."""

    name: str = Field(description="DNS-1123 label, at most 40 characters.")
    weight: int = Field(ge=0, le=100, description="0..100, 100 is the highest priority.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="priority class name", max_len=MAX_NAME)


class Scheduler(SpecModel):
    """How the cluster schedules and shares work."""

    mode: Literal["task-governance", "kueue"] = Field(
        default="task-governance",
        description="task-governance (default): the managed HyperPod feature; kueue: open-source Kueue objects.",
    )
    idle_compute: Literal["fair-share", "first-come-first-serve"] = Field(
        default="fair-share",
        description="How idle capacity is handed out while idleResourceSharing is on (default: fair-share, by "
        "fairShareWeight; SchedulerConfig.FairShare).",
    )
    idle_resource_sharing: bool = Field(
        default=True,
        description="Whether teams may borrow capacity others leave idle at all (SchedulerConfig.IdleResourceSharing; "
        "default: true). idleCompute says how idle capacity is handed out when it is shared (fair-share or "
        "first-come-first-serve); false switches sharing off for every team whatever its sharing strategy: each "
        "team runs on what it owns alone (kueue mode: every borrowingLimit is 0).",
    )
    priority_classes: tuple[PriorityClass, ...] = Field(
        default=(),
        max_length=10,
        description="At most 10. Work without a class has priority 0, the lowest (default: none).",
    )
    task_governance_resources: Literal["auto", "native", "custom-resource"] = Field(
        default="auto",
        description="How the cluster policy and compute quotas are deployed in task-governance mode. auto (default): "
        "the native CloudFormation types (AWS::SageMaker::ClusterSchedulerConfig, ComputeQuota) where the region's "
        "CloudFormation has them, an SDK-backed custom resource with the same properties elsewhere; native or "
        "custom-resource force one. `hyperpod-gov explain` says which was chosen.",
    )
