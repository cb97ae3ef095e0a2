"""The Unified Studio delegation view (``views.py``): per governed domain, its units, who owns them, who may create
projects from which profiles, who may take projects over, the profiles and the teams' projects; and the lines
``explain`` prints. Every grant, owner and membership is a member row with its privilege, so ``diff`` marks a new
creator, owner or member ``(privilege: ...)``."""

from __future__ import annotations

from typing import Any, Mapping

from .model import Plan
from .unified_studio import CREATE_PROJECT, MEMBER_POOL, OVERRIDE_PROJECT_OWNERS, DomainPlan, ProfilePlan
from .views_base import Row, View, _widens

_UNITS = "unifiedStudio.domains[].domainUnits[]"
_PROFILES = "unifiedStudio.domains[].projectProfiles[]"
_TEAM_STUDIO = "teams[].contract.unifiedStudio"

CREATOR_PRIVILEGE = "may create projects in the unit from its profiles, and owns what it creates"
OWNER_PRIVILEGE = "owns the domain unit: manages its projects, owners and grants"
OVERRIDE_PRIVILEGE = "may take over the ownership of every project in the unit"
POOL_PRIVILEGE = "may be added to the unit's projects"
PROJECT_OWNER_PRIVILEGE = "owns the project: adds members, who reach the cluster through the project role"
PROJECT_MEMBER_PRIVILEGE = "joins the project: reaches the cluster as the team's submitters through the project role"


def studio_domains_of(plan: Plan) -> Mapping[str, DomainPlan]:
    """The governed domains of ``plan`` by id, sorted (none without the spec's unifiedStudio section)."""
    return {d.id: d for s in plan.contracts.studio for d in s.domains}


def _per_unit(d: DomainPlan, policy_type: str) -> tuple[str, ...]:
    return tuple(f"{u.name}: {g}" for u in d.units for g in u.grantees(policy_type))


def _creators(d: DomainPlan) -> tuple[str, ...]:
    return tuple(f"{u.name}: {g.group} (from {', '.join(g.profiles)})" for u in d.units for g in u.grants
                 if g.policy_type == CREATE_PROJECT)


def _profile(p: ProfilePlan) -> str:
    envs = "; ".join(f"{e.name} = blueprint {e.blueprint_id} in {e.account}/{e.region}"
                     + (f", {e.deployment_mode}" if e.deployment_mode else "")
                     + (f", order {e.deployment_order}" if e.deployment_order is not None else "")
                     + "".join(f", {n}={v}{' (editable)' if ed else ''}" for n, v, ed in e.parameters)
                     for e in p.environments) or "no environment configuration"
    default = "" if p.use_default_configurations is None else \
        f"; default configurations {'on' if p.use_default_configurations else 'off'}"
    return f"{p.name}: {envs}{default}" + (f" ({p.description})" if p.description else "")


def _projects(d: DomainPlan) -> tuple[str, ...]:
    return tuple(f"{p.name} (team {p.team}, unit {p.unit}, profile {p.profile}, role {p.role_arn})"
                 for p in d.projects)


def _added(key: str, d: Any) -> str:
    granted = [*(f"{x} ({CREATOR_PRIVILEGE})" for x in _creators(d)),
               *(f"{x} ({OWNER_PRIVILEGE})" for x in (f"{u.name}: {g}" for u in d.units for g in u.owners)),
               *(f"{x} ({OVERRIDE_PRIVILEGE})" for x in _per_unit(d, OVERRIDE_PROJECT_OWNERS))]
    units = ", ".join(u.name for u in d.units) or "no unit"
    return f"Unified Studio domain {key} added ({units})" + (
        f" (privilege: {'; '.join(granted)})" if granted else "")


