"""`report FLEET.yaml`: the usage report of every Kueue member (its CloudWatch, in its account and region), and per
team the sums over the clusters it is on.

Each member's report is the single-cluster one (``report.build_report`` on the member's plan and data); its
proposals patch the member spec (the cluster's expansion of the fleet), so they are shown per cluster, with paths
into the member. A Slurm member publishes no Kueue metrics and is left out with the reason.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..plan.fleet import FleetPlan
from ..spec.fleet import fleet_members
from .analysis import Window
from .report import Report, _iso, build_report, render_json

ClientFor = Callable[[str, Any], Any]  # (cluster, its plan) -> a CloudWatch client in its account and region
SLURM_SKIPPED = "a Slurm cluster publishes no Kueue metrics (sacct/sshare report its usage)"


@dataclass(frozen=True)
class FleetReport:
    fleet: str
    window: Window
    reports: dict[str, Report]  # by cluster, the fleet spec's order
    skipped: dict[str, str]  # cluster -> why it has no report


def build_fleet_report(fleet: FleetPlan, client_for: ClientFor, window: Window, today: dt.date) -> FleetReport:
    """Every Kueue member's report (raises ``metrics.ReadError`` naming the first member that cannot be read)."""
    data = fleet_members(fleet.fleet.data)
    reports: dict[str, Report] = {}
    skipped: dict[str, str] = {}
    for cluster, plan in fleet.plans.items():
        if plan.slurm is not None:
            skipped[cluster] = SLURM_SKIPPED
            continue
        reports[cluster] = build_report(plan, fleet.fleet.members[cluster], data[cluster], client_for(cluster, plan),
                                        window, today)
    return FleetReport(fleet.name, window, reports, skipped)


def team_totals(report: FleetReport) -> dict[str, dict[str, Any]]:
    """Per team (first seen order): per instance type the nominal quota, unit-hours used and borrowed summed over
    the clusters (and the used hours per cluster), evictions per reason summed, pending hours at quota per cluster."""
    out: dict[str, dict[str, Any]] = {}
    for cluster, r in report.reports.items():
        for u in r.teams:
            if u.is_shared_pool:
                continue
            t = out.setdefault(u.team, {"clusters": [], "flavors": {}, "evictions": {}, "pendingHoursAtQuota": {}})
            t["clusters"].append(cluster)
            t["pendingHoursAtQuota"][cluster] = u.pending_hours_at_quota
            for reason, n in u.evictions:
                t["evictions"][reason] = t["evictions"].get(reason, 0) + n
            for f in u.flavors:
                s = t["flavors"].setdefault(f.instance_type, {"unit": f.unit, "nominal": 0, "usedHours": 0.0,
                                                              "borrowedHours": 0.0, "usedHoursPerCluster": {}})
                s["nominal"] += f.nominal
                s["usedHours"] = round(s["usedHours"] + f.used_hours, 2)
                s["borrowedHours"] = round(s["borrowedHours"] + f.borrowed_hours, 2)
                s["usedHoursPerCluster"][cluster] = round(f.used_hours, 2)
    for t in out.values():
        t["flavors"] = dict(sorted(t["flavors"].items()))
        t["evictions"] = dict(sorted(t["evictions"].items()))
    return out


def fleet_json(report: FleetReport) -> dict[str, Any]:
    return {
        "fleet": report.fleet, "start": _iso(report.window.start), "end": _iso(report.window.end),
        "hours": report.window.hours, "teams": team_totals(report),
        "clusters": {c: json.loads(render_json(r)) for c, r in report.reports.items()},
        "skipped": dict(report.skipped),
    }


def fleet_text(report: FleetReport) -> str:
    """Per team its usage over the fleet, then each member's proposals."""
    lines = [f"Fleet {report.fleet}: usage {_iso(report.window.start)} to {_iso(report.window.end)} "
             f"({report.window.hours} h), clusters {', '.join(report.reports)}"]
    lines += [f"  {c}: not read: {why}" for c, why in report.skipped.items()]
    for team, t in team_totals(report).items():
        lines.append(f"{team} (on {', '.join(t['clusters'])}):")
        for itype, s in t["flavors"].items():
            per = ", ".join(f"{c} {h:g}" for c, h in s["usedHoursPerCluster"].items())
            lines.append(f"  {itype}: quota {s['nominal']} {s['unit']} in all; used {s['usedHours']:g} "
                         f"{s['unit']}-hours ({per}); borrowed {s['borrowedHours']:g}")
        waits = ", ".join(f"{c} {h}" for c, h in t["pendingHoursAtQuota"].items())
        lines.append(f"  hours waiting at quota: {waits}")
        if t["evictions"]:
            lines.append("  evictions: " + ", ".join(f"{r} {n}" for r, n in t["evictions"].items()))
    for cluster, r in report.reports.items():
        for p in r.proposals:
            lines.append(f"{cluster}: {p.team}: {p.reason} (paths into the member spec {r.spec_name})")
    return "\n".join(lines) + "\n"


def boto3_client_for(profiles: Mapping[str, str]) -> ClientFor:
    """CloudWatch in each member's region; a member whose account has a profile (``--account-profile ACCOUNT=
    PROFILE``) is read with it, any other with the default credential chain."""
    import boto3
    from botocore.config import Config

    def client_for(_cluster: str, plan: Any) -> Any:
        session = boto3.Session(profile_name=profiles[plan.account]) if plan.account in profiles else boto3
        return session.client("cloudwatch", region_name=plan.region, config=Config(retries={"mode": "standard"}))
    return client_for
