"""The AWS accounts a spec deploys to: the capacity account and the consumer accounts."""

from __future__ import annotations

from pydantic import Field, field_validator

from ._base import SpecModel, check_label
from .types import MAX_NAME, AccountId, Region


class Account(SpecModel):
    """The capacity account: where the cluster, its accelerators and its governance live."""

    id: AccountId = Field(description="12-digit AWS account id (quote it in YAML).")
    region: Region = Field(description="AWS region code, e.g. us-east-1.")


class ConsumerAccount(Account):
    """An account whose roles tenant workloads assume through EKS Pod Identity."""

    name: str = Field(description="Short DNS-1123 name of the account, used in stack names.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="consumer account name", max_len=MAX_NAME)


class Accounts(SpecModel):
    """The AWS accounts the spec deploys to."""

    capacity: Account = Field(description="The account and region that hold the HyperPod cluster.")
    consumers: tuple[ConsumerAccount, ...] = Field(
        default=(),
        description="Accounts holding data that workloads reach cross-account (default: none).",
    )
    trusted: tuple[AccountId, ...] = Field(
        default=(),
        description="Account ids whose IAM principals may be cluster admins, viewers or submitters besides the "
        "capacity account's, and whose IAM users (long-term access keys) may be (list the capacity account "
        "itself to allow its users). Default: none; only roles of the capacity account, because whoever "
        "administers another account decides who may assume its roles.",
    )
