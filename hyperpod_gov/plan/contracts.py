"""Connection contracts planned: which teams connect through SageMaker Unified Studio, where each connection is
created, under which name and in which stack, and which teams are retiring.

A connection is an ``AWS::DataZone::Connection`` with ``HyperPodProperties`` in the Unified Studio domain's
account and region. The project role reaches the cluster through an EKS access entry onto the team's submitters
and viewers groups (``plan.access.principal_access``), like the team's own submitters, and through nothing else.
A retiring team keeps its namespace and quota but has no connection, no principal and no workload identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..spec.models import GovernanceSpec
from . import names
from .unified_studio import DomainPlan


def connection_name(spec_name: str, team: str) -> str:
    """Connection name inside the domain: ``<spec name>-<team>`` (at most 20 + 1 + 40 characters).

    Team names are unique and the spec name is fixed, so two teams never share a name, even in one project.
    """
    return f"{spec_name}-{team}"


def studio_stack(spec_name: str, account: str, region: str) -> str:
    """One stack per Unified Studio account and region, like the consumer accounts' stacks."""
    return names.stack(spec_name, f"studio-{account}-{region}")


@dataclass(frozen=True)
class ConnectionPlan:
    """One team's Unified Studio connection to the HyperPod cluster."""

    team: str
    namespace: str
    name: str  # the connection's name in the domain
    description: str
    domain_id: str
    domain_unit_id: Optional[str]
    project_id: Optional[str]  # an existing project's id; None when the spec creates the project (``project``)
    project_role_arn: str  # mapped onto the team's submitters group, nothing else
    access_role_arn: Optional[str]  # AwsLocation.AccessRole: Unified Studio reaches the cluster's account with it
    account: str  # the domain's account: where the connection is created
    region: str  # the domain's region
    cluster_name: str  # HyperPod cluster (HyperPodProperties.ClusterName)
    cluster_account: str  # where the cluster runs (AwsLocation)
    cluster_region: str
    groups: tuple[str, ...]  # Kubernetes groups of the project role's access entry, sorted
    project: Optional[str] = None  # the name of the project the spec creates in the same stack (by-name form)


@dataclass(frozen=True)
class StudioStack:
    """The connections created in one Unified Studio account and region."""

    name: str
    account: str
    region: str
    connections: tuple[ConnectionPlan, ...]  # sorted by team
    domains: tuple[DomainPlan, ...] = ()  # units, profiles, grants and projects of the top-level unifiedStudio


@dataclass(frozen=True)
class ContractsPlan:
    """Connections and retirement: the lifecycle decisions of the spec's contracts."""

    studio: tuple[StudioStack, ...] = ()  # sorted by stack name; the stack layout's (``StackLayout.studio``)
    retiring: tuple[str, ...] = ()  # team names, sorted

    @property
    def connections(self) -> tuple[ConnectionPlan, ...]:
        return tuple(sorted((c for s in self.studio for c in s.connections), key=lambda c: c.team))

    def connection(self, team: str) -> Optional[ConnectionPlan]:
        return next((c for c in self.connections if c.team == team), None)

    def is_retiring(self, team: str) -> bool:
        return team in self.retiring

    @property
    def stack_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.studio)


def contract_connections(spec: GovernanceSpec) -> tuple[ConnectionPlan, ...]:
    """Every Unified Studio connection of the spec, sorted by team (retiring teams have none)."""
    cap = spec.accounts.capacity
    declared = {d.id: d for d in (spec.unified_studio.domains if spec.unified_studio else ())}
    out = []
    for team in sorted(spec.teams, key=lambda t: t.name):
        us = team.contract.unified_studio if team.contract else None
        if us is None or team.retiring:
            continue
        domain = declared.get(us.domain_id or "")  # a domain of the unifiedStudio section: its account and region
        out.append(ConnectionPlan(
            team=team.name,
            namespace=names.namespace(team.name),
            name=connection_name(spec.name, team.name),
            description=f"HyperPod cluster {spec.cluster.name} ({spec.name}): namespace {names.namespace(team.name)}",
            domain_id=us.domain_id,
            domain_unit_id=us.domain_unit_id,
            project_id=us.project_id,
            project_role_arn=us.project_role_arn,
            access_role_arn=us.access_role_arn,
            account=us.account or (domain.account if domain else us.role_account),
            region=us.region or (domain.region if domain else cap.region),
            cluster_name=spec.cluster.name,
            cluster_account=cap.id,
            cluster_region=cap.region,
            groups=project_role_groups(team.name),
            project=us.project,
        ))
    return tuple(out)


def studio_stacks(spec_name: str, connections: tuple[ConnectionPlan, ...],
                  domains: tuple[DomainPlan, ...] = ()) -> tuple[StudioStack, ...]:
    """The connections, and the domains the spec governs, grouped into one stack per Unified Studio account and
    region, sorted by stack name."""
    by_stack: dict[tuple[str, str], list[ConnectionPlan]] = {}
    by_domain: dict[tuple[str, str], list[DomainPlan]] = {}
    for c in connections:
        by_stack.setdefault((c.account, c.region), []).append(c)
    for d in domains:
        by_stack.setdefault((d.account, d.region), [])
        by_domain.setdefault((d.account, d.region), []).append(d)
    return tuple(sorted(
        (StudioStack(studio_stack(spec_name, a, r), a, r, tuple(cs), tuple(by_domain.get((a, r), ())))
         for (a, r), cs in by_stack.items()),
        key=lambda s: s.name,
    ))


def retiring_teams(spec: GovernanceSpec) -> tuple[str, ...]:
    return tuple(sorted(t.name for t in spec.teams if t.retiring))


def project_role_groups(team: str) -> tuple[str, ...]:
    """Exactly what a submitter of the team gets: the submitters group, which the team's Roles bind to both
    ``submitter`` and ``viewer`` (charts/rbac.py); the viewers group would add nothing."""
    return (names.submitters_group(team),)

