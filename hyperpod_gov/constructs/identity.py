"""Workload identity: a Pod Identity source role per service account and, in a consumer account,
the target role it may assume, trusting exactly that source role, namespace and service account."""

from __future__ import annotations

from aws_cdk import Aws, aws_eks as eks_l1, aws_iam as iam
from constructs import Construct

from ..plan import names
from ..plan.identity import IdentityPlan
from ..plan.tables import POD_IDENTITY, cfn_kwargs
from ._nag import acknowledge, wildcard
from .observability import pod_identity_trust

ASSUME = ["sts:AssumeRole", "sts:TagSession"]
# Session tag EKS Pod Identity sets besides names.SESSION_TAG_*: the cluster's ARN, unique across regions.
SESSION_TAG_CLUSTER_ARN = "eks-cluster-arn"
S3_READ = ["s3:GetObject"]
S3_WRITE = ["s3:AbortMultipartUpload", "s3:DeleteObject", "s3:PutObject"]


class WorkloadIdentityRole(Construct):
    """Source role trusting ``pods.eks.amazonaws.com`` and its Pod Identity association.

    For a cross-account identity the association sets ``targetRoleArn`` and the
    source role may assume (and tag a session of) that one role and nothing else.
    """

    def __init__(self, scope: Construct, id: str, *, cluster_name: str, identity: IdentityPlan, account: str,
                 cluster_arn: str) -> None:
        """``account``, ``cluster_arn``: the capacity account and EKS cluster ARN (plan.cluster.eks_arn); the
        source role trusts Pod Identity of that one cluster only."""
        super().__init__(scope, id)
        self.role = iam.Role(
            self,
            "SourceRole",
            role_name=identity.source_role_name,
            assumed_by=pod_identity_trust(account=account, cluster_arn=cluster_arn),
            description=f"Pod Identity of {identity.namespace}/{identity.service_account}",
        )
        target = identity.target_role_arn
        if target:
            self.role.add_to_policy(iam.PolicyStatement(sid="AssumeTargetRole", actions=ASSUME, resources=[target]))
        # The table's roleArn is the role's planned ARN; the association takes the deploy-time reference, which
        # makes CloudFormation create the role first.
        props = cfn_kwargs(POD_IDENTITY, identity, {"clusterName": cluster_name})
        props["role_arn"] = self.role.role_arn
        self.association = eks_l1.CfnPodIdentityAssociation(self, "Association", **props)


class TargetRole(Construct):
    """Role in a consumer account, assumable only by one workload's source role, with only its data access."""

    def __init__(self, scope: Construct, id: str, *, identity: IdentityPlan, capacity_account: str,
                 eks_cluster_name: str, eks_cluster_arn: str, description: str) -> None:
        super().__init__(scope, id)
        target = identity.created_target
        if target is None:
            raise ValueError(f"{identity.namespace}/{identity.service_account} has no role to create")
        source_arn = f"arn:{Aws.PARTITION}:iam::{capacity_account}:role/{identity.source_role_name}"
        trust = iam.AccountPrincipal(capacity_account).with_conditions({
            "StringEquals": {
                "aws:PrincipalArn": source_arn,
                f"aws:RequestTag/{names.SESSION_TAG_CLUSTER}": eks_cluster_name,
                # The name alone matches a cluster of the same name in another region of the capacity account.
                f"aws:RequestTag/{SESSION_TAG_CLUSTER_ARN}": eks_cluster_arn,
                f"aws:RequestTag/{names.SESSION_TAG_NAMESPACE}": identity.namespace,
                f"aws:RequestTag/{names.SESSION_TAG_SERVICE_ACCOUNT}": identity.service_account,
            }
        }).with_session_tags()
        self.role = iam.Role(
            self, "Resource", role_name=target.name, assumed_by=trust, description=description,
        )
        findings = []
        writes = False
        for access in sorted(target.s3, key=lambda a: (a.bucket, a.prefix, a.access)):
            objects = f"arn:{Aws.PARTITION}:s3:::{access.bucket}/{access.prefix}*"
            actions = S3_READ + (S3_WRITE if access.access == "read-write" else [])
            writes = writes or access.access == "read-write"
            self.role.add_to_policy(iam.PolicyStatement(actions=sorted(actions), resources=[objects]))
            self.role.add_to_policy(iam.PolicyStatement(
                actions=["s3:ListBucket"], resources=[f"arn:{Aws.PARTITION}:s3:::{access.bucket}"],
                conditions={"StringLike": {"s3:prefix": [f"{access.prefix}*"]}},
            ))
            findings.append((
                wildcard("Resource", f"arn:<AWS::Partition>:s3:::{access.bucket}/{access.prefix}*"),
                f"Object keys under s3://{access.bucket}/{access.prefix} are not known in advance; the grant is "
                f"limited to that prefix ({access.access}) as the spec names it.",
            ))
        if target.kms_keys:
            actions = ["kms:Decrypt"] + (["kms:GenerateDataKey"] if writes else [])
            self.role.add_to_policy(iam.PolicyStatement(actions=actions, resources=sorted(target.kms_keys)))
        if findings:
            acknowledge(self.role, findings)
