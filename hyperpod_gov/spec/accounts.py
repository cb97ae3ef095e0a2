"""The AWS accounts a spec deploys to: the capacity account and the consumer accounts."""

from __future__ import annotations

import re
from typing import Optional

from pydantic import Field, field_validator

from ._base import SpecModel, check_label, spec_error
from .types import MAX_NAME, AccountId, Region

# AWS Organizations' pattern for an organization id (Organization.Id in the Organizations API reference).
ORGANIZATION_ID = re.compile(r"\Ao-[a-z0-9]{10,32}\Z", re.ASCII)


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
    organization_id: Optional[str] = Field(
        default=None,
        description="AWS Organizations id (o-xxxxxxxxxx) of the spec's accounts. The VPC endpoints then admit "
        "principals and resources of every account of the organization (aws:PrincipalOrgID, aws:ResourceOrgID) "
        "besides the accounts named here. Default: none, the endpoints admit only the capacity, consumer and "
        "trusted accounts.",
    )

    @field_validator("organization_id")
    @classmethod
    def _organization(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not ORGANIZATION_ID.match(v):
            raise spec_error("is not an AWS Organizations id",
                             "copy it from the Organizations console or `aws organizations describe-organization` "
                             "(o- and 10 to 32 lowercase letters or digits, e.g. o-a1b2c3d4e5)")
        return v
