"""Workload identity: an EKS Pod Identity source role per service account, cross-account if asked."""

from __future__ import annotations

from typing import Optional

from aws_cdk import aws_eks as eks_l1, aws_iam as iam
from constructs import Construct

from ..spec.models import WorkloadIdentity
from .observability import pod_identity_trust


class WorkloadIdentityRole(Construct):
    """Source role trusting ``pods.eks.amazonaws.com`` and its Pod Identity association.

    For a cross-account identity the association sets ``targetRoleArn`` and the
    source role may assume (and tag a session of) that one role and nothing else.
    """

    def __init__(self, scope: Construct, id: str, *, cluster_name: str, namespace: str,
                 identity: WorkloadIdentity) -> None:
        super().__init__(scope, id)
        self.role = iam.Role(
            self,
            "SourceRole",
            assumed_by=pod_identity_trust(),
            description=f"Pod Identity of {namespace}/{identity.service_account}",
        )
        self.target_role_arn: Optional[str] = identity.target_role_arn
        if self.target_role_arn:
            self.role.add_to_policy(
                iam.PolicyStatement(
                    sid="AssumeTargetRole",
                    actions=["sts:AssumeRole", "sts:TagSession"],
                    resources=[self.target_role_arn],
                )
            )
        self.association = eks_l1.CfnPodIdentityAssociation(
            self,
            "Association",
            cluster_name=cluster_name,
            namespace=namespace,
            service_account=identity.service_account,
            role_arn=self.role.role_arn,
            target_role_arn=self.target_role_arn,
        )
