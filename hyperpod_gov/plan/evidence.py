"""The evidence bucket of a spec (``monitoring.evidence``): who writes, who reads, how long records are locked, and
where the bucket's name is published. Pure (no CDK)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..spec.monitoring import Evidence

# The role CDK Pipelines deploys every stack of the capacity account through (`cdk bootstrap`, qualifier hnb659fds,
# the default): the pipeline's post-deploy step assumes it to upload the record of what it deployed.
DEPLOY_ROLE = "arn:{partition}:iam::{account}:role/cdk-hnb659fds-deploy-role-{account}-{region}"
BUCKET_OUTPUT = "EvidenceBucketName"  # the CfnOutput naming the bucket (the pipeline step and the contract record)


@dataclass(frozen=True)
class EvidencePlan:
    """The evidence bucket: Object Lock in governance mode for ``retention_days``, written (s3:PutObject only) by
    ``writer``, read by ``readers``; its name is output ``output`` of stack ``stack``."""

    retention_days: int
    writer: str
    readers: tuple[str, ...]  # sorted
    stack: str
    output: str = BUCKET_OUTPUT

    @property
    def where(self) -> str:
        """Where a reader finds the bucket, in words."""
        return (f"S3 bucket named by output {self.output} of stack {self.stack} (Object Lock, governance mode, "
                f"{self.retention_days} days)")


def deploy_role(*, partition: str, account: str, region: str) -> str:
    return DEPLOY_ROLE.format(partition=partition, account=account, region=region)


def evidence_plan(evidence: Optional[Evidence], *, partition: str, account: str, region: str,
                  stack: Optional[str]) -> Optional[EvidencePlan]:
    """The bucket ``monitoring.evidence`` asks for, in ``stack`` (the monitoring stack, or a Slurm spec's capacity
    stack); None when the spec asks for none."""
    if evidence is None or stack is None:
        return None
    return EvidencePlan(retention_days=evidence.retention_days,
                        writer=deploy_role(partition=partition, account=account, region=region),
                        readers=tuple(sorted(evidence.auditors)), stack=stack)


def evidence_of(plan: Any) -> Optional[EvidencePlan]:
    """``evidence_plan`` of a plan: its capacity account and region, in its monitoring stack (a Slurm spec, which
    has none: its capacity stack)."""
    return evidence_plan(plan.alerting.evidence, partition=plan.partition, account=plan.account, region=plan.region,
                         stack=plan.stacks.monitoring or plan.stacks.capacity)
