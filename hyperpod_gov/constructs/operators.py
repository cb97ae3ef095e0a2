"""The HyperPod operators of ``cluster.operators`` as EKS add-ons, each with its Pod Identity roles.

What each operator installs, in which order and with which roles is plan data (``plan/operators.py``, sources in
docs/operators.md); this module only translates it. The add-ons run pods, so callers make the construct depend on
the HyperPod cluster (nodes) and on the Pod Identity agent (the roles are assumed through it).
"""

from __future__ import annotations

from aws_cdk import aws_eks_v2 as eks, aws_iam as iam
from constructs import Construct

from ..plan.operators import AddonRole, OperatorAddon
from ._nag import acknowledge, managed_policy
from .observability import pod_identity_trust


def _role(scope: Construct, role: AddonRole, *, account: str, eks_arn: str, hyperpod_arn: str) -> iam.Role:
    out = iam.Role(
        scope,
        role.key,
        assumed_by=pod_identity_trust(account=account, cluster_arn=eks_arn),
        description=role.why,
        managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(role.managed_policy)],
    )
    if role.hyperpod_volumes:
        # HyperPod nodes attach EBS volumes through SageMaker, not EC2 (sagemaker-hyperpod-eks-ebs.html): this
        # cluster only.
        out.add_to_policy(iam.PolicyStatement(
            actions=["sagemaker:AttachClusterNodeVolume", "sagemaker:DetachClusterNodeVolume"],
            resources=[hyperpod_arn],
        ))
        out.add_to_policy(iam.PolicyStatement(actions=["eks:DescribeCluster"], resources=[eks_arn]))
    acknowledge(out, [(managed_policy(role.managed_policy),
                       f"{role.managed_policy} is the AWS-managed policy AWS documents for the {role.why}.")])
    return out


class Operators(Construct):
    """The add-ons of ``addons`` (``Plan.operator_addons``), each under a scope of its key, prerequisites first.

    ``account``, ``eks_arn``: the capacity account and the EKS cluster ARN, for the roles' trust conditions.
    ``hyperpod_arn``: the HyperPod cluster (a deploy-time reference in the capacity stack), the only cluster the
    EBS CSI driver's role may attach volumes on.
    """

    def __init__(self, scope: Construct, id: str, *, addons: tuple[OperatorAddon, ...], cluster: eks.ICluster,
                 account: str, eks_arn: str, hyperpod_arn: str) -> None:
        super().__init__(scope, id)
        self.addons: dict[str, eks.Addon] = {}
        self.roles: dict[tuple[str, str], iam.Role] = {}
        for spec in addons:
            addon_scope = Construct(self, spec.key)
            associations = []
            for role in spec.roles:
                made = _role(addon_scope, role, account=account, eks_arn=eks_arn, hyperpod_arn=hyperpod_arn)
                self.roles[(spec.key, role.key)] = made
                associations.append({"ServiceAccount": role.service_account, "RoleArn": made.role_arn})
            addon = eks.Addon(
                addon_scope,
                "Resource",
                cluster=cluster,
                addon_name=spec.name,
                addon_version=spec.version,
                preserve_on_delete=False,
            )
            if associations:
                # EKS creates each association in the add-on's own namespace with the add-on.
                cfn: eks.CfnAddon = addon.node.default_child  # type: ignore[assignment]
                cfn.add_property_override("PodIdentityAssociations", associations)
            for key in spec.after:
                addon.node.add_dependency(self.addons[key])
            self.addons[spec.key] = addon
