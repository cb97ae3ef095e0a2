"""A fleet's contract record per team: what the team owns on each cluster and in all, and whether its work is
dispatched (``contracts/_fleet/<team>.md`` beside each member's ``contracts/<cluster>/<team>.md``).

Filled from the fleet's plan only (``plan.fleet.team_allocations`` and the MultiKueue plan), so the reviewer of a
team's contract sees its whole fleet allocation on one page. The folder name starts with ``_``: a cluster's name is
a DNS-1123 label, so no member's folder can be it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..markdown import cell
from ..plan.amounts import Amounts
from ..plan.fleet import FleetPlan, TeamAllocation, team_allocations
from ..plan.multikueue import FleetQueue, multikueue_plans

FLEET_RECORDS = "_fleet"  # DIR/contracts/_fleet/<team>.md


def _amount(amounts: Amounts, kind: Optional[str]) -> str:
    """An owned amount in the unit its quota counts: partitions, accelerators, or vCPU and memory."""
    if amounts.partitions:
        return ", ".join(f"{n} x {r}" for r, n in amounts.partitions)
    if kind and amounts.accelerators:
        return f"{amounts.accelerators} accelerators ({kind})"
    return f"{amounts.vcpu} vCPU, {amounts.memory_gib} GiB"


def _table(headers: list[str], rows: list[list[object]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    return out + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def fleet_queues(fleet: FleetPlan) -> dict[str, FleetQueue]:
    """Team -> its fleet queues on the dispatch manager (the teams MultiKueue dispatches); empty without dispatch."""
    dispatch = fleet.fleet.dispatch
    if dispatch is None:
        return {}
    plans = multikueue_plans(fleet.plans, dispatch.manager, dispatch.workers)
    return {q.team: q for q in plans[dispatch.manager].queues}


def render_fleet_record(fleet: FleetPlan, alloc: TeamAllocation, queue: Optional[FleetQueue]) -> str:
    """The Markdown page of one team's fleet allocation."""
    kinds = {f.instance_type: f.accelerator_kind for p in fleet.plans.values() for f in p.flavors}
    clusters = [c for c, _ in alloc.per_cluster]
    lines = [f"# Fleet allocation: {alloc.team}", "",
             f"Fleet `{fleet.name}`. The team is on {len(clusters)} cluster(s): "
             + ", ".join(f"`{c}`" for c in clusters) + ". Each cluster's own record: "
             + ", ".join(f"[{c}](../{c}/{alloc.team}.md)" for c in clusters) + ".", "",
             "## Allocation per cluster", ""]
    rows: list[list[object]] = []
    for cluster, owned in alloc.per_cluster:
        plan = fleet.plans[cluster]
        where = f"{plan.account} / {plan.region}"
        if not owned:
            manager = fleet.fleet.dispatch is not None and cluster == fleet.fleet.dispatch.manager
            rows.append([cluster, where, "-", "nothing owned (the dispatch manager)" if manager else "nothing owned"])
        rows += [[cluster, where, t, _amount(a, kinds.get(t))] for t, a in owned]
    lines += _table(["Cluster", "Account / region", "Instance type", "Owns"], rows)
    lines += ["", "## In total", ""]
    lines += _table(["Instance type", "Owns on all clusters"],
                    [[t, _amount(a, kinds.get(t))] for t, a in alloc.total] or [["-", "nothing owned"]])
    if alloc.accelerators:
        lines += ["", "Accelerators in all: " + ", ".join(f"{n} {k}" for k, n in alloc.accelerators) + "."]
    lines += ["", "## Dispatch", ""]
    dispatch = fleet.fleet.dispatch
    if dispatch is None:
        lines.append("Not dispatched: the fleet has no dispatch; submit to each cluster's own queue.")
    elif queue is None:
        lines.append(f"Not dispatched: the team has quota on none of the workers ({', '.join(dispatch.workers)}); "
                     "submit to each cluster's own queue.")
    else:
        lines.append(f"Dispatched by Kueue MultiKueue: submit to LocalQueue `{queue.local_queue}` in namespace "
                     f"`{queue.namespace}` on the manager `{dispatch.manager}` (ClusterQueue `{queue.cluster_queue}`, "
                     f"its quota the sum of the workers'); the first of {', '.join(f'`{w}`' for w in queue.workers)} "
                     "that can admit the work runs it.")
    return "\n".join(lines) + "\n"


def render_fleet_records(fleet: FleetPlan) -> dict[str, str]:
    """``<team>.md`` -> page, for every team of the fleet, in the fleet spec's team order."""
    queues = fleet_queues(fleet)
    return {f"{a.team}.md": render_fleet_record(fleet, a, queues.get(a.team)) for a in team_allocations(fleet)}


def write_fleet_records(fleet: FleetPlan, contracts_dir: Path) -> list[Path]:
    """Write ``contracts_dir/_fleet/<team>.md``; pages of teams no longer in the fleet are removed."""
    directory = contracts_dir / FLEET_RECORDS
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_fleet_records(fleet).items():
        (directory / name).write_text(text)
        written.append(directory / name)
    for stale in set(directory.glob("*.md")) - set(written):
        stale.unlink()
    return sorted(written)
