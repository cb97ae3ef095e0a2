"""HPG-S, the teams on a Slurm cluster: partitions per governed type, quotas within the Compute groups, partition
access, GPU tracking, borrow caps and fair share, and the generated Slurm and POSIX names (docs/slurm.md)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Iterator, Optional

from ..errors import NO_VALUE, SpecIssue
from ..instance_types import allocation_units, spec_catalog
from ..models import GovernanceSpec, Team
from ..rulebook import rule
from ._common import _slurm


SLURM_RESERVED_QOS = ("normal",)  # Slurm's own default QOS, which every association starts with


def _compute_partitions(spec: GovernanceSpec) -> dict[str, list[tuple[int, str]]]:
    """Partition -> (group index, instance type) of its Compute groups."""
    out: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for gi, g in enumerate(spec.cluster.instance_groups):
        if g.slurm is not None and g.slurm.node_type == "Compute" and g.slurm.partition:
            out[g.slurm.partition].append((gi, g.instance_type))
    return out


def _compute_capacity(spec: GovernanceSpec) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for g in spec.cluster.instance_groups:
        if g.slurm is not None and g.slurm.node_type == "Compute":
            out[g.instance_type] += g.count
    return dict(out)


@rule("HPG-S004", "error", "On a Slurm cluster each instance type a team has a quota or borrow limit on is in "
      "exactly one partition, holding that type alone, and partition names differ in more than case (Slurm's "
      "GrpTRES counts a partition's nodes, not a type's).")
def slurm_partitions_hold_one_governed_type(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    partitions = _compute_partitions(spec)
    seen: dict[str, str] = {}
    for name in sorted(partitions):
        other = seen.setdefault(name.lower(), name)
        if other != name:
            gi = partitions[name][0][0]
            yield SpecIssue(f"cluster.instanceGroups[{gi}].slurm.partition", f"differs from partition {other!r} "
                            "only in case, and Slurm account names (which hyperpod-gov derives from partitions) are "
                            "lowercase", name, f"use {other!r} for both groups, or give the partitions distinct names")
    governed = {q.instance_type for t in spec.teams for q in (*t.quota, *t.sharing.absolute_borrow_limits)}
    for itype in sorted(governed):
        where = sorted({p for p, members in partitions.items() if any(t == itype for _, t in members)})
        if len(where) > 1:
            yield SpecIssue(f"teams[*].quota[{itype}]", f"{itype} is in partitions {', '.join(where)}: a team's "
                            "limit is per partition, so it would not know which to count", itype,
                            f"put every Compute group of {itype} in one partition")
    for name, members in sorted(partitions.items()):
        types = sorted({t for _, t in members})
        if len(types) > 1 and governed & set(types):
            yield SpecIssue(f"cluster.instanceGroups[{members[0][0]}].slurm.partition", f"partition {name} holds "
                            f"{', '.join(types)}: a team's node or GPU limit there would count any of them",
                            name, "give each governed instance type a partition of its own")


@rule("HPG-S005", "error", "On a Slurm cluster the teams' quotas fit the Compute groups of each type (Controller "
      "and Login nodes run no jobs).")
def slurm_quotas_fit_compute_capacity(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    cat = spec_catalog(spec)
    compute = _compute_capacity(spec)
    totals: dict[str, list[tuple[str, int]]] = defaultdict(list)
    unit: dict[str, str] = {}
    for ti, team in enumerate(spec.teams):
        for qi, q in enumerate(team.quota):
            if q.instance_type not in cat or q.partitions is not None:
                continue  # HPG-I003 and HPG-S003 (mig) report these
            facts = cat.lookup(q.instance_type)
            if q.instance_type not in compute:
                if q.instance_type in spec.cluster.capacity:
                    yield SpecIssue(f"teams[{ti}].quota[{qi}].instanceType", "is only in Controller or Login "
                                    "groups, which run no jobs", q.instance_type,
                                    "give the quota on a Compute group's type, or add a Compute group of it")
                continue
            units = allocation_units(facts, count=q.count, accelerators=q.accelerators, vcpu=q.vcpu,
                                     memory_gib=q.memory_gib)
            governed = units[0] if facts.accelerators else units[1]
            unit[q.instance_type] = "accelerators" if facts.accelerators else "vCPU"
            totals[q.instance_type].append((team.name, governed))
    for itype, asked in sorted(totals.items()):
        facts = cat.lookup(itype)
        per = facts.accelerators or facts.vcpu
        capacity = compute[itype] * per
        total = sum(n for _, n in asked)
        if total > capacity:
            listed = ", ".join(f"{t} {n}" for t, n in asked)
            yield SpecIssue(f"teams[*].quota[{itype}]", f"guarantees on {itype} add up to {total} {unit[itype]} "
                            f"({listed}) but its Compute groups hold {capacity} ({compute[itype]} x {itype}); Slurm "
                            "does not check that limits fit the cluster", total,
                            f"lower the quotas by {total - capacity} {unit[itype]} or add Compute instances of {itype}")


def _dedicated_partitions(spec: GovernanceSpec) -> dict[str, Optional[str]]:
    """Partition -> the team all its Compute groups are dedicated to (None: shared)."""
    owners: dict[str, set[Optional[str]]] = defaultdict(set)
    for g in spec.cluster.instance_groups:
        if g.slurm is not None and g.slurm.node_type == "Compute" and g.slurm.partition:
            owners[g.slurm.partition].add(g.dedicated_to)
    return {p: (next(iter(o)) if len(o) == 1 else None) for p, o in owners.items()}


@rule("HPG-S006", "error", "On a Slurm cluster a DontLend team's quotas are on partitions dedicated to it "
      "(instanceGroups[].dedicatedTo on every group of the partition): Slurm lets anyone run on idle nodes, and only "
      "a partition's AllowAccounts keeps them the team's.")
def slurm_dont_lend_needs_a_dedicated_partition(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    partitions = _compute_partitions(spec)
    owners = _dedicated_partitions(spec)
    for ti, team in enumerate(spec.teams):
        if team.sharing.strategy != "DontLend":
            continue
        for qi, q in enumerate(team.quota):
            where = [p for p, members in partitions.items() if any(t == q.instance_type for _, t in members)]
            shared = [p for p in where if owners.get(p) != team.name]
            if shared:
                yield SpecIssue(f"teams[{ti}].sharing.strategy", f"keeps {team.name}'s {q.instance_type} capacity "
                                f"from others, which Slurm cannot do on partition {', '.join(sorted(shared))}: idle "
                                "nodes run any account's jobs", "DontLend",
                                f"set dedicatedTo: {team.name} on the Compute groups of {q.instance_type} (their "
                                "partition then admits only the team's accounts), or use strategy: Lend")


@rule("HPG-S007", "error", "On a Slurm cluster, partition access (DontLend, dedicated groups, per-type guarantees "
      "on more than one partition) needs cluster.slurm.configStrategy: Merge, which keeps the AllowAccounts and "
      "AllowQos that hyperpod-gov adds to HyperPod's partition lines.")
def slurm_partition_access_needs_merge(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    strategy = spec.cluster.slurm.config_strategy if spec.cluster.slurm else "Managed"
    if strategy == "Merge":
        return
    reasons = []
    dedicated = sorted({g.name for g in spec.cluster.instance_groups if g.dedicated_to and g.slurm is not None})
    if dedicated:
        reasons.append(f"groups {', '.join(dedicated)} are dedicated to a team")
    partitions = _compute_partitions(spec)
    governed = {q.instance_type for t in spec.teams for q in (*t.quota, *t.sharing.absolute_borrow_limits)}
    used = sorted({p for p, members in partitions.items() if any(t in governed for _, t in members)})
    if len(partitions) > 1 and used:
        reasons.append(f"guarantees on partition {', '.join(used)} could be spent on the cluster's other "
                       "partitions unless each admits only its own accounts")
    if reasons:
        yield SpecIssue("cluster.slurm.configStrategy", f"is {strategy}, under which HyperPod rewrites the partition "
                        f"lines, but {'; '.join(reasons)}", strategy,
                        "set cluster.slurm.configStrategy: Merge (manual partition settings are kept)")


@rule("HPG-S008", "error", "On a Slurm cluster, quotas and borrow limits in accelerators need GPUs tracked as "
      "GRES (cluster.slurm.gpuGres: true) and NVIDIA GPUs; vCPU with memory and whole instances need neither.")
def slurm_accelerator_quotas_need_gpu_tracking(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    cat = spec_catalog(spec)
    gres = bool(spec.cluster.slurm and spec.cluster.slurm.gpu_gres)
    for ti, team in enumerate(spec.teams):
        entries = [(f"teams[{ti}].quota[{qi}]", q) for qi, q in enumerate(team.quota)]
        entries += [(f"teams[{ti}].sharing.absoluteBorrowLimits[{bi}]", b)
                    for bi, b in enumerate(team.sharing.absolute_borrow_limits)]
        for path, q in entries:
            if q.accelerators is None or q.instance_type not in cat:
                continue
            kind = cat.lookup(q.instance_type).accelerator_kind
            facts = cat.lookup(q.instance_type)
            whole = f"count: {max(q.accelerators // (facts.accelerators or 1), 1)}"
            if kind != "nvidia.com/gpu":
                yield SpecIssue(f"{path}.accelerators", f"counts {kind or 'accelerators'} of {q.instance_type}, "
                                "which Slurm tracks only as a GRES hyperpod-gov does not configure", q.accelerators,
                                f"give the quota in whole instances ({whole})")
            elif not gres:
                yield SpecIssue(f"{path}.accelerators", "would be a GrpTRES=gres/gpu limit, but the cluster does not "
                                "track GPUs as GRES (HyperPod's default slurm.conf has no GresTypes=gpu)",
                                q.accelerators, "set cluster.slurm.gpuGres: true once the nodes declare their GPUs in "
                                f"gres.conf, or give the quota in whole instances ({whole})")


@rule("HPG-S009", "warning", "On a Slurm cluster a borrow limit in percent becomes a fixed cap (a QOS GrpTRES of "
      "that share of the quota, rounded down), not a share of what is idle.")
def slurm_borrow_percent_is_a_static_cap(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec) or not spec.scheduler.idle_resource_sharing:
        return
    for ti, team in enumerate(spec.teams):
        s = team.sharing
        if s.strategy != "LendAndBorrow":
            continue
        absolute = {b.instance_type for b in s.absolute_borrow_limits}
        percent = s.effective_borrow_limit_percent
        for qi, q in enumerate(team.quota):
            if q.instance_type in absolute:
                continue
            amount = next(v for v in (q.count, q.accelerators, q.vcpu) if v is not None)
            unit = "instances" if q.count is not None else "accelerators" if q.accelerators is not None else "vCPU"
            cap = amount * percent // 100
            yield SpecIssue(f"teams[{ti}].sharing.borrowLimitPercent", f"becomes a fixed cap of {cap} {unit} of "
                            f"{q.instance_type} ({percent}% of {amount}) on the team's borrow QOS, whatever is idle",
                            percent, f"give the cap as sharing.absoluteBorrowLimits on {q.instance_type} to state "
                            "it exactly, or acknowledge HPG-S009")


@rule("HPG-S010", "warning", "On a Slurm cluster a fair-share weight of 0 becomes Fairshare=1: Slurm gives every "
      "account a share, and its fair share lowers priority with past usage rather than ordering idle capacity.")
def slurm_fair_share_zero_is_clamped(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    for ti, team in enumerate(spec.teams):
        if team.fair_share_weight == 0:
            yield SpecIssue(f"teams[{ti}].fairShareWeight", "becomes Fairshare=1 on the team's Slurm account: 0 "
                            "would give it no share of its own", 0, "set a weight from 1, or acknowledge HPG-S010")


def _default_group(team: Team) -> str:
    return team.slurm.group if team.slurm and team.slurm.group else team.name


@rule("HPG-S011", "error", "On a Slurm cluster the generated Slurm and POSIX names do not collide: no team takes "
      "the organisation account's name (the spec's) or Slurm's own, no priority class is Slurm's normal QOS, each "
      "team has its own valid group and data directory, and no group is a user's name.")
def slurm_names_are_distinct(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    from ..slurm import POSIX_NAME, RESERVED_POSIX, SHARED_MOUNT

    for ti, team in enumerate(spec.teams):
        if team.name in (spec.name, "root"):
            yield SpecIssue(f"teams[{ti}].name", f"is the name of the Slurm account "
                            f"{'of the organisation (the spec name)' if team.name == spec.name else 'Slurm has'}",
                            team.name, "rename the team")
    for pi, p in enumerate(spec.scheduler.priority_classes):
        if p.name in SLURM_RESERVED_QOS:
            yield SpecIssue(f"scheduler.priorityClasses[{pi}].name", "is Slurm's default QOS, which every "
                            "association starts with", p.name, "name the class differently, e.g. standard")
    users = {u for t in spec.teams if t.slurm for u in t.slurm.users}
    groups: dict[str, int] = {}
    paths: dict[str, int] = {}
    for ti, team in enumerate(spec.teams):
        group = _default_group(team)
        given = bool(team.slurm and team.slurm.group)
        where = f"teams[{ti}].slurm.group"
        if not given and (not POSIX_NAME.match(group) or group in RESERVED_POSIX):
            yield SpecIssue(where, f"defaults to the team name {group!r}, which is not a POSIX group name it may "
                            "take", NO_VALUE, "set slurm.group: NAME (at most 32 lowercase letters, digits, '_' "
                            "and '-', starting with a letter)")
        if group in groups:
            yield SpecIssue(where, f"is also teams[{groups[group]}]'s group: both teams would read each other's data",
                            group, "give each team its own group")
        groups.setdefault(group, ti)
        if group in users:
            yield SpecIssue(where, f"{group!r} is also a user's name, whose own group it would be", group,
                            "name the group differently, e.g. " + f"{group}-team"[:32])
        path = team.slurm.data_path if team.slurm and team.slurm.data_path else f"{SHARED_MOUNT}/{team.name}"
        for other, oi in paths.items():
            if path == other or path.startswith(other + "/") or other.startswith(path + "/"):
                yield SpecIssue(f"teams[{ti}].slurm.dataPath", f"is {'the same as' if path == other else 'nested with'} "
                                f"teams[{oi}]'s data directory {other}", path, "give each team a directory of its own")
        paths.setdefault(path, ti)


@rule("HPG-S012", "warning", "On a Slurm cluster a team with users has capacity to run on: a quota, or a borrow "
      "limit (users are associated with the team's per-partition accounts, and a team without any has none).")
def slurm_users_have_an_account(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    for ti, team in enumerate(spec.teams):
        if team.slurm and team.slurm.users and not team.quota and not (
                team.sharing.strategy == "LendAndBorrow" and team.sharing.absolute_borrow_limits):
            yield SpecIssue(f"teams[{ti}].slurm.users", "cannot submit anything: the team owns nothing and has no "
                            "absolute borrow limit, so it has no account on any partition", list(team.slurm.users),
                            "give the team a quota or sharing.absoluteBorrowLimits")
