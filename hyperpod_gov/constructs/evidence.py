"""The evidence bucket (``monitoring.evidence.bucket: create``): S3 Object Lock in governance mode with a default
retention, versioned, its own rotating KMS key, TLS only, access-logged, public access blocked; written
(s3:PutObject only) by the pipeline's deploy role, read by the named auditors."""

from __future__ import annotations

from typing import Optional

from aws_cdk import Aws, CfnOutput, Duration, RemovalPolicy, Stack, aws_iam as iam, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from ..plan.evidence import EvidencePlan
from ..plan.fields import emit, leaf_members, member_value
from ..plan.tables_evidence import EVIDENCE_BUCKET
from ._nag import acknowledge
from .team_storage import KEY_ADMIN_ACTIONS

WRITE_ACTIONS = ("s3:PutObject",)  # no delete, no overwrite of a locked version, no retention change
READ_ACTIONS = ("s3:GetObject", "s3:GetObjectRetention", "s3:GetObjectVersion", "s3:ListBucket",
                "s3:ListBucketVersions")
KEY_WRITE_ACTIONS = ("kms:GenerateDataKey",)  # S3 encrypts each object with a data key (with the bucket key: once)
KEY_READ_ACTIONS = ("kms:Decrypt",)


class EvidenceBucket(Construct):
    """The bucket (``bucket``, its primary child ``Resource``), its key and its access-log bucket.

    Bucket policy: TLS only; s3:PutObject for the writer and denied to every other principal; read and list for
    the readers. Key policy: the account administers the key but cannot use it; the writer may generate data keys
    and the readers decrypt, each only through S3.
    """

    def __init__(self, scope: Construct, id: str, *, evidence: EvidencePlan) -> None:
        super().__init__(scope, id)
        via_s3 = {"kms:ViaService": f"s3.{Aws.REGION}.amazonaws.com"}
        key_policy = iam.PolicyDocument(statements=[
            iam.PolicyStatement(sid="KeyAdministration", principals=[iam.AccountRootPrincipal()],
                                actions=list(KEY_ADMIN_ACTIONS), resources=["*"]),
            iam.PolicyStatement(sid="PipelineEncrypts", principals=[iam.ArnPrincipal(evidence.writer)],
                                actions=list(KEY_WRITE_ACTIONS), resources=["*"], conditions={"StringEquals": via_s3}),
        ])
        if evidence.readers:
            key_policy.add_statements(iam.PolicyStatement(
                sid="AuditorsDecrypt", principals=[iam.ArnPrincipal(a) for a in evidence.readers],
                actions=list(KEY_READ_ACTIONS), resources=["*"], conditions={"StringEquals": via_s3}))
        self.key = kms.Key(self, "Key", description="Encrypts the hyperpod-gov evidence records",
                           enable_key_rotation=True, policy=key_policy, removal_policy=RemovalPolicy.RETAIN)
        self.access_logs = s3.Bucket(
            self, "AccessLogs", encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL, enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED, removal_policy=RemovalPolicy.RETAIN,
            versioned=True,
            # the logs outlive the records they describe
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(evidence.retention_days + 30),
                                              noncurrent_version_expiration=Duration.days(evidence.retention_days
                                                                                          + 30))],
        )
        acknowledge(self.access_logs, [("AwsSolutions-S1", "The access-log bucket of the evidence bucket; logging "
                                        "it into itself would loop.")])
        self.bucket = s3.Bucket(
            self, "Resource", encryption=s3.BucketEncryption.KMS, encryption_key=self.key, bucket_key_enabled=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL, enforce_ssl=True, versioned=True,
            object_lock_enabled=True,
            object_lock_default_retention=s3.ObjectLockRetention.governance(Duration.days(evidence.retention_days)),
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED, server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="evidence/", removal_policy=RemovalPolicy.RETAIN,
        )
        # the retention and versioning members as the field table gives them (plan/tables_evidence.py)
        cfn: s3.CfnBucket = self.bucket.node.default_child  # type: ignore[assignment]
        for member in leaf_members(emit(EVIDENCE_BUCKET, evidence)):
            cfn.add_property_override(member, member_value(emit(EVIDENCE_BUCKET, evidence), member))
        objects = self.bucket.arn_for_objects("*")
        self.bucket.add_to_resource_policy(iam.PolicyStatement(
            sid="PipelineWrites", principals=[iam.ArnPrincipal(evidence.writer)], actions=list(WRITE_ACTIONS),
            resources=[objects]))
        self.bucket.add_to_resource_policy(iam.PolicyStatement(
            sid="DenyWriteButPipeline", effect=iam.Effect.DENY, principals=[iam.AnyPrincipal()],
            actions=list(WRITE_ACTIONS), resources=[objects],
            conditions={"ArnNotEquals": {"aws:PrincipalArn": [evidence.writer]}}))
        if evidence.readers:
            self.bucket.add_to_resource_policy(iam.PolicyStatement(
                sid="AuditorsRead", principals=[iam.ArnPrincipal(a) for a in evidence.readers],
                actions=list(READ_ACTIONS), resources=[self.bucket.bucket_arn, objects]))


def evidence_bucket(stack: Stack, evidence: Optional[EvidencePlan]) -> Optional[EvidenceBucket]:
    """The bucket in ``stack`` (construct ``Evidence``) and the stack's output naming it (``evidence.output``: the
    pipeline's post-deploy step reads it); None when the spec asks for none."""
    if evidence is None:
        return None
    made = EvidenceBucket(stack, "Evidence", evidence=evidence)
    CfnOutput(stack, evidence.output, value=made.bucket.bucket_name,
              description="The S3 bucket of the evidence records (hyperpod-gov evidence; docs/evidence.md)")
    return made
