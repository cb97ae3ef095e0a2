"""A SageMaker Unified Studio project's connection to the HyperPod cluster (``AWS::DataZone::Connection``), and
what the spec manages in a domain: units, owners, policy grants, project profiles and the teams' projects."""

from __future__ import annotations

from typing import Optional

from aws_cdk import aws_datazone as datazone
from constructs import Construct

from ..plan.contracts import ConnectionPlan
from ..plan.fields import emit
from ..plan.tables_studio import (DOMAIN_UNIT, POLICY_GRANT, PROJECT_MEMBERSHIP, PROJECT_PROFILE_TABLE,
                                  STUDIO_PROJECT, UNIT_OWNER, studio_context)
from ..plan.unified_studio import DomainPlan, ProjectPlan, UnitPlan
from ..template_checks import NAMESPACE as TEMPLATE_CHECKS
from ._l1 import l1_kwargs
from ._nag import acknowledge


class StudioConnection(Construct):
    """The HyperPod connection of one team's Unified Studio project, created in the domain's account and region.

    ``HyperPodProperties`` takes only the cluster's name (cfn-lint's schema for the type); ``AwsLocation`` says
    which account and region the cluster runs in, and the access role, if the contract names one. The project
    role's cluster access is not granted here: it is an EKS access entry in the capacity account's access stacks,
    onto the team's submitters group. ``project_id``: the id of the project the spec creates (a reference), for a
    connection whose contract names its project by name.
    """

    def __init__(self, scope: Construct, id: str, *, connection: ConnectionPlan,
                 project_id: Optional[str] = None) -> None:
        super().__init__(scope, id)
        self.resource = datazone.CfnConnection(
            self,
            "Resource",
            domain_identifier=connection.domain_id,
            project_identifier=project_id or connection.project_id,
            name=connection.name,
            description=connection.description,
            aws_location=datazone.CfnConnection.AwsLocationProperty(
                aws_account_id=connection.cluster_account, aws_region=connection.cluster_region,
                access_role=connection.access_role_arn,
            ),
            props=datazone.CfnConnection.ConnectionPropertiesInputProperty(
                hyper_pod_properties=datazone.CfnConnection.HyperPodPropertiesInputProperty(
                    cluster_name=connection.cluster_name,
                ),
            ),
        )


class StudioDomainGovernance(Construct):
    """What the spec manages in one existing domain: its project profiles, its domain units with their owners and
    policy grants, and the teams' projects with their memberships, each built from its field table.

    Each unit is a scope keyed by its name (``Resource``: the ``AWS::DataZone::DomainUnit``; ``Owner<group>`` and
    ``<grant detail><group>`` under it); each profile a scope keyed by its name; the projects are not here but under
    their team's scope in the stack (``StudioProject``), beside the team's connection.
    """

    def __init__(self, scope: Construct, id: str, *, domain: DomainPlan) -> None:
        super().__init__(scope, id)
        profiles = Construct(self, "Profiles")
        self.profiles: dict[str, datazone.CfnProjectProfile] = {}
        for p in domain.profiles:  # sorted by name
            props = emit(PROJECT_PROFILE_TABLE, p)
            self.profiles[p.name] = datazone.CfnProjectProfile(
                Construct(profiles, p.key), "Resource", **l1_kwargs(datazone.CfnProjectProfile, props))
        units = Construct(self, "Units")
        self.units: dict[str, datazone.CfnDomainUnit] = {}
        scopes: dict[str, Construct] = {}
        for u in _parents_first(domain.units):
            here = scopes[u.name] = Construct(units, u.key)
            parent = self.units[u.parent].attr_id if u.parent else None
            props = emit(DOMAIN_UNIT, u, studio_context(ParentDomainUnitIdentifier=parent))
            self.units[u.name] = datazone.CfnDomainUnit(here, "Resource", **l1_kwargs(datazone.CfnDomainUnit, props))
        for u in domain.units:
            unit_id = self.units[u.name].attr_id
            for o in u.owner_parts:
                props = emit(UNIT_OWNER, o, studio_context(EntityIdentifier=unit_id))
                datazone.CfnOwner(scopes[u.name], o.key, **l1_kwargs(datazone.CfnOwner, props))
            for g in u.grants:
                ids = [self.profiles[name].attr_id for name in g.profiles] if g.profiles else None
                props = emit(POLICY_GRANT, g, studio_context(EntityIdentifier=unit_id, ProjectProfiles=ids))
                datazone.CfnPolicyGrant(scopes[u.name], g.key, **l1_kwargs(datazone.CfnPolicyGrant, props))


def _parents_first(units: tuple[UnitPlan, ...]) -> list[UnitPlan]:
    """The units with each parent before its children, otherwise by name (the spec rules refuse a cycle)."""
    placed: list[UnitPlan] = []
    done: set[str] = set()
    pending = list(units)
    while pending:
        ready = [u for u in pending if u.parent is None or u.parent in done]
        if not ready:
            raise ValueError(f"domain units {sorted(u.name for u in pending)} name parents that are not units of "
                             "the spec, or each other in a cycle (HPG-U001 refuses the spec)")
        for u in ready:
            placed.append(u)
            done.add(u.name)
            pending.remove(u)
    return placed


# The one cfn-lint finding acknowledged on the studio stacks (see StudioProject).
MEMBERSHIP_LINT_ACK = "E3019"
MEMBERSHIP_LINT_REASON = ("AWS::DataZone::ProjectMembership's schema leaves the member out of its primary identifier; "
                          "DataZone keys a membership by project and member, so one project has one per group")


class StudioProject(Construct):
    """A team's project the spec creates (``AWS::DataZone::Project``, ``Resource``) from its profile, in its unit,
    with the project role as its execution role, and one ``AWS::DataZone::ProjectMembership`` per group."""

    def __init__(self, scope: Construct, id: str, *, project: ProjectPlan, unit_id: str, profile_id: str) -> None:
        super().__init__(scope, id)
        props = emit(STUDIO_PROJECT, project, studio_context(DomainUnitId=unit_id, ProjectProfileId=profile_id))
        self.resource = datazone.CfnProject(self, "Resource", **l1_kwargs(datazone.CfnProject, props))
        for m in project.memberships:
            props = emit(PROJECT_MEMBERSHIP, m, studio_context(ProjectIdentifier=self.resource.attr_id))
            membership = datazone.CfnProjectMembership(self, m.key, **l1_kwargs(datazone.CfnProjectMembership, props))
            # The type's schema names (DomainIdentifier, ProjectIdentifier) its primary identifier, without the
            # member, so cfn-lint's E3019 (and CDK's template check, which runs it) takes a project's second
            # membership for a duplicate; DataZone keys a membership by its member too (CreateProjectMembership and
            # DeleteProjectMembership take it). Acknowledged on the membership alone, for cfn-lint and for CDK.
            membership.cfn_options.metadata = {"cfn-lint": {"config": {"ignore_checks": [MEMBERSHIP_LINT_ACK]}}}
            acknowledge(membership, [(f"{TEMPLATE_CHECKS}::{MEMBERSHIP_LINT_ACK}", MEMBERSHIP_LINT_REASON)])
