"""Unified Studio delegation planned: the domain units, project profiles, policy grants, owners and projects the
studio stacks create in each domain of the top-level ``unifiedStudio`` (issue 59, docs/unified-studio.md).

What a group may do follows from the grants alone (the policy types are DataZone's ``ManagedPolicyType``):

- ``projectCreators`` get ``CREATE_PROJECT_FROM_PROJECT_PROFILE`` on their unit, limited to the unit's
  ``projectProfiles`` and not to child units (``IncludeChildDomainUnits: false``);
- ``projectOwnersOverride`` get ``OVERRIDE_PROJECT_OWNERS`` on their unit, not its children;
- the groups that may be added to the unit's projects (creators, overriders, and the owners and members of the
  projects the spec creates there) get ``ADD_TO_PROJECT_MEMBER_POOL`` on the unit;
- a unit's ``owners`` are ``AWS::DataZone::Owner`` s of it; nobody gets ``OVERRIDE_DOMAIN_UNIT_OWNERS`` or
  ``CREATE_DOMAIN_UNIT``: the unit tree is the spec's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..spec.models import GovernanceSpec
from ..spec.unified_studio import Domain, DomainUnit, EnvironmentConfiguration, ProjectProfile
from . import names

CREATE_PROJECT = "CREATE_PROJECT_FROM_PROJECT_PROFILE"
OVERRIDE_PROJECT_OWNERS = "OVERRIDE_PROJECT_OWNERS"
MEMBER_POOL = "ADD_TO_PROJECT_MEMBER_POOL"
# PolicyGrant.Detail's member for each policy type (the PolicyGrantDetail oneOf of the schema).
GRANT_DETAIL: dict[str, str] = {
    CREATE_PROJECT: "CreateProjectFromProjectProfile",
    OVERRIDE_PROJECT_OWNERS: "OverrideProjectOwners",
    MEMBER_POOL: "AddToProjectMemberPool",
}
# ProjectMembership.Designation of a created project's owners and members.
OWNER = "PROJECT_OWNER"
CONTRIBUTOR = "PROJECT_CONTRIBUTOR"


@dataclass(frozen=True)
class GrantPlan:
    """One policy grant on a domain unit to one group."""

    domain: str
    unit: str  # the unit's name
    policy_type: str  # a key of GRANT_DETAIL
    group: str
    profiles: tuple[str, ...] = ()  # CREATE_PROJECT_FROM_PROJECT_PROFILE: the profile names it allows, sorted

    @property
    def key(self) -> str:
        return GRANT_DETAIL[self.policy_type] + names.principal_key(self.group)


@dataclass(frozen=True)
class OwnerPart:
    """One group that owns a domain unit (``AWS::DataZone::Owner``)."""

    domain: str
    unit: str
    group: str

    @property
    def key(self) -> str:
        return "Owner" + names.principal_key(self.group)


@dataclass(frozen=True)
class MembershipPart:
    """One group's membership of a created project (``AWS::DataZone::ProjectMembership``)."""

    domain: str
    project: str
    group: str
    designation: str  # OWNER or CONTRIBUTOR

    @property
    def key(self) -> str:
        return ("Owner" if self.designation == OWNER else "Member") + names.principal_key(self.group)


@dataclass(frozen=True)
class UnitPlan:
    """A domain unit the spec creates, its owners and its grants."""

    domain: str
    name: str
    description: Optional[str]
    parent: Optional[str]  # the name of a unit of the spec, or None: under root_id
    root_id: Optional[str]  # the domain's root unit, for a unit without parent
    owners: tuple[str, ...]  # groups, sorted
    profiles: tuple[str, ...]  # profile names projects here may be created from, sorted
    grants: tuple[GrantPlan, ...]  # sorted by policy type, then group

    @property
    def key(self) -> str:
        return names.principal_key(self.name)

    def grantees(self, policy_type: str) -> tuple[str, ...]:
        return tuple(g.group for g in self.grants if g.policy_type == policy_type)

    @property
    def owner_parts(self) -> tuple[OwnerPart, ...]:
        return tuple(OwnerPart(self.domain, self.name, g) for g in self.owners)


@dataclass(frozen=True)
class EnvironmentPlan:
    """One environment configuration of a profile, its account and region resolved to the domain's."""

    name: str
    blueprint_id: str
    description: Optional[str]
    deployment_mode: Optional[str]
    deployment_order: Optional[int]
    account: str
    region: str
    parameters: tuple[tuple[str, str, bool], ...]  # (name, value, editable), in spec order


@dataclass(frozen=True)
class ProfilePlan:
    domain: str
    name: str
    description: Optional[str]
    environments: tuple[EnvironmentPlan, ...]  # in spec order (the deployment order may rely on it)
    use_default_configurations: Optional[bool]

    @property
    def key(self) -> str:
        return names.principal_key(self.name)


