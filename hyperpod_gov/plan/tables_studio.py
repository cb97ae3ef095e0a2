"""The Unified Studio delegation tables (``tables.py``): domain units, their owners and policy grants, project
profiles, the projects the spec creates and their memberships, in CloudFormation's member names (the
``AWS::DataZone::*`` schemas cfn-lint ships).

A member whose value is another resource of the studio stack (a unit's id, a profile's id, a project's id) is a
deploy-time reference: the planned value is the name the spec uses, the emitter passes the reference as
``context`` (``deploy``). ``drift`` and ``import`` have no DataZone reader: every row says so.
"""

from __future__ import annotations

from typing import Any, Mapping

from .fields import Field, Table
from .unified_studio import CREATE_PROJECT, GRANT_DETAIL

# Why no row of these tables is compared or imported.
_NO_READER = "no live reader: drift does not read DataZone (GetDomainUnit, ListPolicyGrants, GetProjectProfile, " \
    "GetProject, ListProjectMemberships)"
_NO_IMPORT = "not read by import: the spec's unifiedStudio section is written by hand"
_DOMAIN = "the domain the object lives in (unifiedStudio.domains[].id)"
_REFERENCE = "a deploy-time reference to a resource of the same stack; the name it stands for is planned"

PARENT = "ParentDomainUnitIdentifier"  # context: the parent unit's id, where the parent is a unit of the spec
UNIT_ID = "EntityIdentifier"  # context: the unit's id (owners, grants)
PROFILE_IDS = "ProjectProfiles"  # context: the allowed profiles' ids, in the order of the planned names
PROJECT_UNIT = "DomainUnitId"
PROJECT_PROFILE = "ProjectProfileId"
PROJECT_ID = "ProjectIdentifier"


def _domain_row() -> Field:
    return Field("DomainIdentifier", "domain", "", get=lambda p: p.domain, plan_fields=("domain",),
                 drift=_NO_READER, imports=_DOMAIN)


DOMAIN_UNIT = Table(
    kind="DomainUnit",
    label="domain unit",
    spec="unifiedStudio.domains[].domainUnits[]",
    fields=(
        _domain_row(),
        Field("Name", "name", "name", get=lambda u: u.name, plan_fields=("name",), drift=_NO_READER,
              imports=_NO_IMPORT),
        Field("Description", "description", "description", get=lambda u: u.description,
              plan_fields=("description",), drift=_NO_READER, imports=_NO_IMPORT),
        Field(PARENT, "parent unit", "parent", get=lambda u: u.parent or u.root_id, plan_fields=("parent", "root_id"),
              deploy=lambda u, ctx: ctx.get(PARENT) or u.root_id, drift=_NO_READER, imports=_NO_IMPORT),
    ),
    exempt={"owners": "the unit owner table", "grants": "the policy grant table",
            "profiles": "the policy grant table (CREATE_PROJECT_FROM_PROJECT_PROFILE's profiles)"},
)

UNIT_OWNER = Table(
    kind="Owner",
    label="domain unit owner",
    spec="unifiedStudio.domains[].domainUnits[]",
    fields=(
        _domain_row(),
        Field("EntityType", "entity type", "", get=lambda o: "DOMAIN_UNIT", drift=_NO_READER,
              imports="always DOMAIN_UNIT"),
        Field(UNIT_ID, "domain unit", "name", get=lambda o: o.unit, plan_fields=("unit",),
              deploy=lambda o, ctx: ctx[UNIT_ID], drift=_NO_READER, imports=_REFERENCE),
        Field("Owner.Group.GroupIdentifier", "owner group", "owners.groups", get=lambda o: o.group,
              plan_fields=("group",), drift=_NO_READER, imports=_NO_IMPORT),
    ),
)


def _detail(g: Any, profiles: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"IncludeChildDomainUnits": False}
    if g.policy_type == CREATE_PROJECT:
        body = {"ProjectProfiles": list(profiles), **body}
    return {GRANT_DETAIL[g.policy_type]: body}


def _principal_spec() -> str:
    return "projectCreators.groups|projectOwnersOverride.groups"


POLICY_GRANT = Table(
    kind="PolicyGrant",
    label="policy grant",
    spec="unifiedStudio.domains[].domainUnits[]",
    fields=(
        _domain_row(),
        Field("EntityType", "entity type", "", get=lambda g: "DOMAIN_UNIT", drift=_NO_READER,
              imports="always DOMAIN_UNIT"),
        Field(UNIT_ID, "domain unit", "name", get=lambda g: g.unit, plan_fields=("unit",),
              deploy=lambda g, ctx: ctx[UNIT_ID], drift=_NO_READER, imports=_REFERENCE),
        Field("PolicyType", "policy", "projectCreators|projectOwnersOverride", get=lambda g: g.policy_type,
              plan_fields=("policy_type",), drift=_NO_READER, imports=_NO_IMPORT),
        Field("Principal.Group.GroupIdentifier", "group", _principal_spec(), get=lambda g: g.group,
              plan_fields=("group",), drift=_NO_READER, imports=_NO_IMPORT),
        # IncludeChildDomainUnits is always false: a grant reaches the unit it names, never the units under it.
        Field("Detail", "what the grant allows", "projectProfiles", get=lambda g: _detail(g, g.profiles),
              plan_fields=("profiles",), deploy=lambda g, ctx: _detail(g, ctx.get(PROFILE_IDS, g.profiles)),
              drift=_NO_READER, imports=_NO_IMPORT),
    ),
)


