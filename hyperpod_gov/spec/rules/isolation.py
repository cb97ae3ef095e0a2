"""HPG-C005 to HPG-C007: the isolation a contract states, and the network path it names, hold in what the spec
builds (teams[].contract.isolation, teams[].contract.networkPath; docs/contracts.md)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Iterator, Optional

from ..contract import CONSOLE_ONLY, LOGIN_NODES
from ..errors import SpecIssue
from ..instance_types import allocation_units, spec_catalog
from ..models import GovernanceSpec, Team
from ..rulebook import rule
from ._common import _slurm
from .quotas import _governed, _valid_mig_profiles


def api_entries(spec: GovernanceSpec) -> dict[str, str]:
    """The networks a contract's networkPath may name on an EKS cluster: value -> what it is, in words."""
    c = spec.cluster
    out = {e.cidr: f"apiAccess cidr ({e.description})" for e in c.api_access.cidrs}
    out.update({e.id: f"apiAccess security group ({e.description})" for e in c.api_access.security_group_ids})
    out.update({e.id: f"apiAccess prefix list ({e.description})" for e in c.api_access.prefix_list_ids})
    if c.endpoint_access == "public-and-private":
        out.update({cidr: "adminCidrs (the public endpoint)" for cidr in c.admin_cidrs if cidr not in out})
    return out


def _choices(entries: dict[str, str]) -> str:
    return ", ".join([*sorted(entries), CONSOLE_ONLY])


@rule("HPG-C005", "error", "A contract's networkPath is a way the spec lets the team's members in: an entry of "
      "cluster.apiAccess (or adminCidrs on a public endpoint), console-only, or login-nodes on a Slurm cluster.")
