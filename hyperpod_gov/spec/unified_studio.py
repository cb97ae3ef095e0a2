"""Unified Studio governance in code (top-level ``unifiedStudio``): the domain units of an existing domain, the
project profiles projects may be created from, and the authorization policies that delegate project creation and
ownership to groups (issue 59, "Delegation in code").

The shapes follow CloudFormation's ``AWS::DataZone::DomainUnit``, ``ProjectProfile``, ``PolicyGrant``, ``Owner``,
``Project`` and ``ProjectMembership`` (cfn-lint's bundled resource schemas): names match their patterns, and only
members those schemas have are modelled.
"""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from ._base import SpecModel, check_plain_text, spec_error
from .types import AccountId, Region

# The patterns of the DataZone schemas, matched whole and ASCII-only.
DOMAIN_ID = re.compile(r"\Adzd[_-][a-zA-Z0-9_-]{1,36}\Z", re.ASCII)
DOMAIN_UNIT_ID = re.compile(r"\A[a-z0-9_-]{1,256}\Z", re.ASCII)
BLUEPRINT_ID = re.compile(r"\A[a-zA-Z0-9_-]{1,36}\Z", re.ASCII)
PARAMETER_NAME = re.compile(r"\A[a-zA-Z_][a-zA-Z0-9_]*\Z", re.ASCII)
# DomainUnit.Name (128), ProjectProfile.Name, Project.Name and EnvironmentConfiguration.Name (64): ^[\w -]+$.
ENTITY_NAME = re.compile(r"\A[A-Za-z0-9_ -]+\Z", re.ASCII)
MAX_UNIT_NAME = 128
MAX_PROFILE_NAME = 64
MAX_DESCRIPTION = 2048

# The CloudFormation types the section emits; a region whose CloudFormation lacks one is refused (HPG-U004).
DELEGATION_TYPES: tuple[str, ...] = (
    "AWS::DataZone::DomainUnit", "AWS::DataZone::Owner", "AWS::DataZone::PolicyGrant",
    "AWS::DataZone::Project", "AWS::DataZone::ProjectMembership", "AWS::DataZone::ProjectProfile",
)
# Regions whose CloudFormation declares every type of DELEGATION_TYPES and AWS::DataZone::Connection (cfn-lint's
# provider schemas; tests/spec/test_unified_studio.py keeps this list in step with them).
DELEGATION_REGIONS: frozenset[str] = frozenset({
    "ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-1", "ap-southeast-2", "ca-central-1",
    "eu-central-1", "eu-isoe-west-1", "eu-north-1", "eu-west-1", "eu-west-2", "eu-west-3", "eusc-de-east-1",
    "sa-east-1", "us-east-1", "us-east-2", "us-iso-east-1", "us-iso-west-1", "us-isob-east-1", "us-isob-west-1",
    "us-isof-east-1", "us-isof-south-1", "us-west-2",
})


def check_entity_name(value: str, *, what: str, max_len: int) -> str:
    if not ENTITY_NAME.match(value) or len(value) > max_len:
        raise spec_error(f"is not a {what} DataZone accepts",
                         f"use at most {max_len} letters, digits, '_', '-' and spaces (e.g. 'ml-research')")
    return value


def check_description(value: Optional[str]) -> Optional[str]:
    if value is not None and len(value) > MAX_DESCRIPTION:
        raise spec_error(f"is {len(value)} characters long", f"use at most {MAX_DESCRIPTION} characters")
    return value if value is None else check_plain_text(value)