def _environments(p: Any) -> Any:
    out = []
    for e in p.environments:
        item: dict[str, Any] = {"Name": e.name, "EnvironmentBlueprintId": e.blueprint_id}
        if e.description is not None:
            item["Description"] = e.description
        if e.deployment_mode is not None:
            item["DeploymentMode"] = e.deployment_mode
        if e.deployment_order is not None:
            item["DeploymentOrder"] = e.deployment_order
        item["AwsAccount"] = {"AwsAccountId": e.account}
        item["AwsRegion"] = {"RegionName": e.region}
        if e.parameters:
            item["ConfigurationParameters"] = {"ParameterOverrides": [
                {"Name": n, "Value": v, "IsEditable": editable} for n, v, editable in e.parameters]}
        out.append(item)
    return out or None


PROJECT_PROFILE_TABLE = Table(
    kind="ProjectProfile",
    label="project profile",
    spec="unifiedStudio.domains[].projectProfiles[]",
    fields=(
        _domain_row(),
        Field("Name", "name", "name", get=lambda p: p.name, plan_fields=("name",), drift=_NO_READER,
              imports=_NO_IMPORT),
        Field("Description", "description", "description", get=lambda p: p.description,
              plan_fields=("description",), drift=_NO_READER, imports=_NO_IMPORT),
        Field("Status", "status", "", get=lambda p: "ENABLED", drift=_NO_READER,
              imports="always ENABLED: a profile the spec declares can be used"),
        Field("EnvironmentConfigurations", "environment configurations", "environmentConfigurations",
              get=_environments, plan_fields=("environments",), keyed_by="Name", drift=_NO_READER,
              imports=_NO_IMPORT),
        Field("UseDefaultConfigurations", "default configurations", "useDefaultConfigurations",
              get=lambda p: p.use_default_configurations, plan_fields=("use_default_configurations",),
              drift=_NO_READER, imports=_NO_IMPORT),
    ),
)

_TEAM_STUDIO = "contract.unifiedStudio"

STUDIO_PROJECT = Table(
    kind="Project",
    label="Unified Studio project",
    spec="teams[]",
    fields=(
        _domain_row(),
        Field("Name", "name", f"{_TEAM_STUDIO}.project", get=lambda p: p.name, plan_fields=("name",),
              drift=_NO_READER, imports=_NO_IMPORT),
        Field("Description", "description", "", get=lambda p: p.description, plan_fields=("description", "team"),
              drift=_NO_READER, imports="generated from the team, cluster and spec names"),
        Field(PROJECT_UNIT, "domain unit", f"{_TEAM_STUDIO}.domainUnit", get=lambda p: p.unit, plan_fields=("unit",),
              deploy=lambda p, ctx: ctx[PROJECT_UNIT], drift=_NO_READER, imports=_REFERENCE),
        Field(PROJECT_PROFILE, "project profile", f"{_TEAM_STUDIO}.projectProfile", get=lambda p: p.profile,
              plan_fields=("profile",), deploy=lambda p, ctx: ctx[PROJECT_PROFILE], drift=_NO_READER,
              imports=_REFERENCE),
        Field("ProjectExecutionRole", "project role", f"{_TEAM_STUDIO}.projectRoleArn", get=lambda p: p.role_arn,
              plan_fields=("role_arn",), drift=_NO_READER, imports=_NO_IMPORT),
    ),
    exempt={"owners": "the project membership table", "members": "the project membership table"},
)

PROJECT_MEMBERSHIP = Table(
    kind="ProjectMembership",
    label="project membership",
    spec="teams[]",
    fields=(
        _domain_row(),
        Field(PROJECT_ID, "project", f"{_TEAM_STUDIO}.project", get=lambda m: m.project, plan_fields=("project",),
              deploy=lambda m, ctx: ctx[PROJECT_ID], drift=_NO_READER, imports=_REFERENCE),
        Field("Member.GroupIdentifier", "group", f"{_TEAM_STUDIO}.owners.groups|{_TEAM_STUDIO}.members.groups",
              get=lambda m: m.group, plan_fields=("group",), drift=_NO_READER, imports=_NO_IMPORT),
        Field("Designation", "designation", f"{_TEAM_STUDIO}.owners|{_TEAM_STUDIO}.members",
              get=lambda m: m.designation, plan_fields=("designation",), drift=_NO_READER, imports=_NO_IMPORT),
    ),
)

STUDIO_TABLES = (DOMAIN_UNIT, UNIT_OWNER, POLICY_GRANT, PROJECT_PROFILE_TABLE, STUDIO_PROJECT, PROJECT_MEMBERSHIP)


def studio_context(**refs: Any) -> Mapping[str, Any]:
    """The deploy-time values of one object, by member (``emit``'s ``context``)."""
    return {k: v for k, v in refs.items() if v is not None}
