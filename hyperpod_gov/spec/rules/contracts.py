"""HPG-C: team contracts and Unified Studio projects."""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ..contract import contracts_are_complete
from ..errors import NO_VALUE, SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule


@rule("HPG-C001", "warning", "Every team has a contract: owners who answer for its use of the cluster.")
def teams_have_contracts(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for ti, team in enumerate(spec.teams):
        if team.contract is None:
            yield SpecIssue(
                f"teams[{ti}].contract", "is missing: nobody answers for this team's use of the cluster",
                NO_VALUE, "add a contract with owners, data classification and reviewBy",
            )


@rule("HPG-C002", "warning", "A contract's reviewBy date has not passed.")
def contracts_are_current(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for ti, team in enumerate(spec.teams):
        if team.contract is not None and team.contract.review_by < today:
            yield SpecIssue(
                f"teams[{ti}].contract.reviewBy", f"has passed (today is {today.isoformat()})",
                team.contract.review_by.isoformat(),
                "review the contract with its owners and set a new reviewBy date",
            )


# contract.contracts_are_complete finds both kinds; each rule keeps its own (a rule has one level).
@rule("HPG-C003", "warning", "A contract states what a reviewer approves: exception owner, approved workloads, "
      "support and the other fields --strict requires.")
def contracts_are_complete_enough(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    return (i for i in contracts_are_complete(spec, today) if i.severity == "warning")


@rule("HPG-C004", "error", "A Unified Studio project's roles are reachable (capacity account, or a trusted one) "
      "and each domain lives in one account and region.")
def unified_studio_is_reachable(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    return (i for i in contracts_are_complete(spec, today) if i.severity == "error")
