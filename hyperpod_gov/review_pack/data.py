"""What the charts show, read from the plan: per instance type, who owns what, who may lend and borrow.

Nothing here decides a quota: every amount is a ``FlavorQuota`` of the plan, shown in the Kueue resource that
governs the instance type (``FlavorQuota.governed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..plan import Plan, amounts_for
from ..plan.elastic import KINDS, capacity_lines, lines_of_type, type_kinds
from ..plan.quotas import FlavorQuota, TeamPlan


@dataclass(frozen=True)
class TeamShare:
    """One team's (or the shared pool's) quota on one instance type, with its limits."""

    team: str
    strategy: str
    is_shared_pool: bool
    nominal: int
    lendable: int  # what the cohort may borrow from it: its lending limit, or all of nominal
    borrow_limit: int  # on top of nominal; 0: cannot borrow

    @property
    def lends_all(self) -> bool:
        return self.lendable == self.nominal


@dataclass(frozen=True)
class TypeCapacity:
    """One instance type: capacity in its governing unit, split into the teams' quotas and what nobody owns."""

    instance_type: str
    instances: int
    resource: str  # the Kueue resource counted: nvidia.com/gpu, a MIG partition, or cpu; Slurm: the partition
    unit: str  # how a person reads it: "accelerators", "mig-1g.10gb partitions", "vCPU"
    capacity: int
    shares: tuple[TeamShare, ...]  # teams with a quota or a borrow limit here, sorted by name
    # the capacity by kind (plan.elastic.KINDS: guaranteed, elastic, interruptible, flexible), in the same unit;
    # they add up to ``capacity``
    kinds: tuple[tuple[str, int], ...] = ()
    flexible_groups: tuple[str, ...] = ()  # labels of the flexible groups that can run the type (counted here too)

    @property
    def owned(self) -> int:
        return sum(s.nominal for s in self.shares)

    @property
    def unowned(self) -> int:
        return max(self.capacity - self.owned, 0)


def _unit(resource: str, accelerator_kind: Optional[str]) -> str:
    if resource.startswith("nvidia.com/mig-"):
        return resource.removeprefix("nvidia.com/") + " partitions"
    return "accelerators" if accelerator_kind else "vCPU"


def _flavor(team: TeamPlan, instance_type: str) -> Optional[FlavorQuota]:
    return next((f for f in team.flavors if f.instance_type == instance_type), None)


def capacities(plan: Plan) -> tuple[TypeCapacity, ...]:
    """Every instance type of the cluster, in the plan's flavor order."""
    out = []
    lines = capacity_lines(plan.instance_groups, plan.catalog)
    for fp in sorted(plan.flavors, key=lambda f: f.instance_type):
        shares = []
        resource = fp.mig_resource or fp.accelerator_kind or "cpu"
        if plan.slurm is not None:  # Slurm counts the type on its compute partition (GrpTRES), not a Kueue resource
            where = sorted({g.partition for g in plan.slurm.groups
                            if g.instance_type == fp.instance_type and g.partition})
            resource = "Slurm partition " + ", ".join(where) if where else "no Slurm partition"
        probe: Optional[FlavorQuota] = None
        for team in plan.teams:
            f = _flavor(team, fp.instance_type)
            if f is None:
                continue
            probe = probe or f
            nominal = f.governed(f.nominal)
            borrow = f.governed(f.borrowing_limit) if f.borrowing_limit is not None else 0
            if nominal == 0 and borrow == 0:
                continue
            lendable = nominal if f.lending_limit is None else min(f.governed(f.lending_limit), nominal)
            shares.append(TeamShare(team.name, team.strategy, team.is_shared_pool, nominal, lendable, borrow))
        profile = fp.mig_resource.removeprefix("nvidia.com/") if fp.mig_resource else None

        def in_unit(instances: int) -> int:
            total = amounts_for(fp.instance_type, count=instances, mig_profile=profile, catalog=plan.catalog)
            if probe is not None:
                return probe.governed(total)
            # no team at all: count in the resource the flavor is governed by
            return total.partition(fp.mig_resource) if fp.mig_resource else (
                total.accelerators if fp.accelerator_kind else total.vcpu)

        kinds = type_kinds(lines, fp.instance_type)
        out.append(TypeCapacity(fp.instance_type, fp.instances, resource, _unit(resource, fp.accelerator_kind),
                                in_unit(fp.instances), tuple(sorted(shares, key=lambda s: s.team)),
                                tuple((kind, in_unit(kinds[kind])) for kind in KINDS),
                                tuple(line.label for line in lines_of_type(lines, fp.instance_type) if line.flexible)))
    return tuple(out)


@dataclass(frozen=True)
class BorrowCell:
    """Whether ``borrower`` may run on ``lender``'s quota on one instance type, and up to how much."""

    borrower: str
    lender: str
    state: str  # own | open | closed (lender lends nothing) | cannot-borrow
    up_to: int  # open: min(borrower's borrow limit, lender's lendable quota); else 0


def borrow_cells(tc: TypeCapacity) -> tuple[BorrowCell, ...]:
    """The matrix of one instance type, borrowers by lenders, both in ``tc.shares`` order."""
    cells = []
    for b in tc.shares:
        for lender in tc.shares:
            if b.team == lender.team:
                cells.append(BorrowCell(b.team, lender.team, "own", b.nominal))
            elif lender.lendable == 0:
                cells.append(BorrowCell(b.team, lender.team, "closed", 0))
            elif b.borrow_limit == 0:
                cells.append(BorrowCell(b.team, lender.team, "cannot-borrow", 0))
            else:
                cells.append(BorrowCell(b.team, lender.team, "open", min(b.borrow_limit, lender.lendable)))
    return tuple(cells)
