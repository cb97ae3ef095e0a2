"""A team's bucket (``teams[].storage.bucket: create``): its own KMS key, TLS only, versioned, access-logged,
public access blocked, and bucket and key policies that admit only the team's principals."""

from __future__ import annotations

from aws_cdk import Aws, Duration, RemovalPolicy, aws_iam as iam, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from ..plan.data import TeamStoragePlan
from ._nag import acknowledge

# Object and listing actions the policies govern (bucket configuration stays with the account's administrators,
# so that a wrong policy can be repaired: s3:PutBucketPolicy is never denied).
S3_READ_ACTIONS = ("s3:GetObject*", "s3:ListBucket*", "s3:ListMultipartUploadParts")
S3_WRITE_ACTIONS = ("s3:AbortMultipartUpload", "s3:DeleteObject*", "s3:PutObject*", "s3:ReplicateObject",
                    "s3:RestoreObject")
# What the key administrators may do: everything but use the key (no Decrypt, Encrypt, GenerateDataKey*,
# ReEncrypt*), so that an IAM policy of the account grants no one the team's data. No kms:CreateGrant either (issue
# 55): a grant gives its grantee Decrypt without a change to the key policy, where neither drift nor diff sees it, and
# nothing here uses grants (S3 calls KMS with the caller's own rights). kms:PutKeyPolicy stays: CloudFormation
# rewrites the key policy whenever the team's people change, and KMS refuses a policy that would not let the caller
# put one again (the key policy lockout safety check); a rewrite shows as drift of the stack and in CloudTrail.
KEY_ADMIN_ACTIONS = ("kms:CancelKeyDeletion", "kms:CreateAlias", "kms:Delete*", "kms:Describe*", "kms:Disable*",
                     "kms:Enable*", "kms:Get*", "kms:List*", "kms:PutKeyPolicy", "kms:Revoke*",
                     "kms:ScheduleKeyDeletion", "kms:TagResource", "kms:UntagResource", "kms:Update*")
KEY_WRITE_ACTIONS = ("kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:GenerateDataKey*", "kms:ReEncrypt*")
KEY_READ_ACTIONS = ("kms:Decrypt", "kms:DescribeKey")


def _not_in(arns: tuple[str, ...]) -> dict | None:
    """The deny's condition: every principal but these (no condition: nobody is admitted)."""
    return {"ArnNotEquals": {"aws:PrincipalArn": list(arns)}} if arns else None


class TeamStorage(Construct):
    """The team bucket, its key and its access-log bucket.

    Bucket policy: TLS only; reads denied to every principal but the team's source roles, submitters and (with
    ``viewersRead``) viewers; writes denied to every principal but the source roles and submitters; the submitters
    and viewers allowed by ARN (they may be in trusted accounts), the source roles through their own policies.
    Key policy: the account administers the key but cannot use it; the source roles use it through IAM (their
    policies and ``aws:PrincipalArn``), the submitters and viewers by ARN; every use only through S3.
    """

    def __init__(self, scope: Construct, id: str, *, storage: TeamStoragePlan) -> None:
        super().__init__(scope, id)
        via_s3 = {"kms:ViaService": f"s3.{Aws.REGION}.amazonaws.com"}
        key_policy = iam.PolicyDocument(statements=[
            iam.PolicyStatement(sid="KeyAdministration", principals=[iam.AccountRootPrincipal()],
                                actions=list(KEY_ADMIN_ACTIONS), resources=["*"]),
        ])
        if storage.roles:
            key_policy.add_statements(iam.PolicyStatement(
                sid="TeamRolesUseKey", principals=[iam.AccountRootPrincipal()], actions=list(KEY_WRITE_ACTIONS),
                resources=["*"],
                conditions={"ArnEquals": {"aws:PrincipalArn": list(storage.roles)}, "StringEquals": via_s3}))
        if storage.submitters:
            key_policy.add_statements(iam.PolicyStatement(
                sid="SubmittersUseKey", principals=[iam.ArnPrincipal(a) for a in storage.submitters],
                actions=list(KEY_WRITE_ACTIONS), resources=["*"], conditions={"StringEquals": via_s3}))
        if storage.readers:
            key_policy.add_statements(iam.PolicyStatement(
                sid="ViewersDecrypt", principals=[iam.ArnPrincipal(a) for a in storage.readers],
                actions=list(KEY_READ_ACTIONS), resources=["*"], conditions={"StringEquals": via_s3}))
        self.key = kms.Key(
            self, "Key", description=f"Team {storage.team}: its bucket {storage.bucket}", enable_key_rotation=True,
            policy=key_policy, removal_policy=RemovalPolicy.RETAIN,
        )
        self.access_logs = s3.Bucket(
            self, "AccessLogs", encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL, enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED, removal_policy=RemovalPolicy.RETAIN,
            versioned=True,  # a deleted or overwritten log object stays recoverable for the year logs are kept
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365),
                                              noncurrent_version_expiration=Duration.days(365))],
        )
        acknowledge(self.access_logs, [("AwsSolutions-S1", f"The access-log bucket of team {storage.team}'s bucket; "
                                        "logging it into itself would loop.")])
        self.bucket = s3.Bucket(
            self, "Resource", bucket_name=storage.bucket, encryption=s3.BucketEncryption.KMS, encryption_key=self.key,
            bucket_key_enabled=True, block_public_access=s3.BlockPublicAccess.BLOCK_ALL, enforce_ssl=True,
            versioned=True, object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=self.access_logs, server_access_logs_prefix=f"{storage.team}/",
            removal_policy=RemovalPolicy.RETAIN,
        )
        objects = self.bucket.arn_for_objects("*")
        both = [self.bucket.bucket_arn, objects]
        self.bucket.add_to_resource_policy(iam.PolicyStatement(
            sid="DenyReadOutsideTeam", effect=iam.Effect.DENY, principals=[iam.AnyPrincipal()],
            actions=list(S3_READ_ACTIONS), resources=both, conditions=_not_in(storage.admitted)))
        self.bucket.add_to_resource_policy(iam.PolicyStatement(
            sid="DenyWriteOutsideTeam", effect=iam.Effect.DENY, principals=[iam.AnyPrincipal()],
            actions=list(S3_WRITE_ACTIONS), resources=both, conditions=_not_in(storage.writers)))
        if storage.submitters:
            self.bucket.add_to_resource_policy(iam.PolicyStatement(
                sid="SubmittersReadWrite", principals=[iam.ArnPrincipal(a) for a in storage.submitters],
                actions=list(S3_READ_ACTIONS + S3_WRITE_ACTIONS), resources=both))
        if storage.readers:
            self.bucket.add_to_resource_policy(iam.PolicyStatement(
                sid="ViewersRead", principals=[iam.ArnPrincipal(a) for a in storage.readers],
                actions=list(S3_READ_ACTIONS), resources=both))