@dataclass(frozen=True)
class ProjectPlan:
    """A project the spec creates for a team (``teams[].contract.unifiedStudio`` by name)."""

    domain: str
    team: str
    name: str
    description: str
    unit: str  # the unit's name
    profile: str  # the profile's name
    role_arn: str  # ProjectExecutionRole: the project role the team's access entry maps
    owners: tuple[str, ...]  # groups, sorted
    members: tuple[str, ...]  # groups, sorted

    @property
    def memberships(self) -> tuple[MembershipPart, ...]:
        """Owners first, then members; a group both owner and member is an owner only."""
        return (tuple(MembershipPart(self.domain, self.name, g, OWNER) for g in self.owners)
                + tuple(MembershipPart(self.domain, self.name, g, CONTRIBUTOR) for g in self.members
                        if g not in self.owners))


@dataclass(frozen=True)
class DomainPlan:
    """What the spec manages in one existing domain; deployed in its account and region."""

    id: str
    account: str
    region: str
    units: tuple[UnitPlan, ...]  # sorted by name
    profiles: tuple[ProfilePlan, ...]  # sorted by name
    projects: tuple[ProjectPlan, ...]  # sorted by team

    def unit(self, name: str) -> UnitPlan:
        return next(u for u in self.units if u.name == name)


def profile_of(domain: Domain, unit: DomainUnit, named: Optional[str]) -> Optional[str]:
    """The profile a project in ``unit`` is created from: ``named``, or the unit's one profile (None: neither)."""
    if named is not None:
        return named
    return unit.project_profiles[0] if len(unit.project_profiles) == 1 else None


def _environment(e: EnvironmentConfiguration, domain: Domain) -> EnvironmentPlan:
    return EnvironmentPlan(e.name, e.blueprint_id, e.description, e.deployment_mode, e.deployment_order,
                           e.account or domain.account, e.region or domain.region,
                           tuple((p.name, p.value, p.editable) for p in e.parameter_overrides))


def _profile(p: ProjectProfile, domain: Domain) -> ProfilePlan:
    return ProfilePlan(domain.id, p.name, p.description, tuple(_environment(e, domain) for e in p.environment_configurations),
                       p.use_default_configurations)


def _unit(u: DomainUnit, domain: Domain, projects: tuple[ProjectPlan, ...]) -> UnitPlan:
    profiles = tuple(sorted(u.project_profiles))
    grants = [GrantPlan(domain.id, u.name, CREATE_PROJECT, g, profiles) for g in u.project_creators.groups]
    grants += [GrantPlan(domain.id, u.name, OVERRIDE_PROJECT_OWNERS, g) for g in u.project_owners_override.groups]
    pool = set(u.project_creators.groups) | set(u.project_owners_override.groups)
    for p in projects:
        if p.unit == u.name:
            pool |= set(p.owners) | set(p.members)
    grants += [GrantPlan(domain.id, u.name, MEMBER_POOL, g) for g in pool]
    return UnitPlan(domain.id, u.name, u.description, u.parent, None if u.parent else domain.root_domain_unit_id,
                    tuple(sorted(u.owners.groups)), profiles,
                    tuple(sorted(grants, key=lambda g: (g.policy_type, g.group))))


def studio_domains(spec: GovernanceSpec) -> tuple[DomainPlan, ...]:
    """Every domain of the top-level ``unifiedStudio``, sorted by id (none without the section).

    The spec rules (HPG-U001) have checked that each created project names a declared unit and a profile it
    allows; a retiring team's project is kept (its members stay until the contract ends), its connection is not.
    """
    if spec.unified_studio is None:
        return ()
    out = []
    for domain in sorted(spec.unified_studio.domains, key=lambda d: d.id):
        projects = []
        for team in sorted(spec.teams, key=lambda t: t.name):
            us = team.contract.unified_studio if team.contract else None
            if us is None or us.domain != domain.id or us.domain_unit is None or us.project is None:
                continue
            unit = domain.unit(us.domain_unit)
            profile = profile_of(domain, unit, us.project_profile) if unit is not None else None
            if unit is None or profile is None:
                continue  # refused by HPG-U001
            projects.append(ProjectPlan(
                domain=domain.id, team=team.name, name=us.project, description=f"Team {team.name} on HyperPod cluster "
                f"{spec.cluster.name} ({spec.name})", unit=unit.name, profile=profile,
                role_arn=us.project_role_arn, owners=tuple(sorted(us.owners.groups)),
                members=tuple(sorted(us.members.groups)),
            ))
        out.append(DomainPlan(
            domain.id, domain.account, domain.region,
            tuple(sorted((_unit(u, domain, tuple(projects)) for u in domain.domain_units), key=lambda u: u.name)),
            tuple(sorted((_profile(p, domain) for p in domain.project_profiles), key=lambda p: p.name)),
            tuple(projects),
        ))
    return tuple(out)
