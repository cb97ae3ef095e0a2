"""Allocations: what a team owns on one instance type, and how it shares.

Every kind of allocation HyperPod task governance expresses (``ComputeQuotaResourceConfig``): whole instances
(``count``), accelerators, vCPU with memory (CPU types), or MIG partitions of one profile (``partitions``).
The same entry shape caps borrowing in absolute amounts (``sharing.absoluteBorrowLimits``).
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, model_validator

from ._base import SpecModel, spec_error
from .instance_types import InstanceTypeRef, MigProfileName
from .types import DEFAULT_BORROW_LIMIT_PERCENT

AllocationKind = Literal["count", "accelerators", "vcpu", "partitions"]


class Partitions(SpecModel):
    """MIG partitions of one profile (the instance type's GPUs must be partitioned into it: instanceGroups[].mig)."""

    profile: MigProfileName = Field(description="MIG profile as HyperPod names it, e.g. mig-1g.10gb.")
    count: int = Field(ge=1, le=10_000_000, description="Number of partitions.")


class Allocation(SpecModel):
    """An amount on one instance type: exactly one of count, accelerators, vcpu with memoryGib, or partitions."""

    instance_type: InstanceTypeRef = Field(description="Instance type of an instance group.")
    count: Optional[int] = Field(default=None, ge=1, le=10_000_000, description="Whole instances.")
    accelerators: Optional[int] = Field(
        default=None, ge=1, le=10_000_000, description="Accelerators (GPUs, Neuron devices)."
    )
    vcpu: Optional[int] = Field(
        default=None, ge=1, le=10_000_000, description="vCPUs, with memoryGib (types without accelerators)."
    )
    memory_gib: Optional[int] = Field(
        default=None, ge=1, le=10_000_000, description="Memory in GiB, with vcpu (types without accelerators)."
    )
    partitions: Optional[Partitions] = Field(
        default=None,
        description="MIG partitions, e.g. {profile: mig-1g.10gb, count: 14}; needs an instance group of this type "
        "whose GPUs are partitioned into that profile (instanceGroups[].mig).",
    )

    @model_validator(mode="after")
    def _one_amount(self) -> "Allocation":
        if (self.vcpu is None) != (self.memory_gib is None):
            missing = "memoryGib" if self.memory_gib is None else "vcpu"
            raise spec_error(
                "gives one of vcpu and memoryGib",
                f"add {missing}: N (vCPU and memory are allocated together, as HyperPod does)",
            )
        given = [k for k in ("count", "accelerators", "vcpu", "partitions") if getattr(self, k) is not None]
        if len(given) != 1:
            raise spec_error(
                "needs exactly one of count, accelerators, vcpu with memoryGib, or partitions"
                + (f" (gives {' and '.join(given)})" if given else ""),
                "write count: N for whole instances, accelerators: N for GPUs/Neuron devices, vcpu: N with "
                "memoryGib: M for CPU types, or partitions: {profile: mig-1g.10gb, count: N} for MIG",
            )
        return self

    @property
    def kind(self) -> AllocationKind:
        if self.count is not None:
            return "count"
        if self.accelerators is not None:
            return "accelerators"
        if self.vcpu is not None:
            return "vcpu"
        return "partitions"


class QuotaEntry(Allocation):
    """Capacity a team owns on one instance type: whole instances, accelerators, vCPU and memory, or partitions."""


class BorrowLimit(Allocation):
    """The most a team may borrow on one instance type, in absolute amounts (``AbsoluteBorrowLimits``)."""


class Sharing(SpecModel):
    """Whether a team lends its idle capacity and borrows others'."""

    strategy: Literal["Lend", "DontLend", "LendAndBorrow"] = Field(
        default="LendAndBorrow",
        description="Lend: lends idle capacity, never borrows. DontLend: neither. "
        "LendAndBorrow (default): both, up to borrowLimitPercent.",
    )
    borrow_limit_percent: Optional[int] = Field(
        default=None,
        description="Only with LendAndBorrow: the most a team may borrow, as a percentage of what it owns, "
        f"1..500 (default: {DEFAULT_BORROW_LIMIT_PERCENT}, HyperPod's own default).",
    )
    absolute_borrow_limits: tuple[BorrowLimit, ...] = Field(
        default=(),
        max_length=15,
        description="Only with LendAndBorrow: per instance type, the most the team may borrow in absolute amounts "
        "({instanceType, accelerators | count | vcpu + memoryGib | partitions}); on a type listed here this cap "
        "replaces borrowLimitPercent, and it lets a team borrow on a type it owns nothing of "
        "(ResourceSharingConfig.AbsoluteBorrowLimits; Kueue borrowingLimit). Default: none.",
    )

    @property
    def effective_borrow_limit_percent(self) -> int:
        """The percentage of owned capacity this team may borrow on top (0 when it cannot borrow)."""
        if self.strategy != "LendAndBorrow":
            return 0
        return DEFAULT_BORROW_LIMIT_PERCENT if self.borrow_limit_percent is None else self.borrow_limit_percent
