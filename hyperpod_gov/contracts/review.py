"""`hyperpod-gov review SPEC [--within DAYS]`: the connection contracts whose review is due or overdue.

Exit 0 when none is overdue, 1 when one is (so a scheduled pipeline run fails on it) or the spec is invalid.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional, Sequence

from ..plan import Plan, TeamPlan

DEFAULT_WITHIN = 30
Status = Literal["overdue", "due", "current", "no contract", "retiring"]


@dataclass(frozen=True)
class Review:
    """One team's review state on a given day."""

    team: str
    status: Status
    review_by: Optional[dt.date]
    days: Optional[int]  # days until reviewBy (negative: overdue)
    owners: str  # business / operations / cost, as the contract names them
    connection: Optional[str]  # the Unified Studio project it connects, if any


def team_review(team: TeamPlan, *, retiring: bool, today: dt.date, within: int = DEFAULT_WITHIN) -> Review:
    """One team's review state on ``today``: of its contract (``TeamPlan.contract``), or ``retiring``."""
    c = team.contract
    if c is None:
        return Review(team.name, "retiring" if retiring else "no contract", None, None, "", None)
    days = (c.review_by - today).days
    status: Status
    if retiring:
        status = "retiring"
    elif days < 0:
        status = "overdue"
    elif days <= within:
        status = "due"
    else:
        status = "current"
    us = c.unified_studio
    connection = f"Unified Studio project {us.project_id} in domain {us.domain_id}" if us else None
    owners = f"business {c.business_owner}, operations {c.operations_owner}, cost {c.cost_owner}"
    return Review(team.name, status, c.review_by, days, owners, connection)


def reviews(plan: Plan, *, today: dt.date, within: int = DEFAULT_WITHIN) -> tuple[Review, ...]:
    """Every team's review state, sorted by urgency (overdue first, then by date, then by name)."""
    retiring = plan.contracts.retiring
    out = [team_review(team, retiring=team.name in retiring, today=today, within=within) for team in plan.tenants]
    order = {"overdue": 0, "due": 1, "no contract": 2, "retiring": 3, "current": 4}
    return tuple(sorted(out, key=lambda r: (order[r.status], r.review_by or dt.date.max, r.team)))


def _when(r: Review) -> str:
    assert r.days is not None and r.review_by is not None
    if r.days < 0:
        return f"reviewBy {r.review_by.isoformat()} ({-r.days} day{'s' if r.days != -1 else ''} ago)"
    return f"reviewBy {r.review_by.isoformat()} (in {r.days} day{'s' if r.days != 1 else ''})"


def render(found: Sequence[Review], *, source: str, today: dt.date, within: int) -> str:
    lines = [f"Contract reviews of {source} (today {today.isoformat()}, due within {within} days):"]
    shown = [r for r in found if r.status != "current"]
    for r in shown:
        if r.status in ("overdue", "due"):
            line = f"  {r.status.upper():8} {r.team}: {_when(r)}; {r.owners}"
            if r.connection:
                line += f"; connects {r.connection}"
            fix = ("renew it (new reviewBy) or mark the team retiring" if r.status == "overdue"
                   else "review it with its owners before that date")
            lines.append(f"{line}; {fix}")
        elif r.status == "no contract":
            lines.append(f"  NONE     {r.team}: no contract, nobody answers for its use of the cluster; add one")
        else:
            lines.append(f"  RETIRING {r.team}: access and identities removed; remove the team to revoke the "
                         "connection")
    if not shown:
        lines.append("  nothing due")
    counts = {s: sum(1 for r in found if r.status == s) for s in ("overdue", "due", "current")}
    lines.append(f"{counts['overdue']} overdue, {counts['due']} due within {within} days, "
                 f"{counts['current']} current.")
    return "\n".join(lines) + "\n"


def _days(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of days") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; give 0 or more days")
    return value


def iso_date(text: str) -> dt.date:
    """An argparse type: a YYYY-MM-DD date, or a usage error saying so."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date; use YYYY-MM-DD") from None


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Arguments of `hyperpod-gov review SPEC [--within DAYS] [--today YYYY-MM-DD] [--strict]`."""
    parser.add_argument("spec", help="path of the governance spec (YAML)")
    parser.add_argument("--within", type=_days, default=DEFAULT_WITHIN, metavar="DAYS",
                        help=f"list reviews due within DAYS days (default: {DEFAULT_WITHIN})")
    parser.add_argument("--today", type=iso_date, default=None, metavar="YYYY-MM-DD",
                        help="review as of this date (default: today)")
    parser.add_argument("--strict", action="store_true",
                        help="a team without a contract fails the review too")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Exit 0 when no review is overdue, 1 when one is (or, with --strict, a team has no contract) or the spec is
    invalid."""
    from ..plan import build_plan
    from ..spec import SpecError, load_spec

    today = args.today or dt.date.today()
    try:
        # Never strict here: an overdue reviewBy is what this command reports, not a reason to stop.
        spec = load_spec(args.spec, today=today)
        plan = build_plan(spec, base_dir=Path(args.spec).resolve().parent)
    except SpecError as exc:
        print(f"{'' if exc.source else args.spec + ': '}{exc.render()}", file=sys.stderr)
        return 1
    found = reviews(plan, today=today, within=args.within)
    sys.stdout.write(render(found, source=args.spec, today=today, within=args.within))
    failing = {"overdue", "no contract"} if args.strict else {"overdue"}
    return 1 if any(r.status in failing for r in found) else 0
