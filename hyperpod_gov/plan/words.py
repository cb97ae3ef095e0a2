"""An allocation in words: what each team owns, lends and borrows, and what nobody owns.

The words ``explain``, ``diff`` (through ``views.py``), the contract record and the review page share.
"""

from __future__ import annotations

import re


from .elastic import linked_types, set_capacity
from .model import Plan
from .quotas import Amounts, FlavorQuota, TeamPlan, amounts_for


_UNITS = {"nvidia.com/gpu": "GPU", "aws.amazon.com/neurondevice": "Neuron device"}
# What pausing a team (teams[].active: false) does, in both modes.
PAUSE_EFFECT = ("nothing new of the team is admitted (ComputeQuota ActivationState: Disabled; kueue mode: "
                "ClusterQueue stopPolicy: Hold); work already admitted keeps running until it ends; its queued work "
                "waits; its namespace, access and objects stay")
NO_IDLE_SHARING = "idle resource sharing is off"


def _amount(f: FlavorQuota, n: int) -> str:
    unit = _UNITS.get(f.accelerator_kind or "", "vCPU")
    return f"{n} {unit}{'s' if n != 1 else ''} ({f.instance_type})"


def _describe(f: FlavorQuota, amounts: Amounts) -> str:
    """An amount on one flavor in the unit the flavor is governed in: partitions, accelerators or vCPU."""
    if f.mig_resource:
        profile = f.mig_resource.removeprefix("nvidia.com/")
        return f"{amounts.partition(f.mig_resource)} x {profile} ({f.instance_type})"
    if f.accelerator_kind:
        return _amount(f, amounts.accelerators)
    if f.vcpu is not None:  # given as vCPU and memory: both matter
        return f"{amounts.vcpu} vCPU + {amounts.memory_gib} GiB ({f.instance_type})"
    return _amount(f, amounts.vcpu)


def owns(team: TeamPlan) -> str:
    return ", ".join(_describe(f, f.nominal) for f in team.owned) or "nothing"


def lends(team: TeamPlan) -> str:
    if not team.can_lend:
        return "nothing (DontLend)"
    if not team.idle_resource_sharing:
        return f"nothing ({NO_IDLE_SHARING})"
    return "idle share of " + owns(team) if team.owned else "nothing"


def borrows(team: TeamPlan) -> str:
    if not team.can_borrow:
        reason = team.strategy if team.strategy != "LendAndBorrow" else NO_IDLE_SHARING
        return f"nothing ({reason})"
    absolute = {b.instance_type for b in team.absolute_borrow_limits}
    caps = [_describe(f, f.borrowing_limit or f.nominal) for f in team.flavors
            if f in team.owned or f.instance_type in absolute]
    how = f"{team.borrow_limit_percent}%"
    if absolute:
        how += "; absolute on " + ", ".join(sorted(absolute))
    return f"up to {', '.join(caps) or 'nothing'} ({how})"


def paused(plan: Plan) -> list[str]:
    """The paused teams, each with what pausing does to its work."""
    return [f"{t.name}: {PAUSE_EFFECT}" for t in plan.tenants if not t.active]


def _linked_unowned(plan: Plan) -> tuple[list[str], set[str]]:
    """Unowned capacity of the type sets flexible groups join, one entry per set ("16 GPUs (ml.g5.12xlarge|
    ml.g6e.12xlarge)"), and the types counted so: per type, a flexible group's instances would count under each."""
    out, linked = [], set()
    flavors = {f.instance_type: f for f in plan.flavors}
    for types in linked_types(plan.instance_groups):
        if any(flavors[t].mig_resource for t in types if t in flavors):
            continue  # partitions stay per type (a flexible group has no MIG layout: HPG-K006)
        per = {t: flavors[t].governed(flavors[t].per_instance) for t in types if t in flavors}
        owned = sum(flavors[f.instance_type].governed(f.nominal) for t in plan.teams for f in t.flavors
                    if f.instance_type in per)
        left = set_capacity(plan.instance_groups, types, per) - owned
        kind = flavors[types[0]].accelerator_kind
        unit = _UNITS.get(kind or "", "vCPU")
        if left > 0:
            out.append(f"{left} {unit}{'s' if left != 1 and unit != 'vCPU' else ''} ({'|'.join(types)})")
        linked |= set(types)
    return out, linked