class Principals(SpecModel):
    """Who a grant, an owner or a membership goes to: IAM Identity Center groups, as DataZone names them."""

    groups: tuple[str, ...] = Field(
        default=(), description="IAM Identity Center groups as DataZone's GroupIdentifier takes them: the "
        "group's id (the safe value; the schemas also accept a name), e.g. [ml-platform-admins]. Default: none.",
    )
    users: tuple[str, ...] = Field(
        default=(), description="Single users: always refused (HPG-U002), creators, owners and members are "
        "groups, so that people come and go in the identity provider, not in the spec. Default: none.",
    )

    @field_validator("groups", "users")
    @classmethod
    def _names(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for name in v:
            if not name.strip() or len(name) > 1024:
                raise spec_error("names an empty or over-long group", "write the group's name or id")
            check_plain_text(name)
        twice = sorted({n for n in v if v.count(n) > 1})
        if twice:
            raise spec_error(f"names {', '.join(twice)} more than once", "name each group once")
        return v

    @property
    def is_empty(self) -> bool:
        return not self.groups and not self.users


class ParameterOverride(SpecModel):
    """One parameter of an environment configuration (EnvironmentConfigurationParameter)."""

    name: str = Field(description="The blueprint's parameter name, e.g. maxEbsVolumeSize.")
    value: str = Field(description="Its value in projects created from the profile.")
    editable: bool = Field(default=False, description="Whether a project's owner may change it (IsEditable). "
                           "Default: false, the profile decides.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not PARAMETER_NAME.match(v):
            raise spec_error("is not a blueprint parameter name", "use letters, digits and '_', starting with a "
                             "letter or '_' (as the blueprint names it)")
        return v


class EnvironmentConfiguration(SpecModel):
    """One blueprint a project profile enables (``ProjectProfile.EnvironmentConfigurations[]``)."""

    name: str = Field(description="The configuration's name, e.g. Tooling.")
    blueprint_id: str = Field(description="EnvironmentBlueprintId: the id of an enabled blueprint of the domain "
                              "(the Tooling blueprint's id, from the domain's blueprints page).")
    description: Optional[str] = Field(default=None, description="In words (default: none).")
    deployment_mode: Optional[Literal["ON_CREATE", "ON_DEMAND"]] = Field(
        default=None, description="ON_CREATE: deployed with the project; ON_DEMAND: when a member asks. Default: "
        "the service's.",
    )
    deployment_order: Optional[int] = Field(default=None, ge=0, le=16,
                                            description="0..16, lower first (default: the service's).")
    account: Optional[AccountId] = Field(default=None, description="Account the environment is deployed to "
                                         "(default: the domain's).")
    region: Optional[Region] = Field(default=None, description="Region it is deployed to (default: the domain's).")
    parameter_overrides: tuple[ParameterOverride, ...] = Field(
        default=(), description="Blueprint parameters set by the profile (default: none).")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_entity_name(v, what="configuration name", max_len=MAX_PROFILE_NAME)

    @field_validator("blueprint_id")
    @classmethod
    def _blueprint(cls, v: str) -> str:
        if not BLUEPRINT_ID.match(v):
            raise spec_error("is not an environment blueprint id", "copy the id from the domain's blueprints "
                             "page (at most 36 letters, digits, '_' and '-')")
        return v

    @field_validator("description")
    @classmethod
    def _description(cls, v: Optional[str]) -> Optional[str]:
        return check_description(v)


class ProjectProfile(SpecModel):
    """A project profile (``AWS::DataZone::ProjectProfile``): what a project created from it gets."""

    name: str = Field(description="The profile's name in the domain, e.g. hyperpod-training.")
    description: Optional[str] = Field(default=None, description="What projects of this profile are for.")
    environment_configurations: tuple[EnvironmentConfiguration, ...] = Field(
        default=(), description="The blueprints the profile enables, as the service names them (default: none).")
    use_default_configurations: Optional[bool] = Field(
        default=None, description="UseDefaultConfigurations: the domain's default blueprints too (set at "
        "creation; default: the service's).",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_entity_name(v, what="project profile name", max_len=MAX_PROFILE_NAME)

    @field_validator("description")
    @classmethod
    def _description(cls, v: Optional[str]) -> Optional[str]:
        return check_description(v)


class DomainUnit(SpecModel):
    """A domain unit the spec creates (``AWS::DataZone::DomainUnit``) and who may do what in it."""

    name: str = Field(description="The unit's name, e.g. ml-research.")
    description: Optional[str] = Field(default=None, description="What the unit holds (default: none).")
    parent: Optional[str] = Field(default=None, description="Name of another unit of this domain it is created "
                                  "under. Default: the domain's root unit (rootDomainUnitId).")
    owners: Principals = Field(default_factory=Principals, description="Groups that own the unit "
                               "(AWS::DataZone::Owner). Default: none besides the deploying role.")
    project_profiles: tuple[str, ...] = Field(
        default=(), description="Names of the domain's projectProfiles projects in this unit may be created from "
        "(default: none, nobody may create a project here).",
    )
    project_creators: Principals = Field(
        default_factory=Principals, description="Groups that may create projects in the unit from its profiles "
        "(a CREATE_PROJECT_FROM_PROJECT_PROFILE policy grant). Default: none.",
    )
    project_owners_override: Principals = Field(
        default_factory=Principals, description="Groups that may take over the ownership of the unit's projects "
        "(an OVERRIDE_PROJECT_OWNERS policy grant). Default: none.",
    )

    @field_validator("name", "parent")
    @classmethod
    def _name(cls, v: Optional[str]) -> Optional[str]:
        return v if v is None else check_entity_name(v, what="domain unit name", max_len=MAX_UNIT_NAME)

    @field_validator("description")
    @classmethod
    def _description(cls, v: Optional[str]) -> Optional[str]:
        return check_description(v)


class Domain(SpecModel):
    """An existing Unified Studio domain whose units, profiles and grants the spec manages."""

    id: str = Field(description="The domain's id, e.g. dzd_4p9n6sw4qt9xgn.")
    account: AccountId = Field(description="The domain's account: the studio stack deploys there.")
    region: Region = Field(description="The domain's region.")
    root_domain_unit_id: Optional[str] = Field(
        default=None, description="Id of the domain's root unit (from the domain's page): the parent of every unit "
        "without `parent`. Required when such a unit exists.",
    )
    domain_units: tuple[DomainUnit, ...] = Field(default=(), description="Units the spec creates (default: none).")
    project_profiles: tuple[ProjectProfile, ...] = Field(
        default=(), description="Project profiles the spec creates (default: none).")

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not DOMAIN_ID.match(v):
            raise spec_error("is not a Unified Studio domain id", "copy it from the domain, e.g. dzd_4p9n6sw4qt9xgn")
        return v

    @field_validator("root_domain_unit_id")
    @classmethod
    def _root(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not DOMAIN_UNIT_ID.match(v):
            raise spec_error("is not a domain unit id", "copy the root unit's id from the domain's page, e.g. "
                             "4p9n6sw4qt9xgn")
        return v

    @field_validator("domain_units", "project_profiles")
    @classmethod
    def _unique(cls, v: tuple) -> tuple:
        names = [x.name for x in v]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise spec_error(f"names {', '.join(twice)} more than once", "give each its own name")
        return v

    @model_validator(mode="after")
    def _root_needed(self) -> "Domain":
        if self.root_domain_unit_id is None and any(u.parent is None for u in self.domain_units):
            raise spec_error("has a unit without a parent but no rootDomainUnitId",
                             "add rootDomainUnitId (the root unit's id, from the domain's page), or give each "
                             "unit a parent")
        return self

    def unit(self, name: str) -> Optional[DomainUnit]:
        return next((u for u in self.domain_units if u.name == name), None)

    def profile(self, name: str) -> Optional[ProjectProfile]:
        return next((p for p in self.project_profiles if p.name == name), None)


class UnifiedStudioSection(SpecModel):
    """Top-level ``unifiedStudio``: Unified Studio governance the spec manages in code."""

    domains: tuple[Domain, ...] = Field(default=(), description="Domains whose units, project profiles and "
                                        "authorization policies the spec manages (default: none).")

    @field_validator("domains")
    @classmethod
    def _unique(cls, v: tuple[Domain, ...]) -> tuple[Domain, ...]:
        ids = [d.id for d in v]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise spec_error(f"declares domain {', '.join(twice)} more than once", "declare each domain once")
        return v

    def domain(self, domain_id: str) -> Optional[Domain]:
        return next((d for d in self.domains if d.id == domain_id), None)
