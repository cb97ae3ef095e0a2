"""Kueue amounts: one value type for accelerators, vCPU, memory and MIG partitions on an instance type, and the
amounts of a spec allocation (``plan/quotas.py`` plans the teams' quotas in them; ``plan/storage.py`` the dedicated
groups')."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import catalog as catalog_module
from ..catalog import Catalog
from ..spec.allocation import Allocation
from ..spec.instance_types import allocation_units


@dataclass(frozen=True, order=True)
class Amounts:
    """Accelerators, vCPU, memory (GiB) and MIG partitions on one instance type.

    ``partitions``: (extended resource, count) per MIG profile, e.g. (("nvidia.com/mig-1g.10gb", 14),); whole
    GPUs of a partitioned group are not ``accelerators`` (its nodes offer only the partitions).
    """

    accelerators: int
    vcpu: int
    memory_gib: int
    partitions: tuple[tuple[str, int], ...] = ()

    def percent(self, p: int) -> "Amounts":
        return Amounts(self.accelerators * p // 100, self.vcpu * p // 100, self.memory_gib * p // 100,
                       tuple((r, n * p // 100) for r, n in self.partitions))

    def partition(self, resource: str) -> int:
        """Partitions of one MIG extended resource (``nvidia.com/mig-1g.10gb``), 0 if none."""
        return dict(self.partitions).get(resource, 0)

    def __add__(self, other: "Amounts") -> "Amounts":
        parts: dict[str, int] = dict(self.partitions)
        for r, n in other.partitions:
            parts[r] = parts.get(r, 0) + n
        return Amounts(self.accelerators + other.accelerators, self.vcpu + other.vcpu,
                       self.memory_gib + other.memory_gib, tuple(sorted(parts.items())))

    @property
    def is_zero(self) -> bool:
        return not (self.accelerators or self.vcpu or self.memory_gib or any(n for _, n in self.partitions))


ZERO = Amounts(0, 0, 0)


def governed_units(amounts: Amounts, accelerator_kind: Optional[str], mig_resource: Optional[str]) -> int:
    """``amounts`` in the one unit a quota on the type is counted in: its MIG partitions, else its accelerators,
    else vCPU."""
    if mig_resource:
        return amounts.partition(mig_resource)
    return amounts.accelerators if accelerator_kind else amounts.vcpu


@dataclass(frozen=True)
class Allocated:
    """An amount as the spec gave it (a quota entry or an absolute borrow limit), for the SageMaker API."""

    instance_type: str
    count: Optional[int] = None
    accelerators: Optional[int] = None
    vcpu: Optional[int] = None
    memory_gib: Optional[int] = None
    partition: Optional[tuple[str, int]] = None  # (MIG profile, count), e.g. ("mig-1g.10gb", 14)

    @classmethod
    def of(cls, a: Allocation) -> "Allocated":
        return cls(a.instance_type, a.count, a.accelerators, a.vcpu, a.memory_gib,
                   (a.partitions.profile, a.partitions.count) if a.partitions else None)


def amounts_for(instance_type: str, *, count: int | None = None, accelerators: int | None = None,
                vcpu: int | None = None, memory_gib: int | None = None,
                partition: tuple[str, int] | None = None, mig_profile: str | None = None,
                catalog: Catalog = catalog_module.BASE) -> Amounts:
    """Kueue amounts of one allocation on ``instance_type`` (``spec.instance_types.allocation_units``)."""
    acc, cpu, mem, parts = allocation_units(catalog.lookup(instance_type), count=count, accelerators=accelerators,
                                            vcpu=vcpu, memory_gib=memory_gib, partition=partition,
                                            mig_profile=mig_profile)
    return Amounts(acc, cpu, mem, parts)


def allocation_amounts(a: Allocation | Allocated, *, catalog: Catalog = catalog_module.BASE,
                       mig_profile: str | None = None) -> Amounts:
    """Kueue amounts of a spec allocation (quota entry or absolute borrow limit)."""
    given = a if isinstance(a, Allocated) else Allocated.of(a)
    return amounts_for(given.instance_type, count=given.count, accelerators=given.accelerators, vcpu=given.vcpu,
                       memory_gib=given.memory_gib, partition=given.partition, mig_profile=mig_profile,
                       catalog=catalog)
