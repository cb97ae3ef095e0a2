"""Cross-field rules over a structurally valid spec, one small pure function each, with an id.

Each rule is a function of ``(spec, today)`` that yields ``SpecIssue`` s, made a ``Rule`` by
``@rule(id, level, explanation)`` (the id scheme is in ``spec.rulebook``) and listed in ``RULES``;
``check_spec`` runs them all so that every problem is reported at once, each stamped with its rule's id
and level. Field-level rules (formats, ranges) live on the models themselves.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections import defaultdict
from typing import Callable, Iterator, Optional

from .. import catalog
from ._base import IAM_PRINCIPAL_ARN, SpecModel, internet_wide, partition_of, public_addresses
from .allocation import Allocation
from .cluster import INFERENCE_NOT_PROVISIONED, TRAINING_OPERATOR_KUBERNETES
from .cluster_options import (capacity_region_offers_hyperpod, instance_types_are_offered_in_the_region,
                              options_exist_in_the_regions_cloudformation, reservations_are_in_the_capacity_region)
from .contract import contracts_are_complete
from .errors import NO_VALUE, SpecIssue
from .instance_types import Units, allocation_units, group_mig_profiles, spec_catalog
from .models import GovernanceSpec, Team
from .rulebook import RuleBook, rule

# The id of the CDK warning the cluster construct adds when the dependencies chart is missing
# (constructs/hyperpod_cluster.py; a test keeps the two in step): HPG-D001 reports it at validate.
CDK_WARN_NO_DEPENDENCIES_CHART = "hyperpod-gov:dependenciesChartMissing"

MAX_KUEUE_FLAVORS = 16  # Kueue: at most 16 flavors in a resource group


def _repeats(values: list[str], path: Callable[[int], str], problem: str, fix: str) -> Iterator[SpecIssue]:
    """One issue for every value that already appeared earlier in ``values``."""
    seen: set[str] = set()
    for i, value in enumerate(values):
        if value in seen:
            yield SpecIssue(path(i), problem, value, fix)
        seen.add(value)


def _duplicates(path: str, names: list[str], what: str) -> Iterator[SpecIssue]:
    yield from _repeats(names, lambda i: f"{path}[{i}].name", f"duplicate {what} name",
                        f"give each {what} a unique name")


@rule("HPG-N001", "error", "Teams, priority classes, instance groups and consumer accounts have unique names (the "
      "shared pool too), each account and region is declared once, and a team names each quota type and service "
      "account once.")
def unique_names(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    team_names = [t.name for t in spec.teams]
    yield from _duplicates("teams", team_names, "team")
    if spec.shared_pool and spec.shared_pool.name in team_names:
        yield SpecIssue(
            "sharedPool.name", "is also the name of a team", spec.shared_pool.name,
            "name the pool differently (e.g. 'shared')",
        )
    yield from _duplicates("scheduler.priorityClasses", [p.name for p in spec.scheduler.priority_classes],
                           "priority class")
    yield from _duplicates("cluster.instanceGroups", [g.name for g in spec.cluster.instance_groups],
                           "instance group")
    consumers = spec.accounts.consumers
    yield from _duplicates("accounts.consumers", [c.name for c in consumers], "consumer account")
    seen: dict[tuple[str, str], int] = {}
    for i, c in enumerate(consumers):
        key = (c.id, c.region)
        if key in seen:
            yield SpecIssue(
                f"accounts.consumers[{i}].id", f"names the same account and region as accounts.consumers[{seen[key]}]",
                c.id, "declare each consumer account and region once",
            )
        seen.setdefault(key, i)
    for ti, team in enumerate(spec.teams):
        yield from _repeats(
            [q.instance_type for q in team.quota], lambda qi: f"teams[{ti}].quota[{qi}].instanceType",
            "appears twice in the team's quota", "merge the two entries into one",
        )
        yield from _repeats(
            [w.service_account for w in team.workload_identities],
            lambda wi: f"teams[{ti}].workloadIdentities[{wi}].serviceAccount",
            "appears twice in the team", "give each workload identity its own service account",
        )


def _instance_type_refs(spec: GovernanceSpec) -> Iterator[tuple[str, str]]:
    """(path, instance type) of every instance type the spec names outside ``instanceTypes``."""
    for gi, g in enumerate(spec.cluster.instance_groups):
        yield f"cluster.instanceGroups[{gi}].instanceType", g.instance_type
    for ti, team in enumerate(spec.teams):
        for qi, q in enumerate(team.quota):
            yield f"teams[{ti}].quota[{qi}].instanceType", q.instance_type
        for bi, b in enumerate(team.sharing.absolute_borrow_limits):
            yield f"teams[{ti}].sharing.absoluteBorrowLimits[{bi}].instanceType", b.instance_type


@rule("HPG-I001", "error", "A type declared under instanceTypes is not one the catalog already has (the catalog's "
      "facts are used).")
def declared_types_are_new(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for name in spec.instance_types:
        if name in catalog.CATALOG:
            yield SpecIssue(
                f"instanceTypes[{name}]", "is already in the catalog, whose facts hyperpod-gov uses", name,
                "remove the declaration (catalog.py cites where its facts come from)",
            )


@rule("HPG-I002", "warning", "A type declared under instanceTypes is not in the catalog: its quotas rest on the "
      "declared facts, and CloudFormation may not accept the type yet.")
def declared_types_are_uncatalogued(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for name in spec.instance_types:
        if name not in catalog.CATALOG:
            yield SpecIssue(
                f"instanceTypes[{name}]", "is not in hyperpod-gov's catalog: quotas on it rest on the facts "
                "declared here, and CloudFormation or the SageMaker API may not accept the type yet", name,
                "check the facts against the EC2 instance type specifications, and ask for the type to be added "
                "to catalog.py",
            )


@rule("HPG-I003", "error", "Every instance type the spec names (groups, quotas, borrow limits) is a HyperPod type "
      "the catalog knows or one declared under instanceTypes.")
def instance_types_are_known(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    for path, itype in _instance_type_refs(spec):
        if itype not in cat:
            # In a known family an unknown size is a typo: name the sizes meant, never suggest declaring it. An
            # unknown family may be a type newer than the catalog: then declaring its facts is the way.
            close = difflib.get_close_matches(itype, cat.known_types(), n=3, cutoff=0.8)
            family = itype.rsplit(".", 1)[0]
            near = [t for t in cat.known_types() if t.startswith(family + ".")]
            if near:
                fix = f"did you mean {' or '.join(close)}?" if close else f"use one of: {', '.join(near)}"
            else:
                fix = (f"did you mean {' or '.join(close)}? " if close else
                       "see hyperpod_gov/catalog.py for the supported types; ") + \
                      "or, for a type newer than the catalog, declare its facts under instanceTypes"
            yield SpecIssue(path, "is not a HyperPod instance type this library knows", itype, fix)


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


@rule("HPG-I004", "error", "An instance group's MIG profile is one its type's GPUs offer, and every group of one "
      "type is partitioned the same way.")
def mig_groups_are_consistent(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    first: dict[str, tuple[int, str | None]] = {}
    for gi, g in enumerate(spec.cluster.instance_groups):
        facts = cat.get(g.instance_type)
        profile = g.mig.profile if g.mig else None
        if facts is None:
            continue
        if profile is not None:
            path = f"cluster.instanceGroups[{gi}].mig.profile"
            if facts.accelerator_kind != catalog.NVIDIA_GPU:
                yield SpecIssue(path, f"{g.instance_type} has no NVIDIA GPUs to partition", profile,
                                "remove mig from this group")
                continue
            if facts.mig_profile(profile) is None:
                offered = ", ".join(p.name for p in facts.mig_profiles)
                yield SpecIssue(
                    path, f"is not a MIG profile of {g.instance_type}'s GPUs ({facts.accelerator_model or 'GPU'})",
                    profile, f"use one of: {offered}" if offered else "remove mig: these GPUs have no MIG",
                )
                continue
        if g.instance_type in first:
            other, other_profile = first[g.instance_type]
            if other_profile != profile:
                yield SpecIssue(
                    f"cluster.instanceGroups[{gi}].mig",
                    f"differs from cluster.instanceGroups[{other}] of the same type "
                    f"({other_profile or 'whole GPUs'}): quotas are per instance type",
                    profile or "whole GPUs",
                    "partition every group of one instance type the same way (or use another type)",
                )
        else:
            first[g.instance_type] = (gi, profile)


@rule("HPG-I005", "warning", "With task governance, a partitioned (MIG) group's type is one HyperPod's GPU "
      "partitioning lists.")
def mig_types_are_listed_by_hyperpod(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if spec.scheduler.mode != "task-governance":
        return
    cat = spec_catalog(spec)
    for gi, g in enumerate(spec.cluster.instance_groups):
        facts = cat.get(g.instance_type)
        if facts is None or g.mig is None or facts.accelerator_kind != catalog.NVIDIA_GPU \
                or facts.mig_profile(g.mig.profile) is None:
            continue  # HPG-I003 or HPG-I004 reports it
        if g.instance_type not in catalog.HYPERPOD_MIG_TYPES and g.instance_type not in cat.declared:
            yield SpecIssue(
                f"cluster.instanceGroups[{gi}].mig.profile",
                f"{g.instance_type} is not among the types HyperPod's GPU partitioning lists", g.mig.profile,
                "check that HyperPod partitions this type before relying on partition quotas",
            )


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


@rule("HPG-A001", "error", "A workload identity's targetRoleArn is in a declared consumer account.")
def identities_target_declared_accounts(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    declared = {c.id for c in spec.accounts.consumers}
    for ti, team in enumerate(spec.teams):
        for wi, w in enumerate(team.workload_identities):
            account = w.target_account
            if account is not None and account not in declared:
                names = ", ".join(sorted(declared)) or "none declared"
                yield SpecIssue(
                    f"teams[{ti}].workloadIdentities[{wi}].targetRoleArn",
                    f"is in account {account}, which is not a declared consumer account",
                    w.target_role_arn,
                    f"add {account} under accounts.consumers, or use a role in one of: {names}",
                )


@rule("HPG-A002", "error", "A created target role is in a declared consumer account, and each created role is "
      "created for one service account only.")
def target_roles_are_in_declared_accounts(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    by_name = {c.name: c for c in spec.accounts.consumers}
    seen: dict[tuple[str, str], str] = {}
    for ti, team in enumerate(spec.teams):
        for wi, w in enumerate(team.workload_identities):
            target = w.target_role
            if target is None:
                continue
            path = f"teams[{ti}].workloadIdentities[{wi}].targetRole"
            if target.account not in by_name:
                names = ", ".join(sorted(by_name)) or "none declared"
                yield SpecIssue(
                    f"{path}.account", "is not a declared consumer account", target.account,
                    f"declare it under accounts.consumers (with its id and region), or use one of: {names}",
                )
                continue
            key = (by_name[target.account].id, target.name)
            if key in seen:
                yield SpecIssue(
                    f"{path}.name", f"is already created for {seen[key]}", target.name,
                    "give each created target role its own name (one role trusts exactly one service account)",
                )
            seen.setdefault(key, f"{team.name}/{w.service_account}")


# --- per-team data (HPG-A006) ---------------------------------------------------------------------------------


def _role_key(arn: str) -> tuple[str, str]:
    """(account, role name): a role's identity, whatever its path and partition."""
    m = IAM_PRINCIPAL_ARN.match(arn)
    return (m.group(1) if m else "", arn.rsplit("/", 1)[-1])


