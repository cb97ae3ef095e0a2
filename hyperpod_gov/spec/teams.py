"""The tenants: quotas, sharing, people, workload identities, egress and the connection contract."""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from .contract import Contract
from .slurm import TeamSlurm
from .tags import MAX_TEAM_TAGS, check_tags
from .monitoring import AlarmOverrides
from ._base import IAM_ROLE_ARN, SpecModel, check_ipv4_cidr, check_label, is_link_local, spec_error
from .allocation import BorrowLimit, Partitions, QuotaEntry, Sharing  # noqa: F401 (re-exported)
from .types import MAX_NAME, IamPrincipal, Port


# A registry host (with an optional port), then repository path segments, ending at a '/' boundary.
IMAGE_PREFIX = re.compile(r"\A[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?/([a-z0-9]+([._-][a-z0-9]+)*/)*\Z",
                          re.ASCII)


class Access(SpecModel):
    """Who may see the team's work and who may act on it."""

    viewers: tuple[IamPrincipal, ...] = Field(
        default=(), description="IAM role/user ARNs that may view the team's work."
    )
    submitters: tuple[IamPrincipal, ...] = Field(
        default=(), description="IAM role/user ARNs that may submit, change and delete the team's jobs (and view)."
    )
    pod_exec: bool = Field(
        default=False,
        description="Submitters may `kubectl exec` into the team's pods (pods/exec). Default: false; exec runs "
        "arbitrary commands with the workload's credentials, which is acting, not viewing.",
    )
    write_secrets: bool = Field(
        default=False,
        description="Submitters may read, create, change and delete Secrets in the team namespace. Default: false "
        "(Secrets come from the platform; with this a submitter reads every Secret of the namespace and can mint "
        "a token for any of its service accounts).",
    )
    write_config_maps: bool = Field(
        default=False,
        description="Submitters may read, create, change and delete ConfigMaps in the team namespace. Default: "
        "false (job configuration travels in the job; viewers never read ConfigMaps).",
    )
    tools_policy: bool = Field(
        default=True,
        description="Give the team's viewers and submitters the IAM rights `aws eks update-kubeconfig` and the "
        "HyperPod CLI need (an IAM managed policy attached to those in the capacity account; for those of other "
        "accounts the document is written to iam/<team>.json in the synth output). Default: true; false when the "
        "roles get these rights another way.",
    )


# IAM reads '*' and '?' in a Resource or StringLike value as wildcards and '${...}' as a policy variable: a prefix
# holding one would match keys the spec does not name.
_IAM_SPECIAL = ("*", "?", "$")


def folder_prefix(v: str, *, example: str) -> str:
    """A key or name prefix as a folder: it ends at a '/' (``data`` becomes ``data/``), so that the grant
    ``data/*`` never also matches ``data-other/``. Normalised rather than refused: ``data`` names the folder
    ``data/`` in every S3 console and CLI, and the normalised value is what ``explain`` and ``diff`` show."""
    if not v.isascii() or not v.isprintable():
        raise spec_error("holds a character that is not printable ASCII", f"write the literal prefix, e.g. {example}")
    if any(c in v for c in _IAM_SPECIAL):
        raise spec_error("may not contain '*', '?' or '$' (IAM reads them as wildcards and policy variables)",
                         f"write the literal prefix, e.g. {example}")
    if v.startswith("/") or "//" in v:
        fixed = re.sub("/+", "/", v).lstrip("/")
        raise spec_error("starts with '/' or holds an empty segment ('//')",
                         f"write {fixed!r}" if fixed else f"write the prefix, e.g. {example}")
    return v if v == "" or v.endswith("/") else v + "/"


class S3Access(SpecModel):
    """Access to one S3 prefix."""

    bucket: str = Field(description="Bucket name.")
    prefix: str = Field(
        default="",
        description="Key prefix, a folder: datasets/ (default: the whole bucket). A prefix ends at a '/': "
        "'datasets' is read as 'datasets/', so it never also matches 'datasets-other/'.",
    )
    access: Literal["read", "read-write"] = Field(default="read", description="default: read.")

    @field_validator("bucket")
    @classmethod
    def _bucket(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", v, re.ASCII):
            raise spec_error("is not an S3 bucket name", "use 3-63 lowercase letters, digits, '.' and '-'")
        return v

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, v: str) -> str:
        return folder_prefix(v, example="datasets/")