STUDIO = View(
    name="unified studio",
    spec="unifiedStudio.domains[]",
    objects=studio_domains_of,
    title=lambda key: f"Unified Studio domain {key}",
    rows=(
        Row("account and region", "unifiedStudio.domains[].id|unifiedStudio.domains[].account|"
            "unifiedStudio.domains[].region", lambda d: f"{d.account}/{d.region}", ("id", "account", "region")),
        Row("domain units", f"{_UNITS}.name|{_UNITS}.parent|{_UNITS}.description|unifiedStudio.domains[]."
            "rootDomainUnitId", lambda d: tuple(f"{u.name} (under {u.parent or 'the root unit ' + str(u.root_id)})"
                                                + (f": {u.description}" if u.description else "") for u in d.units),
            ("units",), members=True),
        Row("unit owners", f"{_UNITS}.owners", lambda d: tuple(f"{u.name}: {g}" for u in d.units for g in u.owners),
            members=True, privilege=_widens(OWNER_PRIVILEGE)),
        Row("profiles allowed", f"{_UNITS}.projectProfiles",
            lambda d: tuple(f"{u.name}: {p}" for u in d.units for p in u.profiles), members=True,
            privilege=_widens("projects in the unit may be created from this profile")),
        Row("project creators", f"{_UNITS}.projectCreators", _creators, members=True,
            privilege=_widens(CREATOR_PRIVILEGE)),
        Row("project owner overrides", f"{_UNITS}.projectOwnersOverride",
            lambda d: _per_unit(d, OVERRIDE_PROJECT_OWNERS), members=True, privilege=_widens(OVERRIDE_PRIVILEGE)),
        Row("project member pool", f"{_UNITS}.projectCreators|{_UNITS}.projectOwnersOverride|{_TEAM_STUDIO}.members",
            lambda d: _per_unit(d, MEMBER_POOL), members=True, privilege=_widens(POOL_PRIVILEGE)),
        Row("project profiles", _PROFILES, lambda d: tuple(_profile(p) for p in d.profiles), ("profiles",),
            members=True, privilege=_widens("a project created from it gets these environments")),
        Row("projects", f"{_TEAM_STUDIO}.domain|{_TEAM_STUDIO}.domainUnit|{_TEAM_STUDIO}.project|"
            f"{_TEAM_STUDIO}.projectProfile", _projects, ("projects",), members=True),
        Row("project owners", f"{_TEAM_STUDIO}.owners",
            lambda d: tuple(f"{p.name}: {g}" for p in d.projects for g in p.owners), members=True,
            privilege=_widens(PROJECT_OWNER_PRIVILEGE)),
        Row("project members", f"{_TEAM_STUDIO}.members",
            lambda d: tuple(f"{p.name}: {g}" for p in d.projects for g in p.members), members=True,
            privilege=_widens(PROJECT_MEMBER_PRIVILEGE)),
    ),
    added=_added,
)


def studio_lines(plan: Plan) -> list[str]:
    """``explain``'s Unified Studio section: each governed domain, unit by unit (nothing without the section)."""
    domains = studio_domains_of(plan)
    if not domains:
        return []
    out = ["", "Unified Studio delegation (unifiedStudio; HPG-U001 to HPG-U004 hold it):"]
    for d in domains.values():
        out.append(f"  domain {d.id} ({d.account}/{d.region}):")
        for u in d.units:
            out.append(f"    unit {u.name} (under {u.parent or 'the root unit'}): owners "
                       f"{', '.join(u.owners) or 'none'}; profiles {', '.join(u.profiles) or 'none'}; creators "
                       f"{', '.join(u.grantees(CREATE_PROJECT)) or 'none'}; owner overrides "
                       f"{', '.join(u.grantees(OVERRIDE_PROJECT_OWNERS)) or 'none'}")
        out += [f"    profile {_profile(p)}" for p in d.profiles]
        out += [f"    project {p.name}: team {p.team}, unit {p.unit}, profile {p.profile}; owners "
                f"{', '.join(p.owners) or 'none'}; members {', '.join(p.members) or 'none'}" for p in d.projects]
    return out
