"""A fleet's plans: each member's plan (every invariant checked per cluster) and the fleet rules over them all.

``build_fleet(fleet)`` is to a ``FleetSpec`` what ``build_plan`` is to one spec: the members' plans by cluster,
built once, with every invariant error of every member reported together (paths leading into the fleet spec), then
the fleet rules (``plan.fleet_rules``) over the fleet and the plans. The synth, ``explain`` and ``validate`` of a
fleet all start here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Optional

from ..spec import acknowledge, check_spec
from ..spec.errors import SpecError, SpecIssue
from ..spec.fleet import FleetSpec
from .amounts import ZERO, Amounts
from .build import build_plan
from .invariants import plan_warnings
from .model import Plan


@dataclass(frozen=True, eq=False)
class FleetPlan:
    """Each member's plan by cluster name (the spec's order), the fleet spec, and the warnings no member
    acknowledges (spec rules and invariants, mapped to the fleet spec)."""

    fleet: FleetSpec
    plans: dict[str, Plan]
    warnings: tuple[SpecIssue, ...] = ()

    @property
    def name(self) -> str:
        return self.fleet.name


def build_fleet(fleet: FleetSpec, *, today: Optional[dt.date] = None, strict: bool = False) -> FleetPlan:
    """Every member's plan, then the fleet rules. Raises ``SpecError`` with every invariant error of every member
    and every fleet rule error; ``strict``: the warnings no member acknowledges are errors too."""
    from .fleet_rules import FLEET_RULES

    plans: dict[str, Plan] = {}
    errors: list[tuple[str, SpecIssue]] = []
    warnings: list[tuple[str, SpecIssue]] = []
    for cluster, member in fleet.members.items():
        try:
            plan = build_plan(member, base_dir=fleet.source_dir)
        except SpecError as exc:
            errors += [(cluster, i) for i in exc.issues]
            continue
        plans[cluster] = plan
        review = acknowledge([*check_spec(member, today=today or dt.date.today()), *plan_warnings(plan)],
                             member.acknowledgements)
        warnings += [(cluster, w) for w in review.warnings]
    if errors:
        raise SpecError(fleet.fleet_issues(errors))
    found = FLEET_RULES.run(fleet, plans)
    mapped = fleet.fleet_issues(warnings)
    failing = [i for i in found if i.severity == "error"] + (mapped if strict else [])
    if failing:
        raise SpecError(failing)
    return FleetPlan(fleet, plans, tuple(mapped + [i for i in found if i.severity == "warning"]))


@dataclass(frozen=True)
class TeamAllocation:
    """What a team owns across the fleet: per cluster its quota per instance type, and the sums."""

    team: str
    per_cluster: tuple[tuple[str, tuple[tuple[str, Amounts], ...]], ...]  # (cluster, ((instance type, owned), ...))
    total: tuple[tuple[str, Amounts], ...]  # per instance type, summed over the clusters, sorted by type
    accelerators: tuple[tuple[str, int], ...]  # per accelerator kind (nvidia.com/gpu, ...), summed, sorted


def team_allocations(fleet: FleetPlan) -> tuple[TeamAllocation, ...]:
    """Each team's owned quota per cluster (the spec's order) and in total, in the fleet spec's team order."""
    out = []
    for team, clusters in fleet.fleet.team_clusters.items():
        per_cluster = []
        total: dict[str, Amounts] = {}
        kinds: dict[str, int] = {}
        for cluster in clusters:
            owned = tuple((f.instance_type, f.nominal) for f in fleet.plans[cluster].team(team).owned)
            per_cluster.append((cluster, owned))
            for f in fleet.plans[cluster].team(team).owned:
                total[f.instance_type] = total.get(f.instance_type, ZERO) + f.nominal
                if f.accelerator_kind and f.nominal.accelerators:
                    kinds[f.accelerator_kind] = kinds.get(f.accelerator_kind, 0) + f.nominal.accelerators
        out.append(TeamAllocation(team, tuple(per_cluster), tuple(sorted(total.items())), tuple(sorted(kinds.items()))))
    return tuple(out)
