"""HPG-K, the quotas over elastic capacity (issue 57): a flexible group's types counted in accelerators and its quotas
fitting together, reserved quotas on guaranteed capacity, inference off Spot-only capacity (the group rules are in
``elastic``)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from fractions import Fraction
from itertools import combinations
from typing import Iterator

from ... import catalog
from ..elastic import group_capacities, guaranteed_by_type
from ..errors import NO_VALUE, SpecIssue
from ..instance_types import spec_catalog
from ..models import GovernanceSpec
from ..rulebook import rule

# A Hall check over every subset of a flexible component's types is exact; past this many types only the whole
# component is checked (2^12 subsets is the most a validate run spends on one).
SUBSET_LIMIT = 12


def _flexible_types(spec: GovernanceSpec) -> dict[str, str]:
    """Each type some flexible group holds -> the first such group's name."""
    out: dict[str, str] = {}
    for g in spec.cluster.instance_groups:
        if g.flexible:
            for itype in g.instance_types:
                out.setdefault(itype, g.name)
    return out


@rule("HPG-K007", "error", "A quota or absolute borrow limit on a type some flexible group holds counts accelerators "
      "or vCPU and memory, not instances (count): the group's instances are shared among its types.")
def flexible_types_are_not_counted_in_instances(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    held = _flexible_types(spec)
    cat = spec_catalog(spec)
    for ti, team in enumerate(spec.teams):
        entries = [(f"teams[{ti}].quota[{qi}]", q) for qi, q in enumerate(team.quota)]
        entries += [(f"teams[{ti}].sharing.absoluteBorrowLimits[{bi}]", b)
                    for bi, b in enumerate(team.sharing.absolute_borrow_limits)]
        for path, q in entries:
            if q.count is None or q.instance_type not in held:
                continue
            facts = cat.get(q.instance_type)
            unit = (f"accelerators: {q.count * facts.accelerators}" if facts is not None and facts.accelerators
                    else "vcpu: N with memoryGib: M")
            yield SpecIssue(
                f"{path}.count", f"counts instances of {q.instance_type}, which the flexible group "
                f"{held[q.instance_type]} may run as any of its types: an instance count per type would promise its "
                "instances under each type", q.count, f"give {unit} instead")


def _linked_types(spec: GovernanceSpec) -> list[list[str]]:
    """Types linked by flexible groups (two types are linked when one flexible group holds both), each set sorted."""
    parent: dict[str, str] = {}

    def root(t: str) -> str:
        while parent.setdefault(t, t) != t:
            t = parent[t]
        return t

    for g in spec.cluster.instance_groups:
        if g.flexible:
            for itype in g.instance_types[1:]:
                parent[root(itype)] = root(g.instance_types[0])
    sets: dict[str, list[str]] = defaultdict(list)
    for t in sorted(parent):
        sets[root(t)].append(t)
    return sorted(sets.values())


@rule("HPG-K008", "error", "The teams' quotas on the types of flexible groups fit together: every set of such types "
      "asks at most what the groups holding them can hold (HPG-Q002 checks each type alone, where a flexible group "
      "counts under each of its types).")
def flexible_quotas_fit_together(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    groups = [g for g in spec.cluster.instance_groups if all(t in cat for t in g.types)]
    for linked in _linked_types(spec):
        if not all(t in cat for t in linked):
            continue  # HPG-I003 reports the type
        in_accelerators = any(cat.lookup(t).accelerators for t in linked)
        units = (("accelerators", lambda f: f.accelerators),) if in_accelerators else \
            (("vCPU", lambda f: f.vcpu), ("GiB of memory", lambda f: f.memory_gib))
        for unit, per in units:
            asked: dict[str, list[tuple[str, int]]] = defaultdict(list)
            for team in spec.teams:
                for q in team.quota:
                    if q.instance_type in linked and q.partitions is None:
                        facts = cat.lookup(q.instance_type)
                        # a count (HPG-K007 refuses it here) as what its instances bring, to add up all the same
                        amount = (q.count * per(facts) if q.count is not None else q.accelerators
                                  if in_accelerators else q.vcpu if unit == "vCPU" else q.memory_gib) or 0
                        asked[q.instance_type].append((team.name, amount))

            def holds(types: tuple[str, ...]) -> int:
                """The most the groups holding any of ``types`` hold of them: a group's instances, each as the
                largest of those types it may run."""
                return sum(g.count * max(per(cat.lookup(t)) for t in g.types if t in types)
                           for g in groups if set(g.types) & set(types))

            def over(types: tuple[str, ...]) -> bool:
                return sum(n for t in types for _, n in asked[t]) > holds(types)

            subsets = ([s for size in range(1, len(linked) + 1) for s in combinations(linked, size)]
                       if len(linked) <= SUBSET_LIMIT else [(t,) for t in linked] + [tuple(linked)])
            violated: list[tuple[str, ...]] = []
            for types in subsets:
                if any(set(v) < set(types) for v in violated) or not over(types):
                    continue
                violated.append(types)
                if len(types) == 1:
                    continue  # HPG-Q002 reports one type alone
                total = sum(n for t in types for _, n in asked[t])
                listed = ", ".join(f"{team} {n} on {t}" for t in types for team, n in asked[t])
                holding = ", ".join(f"{g.name} ({g.count} x {'|'.join(g.types)})"
                                    for g in groups if set(g.types) & set(types))
                yield SpecIssue(
                    f"teams[*].quota[{'|'.join(types)}]",
                    f"quotas on {' and '.join(types)} add up to {total} {unit} ({listed}), but the groups that run "
                    f"these types hold {holds(types)} in all ({holding}): a flexible group's instances count once, "
                    "not once per type", total,
                    f"lower these quotas by {total - holds(types)} {unit} together, or add instances")


def _guaranteed_units(facts: catalog.InstanceType, q, instances: int) -> tuple[int, str]:
    """(what ``instances`` guaranteed instances bring in the unit of quota entry ``q``, that unit)."""
    if q.accelerators is not None:
        return instances * facts.accelerators, "accelerators"
    if q.vcpu is not None:
        return instances * facts.vcpu, "vCPU"
    if q.partitions is not None:
        profile = facts.mig_profile(q.partitions.profile)
        return instances * facts.accelerators * (profile.per_gpu if profile else 0), "partitions"
    return instances, "instances"


def _amount(q) -> int:
    return q.count if q.count is not None else q.accelerators if q.accelerators is not None else \
        q.vcpu if q.vcpu is not None else q.partitions.count


@rule("HPG-K009", "warning", "A DontLend team's quota on a type, and the DontLend teams' quotas on it together, are "
      "no larger than the type's guaranteed capacity (On-Demand instances that stay; a flexible group's count toward "
      "none of its types alone): beyond it a reserved share depends on a scale-up, on Spot or on a flexible group.")
def reserved_quotas_are_guaranteed(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    groups = [g for g in group_capacities(spec.cluster) if all(t in cat for t in g.types)]  # else HPG-I003
    guaranteed = guaranteed_by_type(groups)
    reserved: dict[str, list[tuple[str, Fraction]]] = defaultdict(list)  # type -> (team, instances it reserves)
    alone: set[str] = set()  # types where one team's reservation alone is beyond the guarantee
    for ti, team in enumerate(spec.teams):
        if team.sharing.strategy != "DontLend":
            continue
        for qi, q in enumerate(team.quota):
            facts = cat.get(q.instance_type)
            if facts is None or q.instance_type not in guaranteed:
                continue  # HPG-I003 or HPG-Q001 reports the entry
            kept, unit = _guaranteed_units(facts, q, guaranteed[q.instance_type])
            asked = _amount(q)
            per = _guaranteed_units(facts, q, 1)[0]
            if per:
                reserved[q.instance_type].append((team.name, Fraction(asked, per)))
            if asked <= kept:
                continue
            alone.add(q.instance_type)
            others = ", ".join(f"{g.name}: {_kind(g)}" for g in groups if q.instance_type in g.types
                               and (g.elastic or g.interruptible or len(g.types) > 1)) or "none"
            yield SpecIssue(
                f"teams[{ti}].quota[{qi}]",
                f"reserves {asked} {unit} of {q.instance_type} for {team.name} (DontLend), and {kept} are guaranteed "
                f"({guaranteed[q.instance_type]} On-Demand instances that stay): the rest ({asked - kept}) exists only "
                f"after a scale-up, on Spot or as a flexible group's (groups beyond the guarantee: {others})", asked,
                (f"lower the quota to {kept}" if kept else "reserve capacity on a type with On-Demand instances that "
                 "stay") + ", keep more instances (minCount, or a group without autoscale), or acknowledge HPG-K009 "
                "with the reason the team can wait for them")
    for itype, teams in sorted(reserved.items()):
        total = sum(n for _, n in teams)
        if itype in alone or len(teams) < 2 or total <= guaranteed[itype]:
            continue
        listed = ", ".join(f"{team} {_instances(n)}" for team, n in teams)
        yield SpecIssue(
            f"teams[*].quota[{itype}]",
            f"the DontLend teams reserve {_instances(total)} instances of {itype} together ({listed}), and "
            f"{guaranteed[itype]} are guaranteed: each fits alone, together they depend on a scale-up, on Spot or on "
            "a flexible group", total.numerator if total.denominator == 1 else round(float(total), 2),
            f"keep their reservations within {guaranteed[itype]} instances together, or keep more instances")


def _instances(n: Fraction) -> str:
    return str(n.numerator) if n.denominator == 1 else f"{float(n):.2f}"


def _kind(g) -> str:
    """What a group adds beyond the guarantee of a type it runs: "4 elastic", "8 Spot", "2 kept On-Demand shared
    by ml.g5.12xlarge, ml.g6e.12xlarge" (a flexible group's)."""
    parts = [f"{g.guaranteed} kept On-Demand shared by {', '.join(g.types)}"] if len(g.types) > 1 and g.guaranteed \
        else []
    if g.elastic:
        parts.append(f"{g.elastic} elastic")
    if g.interruptible:
        parts.append(f"{g.interruptible} Spot")
    return " and ".join(parts)


@rule("HPG-K010", "warning", "A team whose contract approves inference has quota on some type that not only Spot "
      "groups hold: EC2 reclaims Spot nodes with two minutes' notice at best, which an endpoint's callers see.")
def inference_is_not_on_spot_only(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    spot_only = {t for t in {t for g in spec.cluster.instance_groups for t in g.types}
                 if all(g.capacity == "spot" for g in spec.cluster.instance_groups if t in g.types)}
    for ti, team in enumerate(spec.teams):
        c = team.contract
        if c is None or "inference" not in c.approved_workloads or not team.quota:
            continue
        types = sorted({q.instance_type for q in team.quota})
        if all(t in spot_only for t in types):
            yield SpecIssue(
                f"teams[{ti}].quota", f"puts all of {team.name}'s quota on Spot capacity ({', '.join(types)}), and its "
                "contract approves inference: EC2 reclaims Spot nodes with at most two minutes' notice (not "
                "guaranteed), evicting the endpoints on them", ", ".join(types),
                "give the team quota on an On-Demand group too, or acknowledge HPG-K010 with the reason its "
                "endpoints may stop")


@rule("HPG-K013", "error", "No sharedPool beside a flexible group: the pool takes, per type, what no team owns, and a "
      "flexible group's instances count under each of its types, so the pool would hold the same nodes twice.")
def shared_pool_has_no_flexible_group(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if spec.shared_pool is None:
        return
    for gi, g in enumerate(spec.cluster.instance_groups):
        if g.flexible:
            yield SpecIssue(
                "sharedPool", f"takes what no team owns per instance type, and instance group {g.name} may run its "
                f"{g.count} instances as any of {', '.join(g.types)}: the pool would own them once per type",
                NO_VALUE, f"give the unowned capacity to a team's quota (in accelerators), or make "
                f"cluster.instanceGroups[{gi}] one instanceType")