def _created_target_roles(spec: GovernanceSpec) -> dict[tuple[str, str], tuple[str, str]]:
    """(account, role name) -> (team, path) of every target role the spec has hyperpod-gov create."""
    consumers = {c.name: c.id for c in spec.accounts.consumers}
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for ti, team in enumerate(spec.teams):
        for wi, w in enumerate(team.workload_identities):
            if w.target_role is not None and w.target_role.account in consumers:
                out[(consumers[w.target_role.account], w.target_role.name)] = (
                    team.name, f"teams[{ti}].workloadIdentities[{wi}].targetRole")
    return out


@rule("HPG-A006", "error", "A workload identity's targetRoleArn is not in the capacity account (use grants) and is "
      "not a role created for another team's identity, unless the identity sets allowSameAccount or "
      "allowOtherTeamRole.")
def target_roles_stay_with_their_team(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    """A role of the capacity account has policies outside the spec (or another team's); another team's role
    reaches that team's data. Either is allowed only when the spec says so on the identity."""
    capacity = spec.accounts.capacity.id
    created = _created_target_roles(spec)
    # The source roles are named <spec>-<team>-<service account> (plan.names, which the spec package never
    # imports): a capacity-account role of that form may be another team's.
    generated = f"{spec.name}-"
    for ti, team in enumerate(spec.teams):
        for wi, w in enumerate(team.workload_identities):
            arn = w.target_role_arn
            if arn is None:
                continue
            path = f"teams[{ti}].workloadIdentities[{wi}]"
            account, name = _role_key(arn)
            owner = created.get((account, name))
            if owner is not None and owner[0] != team.name and not w.allow_other_team_role:
                yield SpecIssue(
                    f"{path}.targetRoleArn", f"is the role hyperpod-gov creates for team {owner[0]} ({owner[1]}): "
                    "this team's pods would reach that team's data", arn,
                    f"give this identity its own grants or targetRole, or set {path}.allowOtherTeamRole: true if "
                    f"team {owner[0]}'s owners agree",
                )
            elif account == capacity and name.startswith(generated) and not w.allow_other_team_role:
                yield SpecIssue(
                    f"{path}.targetRoleArn", f"is named like the Pod Identity source roles hyperpod-gov creates "
                    f"({spec.name}-<team>-<service account>): it may be another team's, which reaches that team's "
                    "data", arn,
                    f"give this identity its own grants, or set {path}.allowOtherTeamRole: true if that team's "
                    "owners agree",
                )
            elif owner is None and account == capacity and not w.allow_same_account:
                yield SpecIssue(
                    f"{path}.targetRoleArn", f"is in the capacity account {capacity}: the role's policies are not the "
                    "spec's, and diff shows none of what it reaches", arn,
                    f"name the data under {path}.grants instead, or set {path}.allowSameAccount: true",
                )


@rule("HPG-E001", "error", "adminCidrs are given exactly when the API endpoint is public-and-private (a public "
      "endpoint without them is open to every address).")
def endpoint_access_matches_cidrs(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if c.existing is not None:  # the existing cluster's endpoint is not the spec's (HPG-D004)
        return
    if c.admin_cidrs and c.endpoint_access == "private":
        yield SpecIssue(
            "cluster.adminCidrs", "is only used with a public endpoint, but endpointAccess is private",
            list(c.admin_cidrs), "remove adminCidrs, or set endpointAccess: public-and-private",
        )
    if c.endpoint_access == "public-and-private" and not c.admin_cidrs:
        yield SpecIssue(
            "cluster.adminCidrs", "is empty, so the public endpoint would be open to every address",
            NO_VALUE, "list the administrators' CIDRs, or set endpointAccess: private",
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


@rule("HPG-C001", "warning", "Every team has a contract: owners who answer for its use of the cluster.")
def teams_have_contracts(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for ti, team in enumerate(spec.teams):
        if team.contract is None:
            yield SpecIssue(
                f"teams[{ti}].contract", "is missing: nobody answers for this team's use of the cluster",
                NO_VALUE, "add a contract with owners, data classification and reviewBy",
            )


@rule("HPG-C002", "warning", "A contract's reviewBy date has not passed.")
def contracts_are_current(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for ti, team in enumerate(spec.teams):
        if team.contract is not None and team.contract.review_by < today:
            yield SpecIssue(
                f"teams[{ti}].contract.reviewBy", f"has passed (today is {today.isoformat()})",
                team.contract.review_by.isoformat(),
                "review the contract with its owners and set a new reviewBy date",
            )


# contract.contracts_are_complete finds both kinds; each rule keeps its own (a rule has one level).
@rule("HPG-C003", "warning", "A contract states what a reviewer approves: exception owner, approved workloads, "
      "support and the other fields --strict requires.")
def contracts_are_complete_enough(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    return (i for i in contracts_are_complete(spec, today) if i.severity == "warning")


@rule("HPG-C004", "error", "A Unified Studio project's roles are reachable (capacity account, or a trusted one) "
      "and each domain lives in one account and region.")
def unified_studio_is_reachable(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    return (i for i in contracts_are_complete(spec, today) if i.severity == "error")


@rule("HPG-A003", "error", "A team's viewers and submitters are not cluster admins (EKS allows one access entry "
      "per principal).")
def team_principals_are_not_admins(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    admins = set(spec.cluster.admins)
    for ti, team in enumerate(spec.teams):
        for kind in ("viewers", "submitters"):
            for ai, arn in enumerate(getattr(team.access, kind)):
                if arn in admins:
                    yield SpecIssue(
                        f"teams[{ti}].access.{kind}[{ai}]", "is a cluster admin (cluster.admins), which already "
                        "sees and acts on everything; EKS allows one access entry per principal", arn,
                        "remove it from the team, or from cluster.admins",
                    )


@rule("HPG-E004", "error", "The VPC's availability zones are in the capacity region.")
def availability_zones_are_in_the_region(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    region = spec.accounts.capacity.region
    for i, az in enumerate(spec.cluster.vpc.availability_zones):
        if az[:-1] != region:
            yield SpecIssue(f"cluster.vpc.availabilityZones[{i}]", f"is not in the capacity region {region}", az,
                            f"use zones of {region}, e.g. {region}a")


def _principals(spec: GovernanceSpec) -> Iterator[tuple[str, str]]:
    """(path, ARN) of every IAM principal the spec grants cluster access to."""
    for ai, arn in enumerate(spec.cluster.admins):
        yield f"cluster.admins[{ai}]", arn
    for ai, arn in enumerate(spec.cluster.viewers):
        yield f"cluster.viewers[{ai}]", arn
    for ti, team in enumerate(spec.teams):
        for kind in ("viewers", "submitters"):
            for ai, arn in enumerate(getattr(team.access, kind)):
                yield f"teams[{ti}].access.{kind}[{ai}]", arn


@rule("HPG-A004", "error", "Cluster access goes to roles of the capacity account, unless accounts.trusted names "
      "another account or accepts IAM users.")
def principals_are_trusted(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    """Cluster access only for roles of the capacity account, unless the spec trusts another account.

    Whoever administers an account decides who may assume its roles; an IAM user signs in with long-term
    access keys that leak and are never rotated by themselves.
    """
    capacity = spec.accounts.capacity.id
    trusted = set(spec.accounts.trusted)
    for path, arn in _principals(spec):
        m = IAM_PRINCIPAL_ARN.match(arn)
        if m is None:
            continue
        account, kind = m.group(1), m.group(2)
        if account != capacity and account not in trusted:
            yield SpecIssue(
                path, f"is in account {account}, not the capacity account {capacity}: that account's "
                "administrators, not this spec, decide who may assume it and so who reaches the cluster", arn,
                f"use a role of account {capacity}, or list {account} under accounts.trusted if you trust whoever "
                "administers it",
            )
        elif kind == "user" and account not in trusted:
            yield SpecIssue(
                path, "is an IAM user: it signs in with long-term access keys, which leak and do not expire", arn,
                f"use an IAM role (assumed through SSO or federation), or list {account} under accounts.trusted "
                "to accept its users",
            )


@rule("HPG-E003", "error", "A team's egress rules reach less than a /8 of public addresses, unless the team "
      "sets allowInternetEgress.")
def egress_stays_off_the_internet(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    """Egress rules that together reach the internet need ``allowInternetEgress``."""
    for ti, team in enumerate(spec.teams):
        cidrs = [e.cidr for e in team.egress]
        if cidrs and internet_wide(cidrs) and not team.allow_internet_egress:
            public = public_addresses(cidrs)
            yield SpecIssue(
                f"teams[{ti}].egress", f"together reach {public:,} public internet addresses (a /8 of public space "
                "or more): the team's pods could send its data anywhere", ", ".join(cidrs),
                "name the networks the team needs (e.g. 10.50.0.0/16), or set "
                f"teams[{ti}].allowInternetEgress: true if the team must reach the internet",
            )


@rule("HPG-E002", "error", "adminCidrs together open the public endpoint to less than a /8 of public addresses.")
def admin_cidrs_stay_off_the_internet(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cidrs = list(spec.cluster.admin_cidrs)
    if cidrs and internet_wide(cidrs):
        public = public_addresses(cidrs)
        yield SpecIssue(
            "cluster.adminCidrs", f"together open the public endpoint to {public:,} internet addresses (a /8 of "
            "public space or more), as good as 0.0.0.0/0", ", ".join(cidrs),
            "name the administrators' networks (e.g. 203.0.113.0/24), or set endpointAccess: private",
        )


# --- cluster.apiAccess -------------------------------------------------------------------------------------------
@rule("HPG-E005", "error", "apiAccess.cidrs together admit less than a /8 of public addresses to the private API "
      "endpoint.")
def api_access_stays_off_the_internet(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cidrs = [c.cidr for c in spec.cluster.api_access.cidrs]
    if cidrs and internet_wide(cidrs):
        public = public_addresses(cidrs)
        yield SpecIssue(
            "cluster.apiAccess.cidrs", f"together admit {public:,} public internet addresses (a /8 or more) to the "
            "Kubernetes API, as good as 0.0.0.0/0 for any network routed to the VPC", ", ".join(cidrs),
            "name the networks people connect from (e.g. the VPN's 10.8.0.0/16), or a security group or prefix list "
            "(apiAccess.securityGroupIds, apiAccess.prefixListIds)",
        )


@rule("HPG-D001", "warning", "cluster.dependenciesChart is set: without the HyperPod dependencies chart, HyperPod "
      "cannot detect and replace faulty nodes.", covers=(CDK_WARN_NO_DEPENDENCIES_CHART,))
def dependencies_chart_is_set(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if c.dependencies_chart is None and c.existing is None and c.orchestrator == "eks":
        yield SpecIssue(
            "cluster.dependenciesChart", "is not set, so the HyperPod dependencies Helm chart (health-monitoring "
            "agent, deep health checks, device plugins for GPUs, Neuron and EFA) is not installed before the "
            "cluster: HyperPod cannot detect and replace faulty nodes, and no device plugin offers the nodes' GPUs, "
            "Neuron devices or EFA to pods unless they are installed another way",
            NO_VALUE, "set it to the chart of the sagemaker-hyperpod-cli repository (helm_chart/HyperPodHelmChart, "
            "github.com/aws/sagemaker-hyperpod-cli), mirrored where the cluster can reach it: {repository, chart, "
            "version}, {oci, version} or a local {directory}",
        )


# Keys of `cluster` that only shape a cluster hyperpod-gov creates, and why they cannot apply to an existing one.
CREATED_CLUSTER_ONLY = (
    ("endpointAccess", "endpoint_access", "the existing EKS cluster's endpoint stays as it is"),
    ("adminCidrs", "admin_cidrs", "the existing EKS cluster's endpoint stays as it is"),
    # cluster.existing.securityGroupId is the kubectl handler's group, which need not be the EKS cluster security
    # group (the spec does not name that one, and synth looks nothing up): ingress on it would admit the networks
    # to the wrong group, or widen the handler's.
    ("apiAccess", "api_access", "the spec does not name the existing EKS cluster's security group "
     "(existing.securityGroupId is the kubectl handler's); admit networks where that cluster is managed"),
    ("authenticationMode", "authentication_mode", "the existing EKS cluster keeps its authentication mode (preflight "
     "checks that it is API or API_AND_CONFIG_MAP)"),
    ("dependenciesChart", "dependencies_chart", "the chart is installed before a HyperPod cluster is created"),
    ("admins", "admins", "the existing cluster's administrators have their access entries already; a second entry "
     "for the same principal fails the deploy"),
)
UNOWNED_ADDONS = (("vpcCni", "vpc_cni"), ("coredns", "coredns"), ("kubeProxy", "kube_proxy"),
                  ("podIdentityAgent", "pod_identity_agent"))


@rule("HPG-D004", "error", "With cluster.existing, the spec sets no key that only shapes a cluster hyperpod-gov "
      "creates, pins only the add-ons it installs, and gives the existing VPC's CIDR.")
def existing_cluster_keys(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    e = c.existing
    if e is None:
        return
    for key, attr, why in CREATED_CLUSTER_ONLY:
        if attr in c.model_fields_set:
            value = getattr(c, attr)
            if isinstance(value, SpecModel):  # shown as the spec writes it, not as a Python object
                value = value.model_dump(by_alias=True, exclude_unset=True)
            yield SpecIssue(f"cluster.{key}", f"only applies to a cluster hyperpod-gov creates: {why}",
                            value, f"remove cluster.{key} (or remove cluster.existing)")
    for key, attr in (("availabilityZones", "availability_zones"), ("maxAzs", "max_azs"), ("vpcId", "vpc_id"),
                      ("privateSubnetIds", "private_subnet_ids"), ("createEndpoints", "create_endpoints"),
                      ("createFlowLogs", "create_flow_logs")):
        if attr in c.vpc.model_fields_set:
            yield SpecIssue(f"cluster.vpc.{key}", "only shapes a VPC hyperpod-gov creates or builds on",
                            getattr(c.vpc, attr),
                            f"remove cluster.vpc.{key}; with existing, the VPC and subnets are cluster.existing's "
                            "and cluster.vpc holds only the VPC's cidr")
    if "vpc" not in c.model_fields_set or "cidr" not in c.vpc.model_fields_set:
        yield SpecIssue("cluster.vpc.cidr", f"is not given: the teams' NetworkPolicies allow HTTPS to the VPC's "
                        f"CIDR, and the default would name another network than {e.vpc_id}'s", NO_VALUE,
                        f"set cluster.vpc: {{cidr: ...}} to the CIDR of {e.vpc_id} (`aws ec2 describe-vpcs "
                        f"--vpc-ids {e.vpc_id}`)")
    versions = c.addon_versions
    for key, attr in UNOWNED_ADDONS:
        if attr in versions.model_fields_set:
            yield SpecIssue(f"cluster.addonVersions.{key}", "pins an add-on of the existing cluster, which "
                            "hyperpod-gov does not install there", getattr(versions, attr),
                            f"remove cluster.addonVersions.{key}; upgrade it where the cluster is managed")
    owned = {"cloudwatch_observability": ("cloudwatchObservability", e.installs.observability,
                                          "installs.observability"),
             "task_governance": ("taskGovernance", e.installs.scheduler and spec.scheduler.mode == "task-governance",
                                 "installs.scheduler (task-governance mode)"),
             "kueue_chart": ("kueueChart", e.installs.scheduler and spec.scheduler.mode == "kueue",
                             "installs.scheduler (kueue mode)")}
    for attr, (key, installed, when) in owned.items():
        if attr in versions.model_fields_set and not installed:
            yield SpecIssue(f"cluster.addonVersions.{key}", f"pins what hyperpod-gov installs only with "
                            f"cluster.existing.{when}", getattr(versions, attr),
                            f"remove cluster.addonVersions.{key}, or set cluster.existing.{when.split(' ')[0]}: true")


@rule("HPG-A005", "error", "An existing HyperPod cluster is in the capacity account, region and partition.")
def existing_cluster_is_in_the_capacity_account(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    e = spec.cluster.existing
    if e is None:
        return
    partition, region, account = e.arn_parts
    cap = spec.accounts.capacity
    want = (partition_of(cap.region), cap.region, cap.id)
    for what, got, expected in zip(("partition", "region", "account"), (partition, region, account), want):
        if got != expected:
            yield SpecIssue("cluster.existing.hyperPodClusterArn", f"is in {what} {got}, but accounts.capacity is "
                            f"in {expected}", e.hyper_pod_cluster_arn,
                            f"set accounts.capacity to the cluster's account and region, or name a cluster of "
                            f"{expected}")


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


# --- cluster.operators (docs/operators.md) ------------------------------------------------------------------
OPERATOR_VERSION_KEYS = (("trainingOperator", "training_operator"), ("certManager", "cert_manager"),
                         ("spaces", "spaces"), ("ebsCsiDriver", "ebs_csi_driver"),
                         ("inferenceOperator", "inference_operator"),
                         ("mountpointS3CsiDriver", "mountpoint_s3_csi_driver"), ("fsxCsiDriver", "fsx_csi_driver"),
                         ("metricsServer", "metrics_server"))


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.lstrip("v").split("-")[0].split("."))


@rule("HPG-D005", "error", "cluster.operators names each operator once and only operators this release installs "
      "(inference only on a cluster hyperpod-gov creates: its OIDC provider, CSI drivers and subnet tags), with a "
      "task-governance add-on the training operator works with (v1.3.0 or later); with cluster.existing, operator "
      "add-on versions are pinned only when cluster.operators lists what to install.")
def operators_are_installable(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    listed = c.existing is None or "operators" in c.model_fields_set
    yield from _repeats(list(c.operators), lambda i: f"cluster.operators[{i}]", "names an operator twice",
                        "list each operator once")
    for i, operator in enumerate(c.operators):
        if operator == "inference" and c.existing is not None:
            yield SpecIssue(f"cluster.operators[{i}]", "the HyperPod inference add-on on an existing cluster needs "
                            "what hyperpod-gov provisions only on a cluster it creates: "
                            + "; ".join(INFERENCE_NOT_PROVISIONED), operator,
                            "remove inference from cluster.operators and install the inference operator as "
                            "docs/operators.md describes (the SageMaker console's quick install, or AWS's "
                            "prerequisite CloudFormation stack and `aws eks create-addon`)")
    if not listed:
        for key, attr in OPERATOR_VERSION_KEYS:
            if attr in c.addon_versions.model_fields_set:
                yield SpecIssue(f"cluster.addonVersions.{key}", "pins an operator add-on, but with cluster.existing "
                                "no operator is installed unless cluster.operators lists it",
                                getattr(c.addon_versions, attr),
                                f"list the operators to install in cluster.operators, or remove "
                                f"cluster.addonVersions.{key}")
        return
    if "training" in c.operators:
        tg = c.addon_versions.task_governance
        if spec.scheduler.mode == "task-governance" and _release(tg) < (1, 3, 0):
            yield SpecIssue("cluster.addonVersions.taskGovernance", "is older than v1.3.0-eksbuild.1, the oldest "
                            "task-governance add-on the HyperPod training operator works with", tg,
                            "use v1.3.0-eksbuild.1 or later (e.g. v1.6.0-eksbuild.1), or remove training from "
                            "cluster.operators")


@rule("HPG-D006", "warning", "The training operator runs on a Kubernetes version AWS lists for it (its add-on may "
      "not install on a newer one before AWS supports it).")
def training_operator_supports_the_kubernetes_version(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    listed = c.existing is None or "operators" in c.model_fields_set
    if listed and "training" in c.operators and c.kubernetes_version not in TRAINING_OPERATOR_KUBERNETES:
        yield SpecIssue("cluster.kubernetesVersion", "is not among the Kubernetes versions AWS lists for the HyperPod "
                        f"training operator ({', '.join(TRAINING_OPERATOR_KUBERNETES)})", c.kubernetes_version,
                        f"check `aws eks describe-addon-versions --addon-name amazon-sagemaker-hyperpod-training-"
                        f"operator --kubernetes-version {c.kubernetes_version}` and acknowledge HPG-D006, use "
                        f"{TRAINING_OPERATOR_KUBERNETES[-1]}, or remove training from cluster.operators")
# cluster.viewers (HyperPod CLI/console access)
@rule("HPG-A007", "error", "A cluster viewer is not a cluster admin (EKS allows one access entry per principal, "
      "and an admin sees everything already).")
def cluster_viewers_are_not_admins(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    admins = set(spec.cluster.admins)
    for i, arn in enumerate(spec.cluster.viewers):
        if arn in admins:
            yield SpecIssue(f"cluster.viewers[{i}]", "is a cluster admin (cluster.admins), which already sees and "
                            "acts on everything; EKS allows one access entry per principal", arn,
                            "remove it from cluster.viewers, or from cluster.admins")
# --- per-team workload limits (teams[].priorityClasses) -------------------------------------------------------

@rule("HPG-Q007", "error", "A team's priorityClasses name priority classes of scheduler.priorityClasses, each once.")
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
# --- dedicated node groups and shared storage (instanceGroups[].dedicatedTo, cluster.sharedStorage) ------------


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


@rule("HPG-D007", "error", "cluster.sharedStorage.fsxLustre creates a file system on a cluster hyperpod-gov "
      "creates, and names an existing one (fileSystemId, dnsName, mountName) with cluster.existing.")
def shared_storage_matches_the_cluster(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    storage = spec.cluster.shared_storage
    if storage is None:
        return
    fsx = storage.fsx_lustre
    if spec.cluster.existing is not None and fsx.creates:
        yield SpecIssue("cluster.sharedStorage.fsxLustre.storageCapacityGiB", "would create a file system for an "
                        "existing cluster, whose nodes' security group hyperpod-gov does not know",
                        fsx.storage_capacity_gib,
                        "name the existing file system instead: fileSystemId, dnsName and mountName")
    if spec.cluster.existing is None and not fsx.creates:
        yield SpecIssue("cluster.sharedStorage.fsxLustre.fileSystemId", "names an existing file system for a "
                        "cluster hyperpod-gov creates: its security group would not admit the new nodes",
                        fsx.file_system_id,
                        "let hyperpod-gov create it (storageCapacityGiB, deploymentType, perUnitStorageThroughput)")


@rule("HPG-D008", "error", "One aws-fsx-csi-driver add-on serves a cluster: with the inference operator and a "
      "created FSx for Lustre file system, both name the same driver version.")
def one_fsx_csi_driver(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    fsx = c.shared_storage.fsx_lustre if c.shared_storage is not None else None
    if fsx is None or c.existing is not None or "inference" not in c.operators:
        return
    wanted = c.addon_versions.fsx_csi_driver
    if fsx.csi_driver_version != wanted:
        yield SpecIssue("cluster.sharedStorage.fsxLustre.csiDriverVersion", "differs from "
                        f"cluster.addonVersions.fsxCsiDriver ({wanted}), the version the inference operator's FSx CSI "
                        "driver is installed at; EKS installs one aws-fsx-csi-driver per cluster",
                        fsx.csi_driver_version, f"give both the same version (e.g. {fsx.csi_driver_version})")


# --- Slurm-orchestrated clusters (cluster.orchestrator: slurm; docs/slurm.md) -----------------------------------
# Each key that only means something on EKS, where it lives on its model, and what a Slurm cluster has instead.
EKS_ONLY_CLUSTER = (
    ("kubernetesVersion", "kubernetes_version", "Slurm's version is the one HyperPod installs (the scripts probe "
     "`sinfo -V`)"),
    ("endpointAccess", "endpoint_access", "a Slurm cluster has no Kubernetes API: users reach the Login group (SSM "
     "or SSH) and submit with sbatch"),
    ("adminCidrs", "admin_cidrs", "a Slurm cluster has no Kubernetes API endpoint: users reach the Login group "
     "(SSM or SSH)"),
    ("apiAccess", "api_access", "a Slurm cluster has no Kubernetes API endpoint: users reach the Login group (SSM "
     "or SSH)"),
    ("authenticationMode", "authentication_mode", "Slurm authenticates users with munge and POSIX identities, not "
     "EKS access entries"),
    ("admins", "admins", "Slurm administrators are POSIX users of the controller (sacctmgr AdminLevel), not EKS "
     "access entries"),
    ("viewers", "viewers", "list the people in teams[].slurm.users: Slurm shows jobs to users with an "
     "association"),
    ("memberClusterReads", "member_cluster_reads", "Kubernetes RBAC has no Slurm counterpart: teams[].slurm.users "
     "may run squeue and sinfo"),
    ("operators", "operators", "HyperPod operators are EKS add-ons; a Slurm cluster runs jobs with sbatch and srun"),
    ("addonVersions", "addon_versions", "EKS add-ons and the Kueue chart do not run on a Slurm cluster"),
    ("dependenciesChart", "dependencies_chart", "the dependencies Helm chart is installed on EKS; a Slurm cluster's "
     "health agent comes with HyperPod's image"),
    ("imageRegistries", "image_registries", "pods pull images on EKS; Slurm jobs run on the nodes' own software"),
    ("existing", "existing", "cluster.existing describes an EKS-orchestrated cluster (eksClusterName, the kubectl "
     "handler); governing a running Slurm cluster is `hyperpod-gov import` with --slurm-dump"),
)
EKS_ONLY_SCHEDULER = (
    ("mode", "mode", "slurmctld schedules a Slurm cluster: priority/multifactor and preempt/qos take the place of "
     "task governance and Kueue"),
    ("taskGovernanceResources", "task_governance_resources", "task governance's cluster policy and compute quotas "
     "are EKS objects; Slurm gets accounts and QOS"),
)
EKS_ONLY_GROUP = (
    ("labels", "labels", "Kubernetes labels: a Slurm group's nodes are found by its slurm.partition"),
    ("taints", "taints", "Kubernetes taints: keep work off a Slurm group with dedicatedTo (its partition admits "
     "only that team's accounts)"),
    ("mig", "mig", "MIG partitions would be GPU types every node's gres.conf declares, which hyperpod-gov does not "
     "write: use whole GPUs"),
)
EKS_ONLY_TEAM = (
    ("access", "access", "teams[].slurm.users: POSIX users with an association to the team's account"),
    ("workloadIdentities", "workload_identities", "EKS Pod Identity has no Slurm counterpart: jobs run with the "
     "instance group's execution role"),
    ("egress", "egress", "NetworkPolicies have no Slurm counterpart: the cluster's security groups apply to every "
     "job"),
    ("allowInternetEgress", "allow_internet_egress", "NetworkPolicies have no Slurm counterpart"),
    ("podSecurity", "pod_security", "Pod Security has no Slurm counterpart: jobs run as the submitting POSIX user"),
    ("images", "images", "pod image admission has no Slurm counterpart"),
    ("storage", "storage", "the team bucket admits the team's IAM roles, which a Slurm team does not have: "
     "teams[].slurm.dataPath is its directory on the shared file system"),
)
SLURM_RESERVED_QOS = ("normal",)  # Slurm's own default QOS, which every association starts with


def _slurm(spec: GovernanceSpec) -> bool:
    return spec.cluster.orchestrator == "slurm"


def _shown(value: object) -> object:
    if isinstance(value, SpecModel):
        return value.model_dump(by_alias=True, exclude_unset=True)
    if isinstance(value, tuple) and value and isinstance(value[0], SpecModel):
        return [v.model_dump(by_alias=True, exclude_unset=True) for v in value]
    return value


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


@rule("HPG-S001", "error", "Slurm keys (cluster.slurm, instanceGroups[].slurm, teams[].slurm) appear only with "
      "cluster.orchestrator: slurm, and there every instance group has its slurm role.")
def slurm_keys_match_the_orchestrator(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if not _slurm(spec):
        fix = "set cluster.orchestrator: slurm, or remove the key (an EKS cluster has no Slurm roles)"
        if c.slurm is not None:
            yield SpecIssue("cluster.slurm", "configures Slurm on an EKS-orchestrated cluster", _shown(c.slurm), fix)
        for gi, g in enumerate(c.instance_groups):
            if g.slurm is not None:
                yield SpecIssue(f"cluster.instanceGroups[{gi}].slurm", "gives a Slurm role on an EKS-orchestrated "
                                "cluster", _shown(g.slurm), fix)
        for ti, t in enumerate(spec.teams):
            if t.slurm is not None:
                yield SpecIssue(f"teams[{ti}].slurm", "gives POSIX users on an EKS-orchestrated cluster",
                                _shown(t.slurm), fix + "; on EKS the team's people are access.viewers and submitters")
        return
    for gi, g in enumerate(c.instance_groups):
        if g.slurm is None:
            yield SpecIssue(f"cluster.instanceGroups[{gi}].slurm", "is missing: a Slurm cluster's groups each have a "
                            "node type", NO_VALUE, "add slurm: {nodeType: Compute, partition: NAME} (or nodeType: "
                            "Controller | Login)")


@rule("HPG-S002", "error", "A Slurm cluster has exactly one Controller group and at most one Login group, a "
      "partition on every Compute group and none on Controller or Login groups.")
def slurm_node_types_are_complete(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    groups = [(gi, g) for gi, g in enumerate(spec.cluster.instance_groups) if g.slurm is not None]
    controllers = [gi for gi, g in groups if g.slurm.node_type == "Controller"]
    logins = [gi for gi, g in groups if g.slurm.node_type == "Login"]
    if not controllers:
        yield SpecIssue("cluster.instanceGroups", "has no Controller group: slurmctld and slurmdbd run on it",
                        NO_VALUE, "add a group with slurm: {nodeType: Controller}, e.g. one ml.m5.xlarge")
    for gi in controllers[1:]:
        yield SpecIssue(f"cluster.instanceGroups[{gi}].slurm.nodeType", "is a second Controller group; HyperPod "
                        f"allows one (cluster.instanceGroups[{controllers[0]}])", "Controller",
                        "make it a Compute group, or remove it")
    for gi in logins[1:]:
        yield SpecIssue(f"cluster.instanceGroups[{gi}].slurm.nodeType", "is a second Login group; HyperPod allows "
                        f"at most one (cluster.instanceGroups[{logins[0]}])", "Login",
                        "put the login nodes in one group (raise its count)")
    if not any(g.slurm.node_type == "Compute" for _, g in groups):
        yield SpecIssue("cluster.instanceGroups", "has no Compute group: no node runs jobs", NO_VALUE,
                        "add a group with slurm: {nodeType: Compute, partition: NAME}")
    for gi, g in groups:
        path = f"cluster.instanceGroups[{gi}].slurm.partition"
        if g.slurm.node_type == "Compute" and g.slurm.partition is None:
            yield SpecIssue(path, "is missing: HyperPod needs a partition for every Compute group", NO_VALUE,
                            f"add partition: NAME, e.g. {g.name}")
        elif g.slurm.node_type != "Compute" and g.slurm.partition is not None:
            yield SpecIssue(path, f"is set on a {g.slurm.node_type} group, which runs no jobs; HyperPod refuses it",
                            g.slurm.partition, "remove partition (only Compute groups have one)")


def _eks_only(prefix: str, model: SpecModel, keys: tuple[tuple[str, str, str], ...]) -> Iterator[SpecIssue]:
    for key, attr, instead in keys:
        if attr in model.model_fields_set:
            yield SpecIssue(f"{prefix}.{key}", f"only applies to an EKS-orchestrated cluster; {instead}",
                            _shown(getattr(model, attr)), f"remove {key} (or set cluster.orchestrator: eks)")


@rule("HPG-S003", "error", "A Slurm spec sets no key that only applies to EKS (Kubernetes version, API endpoint, "
      "access entries, operators and add-ons, scheduler mode, labels and taints, pod access, identities and egress); "
      "each refusal names what Slurm has instead.")
def slurm_refuses_eks_only_keys(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    yield from _eks_only("cluster", spec.cluster, EKS_ONLY_CLUSTER)
    yield from _eks_only("scheduler", spec.scheduler, EKS_ONLY_SCHEDULER)
    for gi, g in enumerate(spec.cluster.instance_groups):
        yield from _eks_only(f"cluster.instanceGroups[{gi}]", g, EKS_ONLY_GROUP)
    for ti, t in enumerate(spec.teams):
        yield from _eks_only(f"teams[{ti}]", t, EKS_ONLY_TEAM)


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
    from .slurm import POSIX_NAME, RESERVED_POSIX

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
        path = team.slurm.data_path if team.slurm and team.slurm.data_path else f"/fsx/{team.name}"
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


@rule("HPG-S013", "error", "An external Slurm accounting database needs cluster.nodeProvisioningMode: Continuous "
      "(the service supports AccountingDatabase only there).")
def slurm_accounting_database_needs_continuous(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    s = spec.cluster.slurm
    if _slurm(spec) and s is not None and s.accounting_database is not None \
            and spec.cluster.node_provisioning_mode != "Continuous":
        yield SpecIssue("cluster.slurm.accountingDatabase", "is supported only with continuous node provisioning",
                        _shown(s.accounting_database), "set cluster.nodeProvisioningMode: Continuous, or remove "
                        "accountingDatabase (the controller's own MariaDB keeps the accounting)")


RULES = RuleBook("spec rules", tuple(sorted((
    unique_names,
    declared_types_are_new,
    declared_types_are_uncatalogued,
    instance_types_are_known,
    mig_groups_are_consistent,
    mig_types_are_listed_by_hyperpod,
    quota_entries_fit_their_type,
    quotas_fit_capacity,
    sharing_is_consistent,
    borrowing_needs_idle_sharing,
    kueue_flavor_limit,
    identities_target_declared_accounts,
    target_roles_are_in_declared_accounts,
    target_roles_stay_with_their_team,
    team_principals_are_not_admins,
    principals_are_trusted,
    endpoint_access_matches_cidrs,
    admin_cidrs_stay_off_the_internet,
    api_access_stays_off_the_internet,
    egress_stays_off_the_internet,
    availability_zones_are_in_the_region,
    teams_have_contracts,
    contracts_are_current,
    contracts_are_complete_enough,
    unified_studio_is_reachable,
    dependencies_chart_is_set,
    options_exist_in_the_regions_cloudformation,
    reservations_are_in_the_capacity_region,
    capacity_region_offers_hyperpod,
    instance_types_are_offered_in_the_region,
    existing_cluster_keys,
    existing_cluster_is_in_the_capacity_account,
    task_governance_addon_not_next_to_kueue,
    operators_are_installable,
    training_operator_supports_the_kubernetes_version,
    cluster_viewers_are_not_admins,
    team_priority_classes_are_defined,
    dedicated_groups_name_a_team,
    dedicated_capacity_is_not_lent,
    shared_storage_matches_the_cluster,
    one_fsx_csi_driver,
    # Slurm-orchestrated clusters
    slurm_keys_match_the_orchestrator,
    slurm_node_types_are_complete,
    slurm_refuses_eks_only_keys,
    slurm_partitions_hold_one_governed_type,
    slurm_quotas_fit_compute_capacity,
    slurm_dont_lend_needs_a_dedicated_partition,
    slurm_partition_access_needs_merge,
    slurm_accelerator_quotas_need_gpu_tracking,
    slurm_borrow_percent_is_a_static_cap,
    slurm_fair_share_zero_is_clamped,
    slurm_names_are_distinct,
    slurm_users_have_an_account,
    slurm_accounting_database_needs_continuous,
), key=lambda r: r.id)))
"""Every spec rule, in id order (docs/rules.md lists them)."""


def check_spec(spec: GovernanceSpec, *, today: dt.date) -> list[SpecIssue]:
    """Every finding of every rule, errors and warnings, each with its rule's id, in a stable order."""
    return RULES.run(spec, today)
