"""HPG-Q: quotas, sharing and the scheduler: quota entries and capacity, borrow limits, Kueue's flavor limit, the
task-governance add-on beside a self-managed Kueue, per-team priority classes and dedicated groups."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Iterator

from ... import catalog
from ..allocation import Allocation
from ..errors import SpecIssue
from ..instance_types import Units, allocation_units, group_mig_profiles, spec_catalog
from ..models import GovernanceSpec
from ..rulebook import rule
from ._common import _repeats


MAX_KUEUE_FLAVORS = 16  # Kueue: at most 16 flavors in a resource group


def _valid_mig_profiles(spec: GovernanceSpec, cat: catalog.Catalog) -> dict[str, str | None]:
    """Per type, its groups' MIG profile where the type's GPUs offer it (mig_groups_are_consistent reports the rest)."""
    out: dict[str, str | None] = {}
    for itype, profile in group_mig_profiles(spec).items():
        facts = cat.get(itype)
        out[itype] = profile if profile and facts is not None and facts.mig_profile(profile) else None
    return out


def _group_paths(spec: GovernanceSpec, itype: str) -> str:
    return ", ".join(f"cluster.instanceGroups[{gi}]" for gi, g in enumerate(spec.cluster.instance_groups)
                     if g.instance_type == itype)


def _entry_issues(spec: GovernanceSpec, cat: catalog.Catalog, path: str, q: Allocation,
                  migs: dict[str, str | None], instances: dict[str, int]) -> Iterator[SpecIssue]:
    """What is wrong with one allocation (quota entry or absolute borrow limit) on its own."""
    facts = cat.get(q.instance_type)
    if facts is None:
        return  # instance_types_are_known reports it
    if q.instance_type not in instances:
        have = ", ".join(sorted(instances)) or "none"
        yield SpecIssue(
            f"{path}.instanceType", "no instance group has this type", q.instance_type,
            f"add an instance group of that type or use one the cluster has ({have})",
        )
        return
    profile = migs.get(q.instance_type)
    if q.accelerators is not None and facts.accelerators == 0:
        yield SpecIssue(
            f"{path}.accelerators", f"{q.instance_type} has no accelerators", q.accelerators,
            "give the quota as count: N instances, or as vcpu: N with memoryGib: M",
        )
    elif q.accelerators is not None and profile is not None:
        yield SpecIssue(
            f"{path}.accelerators", f"the GPUs of {q.instance_type} are partitioned into {profile} "
            f"({_group_paths(spec, q.instance_type)}), so its nodes offer no whole GPUs", q.accelerators,
            f"give partitions: {{profile: {profile}, count: N}} (or count: N instances)",
        )
    elif q.vcpu is not None and facts.accelerators:
        yield SpecIssue(
            f"{path}.vcpu", f"vcpu and memoryGib are for types without accelerators; {q.instance_type} has "
            f"{facts.accelerators}", q.vcpu,
            "give count, accelerators or partitions (they bring their share of vCPU and memory)",
        )
    elif q.partitions is not None:
        wanted = q.partitions.profile
        if facts.mig_profile(wanted) is None:
            offered = ", ".join(p.name for p in facts.mig_profiles)
            yield SpecIssue(
                f"{path}.partitions.profile",
                f"is not a MIG profile of {q.instance_type}'s accelerators ({facts.accelerator_model or 'none'})",
                wanted, f"use one of: {offered}" if offered else "give count or accelerators: this type has no MIG",
            )
        elif profile is None:
            yield SpecIssue(
                f"{path}.partitions.profile", f"no instance group of {q.instance_type} partitions its GPUs",
                wanted, f"add mig: {{profile: {wanted}}} to {_group_paths(spec, q.instance_type)}",
            )
        elif profile != wanted:
            yield SpecIssue(
                f"{path}.partitions.profile", f"the GPUs of {q.instance_type} are partitioned into {profile}",
                wanted, f"use profile: {profile}, or change the groups' mig profile",
            )
        elif spec.scheduler.mode == "task-governance" and wanted not in catalog.COMPUTE_QUOTA_MIG_PROFILES:
            yield SpecIssue(
                f"{path}.partitions.profile", "is not a profile CloudFormation's AWS::SageMaker::ComputeQuota "
                "accepts yet (AcceleratorPartition.Type)", wanted,
                "use scheduler.mode: kueue for this type, or give count or accelerators",
            )


@rule("HPG-Q001", "error", "Each quota entry names a type some instance group has, in a unit the type offers "
      "(instances, accelerators, vCPU with memory, or the groups' MIG partitions).")
def quota_entries_fit_their_type(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    instances = spec.cluster.capacity
    migs = _valid_mig_profiles(spec, cat)
    for ti, team in enumerate(spec.teams):
        for qi, q in enumerate(team.quota):
            yield from _entry_issues(spec, cat, f"teams[{ti}].quota[{qi}]", q, migs, instances)


@rule("HPG-Q002", "error", "The teams' quotas on each instance type add up to no more than its instance groups "
      "hold (instances, accelerators, partitions, vCPU and memory).")
def quotas_fit_capacity(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    instances = spec.cluster.capacity
    migs = _valid_mig_profiles(spec, cat)
    asked: dict[str, list[tuple[str, int, bool]]] = defaultdict(list)  # type -> (team, amount, in accelerators)
    parts: dict[str, list[tuple[str, int]]] = defaultdict(list)  # MIG type -> (team, partitions)
    amounts: dict[str, list[tuple[str, Units]]] = defaultdict(list)  # type -> (team, what the entry brings)
    by_vcpu: set[str] = set()
    for ti, team in enumerate(spec.teams):
        for qi, q in enumerate(team.quota):
            path = f"teams[{ti}].quota[{qi}]"
            if any(_entry_issues(spec, cat, path, q, migs, instances)) or q.instance_type not in cat \
                    or q.instance_type not in instances:
                continue  # HPG-Q001 or HPG-I003 reports the entry; its amount cannot be added up
            profile = migs.get(q.instance_type)
            got = allocation_units(
                cat.lookup(q.instance_type), count=q.count, accelerators=q.accelerators, vcpu=q.vcpu,
                memory_gib=q.memory_gib, partition=(q.partitions.profile, q.partitions.count) if q.partitions else None,
                mig_profile=profile)
            amounts[q.instance_type].append((team.name, got))
            if profile is not None:
                parts[q.instance_type].append((team.name, sum(n for _, n in got[3])))
            elif q.vcpu is not None:
                by_vcpu.add(q.instance_type)
            elif q.accelerators is not None:
                asked[q.instance_type].append((team.name, q.accelerators, True))
            else:
                asked[q.instance_type].append((team.name, q.count or 0, False))
    for itype in sorted(asked):
        facts = cat.lookup(itype)
        in_acc = any(acc for _, _, acc in asked[itype])
        per = facts.accelerators if in_acc else 1
        unit = "accelerators" if in_acc else "instances"
        total = sum(n if acc else n * per for _, n, acc in asked[itype])
        capacity = instances[itype] * per
        if total > capacity:
            listed = ", ".join(f"{team} {n if acc else n * per}" for team, n, acc in asked[itype])
            yield SpecIssue(
                f"teams[*].quota[{itype}]",
                f"quotas on {itype} add up to {total} {unit} ({listed}) but the instance groups hold "
                f"{capacity} ({instances[itype]} x {itype})",
                total,
                f"lower the quotas by {total - capacity} {unit} or add instances of {itype}",
            )
            by_vcpu.discard(itype)
    for itype in sorted(parts):
        facts = cat.lookup(itype)
        profile = migs[itype] or ""
        per_gpu = facts.mig_profile(profile).per_gpu  # type: ignore[union-attr]
        total = sum(n for _, n in parts[itype])
        capacity = instances[itype] * facts.accelerators * per_gpu
        if total > capacity:
            listed = ", ".join(f"{team} {n}" for team, n in parts[itype])
            yield SpecIssue(
                f"teams[*].quota[{itype}]",
                f"quotas on {itype} add up to {total} partitions of {profile} ({listed}) but the instance groups "
                f"provide {capacity} ({instances[itype]} x {itype} x {facts.accelerators} GPUs x {per_gpu})",
                total,
                f"lower the quotas by {total - capacity} partitions or add instances of {itype}",
            )
    for itype in sorted(by_vcpu):
        facts = cat.lookup(itype)
        for unit, at, per in (("vCPU", 1, facts.vcpu), ("GiB of memory", 2, facts.memory_gib)):
            total = sum(a[at] for _, a in amounts[itype])
            capacity = instances[itype] * per
            if total > capacity:
                listed = ", ".join(f"{team} {a[at]}" for team, a in amounts[itype])
                yield SpecIssue(
                    f"teams[*].quota[{itype}]",
                    f"quotas on {itype} add up to {total} {unit} ({listed}) but the instance groups hold "
                    f"{capacity} ({instances[itype]} x {itype} x {per})",
                    total,
                    f"lower the quotas by {total - capacity} {unit} or add instances of {itype}",
                )


@rule("HPG-Q003", "error", "Only a LendAndBorrow team has borrow limits: a percentage from 1 to 500, and absolute "
      "limits once per type, each valid like a quota entry.")
def sharing_is_consistent(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    instances = spec.cluster.capacity
    migs = _valid_mig_profiles(spec, cat)
    for ti, team in enumerate(spec.teams):
        s = team.sharing
        path = f"teams[{ti}].sharing.borrowLimitPercent"
        if s.borrow_limit_percent is not None:
            if s.strategy != "LendAndBorrow":
                yield SpecIssue(
                    path, f"a {s.strategy} team cannot borrow", s.borrow_limit_percent,
                    "remove borrowLimitPercent, or set strategy: LendAndBorrow",
                )
            elif not 1 <= s.borrow_limit_percent <= 500:
                yield SpecIssue(path, "is outside 1..500", s.borrow_limit_percent, "use a percentage from 1 to 500")
        limits = s.absolute_borrow_limits
        base = f"teams[{ti}].sharing.absoluteBorrowLimits"
        if limits and s.strategy != "LendAndBorrow":
            yield SpecIssue(base, f"a {s.strategy} team cannot borrow", list(limits),
                            "remove absoluteBorrowLimits, or set strategy: LendAndBorrow")
            continue
        yield from _repeats([b.instance_type for b in limits], lambda bi: f"{base}[{bi}].instanceType",
                            "appears twice in the team's absolute borrow limits", "keep one limit per instance type")
        for bi, b in enumerate(limits):
            yield from _entry_issues(spec, cat, f"{base}[{bi}]", b, migs, instances)


@rule("HPG-Q004", "warning", "A team's borrow limits have an effect: scheduler.idleResourceSharing is on.")
def borrowing_needs_idle_sharing(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if spec.scheduler.idle_resource_sharing:
        return
    for ti, team in enumerate(spec.teams):
        s = team.sharing
        limits = s.absolute_borrow_limits
        if s.strategy == "LendAndBorrow" and (limits or s.borrow_limit_percent is not None):
            yield SpecIssue(
                f"teams[{ti}].sharing.absoluteBorrowLimits" if limits else f"teams[{ti}].sharing.borrowLimitPercent",
                "has no effect: scheduler.idleResourceSharing is false, so no team borrows",
                list(limits) if limits else s.borrow_limit_percent,
                "remove the borrow limits, or set scheduler.idleResourceSharing: true",
            )


@rule("HPG-Q005", "error", f"In kueue mode the cluster has at most {MAX_KUEUE_FLAVORS} instance types: Kueue "
      "takes at most that many flavors per ClusterQueue.")
def kueue_flavor_limit(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    types = {g.instance_type for g in spec.cluster.instance_groups}
    # A team's queue also lists a flavor per type of its dedicated groups (instanceGroups[].dedicatedTo).
    dedicated: dict[str, set[str]] = defaultdict(set)
    for g in spec.cluster.instance_groups:
        if g.dedicated_to is not None:
            dedicated[g.dedicated_to].add(g.instance_type)
    most = len(types) + max((len(v) for v in dedicated.values()), default=0)
    if spec.scheduler.mode == "kueue" and most > MAX_KUEUE_FLAVORS:
        extra = most - len(types)
        yield SpecIssue(
            "cluster.instanceGroups", f"use {len(types)} instance types"
            + (f" (and a team's dedicated groups add {extra} flavors to its queue)" if extra else "")
            + f"; Kueue takes at most {MAX_KUEUE_FLAVORS} flavors per ClusterQueue", most,
            "merge instance types" + (", dedicate fewer types to one team" if extra else "") + " or use task-governance",
        )


@rule("HPG-Q006", "error", "The task-governance add-on is not installed on a cluster where a self-managed Kueue "
      "runs (AWS's prerequisite: uninstall Kueue first).")
def task_governance_addon_not_next_to_kueue(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    e = spec.cluster.existing
    if e is None or spec.scheduler.mode != "task-governance":
        return
    if e.installs.scheduler and e.self_managed_kueue:
        yield SpecIssue("cluster.existing.installs.scheduler", "would install the task-governance add-on, which "
                        "bundles its own Kueue, on a cluster where cluster.existing.selfManagedKueue says Kueue "
                        "runs already", True,
                        "uninstall the self-managed Kueue first (AWS's prerequisite for the add-on) and set "
                        "selfManagedKueue: false, or set installs.scheduler: false, or use scheduler.mode: kueue")


# --- per-team workload limits (teams[].priorityClasses) -------------------------------------------------------

@rule("HPG-Q007", "error", "A team's priorityClasses name priority classes of scheduler.priorityClasses, each once; "
      "a team with requirePriority may use at least one.")
def team_priority_classes_are_defined(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    defined = [p.name for p in spec.scheduler.priority_classes]
    for ti, team in enumerate(spec.teams):
        chosen = list(team.priority_classes or ())
        for pi, name in enumerate(chosen):
            path = f"teams[{ti}].priorityClasses[{pi}]"
            if name not in defined:
                yield SpecIssue(path, "is not a priority class of scheduler.priorityClasses", name,
                                f"use one of: {', '.join(defined)}" if defined else
                                "define it under scheduler.priorityClasses first, or remove it")
        yield from _repeats(chosen, lambda i, ti=ti: f"teams[{ti}].priorityClasses[{i}]",
                            "names a priority class twice", "list each class once")
        usable = set(defined) if team.priority_classes is None else set(defined).intersection(chosen)
        if team.require_priority and not usable:
            yield SpecIssue(f"teams[{ti}].requirePriority", "requires a priority class label, but the team may use "
                            "no priority class (teams[].priorityClasses, scheduler.priorityClasses): admission would "
                            "refuse all of its work", True, "give the team a class of scheduler.priorityClasses in "
                            "priorityClasses, or remove requirePriority")


# --- dedicated node groups (instanceGroups[].dedicatedTo) ------------------------------------------------------


def _governed(facts: catalog.InstanceType, units: Units, profile: str | None) -> int:
    """An amount in the one unit a quota on the type is counted in: MIG partitions, accelerators or vCPU."""
    if profile is not None:
        return sum(n for _, n in units[3])
    return units[0] if facts.accelerators else units[1]


@rule("HPG-Q008", "error", "An instance group's dedicatedTo names a team of the spec (not the shared pool).")
def dedicated_groups_name_a_team(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    teams = [t.name for t in spec.teams]
    for gi, g in enumerate(spec.cluster.instance_groups):
        if g.dedicated_to is not None and g.dedicated_to not in teams:
            pool = spec.shared_pool is not None and spec.shared_pool.name == g.dedicated_to
            yield SpecIssue(
                f"cluster.instanceGroups[{gi}].dedicatedTo",
                "names the shared pool, which runs no work of its own" if pool else "names no team of the spec",
                g.dedicated_to, f"name one of the teams ({', '.join(sorted(teams)) or 'none'}), or remove dedicatedTo",
            )


@rule("HPG-Q009", "error", "A dedicated group's capacity is lent to nobody: its team's quota on the type covers "
      "the team's dedicated groups of that type (capacity no quota holds is idle capacity others borrow), and in "
      "task-governance mode the team is DontLend (a ComputeQuota lends per team, not per node group).")
def dedicated_capacity_is_not_lent(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    migs = _valid_mig_profiles(spec, cat)
    teams = {t.name: (ti, t) for ti, t in enumerate(spec.teams)}
    dedicated: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)  # (team, type) -> (group, count)
    for gi, g in enumerate(spec.cluster.instance_groups):
        if g.dedicated_to in teams and g.instance_type in cat:
            dedicated[(g.dedicated_to, g.instance_type)].append((gi, g.count))
    for (team_name, itype), groups in sorted(dedicated.items()):
        ti, team = teams[team_name]
        facts, profile = cat.lookup(itype), migs.get(itype)
        paths = ", ".join(f"cluster.instanceGroups[{gi}]" for gi, _ in groups)
        need = _governed(facts, allocation_units(facts, count=sum(n for _, n in groups), mig_profile=profile),
                         profile)
        entry = next(((qi, q) for qi, q in enumerate(team.quota) if q.instance_type == itype), None)
        have = 0
        if entry is not None:
            q = entry[1]
            have = _governed(facts, allocation_units(
                facts, count=q.count, accelerators=q.accelerators, vcpu=q.vcpu, memory_gib=q.memory_gib,
                partition=(q.partitions.profile, q.partitions.count) if q.partitions else None, mig_profile=profile),
                profile)
        unit = "partitions" if profile else "accelerators" if facts.accelerators else "vCPU"
        if have < need:
            yield SpecIssue(
                f"teams[{ti}].quota[{entry[0]}]" if entry else f"teams[{ti}].quota",
                f"holds {have} {unit} of {itype}, less than the {need} of the groups dedicated to {team_name} "
                f"({paths}): the rest would count as idle capacity that other teams borrow but cannot run on",
                have, f"give {team_name} a quota of at least {need} {unit} on {itype}, or dedicate fewer instances",
            )
        if spec.scheduler.mode == "task-governance" and team.sharing.strategy != "DontLend" \
                and spec.cluster.orchestrator == "eks":
            yield SpecIssue(
                f"teams[{ti}].sharing.strategy",
                f"lends {team_name}'s idle {itype} capacity, the dedicated nodes' ({paths}) included: a ComputeQuota "
                "lends per team and type, and other teams' pods cannot run on the dedicated nodes",
                team.sharing.strategy,
                "set sharing.strategy: DontLend, or use scheduler.mode: kueue (its dedicated flavor lends nothing)",
            )
