"""Spec level with a capacity timeline: the plan's instance groups as node groups (:mod:`.nodes`).

Each instance group of the plan is one node group, with what one instance of each of its types brings (the
plan's ``FlavorPlan.per_instance``, in the resources the queues count) on the flavor its workloads use: the type's
flavor, or the team's dedicated flavor for a group ``dedicatedTo`` a team. At t=0 a group that does not autoscale
holds its ``count`` (On-Demand or Spot: the guaranteed nodes plus, with ``minCount``, the rest that continuous
provisioning keeps); an autoscaled group holds 0 and Karpenter adds nodes, up to ``count``, ``scaleUpDelay``
after admitted work waits for them, of the type that work asks for. A fixed flexible group's nodes are of its first
type unless an event names another. What a type's amounts ask of the queues (:func:`amounts_requests`) is here too,
for :mod:`.spec_level`'s trace rows as well as the nodes: this module is below that one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from ..plan import names
from .model import CapacityEvent, NodeGroup, Scenario
from .quantities import scale
from .results import NodesResult, WorkloadResult
from .timeline import CapacityTimeline


def plan_groups(plan: Any) -> dict[str, tuple[tuple[str, ...], int]]:
    """The plan's instance groups for :func:`.timeline.parse_timeline`: name -> (instance types, count)."""
    return {g.name: (g.types, g.count) for g in plan.instance_groups}


def amounts_requests(plan: Any, instance_type: str, a: Any) -> tuple[tuple[str, int], ...]:
    """Amounts on ``instance_type`` as the simulator's requests: the Kueue resources the plan covers."""
    kind = plan.catalog.lookup(instance_type).accelerator_kind
    out = [("cpu", a.vcpu * scale("cpu")), ("memory", a.memory_gib * 2**30)]
    if kind and a.accelerators:
        out.append((kind, a.accelerators))
    out += list(getattr(a, "partitions", ()))
    return tuple((r, v) for r, v in out if v > 0 and r in plan.covered_resources)


def _flavor(group: Any, instance_type: str) -> str:
    if group.dedicated_to is not None:
        return names.dedicated_flavor(instance_type, group.dedicated_to)
    return names.flavor(instance_type)


def node_groups(plan: Any) -> tuple[NodeGroup, ...]:
    """One node group per instance group of the plan, in the plan's order (by name; module docstring)."""
    out = []
    for g in plan.instance_groups:
        per = tuple((_flavor(g, t), amounts_requests(plan, t, plan.flavor(t).per_instance)) for t in g.types)
        out.append(NodeGroup(g.name, per, g.count, 0 if g.autoscaled else g.count, g.autoscaled))
    return tuple(out)


def with_capacity(scenario: Scenario, plan: Any, timeline: CapacityTimeline) -> Scenario:
    """``scenario`` (the plan's queues and a trace) on the plan's nodes, with the timeline's events."""
    groups = {g.name: g for g in plan.instance_groups}
    events = []
    for r in timeline.rows:
        g = groups.get(r.instance_group or "")
        flavor = None
        if r.instance_type is not None:
            flavor = _flavor(g, r.instance_type) if g is not None else names.flavor(r.instance_type)
        events.append(CapacityEvent(r.minute * 60.0, r.instance_group, r.delta, flavor))
    return replace(scenario, node_groups=node_groups(plan), capacity=tuple(events),
                   scale_up_delay=timeline.scale_up_delay_minutes * 60.0)


def team_node_figures(wls: Sequence[WorkloadResult], nodes: NodesResult, end: float
                      ) -> tuple[list[float], float, dict[str, Any]]:
    """One team's workloads in a run with nodes: waits in minutes (each ends when the work first starts on nodes;
    work that never started waits to ``end``), accelerator-hours on nodes, and the figures only such a run has
    (``TeamFigures`` keywords)."""
    waits, acc_seconds, evicted, rewait, waiting = [], 0.0, 0, 0.0, 0
    for w in wls:
        n = nodes.of(w.name)
        if n is not None and n.first_started_at is not None:
            waits.append((n.first_started_at - w.submitted_at) / 60.0)
        elif w.state != "finished":
            waits.append((end - w.submitted_at) / 60.0)
        if n is not None:
            acc_seconds += n.node_seconds * int(dict(w.labels).get("accelerators", "0"))
            evicted += n.capacity_evictions
            rewait += n.rewait_seconds
            waiting += n.waiting_for_nodes
    extra = {"evicted_by_capacity": evicted, "wait_after_loss_min": rewait / 60.0, "waiting_for_nodes": waiting}
    return waits, acc_seconds / 3600.0, extra


def _minute(seconds: float) -> Any:
    m = round(seconds / 60.0, 1)
    return int(m) if m.is_integer() else m


def nodes_json(nodes: NodesResult) -> dict[str, Any]:
    """What the nodes did in a spec-level run, in minutes: scale-ups, evictions by lost nodes, nodes at the end."""
    return {
        "scaleUps": [{"minute": _minute(u.at), "readyMinute": _minute(u.ready), "instanceGroup": u.group,
                      "flavor": u.flavor, "nodes": u.nodes} for u in nodes.scale_ups],
        "capacityEvictions": [{"minute": _minute(e.at), "workload": e.workload, "flavor": e.flavor,
                               "instanceGroup": e.group} for e in nodes.evictions],
        "atEnd": {g: dict(per) for g, per in nodes.groups},
    }


def nodes_lines(nodes: NodesResult) -> list[str]:
    """The same for people."""
    lines = [f"Nodes: {len(nodes.scale_ups)} scale-up(s), {len(nodes.evictions)} eviction(s) by lost nodes"]
    said = [(e.at, 0, f"  minute {_minute(e.at)}: {e.workload} evicted, nodes of {e.group} ({e.flavor}) lost")
            for e in nodes.evictions]
    said += [(u.at, 1, f"  minute {_minute(u.at)}: the autoscaler asks {u.nodes} node(s) of {u.group} ({u.flavor}), "
                       f"Ready at minute {_minute(u.ready)}") for u in nodes.scale_ups]
    lines += [line for _at, _kind, line in sorted(said, key=lambda x: (x[0], x[1]))]
    lines.append("  at the end: " + "; ".join(f"{g} " + ", ".join(f"{n} {f}" for f, n in per) for g, per in nodes.groups))
    return lines
