"""The governance spec: one frozen pydantic model per concept (see docs/architecture.md).

The concepts live in their own modules (accounts, cluster, scheduler, teams,
deployment); this module holds the whole spec and re-exports them, so
``hyperpod_gov.spec.models`` stays the one import path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from pydantic import Field, PrivateAttr, field_validator

from ._base import SpecModel, check_label, spec_error
from .acknowledgements import Acknowledgement
from .accounts import Account, Accounts, ConsumerAccount
from .cluster import ADDON_VERSION, AddonVersions, Cluster, HelmChart, HelmSource, InstanceGroup, Vpc
from .contract import UnifiedStudio
from .tags import MAX_SPEC_TAGS, check_tags
from .deployment import DEFAULT_TEAM_STACKS, Deployment, Pipeline
from .environments import Environment
from .monitoring import AlarmOverrides, AlarmThresholds, Monitoring
from .scheduler import PriorityClass, Scheduler
from .instance_types import InstanceTypeFacts, InstanceTypeRef
from .teams import (
    KMS_KEY_ARN,
    Access,
    Contract,
    EgressRule,
    QuotaEntry,
    Grants,
    S3Access,
    SharedPool,
    Sharing,
    TargetRole,
    TeamStorage,
    Team,
    WorkloadIdentity,
)
from .unified_studio import UnifiedStudioSection
from .types import (
    DEFAULT_BORROW_LIMIT_PERCENT,
    MAX_NAME,
    MAX_PREFIX,
    MIN_KUBERNETES,
    AccountId,
    AdminCidr,
    IamPrincipal,
    InstanceTypeName,
    Port,
    Region,
)

__all__ = [
    "Acknowledgement", "ADDON_VERSION", "AlarmOverrides", "AlarmThresholds", "Monitoring", "DEFAULT_BORROW_LIMIT_PERCENT", "DEFAULT_TEAM_STACKS", "KMS_KEY_ARN", "MAX_NAME", "MAX_PREFIX",
    "MIN_KUBERNETES", "Access", "Account", "AccountId", "Accounts", "AddonVersions", "AdminCidr", "Cluster",
    "ConsumerAccount", "Contract", "Deployment", "EgressRule", "Environment", "GovernanceSpec", "HelmChart", "HelmSource",
    "IamPrincipal", "InstanceGroup", "InstanceTypeName", "Pipeline", "Port", "PriorityClass", "QuotaEntry", "Region",
    "Grants", "S3Access", "TeamStorage", "Scheduler", "UnifiedStudio", "UnifiedStudioSection", "SharedPool", "Sharing", "TargetRole", "Team", "Vpc", "WorkloadIdentity",
]


class GovernanceSpec(SpecModel):
    """The whole governance spec of one shared HyperPod cluster."""

    # The folder of the file load_spec read it from (relative paths of the spec); None for a spec built in Python.
    _source_dir: Optional[Path] = PrivateAttr(default=None)

    name: str = Field(description=f"DNS-1123 label, at most {MAX_PREFIX} characters; prefixes AWS resource names.")
    accounts: Accounts = Field(description="The capacity account and the consumer accounts.")
    cluster: Cluster = Field(description="The HyperPod cluster and its EKS cluster.")
    scheduler: Scheduler = Field(default_factory=Scheduler, description="Scheduling and sharing.")
    instance_types: dict[InstanceTypeRef, InstanceTypeFacts] = Field(
        default_factory=dict,
        description="Facts of instance types the catalog does not know yet, by name, e.g. {ml.example.48xlarge: "
        "{accelerators: 8, acceleratorKind: nvidia.com/gpu, vcpu: 192, memoryGib: 2048}}; the spec warns that the "
        "catalog lacks each (default: none).",
    )
    teams: tuple[Team, ...] = Field(default=(), description="The tenants.")
    shared_pool: Optional[SharedPool] = Field(default=None, description="Optional pool of unallocated capacity.")
    unified_studio: Optional[UnifiedStudioSection] = Field(
        default=None, description="Unified Studio governance in code: domain units, project profiles and the "
        "policy grants that delegate project creation and ownership, in existing domains (default: none; "
        "docs/unified-studio.md).",
    )
    deployment: Deployment = Field(default_factory=Deployment, description="Stack layout and delivery.")
    monitoring: Monitoring = Field(
        default_factory=Monitoring,
        description="Dashboards and alarms with owners: thresholds, the platform topic's email, team dashboards.",
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="Tags on every AWS resource of every stack, for cost allocation, e.g. {acme:cost-center: "
        "ml-platform}; a team's own tags override them on its resources; keys under hyperpod-gov: and aws: are "
        "refused (hyperpod-gov's own tags stay as they are) (default: none).",
    )
    environments: tuple[Environment, ...] = Field(
        default=(),
        description="Deployments of this spec in order, e.g. [{name: staging, accounts: {capacity: {id: "
        "'222222222222'}}}, {name: production}]: each is the base spec with its accounts and overrides merged on, "
        "named <name>-<env>, validated as a whole; the pipeline deploys them in this order with a check and an "
        "approval between them (default: none, the spec is deployed as it is).",
    )
    acknowledgements: tuple[Acknowledgement, ...] = Field(
        default=(),
        description="Warnings accepted by rule id with a written reason, e.g. [{id: HPG-C001, reason: 'team "
        "retires on 2027-01-31', path: 'teams[2]'}]; they are not printed and do not fail --strict. Errors cannot "
        "be acknowledged (default: none).",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="spec name", max_len=MAX_PREFIX)

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: dict[str, str]) -> dict[str, str]:
        return check_tags(v, limit=MAX_SPEC_TAGS)

    @field_validator("environments")
    @classmethod
    def _environments(cls, v: tuple[Environment, ...]) -> tuple[Environment, ...]:
        names = [e.name for e in v]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise spec_error(f"names {', '.join(twice)} more than once", "give every environment its own name")
        return v
