"""HPG-N: names that must be unique."""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ..errors import SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule
from ._common import _repeats


def _duplicates(path: str, names: list[str], what: str) -> Iterator[SpecIssue]:
    yield from _repeats(names, lambda i: f"{path}[{i}].name", f"duplicate {what} name",
                        f"give each {what} a unique name")


@rule("HPG-N001", "error", "Teams, priority classes, instance groups and consumer accounts have unique names (the "
      "shared pool too), each account and region is declared once, and a team names each quota type and service "
      "account once.")
def unique_names(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    team_names = [t.name for t in spec.teams]
    yield from _duplicates("teams", team_names, "team")
    if spec.shared_pool and spec.shared_pool.name in team_names:
        yield SpecIssue(
            "sharedPool.name", "is also the name of a team", spec.shared_pool.name,
            "name the pool differently (e.g. 'shared')",
        )
    yield from _duplicates("scheduler.priorityClasses", [p.name for p in spec.scheduler.priority_classes],
                           "priority class")
    yield from _duplicates("cluster.instanceGroups", [g.name for g in spec.cluster.instance_groups],
                           "instance group")
    consumers = spec.accounts.consumers
    yield from _duplicates("accounts.consumers", [c.name for c in consumers], "consumer account")
    seen: dict[tuple[str, str], int] = {}
    for i, c in enumerate(consumers):
        key = (c.id, c.region)
        if key in seen:
            yield SpecIssue(
                f"accounts.consumers[{i}].id", f"names the same account and region as accounts.consumers[{seen[key]}]",
                c.id, "declare each consumer account and region once",
            )
        seen.setdefault(key, i)
    for ti, team in enumerate(spec.teams):
        yield from _repeats(
            [q.instance_type for q in team.quota], lambda qi: f"teams[{ti}].quota[{qi}].instanceType",
            "appears twice in the team's quota", "merge the two entries into one",
        )
        yield from _repeats(
            [w.service_account for w in team.workload_identities],
            lambda wi: f"teams[{ti}].workloadIdentities[{wi}].serviceAccount",
            "appears twice in the team", "give each workload identity its own service account",
        )
