"""cdk-nag acknowledgements: each names the exact finding and a reason specific to the resource.

cdk-nag reports one finding per wildcard or managed policy (``RuleId[FindingId]``);
acknowledging a whole rule would hide findings added later, so only exact
findings are acknowledged here.
"""

from __future__ import annotations

from typing import Sequence

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct


def managed_policy(name: str) -> str:
    """The AwsSolutions-IAM4 finding for an AWS-managed policy (``service-role/...`` included)."""
    return f"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/{name}]"


def wildcard(kind: str, value: str) -> str:
    """The AwsSolutions-IAM5 finding for a wildcard ``Action`` or ``Resource``."""
    return f"AwsSolutions-IAM5[{kind}::{value}]"


NAG_PACK = "AwsSolutions"


def _qualified(rule: str) -> str:
    """Validation ids are ``Plugin::Rule``; cdk-nag's plugin is named after its pack."""
    return f"{NAG_PACK}::{rule}" if rule.startswith(f"{NAG_PACK}-") else rule


def acknowledge(construct: IConstruct, findings: Sequence[tuple[str, str]]) -> None:
    """Acknowledge ``(finding, reason)`` pairs on ``construct`` and the resources below it."""
    Validations.of(construct).acknowledge(
        *(Acknowledgment(id=_qualified(rule), reason=reason) for rule, reason in findings)
    )
