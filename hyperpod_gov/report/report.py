"""The report: measured usage per team against the spec's intent, and the spec patch it argues for."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any, Optional

from ..plan import Plan
from ..spec.models import GovernanceSpec
from . import metrics
from .analysis import TeamUsage, Window, analyse, contended_hours
from .proposals import Proposal, Rejected, check, propose


@dataclass(frozen=True)
class Report:
    spec_name: str
    cluster_name: str
    region: str
    window: Window
    teams: tuple[TeamUsage, ...]
    contended_hours: int
    proposals: tuple[Proposal, ...]
    rejected: tuple[Rejected, ...]
    queries: int


def window_ending(now: dt.datetime, days: int) -> Window:
    """``days`` whole days ending at the last full hour before ``now`` (UTC)."""
    now = now.astimezone(dt.timezone.utc) if now.tzinfo else now.replace(tzinfo=dt.timezone.utc)
    end = now.replace(minute=0, second=0, microsecond=0)
    return Window(end - dt.timedelta(days=days), end)


def build_report(plan: Plan, spec: GovernanceSpec, data: Any, client: Any, window: Window, today: dt.date) -> Report:
    """Read the metrics (raises ``metrics.ReadError``), analyse them, propose checked changes.

    What is watched and the capacity come from ``plan``; ``spec`` and ``data`` (the spec as loaded from YAML) say
    where a proposal patches it, and the patches are checked with ``parse_spec``.
    """
    monitoring = plan.monitoring
    queries, results = metrics.read(client, monitoring, window.start, window.end)
    usage = analyse(monitoring, window, queries, results)
    idle = {w.team: w.thresholds.idle_percent for w in monitoring.teams}
    proposals = propose(spec, plan, usage, window, idle_percent=idle)
    kept, rejected = check(data, proposals, today)
    return Report(spec.name, monitoring.cluster_name, monitoring.region, window, usage, contended_hours(usage),
                  kept, rejected, len(queries))


# --- rendering ---------------------------------------------------------------------------------------------------


def _n(x: Optional[float]) -> str:
    if x is None:
        return "no data"
    return f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}"


def _pct(x: Optional[float]) -> str:
    return "no data" if x is None else f"{x:.0f}%"


def _iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%MZ")


def _path_label(spec_teams: dict[int, str], path: str) -> str:
    """/teams/2/sharing -> teams[2] (chatbot).sharing"""
    parts = path.lstrip("/").split("/")
    out = ""
    for i, p in enumerate(parts):
        if p.isdigit():
            out += f"[{p}]"
            if i == 1 and parts[0] == "teams":
                out += f" ({spec_teams.get(int(p), '?')})"
        else:
            out += f".{p}" if out else p
    return out


def _value(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    return "(absent)" if v is None else str(v)


def render_text(report: Report, spec: GovernanceSpec) -> str:
    w = report.window
    lines = [f"Usage report for {report.spec_name} (cluster {report.cluster_name}, {report.region}): "
             f"{w.days} days, {_iso(w.start)} to {_iso(w.end)} ({w.hours} hours, {report.queries} metric queries)"]
    for u in report.teams:
        head = f"{u.team}{' (shared pool)' if u.is_shared_pool else ''}: {u.strategy}"
        if u.strategy == "LendAndBorrow":
            head += f" up to {u.borrow_limit_percent}%"
        lines += ["", head + f", fair-share weight {u.fair_share_weight}"]
        if not u.flavors:
            lines.append("  owns nothing")
        if not u.hours_with_data and u.flavors:
            lines.append("  no data: no Kueue usage metric for its queue in the window (is the CloudWatch "
                         "Observability add-on running with kueue_container_insights?)")
            continue
        for f in u.flavors:
            lines.append(
                f"  {f.instance_type}: average {_n(f.average)} / peak {_n(f.peak)} of {f.nominal} {f.unit} "
                f"({_pct(f.average_percent)}); {_n(f.used_hours)} {f.unit[:-1] if f.unit.endswith('s') else f.unit}"
                f"-hours used, {_n(f.borrowed_hours)} borrowed")
        if u.flavors:
            lines.append(f"  pending while below quota: {u.pending_hours_below_quota} h; pending at quota: "
                         f"{u.pending_hours_at_quota} h on {u.days_pending_at_quota} of {u.days_with_data} days")
        lines.append("  evictions: " + (", ".join(f"{r} {n}" for r, n in u.evictions) or "none"))
        lines.append(f"  accelerator utilisation: {_pct(u.utilisation)}")
        if u.hours_with_data < u.hours:
            lines.append(f"  data for {u.hours_with_data} of {u.hours} hours")
    lines += ["", f"Hours in which fair sharing had something to decide: {report.contended_hours}"]
    labels = {i: t.name for i, t in enumerate(spec.teams)}
    patch = [p for p in report.proposals if p.ops]
    advice = [p for p in report.proposals if not p.ops]
    if patch:
        lines += ["", "Proposed spec patch (applied to the spec and accepted by its rules, capacity included):"]
        for p in patch:
            for op in p.ops:
                new = "(removed)" if op.op == "remove" else _value(op.value)
                lines.append(f"  {_path_label(labels, op.path)}: {_value(op.old)} -> {new}")
            lines.append(f"      why: {p.reason}")
            lines.append(f"      cost to other teams: {p.cost}")
    else:
        lines += ["", "No change to propose."]
    for p in advice:
        lines += [f"Advice ({p.team}): {p.reason}", f"      {p.cost}"]
    for r in report.rejected:
        lines.append(f"Not proposed ({r.proposal.kind}, {r.proposal.team}): the spec rules refuse it: {r.problem}")
    return "\n".join(lines) + "\n"


def render_json(report: Report) -> str:
    def team(u: TeamUsage) -> dict[str, Any]:
        return {
            "team": u.team, "sharedPool": u.is_shared_pool, "strategy": u.strategy,
            "fairShareWeight": u.fair_share_weight, "borrowLimitPercent": u.borrow_limit_percent,
            "hours": u.hours, "hoursWithData": u.hours_with_data,
            "flavors": [{"instanceType": f.instance_type, "unit": f.unit, "nominal": f.nominal,
                         "borrowingLimit": f.borrowing_limit, "average": f.average, "peak": f.peak,
                         "averagePercent": f.average_percent, "usedHours": f.used_hours,
                         "borrowedHours": f.borrowed_hours, "hoursWithData": f.hours_with_data}
                        for f in u.flavors],
            "pendingHoursBelowQuota": u.pending_hours_below_quota, "pendingHoursAtQuota": u.pending_hours_at_quota,
            "daysPendingAtQuota": u.days_pending_at_quota, "daysWithData": u.days_with_data,
            "evictions": dict(u.evictions), "utilisation": u.utilisation,
        }

    body = {
        "spec": report.spec_name, "cluster": report.cluster_name, "region": report.region,
        "start": _iso(report.window.start), "end": _iso(report.window.end), "hours": report.window.hours,
        "teams": [team(u) for u in report.teams],
        "contendedHours": report.contended_hours,
        "patch": [{**op.as_json(), "reason": p.reason, "cost": p.cost} for p in report.proposals for op in p.ops],
        "advice": [{"team": p.team, "kind": p.kind, "reason": p.reason, "cost": p.cost}
                   for p in report.proposals if not p.ops],
        "rejected": [{"team": r.proposal.team, "kind": r.proposal.kind, "problem": r.problem}
                     for r in report.rejected],
    }
    return json.dumps(body, indent=2, sort_keys=True) + "\n"
