"""A Unified Studio account and region: the HyperPod connections of the projects whose contracts name it, and what
the spec manages in the domains there (units, owners, policy grants, project profiles, the teams' projects)."""

from __future__ import annotations

from typing import Any

from aws_cdk import Environment
from constructs import Construct

from hyperpod_gov.constructs.studio import StudioConnection, StudioDomainGovernance, StudioProject
from hyperpod_gov.plan import Plan
from hyperpod_gov.plan.contracts import StudioStack

from .base import SpecStack


class StudioConnectionsStack(SpecStack):
    """One per Unified Studio account and region with connections or governed domains; each domain's units and
    profiles under the domain's id, each team's project and connection under its team's scope."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, studio: StudioStack, **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, env=Environment(account=studio.account, region=studio.region),
                         what=f"Unified Studio connections to HyperPod cluster {plan.cluster_name}", **kwargs)
        teams: dict[str, Construct] = {}

        def team_scope(team: str) -> Construct:
            if team not in teams:
                teams[team] = Construct(self, team)
            return teams[team]

        projects: dict[tuple[str, str], str] = {}  # (domain, project name) -> the created project's id
        for domain in studio.domains:  # sorted by id
            governed = StudioDomainGovernance(self, domain.id, domain=domain)
            for project in domain.projects:  # sorted by team
                team = team_scope(project.team)
                created = StudioProject(team, "Project", project=project,
                                        unit_id=governed.units[project.unit].attr_id,
                                        profile_id=governed.profiles[project.profile].attr_id)
                projects[(domain.id, project.name)] = created.resource.attr_id
        for connection in studio.connections:  # sorted by team
            team = team_scope(connection.team)
            project_id = projects.get((connection.domain_id, connection.project)) if connection.project else None
            if connection.project and project_id is None:
                raise ValueError(f"{connection.team}: project {connection.project} is not created in this stack's "
                                 f"domains (HPG-U001 refuses the spec)")
            StudioConnection(team, "Connection", connection=connection, project_id=project_id)
