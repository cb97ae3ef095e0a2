"""What a team's workloads reach: workload identities (EKS Pod Identity), the data their source role reaches in the
capacity account (S3 prefixes, KMS keys, a secrets prefix, ECR repositories), the roles created for them in consumer
accounts, and the storage created for the team."""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from ._base import IAM_ROLE_ARN, SpecModel, check_label, spec_error


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
        check_label(v, what="service account name", max_len=63)
        if v == "default":
            raise spec_error(
                "is the namespace's default service account, which every pod of the team that names none runs "
                "as: all of them would get the role",
                "name a service account of its own (e.g. trainer) and set serviceAccountName on the pods that "
                "need the role",
            )
        return v

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
