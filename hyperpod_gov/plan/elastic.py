"""The three capacity numbers of elastic capacity (issue 57), per instance type: guaranteed, elastic, interruptible.

- **guaranteed**: On-Demand instances that stay (``InstanceGroupPlan.guaranteed``: minCount, or count when the group
  neither autoscales nor runs on Spot);
- **elastic**: On-Demand instances there only after a scale-up (Karpenter's, or continuous provisioning's above
  minCount);
- **interruptible**: Spot instances, which EC2 may reclaim with the work on them.

A group of one type adds to its type's line. A flexible group (``instanceTypes``) may run all its instances as any of
its types, so it is its own line, ``burst (ml.g5.12xlarge|ml.g6e.12xlarge)``, never counted under each type (which
would promise its instances twice). ``Cluster.capacity`` (the most per type, a flexible group under each of its types)
stays what HPG-Q002 checks one type against; these lines are what ``explain``, the contract record and the review
page's capacity chart show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..catalog import Catalog
from ..spec.elastic import guaranteed_by_type  # noqa: F401 (the plan's callers import it from here)
from .parts import InstanceGroupPlan


@dataclass(frozen=True)
class CapacityLine:
    """The capacity of one instance type (its groups of that one type), or of one flexible group."""

    label: str  # the type, or "<group> (<type>|<type>...)" for a flexible group
    types: tuple[str, ...]  # the one type, or the flexible group's types in its order of preference
    groups: tuple[str, ...]  # the instance groups counted here, sorted
    accelerators_per_instance: int  # a flexible group's: the fewest of its types' (HPG-K006 keeps them equal)
    guaranteed: int  # instances
    elastic: int
    interruptible: int

    @property
    def flexible(self) -> bool:
        return len(self.types) > 1

    @property
    def most(self) -> int:
        """Every instance the line's groups can hold: guaranteed + elastic + interruptible."""
        return self.guaranteed + self.elastic + self.interruptible

    def accelerators(self, instances: int) -> int:
        return instances * self.accelerators_per_instance

    @property
    def instances(self) -> dict[str, int]:
        return {"guaranteed": self.guaranteed, "elastic": self.elastic, "interruptible": self.interruptible}

    @property
    def in_accelerators(self) -> dict[str, int]:
        return {kind: self.accelerators(n) for kind, n in self.instances.items()}

    @property
    def words(self) -> str:
        """One line for people: "4 guaranteed, 11 elastic, 0 interruptible instances (4, 11, 0 GPUs)"."""
        g, e, i = self.guaranteed, self.elastic, self.interruptible
        text = f"{g} guaranteed, {e} elastic, {i} interruptible instance{'s' if g + e + i != 1 else ''}"
        if self.accelerators_per_instance:
            a = self.in_accelerators
            text += f" ({a['guaranteed']}, {a['elastic']}, {a['interruptible']} accelerators)"
        return text


def flexible_label(group: str, types: Iterable[str]) -> str:
    """How a flexible group's line is named: ``burst (ml.g5.12xlarge|ml.g6e.12xlarge)``."""
    return f"{group} ({'|'.join(types)})"


def capacity_lines(groups: Iterable[InstanceGroupPlan], cat: Catalog) -> tuple[CapacityLine, ...]:
    """The capacity lines of ``groups``: one per instance type of the one-type groups (sorted by type), then one per
    flexible group (sorted by name)."""
    by_type: dict[str, list[InstanceGroupPlan]] = {}
    flexible: list[InstanceGroupPlan] = []
    for g in groups:
        if len(g.types) > 1:
            flexible.append(g)
        else:
            by_type.setdefault(g.instance_type, []).append(g)
    lines = [CapacityLine(itype, (itype,), tuple(sorted(g.name for g in gs)), cat.lookup(itype).accelerators,
                          sum(g.guaranteed for g in gs), sum(g.elastic for g in gs), sum(g.interruptible for g in gs))
             for itype, gs in sorted(by_type.items())]
    lines += [CapacityLine(flexible_label(g.name, g.types), g.types, (g.name,),
                           min(cat.lookup(t).accelerators for t in g.types), g.guaranteed, g.elastic, g.interruptible)
              for g in sorted(flexible, key=lambda g: g.name)]
    return tuple(lines)