KMS_KEY_ARN = re.compile(r"\Aarn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[0-9a-f-]{36}\Z", re.ASCII)


def _kms_keys(v: tuple[str, ...]) -> tuple[str, ...]:
    for arn in v:
        if not KMS_KEY_ARN.match(arn):
            raise spec_error(f"{arn!r} is not a KMS key ARN", "use arn:aws:kms:REGION:ACCOUNT:key/KEY-ID")
    return v


# ECR repository names (the CreateRepository pattern): lowercase segments joined by '/', 2..256 characters.
ECR_REPOSITORY = re.compile(r"\A(?=.{2,256}\Z)(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*\Z",
                            re.ASCII)
# Secrets Manager names: letters, digits and /_+=.@- (the service's rule); a prefix, so at most 512 minus the suffix.
SECRET_PREFIX = re.compile(r"\A[A-Za-z0-9/_+=.@-]{1,504}\Z", re.ASCII)


class Grants(SpecModel):
    """Data the source role itself reaches, in the capacity account (no target role needed)."""

    s3: tuple[S3Access, ...] = Field(default=(), description="S3 prefixes the source role may read or write.")
    kms_key_arns: tuple[str, ...] = Field(
        default=(),
        description="KMS key ARNs the source role may decrypt with (and generate data keys with, when an S3 grant "
        "is read-write): the keys of the buckets and secrets named here.",
    )
    secrets_prefix: Optional[str] = Field(
        default=None,
        description="secretsmanager:GetSecretValue on the capacity account's secrets whose names start with this "
        "folder, e.g. team-a/ ('team-a' is read as 'team-a/'). Default: none.",
    )
    ecr_repositories: tuple[str, ...] = Field(
        default=(),
        description="ECR repositories of the capacity account and region the pods may pull from with their own "
        "credentials (names, e.g. team-a/trainer). Default: none.",
    )

    @field_validator("kms_key_arns")
    @classmethod
    def _keys(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _kms_keys(v)

    @field_validator("secrets_prefix")
    @classmethod
    def _secrets(cls, v: Optional[str]) -> Optional[str]:
        if v is None:
            return v
        if v == "":
            raise spec_error("is empty, which would grant every secret of the account", "name a folder, e.g. team-a/")
        v = folder_prefix(v, example="team-a/")
        if not SECRET_PREFIX.match(v):
            raise spec_error("is not a Secrets Manager name prefix", "use letters, digits and /_+=.@-, e.g. team-a/")
        return v

    @field_validator("ecr_repositories")
    @classmethod
    def _repositories(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for name in v:
            if not ECR_REPOSITORY.match(name):
                raise spec_error(f"{name!r} is not an ECR repository name",
                                 "use lowercase segments joined by '/', e.g. team-a/trainer")
        return v

    @property
    def empty(self) -> bool:
        return not (self.s3 or self.kms_key_arns or self.secrets_prefix or self.ecr_repositories)


class TeamStorage(SpecModel):
    """Data storage hyperpod-gov creates for the team."""

    bucket: Optional[Literal["create"]] = Field(
        default=None,
        description="create: a bucket of the team's own (its own KMS key, TLS only, versioned, access-logged, "
        "public access blocked) whose bucket and key policies admit only the team's workload identities (read-write) "
        "and submitters (read-write). Default: none.",
    )
    viewers_read: bool = Field(
        default=False,
        description="The team's viewers may also read the bucket. Default: false; viewing the team's jobs is not "
        "reading its data.",
    )


class TargetRole(SpecModel):
    """A role the library creates in a consumer account for one workload identity."""

    account: str = Field(description="Name of a declared consumer account (accounts.consumers[].name).")
    name: str = Field(description="Role name in that account (IAM role name rules, at most 64 characters).")
    s3: tuple[S3Access, ...] = Field(default=(), description="S3 prefixes the role may read or write.")
    kms_keys: tuple[str, ...] = Field(default=(), description="KMS key ARNs the role may decrypt with.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.fullmatch(r"[\w+=,.@-]{1,64}", v, re.ASCII):
            raise spec_error("is not an IAM role name", "use at most 64 letters, digits and +=,.@_-")
        return v

    @field_validator("kms_keys")
    @classmethod
    def _keys(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _kms_keys(v)


class WorkloadIdentity(SpecModel):
    """A Kubernetes service account whose pods get AWS credentials through EKS Pod Identity."""

    service_account: str = Field(description="ServiceAccount name in the team namespace (DNS-1123 label).")
    target_role_arn: Optional[str] = Field(
        default=None,
        description="An existing role in a declared consumer account to assume cross-account (default: none).",
    )
    target_role: Optional[TargetRole] = Field(
        default=None,
        description="A role for the library to create in a consumer account, with only the data access named here "
        "(instead of targetRoleArn).",
    )
    grants: Grants = Field(
        default_factory=Grants,
        description="Data in the capacity account the source role reaches itself: S3 prefixes, KMS keys, a "
        "secrets prefix, ECR repositories (default: none; the team bucket, when created, is added).",
    )
    allow_same_account: bool = Field(
        default=False,
        description="targetRoleArn may name a role in the capacity account (default: false; use grants for data "
        "in the capacity account, where the role's policies are the spec's).",
    )
    allow_other_team_role: bool = Field(
        default=False,
        description="targetRoleArn may name a role hyperpod-gov creates for another team's identity (default: "
        "false; the team would reach the other team's data).",
    )

    @field_validator("service_account")
    @classmethod
    def _sa(cls, v: str) -> str:
        return check_label(v, what="service account name", max_len=63)

    @field_validator("target_role_arn")
    @classmethod
    def _role(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not IAM_ROLE_ARN.match(v):
            raise spec_error("is not an IAM role ARN", "use arn:aws:iam::ACCOUNT:role/NAME")
        return v

    @model_validator(mode="after")
    def _one_target(self) -> "WorkloadIdentity":
        if self.target_role_arn and self.target_role:
            raise spec_error(
                "names both targetRoleArn and targetRole",
                "use targetRoleArn for an existing role, or targetRole for one the library creates, not both",
            )
        return self

    @property
    def target_account(self) -> Optional[str]:
        """Account id of an existing target role (``targetRoleArn``)."""
        m = IAM_ROLE_ARN.match(self.target_role_arn or "")
        return m.group(1) if m else None


class EgressRule(SpecModel):
    """An extra egress allow on top of the team's default-deny policy."""

    cidr: str = Field(description="Destination IPv4 CIDR.")
    ports: tuple[Port, ...] = Field(min_length=1, description="Destination ports (1..65535).")
    protocol: Literal["TCP", "UDP"] = Field(default="TCP", description="Protocol (default: TCP).")

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        check_ipv4_cidr(v, allow_any=True)
        if is_link_local(v):
            raise spec_error(
                "is link-local space (169.254.0.0/16: the instance metadata service and the node's agents), "
                "from where a pod reads the node role's credentials",
                "remove the rule: the Pod Identity agent is already allowed, and the metadata service never is",
            )
        return v


class Team(SpecModel):
    """A tenant of the cluster: its capacity, sharing policy, people and workloads."""

    name: str = Field(description="DNS-1123 label, at most 40 characters; namespace hyperpod-ns-<name>.")
    fair_share_weight: int = Field(
        default=100, ge=0, le=100, description="0..100; share of idle capacity (default: 100)."
    )
    quota: tuple[QuotaEntry, ...] = Field(
        default=(), max_length=15, description="Capacity the team owns, per instance type (at most 15 entries)."
    )
    sharing: Sharing = Field(
        default_factory=Sharing, description="Lending and borrowing (default: LendAndBorrow, 50%)."
    )
    active: bool = Field(
        default=True,
        description="false pauses the team (ComputeQuota ActivationState: Disabled; in kueue mode its ClusterQueue "
        "is stopped with stopPolicy: Hold): nothing new of the team is admitted, work already admitted keeps "
        "running until it ends; its namespace, access and objects stay (default: true).",
    )
    preempt_team_tasks: Literal["LowerPriority", "Never"] = Field(
        default="LowerPriority",
        description="default: LowerPriority, a team's own urgent work may preempt its own lower-priority work.",
    )
    access: Access = Field(default_factory=Access, description="Who may view and who may submit (default: nobody).")
    workload_identities: tuple[WorkloadIdentity, ...] = Field(
        default=(), description="Service accounts with AWS credentials (default: none)."
    )
    egress: tuple[EgressRule, ...] = Field(default=(), description="Extra egress allows (default: none).")
    allow_internet_egress: bool = Field(
        default=False,
        description="Allow egress rules that together reach the internet (0.0.0.0/0, or a /8 of public "
        "addresses or more). Default: false, and such rules are rejected: a team's pods should reach the networks they "
        "need, not everything.",
    )
    pod_security: Literal["baseline", "restricted"] = Field(
        default="baseline",
        description="Pod Security level enforced on the team's pods (both modes): baseline (default: no "
        "privileged, host namespaces, hostPath or host ports; IPC_LOCK and a memory-backed /dev/shm allowed for "
        "EFA and NCCL) or restricted (baseline plus non-root, no privilege escalation, all capabilities dropped "
        "but NET_BIND_SERVICE and IPC_LOCK, RuntimeDefault seccomp).",
    )
    contract: Optional[Contract] = Field(default=None, description="Owners and review date (recommended).")
    # Per-team workload limits (docs/workloads.md): the priority classes and image registries a team may use.
    priority_classes: Optional[tuple[str, ...]] = Field(
        default=None,
        description="Names of scheduler.priorityClasses the team may label its work with "
        "(kueue.x-k8s.io/priority-class) or name as a pod's priorityClassName; admission refuses any other, "
        "system-node-critical and system-cluster-critical among them. Default: every class of "
        "scheduler.priorityClasses. [] allows none.",
    )
    images: tuple[str, ...] = Field(
        default=(),
        description="Registry prefixes (ending in '/') that every image of the team's containers, init "
        "containers and ephemeral containers must start with, matched as written (e.g. "
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/, public.ecr.aws/docker/library/). Default: none, any "
        "image.",
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="Tags on the team's resources (its quota, roles, alarms, topics), for cost allocation; they "
        "override the top-level tags of the same key (default: none).",
    )
    retiring: bool = Field(
        default=False,
        description="The connection is being handed over: the team's principals (viewers, submitters, the Unified "
        "Studio project role) lose cluster access and its workload identities are removed, while its namespace and "
        "quota remain. Default: false. Removing the team afterwards is the revocation.",
    )
    alarms: Optional[AlarmOverrides] = Field(
        default=None, description="This team's alarm thresholds, key by key (default: monitoring.alarms)."
    )
    storage: TeamStorage = Field(
        default_factory=TeamStorage, description="Storage created for the team (default: none)."
    )
    slurm: Optional[TeamSlurm] = Field(
        default=None,
        description="With cluster.orchestrator: slurm: the team's POSIX identity, {users, group, dataPath} "
        "(default: no users, group <team>, directory /fsx/<team>). Refused on an EKS cluster.",
    )

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: dict[str, str]) -> dict[str, str]:
        return check_tags(v, limit=MAX_TEAM_TAGS)

    @field_validator("images")
    @classmethod
    def _images(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for prefix in v:
            if not IMAGE_PREFIX.match(prefix):
                fixed = prefix.strip().lower().rstrip("/") + "/"
                example = fixed if IMAGE_PREFIX.match(fixed) else "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
                raise spec_error(
                    f"{prefix!r} is not a registry prefix: a registry host, optionally repository path "
                    "segments, ending in '/' (without the '/', 'registry.example.com' also matches "
                    "'registry.example.com.attacker.net/...')",
                    f"write it as e.g. '{example}'",
                )
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="team name", max_len=MAX_NAME)

    @property
    def namespace(self) -> str:
        return f"hyperpod-ns-{self.name}"


class SharedPool(SpecModel):
    """A pseudo-team that holds the capacity no team owns: capacity minus the sum of quotas."""

    name: str = Field(default="shared", description="Team name of the pool (default: shared).")
    strategy: Literal["Lend", "LendAndBorrow"] = Field(
        default="Lend", description="default: Lend, the pool lends everything and never borrows."
    )
    fair_share_weight: int = Field(default=0, ge=0, le=100, description="default: 0, the pool borrows last.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="shared pool name", max_len=MAX_NAME)
