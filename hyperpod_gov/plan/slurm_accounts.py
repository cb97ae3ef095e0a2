"""A team as Slurm accounting knows it (``SlurmTeamPlan``) and the account and QOS names it is built on.

Apart from ``slurm.py`` so that ``quotas.TeamPlan`` can hold a team's Slurm part (``TeamPlan.slurm``) while
``slurm.py`` plans the teams from ``TeamPlan``: both import this module, neither imports the other back.
``slurm.py`` re-exports every name.

Generated names join spec names with '_', which no team, priority class or partition name contains, so that no two
(team, partition) pairs share a name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

SEPARATOR = "_"


def account(team: str, partition: Optional[str] = None) -> str:
    """The Slurm account of a team (``team``) or of its guarantee on one partition (``team_partition``); Slurm
    stores account names in lowercase."""
    return team if partition is None else f"{team}{SEPARATOR}{partition.lower()}"


def borrow_qos(team: str, partition: str) -> str:
    """The QOS a team borrows idle capacity of one partition with."""
    return f"{team}{SEPARATOR}{partition.lower()}{SEPARATOR}borrow"


def borrow_account(team: str, partition: str) -> str:
    """The account a team's borrowed jobs on one partition run under (the borrow QOS's name; Slurm keeps accounts
    and QOS apart)."""
    return borrow_qos(team, partition)


Tres = tuple[tuple[str, int], ...]  # (TRES name, amount), sorted by name


@dataclass(frozen=True)
class SlurmLimit:
    """A team's amount on one partition, as Slurm TRES."""

    partition: str
    instance_type: str
    tres: Tres


@dataclass(frozen=True)
class SlurmTeamPlan:
    """A team as Slurm accounting knows it."""

    name: str
    account: str
    fair_share_weight: int  # as the spec gives it, 0..100
    fairshare: int  # Slurm's Fairshare: the weight, at least 1 (Slurm reads 0 as no share of its own)
    strategy: str
    guaranteed: tuple[SlurmLimit, ...]  # by partition
    borrow: tuple[SlurmLimit, ...]  # by partition: the cap of each borrow QOS; () when it cannot borrow
    priority_classes: tuple[str, ...]  # QOS names of the classes it may use, sorted
    preempt_team_tasks: str
    active: bool
    users: tuple[str, ...]  # sorted
    group: str
    data_path: str
    studio_user: Optional[str] = None  # teams[].slurm.studioUser: the POSIX user its Studio role runs as
    path: str = field(kw_only=True, compare=False)

    @property
    def partitions(self) -> tuple[str, ...]:
        """The partitions the team has a sub-account on (it owns or may borrow there), sorted."""
        return tuple(sorted({lim.partition for lim in self.guaranteed + self.borrow}))

    @property
    def sub_accounts(self) -> tuple[str, ...]:
        """Every account under the team's: per partition the guaranteed one (where it owns something), then the
        borrowing one (where it may borrow)."""
        return tuple(a for p in self.partitions for a in self.accounts_on(p))

    def accounts_on(self, partition: str) -> tuple[str, ...]:
        """The team's accounts on ``partition``: guaranteed first, then borrowing."""
        return ((self.sub_account(partition),) if self.limit(partition) else ()) + (
            (self.borrow_account(partition),) if self.borrow_limit(partition) else ())

    def sub_account(self, partition: str) -> str:
        """The account of the team's guarantee on ``partition`` (its GrpTRES)."""
        return account(self.name, partition)

    def borrow_account(self, partition: str) -> str:
        """The account of the team's borrowed jobs on ``partition``."""
        return borrow_account(self.name, partition)

    def limit(self, partition: str) -> Tres:
        """The guaranteed TRES on ``partition`` (() when it owns nothing there)."""
        return next((lim.tres for lim in self.guaranteed if lim.partition == partition), ())

    def borrow_limit(self, partition: str) -> Tres:
        return next((lim.tres for lim in self.borrow if lim.partition == partition), ())