def lines_of_type(lines: Iterable[CapacityLine], itype: str) -> tuple[CapacityLine, ...]:
    """The lines that can run ``itype``: its own line and every flexible group that lists it."""
    return tuple(line for line in lines if itype in line.types)


# What each kind of capacity means, for the pages that show them (explain, the contract record, the review page).
KIND_WORDS = {
    "guaranteed": "On-Demand instances that stay",
    "elastic": "On-Demand instances there only after a scale-up (Karpenter's, or continuous provisioning's above "
               "minCount): work waits for them",
    "interruptible": "Spot instances, which EC2 reclaims with at most two minutes' notice, evicting the work on them",
    "flexible": "On-Demand instances of a flexible group, which may run as this type or as another of the group's",
}
KINDS = tuple(KIND_WORDS)


def type_kinds(lines: Iterable[CapacityLine], itype: str) -> dict[str, int]:
    """Instances that can run ``itype`` by kind (KINDS): its own line's guaranteed, elastic and interruptible, a
    flexible group's Spot instances as interruptible and its On-Demand ones as flexible (guaranteed to the group,
    not to one of its types). They add up to the most instances of the type (``Cluster.capacity``)."""
    out = dict.fromkeys(KINDS, 0)
    for line in lines_of_type(lines, itype):
        out["interruptible"] += line.interruptible
        if line.flexible:
            out["flexible"] += line.guaranteed + line.elastic
        else:
            out["guaranteed"] += line.guaranteed
            out["elastic"] += line.elastic
    return out


def line_json(line: CapacityLine) -> dict[str, object]:
    """One capacity line as ``explain --format json`` writes it (``capacityKinds``)."""
    return {"line": line.label, "instanceTypes": list(line.types), "groups": list(line.groups),
            "flexible": line.flexible, "acceleratorsPerInstance": line.accelerators_per_instance,
            "instances": line.instances, "accelerators": line.in_accelerators}


def linked_types(groups: Iterable[InstanceGroupPlan]) -> tuple[tuple[str, ...], ...]:
    """Sets of types flexible groups join (a flexible group's types, and any types another flexible group shares
    with them), each sorted: capacity on them is shared, so what is owned and what is not is counted per set."""
    sets: list[set[str]] = []
    for g in groups:
        if len(g.types) < 2:
            continue
        joined = set(g.types)
        for s in [s for s in sets if s & joined]:
            joined |= s
            sets.remove(s)
        sets.append(joined)
    return tuple(sorted(tuple(sorted(s)) for s in sets))


def set_capacity(groups: Iterable[InstanceGroupPlan], types: tuple[str, ...], per_instance: dict[str, int]) -> int:
    """The most the groups running any of ``types`` hold together, in governed units (``per_instance``: one instance's
    units per type; a flexible group's types bring the same, HPG-K006): each group once."""
    return sum(g.count * per_instance[g.types[0]] for g in groups if set(g.types) & set(types))


def patching_words(g: object) -> str:
    """When and how the group's node image is replaced (ScheduledUpdateConfig, AutoPatchConfig), in words."""
    p = getattr(g, "patching")
    if p is None:
        return "only when the cluster is updated"
    parts = []
    if p.schedule_expression:
        parts.append(f"scheduled {p.schedule_expression}")
    if p.auto:
        parts.append(f"security patches {p.auto}")
    if p.batch:
        parts.append(f"batches of {p.batch[1]}{'%' if p.batch[0] == 'CAPACITY_PERCENTAGE' else ' nodes'}")
    if p.wait_seconds is not None:
        parts.append(f"{p.wait_seconds}s between batches")
    if p.rollback_alarms:
        parts.append(f"rolled back on {', '.join(p.rollback_alarms)}")
    return "; ".join(parts)
