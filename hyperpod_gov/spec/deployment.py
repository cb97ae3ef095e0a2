"""How the generated resources are split into stacks and shipped."""

from __future__ import annotations

import re
from typing import Optional

from pydantic import Field, field_validator

from ._base import SpecModel, spec_error
from .types import AccountId, Region


DEFAULT_TEAM_STACKS = 16


class Pipeline(SpecModel):
    """The CDK pipeline that ships the spec (values may also come from CDK context)."""

    repository: Optional[str] = Field(default=None, description="owner/repo of the spec repository "
                                      "(default: CDK context pipelineRepository).")
    branch: str = Field(default="main", description="Branch that deploys (default: main).")
    connection_arn: Optional[str] = Field(default=None, description="CodeConnections ARN for the repository "
                                          "(default: CDK context pipelineConnectionArn).")
    account: Optional[AccountId] = Field(default=None,
                                         description="Account of the pipeline (default: the capacity account).")
    region: Optional[Region] = Field(default=None, description="Region of the pipeline (default: the capacity region).")

    @field_validator("repository")
    @classmethod
    def _repo(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not re.fullmatch(r"[\w.-]+/[\w.-]+", v, re.ASCII):
            raise spec_error("is not owner/repo", "write the repository as owner/name, e.g. acme/ml-governance")
        return v

    @field_validator("connection_arn")
    @classmethod
    def _connection(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not re.fullmatch(
            r"arn:aws[a-z-]*:(codeconnections|codestar-connections):[a-z0-9-]+:[0-9]{12}:connection/[\w-]+", v, re.ASCII
        ):
            raise spec_error("is not a CodeConnections ARN",
                             "use arn:aws:codeconnections:REGION:ACCOUNT:connection/ID")
        return v


class Deployment(SpecModel):
    """How the generated resources are split into stacks and shipped."""

    team_stacks: int = Field(
        default=DEFAULT_TEAM_STACKS,
        ge=1,
        le=100,
        description="Stacks that per-team resources are spread over by a hash of the team name (default: 16, "
        "enough for 300+ teams under CloudFormation's 500-resource limit). Changing it moves teams between "
        "stacks: set it once.",
    )
    access_stacks: int = Field(
        default=1,
        ge=1,
        le=20,
        description="Stacks that EKS access entries (one per IAM principal) are spread over by a hash of the "
        "principal ARN (default: 1, up to 450 principals). Changing it moves access entries: set it once.",
    )
    pipeline: Optional[Pipeline] = Field(default=None, description="The multi-account CDK pipeline (optional).")
