"""The connection contract: who answers for a team's use of the cluster, through which Unified Studio project,
under which expectations, and until when it stands without review."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Annotated, Iterator, Literal, Optional

from pydantic import AfterValidator, Field, field_validator, model_validator

from ._base import EMAIL, IAM_ROLE_ARN, SpecModel, check_ipv4_cidr, check_plain_text, spec_error
from .errors import NO_VALUE, SpecIssue
from .network import PREFIX_LIST_ID, SECURITY_GROUP_ID
from .types import AccountId, Region
from .unified_studio import MAX_PROFILE_NAME, Principals, check_entity_name
from .workloads import APPROVED_WORKLOADS

if TYPE_CHECKING:
    from .models import GovernanceSpec

# The patterns of AWS::DataZone::Connection (cfn-lint's bundled resource schema), matched whole and ASCII-only.
DOMAIN_ID = re.compile(r"\Adzd[_-][a-zA-Z0-9_-]{1,36}\Z", re.ASCII)
DOMAIN_UNIT_ID = re.compile(r"\A[a-z0-9_-]{1,256}\Z", re.ASCII)
PROJECT_ID = re.compile(r"\A[a-zA-Z0-9_-]{1,36}\Z", re.ASCII)

# One line of free text that the record page, `review` and `diff` print (no control characters, no markup).
PlainText = Annotated[str, AfterValidator(check_plain_text)]

# teams[].contract.isolation: how hard a boundary the team's work needs (HPG-C006, HPG-C007).
Isolation = Literal["shared", "dedicated-nodes", "dedicated-cluster"]
ISOLATION_ORDER: dict[str, int] = {"shared": 0, "dedicated-nodes": 1, "dedicated-cluster": 2}  # looser to harder
# teams[].contract.networkPath values that name no cluster.apiAccess entry (HPG-C005).
CONSOLE_ONLY = "console-only"
LOGIN_NODES = "login-nodes"

# Fields a contract may leave out unless the spec is loaded in strict mode (`--strict`).
EXPECTATIONS = ("exception_owner", "monitoring", "support", "retirement")


class UnifiedStudio(SpecModel):
    """The SageMaker Unified Studio project that connects to the cluster (an ``AWS::DataZone::Connection``).

    DataZone generates these identifiers when the domain and the project are created: copy them from the
    project's overview page (domain id, project id) and from its project details (the project role ARN).
    Or name the project the spec creates (``domain``, ``domainUnit``, ``project``): the domain is one of the
    top-level ``unifiedStudio.domains``, the unit one of its ``domainUnits`` (docs/unified-studio.md).
    """

    domain_id: Optional[str] = Field(
        default=None, description="Unified Studio (DataZone) domain id, e.g. dzd_4p9n6sw4qt9xgn (with projectId: "
        "an existing project). Set from `domain` when the spec creates the project.",
    )
    domain: Optional[str] = Field(
        default=None, description="Id of a domain of the top-level unifiedStudio.domains: the spec creates the "
        "project (`project`) in it. Default: none, projectId names an existing project.",
    )
    domain_unit: Optional[str] = Field(
        default=None, description="Name of one of that domain's domainUnits: the created project lives in it "
        "(HPG-U001). Required with `domain`.",
    )
    project: Optional[str] = Field(
        default=None, description="Name of the project the spec creates (AWS::DataZone::Project), from "
        "projectProfile. Required with `domain`.",
    )
    project_profile: Optional[str] = Field(
        default=None, description="Name of the profile the project is created from: one the unit allows "
        "(HPG-U001). Default: the unit's profile, when it allows exactly one.",
    )
    members: Principals = Field(
        default_factory=Principals, description="Groups made contributors of the created project "
        "(AWS::DataZone::ProjectMembership, PROJECT_CONTRIBUTOR). Default: none.",
    )
    owners: Principals = Field(
        default_factory=Principals, description="Groups made owners of the created project (PROJECT_OWNER). "
        "Default: none besides the deploying role.",
    )
    domain_unit_id: Optional[str] = Field(
        default=None,
        description="Domain unit that owns the project (recorded in the contract; required in strict mode).",
    )
    project_id: Optional[str] = Field(
        default=None, description="Id of an existing project, e.g. 5b3jcjsy4ar7zr; the connection is created in "
        "it. Leave it out when the spec creates the project (`project`).",
    )
    project_role_arn: str = Field(
        description="The project's IAM role (arn:aws:iam::ACCOUNT:role/datazone_usr_role_...): it gets exactly the "
        "team's submitter access (an EKS access entry onto the team's submitters and viewers groups), nothing more. "
        "A project the spec creates gets it as its ProjectExecutionRole.",
    )
    access_role_arn: Optional[str] = Field(
        default=None, description="Role in the capacity account that Unified Studio assumes to reach the cluster "
        "from the domain's account (the connection's AwsLocation.AccessRole). Default: none, Unified Studio uses "
        "the project's own environment.",
    )
    account: Optional[AccountId] = Field(
        default=None, description="Account of the domain, where the connection is created (default: the project "
        "role's account).",
    )
    region: Optional[Region] = Field(
        default=None, description="Region of the domain (default: the capacity region).",
    )

    @model_validator(mode="before")
    @classmethod
    def _by_name(cls, data: object) -> object:
        """The by-name form's ``domain`` is the domain's id: it fills ``domainId`` for every reader of the id."""
        if isinstance(data, dict) and data.get("domain") is not None and "domainId" not in data \
                and "domain_id" not in data:
            return {**data, "domainId": data["domain"]}
        return data

    @model_validator(mode="after")
    def _one_form(self) -> "UnifiedStudio":
        if self.domain is None:
            if self.domain_id is None or self.project_id is None:
                raise spec_error("names no project", "write domainId and projectId of an existing project, or "
                                 "domain, domainUnit and project to have the spec create it")
            extra = [k for k, v in (("domainUnit", self.domain_unit), ("project", self.project),
                                    ("projectProfile", self.project_profile)) if v is not None]
            extra += [k for k, v in (("members", self.members), ("owners", self.owners)) if not v.is_empty]
            if extra:
                raise spec_error(f"sets {', '.join(extra)} without domain", "add domain (a domain of the top-level "
                                 "unifiedStudio.domains) to have the spec create the project, or leave them out")
            return self
        if self.domain_id != self.domain or self.project_id is not None or self.domain_unit_id is not None:
            raise spec_error("mixes the created project's domain with domainId, domainUnitId or projectId",
                             "write either domainId and projectId (an existing project) or domain, domainUnit and "
                             "project (a project the spec creates)")
        if self.domain_unit is None or self.project is None:
            raise spec_error("has domain but no domainUnit or project", "name the unit of the domain the project "
                             "lives in and the project's name, e.g. {domain: dzd_4p9n6sw4qt9xgn, domainUnit: "
                             "ml-research, project: research}")
        return self

    @field_validator("domain_unit", "project_profile")
    @classmethod
    def _unit_name(cls, v: Optional[str]) -> Optional[str]:
        return v if v is None else check_entity_name(v, what="name", max_len=128)

    @field_validator("project")
    @classmethod
    def _project_name(cls, v: Optional[str]) -> Optional[str]:
        return v if v is None else check_entity_name(v, what="project name", max_len=MAX_PROFILE_NAME)

    @property
    def creates_project(self) -> bool:
        """Whether the spec creates the project (the by-name form)."""
        return self.domain is not None

    @property
    def project_label(self) -> str:
        """The project in words: its id, or the name of the project the spec creates and its unit."""
        if self.project_id is not None:
            return self.project_id
        return f"{self.project} (created by the spec in domain unit {self.domain_unit})"

    @field_validator("domain_id", "domain")
    @classmethod
    def _domain(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not DOMAIN_ID.match(v):
            raise spec_error("is not a Unified Studio domain id", "copy it from the domain, e.g. dzd_4p9n6sw4qt9xgn")
        return v

    @field_validator("domain_unit_id")
    @classmethod
    def _unit(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not DOMAIN_UNIT_ID.match(v):
            raise spec_error("is not a domain unit id", "use lowercase letters, digits, '_' and '-' as DataZone "
                             "shows it, e.g. 4p9n6sw4qt9xgn")
        return v

    @field_validator("project_id")
    @classmethod
    def _project(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not PROJECT_ID.match(v):
            raise spec_error("is not a Unified Studio project id", "copy it from the project's overview, e.g. "
                             "5b3jcjsy4ar7zr (at most 36 letters, digits, '_' and '-')")
        return v

    @field_validator("project_role_arn", "access_role_arn")
    @classmethod
    def _role(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not IAM_ROLE_ARN.match(v):
            raise spec_error("is not an IAM role ARN", "write arn:aws:iam::ACCOUNT:role/NAME (the project role: "
                             "copy it from the project details, arn:aws:iam::ACCOUNT:role/datazone_usr_role_...)")
        return v

    @property
    def role_account(self) -> str:
        m = IAM_ROLE_ARN.match(self.project_role_arn)
        assert m is not None  # validated above
        return m.group(1)


class Contract(SpecModel):
    """The connection contract: who answers for the team's use of the cluster, and under which expectations."""

    business_owner: str = Field(description="Email of the business owner.")
    operations_owner: str = Field(description="Email of the person who runs the team's workloads.")
    cost_owner: str = Field(description="Email of the person who pays.")
    data_classification: Literal["public", "internal", "confidential", "restricted"] = Field(
        description="Most sensitive data the team's workloads handle."
    )
    approved_workloads: tuple[PlainText, ...] = Field(
        default=(), description="Kinds of work approved, each one of training, fine-tuning, inference, interactive "
        "(HyperPod spaces), experimentation (the same as interactive) or ray (KubeRay); they decide which "
        "Kubernetes kinds the team may create (docs/workloads.md). Default: none, which admits training work.",
    )
    review_by: dt.date = Field(description="Date by which the contract must be reviewed (YYYY-MM-DD).")
    exception_owner: Optional[str] = Field(
        default=None, description="Email of who decides exceptions to the scheduling policy (quota, priority, "
        "preemption). Default: none named; required in strict mode.",
    )
    unified_studio: Optional[UnifiedStudio] = Field(
        default=None, description="The Unified Studio project connected to the cluster (default: none; the team "
        "reaches the cluster through its access entries only).",
    )
    monitoring: Optional[str] = Field(
        default=None, description="Monitoring expectations, e.g. 'alarms answered within 1 business day'. "
        "Required in strict mode.",
    )
    support: Optional[str] = Field(
        default=None, description="Support expectations: who the team calls and when. Required in strict mode.",
    )
    retirement: Optional[str] = Field(
        default=None, description="Retirement expectations: what happens to the team's data, jobs and "
        "checkpoints when the connection ends. Required in strict mode.",
    )
    isolation: Isolation = Field(
        default="shared", description="The isolation the team's work needs. shared (default): its namespace, "
        "quota and policies, on nodes other teams use too. dedicated-nodes: every quota of the team on instance "
        "groups dedicatedTo it, and no borrowing (HPG-C006). dedicated-cluster: a cluster of its own, refused on a "
        "cluster another team uses (HPG-C007): a namespace is not a hard boundary.",
    )
    network_path: Optional[str] = Field(
        default=None, description="How the team's members reach the cluster: the cluster.apiAccess entry they "
        "come from (its cidr, security group id or prefix list id; on a public endpoint also an adminCidrs entry), "
        "console-only (the SageMaker console and Unified Studio only), or login-nodes on a Slurm cluster (SSM "
        "sessions to its login nodes). Default: not stated; the contract record flags it (HPG-C005 checks it).",
    )

    @field_validator("business_owner", "operations_owner", "cost_owner", "exception_owner")
    @classmethod
    def _email(cls, v: Optional[str]) -> Optional[str]:
        if v is not None:
            check_plain_text(v)
        if v is not None and not EMAIL.fullmatch(v):
            raise spec_error("is not an email address", "use an address such as owner@example.com")
        return v

    @field_validator("approved_workloads")
    @classmethod
    def _approved(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [w for w in v if w not in APPROVED_WORKLOADS]
        if unknown:
            raise spec_error(f"names {', '.join(repr(w) for w in unknown)}, which no workload kind is approved by",
                             f"use words of: {', '.join(APPROVED_WORKLOADS)} (e.g. [training, fine-tuning])")
        return v

    @field_validator("network_path")
    @classmethod
    def _network_path(cls, v: Optional[str]) -> Optional[str]:
        if v is None or v in (CONSOLE_ONLY, LOGIN_NODES) or SECURITY_GROUP_ID.match(v) or PREFIX_LIST_ID.match(v):
            return v
        if re.fullmatch(r"[0-9./]+", v, re.ASCII):
            return check_ipv4_cidr(v, allow_any=False)
        raise spec_error(
            f"is none of {CONSOLE_ONLY}, {LOGIN_NODES} or the cidr, security group id or prefix list id of a "
            "cluster.apiAccess entry",
            "name the entry the team's members come from (e.g. 10.20.0.0/16, sg-0123456789abcdef0), or write "
            f"{CONSOLE_ONLY}",
        )

    @property
    def states_isolation(self) -> bool:
        """Whether the spec states ``isolation`` (the record shows a default as such)."""
        return "isolation" in self.model_fields_set

    @field_validator("monitoring", "support", "retirement")
    @classmethod
    def _text(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not v.strip():
            raise spec_error("is empty", "write the expectation in a sentence, or leave the key out")
        return v if v is None else check_plain_text(v, multiline=True)


_HINTS = {
    "exceptionOwner": "who decides exceptions to the scheduling policy (an email)",
    "monitoring": "who watches the team's alarms and how fast they answer (a sentence)",
    "support": "who the team calls, and when (a sentence)",
    "retirement": "what happens to the team's jobs, data and checkpoints at the end (a sentence)",
    "approvedWorkloads": "the approved kinds of work, e.g. [training, fine-tuning]",
    "unifiedStudio.domainUnitId": "the domain unit that owns the project (from the domain's page)",
}


def _camel(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(p.title() for p in rest)


def contracts_are_complete(spec: "GovernanceSpec", today: dt.date) -> Iterator[SpecIssue]:
    """Contract fields that may be left out are reported (errors with ``--strict``); Unified Studio projects
    must be reachable and one domain lives in one account and region."""
    capacity = spec.accounts.capacity
    trusted = set(spec.accounts.trusted)
    domains: dict[str, tuple[str, str, str]] = {}  # domain id -> (account, region, first path)
    for ti, team in enumerate(spec.teams):
        c = team.contract
        if c is None:
            continue
        path = f"teams[{ti}].contract"
        missing = [_camel(f) for f in EXPECTATIONS if getattr(c, f) is None]
        if not c.approved_workloads:
            missing.append("approvedWorkloads")
        if c.unified_studio is not None and c.unified_studio.domain_unit_id is None \
                and not c.unified_studio.creates_project:
            missing.append("unifiedStudio.domainUnitId")
        if missing:
            yield SpecIssue(
                path, "leaves out " + ", ".join(missing) + ": a reviewer cannot approve what the contract does not "
                "say (required with --strict)", NO_VALUE,
                "add " + "; ".join(f"{key}: {_HINTS[key]}" for key in missing),
                severity="warning",
            )
        us = c.unified_studio
        if us is None:
            continue
        account = us.role_account
        if account != capacity.id and account not in trusted:
            yield SpecIssue(
                f"{path}.unifiedStudio.projectRoleArn", f"is in account {account}, not the capacity account "
                f"{capacity.id}: that account's administrators decide who may assume the project role and so who "
                "reaches the cluster", us.project_role_arn,
                f"list {account} under accounts.trusted if you trust whoever administers the domain's account",
            )
        access = IAM_ROLE_ARN.match(us.access_role_arn or "")
        if access is not None and access.group(1) != capacity.id:
            yield SpecIssue(
                f"{path}.unifiedStudio.accessRoleArn", f"is in account {access.group(1)}, not the capacity account "
                f"{capacity.id}, where the cluster it reaches runs", us.access_role_arn,
                f"use a role of account {capacity.id} that the domain's account may assume",
            )
        where = (us.account or account, us.region or capacity.region, f"{path}.unifiedStudio")
        first = domains.setdefault(us.domain_id, where)
        if first[:2] != where[:2]:
            yield SpecIssue(
                f"{path}.unifiedStudio", f"puts domain {us.domain_id} in account {where[0]}, region {where[1]}; "
                f"{first[2]} puts it in account {first[0]}, region {first[1]}", us.domain_id,
                "a domain lives in one account and region: give both teams the same account and region",
            )
