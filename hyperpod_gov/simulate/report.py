"""A queue-level result as SIMULATOR.md's JSON object, or as text for people."""

from __future__ import annotations

from typing import Any

from .engine import Result
from .quantities import show_quantity


def _num(x: float | None) -> Any:
    if x is None:
        return None
    return int(x) if float(x).is_integer() else x


def result_json(result: Result) -> dict[str, Any]:
    """The contract's object: workloads, preemptions, queues (keys sorted where they are names)."""
    workloads = {
        w.name: {
            "queue": w.queue,
            "state": w.state,
            "flavor": w.flavor,
            "admittedAt": _num(w.admitted_at),
            "borrowing": w.borrowing,
            "preemptedCount": w.preempted_count,
        }
        for w in result.workloads
    }
    preemptions = [
        {"at": _num(p.at), "cycle": p.cycle, "victim": p.victim, "preemptor": p.preemptor, "reason": p.reason}
        for p in result.preemptions
    ]
    queues = {}
    for q in result.queues:
        usage: dict[str, dict[str, Any]] = {}
        for (flavor, resource), amount in q.usage:
            usage.setdefault(flavor, {})[resource] = show_quantity(resource, amount)
        queues[q.name] = {"usage": usage, "weightedShare": q.weighted_share}
    doc = {"workloads": workloads, "preemptions": preemptions, "queues": queues}
    if result.nodes is not None:
        _nodes_json(result, doc)
    return doc


def _nodes_json(result: Result, doc: dict[str, Any]) -> None:
    """A run with node groups: per workload its runs on the nodes, then what the nodes did (keys only present
    in such a run, so a scenario without node groups gives the same object as before)."""
    nodes = result.nodes
    assert nodes is not None
    for w in nodes.workloads:
        doc["workloads"][w.name].update({
            "startedAt": _num(w.started_at), "firstStartedAt": _num(w.first_started_at),
            "waitingForNodes": w.waiting_for_nodes, "capacityEvictions": w.capacity_evictions,
        })
    doc["capacityEvictions"] = [
        {"at": _num(e.at), "workload": e.workload, "queue": e.queue, "flavor": e.flavor, "nodeGroup": e.group}
        for e in nodes.evictions
    ]
    doc["scaleUps"] = [
        {"at": _num(u.at), "ready": _num(u.ready), "nodeGroup": u.group, "flavor": u.flavor, "nodes": u.nodes}
        for u in nodes.scale_ups
    ]
    doc["nodeGroups"] = {name: dict(per) for name, per in nodes.groups}


def result_text(result: Result) -> str:
    """A timeline, then a table per queue."""
    lines = ["Timeline:"]
    lines += [f"  {event}" for event in result.timeline] or ["  (nothing happened)"]
    if not result.fixed_point:
        lines.append(f"  (stopped after {result.cycles} scheduling cycle(s), before a fixed point)")
    by_queue: dict[str, list] = {}
    for w in result.workloads:
        by_queue.setdefault(w.queue, []).append(w)
    for q in result.queues:
        lines.append("")
        used = ", ".join(f"{f}/{r}={show_quantity(r, a)}" for (f, r), a in q.usage if a) or "nothing"
        lines.append(f"Queue {q.name}: uses {used}; weightedShare {q.weighted_share}")
        rows = [("workload", "state", "flavor", "admittedAt", "borrowing", "preempted", "why pending")]
        for w in by_queue.get(q.name, []):
            rows.append((w.name, w.state, w.flavor or "-", "-" if w.admitted_at is None else str(_num(w.admitted_at)),
                         "yes" if w.borrowing else "no", str(w.preempted_count), w.pending_reason or "-"))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        for r in rows:
            lines.append("  " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(r[:-1])) + "  " + r[-1])
    lines.append("")
    lines.append(f"{len(result.preemptions)} preemption(s), {result.cycles} scheduling cycle(s), ended at t={_num(result.end)}")
    if result.nodes is not None:
        n = result.nodes
        waiting = [w.name for w in n.workloads if w.waiting_for_nodes]
        at_end = "; ".join(f"{g}: " + ", ".join(f"{c} on {f}" for f, c in per) for g, per in n.groups)
        lines.append(f"{len(n.evictions)} eviction(s) by capacity loss, {len(n.scale_ups)} scale-up(s); nodes at the "
                     f"end: {at_end}" + (f"; admitted, waiting for nodes: {', '.join(waiting)}" if waiting else ""))
    return "\n".join(lines)
