"""HPG-U: Unified Studio delegation (top-level ``unifiedStudio`` and the projects teams name by name)."""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ..errors import SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule
from ..unified_studio import DELEGATION_REGIONS, DELEGATION_TYPES, Domain, Principals


def _domains(spec: GovernanceSpec) -> tuple[Domain, ...]:
    return spec.unified_studio.domains if spec.unified_studio is not None else ()


@rule("HPG-U001", "error", "A team's project names a domain of unifiedStudio.domains, a unit of that domain and a "
      "profile the unit allows; every unit's profiles and parent are declared in its domain, without a cycle.")
def projects_live_in_units_that_allow_their_profile(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for di, d in enumerate(_domains(spec)):
        declared = {p.name for p in d.project_profiles}
        units = {u.name: u for u in d.domain_units}
        for ui, u in enumerate(d.domain_units):
            path = f"unifiedStudio.domains[{di}].domainUnits[{ui}]"
            for pi, name in enumerate(u.project_profiles):
                if name not in declared:
                    yield SpecIssue(f"{path}.projectProfiles[{pi}]", "is not a project profile of the domain", name,
                                    f"declare it under unifiedStudio.domains[{di}].projectProfiles, or use one of: "
                                    f"{', '.join(sorted(declared)) or '(none declared)'}")
            if u.parent is not None and u.parent not in units:
                yield SpecIssue(f"{path}.parent", "is not a domain unit of this domain", u.parent,
                                f"name a unit of domainUnits ({', '.join(sorted(units))}), or leave parent out to "
                                "create the unit under the root unit")
            if not u.project_creators.is_empty and not u.project_profiles:
                yield SpecIssue(f"{path}.projectCreators", "may create projects but the unit allows no profile, so "
                                "they can create none", u.name, "list the profiles they may use under projectProfiles")
            seen, here = set(), u
            while here is not None and here.parent is not None and here.name not in seen:
                seen.add(here.name)
                here = units.get(here.parent)
            if here is not None and here.name in seen:
                yield SpecIssue(f"{path}.parent", "makes the units a cycle", u.parent,
                                "give one unit of the cycle no parent (it goes under the root unit)")
    by_id = {d.id: (di, d) for di, d in enumerate(_domains(spec))}
    projects: dict[tuple[str, str], str] = {}
    for ti, team in enumerate(spec.teams):
        us = team.contract.unified_studio if team.contract else None
        if us is None:
            continue
        path = f"teams[{ti}].contract.unifiedStudio"
        found = by_id.get(us.domain_id or "")
        if found is not None:
            di, d = found
            for key, value, own in (("account", us.account, d.account), ("region", us.region, d.region)):
                if value is not None and value != own:
                    yield SpecIssue(f"{path}.{key}", f"differs from unifiedStudio.domains[{di}].{key} ({own})", value,
                                    f"leave {key} out: the connection is created in the domain's {key}")
        if not us.creates_project:
            continue
        if found is None:
            yield SpecIssue(f"{path}.domain", "is not a domain of unifiedStudio.domains", us.domain,
                            "declare the domain (id, account, region, domainUnits) under unifiedStudio.domains, or "
                            "name an existing project with domainId and projectId")
            continue
        di, d = found
        unit = d.unit(us.domain_unit or "")
        if unit is None:
            yield SpecIssue(f"{path}.domainUnit", f"is not a unit of unifiedStudio.domains[{di}]", us.domain_unit,
                            f"use one of: {', '.join(sorted(u.name for u in d.domain_units)) or '(none declared)'}")
            continue
        if us.project_profile is None and len(unit.project_profiles) != 1:
            yield SpecIssue(f"{path}.projectProfile", f"is not stated and unit {unit.name} allows "
                            f"{len(unit.project_profiles)} profiles", None,
                            f"name the profile, one of: {', '.join(unit.project_profiles) or '(none allowed)'}")
        elif us.project_profile is not None and us.project_profile not in unit.project_profiles:
            yield SpecIssue(f"{path}.projectProfile", f"is not a profile unit {unit.name} allows", us.project_profile,
                            f"use one of: {', '.join(unit.project_profiles) or '(none allowed)'}, or add it to the "
                            "unit's projectProfiles")
        first = projects.setdefault((d.id, us.project or ""), path)
        if first != path:
            yield SpecIssue(f"{path}.project", f"is the project {first} creates too", us.project,
                            "give each team's project its own name (a project connects one team)")


def _principal_paths(spec: GovernanceSpec) -> Iterator[tuple[str, Principals]]:
    for di, d in enumerate(_domains(spec)):
        for ui, u in enumerate(d.domain_units):
            for key in ("owners", "projectCreators", "projectOwnersOverride"):
                attr = {"owners": "owners", "projectCreators": "project_creators",
                        "projectOwnersOverride": "project_owners_override"}[key]
                yield f"unifiedStudio.domains[{di}].domainUnits[{ui}].{key}", getattr(u, attr)
    for ti, team in enumerate(spec.teams):
        us = team.contract.unified_studio if team.contract else None
        if us is not None:
            yield f"teams[{ti}].contract.unifiedStudio.owners", us.owners
            yield f"teams[{ti}].contract.unifiedStudio.members", us.members


@rule("HPG-U002", "error", "Domain unit owners, project creators, owner overriders and project owners and members "
      "are groups, never single users.")
def studio_principals_are_groups(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for path, who in _principal_paths(spec):
        for i, user in enumerate(who.users):
            yield SpecIssue(f"{path}.users[{i}]", "is a single user: people come and go, and a grant to a person "
                            "outlives their role", user,
                            "put the user in an IAM Identity Center group and list the group under groups")


@rule("HPG-U003", "error", "A project role (and the connection's access role) is not a cluster admin: the workload "
      "identity a project uses gets the team's submitter access only, never cluster lifecycle rights.")
def project_roles_are_not_admins(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    admins = set(spec.cluster.admins)
    for ti, team in enumerate(spec.teams):
        us = team.contract.unified_studio if team.contract else None
        if us is None:
            continue
        for key, arn in (("projectRoleArn", us.project_role_arn), ("accessRoleArn", us.access_role_arn)):
            if arn is not None and arn in admins:
                yield SpecIssue(
                    f"teams[{ti}].contract.unifiedStudio.{key}", "is a cluster admin (cluster.admins): every member "
                    "of the project would create, change and delete the cluster's workloads and nodes", arn,
                    "use a role of its own for the project, and keep cluster admins out of Unified Studio projects",
                )


@rule("HPG-U004", "error", "Each domain of unifiedStudio.domains is in a region whose CloudFormation declares the "
      "DataZone types the section emits (cfn-lint's provider schemas).")
def studio_types_exist_in_the_region(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for di, d in enumerate(_domains(spec)):
        if d.region not in DELEGATION_REGIONS:
            yield SpecIssue(
                f"unifiedStudio.domains[{di}].region", "has no " + ", ".join(DELEGATION_TYPES) + " (or "
                "AWS::DataZone::Connection) in its CloudFormation, so the units, grants and projects cannot be "
                "declared there", d.region,
                f"manage this domain's units and grants in the console, or use a domain in one of: "
                f"{', '.join(sorted(DELEGATION_REGIONS))}",
            )
