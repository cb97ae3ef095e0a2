"""The whole governance plan: every team, flavor and priority class, sorted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import catalog
from ..spec.models import GovernanceSpec
from . import names
from .quotas import TeamPlan, capacity, plan_shared_pool, plan_team


@dataclass(frozen=True)
class PriorityClassPlan:
    name: str  # as in the spec
    kueue_name: str  # WorkloadPriorityClass name
    weight: int


@dataclass(frozen=True)
class FlavorPlan:
    name: str
    instance_type: str
    instances: int
    accelerator_kind: Optional[str]


@dataclass(frozen=True)
class GovernancePlan:
    cohort: str
    fair_sharing: bool
    teams: tuple[TeamPlan, ...]  # sorted by name; the shared pool, if any, included
    flavors: tuple[FlavorPlan, ...]  # sorted by name
    priority_classes: tuple[PriorityClassPlan, ...]  # sorted by name
    covered_resources: tuple[str, ...]  # Kueue coveredResources, one resource group for all flavors

    def team(self, name: str) -> TeamPlan:
        for t in self.teams:
            if t.name == name:
                return t
        raise KeyError(name)


def covered_resources(flavor_kinds: list[Optional[str]]) -> tuple[str, ...]:
    """cpu, memory, then each accelerator resource used in the cluster (sorted)."""
    return ("cpu", "memory", *sorted({k for k in flavor_kinds if k}))


def build_plan(spec: GovernanceSpec) -> GovernancePlan:
    """Derive the governance plan from a validated spec."""
    teams = [plan_team(spec, t) for t in spec.teams]
    pool = plan_shared_pool(spec)
    if pool is not None:
        teams.append(pool)
    flavors = tuple(
        FlavorPlan(names.flavor(t), t, n, catalog.lookup(t).accelerator_kind) for t, n in capacity(spec).items()
    )
    return GovernancePlan(
        cohort=names.cohort(spec.name),
        fair_sharing=spec.scheduler.idle_compute == "fair-share",
        teams=tuple(sorted(teams, key=lambda t: t.name)),
        flavors=flavors,
        priority_classes=tuple(
            sorted(
                (PriorityClassPlan(p.name, names.priority_class(p.name), p.weight) for p in spec.scheduler.priority_classes),
                key=lambda p: p.name,
            )
        ),
        covered_resources=covered_resources([f.accelerator_kind for f in flavors]),
    )