def unowned(plan: Plan) -> list[str]:
    """Capacity per instance type that no team (nor the shared pool) owns: it runs only borrowed work."""
    out, linked = _linked_unowned(plan)
    for flavor in plan.flavors:
        if flavor.instance_type in linked:
            continue  # a flexible group's types: counted together above
        owned_by_teams = [next(f for f in t.flavors if f.instance_type == flavor.instance_type) for t in plan.teams]
        profile = flavor.mig_resource.removeprefix("nvidia.com/") if flavor.mig_resource else None
        total = amounts_for(flavor.instance_type, count=flavor.instances, mig_profile=profile, catalog=plan.catalog)
        if flavor.mig_resource:
            left = total.partition(flavor.mig_resource) - sum(f.nominal.partition(flavor.mig_resource)
                                                                for f in owned_by_teams)
            if left > 0:
                out.append(f"{left} x {profile} ({flavor.instance_type})")
            continue
        kind = flavor.accelerator_kind
        used = sum((f.nominal.accelerators if kind else f.nominal.vcpu) for f in owned_by_teams)
        left = (total.accelerators if kind else total.vcpu) - used
        if left > 0:
            out.append(_amount(owned_by_teams[0], left) if owned_by_teams else f"{left} ({flavor.instance_type})")
    return out


def unowned_capacity(plan: Plan) -> tuple[str, ...]:
    """Per instance type, the capacity no team and no shared pool holds as quota, in the unit the type is governed
    in ("4 GPUs of ml.p5.48xlarge"); the types a flexible group joins are one entry ("16 GPUs of
    ml.g5.12xlarge|ml.g6e.12xlarge"); types wholly owned are left out."""
    linked_words, linked = _linked_unowned(plan)
    out = [re.sub(r" \((\S+)\)\Z", r" of \1", words) for words in linked_words]  # "16 GPUs of a|b"
    for fp in sorted(plan.flavors, key=lambda f: f.instance_type):
        if fp.instance_type in linked:
            continue  # a flexible group's types: counted together
        owned = sum(fp.governed(f.nominal) for t in plan.teams for f in t.flavors
                    if f.instance_type == fp.instance_type)
        left = fp.governed(fp.capacity) - owned
        if left <= 0:
            continue
        if fp.mig_resource:
            unit = f"x {fp.mig_resource.removeprefix('nvidia.com/')} partitions"
        else:
            unit = _UNITS.get(fp.accelerator_kind or "", "vCPU")
            unit += "s" if left != 1 and unit != "vCPU" else ""
        out.append(f"{left} {unit} of {fp.instance_type}")
    return tuple(out)


_UNOWNED = re.compile(r"\A(?P<n>\d+) (?P<unit>.+) of (?P<type>\S+)\Z")


def unowned_lines(_title: str, old: tuple[str, ...], new: tuple[str, ...]) -> list[str]:
    """One line per instance type whose unowned capacity changes (the row's values as ``unowned_capacity`` words
    them)."""
    def parse(values: tuple[str, ...]) -> dict[str, tuple[int, str]]:
        found = (_UNOWNED.match(v) for v in values)
        return {m["type"]: (int(m["n"]), m["unit"]) for m in found if m}

    was, now = parse(old), parse(new)
    lines = []
    for itype in sorted(set(was) | set(now)):
        (a, unit_a), (b, unit_b) = was.get(itype, (0, "")), now.get(itype, (0, ""))
        if a == b:
            continue
        if a == 0:
            them = "it" if b == 1 else "them"
            lines.append(f"{b} {unit_b} of {itype} become{'s' if b == 1 else ''} unowned: no team and no shared pool "
                         f"holds {them} as quota, so no queue's quota covers {them}")
        elif b == 0:
            lines.append(f"the {a} unowned {unit_a} of {itype} are no longer unowned")
        else:
            lines.append(f"unowned capacity of {itype}: {a} -> {b} {unit_b}")
    return lines
