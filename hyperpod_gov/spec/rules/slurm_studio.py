"""HPG-S014, HPG-S015: the Studio task view of a Slurm cluster (AWS, "Restrict task view in Studio for Slurm
clusters"; docs/slurm.md). Studio runs a team's commands on the cluster as the POSIX user its role's
``SSMSessionRunAs`` tag names; with ``PrivateData=jobs`` Slurm shows that user only its own jobs."""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ..errors import SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule
from ._common import _slurm


def _studio_teams(spec: GovernanceSpec) -> list[tuple[int, str]]:
    """(index, name) of each team that reaches the cluster from Studio: a Unified Studio project or a studioUser."""
    return [(ti, t.name) for ti, t in enumerate(spec.teams)
            if (t.contract is not None and t.contract.unified_studio is not None)
            or (t.slurm is not None and t.slurm.studio_user is not None)]


@rule("HPG-S014", "error", "On a Slurm cluster a team's studioUser is one of its users, so that Studio runs as a "
      "user with an association to the team's accounts only.")
def slurm_studio_user_is_a_team_user(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    for ti, team in enumerate(spec.teams):
        s = team.slurm
        if s is not None and s.studio_user is not None and s.studio_user not in s.users:
            yield SpecIssue(f"teams[{ti}].slurm.studioUser", "is not one of the team's users, so it has no "
                            "association with the team's accounts (and posix.sh does not create it)", s.studio_user,
                            f"add {s.studio_user!r} to teams[{ti}].slurm.users, or name one of "
                            f"{list(s.users) or 'its users'}")


@rule("HPG-S015", "warning", "On a Slurm cluster with teams in Studio, the task view is restricted before several "
      "teams are onboarded (cluster.slurm.restrictTaskView), and each Studio team names the POSIX user its role "
      "runs as (teams[].slurm.studioUser): by default every Studio user views and manages every Slurm task.")
def slurm_studio_task_view_is_restricted(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    studio = _studio_teams(spec)
    restricted = spec.cluster.slurm is not None and spec.cluster.slurm.restrict_task_view
    if len(studio) > 1 and not restricted:
        yield SpecIssue("cluster.slurm.restrictTaskView", f"is not set while {len(studio)} teams reach the cluster "
                        "from Studio: each of them views, cancels and manages the others' Slurm tasks",
                        ", ".join(name for _, name in studio), "set cluster.slurm.restrictTaskView: true and a "
                        "teams[].slurm.studioUser per team (the contract record prints the IAM and Systems "
                        "Manager steps)")
    if not restricted:
        return
    for ti, name in studio:
        s = spec.teams[ti].slurm
        if s is None or s.studio_user is None:
            yield SpecIssue(f"teams[{ti}].slurm.studioUser", "is not set: the team's Studio role has no Slurm user "
                            "to run as, so Studio shows it no tasks and it cannot submit", name,
                            f"name one of the team's users, e.g. studioUser: {(s.users[0] if s and s.users else name)!r}")
