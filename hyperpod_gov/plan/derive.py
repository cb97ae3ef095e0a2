"""``derive_plan``: every decision of the spec in one pass (``plan.py`` says what the plan holds and why)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from .. import catalog
from ..spec._base import partition_of
from ..spec.instance_types import spec_catalog
from ..spec.models import GovernanceSpec, Team
from ..spec.monitoring import Monitoring
from . import names
from .access import principal_access
from .contracts import ContractsPlan, contract_connections, retiring_teams
from .data import storage_plans
from .derive_cluster import _cluster, network_plan
from .derive_stacks import _pipeline, stack_layout
from .identity import identity_plans
from .kueue import covered_resources, kueue_manager_config
from .model import Mode, Plan
from .monitoring import monitoring_plan, team_watch
from .parts import FlavorPlan, PriorityClassPlan
from .quotas import TeamPlan, amounts_for, mig_profiles, plan_shared_pool, plan_team
from .regions import task_governance_backend
from .scheduling import gang_scheduling_plan, topology_plan, wait_for_pods_ready
from .slurm import slurm_groups, slurm_plan, slurm_team
from .storage import dedicated_plans, shared_storage_plan
from .tools_policy import tools_policies
from .workloads import kueue_integrations


def _mig_resource(facts: catalog.InstanceType, profile: Optional[str]) -> Optional[str]:
    found = facts.mig_profile(profile) if profile else None
    return found.resource if found else None


def derive_plan(spec: GovernanceSpec, base_dir: Optional[Path]) -> Plan:
    """Every decision of the spec in one pass, unchecked (``build.build_plan`` checks the invariants on it)."""
    region = spec.accounts.capacity.region
    partition = partition_of(region)
    cat = spec_catalog(spec)
    migs = mig_profiles(spec)
    identities = identity_plans(spec, partition=partition)
    storage = storage_plans(spec, identities)
    policies = tools_policies(spec, partition=partition, eks_name=spec.cluster.eks_cluster_name)
    shared_storage = shared_storage_plan(spec)
    dedicated = dedicated_plans(spec, cat, migs)
    buckets = {s.team: s for s in storage}
    policy_of = {p.team: p for p in policies}
    volumes = {v.team: v for v in shared_storage.volumes} if shared_storage is not None else {}
    flavors = tuple(
        FlavorPlan(names.flavor(t), t, n, cat.lookup(t).accelerator_kind,
                   _mig_resource(cat.lookup(t), migs.get(t)),
                   per_instance=amounts_for(t, count=1, mig_profile=migs.get(t), catalog=cat),
                   capacity=amounts_for(t, count=n, mig_profile=migs.get(t), catalog=cat))
        for t, n in spec.cluster.capacity.items()
    )
    flavor_names = {f.instance_type: f.name for f in flavors}
    slurm = spec.cluster.orchestrator == "slurm"
    groups = slurm_groups(spec) if slurm else ()

    def finished(team: TeamPlan, settings: Optional[Team] = None) -> TeamPlan:
        """The team with what is watched for it (its own decisions, contract and alarm overrides) and, on a Slurm
        cluster, its Slurm part (the shared pool has none: capacity no team owns is idle in Slurm)."""
        return replace(team, monitoring=team_watch(
            team, spec_name=spec.name, cluster=spec.cluster.eks_cluster_name, monitoring=spec.monitoring,
            flavor_names=flavor_names, contract=team.contract, overrides=team.alarms),
            slurm=slurm_team(team, settings.slurm, groups, cat) if slurm and settings is not None else None)

    teams = [finished(plan_team(spec, t, cat, path=f"teams[{i}]",
                                identities=tuple(w for w in identities if w.team == t.name),
                                storage=buckets.get(t.name), tools_policy=policy_of.get(t.name),
                                volume=volumes.get(t.name), dedicated=tuple(d for d in dedicated if d.team == t.name)),
                      t)
             for i, t in enumerate(spec.teams)]
    pool = plan_shared_pool(spec, cat)
    if pool is not None:
        teams.append(finished(pool))
    sorted_teams = tuple(sorted(teams, key=lambda t: t.name))
    principals = principal_access(spec)
    stacks = stack_layout(spec, sorted_teams, principals, identities, contract_connections(spec))
    mode: Mode = spec.scheduler.mode
    fair_sharing = spec.scheduler.idle_compute == "fair-share"
    covered = covered_resources([f.accelerator_kind for f in flavors if not f.mig_resource],
                                [f.mig_resource for f in flavors])
    monitoring = monitoring_plan(_Governed(spec.name, region, spec.monitoring, sorted_teams, flavors, covered,
                                           spec.cluster.eks_cluster_name))
    cluster = _cluster(spec, base_dir, cat)
    running = cluster.operators + (cluster.existing.operators if cluster.existing is not None else ())
    frameworks, external = kueue_integrations(sorted_teams, running)
    gang = gang_scheduling_plan(spec.scheduler)  # scheduler.gangScheduling: the plan's part and Kueue's block
    return Plan(
        name=spec.name,
        mode=mode,
        account=spec.accounts.capacity.id,
        region=region,
        partition=partition,
        cluster=cluster,
        network=network_plan(spec),
        cohort=names.cohort(spec.name),
        fair_sharing=fair_sharing,
        idle_compute=spec.scheduler.idle_compute,
        teams=sorted_teams,
        flavors=flavors,
        priority_classes=tuple(
            sorted(
                (PriorityClassPlan(p.name, names.priority_class(p.name), p.weight)
                 for p in spec.scheduler.priority_classes),
                key=lambda p: p.name,
            )
        ),
        covered_resources=covered,
        principals=principals,
        identities=identities,
        task_governance_backend=(
            task_governance_backend(region, spec.scheduler.task_governance_resources)
            if mode == "task-governance" else None
        ),
        policy_name=names.cluster_policy(spec.name),
        stacks=stacks,
        pipeline=_pipeline(spec),
        kueue_config=kueue_manager_config(fair_sharing, frameworks=frameworks, external_frameworks=external,
                                          wait_for_pods_ready=wait_for_pods_ready(gang)),
        alerting=spec.monitoring,
        shared_pool_asked=spec.shared_pool.name if spec.shared_pool else None,
        catalog=cat,
        idle_resource_sharing=spec.scheduler.idle_resource_sharing,
        contracts=ContractsPlan(studio=stacks.studio, retiring=retiring_teams(spec)),
        trusted_accounts=tuple(sorted(spec.accounts.trusted)),
        monitoring=monitoring,
        tags=tuple(sorted(spec.tags.items())),
        storage=storage,
        tools_policies=policies,
        shared_storage=shared_storage,
        dedicated=dedicated,
        slurm=slurm_plan(spec, sorted_teams, groups),
        gang_scheduling=gang,
        topology=topology_plan(spec.name, spec.scheduler),
    )


@dataclass(frozen=True)
class _Governed:
    """The parts the monitoring plan reads (``monitoring.Governed``), before the plan that holds them exists."""

    name: str
    region: str
    alerting: Monitoring
    teams: tuple[TeamPlan, ...]
    flavors: tuple[FlavorPlan, ...]
    covered_resources: tuple[str, ...]
    eks_cluster_name: str
