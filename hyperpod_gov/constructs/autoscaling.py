"""The role HyperPod-managed Karpenter acts with (``cluster.autoScaling: karpenter``; the cluster's ``ClusterRole``).

AWS documents the role at
https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-autoscaling-iam.html: the service principal
``hyperpod.sagemaker.amazonaws.com`` assumes it; it may call ``sagemaker:BatchAddClusterNodes`` and
``sagemaker:BatchDeleteClusterNodes`` (the page: on ``arn:aws:sagemaker:*:*:cluster/*`` in the role's own account)
and, for encrypted volumes, ``kms:CreateGrant`` and ``kms:DescribeKey`` through SageMaker for AWS resources.

Narrower here, as nothing the page requires is lost: the node calls name this cluster's ARN only (a policy of its
own, attached once the cluster exists, as the ARN ends in an id the service assigns); the KMS statement is given
only where a group encrypts its volume with a key the spec names, on those keys; the trust carries the
confused-deputy conditions (this account, a HyperPod cluster of this region).
"""

from __future__ import annotations

from aws_cdk import Aws, aws_iam as iam
from constructs import Construct

from ..plan import ClusterPlan
from .execution_role import execution_trust_conditions

NODE_ACTIONS = ("sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes")
# What SageMaker asks KMS for on the autoscaler's behalf when it launches nodes with an encrypted volume (the page's
# kms:GrantOperations).
GRANT_OPERATIONS = ("CreateGrant", "Decrypt", "DescribeKey", "GenerateDataKeyWithoutPlaintext", "ReEncryptTo",
                    "ReEncryptFrom")


def _key_arn(key: str) -> str:
    """A volume key as an ARN (the spec takes ids, ARNs and aliases; an alias grants nothing, the key does)."""
    if key.startswith("arn:"):
        return key
    if key.startswith("alias/"):
        return f"arn:{Aws.PARTITION}:kms:{Aws.REGION}:{Aws.ACCOUNT_ID}:{key}"
    return f"arn:{Aws.PARTITION}:kms:{Aws.REGION}:{Aws.ACCOUNT_ID}:key/{key}"


class AutoscalingRole(Construct):
    """The ``ClusterRole`` HyperPod assumes to add and remove the cluster's nodes.

    ``role`` goes to the cluster; call :meth:`grant_cluster` with the cluster's ARN once it exists.
    """

    def __init__(self, scope: Construct, id: str, *, plan: ClusterPlan) -> None:
        super().__init__(scope, id)
        self.role = iam.Role(
            self, "Role",
            assumed_by=iam.ServicePrincipal("hyperpod.sagemaker.amazonaws.com",
                                            conditions=execution_trust_conditions()),
            description=f"HyperPod {plan.name}: managed Karpenter adds and removes the cluster's nodes",
        )
        keys = sorted({_key_arn(g.volume_kms_key_id) for g in plan.instance_groups if g.volume_kms_key_id})
        if keys:
            self.role.add_to_policy(iam.PolicyStatement(
                actions=["kms:CreateGrant", "kms:DescribeKey"], resources=keys,
                conditions={"StringLike": {"kms:ViaService": f"sagemaker.{Aws.REGION}.amazonaws.com"},
                            "Bool": {"kms:GrantIsForAWSResource": "true"},
                            "ForAllValues:StringEquals": {"kms:GrantOperations": list(GRANT_OPERATIONS)}}))

    def grant_cluster(self, cluster_arn: str) -> iam.Policy:
        """The node calls, on this cluster only: a policy of its own (the cluster needs the role first)."""
        policy = iam.Policy(self, "ClusterNodes", statements=[
            iam.PolicyStatement(actions=list(NODE_ACTIONS), resources=[cluster_arn])])
        policy.attach_to_role(self.role)
        return policy
