"""A fleet run as figures: per worker the admissions per team, per team its waits and its in-flight bound.

The JSON object is documented in docs/simulator.md ("Fleet"); single-cluster outputs do not change.
"""

from __future__ import annotations

from typing import Any, Optional

from .figures import compare_docs, table_value
from .fleet import DISPATCHER, FleetResult, FleetWorkload
from .quantities import show_quantity
from .spec_level import _percentile, _round


def _wait_min(w: FleetWorkload, when: Any, end: float) -> float:
    return ((when if when is not None else end) - w.submitted_at) / 60.0


def team_json(result: FleetResult, end: Optional[float] = None) -> dict[str, dict[str, Any]]:
    """Per dispatched team: submitted, admitted on a worker, waiting at the end (on the manager / in flight), wait
    p50/p95 to the first admission on a worker and p95 to the manager's reservation (a workload still waiting counts
    its wait up to the end), in-flight bound hits (workloads the manager's quota held back: not reserved when
    submitted), evictions, accelerator-hours and admissions per worker. ``end`` (seconds): where a wait still
    running stops counting (default: the run's end; two runs compared share the later end)."""
    end = result.end if end is None else end
    by_team: dict[str, list[FleetWorkload]] = {t: [] for t in result.teams}
    for w in result.workloads:
        by_team[w.team].append(w)
    out = {}
    for team, wls in by_team.items():
        waits = [_wait_min(w, w.placed_at, end) for w in wls]
        reserve = [_wait_min(w, w.reserved_at, end) for w in wls]
        per_cluster = {c: 0 for c in result.workers}
        for w in wls:
            for c, _start, _secs in w.placements:
                per_cluster[c] += 1
        out[team] = {
            "submitted": len(wls),
            "admitted": sum(1 for w in wls if w.placed_at is not None),
            "waitingOnManager": sum(1 for w in wls if w.state == "waiting"),
            "inFlightNotAdmitted": sum(1 for w in wls if w.state == "in-flight"),
            "waitP50Minutes": _round(_percentile(waits, 50)),
            "waitP95Minutes": _round(_percentile(waits, 95)),
            "managerWaitP95Minutes": _round(_percentile(reserve, 95)),
            "inFlightBoundHits": sum(1 for w in wls if w.reserved_at is None or w.reserved_at > w.submitted_at),
            "evictedOnWorkers": sum(w.evicted_on_workers for w in wls),
            "preemptedByManager": sum(w.preempted_by_manager for w in wls),
            "acceleratorHours": round(sum(s * w.accelerators for w in wls for _c, _t, s in w.placements) / 3600.0, 2),
            "admissionsPerCluster": per_cluster,
        }
    return out


def cluster_json(result: FleetResult) -> dict[str, dict[str, Any]]:
    """Per worker: admissions (a workload admitted again after an eviction counts again) and accelerator-hours,
    in all and per team (teams with none left out)."""
    out: dict[str, dict[str, Any]] = {c: {"admissions": 0, "acceleratorHours": 0.0, "teams": {}}
                                      for c in result.workers}
    for w in result.workloads:
        for c, _start, secs in w.placements:
            o = out[c]
            t = o["teams"].setdefault(w.team, {"admissions": 0, "acceleratorHours": 0.0})
            hours = secs * w.accelerators / 3600.0
            o["admissions"] += 1
            t["admissions"] += 1
            o["acceleratorHours"] += hours
            t["acceleratorHours"] += hours
    for o in out.values():
        o["acceleratorHours"] = round(o["acceleratorHours"], 2)
        o["teams"] = {t: {"admissions": v["admissions"], "acceleratorHours": round(v["acceleratorHours"], 2)}
                      for t, v in sorted(o["teams"].items())}
    return out


def bounds_json(result: FleetResult) -> dict[str, dict[str, dict[str, dict[str, str | int]]]]:
    """Per team, flavor and resource: the manager's quota (the bound on what is in flight) and the most it held."""
    out: dict[str, dict[str, dict[str, dict[str, str | int]]]] = {}
    for b in result.bounds:
        out.setdefault(b.team, {}).setdefault(b.flavor, {})[b.resource] = {
            "bound": show_quantity(b.resource, b.bound), "peak": show_quantity(b.resource, b.peak)}
    return out


def fleet_json(result: FleetResult, end: Optional[float] = None) -> dict[str, Any]:
    """The fleet run's JSON object (docs/simulator.md, "Fleet"); ``end``: as for :func:`team_json`."""
    return {
        "fleet": {"dispatcher": DISPATCHER, "workers": list(result.workers)},
        "clusters": cluster_json(result),
        "teams": team_json(result, end),
        "inFlight": bounds_json(result),
        "endMinute": round((result.end if end is None else end) / 60.0, 1),
        "notes": list(result.notes),
    }


def fleet_lines(result: FleetResult, end: Optional[float] = None) -> list[str]:
    """For people: admissions per worker and team, then per team its waits (">=N" where work never admitted counts
    its wait only to the end) and bound hits."""
    doc = fleet_json(result, end)
    lines = [f"fleet of {len(result.workers)} worker(s) ({', '.join(result.workers)}; dispatcher {DISPATCHER}), "
             f"ends at minute {doc['endMinute']:g}:"]
    teams = list(result.teams)
    header = ["team", *result.workers, "wait p50 min", "wait p95 min", "bound hits", "waiting", "in flight"]
    rows = [header]
    for t in teams:
        j = doc["teams"][t]
        rows.append([t, *(str(j["admissionsPerCluster"][c]) for c in result.workers),
                     *(table_value(j, k) for k in ("waitP50Minutes", "waitP95Minutes")),
                     str(j["inFlightBoundHits"]), str(j["waitingOnManager"]), str(j["inFlightNotAdmitted"])])
    rows.append(["(all)", *(str(doc["clusters"][c]["admissions"]) for c in result.workers), "", "", "", "", ""])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        lines.append("  " + "  ".join(c.rjust(widths[i]) if i else c.ljust(widths[i])
                                      for i, c in enumerate(r)).rstrip())
    lines += [f"  {n}" for n in result.notes]
    return lines


# The team figures ``--compare`` reads for a fleet, in this order.
COMPARED = ("submitted", "admitted", "waitP50Minutes", "waitP95Minutes", "waitingOnManager", "inFlightNotAdmitted",
            "inFlightBoundHits", "evictedOnWorkers", "preemptedByManager", "acceleratorHours")


def fleet_compare_lines(old: FleetResult, new: FleetResult, end: Optional[float] = None) -> list[str]:
    """``simulate FLEET --compare OTHER_FLEET``: admissions per worker old -> new, then one sentence per team and
    figure that changed (a wait that counts never-admitted work is "at least"), both runs measured to ``end``."""
    a, b = cluster_json(old), cluster_json(new)
    workers = list(old.workers) + [w for w in new.workers if w not in old.workers]

    def admissions(doc: dict[str, Any], w: str) -> str:
        return str(doc[w]["admissions"]) if w in doc else "(not a worker)"
    lines = ["admissions per worker: " + "; ".join(f"{w} {admissions(a, w)} -> {admissions(b, w)}" for w in workers)]
    return lines + compare_docs(team_json(old, end), team_json(new, end), COMPARED)