def network_paths_exist(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    entries = api_entries(spec)
    for ti, team in enumerate(spec.teams):
        path = team.contract.network_path if team.contract else None
        if path is None or path == CONSOLE_ONLY:
            continue
        where = f"teams[{ti}].contract.networkPath"
        if _slurm(spec):
            if path != LOGIN_NODES:
                yield SpecIssue(where, "names a network of the EKS API, which a Slurm cluster does not have: its "
                                "members reach it through the login nodes or the console", path,
                                f"write {LOGIN_NODES} (SSM sessions to the login nodes) or {CONSOLE_ONLY}")
        elif path == LOGIN_NODES:
            yield SpecIssue(where, "names the login nodes of a Slurm cluster; this cluster is orchestrated by EKS, "
                            "reached through its API endpoint", path,
                            f"name the network the team's members come from, one of: {_choices(entries)}")
        elif path not in entries and spec.cluster.existing is None:
            yield SpecIssue(where, "names no network the cluster admits to its API endpoint: the team's members "
                            "could not come that way", path,
                            f"use one of: {_choices(entries)}; or admit the network first (cluster.apiAccess: "
                            "{cidrs, securityGroupIds, prefixListIds}, each with a description)")


def _dedicated_capacity(spec: GovernanceSpec, team: str) -> dict[str, tuple[int, list[str]]]:
    """Instance type -> (instances, group paths) of the groups dedicated to ``team``."""
    out: dict[str, tuple[int, list[str]]] = {}
    for gi, g in enumerate(spec.cluster.instance_groups):
        if g.dedicated_to == team:
            count, paths = out.get(g.instance_type, (0, []))
            out[g.instance_type] = (count + g.count, [*paths, f"cluster.instanceGroups[{gi}]"])
    return out


def _partition_owners(spec: GovernanceSpec) -> dict[str, tuple[set[Optional[str]], set[str]]]:
    """Slurm partition -> (the teams its Compute groups are dedicated to, None for a shared group; its types)."""
    out: dict[str, tuple[set[Optional[str]], set[str]]] = defaultdict(lambda: (set(), set()))
    for g in spec.cluster.instance_groups:
        if g.slurm is not None and g.slurm.node_type == "Compute" and g.slurm.partition:
            owners, types = out[g.slurm.partition]
            owners.add(g.dedicated_to)
            types.add(g.instance_type)
    return out


def _quota_off_dedicated_eks(spec: GovernanceSpec, ti: int, team: Team) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    migs = _valid_mig_profiles(spec, cat)
    mine = _dedicated_capacity(spec, team.name)
    for qi, q in enumerate(team.quota):
        facts = cat.get(q.instance_type)
        if facts is None:
            continue  # HPG-I001 reports the type
        profile = migs.get(q.instance_type)
        instances, groups = mine.get(q.instance_type, (0, []))
        have = _governed(facts, allocation_units(facts, count=instances, mig_profile=profile), profile)
        asked = _governed(facts, allocation_units(
            facts, count=q.count, accelerators=q.accelerators, vcpu=q.vcpu, memory_gib=q.memory_gib,
            partition=(q.partitions.profile, q.partitions.count) if q.partitions else None, mig_profile=profile),
            profile)
        if asked <= have:
            continue
        unit = "partitions" if profile else "accelerators" if facts.accelerators else "vCPU"
        on = (f"its groups {', '.join(groups)} hold {have}: the rest" if groups
              else "no group of the type is dedicated to it: it")
        lower = f", lower the quota to {have}" if have else ""
        yield SpecIssue(
            f"teams[{ti}].quota[{qi}]", f"puts {asked} {unit} of {q.instance_type} where the contract asks for "
            f"dedicated-nodes, but {on} runs on nodes other teams use", asked,
            f"set dedicatedTo: {team.name} on instance groups of {q.instance_type} holding {asked} {unit}{lower}, "
            "or state isolation: shared")


def _quota_off_dedicated_slurm(spec: GovernanceSpec, ti: int, team: Team) -> Iterator[SpecIssue]:
    partitions = _partition_owners(spec)
    for qi, q in enumerate(team.quota):
        shared = sorted(p for p, (owners, types) in partitions.items()
                        if q.instance_type in types and owners != {team.name})
        held = [p for p, (_, types) in partitions.items() if q.instance_type in types]
        if held and not shared:
            continue
        where = (f"on partition {', '.join(shared)}, whose nodes other teams' accounts may use" if shared
                 else "on no partition")
        yield SpecIssue(
            f"teams[{ti}].quota[{qi}]", f"puts {q.instance_type} {where}, where the contract asks for "
            "dedicated-nodes (a partition whose Compute groups are all dedicatedTo the team admits only its "
            "accounts)", q.instance_type,
            f"set dedicatedTo: {team.name} on every Compute group of the partition of {q.instance_type}, or state "
            "isolation: shared")


@rule("HPG-C006", "error", "A contract with isolation: dedicated-nodes has every quota of its team on instance "
      "groups dedicatedTo the team (Kueue's dedicated flavor, or Slurm partitions of dedicated groups) and does not "
      "borrow; task-governance mode cannot keep the team's pods on them.")
def dedicated_nodes_hold_the_teams_work(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for ti, team in enumerate(spec.teams):
        if team.contract is None or team.contract.isolation != "dedicated-nodes":
            continue
        if not _slurm(spec) and spec.scheduler.mode == "task-governance":
            yield SpecIssue(
                f"teams[{ti}].contract.isolation", "asks for dedicated-nodes, which task-governance mode does not "
                "enforce: its quota places the team's pods by instance type only, so they run on shared nodes "
                "unless each pod selects the dedicated ones itself", "dedicated-nodes",
                "use scheduler.mode: kueue (the team's dedicated flavor places all its work on its groups), or "
                "state isolation: shared")
            continue
        if team.sharing.strategy == "LendAndBorrow":
            yield SpecIssue(
                f"teams[{ti}].sharing.strategy", "borrows idle capacity, which is other teams' nodes, where the "
                "contract asks for dedicated-nodes", team.sharing.strategy,
                "set sharing.strategy: Lend or DontLend (the dedicated groups lend nothing either way)")
        check = _quota_off_dedicated_slurm if _slurm(spec) else _quota_off_dedicated_eks
        yield from check(spec, ti, team)


@rule("HPG-C007", "error", "A contract with isolation: dedicated-cluster is the only team of its cluster: a "
      "namespace (or a Slurm account) is not a hard boundary between teams.")
def dedicated_cluster_is_not_shared(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    teams = [t.name for t in spec.teams]
    for ti, team in enumerate(spec.teams):
        if team.contract is None or team.contract.isolation != "dedicated-cluster" or len(teams) == 1:
            continue
        others = ", ".join(t for t in teams if t != team.name)
        yield SpecIssue(
            f"teams[{ti}].contract.isolation", f"asks for a cluster of its own, but cluster {spec.cluster.name} "
            f"also runs {others}: a namespace is not a hard boundary (the nodes, the kernel, the control plane and "
            "the cluster's add-ons are shared)", "dedicated-cluster",
            f"move {team.name} to a cluster of its own (another spec, or an environment whose overrides remove "
            "the other teams: each environment deploys its own cluster), or state isolation: dedicated-nodes")
