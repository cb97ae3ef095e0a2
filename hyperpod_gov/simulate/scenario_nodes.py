"""A scenario's capacity timeline (``nodeGroups``, ``scaleUpDelay``, ``capacity``), every problem reported at once.

What the keys mean is in :mod:`.nodes` and ``docs/simulator.md``; without ``nodeGroups`` a scenario runs
as before, with quota as the only limit.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec.errors import NO_VALUE
from .model import DEFAULT_SCALE_UP_DELAY, CapacityEvent, NodeGroup, QueueDef
from .quantities import parse_quantity
from .scenario_parse import Issues, as_known_name, as_mapping, as_name, as_number, unknown_keys

KEYS = ("nodeGroups", "scaleUpDelay", "capacity")
_GROUP = ("name", "flavor", "perNode", "count", "present", "autoscale")
_EVENT = ("at", "nodeGroup", "flavor", "add", "lose")
_EVENT_FIX = "write e.g. {at: 600, nodeGroup: spot, lose: 2} or {at: 900, flavor: on-demand, add: 2}"


def _whole(issues: Issues, path: str, value: Any, *, minimum: int, fix: str) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        issues.add(path, f"is not a whole number of at least {minimum}", value if value is not None else NO_VALUE, fix)
        return None
    return value


def _group(issues: Issues, path: str, data: Any, flavors: set[str]) -> NodeGroup | None:
    g = as_mapping(issues, path, data,
                   "write each node group as {name: spot, flavor: f1, perNode: {cpu: 8}, count: 4}")
    if g is None:
        return None
    unknown_keys(issues, path, g, _GROUP)
    name = as_name(issues, f"{path}.name", g.get("name"))
    flavor = as_known_name(issues, f"{path}.flavor", g.get("flavor"), flavors, "is not a flavor of any queue",
                           "(no flavors defined)")
    per = as_mapping(issues, f"{path}.perNode", g.get("perNode"), "write what one node brings, e.g. {cpu: 8}")
    resources = []
    if per is not None and not per:
        issues.add(f"{path}.perNode", "is missing or empty", NO_VALUE, "give what one node brings, e.g. perNode: {cpu: 8}")
    for r, amount in (per or {}).items():
        parsed = parse_quantity(str(r), amount)
        if parsed is None or parsed == 0:
            issues.add(f"{path}.perNode.{r}", "is not a quantity above 0", amount, "write e.g. 8, '500m' or '64Gi'")
        else:
            resources.append((str(r), parsed))
    count = _whole(issues, f"{path}.count", g.get("count"), minimum=1,
                   fix="give the most nodes the group holds, e.g. count: 4")
    autoscale = g.get("autoscale", False)
    if not isinstance(autoscale, bool):
        issues.add(f"{path}.autoscale", "is not true or false", autoscale, "write autoscale: true or leave it out")
        autoscale = False
    present = 0 if autoscale else (count or 0)
    if g.get("present") is not None:
        given = _whole(issues, f"{path}.present", g.get("present"), minimum=0,
                       fix="give the nodes there at the start, e.g. present: 2")
        if given is not None and count is not None and given > count:
            issues.add(f"{path}.present", f"is above the group's count ({count})", given,
                       f"give at most {count}, or raise count")
        elif given is not None:
            present = given
    if name is None or flavor is None or count is None or not resources:
        return None
    return NodeGroup(name, ((flavor, tuple(resources)),), count, present, autoscale)


def parse_nodes(issues: Issues, data: Mapping, queues: Mapping[str, QueueDef]
                ) -> tuple[tuple[NodeGroup, ...], tuple[CapacityEvent, ...], float]:
    """The node groups, the timeline and the autoscaler's delay of a scenario mapping (issues added to ``issues``)."""
    flavors = {f.name for q in queues.values() for f in q.flavors}
    groups: dict[str, NodeGroup] = {}
    raw = data.get("nodeGroups") or []
    if not isinstance(raw, list):
        issues.add("nodeGroups", "is not a list", raw, "list node groups: - {name: spot, flavor: f1, perNode: {cpu: 8}, "
                   "count: 4}")
        raw = []
    for i, g in enumerate(raw):
        group = _group(issues, f"nodeGroups[{i}]", g, flavors)
        if group is None:
            continue
        if group.name in groups:
            issues.add(f"nodeGroups[{i}].name", "repeats another node group's name", group.name,
                       "give each node group its own name")
            continue
        groups[group.name] = group
    delay = as_number(issues, "scaleUpDelay", data.get("scaleUpDelay"), default=DEFAULT_SCALE_UP_DELAY, minimum=0)
    if data.get("scaleUpDelay") is not None and not raw:
        issues.add("scaleUpDelay", "is set without nodeGroups", data.get("scaleUpDelay"),
                   "declare nodeGroups (the nodes the autoscaler adds to), or remove scaleUpDelay")
    by_flavor: dict[str, int] = {}
    for g in groups.values():
        for f in g.flavors:
            by_flavor[f] = by_flavor.get(f, 0) + g.count
    events = []
    raw_events = data.get("capacity") or []
    if not isinstance(raw_events, list):
        issues.add("capacity", "is not a list", raw_events, _EVENT_FIX)
        raw_events = []
    if raw_events and not raw:
        issues.add("capacity", "is set without nodeGroups", NO_VALUE,
                   "declare the nodeGroups the events add to or take from (see docs/simulator.md)")
        raw_events = []
    for i, e in enumerate(raw_events):
        path = f"capacity[{i}]"
        em = as_mapping(issues, path, e, _EVENT_FIX)
        if em is None:
            continue
        unknown_keys(issues, path, em, _EVENT)
        if em.get("at") is None:
            issues.add(f"{path}.at", "is missing", NO_VALUE, "give the time in seconds, e.g. at: 600")
        at = as_number(issues, f"{path}.at", em.get("at"), default=0.0, minimum=0)
        if ("nodeGroup" in em) == ("flavor" in em):
            issues.add(path, "needs exactly one of nodeGroup or flavor", dict(em), _EVENT_FIX)
            continue
        if ("add" in em) == ("lose" in em):
            issues.add(path, "needs exactly one of add or lose", dict(em), _EVENT_FIX)
            continue
        key = "add" if "add" in em else "lose"
        n = _whole(issues, f"{path}.{key}", em.get(key), minimum=1, fix=f"give a number of nodes, e.g. {key}: 2")
        named = "nodeGroup" if "nodeGroup" in em else "flavor"
        if as_name(issues, f"{path}.{named}", em.get(named)) is None:
            continue
        group = em.get("nodeGroup")
        flavor = em.get("flavor")
        if group is not None and group not in groups:
            issues.add(f"{path}.nodeGroup", "names no node group", group,
                       f"use one of {', '.join(groups) or '(no valid node groups)'}")
            continue
        if flavor is not None and flavor not in by_flavor:
            issues.add(f"{path}.flavor", "is a flavor no node group provides", flavor,
                       f"use one of {', '.join(sorted(by_flavor)) or '(none)'}, or name a nodeGroup")
            continue
        most = groups[group].count if group is not None else by_flavor[flavor]
        if n is not None and n > most:
            issues.add(f"{path}.{key}", f"is more nodes than {'the group' if group else 'the flavor'} holds ({most})",
                       n, f"give at most {most}")
            continue
        if n is not None:
            events.append(CapacityEvent(float(at), group, n if key == "add" else -n, flavor))
    return tuple(groups.values()), tuple(events), float(delay)
